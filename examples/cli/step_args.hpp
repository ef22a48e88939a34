#pragma once
// Shared by the `step` and `scale` commands: their options, the embedded demo defaults, the plan
// they describe, and the text rendering of one step breakdown (docs/CLI.md "Training step"; the
// JSON is the library's, io/result_json.hpp).
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <commscale/io/result_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/units/format.hpp>

#include "cli.hpp"
#include "model.hpp"
#include "topology.hpp"

namespace cli {

/// The README's demo: GPT-3 175B (Brown et al. 2020) on 16 DGX A100 nodes (128 GPUs) with the
/// Megatron-LM layout of Narayanan et al. 2021 (t = 8 inside a node, p = 8 across nodes, dp = 2),
/// micro-batch 1, global batch 512 of 2048 tokens (1M tokens), full recompute, 1F1B.
inline constexpr std::string_view demo_model = "gpt3-175b";
inline constexpr std::string_view demo_cluster = "dgx-a100";
inline constexpr int demo_nodes = 16;

/// Options of `step` (and `scale`, which adds --nodes as a list).
inline std::vector<option_spec> step_options_spec(bool scale) {
    std::vector<option_spec> o = topology_options();
    if (scale) {
        for (auto& x : o)
            if (x.name == "nodes") x.help = "comma-separated node counts, e.g. 1,2,4,8";
    }
    o.push_back({"gpus", true,
                 scale ? "comma-separated GPU counts instead of --nodes (each a multiple of the GPUs per node)"
                       : "GPUs instead of --nodes (nodes = GPUs / GPUs per node)"});
    o.push_back(model_option());
    o.push_back({"tp", true, "tensor-parallel degree"});
    o.push_back({"pp", true, "pipeline stages"});
    o.push_back({"dp", true, "data-parallel degree (default: GPUs / (tp x pp x cp))"});
    o.push_back({"cp", true, "context-parallel degree"});
    o.push_back({"ep", true, "expert-parallel degree (divides dp x cp, or tp x cp x dp / etp)"});
    o.push_back({"etp", true, "expert tensor-parallel degree: each expert's GEMMs split over etp ranks (default: tp)"});
    o.push_back({"micro-batch", true, "sequences per micro-batch"});
    o.push_back({"global-batch", true, "sequences per optimizer step"});
    o.push_back({"seq", true, "sequence length in tokens"});
    o.push_back({"zero", true, "ZeRO stage 0|1|2|3 (3 = FSDP)"});
    o.push_back({"recompute", true, "none|selective|full"});
    o.push_back({"schedule", true, "gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe"});
    o.push_back({"virtual-stages", true, "model chunks per device for the interleaved schedule"});
    o.push_back({"sequence-parallel", false, "sequence parallelism with TP"});
    o.push_back({"compute-efficiency", true, "achievable fraction of peak, overriding the default"});
    o.push_back({"dtype", true, "fp32|tf32|bf16|fp16|fp8|mxfp8|nvfp4|fp4 (default bf16; the accelerator must have a peak for it)"});
    o.push_back({"efficiency", true, "collective model: ideal|default"});
    o.push_back({"framework", true, "megatron-core|megatron-lm|megatron-deepspeed|deepspeed|fsdp (default megatron-core)"});
    o.push_back({"bucket", true, "DP gradient bucket size (default: the framework's)"});
    o.push_back({"gradient-bytes", true, "bytes per reduced gradient element: 2 or 4 (default: the framework's)"});
    o.push_back({"expert-load", true, "MoE routing imbalance: busiest EP rank's tokens / the mean (default 1)"});
    o.push_back({"capacity-factor", true, "MoE expert capacity factor: tokens beyond it are dropped (default: dropless)"});
    o.push_back({"pad-to-capacity", false, "pad every expert's input to the capacity (needs --capacity-factor)"});
    o.push_back({"dp-overlap", false, "overlap the DP gradient reduction with backward"});
    o.push_back({"no-dp-overlap", false, "do not overlap the DP reduction with backward"});
    o.push_back({"tp-overlap", false, "overlap TP collectives with matmuls (needs --sequence-parallel)"});
    o.push_back({"no-tp-overlap", false, "expose every TP collective"});
    o.push_back({"pp-overlap", false, "overlap steady-state pipeline send/recv with compute"});
    o.push_back({"no-pp-overlap", false, "expose every pipeline send/recv"});
    o.push_back({"zero-overlap", false, "overlap ZeRO/FSDP parameter all-gathers with compute (prefetch)"});
    o.push_back({"no-zero-overlap", false, "expose every ZeRO/FSDP parameter all-gather"});
    o.push_back({"cp-overlap", false, "overlap the CP K/V exchange with attention"});
    o.push_back({"no-cp-overlap", false, "expose the CP K/V exchange"});
    o.push_back({"attention", true, "flash|unfused (default: the framework's)"});
    o.push_back({"first-stage-layers", true, "layers of the first pipeline stage (default: even split)"});
    o.push_back({"last-stage-layers", true, "layers of the last pipeline stage (default: even split)"});
    o.push_back({"account-for-embedding-in-pipeline-split", false,
                 "count the embedding as a pipeline layer of the first stage (Megatron-Core's flag)"});
    o.push_back({"account-for-loss-in-pipeline-split", false,
                 "count the output layer and loss as a pipeline layer of the last stage (Megatron-Core's flag)"});
    o.push_back({"cpu-offloading-num-layers", true,
                 "layers per stage whose activations go to host memory (Megatron-Core's flag; default 0)"});
    o.push_back({"recompute-modules", true,
                 "modules recomputed in the backward, comma-separated (Megatron-Core's flag): core_attn, layernorm, "
                 "mla_up_proj, mlp, moe, moe_act, shared_experts"});
    o.push_back({"no-scatter-gather", false, "pipeline sends the whole activation from every TP rank"});
    o.push_back({"svg", true, "write a plot as an SVG file"});
    if (scale) o.push_back({"strong", false, "strong scaling: keep the global batch fixed (default: weak)"});
    return o;
}

/// True when no model, cluster or topology flag is given: the embedded demo runs.
[[nodiscard]] inline bool is_demo(const args& a) {
    return !a.has("model") && !a.has("cluster") && !a.has("gpus") && !has_topology_override(a);
}

/// The cluster of a step/scale command (demo: 16 DGX A100 nodes). `nodes_is_list` skips --nodes.
[[nodiscard]] inline commscale::cluster step_cluster(const args& a, bool nodes_is_list) {
    if (is_demo(a)) {
        commscale::cluster c = commscale::cluster_by_name(demo_cluster, "--cluster");
        c.nodes = demo_nodes;
        return c;
    }
    if (nodes_is_list && (a.has("nodes") || a.has("gpus"))) {
        args b = a;
        b.values_.erase("nodes");
        b.values_.erase("gpus");
        return resolve_cluster(b);
    }
    return resolve_cluster_gpus(a);
}

/// The model of a step/scale command (demo: GPT-3 175B).
[[nodiscard]] inline commscale::transformer step_model(const args& a) {
    if (is_demo(a)) return commscale::model_by_name(demo_model, "--model");
    return resolve_model(a);
}

/// The plan the flags describe on `gpus` GPUs. Demo defaults: tp 8, pp 8, micro-batch 1, global
/// batch 512 (1M tokens), full recompute. Otherwise tp = pp = cp = ep = 1, dp = GPUs / (tp pp cp),
/// micro-batch 1, global batch dp x micro-batch (x 4 pp with pipelining, so the bubble is small),
/// seq = min(2048, the model's context). Validation is predict_step's (errors name plan fields).
[[nodiscard]] inline commscale::plan step_plan(const args& a, const commscale::transformer& m, long long gpus) {
    using namespace commscale;
    const bool demo = is_demo(a);
    plan p;
    apply_framework(p, parse_framework(a.get("framework").value_or("megatron-core"), "--framework"));
    auto ival = [&](const char* name, long long fallback, long long lo, long long hi) {
        return static_cast<int>(a.integer(name, fallback, lo, hi));
    };
    p.tp = ival("tp", demo ? 8 : 1, 1, plan_limits::degree);
    p.pp = ival("pp", demo ? 8 : 1, 1, plan_limits::degree);
    p.cp = ival("cp", 1, 1, plan_limits::degree);
    p.ep = ival("ep", 1, 1, plan_limits::degree);
    if (a.has("etp")) p.etp = ival("etp", 1, 1, plan_limits::degree);
    const long long mp = static_cast<long long>(p.tp) * p.pp * p.cp;
    if (!a.has("dp") && gpus % mp != 0)
        throw input_error("--tp x --pp x --cp", std::to_string(mp), "a divisor of the cluster's " + std::to_string(gpus) + " GPUs");
    p.dp = ival("dp", gpus / mp, 1, plan_limits::dp);
    p.micro_batch = ival("micro-batch", 1, 1, plan_limits::micro_batch);
    const long long gb_default = demo ? 512 : static_cast<long long>(p.dp) * p.micro_batch * (p.pp > 1 ? 4 * p.pp : 1);
    p.global_batch = ival("global-batch", gb_default, 1, plan_limits::global_batch);
    p.seq = ival("seq", m.max_seq > 0 ? std::min(2048, m.max_seq) : 2048, 1, 1 << 26);
    p.zero = ival("zero", p.zero, 0, 3);
    p.recompute_mode = recompute_from_name(a.get("recompute").value_or(demo ? "full" : "none"), "--recompute");
    p.schedule = parse_schedule(a.get("schedule").value_or("1f1b"), "--schedule");
    p.virtual_stages = ival("virtual-stages", p.schedule == pipeline_schedule::interleaved ? 2 : 1, 1, plan_limits::virtual_stages);
    p.sequence_parallel = a.flag("sequence-parallel");
    if (auto v = a.get("dtype")) p.precision = precision_from_name(*v, "--dtype");
    if (a.has("compute-efficiency"))
        p.compute_efficiency = require_range("--compute-efficiency", a.number("compute-efficiency", 0.5), 1e-6, 1.0);
    if (auto v = a.get("bucket")) p.bucket = parse_size(*v, "--bucket");
    if (a.has("expert-load")) p.expert_load = require_range("--expert-load", a.number("expert-load", 1.0), 1.0, 1e6);
    if (a.has("capacity-factor"))
        p.capacity_factor = require_range("--capacity-factor", a.number("capacity-factor", 1.0), 1e-3, 1e6);
    p.pad_to_capacity = a.flag("pad-to-capacity");
    if (p.pad_to_capacity && !a.has("capacity-factor"))
        throw input_error("--pad-to-capacity", "given without --capacity-factor", "a --capacity-factor to pad to");
    if (a.has("gradient-bytes")) {
        p.gradient_bytes = ival("gradient-bytes", 4, 1, 4);
        if (p.gradient_bytes == 3) throw input_error("--gradient-bytes", "3", "1, 2 or 4");
    }
    auto toggle = [&](const char* on, const char* off, bool& field) {
        if (a.flag(on) && a.flag(off))
            throw input_error(std::string("--") + on, "given with --" + std::string(off), "one of the two");
        if (a.flag(on)) field = true;
        if (a.flag(off)) field = false;
    };
    toggle("dp-overlap", "no-dp-overlap", p.overlap.dp);
    toggle("tp-overlap", "no-tp-overlap", p.overlap.tp);
    toggle("pp-overlap", "no-pp-overlap", p.overlap.pp);
    toggle("zero-overlap", "no-zero-overlap", p.overlap.zero);
    toggle("cp-overlap", "no-cp-overlap", p.overlap.cp);
    if (auto v = a.get("attention")) p.attention = parse<attention_kernel>(*v, "--attention");
    p.first_stage_layers = ival("first-stage-layers", 0, 0, plan_limits::stage_layers);
    p.last_stage_layers = ival("last-stage-layers", 0, 0, plan_limits::stage_layers);
    p.account_for_embedding_in_pipeline_split = a.flag("account-for-embedding-in-pipeline-split");
    p.account_for_loss_in_pipeline_split = a.flag("account-for-loss-in-pipeline-split");
    p.cpu_offloading_num_layers = ival("cpu-offloading-num-layers", 0, 0, plan_limits::stage_layers);
    if (auto v = a.get("recompute-modules")) p.recompute_modules = recompute_modules_from_names(*v, "--recompute-modules");
    p.pp_scatter_gather = !a.flag("no-scatter-gather");
    return p;
}

/// Predictor options from --efficiency.
/// @brief --dtype must be a precision the cluster's accelerator has a peak for: an input_error naming
/// --dtype, the value and the accelerator's supported data types otherwise.
inline void check_precision(const commscale::cluster& c, const commscale::plan& p) {
    using namespace commscale;
    if (auto acc = find_accelerator(c.node.accelerator)) (void)peak_for(*acc, p.precision, "--dtype");
}

[[nodiscard]] inline commscale::step_options step_opts(const args& a) {
    commscale::step_options o;
    if (auto e = a.get("efficiency")) o.mode = commscale::parse<commscale::efficiency_mode>(*e, "--efficiency");
    return o;
}

/// Seconds as readable text (s or ms).
[[nodiscard]] inline std::string secs(commscale::duration t) {
    const double s = commscale::in_seconds(t);
    if (s >= 1.0) return num(s, 3) + " s";
    return num(s * 1e3, 3) + " ms";
}

}  // namespace cli
