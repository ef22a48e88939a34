#pragma once
/// @file calibrate/measurements.hpp
/// @brief Measured collective timings as read from nccl-tests / rccl-tests logs, nccl-tests JSON
/// (`-J`) or the commscale probe: one `measured_row` per message size, one `measurement_set` per
/// report (one collective, one run). The readers are in calibrate/nccl_tests.hpp; the fitter
/// consumes these values.
///
/// Conventions follow nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md): `bytes` is the size
/// column (the full buffer of the operation as nccl-tests reports it), `time` the average time of
/// one operation (printed in microseconds), `algbw = bytes / time` (printed in GB/s, 1e9 B/s) and
/// `busbw = algbw x busbw_factor(op, ranks)` (collective/model.hpp). The readers convert the
/// printed columns with from_GBps (units.hpp) and keep the times as read (time_as_read), so in_us /
/// in_GBps give the printed numbers back to the bit. `to_string(op)` there spells an op the CLI way; `op_from_name`
/// here also reads nccl-tests binary names.

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../collective/model.hpp"  // busbw_factor, to_string(collective_op)
#include "../hardware/clusters.hpp"  // preset_for_gpu, cluster_by_name
#include "../collective/types.hpp"
#include "../units.hpp"

namespace commscale {

/// @brief One size of a measured sweep. The primary columns are the out-of-place ones; when a log
/// holds only the in-place block (rccl-tests `-O 0`) the primary columns repeat the in-place ones.
struct measured_row {
    data_size bytes{};      ///< message size (nccl-tests "size" column)
    double count = 0;       ///< elements (nccl-tests "count" column)
    time_as_read time{};     ///< average time per operation, as printed
    byte_rate algbw{};      ///< bytes / time
    byte_rate busbw{};      ///< algbw x the collective's bus factor
    std::optional<time_as_read> inplace_time{};                    ///< in-place block, as printed
    std::optional<byte_rate> inplace_algbw{}, inplace_busbw{};     ///< in-place block
    std::optional<duration> nccl_predicted{};  ///< NCCL's own prediction (probe only)

    friend bool operator==(const measured_row&, const measured_row&) = default;
};

/// @brief One report: a collective swept over sizes on one set of ranks.
/// `ranks` / `nodes` are 0 when the input does not say (no device lines and nothing to infer
/// them from); `gpu`, `version`, `dtype`, `redop` are empty when unknown.
struct measurement_set {
    collective_op op = collective_op::all_reduce;
    std::string tool{};   ///< "nccl-tests" (text or -J JSON), "rccl-tests", "commscale-probe"
    std::string version{};  ///< the tool's version as printed ("2.20.0", "develop:1a2b3c4"); for
                            ///< the probe, the NCCL version it ran ("2.28.9")
    int ranks = 0;
    int nodes = 0;        ///< distinct hosts
    std::string gpu{};    ///< GPU model from the device lines ("NVIDIA A100-SXM4-40GB")
    std::vector<std::string> hosts{};  ///< distinct host names, in order of first appearance
    std::string dtype{};  ///< "float", "half", "bfloat16", ...
    std::string redop{};  ///< "sum", "none", ...
    std::vector<measured_row> rows{};
    std::vector<std::string> warnings{};  ///< what was skipped, inferred or suspicious
    std::optional<byte_rate> avg_busbw{};  ///< the "# Avg bus bandwidth" footer

    friend bool operator==(const measurement_set&, const measurement_set&) = default;
};

/// @brief The row's message size (= `r.bytes`).
[[nodiscard]] constexpr data_size message_size(const measured_row& r) { return r.bytes; }
/// @brief The row's measured time per operation (`r.time` as a duration).
[[nodiscard]] inline duration measured_time(const measured_row& r) { return r.time.as_duration(); }
/// @brief The row's bus bandwidth (= `r.busbw`).
[[nodiscard]] constexpr byte_rate measured_busbw(const measured_row& r) { return r.busbw; }
/// @brief The row's algorithm bandwidth (= `r.algbw`).
[[nodiscard]] constexpr byte_rate measured_algbw(const measured_row& r) { return r.algbw; }

/// @brief The nccl-tests binary that measures `op` ("all_reduce_perf", "alltoall_perf", ...).
[[nodiscard]] constexpr std::string_view nccl_tests_binary(collective_op op) {
    switch (op) {
        case collective_op::all_reduce: return "all_reduce_perf";
        case collective_op::reduce_scatter: return "reduce_scatter_perf";
        case collective_op::all_gather: return "all_gather_perf";
        case collective_op::broadcast: return "broadcast_perf";
        case collective_op::reduce: return "reduce_perf";
        case collective_op::all_to_all: return "alltoall_perf";
        case collective_op::send_recv: return "sendrecv_perf";
    }
    return "all_reduce_perf";
}

/// @brief The collective named by `name`: the CLI spelling ("all_reduce"), the nccl-tests binary
/// ("all_reduce_perf", with or without a directory), NCCL's API spelling ("AllReduce",
/// "allreduce", "alltoall", "sendrecv"). Case-insensitive; '-' and '_' are ignored.
/// Returns nullopt for anything else (gather_perf, hypercube_perf, ... have no collective_op).
[[nodiscard]] constexpr std::optional<collective_op> op_from_name(std::string_view name) {
    // Strip a directory ("./build/all_reduce_perf") and the "_perf" suffix.
    for (std::size_t i = name.size(); i > 0; --i) {
        if (name[i - 1] == '/' || name[i - 1] == '\\') {
            name = name.substr(i);
            break;
        }
    }
    char buf[32] = {};
    std::size_t n = 0;
    for (char c : name) {
        if (c == '_' || c == '-') continue;
        if (n == sizeof buf) return std::nullopt;
        buf[n++] = detail::ascii_lower(c);
    }
    std::string_view s(buf, n);
    if (s.size() > 4 && s.substr(s.size() - 4) == "perf") s = s.substr(0, s.size() - 4);
    if (s == "allreduce") return collective_op::all_reduce;
    if (s == "reducescatter") return collective_op::reduce_scatter;
    if (s == "allgather") return collective_op::all_gather;
    if (s == "broadcast" || s == "bcast") return collective_op::broadcast;
    if (s == "reduce") return collective_op::reduce;
    if (s == "alltoall") return collective_op::all_to_all;
    if (s == "sendrecv") return collective_op::send_recv;
    return std::nullopt;
}

/// @brief Plausible magnitudes of a measured row: a buffer (and element count) up to 1 PiB, a
/// time up to 1e9 us (17 minutes for one collective), bandwidths up to 1e7 GB/s (also size /
/// time). Beyond them a row is corrupt, not a measurement.
inline constexpr double max_row_bytes = 1125899906842624.0;  // 1 PiB
inline constexpr double max_row_time_us = 1e9;
inline constexpr double max_row_GBps = 1e7;

/// @brief True when every value of the row is finite, not negative and within the max_row_*
/// magnitudes (compared in the printed units), and time is > 0, i.e. the row can be used for fitting.
[[nodiscard]] inline bool usable(const measured_row& r) {
    auto ok = [](double v, double limit) { return std::isfinite(v) && v >= 0 && v <= limit; };
    auto ok_time = [&](const auto& t) { return !t || ok(in_us(*t), max_row_time_us); };
    auto ok_rate = [&](const std::optional<byte_rate>& b) { return !b || ok(in_GBps(*b), max_row_GBps); };
    const double time_us = in_us(r.time);
    return ok(in_bytes(r.bytes), max_row_bytes) && ok(r.count, max_row_bytes) && ok(time_us, max_row_time_us) &&
           time_us > 0 && ok_rate(r.algbw) && ok_rate(r.busbw) && ok_time(r.inplace_time) &&
           ok_rate(r.inplace_algbw) && ok_rate(r.inplace_busbw) && ok_time(r.nccl_predicted) &&
           in_bytes(r.bytes) / (time_us * 1e-6) <= max_row_GBps * 1e9;
}

/// @brief The system a log was measured on, when the user names none: the preset of the log's GPU
/// model (preset_for_gpu; dgx-a100 without device lines) with the log's nodes. An NVLink domain
/// spanning nodes (NVL72) gets enough trays for the log's ranks (a log's hosts are trays, racks
/// filled in order); otherwise the preset's node count becomes the log's distinct hosts, and its
/// GPUs per node rise to the log's ranks per host where those are more. Throws input_error naming
/// `field` when the result is not a valid cluster.
[[nodiscard]] inline cluster cluster_for_log(const measurement_set& m, std::string_view field = "--cluster") {
    const int nodes = std::max(m.nodes, 1);
    cluster c = cluster_by_name(preset_for_gpu(m.gpu), field);
    if (c.domain_spans_nodes()) {
        c.nodes = std::max(c.nodes, (m.ranks + c.node.gpus - 1) / c.node.gpus);
    } else {
        c.nodes = std::max(c.nodes, nodes);
        const int per_node = (m.ranks + nodes - 1) / nodes;
        if (per_node > c.node.gpus) c.node.gpus = per_node;
    }
    validate(c, "cluster");
    return c;
}

/// @brief The group a log measured on `c`: its ranks on consecutive GPUs, ranks / hosts per node
/// (at most the node's GPUs); on an NVLink domain spanning nodes (NVL72) the ranks fill domains in
/// order.
[[nodiscard]] inline placement placement_for_log(const cluster& c, const measurement_set& m) {
    const int nodes = std::max(m.nodes, 1);
    const int per_node = c.domain_spans_nodes() ? std::min(m.ranks, c.domain_gpus())
                                                : std::min((m.ranks + nodes - 1) / nodes, c.node.gpus);
    return placement{.ranks = m.ranks, .ranks_per_node = per_node, .stride = 1};
}

}  // namespace commscale
