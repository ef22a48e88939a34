#pragma once
/// @file io/result_json.hpp
/// @brief JSON for the library's results, with the keys and numbers of the CLI's `--json`
/// output (docs/CLI.md): collective predictions, plans, step breakdowns and plan searches.
/// Written by `*_to_json` (or the `io::to_json` overloads) and read back, validated, by
/// `*_from_json` (or `io::from_json<T>`): every error is an input_error naming the field path
/// under the `path` argument (`shard-0.json.plans[3].breakdown.compute_s`), the value given and
/// what is accepted; unknown keys are rejected with "did you mean". Each type's keys are named
/// once, in its field table (`result_detail::*_fields`), which the writer and the reader both run.
///
/// Round trips: `*_from_json(*_to_json(x))` gives back every value the JSON carries: to the bit
/// where it is written in the base unit (seconds, bytes; GiB, a power of two, too), and where it is
/// written in another unit (`time_us`, `algbw_GBps`, `tflops_per_gpu`, `*_Gbps`) as a double that
/// writes the same number (the nearest such to the scaled value), so `to_json(from_json(j)) == j`
/// byte for byte for documents these functions wrote. Values the JSON does not carry keep their defaults:
/// * collective_result: `proto` (Simple);
/// * step_breakdown: `model_flops`, `hardware_flops`, `first/last/max_stage_layers` (0);
/// * plan: `compute_efficiency` (unset) and `pp_scatter_gather` (true); `etp` equal to `tp` reads
///   as 0 (which means tp); a bucket written as 0 (one bucket: at least `whole_gradient_bucket`)
///   reads as `whole_gradient_bucket`; `stage_layers` reads back as the `first_stage_layers` /
///   `last_stage_layers` that split the layers so (0 for the even split);
/// * planned (one entry of a plan search): the plan's layout fields only (the keys written), the
///   breakdown in full.
///
/// Shapes (CLI.md):
/// * collective_result: {op, algorithm, ranks, nodes, bytes, time_us, algbw_GBps, busbw_GBps,
///   latency_us, transfer_us, bottleneck, limiting: {kind, link, sharing}} (`bottleneck` in
///   words: describe_bottleneck; `limiting` the same as a structure, link null when none).
/// * step_breakdown: {step_s, compute_s, bubble_s, tp_comm_s, tp_comm_exposed_s, ..., bottleneck,
///   bottleneck_detail, mfu, hfu, tflops_per_gpu, ..., memory_breakdown_GiB: {weights, gradients,
///   optimizer, activations}, layer_s: {gemm_fwd, ...}, required_inter_node_Gbps (null when
///   unbounded), required_inter_node_step_Gbps (likewise)}.
/// * plan: {tp, pp, dp, cp, ep, etp, micro_batch, global_batch, seq, zero, recompute, schedule,
///   virtual_stages, sequence_parallel, dtype, framework, gradient_bytes, bucket_bytes,
///   bucket_per_dp_bytes, overlap: {dp, tp, pp, zero, cp}, attention, reduce_every_micro_batch,
///   expert_load, capacity_factor, pad_to_capacity, stage_layers: [...]}, and
///   account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split: true only when
///   set (Megatron-Core's flags; absent reads as false, so plans without them keep their JSON);
///   cpu_offloading_num_layers only when > 0 (absent reads as 0); recompute_modules (Megatron-Core's
///   names, comma-separated) only when any; overlap_moe_expert_parallel_comm: true only when set;
///   fp8_recipe (delayed, tensorwise, blockwise) with dtype fp8 (absent reads as delayed);
///   fp8_param_gather (Megatron-Core's --fp8-param-gather) with dtype fp8 or mxfp8 (absent reads as
///   the framework's); gradient_accumulation_fusion (Megatron's, in effect) with framework
///   megatron-core or megatron-lm (absent reads as the stack's practice, plan::
///   fuses_gradient_accumulation); recompute_method (uniform, block) and
///   recompute_num_layers only when full recompute does not give every layer its own checkpoint
///   (absent reads as uniform and 0); first_last_layers_bf16 true with num_layers_at_start_in_bf16
///   and num_layers_at_end_in_bf16 only when set (absent reads as false, 1 and 1); moe_token_dispatcher (alltoall, deepep, hybridep; absent
///   reads as the framework's).
/// * planned: {tp, pp, dp, cp, ep, micro_batch, zero, recompute, schedule, virtual_stages,
///   sequence_parallel, step_s, mfu, memory_per_gpu_GiB, memory_per_gpu_bytes,
///   memory_headroom_GiB, bottleneck, micro_batches, breakdown: {step_breakdown}} (+ the two
///   pipeline-split flags, recompute_method, recompute_num_layers and cpu_offloading_num_layers
///   as in plan, only when set; first_stage_layers and last_stage_layers, Megatron-Core's
///   --decoder-first/last-pipeline-num-layers, only when given, absent reading as 0).
/// * search_result: {candidates, evaluated, feasible, rejected, search_s, plans: [planned...],
///   pareto: [planned...]}.
/// * search_report (the whole `plan --json` document): the search_result's keys and {model,
///   cluster, accelerator, nodes, gpus, global_batch, seq, top, space: {scale_up_domain,
///   max_micro_batch, max_virtual_stages, max_cp, min_cp_tokens, pareto_max_slowdown,
///   sequence_parallel, zero_bubble, dtype, framework, compute_efficiency (null: the default),
///   efficiency (ideal|default)}, shard ("i/N"),
///   threads (a search), merged_shards and search_s_max (a merge of shards), note (when given)}.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <istream>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../collective/model.hpp"
#include "../detail/intern.hpp"
#include "../error.hpp"
#include "../hardware/links.hpp"
#include "../parallel/plan.hpp"
#include "../predict/step.hpp"
#include "../search/planner.hpp"
#include "../units.hpp"
#include "../workload/flops.hpp"
#include "../workload/transformer.hpp"
#include "file.hpp"
#include "json_reader.hpp"

namespace commscale {

/// @brief The CLI.md vocabulary of a step's `bottleneck` (compute tp_comm pp_comm dp_comm bubble
/// memory): context- and expert-parallel communication, which like TP's run inside every layer,
/// report as tp_comm; the waits for activation offloading's host copies, which stall the compute
/// stream, as compute; `bottleneck_detail` keeps the exact kind (cp_comm, ep_comm, offload).
[[nodiscard]] constexpr std::string_view contract_bottleneck(step_bottleneck b) {
    if (b == step_bottleneck::cp_comm || b == step_bottleneck::ep_comm) return "tp_comm";
    if (b == step_bottleneck::offload) return "compute";
    return to_string(b);
}

/// @brief A plan search with what it searched: the `plan --json` document (CLI.md "Calibration
/// and planning"). A search writes `threads`; a merge of shards writes `merged_shards` and
/// `search_s_max` instead (shard "0/1").
struct search_report {
    std::string model;        ///< the model's name
    std::string cluster;      ///< the cluster's name
    std::string accelerator;  ///< the cluster's accelerator
    int nodes = 1;
    long long gpus = 1;
    /// The request's global_batch, seq, top_k, shard, shards, threads, scale_up_domain (written
    /// resolved: the domain TP was limited to), max_micro_batch, max_virtual_stages, max_cp,
    /// min_cp_tokens, pareto_max_slowdown, try_sequence_parallel, try_zero_bubble, try_pipeline_split,
    /// try_block_recompute, try_cpu_offloading, base.precision, base.stack,
    /// base.compute_efficiency and options.mode; its other fields are not written.
    search_request request{};
    search_result result{};
    bool has_threads = true;                   ///< write `threads` (a search, not a merge)
    std::optional<int> merged_shards{};        ///< shards merged (plan-merge)
    std::optional<double> search_s_max{};      ///< the slowest shard's search_s (plan-merge)
    std::string note;                          ///< why there is no plan ("": not written)
};

namespace io {

namespace result_detail {

/// Largest time (s), memory (GiB) and plain number accepted in a result.
inline constexpr double max_seconds = 1e9, max_gib = 1e9, max_number = 1e18;

/// A time in seconds in [0, 1e9].
[[nodiscard]] inline duration time_s(const json_reader& r, const std::string& key) {
    return seconds(r.number(key, 0.0, max_seconds));
}
/// Bytes written in GiB, in [0, 1e9] GiB (GiB is a power of two: exact).
[[nodiscard]] inline data_size gib(const json_reader& r, const std::string& key) {
    return bytes(r.number(key, 0.0, max_gib) * gibi);
}

/// The step bottleneck named `name` (to_string(step_bottleneck)), errors naming `field`.
[[nodiscard]] inline step_bottleneck step_bottleneck_of(const std::string& name, const std::string& field) {
    constexpr std::array<step_bottleneck, 9> all{step_bottleneck::compute, step_bottleneck::tp_comm, step_bottleneck::pp_comm,
                                                 step_bottleneck::dp_comm, step_bottleneck::bubble,  step_bottleneck::memory,
                                                 step_bottleneck::cp_comm, step_bottleneck::ep_comm, step_bottleneck::offload};
    std::array<std::string_view, 9> names{};
    for (std::size_t i = 0; i < all.size(); ++i) {
        names[i] = to_string(all[i]);
        if (names[i] == name) return all[i];
    }
    throw unknown_name(field, name, names);
}

/// Throws unless the value at `key` equals `expected` (a duplicate of another field), naming
/// `key` and where the expected value comes from.
inline void require_same(const json_reader& r, const std::string& key, const nlohmann::json& expected, const char* source) {
    const nlohmann::json& v = r.raw(key);
    if (v != expected) throw input_error(r.field(key), v.dump(), expected.dump() + " (" + source + ")");
}

/// Reads a `bucket_bytes`-style size in [0, 1e18] bytes.
[[nodiscard]] inline double byte_count(const json_reader& r, const std::string& key) {
    return r.number(key, 0.0, max_number);
}

/// Largest time in microseconds accepted in a result (max_seconds).
inline constexpr double max_us = max_seconds * 1e6;

// A result type's field table: one function template `fields(io, x)` that names each key once,
// with how its value is written and read back. With a field_writer it fills the JSON object
// (whose keys print sorted, whatever the table's order); with a field_reader it reads the object
// back in the table's order, which is the order the reader's errors are found in.

/// The object a field table writes from, as the non-const reference the table's readers assign
/// through: a field_writer never calls a reader, so nothing is written to it. Instantiating the
/// table on a const object instead would make the readers' assignments ill-formed, which some
/// compilers (clang) diagnose even in the readers the writer never calls.
template <class T>
[[nodiscard]] T& written_from(const T& x) {
    return const_cast<T&>(x);  // NOLINT(cppcoreguidelines-pro-type-const-cast): read only (see above)
}

/// The writing side of a field table: emplaces each value into `o`.
struct field_writer {
    nlohmann::json::object_t& o;

    template <class V>
    void put(const char* key, V&& v) const {
        o.emplace(key, std::forward<V>(v));
    }
    void seconds(const char* key, duration t) const { put(key, in_seconds(t)); }
    /// A time that documents written before it lack.
    void optional_seconds(const char* key, duration t) const { put(key, in_seconds(t)); }
    void us(const char* key, duration t) const { put(key, in_us(t)); }
    void gib(const char* key, data_size s) const { put(key, in_bytes(s) / gibi); }
    void byte_count(const char* key, data_size s) const { put(key, in_bytes(s)); }
    /// Bytes as an integer.
    void whole_bytes(const char* key, data_size s) const { put(key, static_cast<long long>(std::llround(in_bytes(s)))); }
    void number(const char* key, double v, double /*lo*/, double /*hi*/) const { put(key, v); }
    void int32(const char* key, int v, int /*lo*/, int /*hi*/) const { put(key, v); }
    void integer(const char* key, long long v, long long /*lo*/, long long /*hi*/) const { put(key, v); }
    void boolean(const char* key, bool v) const { put(key, v); }
    /// A flag always written that documents of older versions lack: read back as `absent` there.
    void boolean_or(const char* key, bool v, bool /*absent*/) const { put(key, v); }
    void text(const char* key, const std::string& v) const { put(key, v); }
    void tflops(const char* key, flop_rate f) const { put(key, in_tflops(f)); }
    void GBps(const char* key, byte_rate r) const { put(key, in_GBps(r)); }
    /// A rate in Gbps, null where unbounded (infinite).
    void Gbps_or_null(const char* key, byte_rate r) const {
        const double v = in_Gbps(r);
        if (std::isfinite(v)) put(key, v);
        else put(key, nullptr);
    }
    /// One of an enum's spellings (to_string; read by parse<E>).
    template <named_enum E>
    void choice(const char* key, E v) const {
        put(key, std::string(to_string(v)));
    }
    /// A value the fields read before give: written, and read back as equal to it (require_same,
    /// naming `source`).
    void same(const char* key, nlohmann::json v, const char* /*source*/) const { put(key, std::move(v)); }
    /// A number in [lo, hi] that the fields read before give (same).
    void derived(const char* key, double v, double /*lo*/, double /*hi*/, const char* /*source*/) const { put(key, v); }
    /// A text the fields read before give, read back as equal to it ('text' (what) in the error).
    void words(const char* key, std::string v, const char* /*what*/) const { put(key, std::move(v)); }
    /// A flag written only when set (read back absent = false), so that documents without it
    /// keep their JSON.
    void flag_when_set(const char* key, bool v) const {
        if (v) put(key, true);
    }
    /// A nested object: `fields(io)` with the object's own writer.
    template <class Fields>
    void object(const char* key, Fields&& fields) const {
        nlohmann::json j = nlohmann::json::object();
        fields(field_writer{j.get_ref<nlohmann::json::object_t&>()});
        put(key, std::move(j));
    }
    /// A key of its own rule: `write(put)` calls put(value) (or does not, to leave the key out);
    /// `read(reader, key)` reads it.
    template <class Write, class Read>
    void custom(const char* key, Write&& write, Read&& /*read*/) const {
        write([&](auto&& v) { put(key, std::forward<decltype(v)>(v)); });
    }
    /// A check of the values read so far, `check(reader)` (nothing to write).
    template <class Check>
    void check(Check&& /*check*/) const {}
    /// A value that repeats what fields read after it give (`value()`): written; the reader checks
    /// its range here and, at compare_repeated, that it equals `value()`, in `rank` order.
    template <class Value>
    void repeated_number(const char* key, int /*rank*/, double /*lo*/, double /*hi*/, Value&& value) const {
        put(key, value());
    }
    template <class Value>
    void repeated_int32(const char* key, int /*rank*/, int /*lo*/, int /*hi*/, Value&& value) const {
        put(key, value());
    }
    template <class Value>
    void repeated_text(const char* key, int /*rank*/, Value&& value) const {
        put(key, value());
    }
    void compare_repeated(const char* /*source*/) const {}
};

/// The reading side of a field table: reads each value from `r` (errors name `r`'s path.KEY).
struct field_reader {
    explicit field_reader(const json_reader& reader) : r(reader) {}

    const json_reader& r;

    void seconds(const char* key, duration& t) const { t = time_s(r, key); }
    void optional_seconds(const char* key, duration& t) const {
        if (r.has(key)) t = time_s(r, key);
    }
    void us(const char* key, duration& t) const { t = from_us(r.number(key, 0.0, max_us)); }
    void gib(const char* key, data_size& s) const { s = result_detail::gib(r, key); }
    void byte_count(const char* key, data_size& s) const { s = bytes(result_detail::byte_count(r, key)); }
    void whole_bytes(const char* key, data_size& s) const { s = bytes(static_cast<double>(r.integer(key, 0, 1LL << 53))); }
    void number(const char* key, double& v, double lo, double hi) const { v = r.number(key, lo, hi); }
    void int32(const char* key, int& v, int lo, int hi) const { v = r.int32(key, lo, hi); }
    void integer(const char* key, long long& v, long long lo, long long hi) const { v = r.integer(key, lo, hi); }
    void boolean(const char* key, bool& v) const { v = r.boolean(key); }
    void boolean_or(const char* key, bool& v, bool absent) const { v = r.boolean_or(key, absent); }
    void text(const char* key, std::string& v) const { v = r.string(key); }
    void tflops(const char* key, flop_rate& f) const { f = from_tflops(r.number(key, 0.0, max_number)); }
    void GBps(const char* key, byte_rate& x) const { x = from_GBps(r.number(key, 0.0, max_number)); }
    void Gbps_or_null(const char* key, byte_rate& x) const {
        (void)r.raw(key);  // required, possibly null
        x = r.has(key) ? from_Gbps(r.number(key, 0.0, max_number)) : bytes_per_second(std::numeric_limits<double>::infinity());
    }
    template <named_enum E>
    void choice(const char* key, E& v) const {
        v = parse<E>(r.string(key), r.field(key));
    }
    void same(const char* key, const nlohmann::json& v, const char* source) const { require_same(r, key, v, source); }
    void derived(const char* key, double v, double lo, double hi, const char* source) const {
        (void)r.number(key, lo, hi);
        require_same(r, key, v, source);
    }
    void words(const char* key, const std::string& v, const char* what) const {
        if (r.string(key) != v) throw input_error(r.field(key), "'" + r.string(key) + "'", "'" + v + "' (" + what + ")");
    }
    void flag_when_set(const char* key, bool& v) const { v = r.boolean_or(key, false); }
    template <class Fields>
    void object(const char* key, Fields&& fields) const {
        const json_reader sub = r.object(key);
        fields(field_reader{sub});
        sub.finish();
    }
    template <class Write, class Read>
    void custom(const char* key, Write&& /*write*/, Read&& read) const {
        read(r, std::string(key));
    }
    template <class Check>
    void check(Check&& f) const {
        f(r);
    }
    template <class Value>
    void repeated_number(const char* key, int rank, double lo, double hi, Value&& value) const {
        (void)r.number(key, lo, hi);
        repeats_.push_back({rank, key, value});
    }
    template <class Value>
    void repeated_int32(const char* key, int rank, int lo, int hi, Value&& value) const {
        (void)r.int32(key, lo, hi);
        repeats_.push_back({rank, key, value});
    }
    template <class Value>
    void repeated_text(const char* key, int rank, Value&& value) const {
        (void)r.string(key);
        repeats_.push_back({rank, key, value});
    }
    void compare_repeated(const char* source) const {
        std::stable_sort(repeats_.begin(), repeats_.end(), [](const repeat& a, const repeat& b) { return a.rank < b.rank; });
        for (const repeat& x : repeats_) require_same(r, x.key, x.value(), source);
        repeats_.clear();
    }

private:
    struct repeat {
        int rank;
        const char* key;
        std::function<nlohmann::json()> value;
    };
    mutable std::vector<repeat> repeats_;
};

}  // namespace result_detail

/// @brief Reads a shard "i/N" (0 <= i < N, decimal digits only, up to 9 each) as {i, N}; throws
/// input_error naming `field` otherwise. A search's `--shard` and its JSON `shard` are spelled so.
[[nodiscard]] inline std::pair<int, int> parse_shard(const std::string& v, const std::string& field) {
    const auto slash = v.find('/');
    const char* expected = "i/N with 0 <= i < N, e.g. 3/16 (shards are numbered from 0, like Slurm array and "
                           "Kubernetes indexed-job indices)";
    if (slash == std::string::npos || slash == 0 || slash + 1 >= v.size()) throw input_error(field, "'" + v + "'", expected);
    auto digits = [](const std::string& s) {
        for (char ch : s)
            if (ch < '0' || ch > '9') return false;
        return !s.empty();
    };
    const std::string i = v.substr(0, slash), n = v.substr(slash + 1);
    if (!digits(i) || !digits(n) || i.size() > 9 || n.size() > 9) throw input_error(field, "'" + v + "'", expected);
    const int ii = std::stoi(i), nn = std::stoi(n);
    if (nn < 1 || ii >= nn) throw input_error(field, "'" + v + "'", expected);
    return {ii, nn};
}

// ---------------------------------------------------------------- collective_result

namespace result_detail {
/// collective_result's field table (field_writer, field_reader).
template <class IO, class C>
void collective_result_fields(const IO& io, C& c) {
    io.choice("op", c.op);
    io.choice("algorithm", c.algo);
    io.int32("ranks", c.ranks, 1, 1 << 30);
    io.int32("nodes", c.nodes, 1, 1 << 30);
    io.whole_bytes("bytes", c.bytes);
    io.us("time_us", c.time);
    io.GBps("algbw_GBps", c.algbw);
    io.GBps("busbw_GBps", c.busbw);
    io.us("latency_us", c.latency);
    io.us("transfer_us", c.transfer);
    io.object("limiting", [&](const auto& l) {
        l.choice("kind", c.bottleneck);
        // a catalog name or any other name (kept); null for none and latency
        l.custom(
            "link",
            [&](auto put) {
                if (c.bottleneck_link.empty()) put(nullptr);
                else put(std::string(c.bottleneck_link));
            },
            [&](const auto& r, const auto& key) {
                const bool has_link = c.bottleneck != bottleneck_kind::none && c.bottleneck != bottleneck_kind::latency;
                c.bottleneck_link = {};
                if (!has_link) {
                    if (!r.raw(key).is_null())
                        throw input_error(r.field(key), r.raw(key).dump(),
                                          "null (a " + std::string(to_string(c.bottleneck)) + " bottleneck names no link)");
                } else {
                    const std::string name = r.string(key);
                    if (name.empty()) throw input_error(r.field(key), "''", "a link name");
                    if (const auto known = find_link(name)) c.bottleneck_link = known->name;
                    else c.bottleneck_link = commscale::detail::intern(name);
                }
            });
        l.int32("sharing", c.sharing, 1, 1 << 30);
    });
    io.words("bottleneck", describe_bottleneck(c), "the limiting object in words");
}
}  // namespace result_detail

/// @brief The CLI.md JSON of one collective prediction: {op, algorithm, ranks, nodes, bytes
/// (integer), time_us, algbw_GBps, busbw_GBps, latency_us, transfer_us, bottleneck (in words),
/// limiting: {kind (bottleneck_kind), link (catalog name, null for none and latency), sharing}}.
[[nodiscard]] inline nlohmann::json collective_result_to_json(const collective_result& r) {
    nlohmann::json j = nlohmann::json::object();
    result_detail::collective_result_fields(result_detail::field_writer{j.get_ref<nlohmann::json::object_t&>()}, result_detail::written_from(r));
    return j;
}

/// @brief Reads collective_result_to_json's object (errors name `path.KEY`): every key required;
/// ranks and nodes in [1, 2^30], bytes an integer in [0, 2^53], times in [0, 1e15] us, rates in
/// [0, 1e18] GB/s; `limiting` {kind, link, sharing} (the link a catalog name or any other name,
/// kept) and `bottleneck` its words (describe_bottleneck). `proto` is not written and reads as
/// Simple.
[[nodiscard]] inline collective_result collective_result_from_json(const nlohmann::json& j,
                                                                   const std::string& path = "collective") {
    const json_reader r(j, path);
    collective_result c{};
    result_detail::collective_result_fields(result_detail::field_reader{r}, c);
    c.proto = protocol::simple;
    r.finish();
    return c;
}

// ---------------------------------------------------------------- step_breakdown

namespace result_detail {
/// step_breakdown's field table (field_writer, field_reader).
template <class IO, class B>
void step_breakdown_fields(const IO& io, B& b) {
    io.seconds("step_s", b.step);
    io.seconds("compute_s", b.compute);
    io.seconds("bubble_s", b.bubble);
    io.seconds("tp_comm_s", b.tp.total);
    io.seconds("tp_comm_exposed_s", b.tp.exposed);
    io.seconds("pp_comm_s", b.pp.total);
    io.seconds("pp_comm_exposed_s", b.pp.exposed);
    io.seconds("dp_comm_s", b.dp.total);
    io.seconds("dp_comm_exposed_s", b.dp.exposed);
    io.seconds("cp_comm_s", b.cp.total);
    io.seconds("cp_comm_exposed_s", b.cp.exposed);
    io.seconds("ep_comm_s", b.ep.total);
    io.seconds("ep_comm_exposed_s", b.ep.exposed);
    io.seconds("exposed_comm_s", b.exposed_comm);
    io.seconds("offload_s", b.offload.total);
    io.seconds("offload_exposed_s", b.offload.exposed);
    io.custom(
        "bottleneck_detail", [&](auto put) { put(std::string(to_string(b.bottleneck))); },
        [&](const auto& r, const auto& key) { b.bottleneck = step_bottleneck_of(r.string(key), r.field(key)); });
    io.same("bottleneck", std::string(contract_bottleneck(b.bottleneck)), "the CLI.md word for bottleneck_detail");
    io.number("mfu", b.mfu, 0.0, max_number);
    io.number("hfu", b.hfu, 0.0, max_number);
    io.tflops("tflops_per_gpu", b.model_flops_per_gpu);
    io.tflops("hardware_tflops_per_gpu", b.hardware_flops_per_gpu);
    io.number("tokens_per_s", b.tokens_per_s, 0.0, max_number);
    io.object("memory_breakdown_GiB", [&](const auto& m) {
        m.gib("weights", b.memory.state.weights);
        m.gib("gradients", b.memory.state.gradients);
        m.gib("optimizer", b.memory.state.optimizer);
        m.gib("activations", b.memory.activations);
    });
    io.derived("memory_per_gpu_GiB", in_bytes(b.memory.total()) / gibi, 0.0, max_gib, "the sum of memory_breakdown_GiB");
    io.gib("memory_capacity_GiB", b.memory_capacity);
    io.boolean("fits_in_memory", b.fits_in_memory);
    io.number("bubble_fraction", b.bubble_fraction, 0.0, 1.0);
    io.int32("micro_batches", b.micro_batches, 0, 1 << 30);
    io.number("compute_efficiency", b.efficiency, 0.0, max_number);
    io.seconds("dp_window_s", b.dp_window);
    io.byte_count("dp_inter_node_bytes_per_node", b.dp_inter_node_bytes);
    io.seconds("optimizer_s", b.optimizer);
    io.seconds("overlap_slowdown_s", b.overlap_slowdown);
    io.seconds("stage_microbatch_s", b.stage_microbatch);
    io.object("layer_s", [&](const auto& l) {
        l.seconds("gemm_fwd", b.layer.gemm_fwd);
        l.seconds("attention_fwd", b.layer.attention_fwd);
        l.seconds("elementwise_fwd", b.layer.elementwise_fwd);
        l.seconds("gemm_bwd", b.layer.gemm_bwd);
        l.seconds("attention_bwd", b.layer.attention_bwd);
        l.seconds("elementwise_bwd", b.layer.elementwise_bwd);
        // hybrid models' Mamba-2 scan (absent from documents written before it)
        l.optional_seconds("scan_fwd", b.layer.scan_fwd);
        l.optional_seconds("scan_bwd", b.layer.scan_bwd);
    });
    io.Gbps_or_null("required_inter_node_Gbps", b.required_inter_node);
    // will-it-scale-to-n-gpus's rule: the DP bytes within the whole compute time of the step
    io.Gbps_or_null("required_inter_node_step_Gbps", b.required_inter_node_step);
}
}  // namespace result_detail

/// @brief The CLI.md JSON of one step breakdown (`step --json`'s keys besides the context, and
/// each plan's `breakdown` in `plan --json`): times in s, memory in GiB, rates in TFLOP/s and
/// Gbps, `bottleneck` in the CLI.md vocabulary (contract_bottleneck) and `bottleneck_detail`
/// exact. Emplaced into the object rather than built from an initializer list: several times
/// faster, and the Python module builds one of these per step() call.
[[nodiscard]] inline nlohmann::json step_breakdown_to_json(const step_breakdown& r) {
    nlohmann::json j = nlohmann::json::object();
    result_detail::step_breakdown_fields(result_detail::field_writer{j.get_ref<nlohmann::json::object_t&>()}, result_detail::written_from(r));
    return j;
}

/// @brief Reads step_breakdown_to_json's object (errors name `path.KEY`): every key required;
/// times in [0, 1e9] s, memory in [0, 1e9] GiB, other numbers in [0, 1e18], micro_batches an
/// integer in [0, 2^30]; `bottleneck_detail` a step_bottleneck spelling and `bottleneck` its CLI.md word;
/// `memory_per_gpu_GiB` the sum of `memory_breakdown_GiB`; the required_inter_node rates null
/// (unbounded) or a number. Fields the JSON does not carry keep their defaults (file comment).
[[nodiscard]] inline step_breakdown step_breakdown_from_json(const nlohmann::json& j, const std::string& path = "step") {
    const json_reader r(j, path);
    step_breakdown b{};
    result_detail::step_breakdown_fields(result_detail::field_reader{r}, b);
    r.finish();
    return b;
}

// ---------------------------------------------------------------- plan

namespace result_detail {
/// plan_from_json's `stage_layers` at `key`: pp counts, back to first/last_stage_layers (0 where
/// the even split gives them).
inline void read_stage_layers(const json_reader& r, const std::string& key, plan& p) {
    const nlohmann::json& sl = r.array(key);
    const std::string sl_field = r.field(key);
    if (sl.size() != static_cast<std::size_t>(p.pp))
        throw input_error(sl_field, "an array of " + std::to_string(sl.size()), "an array of pp = " + std::to_string(p.pp) + " layer counts");
    std::vector<int> counts;
    long long layers = 0;
    for (std::size_t i = 0; i < sl.size(); ++i) {
        const std::string f = sl_field + "[" + std::to_string(i) + "]";
        if (!sl[i].is_number_integer() && !sl[i].is_number_unsigned()) throw input_error(f, json_type_name(sl[i]), "a layer count");
        counts.push_back(static_cast<int>(require_int_range(f, sl[i].get<long long>(), 0, plan_limits::stage_layers)));
        layers += counts.back();
    }
    if (layers < 1 || layers > (1 << 20))
        throw input_error(sl_field, std::to_string(layers) + " layers in all", "between 1 and 2^20 layers in all");
    const int total = static_cast<int>(layers);
    if (static_cast<long long>(p.pp) * p.chunks() > total + p.pipeline_split_extras())  // as validate(plan, model) requires
        throw input_error(sl_field, sl.dump(), "at least pp x V = " + std::to_string(static_cast<long long>(p.pp) * p.chunks()) +
                                                   " layers in all (every virtual stage holds a layer; the embedding and loss "
                                                   "count as one each when account_for_*_in_pipeline_split is set)");
    auto matches = [&](int given_first, int given_last) {
        plan q = p;
        q.first_stage_layers = given_first;
        q.last_stage_layers = given_last;
        for (int i = 0; i < q.pp; ++i)
            if (stage_layers(q, total, i) != counts[static_cast<std::size_t>(i)]) return false;
        return true;
    };
    const int first = counts.front(), last = counts.back();
    const std::array<std::array<int, 2>, 4> tries{{{0, 0}, {first, 0}, {0, last}, {first, last}}};
    bool found = false;
    for (const auto& t : tries) {
        if ((t[0] > 0 || t[1] > 0) && (p.pp < 2 || p.pipeline_split_extras() > 0)) continue;
        if (matches(t[0], t[1])) {
            p.first_stage_layers = t[0];
            p.last_stage_layers = t[1];
            found = true;
            break;
        }
    }
    if (!found)
        throw input_error(sl_field, sl.dump(),
                          "the layers of each stage as the plan splits them: evenly, or given first/last stage counts "
                          "with the rest even, or with the embedding/loss counted as pipeline layers "
                          "(account_for_*_in_pipeline_split)");
}

/// Activation CPU offloading's layers of a plan (plan_fields, planned_fields), only when > 0
/// (absent reads as 0).
template <class IO, class P>
void cpu_offloading_field(const IO& io, P& p) {
    io.custom(
        "cpu_offloading_num_layers",
        [&](auto put) {
            if (p.cpu_offloading_num_layers > 0) put(p.cpu_offloading_num_layers);
        },
        [&](const auto& r, const auto& key) {
            p.cpu_offloading_num_layers = static_cast<int>(r.integer_or(key, 0, 0, plan_limits::stage_layers));
        });
}

/// Full recompute's method and layers of a plan (plan_fields, planned_fields; Megatron-Core's
/// names), only when not every layer is its own checkpoint (absent reads as uniform, 0).
template <class IO, class P>
void full_recompute_fields(const IO& io, P& p) {
    io.custom(
        "recompute_method",
        [&](auto put) {
            if (p.full_recompute_method != recompute_method::uniform || p.recompute_num_layers != 0)
                put(std::string(to_string(p.full_recompute_method)));
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) p.full_recompute_method = parse<recompute_method>(r.string(key), r.field(key));
        });
    io.custom(
        "recompute_num_layers",
        [&](auto put) {
            if (p.recompute_num_layers != 0) put(p.recompute_num_layers);
        },
        [&](const auto& r, const auto& key) {
            p.recompute_num_layers = static_cast<int>(r.integer_or(key, 0, 0, plan_limits::stage_layers));
        });
}

/// plan::first_last_layers_bf16 and its counts (Megatron-Core's names), written only when set:
/// first_last_layers_bf16 true, num_layers_at_start_in_bf16 and num_layers_at_end_in_bf16 (absent:
/// false, and Megatron-Core's default 1 each).
template <class IO, class P>
void bf16_layers_fields(const IO& io, P& p) {
    io.flag_when_set("first_last_layers_bf16", p.first_last_layers_bf16);
    const auto count = [&](const char* key, auto& field) {
        io.custom(
            key,
            [&](auto put) {
                if (p.first_last_layers_bf16) put(field);
            },
            [&](const auto& r, const auto& k) { field = static_cast<int>(r.integer_or(k, 1, 0, plan_limits::stage_layers)); });
    };
    count("num_layers_at_start_in_bf16", p.bf16_layers_at_start);
    count("num_layers_at_end_in_bf16", p.bf16_layers_at_end);
}

/// The `virtual_stages` field of a plan (plan_fields, planned_fields): written resolved
/// (plan::chunks), read in [1, `hi`] and 1 unless the schedule, read before it, is interleaved.
template <class IO, class P>
void virtual_stages_field(const IO& io, P& p, int hi) {
    io.custom(
        "virtual_stages", [&](auto put) { put(p.chunks()); },
        [&](const auto& r, const auto& key) {
            p.virtual_stages = r.int32(key, 1, hi);
            if (p.schedule != pipeline_schedule::interleaved && p.virtual_stages != 1)
                throw input_error(r.field(key), std::to_string(p.virtual_stages),
                                  "1 with the " + std::string(to_string(p.schedule)) + " schedule");
        });
}

/// plan's field table (field_writer, field_reader); `layers`, the model's, gives the written
/// stage_layers.
template <class IO, class P>
void plan_fields(const IO& io, P& p, int layers) {
    io.int32("tp", p.tp, 1, plan_limits::degree);
    io.int32("pp", p.pp, 1, plan_limits::degree);
    io.int32("dp", p.dp, 1, plan_limits::dp);
    io.int32("cp", p.cp, 1, plan_limits::degree);
    io.int32("ep", p.ep, 1, plan_limits::degree);
    // written resolved; equal to tp it reads as 0 (which means tp)
    io.custom(
        "etp", [&](auto put) { put(p.expert_tp()); },
        [&](const auto& r, const auto& key) {
            const int etp = r.int32(key, 1, plan_limits::degree);
            p.etp = etp == p.tp ? 0 : etp;
        });
    io.int32("micro_batch", p.micro_batch, 1, plan_limits::micro_batch);
    io.int32("global_batch", p.global_batch, 1, plan_limits::global_batch);
    io.int32("seq", p.seq, 1, plan_limits::seq);
    io.int32("zero", p.zero, 0, plan_limits::zero);
    io.choice("recompute", p.recompute_mode);
    io.choice("schedule", p.schedule);
    virtual_stages_field(io, p, 1 << 16);
    io.boolean("sequence_parallel", p.sequence_parallel);
    io.choice("dtype", p.precision);
    io.choice("framework", p.stack);
    io.custom(
        "gradient_bytes", [&](auto put) { put(p.gradient_bytes); },
        [&](const auto& r, const auto& key) {
            p.gradient_bytes = r.int32(key, 1, 4);
            if (p.gradient_bytes == 3) throw input_error(r.field(key), "3", "1, 2 or 4");
        });
    // absent in files of earlier versions: fp32 main parameters and moments
    io.custom(
        "optimizer_state_bytes", [&](auto put) { put(p.optimizer_state_bytes); },
        [&](const auto& r, const auto& key) {
            p.optimizer_state_bytes = r.has(key) ? r.int32(key, 0, plan_limits::optimizer_state_bytes) : 12;
        });
    // 0: one bucket (at least whole_gradient_bucket)
    io.custom(
        "bucket_bytes", [&](auto put) { put(in_bytes(p.bucket) >= whole_gradient_bucket ? 0.0 : in_bytes(p.bucket)); },
        [&](const auto& r, const auto& key) {
            const double bucket = byte_count(r, key);
            p.bucket = bytes(bucket == 0 ? whole_gradient_bucket : bucket);
        });
    io.byte_count("bucket_per_dp_bytes", p.bucket_per_dp);
    io.object("overlap", [&](const auto& ov) {
        ov.boolean("dp", p.overlap.dp);
        ov.boolean("tp", p.overlap.tp);
        ov.boolean("pp", p.overlap.pp);
        ov.boolean("zero", p.overlap.zero);
        ov.boolean("cp", p.overlap.cp);
    });
    io.custom(
        "attention", [&](auto put) { put(std::string(to_string(p.attention))); },
        [&](const auto& r, const auto& key) {
            const std::string attention = r.string(key);
            if (attention == "flash") p.attention = attention_kernel::flash;
            else if (attention == "unfused") p.attention = attention_kernel::unfused;
            else throw unknown_name(r.field(key), attention, std::array<std::string_view, 2>{"flash", "unfused"});
        });
    io.boolean("reduce_every_micro_batch", p.reduce_every_micro_batch);
    io.number("expert_load", p.expert_load, 1.0, 1e6);
    io.custom(
        "capacity_factor", [&](auto put) { put(p.capacity_factor); },
        [&](const auto& r, const auto& key) {
            p.capacity_factor = r.number(key, 0.0, 1e6);
            if (p.capacity_factor != 0 && p.capacity_factor < 1e-3)
                throw input_error(r.field(key), commscale::detail::number_text(p.capacity_factor),
                                  "0 (dropless) or a number in [0.001, 1e6]");
        });
    io.boolean("pad_to_capacity", p.pad_to_capacity);
    io.flag_when_set("account_for_embedding_in_pipeline_split", p.account_for_embedding_in_pipeline_split);
    io.flag_when_set("account_for_loss_in_pipeline_split", p.account_for_loss_in_pipeline_split);
    cpu_offloading_field(io, p);
    // only when any (Megatron-Core's names, comma-separated)
    io.custom(
        "recompute_modules",
        [&](auto put) {
            if (p.recompute_modules != 0) put(recompute_modules_names(p.recompute_modules));
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) p.recompute_modules = recompute_modules_from_names(r.string(key), r.field(key));
        });
    io.flag_when_set("overlap_moe_expert_parallel_comm", p.moe_a2a_overlap);
    // per-tensor FP8's scaling recipe (Megatron-Core's --fp8-recipe names) with dtype fp8 (absent
    // reads as delayed)
    io.custom(
        "fp8_recipe",
        [&](auto put) {
            if (p.precision == dtype::fp8) put(std::string(to_string(p.fp8_scaling)));
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) p.fp8_scaling = parse<fp8_recipe>(r.string(key), r.field(key));
        });
    // FP8 parameters (Megatron-Core's --fp8-param-gather) with dtype fp8 or mxfp8; absent (earlier
    // versions, other dtypes) reads as the framework's
    io.custom(
        "fp8_param_gather",
        [&](auto put) {
            if (p.precision == dtype::fp8 || p.precision == dtype::mxfp8) put(p.fp8_param_gather);
        },
        [&](const auto& r, const auto& key) {
            p.fp8_param_gather = r.has(key) ? r.boolean(key) : profile_of(p.stack).fp8_param_gather;
        });
    // Megatron's gradient-accumulation fusion in effect (plan::fuses_gradient_accumulation), with the
    // Megatron stacks; absent (earlier versions, other stacks) reads as the stack's practice
    io.custom(
        "gradient_accumulation_fusion",
        [&](auto put) {
            if (has_gradient_accumulation_fusion(p.stack)) put(p.fuses_gradient_accumulation());
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) p.gradient_accumulation_fusion = r.boolean(key);
            else p.gradient_accumulation_fusion.reset();
        });
    full_recompute_fields(io, p);
    bf16_layers_fields(io, p);
    // absent in files of earlier versions: the framework's
    io.custom(
        "moe_token_dispatcher", [&](auto put) { put(std::string(to_string(p.dispatcher))); },
        [&](const auto& r, const auto& key) {
            p.dispatcher = r.has(key) ? parse<moe_token_dispatcher>(r.string(key), r.field(key)) : profile_of(p.stack).dispatcher;
        });
    io.custom(
        "stage_layers",
        [&](auto put) {
            nlohmann::json stages = nlohmann::json::array();
            for (int i = 0; i < p.pp; ++i) stages.push_back(stage_layers(p, layers, i));
            put(std::move(stages));
        },
        [&](const auto& r, const auto& key) { read_stage_layers(r, key, p); });
}
}  // namespace result_detail

/// @brief The JSON of a plan as `step`/`scale --json` write it (key `plan`): the parallel layout
/// and every option the framework profile resolved, with `stage_layers` for a model of `layers`
/// layers (parallel/plan.hpp `stage_layers`).
[[nodiscard]] inline nlohmann::json plan_to_json(const plan& p, int layers) {
    nlohmann::json j = nlohmann::json::object();
    result_detail::plan_fields(result_detail::field_writer{j.get_ref<nlohmann::json::object_t&>()}, result_detail::written_from(p), layers);
    return j;
}

/// @brief plan_to_json with the layers of model `m`.
[[nodiscard]] inline nlohmann::json plan_to_json(const plan& p, const transformer& m) { return plan_to_json(p, m.layers); }

/// @brief Reads plan_to_json's object (errors name `path.KEY`): every key required; degrees in
/// [1, 2^20] (dp [1, 2^24]), micro_batch [1, 2^24], global_batch [1, 2^30], seq [1, 2^26], zero
/// 0-3, gradient_bytes 1, 2 or 4, sizes in [0, 1e18] bytes, expert_load [1, 1e6],
/// capacity_factor 0 or [1e-3, 1e6], names as plan.hpp/framework.hpp spell them; `stage_layers`
/// pp counts, at least pp x V layers in all, that the even split or given first/last stage counts
/// produce. The plan is not
/// checked against a model or cluster (`validate` does that).
[[nodiscard]] inline plan plan_from_json(const nlohmann::json& j, const std::string& path = "plan") {
    const json_reader r(j, path);
    plan p{};
    result_detail::plan_fields(result_detail::field_reader{r}, p, 0);
    r.finish();
    return p;
}

// ---------------------------------------------------------------- planned (a plan-search entry)

namespace result_detail {
/// planned's field table (field_writer, field_reader): the plan's layout fields (of `gpus` GPUs
/// where > 0), the headline numbers, which repeat the breakdown's, and the breakdown.
template <class IO, class X>
void planned_fields(const IO& io, X& x, long long gpus) {
    auto& p = x.p;
    constexpr int big = 1 << 30;
    io.int32("tp", p.tp, 1, big);
    io.int32("pp", p.pp, 1, big);
    io.int32("dp", p.dp, 1, big);
    io.int32("cp", p.cp, 1, big);
    io.int32("ep", p.ep, 1, big);
    io.int32("micro_batch", p.micro_batch, 1, big);
    io.int32("zero", p.zero, 0, plan_limits::zero);
    io.choice("recompute", p.recompute_mode);
    full_recompute_fields(io, p);
    cpu_offloading_field(io, p);
    io.choice("schedule", p.schedule);
    virtual_stages_field(io, p, big);
    io.boolean("sequence_parallel", p.sequence_parallel);
    io.flag_when_set("account_for_embedding_in_pipeline_split", p.account_for_embedding_in_pipeline_split);
    io.flag_when_set("account_for_loss_in_pipeline_split", p.account_for_loss_in_pipeline_split);
    // Megatron-Core's first/last stage layer counts only when given (read back absent = 0)
    const auto stage_count = [&](const char* key, int& field) {
        io.custom(
            key,
            [&](auto put) {
                if (field > 0) put(field);
            },
            [&](const auto& r, const auto& k) { field = r.has(k) ? r.int32(k, 1, plan_limits::stage_layers) : 0; });
    };
    stage_count("first_stage_layers", p.first_stage_layers);
    stage_count("last_stage_layers", p.last_stage_layers);
    // expert tensor parallelism only when it differs from tp (read back absent = tp)
    io.custom(
        "etp",
        [&](auto put) {
            if (p.expert_tp() != p.tp) put(p.expert_tp());
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) {
                const int etp = r.int32(key, 1, big);
                p.etp = etp == p.tp ? 0 : etp;
            }
        });
    io.check([&](const json_reader& r) {
        if (gpus > 0 && p.gpus() != gpus)
            throw input_error(r.field("tp"), std::to_string(p.tp) + " (tp x pp x dp x cp = " + std::to_string(p.gpus()) + ")",
                              "a plan whose tp x pp x dp x cp is the search's " + std::to_string(gpus) + " GPUs");
    });
    // the headline numbers: ranges checked here, equality with the breakdown's once it is read
    const auto mem = [&x] { return in_bytes(x.r.memory.total()); };
    io.repeated_number("step_s", 0, 1e-12, max_seconds, [&x] { return in_seconds(x.r.step); });
    io.repeated_number("memory_per_gpu_bytes", 3, 0.0, max_number, mem);
    io.repeated_number("mfu", 1, 0.0, 1.0, [&x] { return x.r.mfu; });
    io.repeated_number("memory_per_gpu_GiB", 2, 0.0, max_gib, [mem] { return mem() / gibi; });
    io.repeated_number("memory_headroom_GiB", 4, -max_gib, max_gib,
                       [&x, mem] { return (in_bytes(x.r.memory_capacity) - mem()) / gibi; });
    io.repeated_text("bottleneck", 5, [&x] { return std::string(contract_bottleneck(x.r.bottleneck)); });
    io.repeated_int32("micro_batches", 6, 1, big, [&x] { return x.r.micro_batches; });
    io.custom(
        "breakdown", [&](auto put) { put(step_breakdown_to_json(x.r)); },
        [&](const auto& r, const auto& key) { x.r = step_breakdown_from_json(r.raw(key), r.field(key)); });
    io.compare_repeated("as the breakdown gives it");
}
}  // namespace result_detail

/// @brief One entry of `plan --json`'s plans/pareto: the plan's layout, the headline numbers and
/// the full breakdown (step_breakdown_to_json) under `breakdown`; the pipeline-split flags only
/// when set (plan_to_json's rule: read back absent = false).
[[nodiscard]] inline nlohmann::json planned_to_json(const planned& x) {
    nlohmann::json j = nlohmann::json::object();
    result_detail::planned_fields(result_detail::field_writer{j.get_ref<nlohmann::json::object_t&>()}, result_detail::written_from(x), 0);
    return j;
}

/// @brief Reads planned_to_json's object (errors name `path.KEY`): every key required; the
/// layout as plan_from_json reads it, step_s in [1e-12, 1e9] s, mfu in [0, 1], memory in [0, 1e18]
/// bytes, and the headline numbers equal to what the breakdown gives. With `gpus` > 0, tp x pp x
/// dp x cp must equal it (error naming `path.tp`). The plan's other fields keep their defaults.
[[nodiscard]] inline planned planned_from_json(const nlohmann::json& j, const std::string& path = "plan", long long gpus = 0) {
    if (!j.is_object()) throw input_error(path, json_type_name(j), "a plan object of `plan --json`");
    const json_reader r(j, path);
    planned x{};
    result_detail::planned_fields(result_detail::field_reader{r}, x, gpus);
    r.finish();
    return x;
}

// ---------------------------------------------------------------- search_result and search_report

namespace result_detail {
/// search_result's field table (field_writer, field_reader): its keys in `plan --json`; the plans
/// read are of `gpus` GPUs where > 0.
template <class IO, class S>
void search_result_fields(const IO& io, S& s, long long gpus) {
    io.integer("candidates", s.candidates, 0, 1LL << 60);
    io.integer("evaluated", s.evaluated, 0, 1LL << 60);
    io.integer("feasible", s.feasible, 0, 1LL << 60);
    // absent in files of older versions
    io.custom(
        "rejected", [&](auto put) { put(s.rejected); },
        [&](const auto& r, const auto& key) { s.rejected = r.integer_or(key, 0, 0, 1LL << 60); });
    io.number("search_s", s.search_s, 0.0, max_seconds);
    // an array of planned_to_json objects
    auto write_plans = [](const auto& list) {
        return [l = &list](auto put) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& x : *l) out.push_back(planned_to_json(x));
            put(std::move(out));
        };
    };
    auto read_plans = [gpus](auto& list) {
        return [l = &list, gpus](const auto& r, const auto& key) {
            const nlohmann::json& arr = r.raw(key);
            if (!arr.is_array()) throw input_error(r.field(key), json_type_name(arr), "an array of plans");
            for (std::size_t n = 0; n < arr.size(); ++n)
                l->push_back(planned_from_json(arr[n], r.field(key) + "[" + std::to_string(n) + "]", gpus));
        };
    };
    io.custom("plans", write_plans(s.top), read_plans(s.top));
    io.custom("pareto", write_plans(s.pareto), read_plans(s.pareto));
}

/// search_report's field table (field_writer, field_reader): the search's context, its space,
/// and the search_result keys with every plan on `gpus` GPUs.
template <class IO, class S>
void search_report_fields(const IO& io, S& s) {
    auto& q = s.request;
    io.text("model", s.model);
    io.text("cluster", s.cluster);
    io.text("accelerator", s.accelerator);
    io.custom(
        "nodes", [&](auto put) { put(s.nodes); },
        [&](const auto& r, const auto& key) { s.nodes = static_cast<int>(r.integer(key, 1, cluster_limits::nodes)); });
    io.custom(
        "gpus", [&](auto put) { put(s.gpus); },
        [&](const auto& r, const auto& key) {
            s.gpus = r.integer(key, 1, search_limits::gpus);
            if (s.gpus % s.nodes != 0)
                throw input_error(r.field(key), std::to_string(s.gpus), "a multiple of nodes (" + std::to_string(s.nodes) + ")");
        });
    io.int32("global_batch", q.global_batch, 1, plan_limits::global_batch);
    io.int32("seq", q.seq, 1, plan_limits::seq);
    io.int32("top", q.top_k, 1, search_limits::top_k);
    // a search's; a merge of shards has none
    io.custom(
        "threads",
        [&](auto put) {
            if (s.has_threads) put(q.threads);
        },
        [&](const auto& r, const auto& key) {
            s.has_threads = r.has(key);
            if (s.has_threads) q.threads = r.int32(key, 1, search_limits::threads);
        });
    io.custom(
        "note",
        [&](auto put) {
            if (!s.note.empty()) put(s.note);
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) s.note = r.string(key);
        });
    // a merge of shards'
    io.custom(
        "merged_shards",
        [&](auto put) {
            if (s.merged_shards) put(*s.merged_shards);
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) s.merged_shards = r.int32(key, 1, 1 << 30);
        });
    io.custom(
        "search_s_max",
        [&](auto put) {
            if (s.search_s_max) put(*s.search_s_max);
        },
        [&](const auto& r, const auto& key) {
            if (r.has(key)) s.search_s_max = r.number(key, 0.0, max_seconds);
        });
    io.object("space", [&](const auto& space) {
        space.int32("scale_up_domain", q.scale_up_domain, 1, search_limits::scale_up_domain);
        space.int32("max_micro_batch", q.max_micro_batch, 0, search_limits::max_micro_batch);
        space.int32("max_virtual_stages", q.max_virtual_stages, 0, plan_limits::virtual_stages);
        space.int32("max_cp", q.max_cp, 0, search_limits::max_cp);
        // absent in files of older versions: the unbounded search they ran
        space.custom(
            "min_cp_tokens", [&](auto put) { put(q.min_cp_tokens); },
            [&](const auto& r, const auto& key) {
                if (r.has(key)) q.min_cp_tokens = r.int32(key, 0, plan_limits::seq);
            });
        space.custom(
            "pareto_max_slowdown", [&](auto put) { put(q.pareto_max_slowdown); },
            [&](const auto& r, const auto& key) {
                if (r.has(key)) {
                    q.pareto_max_slowdown = r.number(key, 0.0, 1e6);
                    if (q.pareto_max_slowdown != 0 && q.pareto_max_slowdown < 1)
                        throw input_error(r.field(key), commscale::detail::number_text(q.pareto_max_slowdown),
                                          "0 (the whole front) or a factor in [1, 1e6]");
                }
            });
        space.boolean("sequence_parallel", q.try_sequence_parallel);
        space.boolean_or("zero_bubble", q.try_zero_bubble, true);
        // absent in files of older versions
        space.boolean_or("pipeline_split", q.try_pipeline_split, true);
        // absent in files of older versions, whose searches did not try them
        space.boolean_or("block_recompute", q.try_block_recompute, false);
        space.boolean_or("cpu_offloading", q.try_cpu_offloading, false);
        space.choice("dtype", q.base.precision);
        space.choice("framework", q.base.stack);
        // null: the default
        space.custom(
            "compute_efficiency",
            [&](auto put) {
                put(q.base.compute_efficiency ? nlohmann::json(*q.base.compute_efficiency) : nlohmann::json(nullptr));
            },
            [&](const auto& r, const auto& key) {
                if (r.has(key)) q.base.compute_efficiency = r.number(key, 1e-6, 1.0);
                else r.ignore({key.c_str()});
            });
        space.custom(
            "efficiency", [&](auto put) { put(q.options.mode == efficiency_mode::ideal ? "ideal" : "default"); },
            [&](const auto& r, const auto& key) { q.options.mode = parse<efficiency_mode>(r.string(key), r.field(key)); });
    });
    io.custom(
        "shard", [&](auto put) { put(std::to_string(q.shard) + "/" + std::to_string(q.shards)); },
        [&](const auto& r, const auto& key) { std::tie(q.shard, q.shards) = parse_shard(r.string(key), r.field(key)); });
    search_result_fields(io, s.result, s.gpus);
}
}  // namespace result_detail

/// @brief The search_result keys of `plan --json`: {candidates, evaluated, feasible, rejected,
/// search_s, plans, pareto}.
[[nodiscard]] inline nlohmann::json search_result_to_json(const search_result& s) {
    nlohmann::json j = nlohmann::json::object();
    result_detail::search_result_fields(result_detail::field_writer{j.get_ref<nlohmann::json::object_t&>()}, result_detail::written_from(s), 0);
    return j;
}

/// @brief Reads search_result_to_json's object (errors name `path.KEY`): counts in [0, 2^60]
/// (`rejected` may be absent: 0), search_s in [0, 1e9] s, plans as planned_from_json reads them.
[[nodiscard]] inline search_result search_result_from_json(const nlohmann::json& j, const std::string& path = "search") {
    const json_reader r(j, path);
    search_result s;
    result_detail::search_result_fields(result_detail::field_reader{r}, s, 0);
    r.finish();
    return s;
}

/// @brief The whole `plan --json` document (CLI.md "Calibration and planning"; search_report).
[[nodiscard]] inline nlohmann::json search_report_to_json(const search_report& s) {
    nlohmann::json j = nlohmann::json::object();
    result_detail::search_report_fields(result_detail::field_writer{j.get_ref<nlohmann::json::object_t&>()}, result_detail::written_from(s));
    return j;
}

/// @brief Reads a `plan --json` document (errors name `path.KEY`, e.g. `shard-3.json.space.dtype`):
/// model, cluster and accelerator strings; nodes in [1, 1e6], gpus in [1, 2^30] a multiple of
/// nodes; global_batch [1, 2^30], seq [1, 2^26], top [1, 2^20]; the `space` object's keys
/// (zero_bubble and pipeline_split may be absent: true; min_cp_tokens [0, 2^26] and
/// pareto_max_slowdown (0 or [1, 1e6]) may be absent: 0; compute_efficiency null or in [1e-6, 1]; efficiency ideal or
/// default); shard "i/N"; the optional threads [1, 4096], note, merged_shards [1, 2^30] and
/// search_s_max [0, 1e9]; the search_result keys, with every plan on `gpus` GPUs.
[[nodiscard]] inline search_report search_report_from_json(const nlohmann::json& j, const std::string& path = "search") {
    const json_reader r(j, path);
    search_report s;
    result_detail::search_report_fields(result_detail::field_reader{r}, s);
    r.finish();
    return s;
}

// ---------------------------------------------------------------- generic spellings

/// @brief `io::to_json(x)`: the JSON of a result (the `*_to_json` function of its type).
[[nodiscard]] inline nlohmann::json to_json(const collective_result& r) { return collective_result_to_json(r); }
[[nodiscard]] inline nlohmann::json to_json(const step_breakdown& r) { return step_breakdown_to_json(r); }
[[nodiscard]] inline nlohmann::json to_json(const plan& p, int layers) { return plan_to_json(p, layers); }
[[nodiscard]] inline nlohmann::json to_json(const planned& x) { return planned_to_json(x); }
[[nodiscard]] inline nlohmann::json to_json(const search_result& s) { return search_result_to_json(s); }
[[nodiscard]] inline nlohmann::json to_json(const search_report& s) { return search_report_to_json(s); }

/// @brief `io::from_json<T>(j, path)`: reads a result of type T (the `*_from_json` function of
/// T: collective_result, step_breakdown, plan, planned, search_result or search_report).
template <class T>
[[nodiscard]] T from_json(const nlohmann::json& j, const std::string& path) {
    if constexpr (std::is_same_v<T, collective_result>) return collective_result_from_json(j, path);
    else if constexpr (std::is_same_v<T, step_breakdown>) return step_breakdown_from_json(j, path);
    else if constexpr (std::is_same_v<T, plan>) return plan_from_json(j, path);
    else if constexpr (std::is_same_v<T, planned>) return planned_from_json(j, path);
    else if constexpr (std::is_same_v<T, search_result>) return search_result_from_json(j, path);
    else {
        static_assert(std::is_same_v<T, search_report>, "from_json<T>: T is one of the result types of io/result_json.hpp");
        return search_report_from_json(j, path);
    }
}

/// @brief `d`, read from `path`, as a `plan --json` document: an input_error naming `path` unless
/// it is a JSON object (the one check of a document's shape before its keys are read).
inline const nlohmann::json& search_document(const nlohmann::json& d, const std::string& path) {
    if (!d.is_object()) throw input_error(path, json_type_name(d), "a `plan --json` object");
    return d;
}

/// @brief The `plan --json` documents of `paths` (`-`: `standard_input`), what plan-merge reads: each
/// file read, parsed and checked by search_document in turn, so the first file that fails is the
/// one named (errors name FILE for a file that cannot be read, the path for bad JSON or a non-object).
[[nodiscard]] inline std::vector<nlohmann::json> read_search_documents(const std::vector<std::string>& paths,
                                                                       std::istream& standard_input) {
    std::vector<nlohmann::json> docs;
    docs.reserve(paths.size());
    for (const std::string& path : paths) {
        const std::string text =
            path == "-" ? read_stream(standard_input, "standard input", "FILE") : read_file(path, "FILE");
        docs.push_back(parse_json(text, path));
        (void)search_document(docs.back(), path);
    }
    return docs;
}

/// @brief The unsharded search from the `plan --json --shard i/N` documents of one search
/// (`docs[i]` read from `paths[i]`, which error messages name; read_search_documents reads them): each
/// checked by search_document and read by search_report_from_json,
/// all with the same model, cluster, accelerator, nodes, GPUs, global batch, sequence, top K and
/// space as the first, every shard 0..N-1 exactly once; counts and search times summed, the top K
/// and the Pareto front of the union (merge_results), search_s_max the longest shard.
[[nodiscard]] inline search_report merge_search_reports(const std::vector<nlohmann::json>& docs,
                                                        const std::vector<std::string>& paths) {
    if (docs.empty() || docs.size() != paths.size())
        throw input_error("plan-merge", std::to_string(docs.size()) + " documents", "one `plan --json` document per file");
    const nlohmann::json& first = docs.front();
    const std::string& first_path = paths.front();
    int shards = 0;
    std::set<int> seen;
    std::vector<search_report> reports;
    double search_max = 0;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        const auto& d = docs[i];
        const std::string& path = paths[i];
        // every field checked, errors naming FILE.field
        search_report s = search_report_from_json(search_document(d, path), path);
        for (const char* k : {"model", "cluster", "accelerator", "nodes", "gpus", "global_batch", "seq", "top", "space"}) {
            if (!d.contains(k)) throw input_error(path + "." + k, "nothing (missing)", "a `plan --json` output");
            if (d[k] != first[k])
                throw input_error(path + "." + k, d[k].dump(), first[k].dump() + " as in " + first_path + " (shards of one search)");
        }
        const std::string shard = d["shard"].get<std::string>();
        const int index = s.request.shard, count = s.request.shards;
        if (i == 0) shards = count;
        if (count != shards) throw input_error(path + ".shard", shard, "i/" + std::to_string(shards) + " as in " + first_path);
        if (!seen.insert(index).second)
            throw input_error(path + ".shard", shard, "each shard once (" + std::to_string(index) + " given twice)");
        search_max = std::max(search_max, s.result.search_s);
        reports.push_back(std::move(s));
    }
    if (static_cast<int>(seen.size()) != shards) {
        std::string missing;
        for (int i = 0; i < shards && missing.size() < 200; ++i)
            if (!seen.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(shards);
        throw input_error("plan-merge", std::to_string(seen.size()) + " of " + std::to_string(shards) + " shards",
                          "every shard; missing " + missing);
    }
    std::vector<search_result> parts;
    for (auto& s : reports) parts.push_back(std::move(s.result));
    search_report merged = std::move(reports.front());
    merged.result = merge_results(parts, merged.request.top_k, merged.request.pareto_max_slowdown);
    merged.request.shard = 0;
    merged.request.shards = 1;
    merged.has_threads = false;
    merged.merged_shards = shards;
    merged.search_s_max = search_max;
    merged.note = !merged.result.top.empty()          ? ""
                  : merged.result.candidates == 0 ? "no valid plan shape in any shard"
                                                  : "no plan fits in memory";
    return merged;
}

}  // namespace io

}  // namespace commscale
