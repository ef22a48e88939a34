#pragma once
// Shared by the `step` and `scale` commands: their options, the embedded demo defaults, the plan
// they describe, and the text rendering of one step breakdown (docs/CLI.md "Training step"; the
// JSON is the library's, io/result_json.hpp).
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <commscale/io/result_json.hpp>
#include <commscale/parallel/pipeline_layout.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/units/format.hpp>

#include "cli.hpp"
#include "model.hpp"
#include "options.hpp"
#include "topology.hpp"

namespace cli {

/// The README's demo: GPT-3 175B (Brown et al. 2020) on 16 DGX A100 nodes (128 GPUs) with the
/// Megatron-LM layout of Narayanan et al. 2021 (t = 8 inside a node, p = 8 across nodes, dp = 2),
/// micro-batch 1, global batch 512 of 2048 tokens (1M tokens), full recompute, 1F1B.
inline constexpr std::string_view demo_model = "gpt3-175b";
inline constexpr std::string_view demo_cluster = "dgx-a100";
inline constexpr int demo_nodes = 16;

/// What the options of `step` and `scale` of their own give: each value as given with its reader
/// (cli::given), read where step_plan's order reads it, so that a line with several errors reports
/// the one that order finds first. The Python module's rows fill the same request
/// (python/rows.hpp), --model, the topology flags and --gpus included (a model or cluster parsed
/// before, there).
struct step_request {
    topology_request topology;
    std::optional<given<commscale::transformer>> model;
    std::optional<given<commscale::framework>> stack;
    std::optional<given<int>> tp, pp, dp, cp, ep, etp, micro_batch, global_batch, seq, zero, virtual_stages;
    std::optional<given<commscale::recompute>> recompute_mode;
    std::optional<given<commscale::pipeline_schedule>> schedule;
    bool sequence_parallel = false, no_sequence_parallel = false;
    std::optional<given<double>> compute_efficiency;
    std::optional<given<commscale::dtype>> precision;
    std::optional<given<commscale::efficiency_mode>> efficiency;
    std::optional<given<commscale::data_size>> bucket;
    std::optional<given<int>> gradient_bytes, optimizer_state_bytes;
    std::optional<given<double>> expert_load, capacity_factor;
    bool pad_to_capacity = false;
    std::optional<given<commscale::moe_token_dispatcher>> dispatcher;
    bool dp_overlap = false, no_dp_overlap = false, tp_overlap = false, no_tp_overlap = false, pp_overlap = false,
         no_pp_overlap = false, zero_overlap = false, no_zero_overlap = false, cp_overlap = false, no_cp_overlap = false,
         fp8_param_gather = false, no_fp8_param_gather = false, gradient_accumulation_fusion = false,
         no_gradient_accumulation_fusion = false;
    std::optional<given<commscale::attention_kernel>> attention;
    std::optional<given<int>> first_stage_layers, last_stage_layers;
    bool account_for_embedding_in_pipeline_split = false, account_for_loss_in_pipeline_split = false;
    std::optional<given<std::string>> pipeline_layout;
    std::optional<given<int>> cpu_offloading_num_layers;
    std::optional<given<unsigned>> recompute_modules;
    std::optional<given<commscale::recompute_method>> recompute_method;
    std::optional<given<commscale::fp8_recipe>> fp8_recipe;
    bool overlap_moe_expert_parallel_comm = false;
    std::optional<given<int>> recompute_num_layers;
    bool first_last_layers_bf16 = false;
    std::optional<given<int>> bf16_layers_at_start, bf16_layers_at_end;
    bool no_scatter_gather = false;
    std::optional<std::string> svg;
    bool strong = false;  ///< scale only
};

namespace step_options_detail {
/// An integer option's reader: an int in [lo, hi].
[[nodiscard]] inline auto integer(long long lo, long long hi) {
    return [lo, hi](const given_value& v, const std::string& flag) { return static_cast<int>(reads::integer(v, flag, lo, hi)); };
}
/// A number option's reader: a number in [lo, hi].
[[nodiscard]] inline auto number(double lo, double hi) {
    return [lo, hi](const given_value& v, const std::string& flag) { return commscale::require_range(flag, reads::number(v, flag), lo, hi); };
}
/// A choice option's reader: one of an enum's spellings.
template <commscale::named_enum E>
[[nodiscard]] E spelling(const given_value& v, const std::string& flag) {
    return reads::choice<E>(v, flag);
}
}  // namespace step_options_detail

/// `--gradient-bytes`, read in [1, 4] (step, scale, plan): 1, 2 or 4 bytes per reduced gradient element.
inline int gradient_bytes_flag(int v) {
    if (v == 3) throw commscale::input_error("--gradient-bytes", "3", "1, 2 or 4");
    return v;
}

/// `--[no-]gradient-accumulation-fusion` (step, scale, plan) into `p`, whose stack is set: Megatron's
/// setting, refused with both flags or with a stack outside Megatron (plan::gradient_accumulation_fusion).
inline void set_gradient_accumulation_fusion(commscale::plan& p, bool on, bool off) {
    if (!on && !off) return;
    const std::string flag = on ? "--gradient-accumulation-fusion" : "--no-gradient-accumulation-fusion";
    if (on && off) throw commscale::input_error(flag, "given with --no-gradient-accumulation-fusion", "one of the two");
    if (!commscale::has_gradient_accumulation_fusion(p.stack))
        throw commscale::input_error(flag, "given with --framework " + std::string(to_string(p.stack)),
                                     "--framework megatron-core or megatron-lm (Megatron's setting)");
    p.gradient_accumulation_fusion = on;
}

/// The options of `step` (and `scale`, which takes --nodes and --gpus as lists, and --strong), in
/// the order of their help, bound to step_request. Built once: requests point to their readers.
inline const std::vector<bound_option<step_request>>& step_options(bool scale) {
    static const auto make = [](bool for_scale) {
        using r = step_request;
        using namespace commscale;
        using opt::flag;
        using opt::given;
        using opt::text;
        using step_options_detail::integer;
        using step_options_detail::number;
        using step_options_detail::spelling;
        const auto in_topology = [](r& x) -> topology_request& { return x.topology; };
        std::vector<option_spec> topology = topology_options();
        if (for_scale) {
            for (auto& x : topology)
                if (x.name == "nodes") x.help = "comma-separated node counts, e.g. 1,2,4,8";
        }
        std::vector<bound_option<r>> o =
            topology_bound<r>(in_topology, topology) +
            std::vector<bound_option<r>>{
                for_scale ? gpus_option<r>(in_topology, "comma-separated GPU counts instead of --nodes (each a multiple of the GPUs per node)")
                          : gpus_option<r>(in_topology),
                model_option<r>(&r::model),
                given<r>("tp", &r::tp, integer(1, plan_limits::degree), "tensor-parallel degree"),
                given<r>("pp", &r::pp, integer(1, plan_limits::degree), "pipeline stages"),
                given<r>("dp", &r::dp, integer(1, plan_limits::dp), "data-parallel degree (default: GPUs / (tp x pp x cp))"),
                given<r>("cp", &r::cp, integer(1, plan_limits::degree), "context-parallel degree"),
                given<r>("ep", &r::ep, integer(1, plan_limits::degree), "expert-parallel degree (divides dp x cp, or tp x cp x dp / etp)"),
                given<r>("etp", &r::etp, integer(1, plan_limits::degree),
                         "expert tensor-parallel degree: each expert's GEMMs split over etp ranks (default: 1 for an MoE model under "
                         "megatron-core, as NVIDIA's recipes run it; tp otherwise, Megatron-Core's library default)"),
                given<r>("micro-batch", &r::micro_batch, integer(1, plan_limits::micro_batch), "sequences per micro-batch"),
                given<r>("global-batch", &r::global_batch, integer(1, plan_limits::global_batch), "sequences per optimizer step"),
                given<r>("seq", &r::seq, integer(1, plan_limits::seq), "sequence length in tokens"),
                given<r>("zero", &r::zero, integer(0, plan_limits::zero), "ZeRO stage 0|1|2|3 (3 = FSDP)"),
                given<r>("recompute", &r::recompute_mode, &spelling<recompute>, "none|selective|full"),
                given<r>("schedule", &r::schedule, &spelling<pipeline_schedule>, "gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe"),
                given<r>("virtual-stages", &r::virtual_stages, integer(1, plan_limits::virtual_stages),
                         "model chunks per device for the interleaved schedule (> 1 without --schedule: interleaved)"),
                flag<r>("sequence-parallel", &r::sequence_parallel, "sequence parallelism with TP (the megatron-core and fsdp default with TP >= 2)"),
                flag<r>("no-sequence-parallel", &r::no_sequence_parallel, "no sequence parallelism"),
                given<r>("compute-efficiency", &r::compute_efficiency, number(1e-6, 1.0),
                         "achievable fraction of peak, overriding the default"),
                given<r>("dtype", &r::precision, &spelling<dtype>,
                         "fp32|tf32|bf16|fp16|fp8|mxfp8|nvfp4|fp4 (default bf16; the accelerator must have a peak for it)"),
                given<r>("efficiency", &r::efficiency, &spelling<efficiency_mode>, "collective model: ideal|default"),
                given<r>("framework", &r::stack, &spelling<framework>,
                         "megatron-core|megatron-lm|megatron-deepspeed|deepspeed|fsdp (default megatron-core)"),
                given<r>("bucket", &r::bucket, [](const given_value& v, const std::string& f) { return reads::size(v, f); },
                         "DP gradient bucket size (default: the framework's)"),
                given<r>("gradient-bytes", &r::gradient_bytes, integer(1, 4),
                         "bytes per reduced gradient element: 2 or 4 (default: the framework's)"),
                given<r>("optimizer-state-bytes", &r::optimizer_state_bytes, integer(0, plan_limits::optimizer_state_bytes),
                         "bytes per parameter of optimizer state: 12 fp32 main parameters and Adam moments (default), "
                         "10 with 16-bit parameter remainders (Apex DistributedFusedAdam), 4 bf16 moments without main parameters"),
                given<r>("expert-load", &r::expert_load, number(1.0, 1e6),
                         "MoE routing imbalance: busiest EP rank's tokens / the mean (default 1)"),
                given<r>("capacity-factor", &r::capacity_factor, number(1e-3, 1e6),
                         "MoE expert capacity factor: tokens beyond it are dropped (default: dropless)"),
                flag<r>("pad-to-capacity", &r::pad_to_capacity, "pad every expert's input to the capacity (needs --capacity-factor)"),
                given<r>("moe-token-dispatcher", &r::dispatcher, &spelling<moe_token_dispatcher>,
                         "alltoall|deepep|hybridep: Megatron's --moe-token-dispatcher-type alltoall, or flex with that "
                         "--moe-flex-dispatcher-backend (default: the framework's, hybridep for megatron-core)"),
                flag<r>("dp-overlap", &r::dp_overlap, "overlap the DP gradient reduction with backward"),
                flag<r>("no-dp-overlap", &r::no_dp_overlap, "do not overlap the DP reduction with backward"),
                flag<r>("tp-overlap", &r::tp_overlap, "overlap TP collectives with matmuls (needs --sequence-parallel)"),
                flag<r>("no-tp-overlap", &r::no_tp_overlap, "expose every TP collective"),
                flag<r>("pp-overlap", &r::pp_overlap, "overlap steady-state pipeline send/recv with compute"),
                flag<r>("no-pp-overlap", &r::no_pp_overlap, "expose every pipeline send/recv"),
                flag<r>("zero-overlap", &r::zero_overlap, "overlap ZeRO/FSDP parameter all-gathers with compute (prefetch)"),
                flag<r>("no-zero-overlap", &r::no_zero_overlap, "expose every ZeRO/FSDP parameter all-gather"),
                flag<r>("cp-overlap", &r::cp_overlap, "overlap the CP K/V exchange with attention"),
                flag<r>("no-cp-overlap", &r::no_cp_overlap, "expose the CP K/V exchange"),
                given<r>("attention", &r::attention, &spelling<attention_kernel>, "flash|unfused (default: the framework's)"),
                given<r>("first-stage-layers", &r::first_stage_layers, integer(0, plan_limits::stage_layers),
                         "layers of the first pipeline stage (default: even split)"),
                given<r>("last-stage-layers", &r::last_stage_layers, integer(0, plan_limits::stage_layers),
                         "layers of the last pipeline stage (default: even split)"),
                flag<r>("account-for-embedding-in-pipeline-split", &r::account_for_embedding_in_pipeline_split,
                        "count the embedding as a pipeline layer of the first stage (Megatron-Core's flag)"),
                flag<r>("account-for-loss-in-pipeline-split", &r::account_for_loss_in_pipeline_split,
                        "count the output layer and loss as a pipeline layer of the last stage (Megatron-Core's flag)"),
                given<r>("pipeline-model-parallel-layout", &r::pipeline_layout,
                         [](const given_value& v, const std::string&) { return v.spelled(); },
                         "Megatron-Core's layout of the virtual stages, e.g. 'Et*4|(t*4|)*14tmL' (E embedding, t layer, "
                         "m MTP, L loss, '|' between stages): sets --virtual-stages and the first and last stages' layers"),
                given<r>("cpu-offloading-num-layers", &r::cpu_offloading_num_layers, integer(0, plan_limits::stage_layers),
                         "layers per stage whose activations go to host memory (Megatron-Core's flag; default 0)"),
                given<r>("recompute-modules", &r::recompute_modules,
                         [](const given_value& v, const std::string& f) { return recompute_modules_from_names(v.spelled(), f); },
                         "modules recomputed in the backward, comma-separated (Megatron-Core's flag): core_attn, layernorm, "
                         "mla_up_proj, mlp, moe, moe_act, shared_experts"),
                flag<r>("overlap-moe-expert-parallel-comm", &r::overlap_moe_expert_parallel_comm,
                        "run one micro-batch's forward with another's backward, each one's EP all-to-alls under the "
                        "other's compute (Megatron-Core's flag; ep > 1, pp 1 or interleaved, no full recompute)"),
                given<r>("fp8-recipe", &r::fp8_recipe, &spelling<fp8_recipe>,
                         "with --dtype fp8: delayed (scales from an amax history, Megatron-Core's library default), tensorwise "
                         "(current scaling: each tensor's amax read first; the megatron-core default, as NVIDIA's recipes "
                         "run FP8) or blockwise (1 x 128 / 128 x 128 blocks, split accumulator in every GEMM; "
                         "Megatron-Core's flag)"),
                given<r>("recompute-method", &r::recompute_method, &spelling<recompute_method>,
                         "with --recompute full: uniform (groups of --recompute-num-layers, every layer recomputed) or block "
                         "(the first --recompute-num-layers of each model chunk recomputed; Megatron-Core's flag)"),
                given<r>("recompute-num-layers", &r::recompute_num_layers, integer(0, plan_limits::stage_layers),
                         "with --recompute full: layers per recompute group (uniform) or recomputed per model chunk "
                         "(block); Megatron-Core's flag (default 0: every layer its own checkpoint)"),
                flag<r>("fp8-param-gather", &r::fp8_param_gather,
                        "keep the layers' weights in FP8/MXFP8 (Megatron-Core's flag; the megatron-core profile's "
                        "default, as NVIDIA's recipes set it): 1 byte per per-tensor FP8 weight on Blackwell"),
                flag<r>("no-fp8-param-gather", &r::no_fp8_param_gather, "keep the layers' weights in 16 bits"),
                flag<r>("gradient-accumulation-fusion", &r::gradient_accumulation_fusion,
                        "the weight-gradient GEMMs accumulate into the gradient buffer (Megatron's fusion; default the "
                        "stack's: off under megatron-core at ZeRO 3, as NVIDIA's recipes run Megatron-FSDP, on otherwise)"),
                flag<r>("no-gradient-accumulation-fusion", &r::no_gradient_accumulation_fusion,
                        "each micro-batch's gradients copied into the buffer (Megatron-LM's flag): 2 + gradient bytes per "
                        "local parameter under Megatron-FSDP, 2 + 2 x gradient bytes otherwise"),
                flag<r>("first-last-layers-bf16", &r::first_last_layers_bf16,
                        "keep the first and last layers in BF16 under an FP8/FP4 dtype (Megatron-Core's flag; not with "
                        "delayed FP8 scaling)"),
                given<r>("num-layers-at-start-in-bf16", &r::bf16_layers_at_start, integer(0, plan_limits::stage_layers),
                         "with --first-last-layers-bf16: BF16 layers at the start (Megatron-Core's flag; default 1)"),
                given<r>("num-layers-at-end-in-bf16", &r::bf16_layers_at_end, integer(0, plan_limits::stage_layers),
                         "with --first-last-layers-bf16: BF16 layers at the end (Megatron-Core's flag; default 1)"),
                flag<r>("no-scatter-gather", &r::no_scatter_gather, "pipeline sends the whole activation from every TP rank"),
                text<r>("svg", &r::svg, "write a plot as an SVG file"),
            };
        if (for_scale) o.push_back(flag<r>("strong", &r::strong, "strong scaling: keep the global batch fixed (default: weak)"));
        return o;
    };
    static const std::vector<bound_option<step_request>> step = make(false), scale_ = make(true);
    return scale ? scale_ : step;
}

/// True when no model, cluster, topology flag or --gpus is given: the embedded demo runs.
[[nodiscard]] inline bool is_demo(const step_request& r) {
    return !r.model && !r.topology.cluster && !r.topology.gpus && !r.topology.overrides();
}

/// The cluster of a step/scale command (demo: 16 DGX A100 nodes). `nodes_is_list` (scale) skips
/// --nodes and --gpus.
[[nodiscard]] inline commscale::cluster step_cluster(const step_request& r, bool nodes_is_list = false) {
    if (is_demo(r)) {
        commscale::cluster c = commscale::cluster_by_name(demo_cluster, "--cluster");
        c.nodes = demo_nodes;
        return c;
    }
    if (nodes_is_list && (r.topology.nodes || r.topology.gpus)) {
        topology_request t = r.topology;
        t.nodes.reset();
        return resolve_cluster(t);
    }
    return resolve_cluster_gpus(r.topology);
}

/// The model of a step/scale command (demo: GPT-3 175B).
[[nodiscard]] inline commscale::transformer step_model(const step_request& r) {
    if (is_demo(r)) return commscale::model_by_name(demo_model, "--model");
    return resolve_model(r.model);
}

/// The plan the options describe on `gpus` GPUs (`demo`: no model, cluster or topology flag given,
/// is_demo). Demo defaults: tp 8, pp 8, micro-batch 1, global batch 512 (1M tokens), full
/// recompute, fp32 gradients, no sequence parallelism. Otherwise tp = pp = cp = ep = 1, dp = GPUs / (tp pp cp), micro-batch 1, global batch
/// dp x micro-batch (x 4 pp with pipelining, so the bubble is small), seq = min(2048, the model's
/// context). Validation is predict_step's (errors name plan fields).
[[nodiscard]] inline commscale::plan step_plan(const step_request& r, bool demo, const commscale::transformer& m, long long gpus) {
    using namespace commscale;
    plan p;
    apply_framework(p, r.stack ? **r.stack : framework::megatron_core);
    // the demo is Narayanan et al. 2021's Megatron-LM run: fp32 gradients (bf16 and fp16 training
    // accumulate and all-reduce them in fp32 there), not the performance recipes' bf16
    if (demo) set_gradient_bytes(p, 4);
    const auto value = [](const std::optional<given<int>>& v, int fallback) { return v ? **v : fallback; };
    p.tp = value(r.tp, demo ? 8 : 1);
    p.pp = value(r.pp, demo ? 8 : 1);
    p.cp = value(r.cp, 1);
    p.ep = value(r.ep, 1);
    p.etp = r.etp ? **r.etp : stack_expert_tp(p, m);  // unsaid: the stack's (megatron-core: 1 for MoE)
    const long long mp = static_cast<long long>(p.tp) * p.pp * p.cp;
    if (!r.dp && gpus % mp != 0)
        throw input_error("--tp x --pp x --cp", std::to_string(mp), "a divisor of the cluster's " + std::to_string(gpus) + " GPUs");
    p.dp = r.dp ? **r.dp : static_cast<int>(gpus / mp);
    p.micro_batch = value(r.micro_batch, 1);
    const long long gb_default = demo ? 512 : static_cast<long long>(p.dp) * p.micro_batch * (p.pp > 1 ? 4 * p.pp : 1);
    p.global_batch = r.global_batch ? **r.global_batch : static_cast<int>(gb_default);
    p.seq = value(r.seq, m.max_seq > 0 ? std::min(2048, m.max_seq) : 2048);
    p.zero = value(r.zero, p.zero);
    p.recompute_mode = r.recompute_mode ? **r.recompute_mode : demo ? recompute::full : recompute::none;
    // --virtual-stages V > 1 alone is Megatron's interleaved schedule (as --virtual-pipeline-model-parallel-size is)
    p.schedule = r.schedule                                  ? **r.schedule
                 : r.virtual_stages && **r.virtual_stages > 1 ? pipeline_schedule::interleaved
                                                              : pipeline_schedule::one_f_one_b;
    p.virtual_stages = value(r.virtual_stages, p.schedule == pipeline_schedule::interleaved ? 2 : 1);
    // unsaid: the stack's (megatron-core: on with TP >= 2; --[no-]sequence-parallel below); the demo
    // is Narayanan et al. 2021's plan, which predates sequence parallelism
    p.sequence_parallel = !demo && stack_sequence_parallel(p);
    if (r.precision) p.precision = **r.precision;
    if (r.compute_efficiency) p.compute_efficiency = **r.compute_efficiency;
    // the profile's bucket keeps its element count at the new precision; an explicit --bucket (bytes) wins
    if (r.gradient_bytes) set_gradient_bytes(p, gradient_bytes_flag(**r.gradient_bytes));
    if (r.bucket) p.bucket = **r.bucket;
    if (r.expert_load) p.expert_load = **r.expert_load;
    if (r.capacity_factor) p.capacity_factor = **r.capacity_factor;
    p.pad_to_capacity = r.pad_to_capacity;
    if (r.dispatcher) p.dispatcher = **r.dispatcher;
    if (p.pad_to_capacity && !r.capacity_factor)
        throw input_error("--pad-to-capacity", "given without --capacity-factor", "a --capacity-factor to pad to");
    if (r.optimizer_state_bytes) p.optimizer_state_bytes = **r.optimizer_state_bytes;
    const auto toggle = [](bool on, bool off, const char* on_name, const char* off_name, bool& field) {
        if (on && off) throw input_error(std::string("--") + on_name, "given with --" + std::string(off_name), "one of the two");
        if (on) field = true;
        if (off) field = false;
    };
    toggle(r.dp_overlap, r.no_dp_overlap, "dp-overlap", "no-dp-overlap", p.overlap.dp);
    toggle(r.tp_overlap, r.no_tp_overlap, "tp-overlap", "no-tp-overlap", p.overlap.tp);
    toggle(r.pp_overlap, r.no_pp_overlap, "pp-overlap", "no-pp-overlap", p.overlap.pp);
    toggle(r.zero_overlap, r.no_zero_overlap, "zero-overlap", "no-zero-overlap", p.overlap.zero);
    toggle(r.cp_overlap, r.no_cp_overlap, "cp-overlap", "no-cp-overlap", p.overlap.cp);
    toggle(r.fp8_param_gather, r.no_fp8_param_gather, "fp8-param-gather", "no-fp8-param-gather", p.fp8_param_gather);
    set_gradient_accumulation_fusion(p, r.gradient_accumulation_fusion, r.no_gradient_accumulation_fusion);
    toggle(r.sequence_parallel, r.no_sequence_parallel, "sequence-parallel", "no-sequence-parallel", p.sequence_parallel);
    if (r.attention) p.attention = **r.attention;
    p.first_stage_layers = value(r.first_stage_layers, 0);
    p.last_stage_layers = value(r.last_stage_layers, 0);
    p.account_for_embedding_in_pipeline_split = r.account_for_embedding_in_pipeline_split;
    p.account_for_loss_in_pipeline_split = r.account_for_loss_in_pipeline_split;
    p.cpu_offloading_num_layers = value(r.cpu_offloading_num_layers, 0);
    if (r.recompute_modules) p.recompute_modules = **r.recompute_modules;
    if (r.recompute_method) p.full_recompute_method = **r.recompute_method;
    p.fp8_scaling = r.fp8_recipe ? **r.fp8_recipe : stack_fp8_recipe(p);
    p.moe_a2a_overlap = r.overlap_moe_expert_parallel_comm;
    p.recompute_num_layers = value(r.recompute_num_layers, 0);
    if ((r.bf16_layers_at_start || r.bf16_layers_at_end) && !r.first_last_layers_bf16)
        throw input_error(r.bf16_layers_at_start ? "--num-layers-at-start-in-bf16" : "--num-layers-at-end-in-bf16",
                          std::to_string(r.bf16_layers_at_start ? **r.bf16_layers_at_start : **r.bf16_layers_at_end),
                          "--first-last-layers-bf16 with it (Megatron-Core reads the counts only with that flag)");
    p.first_last_layers_bf16 = r.first_last_layers_bf16;
    p.bf16_layers_at_start = value(r.bf16_layers_at_start, 1);
    p.bf16_layers_at_end = value(r.bf16_layers_at_end, 1);
    p.pp_scatter_gather = !r.no_scatter_gather;
    if (r.pipeline_layout) {
        const std::string_view flag = "--pipeline-model-parallel-layout";
        const pipeline_layout_split split = parse_pipeline_layout(**r.pipeline_layout, p.pp, m, flag);
        // the layout's V where --virtual-stages is unsaid (--schedule interleaved alone defaults to 2)
        if (!r.virtual_stages && p.schedule == pipeline_schedule::interleaved) p.virtual_stages = split.virtual_stages;
        apply_pipeline_layout(p, split, **r.pipeline_layout, flag);
    }
    return p;
}

/// @brief --dtype must be a precision the cluster's accelerator has a peak for: an input_error naming
/// --dtype, the value and the accelerator's supported data types otherwise.
inline void check_precision(const commscale::cluster& c, const commscale::plan& p) {
    using namespace commscale;
    if (auto acc = find_accelerator(c.node.accelerator)) (void)peak_for(*acc, p.precision, "--dtype");
}

/// Predictor options from --efficiency.
[[nodiscard]] inline commscale::step_options step_opts(const step_request& r) {
    commscale::step_options o;
    if (r.efficiency) o.mode = **r.efficiency;
    return o;
}

/// One `step` prediction with everything its --json document holds: the resolved cluster, model
/// and plan, the breakdown, and Megatron-Core's own FLOP count.
struct step_prediction {
    commscale::cluster cluster{};
    commscale::transformer model{};
    commscale::plan plan{};
    commscale::step_breakdown result{};
    /// Megatron-Core's count (workload/flops.hpp): causal attention, vocabulary padded to 128 x TP
    double megatron_model_flops_per_token = 0;
    double megatron_tflops_per_gpu = 0;  ///< tokens/s x the above / GPUs / 1e12
};

/// The step on cluster `c` and model `m` (what step_cluster and step_model give for the options)
/// of the plan `r` describes (`demo`: is_demo): validated, predicted, with Megatron-Core's FLOP
/// count. The Python module's batches resolve `c` and `m` once where no row changes them.
[[nodiscard]] inline step_prediction predict_step_on(const step_request& r, bool demo, const commscale::cluster& c,
                                                     const commscale::transformer& m) {
    using namespace commscale;
    step_prediction x{c, m};
    x.plan = step_plan(r, demo, m, static_cast<long long>(c.nodes) * c.node.gpus);
    check_precision(c, x.plan);
    x.result = predict_step(m, c, x.plan, step_opts(r));
    // computed here rather than in predict_step: Megatron's convention of the current release
    x.megatron_model_flops_per_token = in_flops(megatron_model_flops_per_token(m, x.plan.seq, {.tensor_parallel = x.plan.tp}));
    x.megatron_tflops_per_gpu =
        x.result.tokens_per_s * x.megatron_model_flops_per_token / static_cast<double>(x.plan.gpus()) / 1e12;
    return x;
}

/// The `step` command's prediction from its options (docs/CLI.md "Training step").
[[nodiscard]] inline step_prediction predict_step_of(const step_request& r) {
    const commscale::cluster c = step_cluster(r);
    const commscale::transformer m = step_model(r);
    return predict_step_on(r, is_demo(r), c, m);
}

/// The verdict of a step breakdown in words (`verdict` of step --json).
[[nodiscard]] inline std::string step_verdict(const commscale::step_breakdown& r) {
    using namespace commscale;
    switch (r.bottleneck) {
        case step_bottleneck::memory:
            return "does not fit: " + num(in_bytes(r.memory.total()) / gibi, 1) + " GiB per GPU needed, " +
                   num(in_bytes(r.memory_capacity) / gibi, 1) +
                   " GiB available (shard more: ZeRO, more TP/PP, recompute)";
        case step_bottleneck::compute: return "compute-bound (communication and bubble are smaller than compute)";
        case step_bottleneck::tp_comm: return "bound by tensor-parallel communication (keep TP inside a node, or lower TP)";
        case step_bottleneck::pp_comm: return "bound by pipeline send/recv";
        case step_bottleneck::dp_comm:
            return "bound by data-parallel gradient communication (more inter-node bandwidth, larger batch, or ZeRO/bucketing)";
        case step_bottleneck::bubble: return "bound by the pipeline bubble (more micro-batches, fewer stages, or interleaving)";
        case step_bottleneck::cp_comm: return "bound by context-parallel K/V exchange";
        case step_bottleneck::ep_comm: return "bound by expert-parallel all-to-all";
        case step_bottleneck::offload:
            return "bound by activation offloading to host memory (offload fewer layers, or a faster host link)";
    }
    return "";
}

/// The `step --json` document (docs/CLI.md "Training step"): the library's breakdown JSON
/// (io::step_breakdown_to_json) with the model, cluster, plan, verdict and Megatron-Core's count.
[[nodiscard]] inline nlohmann::json step_document(const step_prediction& x) {
    nlohmann::json j = commscale::io::step_breakdown_to_json(x.result);
    auto& o = j.get_ref<nlohmann::json::object_t&>();
    o.emplace("model", std::string(x.model.name));
    o.emplace("cluster", std::string(x.cluster.name));
    o.emplace("nodes", x.cluster.nodes);
    o.emplace("gpus", x.cluster.nodes * x.cluster.node.gpus);
    o.emplace("accelerator", std::string(x.cluster.node.accelerator));
    o.emplace("plan", commscale::io::plan_to_json(x.plan, x.model));
    o.emplace("verdict", step_verdict(x.result));
    o.emplace("megatron_model_flops_per_token", x.megatron_model_flops_per_token);
    o.emplace("megatron_tflops_per_gpu", x.megatron_tflops_per_gpu);
    return j;
}

namespace step_columns_detail {
using namespace commscale;
using x_t = const step_prediction&;
inline constexpr column_type real = column_type::real, integer = column_type::integer, boolean = column_type::boolean;
/// A rate written as null where unbounded (step_breakdown_to_json): NaN here.
[[nodiscard]] inline double finite_or_nan(double v) { return std::isfinite(v) ? v : std::numeric_limits<double>::quiet_NaN(); }
}  // namespace step_columns_detail

/// The numbers of `step --json` (step_document), every key but the plan's optional ones
/// (account_for_*_in_pipeline_split, cpu_offloading_num_layers, fp8_recipe, recompute_method, recompute_num_layers,
/// overlap_moe_expert_parallel_comm, gradient_accumulation_fusion) and its
/// stage_layers array.
inline constexpr auto step_number_columns = [] {
    using namespace step_columns_detail;
    using c = number_column<step_prediction>;
    return std::array{
        c{"step_s", real, [](x_t x) { return in_seconds(x.result.step); }},
        c{"compute_s", real, [](x_t x) { return in_seconds(x.result.compute); }},
        c{"bubble_s", real, [](x_t x) { return in_seconds(x.result.bubble); }},
        c{"tp_comm_s", real, [](x_t x) { return in_seconds(x.result.tp.total); }},
        c{"tp_comm_exposed_s", real, [](x_t x) { return in_seconds(x.result.tp.exposed); }},
        c{"pp_comm_s", real, [](x_t x) { return in_seconds(x.result.pp.total); }},
        c{"pp_comm_exposed_s", real, [](x_t x) { return in_seconds(x.result.pp.exposed); }},
        c{"dp_comm_s", real, [](x_t x) { return in_seconds(x.result.dp.total); }},
        c{"dp_comm_exposed_s", real, [](x_t x) { return in_seconds(x.result.dp.exposed); }},
        c{"cp_comm_s", real, [](x_t x) { return in_seconds(x.result.cp.total); }},
        c{"cp_comm_exposed_s", real, [](x_t x) { return in_seconds(x.result.cp.exposed); }},
        c{"ep_comm_s", real, [](x_t x) { return in_seconds(x.result.ep.total); }},
        c{"ep_comm_exposed_s", real, [](x_t x) { return in_seconds(x.result.ep.exposed); }},
        c{"exposed_comm_s", real, [](x_t x) { return in_seconds(x.result.exposed_comm); }},
        c{"offload_s", real, [](x_t x) { return in_seconds(x.result.offload.total); }},
        c{"offload_exposed_s", real, [](x_t x) { return in_seconds(x.result.offload.exposed); }},
        c{"mfu", real, [](x_t x) { return x.result.mfu; }},
        c{"hfu", real, [](x_t x) { return x.result.hfu; }},
        c{"tflops_per_gpu", real, [](x_t x) { return in_tflops(x.result.model_flops_per_gpu); }},
        c{"hardware_tflops_per_gpu", real, [](x_t x) { return in_tflops(x.result.hardware_flops_per_gpu); }},
        c{"tokens_per_s", real, [](x_t x) { return x.result.tokens_per_s; }},
        c{"memory_per_gpu_GiB", real, [](x_t x) { return in_bytes(x.result.memory.total()) / gibi; }},
        c{"memory_capacity_GiB", real, [](x_t x) { return in_bytes(x.result.memory_capacity) / gibi; }},
        c{"memory_breakdown_GiB.weights", real, [](x_t x) { return in_bytes(x.result.memory.state.weights) / gibi; }},
        c{"memory_breakdown_GiB.gradients", real, [](x_t x) { return in_bytes(x.result.memory.state.gradients) / gibi; }},
        c{"memory_breakdown_GiB.optimizer", real, [](x_t x) { return in_bytes(x.result.memory.state.optimizer) / gibi; }},
        c{"memory_breakdown_GiB.activations", real, [](x_t x) { return in_bytes(x.result.memory.activations) / gibi; }},
        c{"fits_in_memory", boolean, [](x_t x) { return x.result.fits_in_memory ? 1.0 : 0.0; }},
        c{"bubble_fraction", real, [](x_t x) { return x.result.bubble_fraction; }},
        c{"micro_batches", integer, [](x_t x) { return static_cast<double>(x.result.micro_batches); }},
        c{"compute_efficiency", real, [](x_t x) { return x.result.efficiency; }},
        c{"dp_window_s", real, [](x_t x) { return in_seconds(x.result.dp_window); }},
        c{"dp_inter_node_bytes_per_node", real, [](x_t x) { return in_bytes(x.result.dp_inter_node_bytes); }},
        c{"optimizer_s", real, [](x_t x) { return in_seconds(x.result.optimizer); }},
        c{"overlap_slowdown_s", real, [](x_t x) { return in_seconds(x.result.overlap_slowdown); }},
        c{"stage_microbatch_s", real, [](x_t x) { return in_seconds(x.result.stage_microbatch); }},
        c{"layer_s.gemm_fwd", real, [](x_t x) { return in_seconds(x.result.layer.gemm_fwd); }},
        c{"layer_s.attention_fwd", real, [](x_t x) { return in_seconds(x.result.layer.attention_fwd); }},
        c{"layer_s.elementwise_fwd", real, [](x_t x) { return in_seconds(x.result.layer.elementwise_fwd); }},
        c{"layer_s.gemm_bwd", real, [](x_t x) { return in_seconds(x.result.layer.gemm_bwd); }},
        c{"layer_s.attention_bwd", real, [](x_t x) { return in_seconds(x.result.layer.attention_bwd); }},
        c{"layer_s.elementwise_bwd", real, [](x_t x) { return in_seconds(x.result.layer.elementwise_bwd); }},
        c{"layer_s.scan_fwd", real, [](x_t x) { return in_seconds(x.result.layer.scan_fwd); }},
        c{"layer_s.scan_bwd", real, [](x_t x) { return in_seconds(x.result.layer.scan_bwd); }},
        c{"required_inter_node_Gbps", real, [](x_t x) { return finite_or_nan(in_Gbps(x.result.required_inter_node)); }},
        c{"required_inter_node_step_Gbps", real, [](x_t x) { return finite_or_nan(in_Gbps(x.result.required_inter_node_step)); }},
        c{"megatron_model_flops_per_token", real, [](x_t x) { return x.megatron_model_flops_per_token; }},
        c{"megatron_tflops_per_gpu", real, [](x_t x) { return x.megatron_tflops_per_gpu; }},
        c{"nodes", integer, [](x_t x) { return static_cast<double>(x.cluster.nodes); }},
        c{"gpus", integer, [](x_t x) { return static_cast<double>(x.cluster.nodes) * x.cluster.node.gpus; }},
        c{"plan.tp", integer, [](x_t x) { return static_cast<double>(x.plan.tp); }},
        c{"plan.pp", integer, [](x_t x) { return static_cast<double>(x.plan.pp); }},
        c{"plan.dp", integer, [](x_t x) { return static_cast<double>(x.plan.dp); }},
        c{"plan.cp", integer, [](x_t x) { return static_cast<double>(x.plan.cp); }},
        c{"plan.ep", integer, [](x_t x) { return static_cast<double>(x.plan.ep); }},
        c{"plan.etp", integer, [](x_t x) { return static_cast<double>(x.plan.expert_tp()); }},
        c{"plan.micro_batch", integer, [](x_t x) { return static_cast<double>(x.plan.micro_batch); }},
        c{"plan.global_batch", integer, [](x_t x) { return static_cast<double>(x.plan.global_batch); }},
        c{"plan.seq", integer, [](x_t x) { return static_cast<double>(x.plan.seq); }},
        c{"plan.zero", integer, [](x_t x) { return static_cast<double>(x.plan.zero); }},
        c{"plan.virtual_stages", integer, [](x_t x) { return static_cast<double>(x.plan.chunks()); }},
        c{"plan.sequence_parallel", boolean, [](x_t x) { return x.plan.sequence_parallel ? 1.0 : 0.0; }},
        c{"plan.gradient_bytes", integer, [](x_t x) { return static_cast<double>(x.plan.gradient_bytes); }},
        c{"plan.optimizer_state_bytes", integer, [](x_t x) { return static_cast<double>(x.plan.optimizer_state_bytes); }},
        c{"plan.bucket_bytes", real, [](x_t x) { return in_bytes(x.plan.bucket) >= whole_gradient_bucket ? 0.0 : in_bytes(x.plan.bucket); }},
        c{"plan.bucket_per_dp_bytes", real, [](x_t x) { return in_bytes(x.plan.bucket_per_dp); }},
        c{"plan.overlap.dp", boolean, [](x_t x) { return x.plan.overlap.dp ? 1.0 : 0.0; }},
        c{"plan.overlap.tp", boolean, [](x_t x) { return x.plan.overlap.tp ? 1.0 : 0.0; }},
        c{"plan.overlap.pp", boolean, [](x_t x) { return x.plan.overlap.pp ? 1.0 : 0.0; }},
        c{"plan.overlap.zero", boolean, [](x_t x) { return x.plan.overlap.zero ? 1.0 : 0.0; }},
        c{"plan.overlap.cp", boolean, [](x_t x) { return x.plan.overlap.cp ? 1.0 : 0.0; }},
        c{"plan.reduce_every_micro_batch", boolean, [](x_t x) { return x.plan.reduce_every_micro_batch ? 1.0 : 0.0; }},
        c{"plan.expert_load", real, [](x_t x) { return x.plan.expert_load; }},
        c{"plan.capacity_factor", real, [](x_t x) { return x.plan.capacity_factor; }},
        c{"plan.pad_to_capacity", boolean, [](x_t x) { return x.plan.pad_to_capacity ? 1.0 : 0.0; }},
    };
}();

/// The texts of `step --json` with few distinct values, as columns (the verdict sentence and the
/// plan's stage_layers are left out).
inline constexpr auto step_label_columns = [] {
    using namespace step_columns_detail;
    using c = label_column<step_prediction>;
    return std::array{
        c{"model", [](x_t x) { return std::string_view(x.model.name); }},
        c{"cluster", [](x_t x) { return std::string_view(x.cluster.name); }},
        c{"accelerator", [](x_t x) { return std::string_view(x.cluster.node.accelerator); }},
        c{"bottleneck", [](x_t x) { return std::string_view(contract_bottleneck(x.result.bottleneck)); }},
        c{"bottleneck_detail", [](x_t x) { return std::string_view(to_string(x.result.bottleneck)); }},
        c{"plan.recompute", [](x_t x) { return std::string_view(to_string(x.plan.recompute_mode)); }},
        c{"plan.schedule", [](x_t x) { return std::string_view(to_string(x.plan.schedule)); }},
        c{"plan.dtype", [](x_t x) { return std::string_view(to_string(x.plan.precision)); }},
        c{"plan.framework", [](x_t x) { return std::string_view(to_string(x.plan.stack)); }},
        c{"plan.attention", [](x_t x) { return std::string_view(to_string(x.plan.attention)); }},
        c{"plan.moe_token_dispatcher", [](x_t x) { return to_string(x.plan.dispatcher); }},
    };
}();

/// Seconds as readable text (s or ms).
[[nodiscard]] inline std::string secs(commscale::duration t) {
    const double s = commscale::in_seconds(t);
    if (s >= 1.0) return num(s, 3) + " s";
    return num(s * 1e3, 3) + " ms";
}

}  // namespace cli
