#pragma once
/// @file io/result_json.hpp
/// @brief JSON for the library's results, with the keys and numbers of the CLI's `--json`
/// output (docs/CLI.md): collective predictions, plans, step breakdowns and plan searches.
/// Written by `*_to_json` (or the `io::to_json` overloads) and read back, validated, by
/// `*_from_json` (or `io::from_json<T>`): every error is an input_error naming the field path
/// under the `path` argument (`shard-0.json.plans[3].breakdown.compute_s`), the value given and
/// what is accepted; unknown keys are rejected with "did you mean".
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
///   names, comma-separated) only when any; moe_token_dispatcher (alltoall, deepep, hybridep; absent
///   reads as the framework's).
/// * planned: {tp, pp, dp, cp, ep, micro_batch, zero, recompute, schedule, virtual_stages,
///   sequence_parallel, step_s, mfu, memory_per_gpu_GiB, memory_per_gpu_bytes,
///   memory_headroom_GiB, bottleneck, micro_batches, breakdown: {step_breakdown}} (+ the two
///   pipeline-split flags as in plan, only when set).
/// * search_result: {candidates, evaluated, feasible, rejected, search_s, plans: [planned...],
///   pareto: [planned...]}.
/// * search_report (the whole `plan --json` document): the search_result's keys and {model,
///   cluster, accelerator, nodes, gpus, global_batch, seq, top, space: {scale_up_domain,
///   max_micro_batch, max_virtual_stages, max_cp, min_cp_tokens, pareto_max_slowdown,
///   sequence_parallel, zero_bubble, dtype, framework, compute_efficiency (null: the default),
///   efficiency (ideal|default)}, shard ("i/N"),
///   threads (a search), merged_shards and search_s_max (a merge of shards), note (when given)}.

#include <array>
#include <cmath>
#include <cstddef>
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
/// report as tp_comm; `bottleneck_detail` keeps the exact kind (cp_comm, ep_comm).
[[nodiscard]] constexpr std::string_view contract_bottleneck(step_bottleneck b) {
    if (b == step_bottleneck::cp_comm || b == step_bottleneck::ep_comm) return "tp_comm";
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
    /// min_cp_tokens, pareto_max_slowdown, try_sequence_parallel, try_zero_bubble, try_pipeline_split, base.precision, base.stack,
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
    constexpr std::array<step_bottleneck, 8> all{step_bottleneck::compute, step_bottleneck::tp_comm, step_bottleneck::pp_comm,
                                                 step_bottleneck::dp_comm, step_bottleneck::bubble,  step_bottleneck::memory,
                                                 step_bottleneck::cp_comm, step_bottleneck::ep_comm};
    std::array<std::string_view, 8> names{};
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

/// The collective bottleneck of the `limiting` object {kind, link, sharing} into `out`, checked
/// against `bottleneck`, the same in describe_bottleneck's words (errors name `limiting.KEY` or
/// `bottleneck`). A link outside the catalog is kept by name.
inline void read_bottleneck(const json_reader& r, collective_result& out) {
    const json_reader l = r.object("limiting");
    out.bottleneck = parse<bottleneck_kind>(l.string("kind"), l.field("kind"));
    const bool has_link = out.bottleneck != bottleneck_kind::none && out.bottleneck != bottleneck_kind::latency;
    out.bottleneck_link = {};
    if (!has_link) {
        if (!l.raw("link").is_null())
            throw input_error(l.field("link"), l.raw("link").dump(), "null (a " + std::string(to_string(out.bottleneck)) + " bottleneck names no link)");
    } else {
        const std::string name = l.string("link");
        if (name.empty()) throw input_error(l.field("link"), "''", "a link name");
        if (const auto known = find_link(name)) out.bottleneck_link = known->name;
        else out.bottleneck_link = commscale::detail::intern(name);
    }
    out.sharing = l.int32("sharing", 1, 1 << 30);
    l.finish();
    const std::string words = describe_bottleneck(out);
    if (r.string("bottleneck") != words)
        throw input_error(r.field("bottleneck"), "'" + r.string("bottleneck") + "'",
                          "'" + words + "' (the limiting object in words)");
}

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

/// @brief The CLI.md JSON of one collective prediction: {op, algorithm, ranks, nodes, bytes
/// (integer), time_us, algbw_GBps, busbw_GBps, latency_us, transfer_us, bottleneck (in words),
/// limiting: {kind (bottleneck_kind), link (catalog name, null for none and latency), sharing}}.
[[nodiscard]] inline nlohmann::json collective_result_to_json(const collective_result& r) {
    return {{"op", std::string(to_string(r.op))},
            {"algorithm", std::string(to_string(r.algo))},
            {"ranks", r.ranks},
            {"nodes", r.nodes},
            {"bytes", static_cast<long long>(std::llround(in_bytes(r.bytes)))},
            {"time_us", in_us(r.time)},
            {"algbw_GBps", in_GBps(r.algbw)},
            {"busbw_GBps", in_GBps(r.busbw)},
            {"latency_us", in_us(r.latency)},
            {"transfer_us", in_us(r.transfer)},
            {"bottleneck", describe_bottleneck(r)},
            {"limiting", {{"kind", std::string(to_string(r.bottleneck))},
                          {"link", r.bottleneck_link.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(r.bottleneck_link))},
                          {"sharing", r.sharing}}}};
}

/// @brief Reads collective_result_to_json's object (errors name `path.KEY`): every key required;
/// ranks and nodes in [1, 2^30], bytes an integer in [0, 2^53], times in [0, 1e15] us, rates in
/// [0, 1e18] GB/s; `limiting` {kind, link, sharing} (the link a catalog name or any other name,
/// kept) and `bottleneck` its words (describe_bottleneck). `proto` is not written and reads as
/// Simple.
[[nodiscard]] inline collective_result collective_result_from_json(const nlohmann::json& j,
                                                                   const std::string& path = "collective") {
    using namespace result_detail;
    const json_reader r(j, path);
    collective_result c{};
    c.op = parse<collective_op>(r.string("op"), r.field("op"));
    c.algo = parse<algorithm>(r.string("algorithm"), r.field("algorithm"));
    c.ranks = r.int32("ranks", 1, 1 << 30);
    c.nodes = r.int32("nodes", 1, 1 << 30);
    c.bytes = bytes(static_cast<double>(r.integer("bytes", 0, 1LL << 53)));
    const double max_us = max_seconds * 1e6;
    c.time = from_us(r.number("time_us", 0.0, max_us));
    c.algbw = from_GBps(r.number("algbw_GBps", 0.0, max_number));
    c.busbw = from_GBps(r.number("busbw_GBps", 0.0, max_number));
    c.latency = from_us(r.number("latency_us", 0.0, max_us));
    c.transfer = from_us(r.number("transfer_us", 0.0, max_us));
    read_bottleneck(r, c);
    c.proto = protocol::simple;
    r.finish();
    return c;
}

// ---------------------------------------------------------------- step_breakdown

/// @brief The CLI.md JSON of one step breakdown (`step --json`'s keys besides the context, and
/// each plan's `breakdown` in `plan --json`): times in s, memory in GiB, rates in TFLOP/s and
/// Gbps, `bottleneck` in the CLI.md vocabulary (contract_bottleneck) and `bottleneck_detail`
/// exact. Built by emplace rather than from an initializer list: several times faster, and the
/// Python module builds one of these per step() call.
[[nodiscard]] inline nlohmann::json step_breakdown_to_json(const step_breakdown& r) {
    nlohmann::json j = nlohmann::json::object();
    auto& o = j.get_ref<nlohmann::json::object_t&>();
    auto put = [&o](const char* key, auto&& value) { o.emplace(key, std::forward<decltype(value)>(value)); };
    put("step_s", in_seconds(r.step));
    put("compute_s", in_seconds(r.compute));
    put("bubble_s", in_seconds(r.bubble));
    put("tp_comm_s", in_seconds(r.tp.total));
    put("tp_comm_exposed_s", in_seconds(r.tp.exposed));
    put("pp_comm_s", in_seconds(r.pp.total));
    put("pp_comm_exposed_s", in_seconds(r.pp.exposed));
    put("dp_comm_s", in_seconds(r.dp.total));
    put("dp_comm_exposed_s", in_seconds(r.dp.exposed));
    put("cp_comm_s", in_seconds(r.cp.total));
    put("cp_comm_exposed_s", in_seconds(r.cp.exposed));
    put("ep_comm_s", in_seconds(r.ep.total));
    put("ep_comm_exposed_s", in_seconds(r.ep.exposed));
    put("exposed_comm_s", in_seconds(r.exposed_comm));
    put("bottleneck", std::string(contract_bottleneck(r.bottleneck)));
    put("bottleneck_detail", std::string(to_string(r.bottleneck)));
    put("mfu", r.mfu);
    put("hfu", r.hfu);
    put("tflops_per_gpu", in_tflops(r.model_flops_per_gpu));
    put("hardware_tflops_per_gpu", in_tflops(r.hardware_flops_per_gpu));
    put("tokens_per_s", r.tokens_per_s);
    put("memory_per_gpu_GiB", in_bytes(r.memory.total()) / gibi);
    put("memory_capacity_GiB", in_bytes(r.memory_capacity) / gibi);
    nlohmann::json memory = nlohmann::json::object();
    auto& mo = memory.get_ref<nlohmann::json::object_t&>();
    mo.emplace("weights", in_bytes(r.memory.state.weights) / gibi);
    mo.emplace("gradients", in_bytes(r.memory.state.gradients) / gibi);
    mo.emplace("optimizer", in_bytes(r.memory.state.optimizer) / gibi);
    mo.emplace("activations", in_bytes(r.memory.activations) / gibi);
    put("memory_breakdown_GiB", std::move(memory));
    put("fits_in_memory", r.fits_in_memory);
    put("bubble_fraction", r.bubble_fraction);
    put("micro_batches", r.micro_batches);
    put("compute_efficiency", r.efficiency);
    put("dp_window_s", in_seconds(r.dp_window));
    put("dp_inter_node_bytes_per_node", in_bytes(r.dp_inter_node_bytes));
    put("optimizer_s", in_seconds(r.optimizer));
    put("overlap_slowdown_s", in_seconds(r.overlap_slowdown));
    put("stage_microbatch_s", in_seconds(r.stage_microbatch));
    nlohmann::json layer = nlohmann::json::object();
    auto& lo = layer.get_ref<nlohmann::json::object_t&>();
    lo.emplace("gemm_fwd", in_seconds(r.layer.gemm_fwd));
    lo.emplace("attention_fwd", in_seconds(r.layer.attention_fwd));
    lo.emplace("elementwise_fwd", in_seconds(r.layer.elementwise_fwd));
    lo.emplace("gemm_bwd", in_seconds(r.layer.gemm_bwd));
    lo.emplace("attention_bwd", in_seconds(r.layer.attention_bwd));
    lo.emplace("elementwise_bwd", in_seconds(r.layer.elementwise_bwd));
    lo.emplace("scan_fwd", in_seconds(r.layer.scan_fwd));
    lo.emplace("scan_bwd", in_seconds(r.layer.scan_bwd));
    put("layer_s", std::move(layer));
    const double need = in_Gbps(r.required_inter_node);
    if (std::isfinite(need)) put("required_inter_node_Gbps", need);
    else put("required_inter_node_Gbps", nullptr);
    // will-it-scale-to-n-gpus's rule: the DP bytes within the whole compute time of the step
    const double need_step = in_Gbps(r.required_inter_node_step);
    if (std::isfinite(need_step)) put("required_inter_node_step_Gbps", need_step);
    else put("required_inter_node_step_Gbps", nullptr);
    return j;
}

/// @brief Reads step_breakdown_to_json's object (errors name `path.KEY`): every key required;
/// times in [0, 1e9] s, memory in [0, 1e9] GiB, other numbers in [0, 1e18], micro_batches an
/// integer in [0, 2^30]; `bottleneck_detail` a step_bottleneck spelling and `bottleneck` its CLI.md word;
/// `memory_per_gpu_GiB` the sum of `memory_breakdown_GiB`; the required_inter_node rates null
/// (unbounded) or a number. Fields the JSON does not carry keep their defaults (file comment).
[[nodiscard]] inline step_breakdown step_breakdown_from_json(const nlohmann::json& j, const std::string& path = "step") {
    using namespace result_detail;
    const json_reader r(j, path);
    step_breakdown b{};
    b.step = time_s(r, "step_s");
    b.compute = time_s(r, "compute_s");
    b.bubble = time_s(r, "bubble_s");
    b.tp = {time_s(r, "tp_comm_s"), time_s(r, "tp_comm_exposed_s")};
    b.pp = {time_s(r, "pp_comm_s"), time_s(r, "pp_comm_exposed_s")};
    b.dp = {time_s(r, "dp_comm_s"), time_s(r, "dp_comm_exposed_s")};
    b.cp = {time_s(r, "cp_comm_s"), time_s(r, "cp_comm_exposed_s")};
    b.ep = {time_s(r, "ep_comm_s"), time_s(r, "ep_comm_exposed_s")};
    b.exposed_comm = time_s(r, "exposed_comm_s");
    b.bottleneck = step_bottleneck_of(r.string("bottleneck_detail"), r.field("bottleneck_detail"));
    require_same(r, "bottleneck", std::string(contract_bottleneck(b.bottleneck)), "the CLI.md word for bottleneck_detail");
    b.mfu = r.number("mfu", 0.0, max_number);
    b.hfu = r.number("hfu", 0.0, max_number);
    b.model_flops_per_gpu = from_tflops(r.number("tflops_per_gpu", 0.0, max_number));
    b.hardware_flops_per_gpu = from_tflops(r.number("hardware_tflops_per_gpu", 0.0, max_number));
    b.tokens_per_s = r.number("tokens_per_s", 0.0, max_number);
    {
        const json_reader m = r.object("memory_breakdown_GiB");
        b.memory.state.weights = gib(m, "weights");
        b.memory.state.gradients = gib(m, "gradients");
        b.memory.state.optimizer = gib(m, "optimizer");
        b.memory.activations = gib(m, "activations");
        m.finish();
    }
    (void)r.number("memory_per_gpu_GiB", 0.0, max_gib);
    require_same(r, "memory_per_gpu_GiB", in_bytes(b.memory.total()) / gibi, "the sum of memory_breakdown_GiB");
    b.memory_capacity = gib(r, "memory_capacity_GiB");
    b.fits_in_memory = r.boolean("fits_in_memory");
    b.bubble_fraction = r.number("bubble_fraction", 0.0, 1.0);
    b.micro_batches = r.int32("micro_batches", 0, 1 << 30);
    b.efficiency = r.number("compute_efficiency", 0.0, max_number);
    b.dp_window = time_s(r, "dp_window_s");
    b.dp_inter_node_bytes = bytes(byte_count(r, "dp_inter_node_bytes_per_node"));
    b.optimizer = time_s(r, "optimizer_s");
    b.overlap_slowdown = time_s(r, "overlap_slowdown_s");
    b.stage_microbatch = time_s(r, "stage_microbatch_s");
    {
        const json_reader l = r.object("layer_s");
        b.layer.gemm_fwd = time_s(l, "gemm_fwd");
        b.layer.attention_fwd = time_s(l, "attention_fwd");
        b.layer.elementwise_fwd = time_s(l, "elementwise_fwd");
        b.layer.gemm_bwd = time_s(l, "gemm_bwd");
        b.layer.attention_bwd = time_s(l, "attention_bwd");
        b.layer.elementwise_bwd = time_s(l, "elementwise_bwd");
        // hybrid models' Mamba-2 scan (absent from documents written before it)
        if (l.has("scan_fwd")) b.layer.scan_fwd = time_s(l, "scan_fwd");
        if (l.has("scan_bwd")) b.layer.scan_bwd = time_s(l, "scan_bwd");
        l.finish();
    }
    auto rate = [&](const char* key) {
        (void)r.raw(key);  // required, possibly null
        if (!r.has(key)) return bytes_per_second(std::numeric_limits<double>::infinity());
        return from_Gbps(r.number(key, 0.0, max_number));
    };
    b.required_inter_node = rate("required_inter_node_Gbps");
    b.required_inter_node_step = rate("required_inter_node_step_Gbps");
    r.finish();
    return b;
}

// ---------------------------------------------------------------- plan

/// @brief The JSON of a plan as `step`/`scale --json` write it (key `plan`): the parallel layout
/// and every option the framework profile resolved, with `stage_layers` for a model of `layers`
/// layers (parallel/plan.hpp `stage_layers`).
[[nodiscard]] inline nlohmann::json plan_to_json(const plan& p, int layers) {
    nlohmann::json stages = nlohmann::json::array();
    for (int i = 0; i < p.pp; ++i) stages.push_back(stage_layers(p, layers, i));
    nlohmann::json j = nlohmann::json::object();
    auto& o = j.get_ref<nlohmann::json::object_t&>();
    auto put = [&o](const char* key, auto&& value) { o.emplace(key, std::forward<decltype(value)>(value)); };
    put("tp", p.tp);
    put("pp", p.pp);
    put("dp", p.dp);
    put("cp", p.cp);
    put("ep", p.ep);
    put("etp", p.expert_tp());
    put("micro_batch", p.micro_batch);
    put("global_batch", p.global_batch);
    put("seq", p.seq);
    put("zero", p.zero);
    put("recompute", std::string(to_string(p.recompute_mode)));
    put("schedule", std::string(to_string(p.schedule)));
    put("virtual_stages", p.chunks());
    put("sequence_parallel", p.sequence_parallel);
    put("dtype", std::string(to_string(p.precision)));
    put("framework", std::string(to_string(p.stack)));
    put("gradient_bytes", p.gradient_bytes);
    put("optimizer_state_bytes", p.optimizer_state_bytes);
    put("bucket_bytes", in_bytes(p.bucket) >= whole_gradient_bucket ? 0.0 : in_bytes(p.bucket));  // 0: one bucket
    put("bucket_per_dp_bytes", in_bytes(p.bucket_per_dp));
    nlohmann::json overlap = nlohmann::json::object();
    auto& ov = overlap.get_ref<nlohmann::json::object_t&>();
    ov.emplace("dp", p.overlap.dp);
    ov.emplace("tp", p.overlap.tp);
    ov.emplace("pp", p.overlap.pp);
    ov.emplace("zero", p.overlap.zero);
    ov.emplace("cp", p.overlap.cp);
    put("overlap", std::move(overlap));
    put("attention", std::string(to_string(p.attention)));
    put("reduce_every_micro_batch", p.reduce_every_micro_batch);
    put("expert_load", p.expert_load);
    put("capacity_factor", p.capacity_factor);
    put("pad_to_capacity", p.pad_to_capacity);
    put("stage_layers", std::move(stages));
    // written only when set, so plans without them keep their JSON (read back absent = false)
    if (p.account_for_embedding_in_pipeline_split) put("account_for_embedding_in_pipeline_split", true);
    if (p.account_for_loss_in_pipeline_split) put("account_for_loss_in_pipeline_split", true);
    if (p.cpu_offloading_num_layers > 0) put("cpu_offloading_num_layers", p.cpu_offloading_num_layers);
    if (p.recompute_modules != 0) put("recompute_modules", recompute_modules_names(p.recompute_modules));
    put("moe_token_dispatcher", std::string(to_string(p.dispatcher)));
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
    using namespace result_detail;
    const json_reader r(j, path);
    plan p{};
    p.tp = r.int32("tp", 1, plan_limits::degree);
    p.pp = r.int32("pp", 1, plan_limits::degree);
    p.dp = r.int32("dp", 1, plan_limits::dp);
    p.cp = r.int32("cp", 1, plan_limits::degree);
    p.ep = r.int32("ep", 1, plan_limits::degree);
    const int etp = r.int32("etp", 1, plan_limits::degree);
    p.etp = etp == p.tp ? 0 : etp;
    p.micro_batch = r.int32("micro_batch", 1, plan_limits::micro_batch);
    p.global_batch = r.int32("global_batch", 1, plan_limits::global_batch);
    p.seq = r.int32("seq", 1, plan_limits::seq);
    p.zero = r.int32("zero", 0, plan_limits::zero);
    p.recompute_mode = parse<recompute>(r.string("recompute"), r.field("recompute"));
    p.schedule = parse<pipeline_schedule>(r.string("schedule"), r.field("schedule"));
    p.virtual_stages = r.int32("virtual_stages", 1, 1 << 16);
    if (p.schedule != pipeline_schedule::interleaved && p.virtual_stages != 1)
        throw input_error(r.field("virtual_stages"), std::to_string(p.virtual_stages),
                          "1 with the " + std::string(to_string(p.schedule)) + " schedule");
    p.sequence_parallel = r.boolean("sequence_parallel");
    p.precision = parse<dtype>(r.string("dtype"), r.field("dtype"));
    p.stack = parse<framework>(r.string("framework"), r.field("framework"));
    p.gradient_bytes = r.int32("gradient_bytes", 1, 4);
    if (p.gradient_bytes == 3) throw input_error(r.field("gradient_bytes"), "3", "1, 2 or 4");
    // absent in files of earlier versions: fp32 main parameters and moments
    p.optimizer_state_bytes = r.has("optimizer_state_bytes")
                                  ? r.int32("optimizer_state_bytes", 0, plan_limits::optimizer_state_bytes)
                                  : 12;
    const double bucket = byte_count(r, "bucket_bytes");
    p.bucket = bytes(bucket == 0 ? whole_gradient_bucket : bucket);
    p.bucket_per_dp = bytes(byte_count(r, "bucket_per_dp_bytes"));
    {
        const json_reader ov = r.object("overlap");
        p.overlap.dp = ov.boolean("dp");
        p.overlap.tp = ov.boolean("tp");
        p.overlap.pp = ov.boolean("pp");
        p.overlap.zero = ov.boolean("zero");
        p.overlap.cp = ov.boolean("cp");
        ov.finish();
    }
    const std::string attention = r.string("attention");
    if (attention == "flash") p.attention = attention_kernel::flash;
    else if (attention == "unfused") p.attention = attention_kernel::unfused;
    else throw unknown_name(r.field("attention"), attention, std::array<std::string_view, 2>{"flash", "unfused"});
    p.reduce_every_micro_batch = r.boolean("reduce_every_micro_batch");
    p.expert_load = r.number("expert_load", 1.0, 1e6);
    p.capacity_factor = r.number("capacity_factor", 0.0, 1e6);
    if (p.capacity_factor != 0 && p.capacity_factor < 1e-3)
        throw input_error(r.field("capacity_factor"), commscale::detail::number_text(p.capacity_factor), "0 (dropless) or a number in [0.001, 1e6]");
    p.pad_to_capacity = r.boolean("pad_to_capacity");
    p.account_for_embedding_in_pipeline_split = r.boolean_or("account_for_embedding_in_pipeline_split", false);
    p.account_for_loss_in_pipeline_split = r.boolean_or("account_for_loss_in_pipeline_split", false);
    p.cpu_offloading_num_layers =
        static_cast<int>(r.integer_or("cpu_offloading_num_layers", 0, 0, plan_limits::stage_layers));
    if (r.has("recompute_modules"))
        p.recompute_modules = recompute_modules_from_names(r.string("recompute_modules"), r.field("recompute_modules"));
    // absent in files of earlier versions: the framework's
    p.dispatcher = r.has("moe_token_dispatcher")
                       ? parse<moe_token_dispatcher>(r.string("moe_token_dispatcher"), r.field("moe_token_dispatcher"))
                       : profile_of(p.stack).dispatcher;

    // stage_layers: pp counts; back to first/last_stage_layers (0 where the even split gives them)
    const nlohmann::json& sl = r.array("stage_layers");
    const std::string sl_field = r.field("stage_layers");
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
        if ((t[0] > 0 || t[1] > 0) && (p.pp < 2 || p.chunks() > 1 || p.pipeline_split_extras() > 0)) continue;
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
    r.finish();
    return p;
}

// ---------------------------------------------------------------- planned (a plan-search entry)

/// @brief One entry of `plan --json`'s plans/pareto: the plan's layout, the headline numbers and
/// the full breakdown (step_breakdown_to_json) under `breakdown`.
[[nodiscard]] inline nlohmann::json planned_to_json(const planned& x) {
    const plan& p = x.p;
    const step_breakdown& r = x.r;
    const double mem = in_bytes(r.memory.total());
    nlohmann::json j = {{"tp", p.tp},
            {"pp", p.pp},
            {"dp", p.dp},
            {"cp", p.cp},
            {"ep", p.ep},
            {"micro_batch", p.micro_batch},
            {"zero", p.zero},
            {"recompute", std::string(to_string(p.recompute_mode))},
            {"schedule", std::string(to_string(p.schedule))},
            {"virtual_stages", p.chunks()},
            {"sequence_parallel", p.sequence_parallel},
            {"step_s", in_seconds(r.step)},
            {"mfu", r.mfu},
            {"memory_per_gpu_GiB", mem / gibi},
            {"memory_per_gpu_bytes", mem},
            {"memory_headroom_GiB", (in_bytes(r.memory_capacity) - mem) / gibi},
            {"bottleneck", std::string(contract_bottleneck(r.bottleneck))},
            {"micro_batches", r.micro_batches},
            {"breakdown", step_breakdown_to_json(r)}};
    // the pipeline-split flags only when set (plan_to_json's rule): read back absent = false
    if (p.account_for_embedding_in_pipeline_split) j["account_for_embedding_in_pipeline_split"] = true;
    if (p.account_for_loss_in_pipeline_split) j["account_for_loss_in_pipeline_split"] = true;
    // expert tensor parallelism only when it differs from tp (read back absent = tp)
    if (p.expert_tp() != p.tp) j["etp"] = p.expert_tp();
    return j;
}


/// @brief Reads planned_to_json's object (errors name `path.KEY`): every key required; the
/// layout as plan_from_json reads it, step_s in [1e-12, 1e9] s, mfu in [0, 1], memory in [0, 1e18]
/// bytes, and the headline numbers equal to what the breakdown gives. With `gpus` > 0, tp x pp x
/// dp x cp must equal it (error naming `path.tp`). The plan's other fields keep their defaults.
[[nodiscard]] inline planned planned_from_json(const nlohmann::json& j, const std::string& path = "plan", long long gpus = 0) {
    using namespace result_detail;
    if (!j.is_object()) throw input_error(path, json_type_name(j), "a plan object of `plan --json`");
    const json_reader r(j, path);
    planned x{};
    plan& p = x.p;
    const int big = 1 << 30;
    p.tp = r.int32("tp", 1, big);
    p.pp = r.int32("pp", 1, big);
    p.dp = r.int32("dp", 1, big);
    p.cp = r.int32("cp", 1, big);
    p.ep = r.int32("ep", 1, big);
    p.micro_batch = r.int32("micro_batch", 1, big);
    p.zero = r.int32("zero", 0, plan_limits::zero);
    p.recompute_mode = parse<recompute>(r.string("recompute"), r.field("recompute"));
    p.schedule = parse<pipeline_schedule>(r.string("schedule"), r.field("schedule"));
    p.virtual_stages = r.int32("virtual_stages", 1, big);
    if (p.schedule != pipeline_schedule::interleaved && p.virtual_stages != 1)
        throw input_error(r.field("virtual_stages"), std::to_string(p.virtual_stages),
                          "1 with the " + std::string(to_string(p.schedule)) + " schedule");
    p.sequence_parallel = r.boolean("sequence_parallel");
    p.account_for_embedding_in_pipeline_split = r.boolean_or("account_for_embedding_in_pipeline_split", false);
    p.account_for_loss_in_pipeline_split = r.boolean_or("account_for_loss_in_pipeline_split", false);
    if (r.has("etp")) {
        const int etp = r.int32("etp", 1, big);
        p.etp = etp == p.tp ? 0 : etp;
    }
    if (gpus > 0 && p.gpus() != gpus)
        throw input_error(r.field("tp"), std::to_string(p.tp) + " (tp x pp x dp x cp = " + std::to_string(p.gpus()) + ")",
                          "a plan whose tp x pp x dp x cp is the search's " + std::to_string(gpus) + " GPUs");
    (void)r.number("step_s", 1e-12, max_seconds);
    (void)r.number("memory_per_gpu_bytes", 0.0, max_number);
    (void)r.number("mfu", 0.0, 1.0);
    (void)r.number("memory_per_gpu_GiB", 0.0, max_gib);
    (void)r.number("memory_headroom_GiB", -max_gib, max_gib);
    (void)r.string("bottleneck");
    (void)r.int32("micro_batches", 1, big);
    x.r = step_breakdown_from_json(r.raw("breakdown"), r.field("breakdown"));
    // the headline numbers repeat the breakdown's
    const nlohmann::json again = planned_to_json(x);
    for (const char* key : {"step_s", "mfu", "memory_per_gpu_GiB", "memory_per_gpu_bytes", "memory_headroom_GiB", "bottleneck",
                            "micro_batches"})
        require_same(r, key, again.at(key), "as the breakdown gives it");
    r.finish();
    return x;
}

// ---------------------------------------------------------------- search_result and search_report

/// @brief The search_result keys of `plan --json`: {candidates, evaluated, feasible, rejected,
/// search_s, plans, pareto}.
[[nodiscard]] inline nlohmann::json search_result_to_json(const search_result& s) {
    nlohmann::json plans = nlohmann::json::array(), pareto = nlohmann::json::array();
    for (const auto& x : s.top) plans.push_back(planned_to_json(x));
    for (const auto& x : s.pareto) pareto.push_back(planned_to_json(x));
    return {{"candidates", s.candidates}, {"evaluated", s.evaluated}, {"feasible", s.feasible}, {"rejected", s.rejected},
            {"search_s", s.search_s},     {"plans", std::move(plans)},  {"pareto", std::move(pareto)}};
}

namespace result_detail {
/// Reads the search_result keys through `r` (the caller finishes it); plans of `gpus` GPUs when > 0.
[[nodiscard]] inline search_result search_fields(const json_reader& r, long long gpus) {
    search_result s;
    s.candidates = r.integer("candidates", 0, 1LL << 60);
    s.evaluated = r.integer("evaluated", 0, 1LL << 60);
    s.feasible = r.integer("feasible", 0, 1LL << 60);
    s.rejected = r.integer_or("rejected", 0, 0, 1LL << 60);  // absent in files of older versions
    s.search_s = r.number("search_s", 0.0, max_seconds);
    for (const char* list : {"plans", "pareto"}) {
        const nlohmann::json& arr = r.raw(list);
        if (!arr.is_array()) throw input_error(r.field(list), json_type_name(arr), "an array of plans");
        auto& out = std::string_view(list) == "plans" ? s.top : s.pareto;
        for (std::size_t n = 0; n < arr.size(); ++n)
            out.push_back(planned_from_json(arr[n], r.field(list) + "[" + std::to_string(n) + "]", gpus));
    }
    return s;
}
}  // namespace result_detail

/// @brief Reads search_result_to_json's object (errors name `path.KEY`): counts in [0, 2^60]
/// (`rejected` may be absent: 0), search_s in [0, 1e9] s, plans as planned_from_json reads them.
[[nodiscard]] inline search_result search_result_from_json(const nlohmann::json& j, const std::string& path = "search") {
    const json_reader r(j, path);
    search_result s = result_detail::search_fields(r, 0);
    r.finish();
    return s;
}

/// @brief The whole `plan --json` document (CLI.md "Calibration and planning"; search_report).
[[nodiscard]] inline nlohmann::json search_report_to_json(const search_report& s) {
    const search_request& q = s.request;
    nlohmann::json j = search_result_to_json(s.result);
    j["model"] = s.model;
    j["cluster"] = s.cluster;
    j["accelerator"] = s.accelerator;
    j["nodes"] = s.nodes;
    j["gpus"] = s.gpus;
    j["global_batch"] = q.global_batch;
    j["seq"] = q.seq;
    j["top"] = q.top_k;
    j["space"] = {{"scale_up_domain", q.scale_up_domain},
                  {"max_micro_batch", q.max_micro_batch},
                  {"max_virtual_stages", q.max_virtual_stages},
                  {"max_cp", q.max_cp},
                  {"min_cp_tokens", q.min_cp_tokens},
                  {"pareto_max_slowdown", q.pareto_max_slowdown},
                  {"sequence_parallel", q.try_sequence_parallel},
                  {"zero_bubble", q.try_zero_bubble},
                  {"pipeline_split", q.try_pipeline_split},
                  {"dtype", std::string(to_string(q.base.precision))},
                  {"framework", std::string(to_string(q.base.stack))},
                  {"compute_efficiency",
                   q.base.compute_efficiency ? nlohmann::json(*q.base.compute_efficiency) : nlohmann::json(nullptr)},
                  {"efficiency", q.options.mode == efficiency_mode::ideal ? "ideal" : "default"}};
    j["shard"] = std::to_string(q.shard) + "/" + std::to_string(q.shards);
    if (s.has_threads) j["threads"] = q.threads;
    if (s.merged_shards) j["merged_shards"] = *s.merged_shards;
    if (s.search_s_max) j["search_s_max"] = *s.search_s_max;
    if (!s.note.empty()) j["note"] = s.note;
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
    using namespace result_detail;
    const json_reader r(j, path);
    search_report s;
    search_request& q = s.request;
    s.model = r.string("model");
    s.cluster = r.string("cluster");
    s.accelerator = r.string("accelerator");
    s.nodes = static_cast<int>(r.integer("nodes", 1, cluster_limits::nodes));
    s.gpus = r.integer("gpus", 1, search_limits::gpus);
    if (s.gpus % s.nodes != 0)
        throw input_error(r.field("gpus"), std::to_string(s.gpus), "a multiple of nodes (" + std::to_string(s.nodes) + ")");
    q.global_batch = r.int32("global_batch", 1, plan_limits::global_batch);
    q.seq = r.int32("seq", 1, plan_limits::seq);
    q.top_k = r.int32("top", 1, search_limits::top_k);
    s.has_threads = r.has("threads");
    if (s.has_threads) q.threads = r.int32("threads", 1, search_limits::threads);
    if (r.has("note")) s.note = r.string("note");
    if (r.has("merged_shards")) s.merged_shards = r.int32("merged_shards", 1, 1 << 30);
    if (r.has("search_s_max")) s.search_s_max = r.number("search_s_max", 0.0, max_seconds);
    {
        const json_reader space = r.object("space");
        q.scale_up_domain = space.int32("scale_up_domain", 1, search_limits::scale_up_domain);
        q.max_micro_batch = space.int32("max_micro_batch", 0, search_limits::max_micro_batch);
        q.max_virtual_stages = space.int32("max_virtual_stages", 0, plan_limits::virtual_stages);
        q.max_cp = space.int32("max_cp", 0, search_limits::max_cp);
        // absent in files of older versions: the unbounded search they ran
        if (space.has("min_cp_tokens")) q.min_cp_tokens = space.int32("min_cp_tokens", 0, plan_limits::seq);
        if (space.has("pareto_max_slowdown")) {
            q.pareto_max_slowdown = space.number("pareto_max_slowdown", 0.0, 1e6);
            if (q.pareto_max_slowdown != 0 && q.pareto_max_slowdown < 1)
                throw input_error(space.field("pareto_max_slowdown"), commscale::detail::number_text(q.pareto_max_slowdown),
                                  "0 (the whole front) or a factor in [1, 1e6]");
        }
        q.try_sequence_parallel = space.boolean("sequence_parallel");
        q.try_zero_bubble = space.boolean_or("zero_bubble", true);
        q.try_pipeline_split = space.boolean_or("pipeline_split", true);  // absent in files of older versions
        q.base.precision = parse<dtype>(space.string("dtype"), space.field("dtype"));
        q.base.stack = parse<framework>(space.string("framework"), space.field("framework"));
        if (space.has("compute_efficiency")) q.base.compute_efficiency = space.number("compute_efficiency", 1e-6, 1.0);
        else space.ignore({"compute_efficiency"});  // null: the default
        q.options.mode = parse<efficiency_mode>(space.string("efficiency"), space.field("efficiency"));
        space.finish();
    }
    std::tie(q.shard, q.shards) = parse_shard(r.string("shard"), r.field("shard"));
    s.result = search_fields(r, s.gpus);
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
