#pragma once
/// @file apps/probe/probe_core.hpp
/// @brief The CUDA-free half of commscale-probe: command-line options, the size ladder, result
/// records, the nccl-tests bandwidth conventions, and the two output writers (the
/// "commscale-probe" JSON that calibration reads, and nccl-tests-compatible text). Everything
/// here is unit-tested without a GPU (tests/probe/probe_core.cpp); probe.cpp adds CUDA and NCCL.
///
/// Conventions follow NVIDIA nccl-tests (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md and
/// src/*.cu): a "size" is the full buffer (all_gather: the gathered output; reduce_scatter: the
/// input; alltoall: the whole send buffer), "count" is the element count passed to NCCL (per rank
/// for all_gather, reduce_scatter and alltoall), algbw = size / time, busbw = algbw x factor.

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <commscale/collective/types.hpp>
#include <commscale/error.hpp>
#include <commscale/units/parse.hpp>

namespace commscale::probe {

/// @brief The collectives the probe measures.
enum class collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };

/// @brief Every collective, in the order the probe runs them by default.
inline constexpr std::array<collective, 7> all_collectives{
    collective::all_reduce, collective::all_gather, collective::reduce_scatter, collective::broadcast,
    collective::reduce,     collective::alltoall,   collective::sendrecv};

/// @brief The name used on the command line and in the JSON ("all_reduce", ...).
[[nodiscard]] constexpr std::string_view name(collective c) {
    switch (c) {
        case collective::all_reduce: return "all_reduce";
        case collective::all_gather: return "all_gather";
        case collective::reduce_scatter: return "reduce_scatter";
        case collective::broadcast: return "broadcast";
        case collective::reduce: return "reduce";
        case collective::alltoall: return "alltoall";
        case collective::sendrecv: return "sendrecv";
    }
    return "?";
}

/// @brief The nccl-tests binary that measures the same thing ("all_reduce_perf", ...), printed in
/// the text report so log readers recognise the block.
[[nodiscard]] constexpr std::string_view nccl_tests_binary(collective c) {
    switch (c) {
        case collective::all_reduce: return "all_reduce_perf";
        case collective::all_gather: return "all_gather_perf";
        case collective::reduce_scatter: return "reduce_scatter_perf";
        case collective::broadcast: return "broadcast_perf";
        case collective::reduce: return "reduce_perf";
        case collective::alltoall: return "alltoall_perf";
        case collective::sendrecv: return "sendrecv_perf";
    }
    return "?";
}

/// @brief True for the collectives with a root rank (broadcast, reduce).
[[nodiscard]] constexpr bool has_root(collective c) {
    return c == collective::broadcast || c == collective::reduce;
}

/// @brief True for the collectives that reduce (printed with redop "sum").
[[nodiscard]] constexpr bool reduces(collective c) {
    return c == collective::all_reduce || c == collective::reduce_scatter || c == collective::reduce;
}

/// @brief The library's operation for a probe collective (collective/types.hpp).
[[nodiscard]] constexpr collective_op op_of(collective c) {
    switch (c) {
        case collective::all_reduce: return collective_op::all_reduce;
        case collective::all_gather: return collective_op::all_gather;
        case collective::reduce_scatter: return collective_op::reduce_scatter;
        case collective::broadcast: return collective_op::broadcast;
        case collective::reduce: return collective_op::reduce;
        case collective::alltoall: return collective_op::all_to_all;
        case collective::sendrecv: return collective_op::send_recv;
    }
    return collective_op::send_recv;
}

/// @brief The bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md), the library's one
/// `busbw_factor` (collective/types.hpp): busbw = algbw x factor. all_reduce 2(n-1)/n;
/// all_gather, reduce_scatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1. With n = 1 the
/// first two give 0, as nccl-tests prints for a single GPU.
[[nodiscard]] constexpr double busbw_factor(collective c, int ranks) { return commscale::busbw_factor(op_of(c), ranks); }

/// @brief Element types the probe can move.
enum class element_type { float32, float16, bfloat16 };

/// @brief The nccl-tests spelling: "float", "half", "bfloat16".
[[nodiscard]] constexpr std::string_view name(element_type t) {
    switch (t) {
        case element_type::float32: return "float";
        case element_type::float16: return "half";
        case element_type::bfloat16: return "bfloat16";
    }
    return "?";
}

/// @brief Bytes per element (IEEE 754 binary32 = 4, binary16 = 2, bfloat16 = 2).
[[nodiscard]] constexpr std::uint64_t element_size(element_type t) {
    return t == element_type::float32 ? 4u : 2u;
}

/// @brief Everything the command line sets.
struct options {
    std::uint64_t min_bytes = 8;                  ///< first size (nccl-tests -b)
    std::uint64_t max_bytes = 1073741824;         ///< last size, 1 GiB (nccl-tests -e)
    std::uint64_t factor = 2;                     ///< multiplicative step (nccl-tests -f)
    int warmup = 5;                               ///< untimed iterations per size (nccl-tests -w default)
    int iters = 20;                               ///< timed iterations per size (nccl-tests -n default)
    std::vector<collective> ops{all_collectives.begin(), all_collectives.end()};
    element_type dtype = element_type::float32;   ///< nccl-tests -d default
    int root = 0;                                 ///< root rank of broadcast and reduce
    int gpus = 0;                                 ///< GPUs driven per process; 0 = all visible ones
    bool predict = true;                          ///< ask NCCL for its predicted time
    std::string json_path;                        ///< --json FILE; empty = no JSON
    bool help = false;
};

/// @brief The --help text.
[[nodiscard]] inline std::string usage() {
    return R"(commscale-probe: measure NCCL collectives on the local GPUs (and across nodes with MPI)

Usage: commscale-probe [options]
  -b, --min SIZE        smallest message, full buffer (default 8)
  -e, --max SIZE        largest message (default 1G)
  -f, --factor N        size multiplier between steps, integer >= 2 (default 2)
  -w, --warmup N        untimed iterations per size (default 5)
  -n, --iters N         timed iterations per size, >= 1 (default 20)
  -o, --ops LIST        comma-separated: all_reduce,all_gather,reduce_scatter,broadcast,
                        reduce,alltoall,sendrecv (default: all)
  -d, --dtype TYPE      float | half | bfloat16 (default float)
  -r, --root N          root rank of broadcast and reduce (default 0)
  -g, --gpus N          GPUs driven by this process (default: all visible)
      --no-predict      do not ask NCCL for its own predicted time
  -J, --json FILE       also write the results as commscale-probe JSON (atomically)
  -h, --help            this text

SIZE is a byte count: 1048576, or with the nccl-tests suffixes K, M, G (powers of 1024: 1G =
1073741824), or with a unit: 64KiB, 1MB (= 1000000), 2GiB. Each size is rounded down to whole
elements (and, for all_gather, reduce_scatter and alltoall, to a multiple of ranks x element);
sizes that round to zero are skipped.

Output: nccl-tests text on stdout (one block per collective, out-of-place only; #wrong is N/A
because the probe does not validate data), read by `commscale fit` like any nccl-tests log.
NCCL_ALGO and NCCL_PROTO are passed to NCCL untouched and recorded in the JSON.
One process drives all of its GPUs (ncclCommInitAll). Built with MPI, `mpirun -np P
commscale-probe -g G` runs P processes of G GPUs each across nodes (ncclCommInitRank).
Exit status: 0 success, 2 invalid arguments, 1 a CUDA or NCCL error.
)";
}

namespace detail {

/// Parses a non-negative integer; nullopt when the text is not one.
[[nodiscard]] inline std::optional<std::uint64_t> parse_unsigned(std::string_view s) {
    std::uint64_t v = 0;
    if (s.empty()) return std::nullopt;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
}

/// Parses an int within [lo, hi] for option `field`.
[[nodiscard]] inline int parse_int_option(std::string_view field, std::string_view text, int lo, int hi) {
    const auto v = parse_unsigned(text);
    if (!v || *v > static_cast<std::uint64_t>(hi) || *v < static_cast<std::uint64_t>(lo))
        throw input_error(std::string(field), "'" + std::string(text) + "'",
                          "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<int>(*v);
}

}  // namespace detail

/// @brief Reads a byte count: a plain integer, an integer with an nccl-tests suffix K, M or G
/// (binary multiples, as nccl-tests' parsesize does), or a size with a commscale unit
/// (B, KB, MB, GB, KiB, MiB, GiB, ...; decimal prefixes are powers of 1000). Must be a whole
/// number of bytes, >= 1 and <= 2^62.
[[nodiscard]] inline std::uint64_t parse_byte_count(std::string_view text, std::string_view field) {
    const auto bad = [&](std::string expected) {
        return input_error(std::string(field), "'" + std::string(text) + "'", std::move(expected));
    };
    constexpr std::uint64_t limit = std::uint64_t{1} << 62;
    const std::string_view expected = "a byte count >= 1 (e.g. 8, 64K, 1G, 256MiB)";
    if (text.empty()) throw bad(std::string(expected));
    std::uint64_t mult = 1;
    std::string_view digits = text;
    switch (text.back()) {
        case 'K': case 'k': mult = std::uint64_t{1} << 10; digits.remove_suffix(1); break;
        case 'M': case 'm': mult = std::uint64_t{1} << 20; digits.remove_suffix(1); break;
        case 'G': case 'g': mult = std::uint64_t{1} << 30; digits.remove_suffix(1); break;
        default: break;
    }
    std::uint64_t bytes = 0;
    if (const auto v = detail::parse_unsigned(digits)) {
        if (*v > limit / mult) throw bad("a byte count <= 2^62");
        bytes = *v * mult;
    } else {
        const double b = in_bytes(parse_size(text, field));
        if (!(b >= 0.0) || b > static_cast<double>(limit)) throw bad("a byte count <= 2^62");
        if (b != std::floor(b)) throw bad("a whole number of bytes");
        bytes = static_cast<std::uint64_t>(b);
    }
    if (bytes == 0) throw bad(std::string(expected));
    return bytes;
}

/// @brief Reads a collective name (also accepts the nccl-tests binary names, e.g.
/// "all_reduce_perf", and "allreduce"/"allgather"/"reducescatter"/"all_to_all").
[[nodiscard]] inline collective parse_collective(std::string_view text, std::string_view field = "--ops") {
    for (const collective c : all_collectives)
        if (text == name(c) || text == nccl_tests_binary(c)) return c;
    if (text == "allreduce") return collective::all_reduce;
    if (text == "allgather") return collective::all_gather;
    if (text == "reducescatter") return collective::reduce_scatter;
    if (text == "all_to_all") return collective::alltoall;
    std::vector<std::string> names;
    for (const collective c : all_collectives) names.emplace_back(name(c));
    throw unknown_name(std::string(field), text, names);
}

/// @brief Reads a dtype: float (also float32, fp32), half (float16, fp16), bfloat16 (bf16).
[[nodiscard]] inline element_type parse_element_type(std::string_view text, std::string_view field = "--dtype") {
    if (text == "float" || text == "float32" || text == "fp32") return element_type::float32;
    if (text == "half" || text == "float16" || text == "fp16") return element_type::float16;
    if (text == "bfloat16" || text == "bf16") return element_type::bfloat16;
    throw unknown_name(std::string(field), text, std::array<std::string_view, 3>{"float", "half", "bfloat16"});
}

/// @brief Parses the command line (without the program name). Accepts "--opt value",
/// "--opt=value" and the nccl-tests short forms ("-b 8"). Throws input_error naming the option
/// for a missing or bad value, an unknown option, min > max, factor < 2, iters < 1 or an empty
/// or duplicated op list.
[[nodiscard]] inline options parse_options(std::span<const std::string_view> args) {
    // The grammar (CLI11): nccl-tests' short names, our long names and nccl-tests' long names.
    CLI::App app{"commscale-probe"};
    app.set_help_flag();
    app.allow_extras();  // unknown options come back in order and are reported with suggestions
    const auto value_option = [&](const std::string& names) {
        return app.add_option(names)->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    };
    CLI::Option* help = app.add_flag("-h,--help");
    CLI::Option* min = value_option("-b,--min,--minbytes");
    CLI::Option* max = value_option("-e,--max,--maxbytes");
    CLI::Option* factor = value_option("-f,--factor,--stepfactor");
    CLI::Option* warmup = value_option("-w,--warmup,--warmup_iters");
    CLI::Option* iters = value_option("-n,--iters");
    CLI::Option* dtype = value_option("-d,--dtype,--datatype");
    CLI::Option* root = value_option("-r,--root");
    CLI::Option* gpus = value_option("-g,--gpus,--ngpus");
    CLI::Option* no_predict = app.add_flag("--no-predict");
    CLI::Option* json = value_option("-J,--json");
    CLI::Option* ops = value_option("-o,--ops,--op");

    std::vector<std::string> argv;  // CLI11 reads the arguments from the back
    for (auto it = args.rbegin(); it != args.rend(); ++it) argv.emplace_back(*it);
    try {
        app.parse(argv);
    } catch (const CLI::ParseError& e) {
        // Only the last argument can lack its value: name it as it was written.
        if (!args.empty() && args.back().starts_with("-")) {
            const std::string_view last = args.back();
            throw input_error(std::string(last.substr(0, last.find('='))), "nothing", "a value after it");
        }
        throw input_error("commscale-probe", e.what(), "options as in `commscale-probe --help`");
    }
    for (const std::string& extra : app.remaining()) {
        static constexpr std::array<std::string_view, 12> known{
            "--min", "--max", "--factor", "--warmup", "--iters", "--ops", "--dtype",
            "--root", "--gpus", "--no-predict", "--json", "--help"};
        throw unknown_name("option", std::string_view(extra).substr(0, extra.find('=')), known);
    }
    // The last value of an option given twice wins, as in nccl-tests; --ops accumulates.
    const auto last = [](const CLI::Option* o) -> std::optional<std::string_view> {
        if (o->count() == 0) return std::nullopt;
        return std::string_view(o->results().back());
    };
    options o;
    o.help = help->count() > 0;
    o.predict = no_predict->count() == 0;
    if (const auto v = last(min)) o.min_bytes = parse_byte_count(*v, "--min");
    if (const auto v = last(max)) o.max_bytes = parse_byte_count(*v, "--max");
    if (const auto v = last(factor)) {
        const auto f = detail::parse_unsigned(*v);
        if (!f || *f < 2 || *f > 1024) throw input_error("--factor", "'" + std::string(*v) + "'", "an integer in [2, 1024]");
        o.factor = *f;
    }
    if (const auto v = last(warmup)) o.warmup = detail::parse_int_option("--warmup", *v, 0, 1000000);
    if (const auto v = last(iters)) o.iters = detail::parse_int_option("--iters", *v, 1, 1000000);
    if (const auto v = last(dtype)) o.dtype = parse_element_type(*v);
    if (const auto v = last(root)) o.root = detail::parse_int_option("--root", *v, 0, 1 << 20);
    if (const auto v = last(gpus)) o.gpus = detail::parse_int_option("--gpus", *v, 1, 1024);
    if (const auto v = last(json)) {
        o.json_path = std::string(*v);
        if (o.json_path.empty()) throw input_error("--json", "an empty path", "a file path");
    }
    if (ops->count() > 0) o.ops.clear();
    for (const std::string& whole : ops->results()) {
        if (whole == "all") {
            o.ops.assign(all_collectives.begin(), all_collectives.end());
            continue;
        }
        std::string_view list = whole;
        while (true) {
            const auto comma = list.find(',');
            const std::string_view item = list.substr(0, comma);
            if (item.empty()) throw input_error("--ops", "'" + whole + "'", "a comma-separated list of collective names");
            const collective c = parse_collective(item);
            if (std::find(o.ops.begin(), o.ops.end(), c) != o.ops.end())
                throw input_error("--ops", "'" + std::string(item) + "' twice", "each collective at most once");
            o.ops.push_back(c);
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    if (o.min_bytes > o.max_bytes)
        throw input_error("--min", std::to_string(o.min_bytes) + " (> --max " + std::to_string(o.max_bytes) + ")",
                          "a size <= --max");
    return o;
}

/// @brief parse_options over a C argv (argv[0] is the program name and is skipped).
[[nodiscard]] inline options parse_options(int argc, const char* const* argv) {
    std::vector<std::string_view> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    return parse_options(std::span<const std::string_view>(args));
}

/// @brief One step of the size ladder for one collective on `ranks` ranks.
struct size_point {
    std::uint64_t bytes;       ///< full buffer, as nccl-tests prints it
    std::uint64_t count;       ///< elements passed to NCCL (per rank for all_gather/reduce_scatter, per peer for alltoall)
    std::uint64_t send_bytes;  ///< bytes each rank's send buffer must hold
    std::uint64_t recv_bytes;  ///< bytes each rank's receive buffer must hold
};

/// @brief The point for a requested size: the element count is size / element size, and for
/// all_gather, reduce_scatter and alltoall it is split in `ranks` equal parts rounded down, as
/// nccl-tests' getCollByteCount does (src/all_gather.cu, reduce_scatter.cu, alltoall.cu).
[[nodiscard]] constexpr size_point make_point(collective c, std::uint64_t requested_bytes, element_type t, int ranks) {
    const std::uint64_t elt = element_size(t);
    const std::uint64_t n = static_cast<std::uint64_t>(ranks < 1 ? 1 : ranks);
    const std::uint64_t count = requested_bytes / elt;
    switch (c) {
        case collective::all_gather: {
            const std::uint64_t per = count / n;
            return {per * n * elt, per, per * elt, per * n * elt};
        }
        case collective::reduce_scatter: {
            const std::uint64_t per = count / n;
            return {per * n * elt, per, per * n * elt, per * elt};
        }
        case collective::alltoall: {
            const std::uint64_t per = count / n;
            return {per * n * elt, per, per * n * elt, per * n * elt};
        }
        default: return {count * elt, count, count * elt, count * elt};
    }
}

/// @brief The sizes min, min*f, min*f^2, ... <= max (nccl-tests' loop), each rounded by
/// make_point; sizes that round to zero bytes are left out. Never empty unless every size rounds
/// to zero (then the collective is skipped).
[[nodiscard]] inline std::vector<size_point> size_ladder(const options& o, collective c, int ranks) {
    std::vector<size_point> out;
    for (std::uint64_t s = o.min_bytes; s <= o.max_bytes;) {
        const size_point p = make_point(c, s, o.dtype, ranks);
        if (p.bytes > 0) out.push_back(p);
        if (s > o.max_bytes / o.factor) break;  // next step would overflow or pass max
        s *= o.factor;
    }
    return out;
}

/// @brief One measured size.
struct row {
    std::uint64_t bytes = 0;
    std::uint64_t count = 0;
    double time_us = 0;                        ///< mean wall time per iteration
    double algbw_GBps = 0;                     ///< bytes / time, 1 GB/s = 1e9 B/s
    double busbw_GBps = 0;                     ///< algbw x busbw_factor
    std::optional<double> nccl_predicted_us;   ///< ncclGroupSimulateEnd's estimate, when available
};

/// @brief A row from a point and the measured time per iteration (seconds):
/// algbw = bytes / 1e9 / t (GB/s), busbw = algbw x busbw_factor(c, ranks) (nccl-tests).
/// Throws input_error for a time that is not finite and > 0.
[[nodiscard]] inline row make_row(collective c, const size_point& p, int ranks, double seconds,
                                  std::optional<double> predicted_us = std::nullopt) {
    require_positive("time", seconds);
    row r;
    r.bytes = p.bytes;
    r.count = p.count;
    r.time_us = seconds * 1e6;
    r.algbw_GBps = static_cast<double>(p.bytes) / 1e9 / seconds;
    r.busbw_GBps = r.algbw_GBps * busbw_factor(c, ranks);
    if (predicted_us && std::isfinite(*predicted_us) && *predicted_us > 0) r.nccl_predicted_us = predicted_us;
    return r;
}

/// @brief The results of one collective.
struct collective_result {
    collective op;
    std::vector<row> rows;
};

/// @brief One rank's GPU, for the "# Using devices" lines.
struct device_info {
    int rank = 0;
    long pid = 0;
    std::string host;
    int device = 0;
    std::string bus_id;  ///< "0000:xx:00.0"
    std::string name;    ///< "NVIDIA H100 80GB HBM3"
};

/// @brief The machine the probe ran on.
struct machine_info {
    std::vector<device_info> devices;     ///< one per rank, in rank order
    std::string nccl_version;             ///< "2.28.9"
    int cuda_runtime = 0;                 ///< cudaRuntimeGetVersion, e.g. 13000
    int processes = 1;                    ///< MPI processes (1 without MPI)
    int threads = 1;

    [[nodiscard]] int ranks() const { return static_cast<int>(devices.size()); }
    /// Distinct host names, in order of first appearance.
    [[nodiscard]] std::vector<std::string> hosts() const {
        std::vector<std::string> h;
        for (const auto& d : devices)
            if (std::find(h.begin(), h.end(), d.host) == h.end()) h.push_back(d.host);
        return h;
    }
    /// The GPU model of rank 0, or "mixed: A, B" when ranks differ.
    [[nodiscard]] std::string gpu() const {
        std::vector<std::string> names;
        for (const auto& d : devices)
            if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
        if (names.empty()) return "unknown";
        if (names.size() == 1) return names.front();
        std::string s = "mixed:";
        for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : " ") + names[i];
        return s;
    }
};

/// @brief NCCL settings read from the environment (passed through to NCCL, recorded in the JSON).
struct nccl_environment {
    std::optional<std::string> algo;   ///< NCCL_ALGO
    std::optional<std::string> proto;  ///< NCCL_PROTO
};

/// @brief Reads NCCL_ALGO and NCCL_PROTO through `getenv_fn` (std::getenv in the probe; a fake
/// in tests). Unset or empty = nullopt.
template <class Getenv>
[[nodiscard]] nccl_environment read_nccl_environment(Getenv&& getenv_fn) {
    nccl_environment e;
    const auto get = [&](const char* key) -> std::optional<std::string> {
        const char* v = getenv_fn(key);
        if (v == nullptr || *v == '\0') return std::nullopt;
        return std::string(v);
    };
    e.algo = get("NCCL_ALGO");
    e.proto = get("NCCL_PROTO");
    return e;
}

/// @brief The "commscale-probe" JSON document (format version 1), the format the calibration
/// parser reads: {"format", "version", "machine", "settings", "collectives": [{"op", "rows"}]}.
/// A row's "nccl_predicted_us" is null when NCCL gave no estimate.
[[nodiscard]] inline nlohmann::json to_json(const machine_info& m, const options& o, const nccl_environment& env,
                                            const std::vector<collective_result>& results) {
    using nlohmann::json;
    const auto opt = [](const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); };
    json doc;
    doc["format"] = "commscale-probe";
    doc["version"] = 1;
    const auto hosts = m.hosts();
    doc["machine"] = {{"gpu", m.gpu()},
                      {"ranks", m.ranks()},
                      {"nodes", static_cast<int>(hosts.size())},
                      {"hosts", hosts},
                      {"nccl_version", m.nccl_version},
                      {"cuda_runtime", m.cuda_runtime}};
    doc["settings"] = {{"min_bytes", o.min_bytes}, {"max_bytes", o.max_bytes}, {"factor", o.factor},
                       {"warmup", o.warmup},       {"iters", o.iters},         {"nccl_algo", opt(env.algo)},
                       {"nccl_proto", opt(env.proto)}, {"dtype", std::string(name(o.dtype))}};
    json cols = json::array();
    for (const auto& r : results) {
        json rows = json::array();
        for (const auto& x : r.rows)
            rows.push_back({{"bytes", x.bytes},
                            {"count", x.count},
                            {"time_us", x.time_us},
                            {"algbw_GBps", x.algbw_GBps},
                            {"busbw_GBps", x.busbw_GBps},
                            {"nccl_predicted_us", x.nccl_predicted_us ? json(*x.nccl_predicted_us) : json(nullptr)}});
        cols.push_back({{"op", std::string(name(r.op))}, {"rows", std::move(rows)}});
    }
    doc["collectives"] = std::move(cols);
    return doc;
}

namespace detail {
template <class... Args>
[[nodiscard]] std::string format(const char* fmt, Args... args) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof buf, fmt, args...);
    if (n < 0) return {};
    if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
    std::string s(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(s.data(), s.size(), fmt, args...);
    s.pop_back();
    return s;
}
}  // namespace detail

/// @brief The nccl-tests preamble of one collective's block: "# Collective test starting",
/// "# nThread ... nGpus ... minBytes ... maxBytes ... step: F(factor) warmup iters: ... iters:
/// ... agg iters: 1 validation: 0 graph: 0", "# Using devices" and one
/// "#  Rank  r Group  0 Pid p on HOST device  d [0000:xx:00.0] NAME" line per rank.
[[nodiscard]] inline std::string text_preamble(collective c, const machine_info& m, const options& o) {
    std::string s = "# Collective test starting: " + std::string(nccl_tests_binary(c)) + "\n";
    const int gpus_per_process = m.processes > 0 ? m.ranks() / m.processes : m.ranks();
    s += detail::format("# nThread %d nGpus %d minBytes %llu maxBytes %llu step: %llu(factor) warmup iters: %d "
                        "iters: %d agg iters: 1 validation: 0 graph: 0\n",
                        m.threads, gpus_per_process, static_cast<unsigned long long>(o.min_bytes),
                        static_cast<unsigned long long>(o.max_bytes), static_cast<unsigned long long>(o.factor),
                        o.warmup, o.iters);
    s += "#\n# Using devices\n";
    for (const auto& d : m.devices)
        s += detail::format("#  Rank %2d Group  0 Pid %6ld on %10s device %2d [%s] %s\n", d.rank, d.pid,
                            d.host.c_str(), d.device, d.bus_id.c_str(), d.name.c_str());
    s += "#\n";
    return s;
}

/// @brief The nccl-tests column header (unified format, out-of-place block only).
[[nodiscard]] inline std::string text_column_header() {
    return "#                                                              out-of-place\n"
           "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       \n";
}

/// @brief One nccl-tests data line: "size count type redop root time algbw busbw #wrong", with
/// nccl-tests' widths and its time precision (2 decimals below 100 us, 1 below 10 ms, else 0).
[[nodiscard]] inline std::string text_row(collective c, const row& r, element_type t, int root) {
    const char* redop = reduces(c) ? "sum" : "none";
    const int root_col = has_root(c) ? root : -1;
    const char* time_fmt = r.time_us >= 10000.0 ? "%7.0f" : r.time_us >= 100.0 ? "%7.1f" : "%7.2f";
    const std::string time = detail::format(time_fmt, r.time_us);
    return detail::format("%12llu  %12llu  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %5s\n",
                          static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.count),
                          std::string(name(t)).c_str(), redop, root_col, time.c_str(), r.algbw_GBps, r.busbw_GBps,
                          "N/A");
}

/// @brief Mean busbw over the rows, as nccl-tests' "Avg bus bandwidth" footer (0 for no rows).
[[nodiscard]] inline double average_busbw(const collective_result& r) {
    if (r.rows.empty()) return 0.0;
    double sum = 0;
    for (const auto& x : r.rows) sum += x.busbw_GBps;
    return sum / static_cast<double>(r.rows.size());
}

/// @brief The nccl-tests footer: "# Out of bounds values : 0 OK", "# Avg bus bandwidth : X", "#".
[[nodiscard]] inline std::string text_footer(const collective_result& r) {
    return "# Out of bounds values : 0 OK\n" + detail::format("# Avg bus bandwidth    : %g \n", average_busbw(r)) + "#\n";
}

/// @brief A whole nccl-tests-compatible block for one collective: preamble, column header,
/// rows, footer.
[[nodiscard]] inline std::string to_text(const collective_result& r, const machine_info& m, const options& o) {
    std::string s = text_preamble(r.op, m, o) + text_column_header();
    for (const auto& x : r.rows) s += text_row(r.op, x, o.dtype, o.root);
    return s + text_footer(r);
}

}  // namespace commscale::probe
