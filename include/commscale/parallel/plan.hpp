#pragma once
/// @file parallel/plan.hpp
/// @brief A parallelization plan for training one transformer: tensor (TP), pipeline (PP), data
/// (DP), context (CP) and expert (EP) parallel degrees, micro-batching, ZeRO/FSDP stage,
/// activation recompute, pipeline schedule, sequence parallelism, precision and the overlap
/// assumptions of the step model, with validation that names the offending field.
///
/// Rank layout (Megatron-LM convention, Narayanan et al. 2021, "Efficient Large-Scale Language
/// Model Training on GPU Clusters Using Megatron-LM", Sec. 3): TP innermost (consecutive ranks,
/// inside a node, on NVLink), then CP, then the part of DP that the expert groups need, then PP,
/// then the rest of DP outermost. `group_placement(...)` derives each dimension's group (ranks,
/// ranks per node, stride) from that layout so its collectives are priced on the links they
/// really use.
///
/// Expert layers (Megatron-Core "MoE parallel folding", megatron/core/parallel_state.py,
/// `initialize_model_parallel`): the same ranks of one pipeline stage, tp x cp x dp of them, are
/// decomposed again for the experts as expert-TP (etp, default tp: `--expert-tensor-parallel-size`
/// unset) x EP x expert-DP, ETP innermost, then EP, then expert-DP; so etp x ep must divide
/// tp x cp x dp, i.e. with etp = tp, EP divides dp x cp and is carved out of CP and DP together.
/// The expert parameters' gradients are reduced over the expert-DP group, tp x cp x dp / (etp x ep)
/// ranks, the dense ones over dp x cp (Megatron-Core's distributed optimizer keeps one buffer of
/// each).

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../collective/types.hpp"
#include "../hardware/accelerator.hpp"
#include "../hardware/topology.hpp"
#include "../units.hpp"
#include "../workload/transformer.hpp"
#include "../workload/flops.hpp"
#include "framework.hpp"

namespace commscale {

/// @brief Pipeline schedules.
/// gpipe: all forwards then all backwards (Huang et al. 2019); one_f_one_b: PipeDream-Flush
/// (Narayanan et al. 2021 Sec. 2.2.1), same bubble, fewer in-flight micro-batches; interleaved:
/// 1F1B with V model chunks per device, bubble divided by V (Narayanan et al. 2021 Sec. 2.2.2).
/// zb_h1: zero-bubble ZB-H1 (Qi et al. 2024, "Zero Bubble (Almost) Pipeline Parallelism", ICLR,
/// Sec. 2.1): the backward split into B (input gradient) and W (weight gradient), W deferred into
/// the drain; bubble (p - 1)(T_F + T_B - T_W), activation memory of 1F1B. zb_v: ZB-V (same paper,
/// Sec. 6; sail-sg/zero-bubble-pipeline-parallelism README): two chunks per device in a V shape,
/// bubble 0 when T_F = T_B = T_W, activation memory of 1F1B, twice 1F1B's pipeline traffic.
/// dualpipe: DeepSeek-V3's bidirectional schedule (DeepSeek-AI 2024, "DeepSeek-V3 Technical
/// Report", Sec. 3.2.1 and Table 2; deepseek-ai/DualPipe): micro-batches fed from both ends, each
/// device holding two stages, forward and backward chunks paired so that one's communication hides
/// under the other's compute; bubble (p/2 - 1)(F&B + B - 3W), two copies of the parameters,
/// p + 1 micro-batches of activations; needs an even p and an even number of micro-batches >= 2p.
enum class pipeline_schedule { gpipe, one_f_one_b, interleaved, zb_h1, zb_v, dualpipe };

/// @brief CLI/JSON spellings of the schedules: `to_string`, `parse<pipeline_schedule>`.
inline constexpr std::array<name_entry<pipeline_schedule>, 6> pipeline_schedule_spellings{{
    {pipeline_schedule::gpipe, "gpipe"},
    {pipeline_schedule::one_f_one_b, "1f1b"},
    {pipeline_schedule::interleaved, "interleaved"},
    {pipeline_schedule::zb_h1, "zb-h1"},
    {pipeline_schedule::zb_v, "zb-v"},
    {pipeline_schedule::dualpipe, "dualpipe"},
}};
static_assert(detail::in_enum_order(pipeline_schedule_spellings));
[[nodiscard]] constexpr const auto& name_table(pipeline_schedule) { return pipeline_schedule_spellings; }

/// @brief How per-tensor FP8 (`dtype::fp8`) takes each tensor's scale, as Megatron-Core's
/// `--fp8-recipe` names it (megatron/core/enums.py Fp8Recipe; default `delayed`, TransformerConfig
/// core_v0.15): `delayed`, Transformer Engine's DelayedScaling, scales from an amax history and
/// records the tensor's amax inside the cast kernel; `tensorwise`, its Float8CurrentScaling (the
/// Megatron-Bridge recipes' "FP8-CS"), finds the tensor's own amax first: a zero-amax kernel and a
/// reduction over the bf16 tensor (transformer_engine/common/recipe/current_scaling.cu
/// `nvte_compute_amax`), the scale from it (`nvte_compute_scale_from_amax`), then the cast;
/// `blockwise`, its Float8BlockScaling (DeepSeek-V3's scheme, the Megatron-Bridge recipes' "FP8-SC",
/// subchannel scaling: `bf16_with_fp8_subchannel_scaling_mixed`), scales 1 x 128 blocks of the
/// activations and gradients and 128 x 128 blocks of the weights by FP32 factors found inside the
/// cast, quantizes the row-wise and the column-wise copy each from the bf16 tensor, and runs every
/// GEMM, the forward's too, with the split accumulator (transformer_engine/common/recipe/
/// __init__.py `Float8BlockScaling`, v2.9: "Split accumulator required for fprop"; compute
/// capability 9.0 or later, quantization.py `check_fp8_block_scaling_support`). The MX block-scaled
/// recipes are dtypes of their own (mxfp8, nvfp4).
enum class fp8_recipe { delayed, tensorwise, blockwise };

/// @brief CLI/JSON spellings of the FP8 scaling recipes (Megatron-Core's): `to_string`, `parse<fp8_recipe>`.
inline constexpr std::array<name_entry<fp8_recipe>, 3> fp8_recipe_spellings{{
    {fp8_recipe::delayed, "delayed"},
    {fp8_recipe::tensorwise, "tensorwise"},
    {fp8_recipe::blockwise, "blockwise"},
}};
static_assert(detail::in_enum_order(fp8_recipe_spellings));
[[nodiscard]] constexpr const auto& name_table(fp8_recipe) { return fp8_recipe_spellings; }

/// @brief Whether `schedule` reaches its stated bubble with `micro_batches` per step on `pp` stages.
/// The zero-bubble and DualPipe bubbles are steady-state results: ZB-H1 fills 1F1B's warm-up of
/// p micro-batches (Qi et al. 2024 Sec. 2.1), so m >= p; ZB-V and DualPipe run two chunks per
/// device, each needing p micro-batches in flight, so m >= 2p, and DualPipe feeds half of them
/// from each end, so m is even (deepseek-ai/DualPipe dualpipe.py: num_chunks % 2 == 0,
/// num_chunks >= 2 num_ranks). The classic schedules accept any m >= 1.
[[nodiscard]] constexpr bool schedule_accepts(pipeline_schedule schedule, int pp, long long micro_batches) {
    switch (schedule) {
        case pipeline_schedule::zb_h1: return micro_batches >= pp;
        case pipeline_schedule::zb_v: return micro_batches >= 2LL * pp;
        case pipeline_schedule::dualpipe: return pp % 2 == 0 && micro_batches % 2 == 0 && micro_batches >= 2LL * pp;
        default: return micro_batches >= 1;
    }
}

/// @brief How much of each dimension's communication the step model lets hide under compute.
/// Each is an assumption about the training framework, stated so a user can change it.
struct overlap_options {
    /// DP gradient reduction overlapped with backward, bucket by bucket, as PyTorch DDP does
    /// (Li et al. 2020, "PyTorch Distributed", Sec. 3.2.3) and Megatron-LM `--overlap-grad-reduce`.
    /// With gradient accumulation the reduction runs during the last micro-batch's backward only,
    /// so the hiding window is that backward; the last bucket is always exposed.
    bool dp = true;
    /// TP collectives overlapped with the matmuls (Transformer Engine userbuffers, Megatron-Core
    /// `--tp-comm-overlap`; needs sequence parallelism, so without it the TP all-reduces stay
    /// exposed). On in the default (megatron-core) profile; off for Megatron-LM 2021-22, whose
    /// TP all-reduces sit on the critical path (Shoeybi et al. 2019, Fig. 3).
    bool tp = true;
    /// PP send/recv overlapped with compute (Megatron-LM `--overlap-p2p-comm`): only what the
    /// schedule cannot cover stays exposed (interleaved, the 2 (p V - 1) transfers of the fill and
    /// the drain; 1F1B, whose steady state has no slack, 2 (p - 1) m / p + 2 (p - 2); step.hpp).
    bool pp = true;
    /// ZeRO-3/FSDP parameter all-gathers prefetched under the previous layer's compute (FSDP
    /// forward/backward prefetch, Zhao et al. 2023); the first layer's gather stays exposed.
    bool zero = true;
    /// CP ring exchange of K/V overlapped with attention of the current block (Liu et al. 2023,
    /// "Ring Attention"); only what exceeds the attention compute is exposed.
    bool cp = true;
};

/// @brief PyTorch DDP's default gradient bucket (`bucket_cap_mb = 25`, Li et al. 2020 Sec. 3.2.3).
inline constexpr double ddp_bucket_bytes = 25e6;
/// @brief The default framework's profile (megatron-core, framework.hpp), whose gradient precision
/// and buckets the plan struct's defaults are.
inline constexpr framework_profile default_profile = profile_of(framework::megatron_core);
/// @brief The default plan's gradient bucket: Megatron-Core's 40M parameters
/// (megatron/core/distributed/distributed_data_parallel.py, `bucket_size = max(40000000,
/// 1000000 * dp)` parameters) at the default profile's gradient bytes (bf16: 80 MB).
inline constexpr double default_bucket_bytes = default_profile.bucket_params * default_profile.gradient_bytes;
/// @brief A bucket that holds any gradient: one reduction of the whole contiguous buffer.
inline constexpr double whole_gradient_bucket = 1e18;

/// @brief Largest plan sizes validate, the CLI, runs.csv and the planner accept. Generous bounds
/// far beyond any published run (the largest use tp 8-16, pp 16-128, dp ~1e4, global batches of
/// ~1e4 sequences, contexts of ~1e6 tokens): beyond them a value is a typo, and the products the
/// predictor forms (tp x pp x dp x cp, tokens = B x s) stay inside `long long` and finite.
struct plan_limits {
    /// tp, pp, cp, ep, etp: 2^20, the GPU count of a cluster_limits-sized cluster is ~2^30.
    static constexpr int degree = 1 << 20;
    /// dp: 2^24, the replicas of 2^30 GPUs at 64 GPUs per replica.
    static constexpr int dp = 1 << 24;
    /// Sequences per micro-batch: 2^24, the bound of `validate` and of every reader (the CLI's
    /// --micro-batch, runs.csv, plan JSON), so any plan that validates can be written and read back.
    static constexpr int micro_batch = 1 << 24;
    /// Sequences per optimizer step: 2^30.
    static constexpr int global_batch = 1 << 30;
    /// Tokens per sequence: 2^26 (64x the longest published context, 1M tokens).
    static constexpr int seq = 1 << 26;
    /// Model chunks per device (V): 2^16, more than any model has layers to split.
    static constexpr int virtual_stages = 1 << 16;
    /// Layers of the first or last pipeline stage as the CLI reads them: 2^20.
    static constexpr int stage_layers = 1 << 20;
    /// Bytes of optimizer state per parameter: 32, twice fp32 main parameters with three fp32 states.
    static constexpr int optimizer_state_bytes = 32;
    /// ZeRO stages: 0 (none) to 3 (parameters sharded too, FSDP).
    static constexpr int zero = 3;
};

/// @brief A parallelization plan. Aggregate; write it with designated initializers.
/// Invariant checked by `validate`: tp x pp x dp x cp == GPUs of the cluster.
struct plan {
    int tp = 1;                  ///< tensor-parallel degree (Shoeybi et al. 2019)
    int pp = 1;                  ///< pipeline stages
    int dp = 1;                  ///< data-parallel replicas (EP is carved out of DP x CP)
    int cp = 1;                  ///< context-parallel degree (sequence split for attention)
    int ep = 1;                  ///< expert-parallel degree (MoE experts spread over EP ranks; carved out of tp x cp x dp / etp)
    /// expert tensor-parallel degree: each routed expert's GEMMs split over etp ranks (0 = tp,
    /// Megatron-Core's default when --expert-tensor-parallel-size is unset); see expert_tp()
    int etp = 0;
    int micro_batch = 1;         ///< sequences per micro-batch (b)
    int global_batch = 1;        ///< sequences per optimizer step (B = dp x b x m)
    int seq = 2048;              ///< sequence length in tokens (s)
    int zero = 1;                ///< ZeRO stage 0-3 (Rajbhandari et al. 2020); 3 = FSDP full sharding; 1 = Megatron distributed optimizer
    recompute recompute_mode = recompute::none;  ///< activation recomputation (Korthikanti et al. 2022)
    pipeline_schedule schedule = pipeline_schedule::one_f_one_b;
    int virtual_stages = 1;      ///< model chunks per device (V) for the interleaved schedule
    bool sequence_parallel = false;  ///< TP all-reduce -> reduce-scatter + all-gather (Korthikanti et al. 2022)
    bool pp_scatter_gather = true;   ///< send 1/t of the activation per TP rank, all-gather after (Narayanan et al. 2021 Sec. 4.1)
    dtype precision = dtype::bf16;   ///< compute and activation precision (selects the peak)
    /// FP8's scaling (Megatron-Core `--fp8-recipe`): delayed (its default), tensorwise current
    /// scaling, whose amax and scale kernels each quantized tensor launches (predict/compute.hpp
    /// quantize_kernels_for), or blockwise (1 x 128 / 128 x 128 blocks: two quantized layouts, the
    /// split accumulator in every GEMM; compute_params_for); only with precision fp8
    fp8_recipe fp8_scaling = fp8_recipe::delayed;
    /// FP8 parameters (Megatron-Core `--fp8-param-gather`; Transformer Engine's fp8_model_init):
    /// with precision fp8 or mxfp8 the layers' weights are kept quantized, the distributed
    /// optimizer's fp32 main copy apart, and gathered in FP8. Their memory (workload/memory.hpp
    /// memory_plan::layer_weight_bytes): a per-tensor FP8 weight (delayed or tensorwise) is 1 byte
    /// per element on parts with FP8 GEMMs in every layout (accelerator::non_tn_fp8_gemm,
    /// Blackwell), 2 elsewhere (its transpose); blockwise FP8 and MXFP8 keep two layouts, 2 bytes.
    /// The megatron-core profile's default (framework.hpp), off for the other stacks.
    bool fp8_param_gather = true;
    /// Keep the first and last transformer layers in BF16 under an FP8 or FP4 recipe (Megatron-Core
    /// `--first-last-layers-bf16`; megatron/core/fp8_utils.py and fp4_utils.py is_first_last_bf16_layer:
    /// global layers [0, start) and [layers - end, layers) run outside the quantized autocast):
    /// `bf16_layers_at_start` and `bf16_layers_at_end` (`--num-layers-at-start-in-bf16`,
    /// `--num-layers-at-end-in-bf16`, default 1 each, each at most layers / pp; not with delayed
    /// FP8 scaling, as TransformerConfig asserts).
    bool first_last_layers_bf16 = false;
    int bf16_layers_at_start = 1;
    int bf16_layers_at_end = 1;
    int gradient_bytes = default_profile.gradient_bytes;  ///< bytes per gradient element kept and reduced across DP (megatron-core's bf16; fp32 main grads 4: PyTorch AMP, Megatron-LM; set_gradient_bytes)
    data_size bucket = bytes(default_bucket_bytes);  ///< DP gradient bucket size (Megatron-Core: 40M parameters)
    overlap_options overlap{};
    std::optional<double> compute_efficiency{};  ///< overrides the accelerator's achievable fraction of peak
    framework stack = framework::megatron_core;  ///< software stack whose profile the fields above follow
    attention_kernel attention = attention_kernel::flash;  ///< how the attention core is computed
    data_size bucket_per_dp = bytes(default_profile.bucket_params_per_dp * default_profile.gradient_bytes);  ///< the DP bucket grows to max(bucket, this x dp x cp) (Megatron-Core: 1M parameters)
    bool reduce_every_micro_batch = false;  ///< gradients reduced after every micro-batch (ZeRO-3/FSDP without no_sync)
    /// Megatron's gradient-accumulation fusion (Megatron-LM `--no-gradient-accumulation-fusion`
    /// turns it off; Megatron-Bridge `model.gradient_accumulation_fusion`): the weight-gradient
    /// GEMMs accumulate into the fp32 or 16-bit gradient buffer (`main_grad`) themselves. Without
    /// it each micro-batch's GEMMs write a 16-bit `param.grad` that a backward hook folds into the
    /// buffer (detail::gradient_accumulation_copy). Unset: the stack's practice
    /// (fuses_gradient_accumulation). Only the Megatron stacks (megatron-core, megatron-lm) have
    /// the setting.
    std::optional<bool> gradient_accumulation_fusion{};
    /// Transformer layers of the first and of the last pipeline stage, over all its model chunks
    /// with the interleaved schedule; the stages between share the rest evenly (0 = the even
    /// split; Megatron-Core --decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers,
    /// or a --pipeline-model-parallel-layout read by apply_pipeline_layout, parallel/pipeline_layout.hpp).
    int first_stage_layers = 0;
    int last_stage_layers = 0;
    /// The embedding counts as one layer of the pipeline split, in the first virtual stage of the
    /// first stage, which then builds one transformer layer fewer (Megatron-Core
    /// `--account-for-embedding-in-pipeline-split`; megatron/core/transformer/transformer_block.py
    /// `get_num_layers_to_build`). Not with first/last_stage_layers, zb-v or dualpipe.
    bool account_for_embedding_in_pipeline_split = false;
    /// The loss (output layer and cross-entropy) counts as one layer of the pipeline split, in the
    /// last virtual stage of the last stage (Megatron-Core `--account-for-loss-in-pipeline-split`).
    bool account_for_loss_in_pipeline_split = false;
    /// Transformer layers per pipeline stage whose saved activations Transformer Engine moves to
    /// host memory during the forward pass and brings back for the backward pass (Megatron-Core
    /// `--cpu-offloading-num-layers` with `--cpu-offloading`: TransformerBlock wraps its layers in
    /// transformer_engine.pytorch.get_cpu_offload_context(num_layers=..., model_layers=...), which
    /// offloads the activations of `num_layers` layers and requires num_layers < model_layers).
    /// 0 = off. The offloaded layers' activations leave GPU memory (workload/memory.hpp).
    int cpu_offloading_num_layers = 0;
    /// Modules recomputed in the backward pass (workload/flops.hpp recompute_module bits; Megatron-Core
    /// `--recompute-modules`, e.g. layernorm,moe_act): less activation memory, more backward time.
    /// 0 = none.
    unsigned recompute_modules = 0;
    /// With recompute full: how it chooses its layers (Megatron-Core `--recompute-method`;
    /// workload/flops.hpp recompute_method) and `recompute_num_layers` N (`--recompute-num-layers`):
    /// uniform, groups of N layers per checkpoint, every layer recomputed; block, the first N layers
    /// of each model chunk recomputed, the others keep their activations. N = 0 is uniform's 1
    /// (every layer its own checkpoint, the default full recompute).
    recompute_method full_recompute_method = recompute_method::uniform;
    int recompute_num_layers = 0;
    /// Bytes per parameter of the optimizer's own state (beyond the working weights and the
    /// gradients), sharded by ZeRO-1 and up: 12 for fp32 main parameters and Adam's two fp32 moments
    /// (Megatron-Core, PyTorch AMP; Rajbhandari et al. 2020 Sec. 3.1, K = 12); 10 for Apex
    /// DistributedFusedAdam keeping 16-bit remainders of the fp32 parameters beside bf16 weights
    /// (`store_param_remainders`, NeMo 1.x's `distributed_fused_adam` with bf16 weights); 4 with
    /// bf16 moments and no main parameters (that optimizer with `dtype: bf16`); Megatron-Core's
    /// precision-aware optimizer (`--main-params-dtype`, `--exp-avg-dtype`, `--exp-avg-sq-dtype`)
    /// in between.
    int optimizer_state_bytes = 12;
    /// MoE routing imbalance: routed tokens of the busiest EP rank / the mean (1 = balanced). The
    /// busiest rank sets the pace of the expert GEMMs and of the all-to-all.
    double expert_load = 1.0;
    /// MoE token dropping: expert capacity as a multiple of the balanced load (Megatron-Core
    /// `--moe-expert-capacity-factor`, GShard/Switch's capacity factor); 0 = dropless, Megatron-Core's
    /// default (no capacity factor). Tokens beyond capacity are dropped.
    double capacity_factor = 0.0;
    /// With a capacity factor, pad every expert's input to capacity (Megatron-Core
    /// `--moe-pad-expert-input-to-capacity`): fixed shapes, the capacity's work on every rank.
    bool pad_to_capacity = false;
    /// MoE token dispatcher (parallel/framework.hpp moe_token_dispatcher; default the
    /// megatron-core profile's, HybridEP): `alltoall` sends a token once per selected expert and
    /// permutes it around the all-to-all in separate kernels; `deepep` and `hybridep` (Megatron-Core's
    /// flex dispatcher) send it once per destination rank, HybridEP with the permutations fused into
    /// its communication kernels. Without expert parallelism (ep x etp = 1) the layer runs the
    /// all-to-all dispatcher's local permutations whatever this says.
    moe_token_dispatcher dispatcher = moe_token_dispatcher::hybridep;
    /// Megatron-Core's `--overlap-moe-expert-parallel-comm` (Megatron-Bridge's `moe_a2a_overlap`):
    /// the schedule runs the forward of one micro-batch's chunk and the backward of another's
    /// together, each one's expert-parallel all-to-alls under the other's compute (megatron/core/
    /// pipeline_parallel/combined_1f1b.py); the warm-up and cool-down chunks run alone
    /// (moe_a2a_overlap_share). Needs ep > 1, pp = 1 or the interleaved schedule, and no full
    /// recompute (TransformerConfig, core_v0.15).
    bool moe_a2a_overlap = false;

    /// @brief Load of the busiest EP rank relative to a balanced one, after dropping or padding:
    /// dropless `expert_load`; dropping min(expert_load, capacity_factor); padded capacity_factor.
    [[nodiscard]] constexpr double effective_expert_load() const {
        if (capacity_factor <= 0.0) return expert_load;
        if (pad_to_capacity) return capacity_factor;
        return expert_load < capacity_factor ? expert_load : capacity_factor;
    }

    /// @brief Expert tensor-parallel degree in effect: etp, or tp when etp is 0.
    [[nodiscard]] constexpr int expert_tp() const { return etp > 0 ? etp : tp; }
    /// @brief Expert-data-parallel degree: the ranks holding the same expert shard, over which the
    /// expert gradients are reduced, tp x cp x dp / (etp x ep) (Megatron-Core
    /// `expert_data_parallel_size`); dp x cp / ep with etp = tp. At least 1.
    [[nodiscard]] constexpr int expert_dp() const {
        const long long stage = static_cast<long long>(tp) * cp * dp;
        const long long shard = static_cast<long long>(expert_tp()) * (ep > 0 ? ep : 1);
        return shard > 0 && stage >= shard ? static_cast<int>(stage / shard) : 1;
    }

    /// @brief GPUs the plan occupies: tp x pp x dp x cp.
    [[nodiscard]] constexpr long long gpus() const {
        return static_cast<long long>(tp) * pp * dp * cp;
    }
    /// @brief Micro-batches per step per pipeline: m = B / (dp x b).
    [[nodiscard]] constexpr int micro_batches() const {
        const long long d = static_cast<long long>(dp) * micro_batch;
        return d > 0 ? static_cast<int>(global_batch / d) : 0;
    }
    /// @brief Virtual stages in effect (V for interleaved, 1 otherwise).
    [[nodiscard]] constexpr int chunks() const {
        return schedule == pipeline_schedule::interleaved ? virtual_stages : 1;
    }
    /// @brief Transformer layers per model chunk (one per pipeline stage, or per virtual stage) of a
    /// model of `layers` layers, the mean chunk: layers / (pp V) (uneven splits are averaged).
    [[nodiscard]] constexpr double layers_per_model_chunk(int layers) const {
        return static_cast<double>(layers) / (static_cast<double>(pp < 1 ? 1 : pp) * chunks());
    }
    /// @brief Share of the layers whose forward the backward repeats under full recompute, for a
    /// model of `layers` transformer layers: recompute_method::block recomputes min(N, c) of the c =
    /// layers_per_model_chunk(layers) layers of each model chunk; uniform every layer. 0 without full
    /// recompute.
    [[nodiscard]] constexpr double full_recompute_share(int layers) const {
        if (recompute_mode != recompute::full) return 0.0;
        if (full_recompute_method != recompute_method::block) return 1.0;
        const double chunk = layers_per_model_chunk(layers);
        if (!(chunk > 0.0)) return 1.0;
        const double n = recompute_num_layers;
        return n >= chunk ? 1.0 : n / chunk;
    }
    /// @brief Layers per checkpoint under full recompute: uniform's N (1 when unset), else 1.
    [[nodiscard]] constexpr int full_recompute_group() const {
        return full_recompute_method == recompute_method::uniform && recompute_num_layers > 1 ? recompute_num_layers : 1;
    }
    /// @brief Whether the weight-gradient GEMMs accumulate into the gradient buffer
    /// (gradient_accumulation_fusion where set). Unset, Megatron-LM's default (on), except under
    /// megatron-core at ZeRO 3: NVIDIA's recipes run Megatron-FSDP with `gradient_accumulation_fusion
    /// = False` (Megatron-Bridge r0.2.0 scripts/performance/configs/llama3/llama3_llm_pretrain.py and
    /// llama31: "Disabled to avoid functional errors"). The stacks outside Megatron have no such
    /// fusion and no hook to charge: true, whatever the field holds.
    [[nodiscard]] constexpr bool fuses_gradient_accumulation() const {
        if (!has_gradient_accumulation_fusion(stack)) return true;
        if (gradient_accumulation_fusion) return *gradient_accumulation_fusion;
        return !(stack == framework::megatron_core && zero == 3);
    }
    /// @brief Share of a stage's forward and backward chunks that moe_a2a_overlap pairs (0 without
    /// it): of the m V chunks, those of the interleaved schedule's steady state, m V - w with w = 2
    /// (p - 1) + (V - 1) p warm-up chunks on the first stage (Megatron-Core's
    /// forward_backward_pipelining_with_interleaving); without pipelining all but the first
    /// forward and the last backward, (m - 1) / m.
    [[nodiscard]] constexpr double moe_a2a_overlap_share() const {
        if (!moe_a2a_overlap) return 0.0;
        const double m = micro_batches();
        if (!(m > 0.0)) return 0.0;
        if (pp <= 1) return (m - 1.0) / m;
        const double n = m * chunks(), warmup = 2.0 * (pp - 1) + (chunks() - 1.0) * pp;
        return n > warmup ? (n - warmup) / n : 0.0;
    }
    /// @brief Slots of the pipeline split that are not transformer layers: 1 for the embedding and
    /// 1 for the loss when counted (account_for_*_in_pipeline_split), 0 otherwise.
    [[nodiscard]] constexpr int pipeline_split_extras() const {
        return (account_for_embedding_in_pipeline_split ? 1 : 0) + (account_for_loss_in_pipeline_split ? 1 : 0);
    }
};

/// @brief Bytes per element of a data type, block scales included (fp32/tf32 4, bf16/fp16 2,
/// fp8 1, mxfp8 1.03125, nvfp4 0.5625, fp4 0.53125; see dtype_bits).
[[nodiscard]] constexpr double dtype_bytes(dtype d) { return dtype_bits(d) / 8.0; }

namespace detail {
/// stage_layers with the embedding and/or the loss counted in the split (Megatron-Core
/// get_num_layers_to_build): V x (layers + extras) / (pp V) slots (validate requires the division
/// to be exact), less the embedding's slot on stage 0 and the loss's on the last stage.
[[gnu::noinline]] constexpr int split_stage_layers(const commscale::plan& p, int layers, int stage) {
    const int pp = p.pp < 1 ? 1 : p.pp, v = p.chunks();
    int total = v * ((layers + p.pipeline_split_extras()) / (pp * v));
    if (stage == 0 && p.account_for_embedding_in_pipeline_split) --total;
    if (stage == pp - 1 && p.account_for_loss_in_pipeline_split) --total;
    return total;
}
}  // namespace detail

/// @brief Layers of pipeline stage `stage` (0-based) of `p` for a model of `layers` layers:
/// `first_stage_layers` / `last_stage_layers` when given, as Megatron-Core splits them (the other
/// stages share the rest evenly, which must divide: Megatron asserts it); otherwise layers /
/// (pp x V) per virtual stage, Megatron-Core's even split. When that does not divide (which
/// Megatron-Core refuses without the counts: megatron_uneven_split gives the ones it accepts; a
/// pipeline engine such as DeepSpeed's partitions any count), the remainder goes one layer each
/// to the virtual stages after the first (so the first stage, which also holds the embedding,
/// and the last, which also computes the logits and loss, are the lighter ones). A stage's count
/// sums its V virtual stages (interleaved: virtual stage j x pp + stage).
/// With the embedding and/or the loss counted in the split (Megatron-Core
/// `--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`;
/// megatron/core/transformer/transformer_block.py `get_num_layers_to_build`): every virtual stage
/// gets (layers + extras) / (pp x V) slots (validate requires the division to be exact, as
/// Megatron-Core's transformer_config.py does), and the first virtual stage of the first stage
/// builds one transformer layer fewer (it holds the embedding), the last virtual stage of the
/// last stage one fewer (it holds the output layer and loss). Llama 3.1 405B on PP 16 x V 8:
/// (126 + 2) / 128 = 1 slot per virtual stage, so stages 0 and 15 hold 7 layers, the others 8.
[[nodiscard, gnu::always_inline]] constexpr int stage_layers(const plan& p, int layers, int stage) {
    const int pp = p.pp < 1 ? 1 : p.pp;
    if (pp == 1) return layers;
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
        const int given = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
        if (stage == 0 && p.first_stage_layers > 0) return p.first_stage_layers;
        if (stage == pp - 1 && p.last_stage_layers > 0) return p.last_stage_layers;
        const int rest = layers - p.first_stage_layers - p.last_stage_layers;
        return pp - given > 0 ? rest / (pp - given) : 0;
    }
    const int v = p.chunks();
    const int virt = pp * v;
    if (p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split)
        return detail::split_stage_layers(p, layers, stage);  // out of line: stage_layers stays inlined
    // virtual stage j pp + stage gets base layers, + 1 when 1 <= j pp + stage <= extra: stage 0
    // for j in [1, extra / pp], stage s >= 1 for j in [0, (extra - s) / pp] (j < V throughout)
    const int base = layers / virt, extra = layers % virt;
    const int bonus = stage == 0 ? std::min(v - 1, extra / pp) : extra >= stage ? std::min(v, (extra - stage) / pp + 1) : 0;
    return v * base + bonus;
}

/// @brief The pipeline layout of a plan, explicit: transformer layers of the first stage (with the
/// embedding), of the last (with the output layer and loss) and the most any stage holds (it sets
/// the pipeline's pace); stage_layers gives every stage's.
struct stage_layout {
    int first = 0, last = 0, most = 0;
};

/// @brief The stage_layout of `p` for a model of `layers` layers (stage_layers of the first, the
/// last and the largest stage; see max_stage_layers).
[[nodiscard]] constexpr stage_layout layout_of(const plan& p, int layers) {
    const int pp = p.pp < 1 ? 1 : p.pp;
    stage_layout l;
    l.first = stage_layers(p, layers, 0);
    l.last = stage_layers(p, layers, pp - 1);
    l.most = std::max(l.first, l.last);
    if (pp > 2) l.most = std::max(l.most, stage_layers(p, layers, 1));  // the largest middle stage (max_stage_layers)
    return l;
}

/// @brief The most layers any pipeline stage holds (it sets the pipeline's pace).
[[nodiscard]] constexpr int max_stage_layers(const plan& p, int layers) {
    const int pp = p.pp < 1 ? 1 : p.pp;
    int best = 0;
    // First, last and one middle stage cover every distinct count: with given first/last counts
    // the middle stages are equal; in the even split (V >= 1) stage s >= 1 gets an extra layer in
    // chunk j when 1 <= j pp + s <= extra, which holds for at least as many j at s = 1 as at any
    // larger s, so stage 1 is the largest of stages 1..pp-1. With the embedding/loss counted
    // (validated: no remainder) only stages 0 and pp-1 differ from the others, by one layer.
    best = std::max(stage_layers(p, layers, 0), stage_layers(p, layers, pp - 1));
    if (pp > 2) best = std::max(best, stage_layers(p, layers, 1));
    return best;
}

/// @brief Throws input_error unless the first/last stage layer counts are usable: each in
/// [1, layers] and the remaining layers split evenly over the remaining stages (each at least
/// one). With the interleaved schedule the counts are a rank's layers over its V model chunks:
/// Megatron-Core's --decoder-first/last-pipeline-num-layers also want each rank's count divisible
/// by V, but its pipeline_model_parallel_layout (parallel/pipeline_layout.hpp) places any count,
/// and the step model reads the ranks' totals alone, so any count is taken.
inline void validate_stage_layers(const plan& p, int layers) {
    if (p.first_stage_layers < 0)
        throw input_error("plan.first_stage_layers", std::to_string(p.first_stage_layers), "0 (even split) or a layer count >= 1");
    if (p.last_stage_layers < 0)
        throw input_error("plan.last_stage_layers", std::to_string(p.last_stage_layers), "0 (even split) or a layer count >= 1");
    if (p.first_stage_layers == 0 && p.last_stage_layers == 0) return;
    const char* field = p.first_stage_layers > 0 ? "plan.first_stage_layers" : "plan.last_stage_layers";
    const int value = p.first_stage_layers > 0 ? p.first_stage_layers : p.last_stage_layers;
    if (p.pp < 2) throw input_error(field, std::to_string(value), "0 without pipeline parallelism (pp = 1)");
    const int given = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
    const int rest = layers - p.first_stage_layers - p.last_stage_layers;
    const int others = p.pp - given;
    if (rest < others || (others == 0 && rest != 0) || (others > 0 && rest % others != 0))
        throw input_error(field, std::to_string(value),
                          "a count leaving the other " + std::to_string(others) + " stage(s) an equal share of the " +
                              std::to_string(rest) + " remaining layers (" + std::to_string(layers) + " in all)");
}

/// @brief First and last stage layer counts (0: not given) of a split Megatron-Core accepts.
struct uneven_stage_split {
    int first = 0, last = 0;
    [[nodiscard]] constexpr bool operator==(const uneven_stage_split&) const = default;
};

/// @brief The split of `layers` layers over `pp` pipeline stages that Megatron-Core can run when pp
/// does not divide them: its `--decoder-first-pipeline-num-layers` and/or
/// `--decoder-last-pipeline-num-layers` (TransformerConfig num_layers_in_first/last_pipeline_stage).
/// Without either or a `--pipeline-model-parallel-layout`, Megatron-Core refuses such a pp
/// (megatron/core/transformer/transformer_block.py `get_num_layers_to_build`: "num_layers should be
/// divisible by pipeline_model_parallel_size"); with them each given count must be > 0 and the
/// other stages share the rest evenly (transformer_config.py `__post_init__`). Of those splits, the
/// one whose largest stage is smallest (it sets the pipeline's pace), then whose larger end is
/// smallest (the first stage holds the embedding and the most activations in flight, the last
/// computes the logits and the loss), then whose last is. 0 stands for a count not given (that
/// stage takes the others' share); {0, 0} where pp divides the layers, pp < 2 or pp > layers.
/// E.g. 80 layers on pp 6: 12, 4 x 14, 12; Llama 3.1 405B's 126 on pp 8: 15, 6 x 16, 15; 9 on pp 6:
/// 3, 4 x 1, 2 (Megatron's flags cannot place 2, 2, 2, 1, 1, 1).
[[nodiscard]] constexpr uneven_stage_split megatron_uneven_split(int layers, int pp) {
    if (pp < 2 || layers < pp || layers % pp == 0) return {};
    uneven_stage_split best{};
    std::array<int, 3> key{layers + 1, layers + 1, layers + 1};  // largest stage, larger end, last: lexicographic
    const auto consider = [&](int first, int last, int middle, uneven_stage_split s) {
        const std::array<int, 3> k{std::max({first, last, middle}), std::max(first, last), last};
        if (k < key) {
            best = s;
            key = k;
        }
    };
    // m: the layers of each stage whose count is not given; more than ceil(layers / pp) only
    // makes that stage the slowest
    for (int m = 1; m <= (layers + pp - 1) / pp; ++m) {
        if (const int one = layers - (pp - 1) * m; one >= 1) {  // one end given, the other takes m
            consider(one, m, m, {one, 0});
            consider(m, one, m, {0, one});
        }
        // both ends given (middle stages of m), the rest split as evenly as it goes, the last the smaller half
        if (const int rest = layers - (pp - 2) * m; pp >= 3 && rest >= 2) consider(rest - rest / 2, rest / 2, m, {rest - rest / 2, rest / 2});
    }
    return best;
}

/// @brief The slots (1: the embedding or the loss, 2: both) that counting the embedding and/or the
/// loss as pipeline layers adds so that `virt` = pp x V virtual stages split `layers` layers evenly,
/// Megatron-Core's rule (layers + extras) % (pp x V) == 0; 0 when neither 1 nor 2 slots do. Used by
/// validate's error messages and by the planner's search of these layouts.
[[nodiscard]] constexpr int pipeline_split_slots_needed(int layers, long long virt) {
    if (virt <= 0) return 0;
    if ((layers + 1LL) % virt == 0) return 1;
    if ((layers + 2LL) % virt == 0) return 2;
    return 0;
}

namespace detail {
/// The flags (CLI spelling) that make pp x V virtual stages split `layers` layers, Megatron-Core's
/// rule (pipeline_split_slots_needed); empty when none does. For error messages.
[[nodiscard]] inline std::string pipeline_split_hint(int layers, long long virt) {
    const std::string both = "account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split "
                             "(--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split)";
    const std::string one = "account_for_loss_in_pipeline_split or account_for_embedding_in_pipeline_split "
                            "(--account-for-loss-in-pipeline-split or --account-for-embedding-in-pipeline-split)";
    switch (pipeline_split_slots_needed(layers, virt)) {
        case 1: return one + ", layers + 1 = " + std::to_string(layers + 1) + " slots";
        case 2: return both + ", layers + 2 = " + std::to_string(layers + 2) + " slots";
        default: return {};
    }
}

/// validate(plan)'s error for pp x V above the layers without the embedding/loss counted: names
/// the flags that would make the split valid.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_too_many_stages(const commscale::plan& p, int layers) {
    const long long chunks = static_cast<long long>(p.pp) * p.chunks();
    const std::string hint = pipeline_split_hint(layers, chunks);
    throw input_error("plan.pp", std::to_string(p.pp) + (p.chunks() > 1 ? " x V " + std::to_string(p.chunks()) : ""),
                      "at most the layers (" + std::to_string(layers) + "): every (virtual) stage needs a layer" +
                          (hint.empty() ? std::string()
                                        : "; or count the embedding/loss as pipeline layers as Megatron-Core does: " + hint));
}
}  // namespace detail

/// @brief Throws input_error unless the embedding/loss accounting (Megatron-Core
/// `--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`) is usable,
/// mirroring megatron/core/transformer/transformer_config.py `__post_init__`: not with given
/// first/last stage layer counts; (layers + extras) divisible by pp, and the per-stage count by V,
/// i.e. by pp x V; and not with zb-v or dualpipe (schedules Megatron-Core does not have, whose
/// chunk placement differs). Every virtual stage then has at least one slot, so the embedding's
/// and the loss's virtual stages build >= 0 transformer layers (Megatron asserts >= 0).
[[gnu::cold, gnu::noinline]] inline void validate_pipeline_split_slow(const plan& p, int layers) {
    const int extras = p.pipeline_split_extras();
    if (extras == 0) return;
    const char* field = p.account_for_embedding_in_pipeline_split ? "plan.account_for_embedding_in_pipeline_split"
                                                                  : "plan.account_for_loss_in_pipeline_split";
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0)
        throw input_error(field, "true with first_stage_layers " + std::to_string(p.first_stage_layers) + ", last_stage_layers " +
                                     std::to_string(p.last_stage_layers),
                          "false when first/last_stage_layers are given (Megatron-Core refuses the two together)");
    if (p.schedule == pipeline_schedule::zb_v || p.schedule == pipeline_schedule::dualpipe)
        throw input_error(field, "true with " + std::string(to_string(p.schedule)),
                          "false with zb-v and dualpipe (Megatron-Core's flags split its 1f1b and interleaved stages)");
    const long long virt = static_cast<long long>(p.pp) * p.chunks();
    const long long slots = static_cast<long long>(layers) + extras;
    if (slots % virt != 0) {
        const std::string hint = detail::pipeline_split_hint(layers, virt);
        throw input_error("plan.pp", std::to_string(p.pp) + (p.chunks() > 1 ? " x V " + std::to_string(p.chunks()) : ""),
                          "pp x V dividing layers + " + std::to_string(extras) + " = " + std::to_string(slots) + " (" +
                              std::to_string(layers) + " layers, " + (extras == 2 ? "the embedding and the loss" :
                              p.account_for_embedding_in_pipeline_split ? "the embedding" : "the loss") +
                              " counted as pipeline layers), as Megatron-Core requires" +
                              (hint.empty() ? std::string() : "; it divides with " + hint));
    }
}

/// @brief Throws input_error unless the embedding/loss accounting is usable (the rules above);
/// nothing to check when neither flag is set.
inline void validate_pipeline_split(const plan& p, int layers) {
    if (p.pipeline_split_extras() != 0) validate_pipeline_split_slow(p, layers);
}

/// @brief Writes the profile of `f` into `p`: stack, ZeRO stage, gradient precision and buckets,
/// overlaps, attention kernel, when gradients are reduced. Explicit choices go after this call.
constexpr void apply_framework(plan& p, framework f) {
    const framework_profile fp = profile_of(f);
    p.stack = f;
    p.zero = fp.zero;
    p.gradient_bytes = fp.gradient_bytes;
    p.bucket = bytes(fp.bucket_params > 0 ? fp.bucket_params * fp.gradient_bytes : whole_gradient_bucket);
    p.bucket_per_dp = bytes(fp.bucket_params_per_dp * fp.gradient_bytes);
    p.overlap.dp = fp.overlap_grad_reduce;
    p.overlap.zero = fp.overlap_param_gather;
    p.fp8_param_gather = fp.fp8_param_gather;
    p.overlap.tp = fp.overlap_tp;
    p.overlap.pp = fp.overlap_pp;
    p.attention = fp.attention;
    p.reduce_every_micro_batch = fp.reduce_every_micro_batch;
    p.dispatcher = fp.dispatcher;
    p.gradient_accumulation_fusion.reset();  // the stack's practice (plan::fuses_gradient_accumulation)
}

/// @brief Sets the precision gradients are kept and reduced in (`bytes_per_element` 1, 2 or 4),
/// keeping the buckets' element count. The stacks size buckets in gradient elements
/// (Megatron-Core's `bucket_size = max(40000000, 1000000 * dp)` in
/// megatron/core/distributed/distributed_data_parallel.py; DeepSpeed's `reduce_bucket_size`), so
/// the bucket apply_framework sized for the profile's precision holds as many elements of the new
/// one: 40M bf16 gradients are an 80 MB bucket, not 160 MB. A bucket holding the whole gradient
/// stays whole. Set an explicit bucket size (bytes, as `--bucket` gives it) after this call.
constexpr void set_gradient_bytes(plan& p, int bytes_per_element) {
    if (p.gradient_bytes > 0 && bytes_per_element > 0 && bytes_per_element != p.gradient_bytes) {
        const double scale = static_cast<double>(bytes_per_element) / p.gradient_bytes;
        if (p.bucket.value() < whole_gradient_bucket) p.bucket = p.bucket * scale;
        p.bucket_per_dp = p.bucket_per_dp * scale;
    }
    p.gradient_bytes = bytes_per_element;
}

/// @brief Sequence parallelism as the recipes of `p.stack` set it for p's degrees: on with TP >= 2
/// where the profile runs it (megatron-core, fsdp) and the sequence splits over the TP ranks
/// ((seq / cp) % tp == 0, which validate requires of it), off otherwise. What the CLI, the Python
/// module and a runs CSV take when the plan leaves it unsaid; apply_framework leaves
/// `sequence_parallel` alone because it depends on the degrees set after it.
[[nodiscard]] constexpr bool stack_sequence_parallel(const plan& p) {
    return profile_of(p.stack).sequence_parallel && p.tp > 1 && p.cp >= 1 && (p.seq / p.cp) % p.tp == 0;
}

/// @brief The expert tensor-parallel degree (plan::etp) the recipes of `p.stack` give an MoE model
/// `m`: 1 under megatron-core (NVIDIA's MoE recipes split no expert over TP), 0 (= tp, Megatron-Core's
/// library default) for a dense model and the other stacks. What the CLI, the Python module and a
/// runs CSV take when etp is left unsaid.
[[nodiscard]] constexpr int stack_expert_tp(const plan& p, const transformer& m) {
    return m.is_moe() && p.tp > 1 && profile_of(p.stack).expert_tp_one ? 1 : 0;
}

/// @brief Per-tensor FP8's scaling as the recipes of `p.stack` run it: tensorwise (current scaling,
/// Megatron-Bridge's "FP8-CS") for megatron-core, delayed for the other stacks (framework.hpp
/// profile_of); delayed, which means nothing, unless `p.precision` is fp8. What the CLI, the
/// Python module and a runs CSV take when the recipe is left unsaid.
[[nodiscard]] constexpr fp8_recipe stack_fp8_recipe(const plan& p) {
    return p.precision == dtype::fp8 && profile_of(p.stack).fp8_current_scaling ? fp8_recipe::tensorwise : fp8_recipe::delayed;
}

namespace detail {
/// Cold, out-of-line thrower for validate(plan)'s degree and size ranges (the checks stay inline).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_plan_range(const char* name, long long v, long long hi) {
    throw input_error(std::string("plan.") + name, std::to_string(v), "an integer in [1, " + std::to_string(hi) + "]");
}
}  // namespace detail

/// @brief True when `tp` can split the Mamba-2 mixers of a hybrid model as Megatron-Core does
/// (megatron/core/ssm/mamba_mixer.py MambaMixer.__init__: "nheads must be evenly divisble by
/// tp_size", "ngroups must be evenly divisible by tp_size": in_proj, conv1d, dt_bias, A_log, D and
/// the gated norm column-split by heads and groups, out_proj row-split). True for a model without
/// Mamba-2 layers.
[[nodiscard]] constexpr bool mamba_tp_ok(const transformer& m, int tp) {
    if (!m.hybrid || m.hybrid->mamba_heads <= 0 || tp <= 1) return true;
    return m.hybrid->mamba_heads % tp == 0 && m.hybrid->mamba_groups % tp == 0;
}

/// @brief True when `stack`'s flash attention takes a logit soft-cap (transformer::
/// attn_logit_softcapping): flash-attn >= 2.6's `softcap`, which the PyTorch stacks call.
/// Transformer Engine's attention has none (it passes flash-attn `softcap = 0`,
/// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py, v2.9), so
/// Megatron-Bridge runs Gemma 2's attention unfused (src/megatron/bridge/models/gemma/
/// gemma2_provider.py Gemma2DotProductAttention: "use unfused SDPA for attn logit softcapping").
[[nodiscard]] constexpr bool flash_takes_softcap(framework stack) { return stack != framework::megatron_core; }

/// @brief True when `stack`'s unfused attention is Hugging Face transformers' eager attention
/// (score_softmax::eager_fp32): the PyTorch stacks (fsdp, deepspeed), which train the Hugging Face
/// model classes; the Megatron stacks run Megatron's DotProductAttention with FusedScaleMaskSoftmax.
[[nodiscard]] constexpr bool eager_attention_scores(framework stack) {
    return stack == framework::fsdp || stack == framework::deepspeed;
}

/// @brief The softmax of `m`'s unfused attention core on one rank (score_softmax): Hugging Face's
/// eager FP32 softmax where `eager` (eager_attention_scores), else Megatron's fused kernel or its
/// fallback (megatron_score_softmax) over micro_batch x heads / tp rows of seq / cp queries by seq
/// keys (a share that does not divide counts as no multiple of 4).
[[nodiscard]] constexpr score_softmax score_softmax_for(const transformer& m, bool eager, int tp, int cp, int micro_batch,
                                                        int seq) {
    if (eager) return score_softmax::eager_fp32;
    const long long t = std::max(tp, 1), c = std::max(cp, 1);
    const long long rows = m.heads % t == 0 ? static_cast<long long>(micro_batch) * (m.heads / t) : 0;
    return megatron_score_softmax(rows, seq % c == 0 ? seq / c : 0, seq);
}

/// @brief The attention kernel that runs `m`: `k`, unfused where the model soft-caps its attention
/// scores and the stack's flash kernel cannot (`flash_softcap`: flash_takes_softcap).
[[nodiscard]] constexpr attention_kernel attention_kernel_for(const transformer& m, attention_kernel k, bool flash_softcap) {
    return k == attention_kernel::flash && m.attn_logit_softcapping > 0.0 && !flash_softcap ? attention_kernel::unfused : k;
}

/// @brief The attention kernel that runs `m` under plan `p` (attention_kernel_for with the plan's
/// kernel and stack).
[[nodiscard]] constexpr attention_kernel attention_kernel_for(const transformer& m, const plan& p) {
    return attention_kernel_for(m, p.attention, flash_takes_softcap(p.stack));
}
/// @brief The softmax of `m`'s unfused attention core under plan `p` (score_softmax_for with the
/// plan's stack and shapes).
[[nodiscard]] constexpr score_softmax score_softmax_for(const transformer& m, const plan& p) {
    return score_softmax_for(m, eager_attention_scores(p.stack), p.tp, p.cp, p.micro_batch, p.seq);
}

/// @brief False when context parallelism `cp` > 1 meets a flash kernel `k` that `m`'s attention
/// soft-cap turns unfused under `stack` (attention_kernel_for): Megatron-Core's unfused
/// DotProductAttention asserts context_parallel_size == 1 ("Context parallelism is only supported
/// by TEDotProductAttention!"). A plan that asks for the unfused kernel itself keeps its CP, as
/// before soft-caps were modelled (its CP traffic priced, the ring's merges not).
[[nodiscard]] constexpr bool attention_cp_ok(const transformer& m, attention_kernel k, framework stack, int cp) {
    return cp <= 1 || k != attention_kernel::flash || attention_kernel_for(m, k, flash_takes_softcap(stack)) == attention_kernel::flash;
}

/// @brief True when `cp` can split the Mamba-2 mixers of a hybrid model (after `tp`) as
/// Megatron-Core's all-to-all context parallelism does (megatron/core/ssm/mamba_context_parallel.py
/// MambaContextParallel.__init__): the heads on a TP rank divisible by cp, and its groups either a
/// multiple of cp or a divisor of it (then each group's B and C are repeated cp / groups times).
[[nodiscard]] constexpr bool mamba_cp_ok(const transformer& m, int tp, int cp) {
    if (!m.hybrid || m.hybrid->mamba_heads <= 0 || cp <= 1) return true;
    if (!mamba_tp_ok(m, tp)) return false;
    const int t = tp > 1 ? tp : 1, heads = m.hybrid->mamba_heads / t, groups = m.hybrid->mamba_groups / t;
    if (heads % cp != 0) return false;
    return groups < cp ? cp % groups == 0 : groups % cp == 0;
}

/// @brief True when `tp` and `cp` can split the Gated DeltaNet mixers of a hybrid model as
/// Megatron-Core does (megatron/core/ssm/gated_delta_net/common.py: the key and value heads, and so
/// in_proj, conv1d, dt_bias and A_log, column-split over TP, out_proj row-split; its context
/// parallelism, `_all_to_all_cp2hp`, hands each CP rank the whole sequence of the heads on a TP
/// rank divided by cp): both head counts divisible by tp x cp. True without GDN layers.
[[nodiscard]] constexpr bool gdn_split_ok(const transformer& m, int tp, int cp) {
    if (!m.hybrid || m.hybrid->gdn_v_heads <= 0) return true;
    const long long split = static_cast<long long>(tp > 1 ? tp : 1) * (cp > 1 ? cp : 1);
    return m.hybrid->gdn_qk_heads % split == 0 && m.hybrid->gdn_v_heads % split == 0;
}

namespace detail {
/// The hybrid model's TP and CP checks of validate(plan) (mamba_tp_ok, mamba_cp_ok), naming the
/// plan field and the model's Mamba-2 heads and groups. Out of line: off the transformer's path.
[[gnu::cold, gnu::noinline]] inline void validate_mamba_plan(const commscale::plan& p, const transformer& m) {
    const std::string shape =
        " (mamba_heads " + std::to_string(m.hybrid->mamba_heads) + ", mamba_groups " + std::to_string(m.hybrid->mamba_groups) + ")";
    if (!mamba_tp_ok(m, p.tp))
        throw input_error("plan.tp", std::to_string(p.tp),
                          "a divisor of the Mamba-2 heads and of their groups" + shape + ": Megatron-Core splits the mixer by both");
    if (!mamba_cp_ok(m, p.tp, p.cp))
        throw input_error("plan.cp", std::to_string(p.cp),
                          "a divisor of the Mamba-2 heads per TP rank, and a divisor or multiple of their groups per TP rank" + shape +
                              " with tp " + std::to_string(p.tp) + ": Megatron-Core's Mamba context parallelism shards heads");
    if (!gdn_split_ok(m, p.tp, p.cp)) {
        const bool tp_bad = !gdn_split_ok(m, p.tp, 1);
        throw input_error(tp_bad ? "plan.tp" : "plan.cp", std::to_string(tp_bad ? p.tp : p.cp),
                          std::string(tp_bad ? "a divisor" : "with tp, a divisor") + " of the Gated DeltaNet key and value heads (" +
                              std::to_string(m.hybrid->gdn_qk_heads) + ", " + std::to_string(m.hybrid->gdn_v_heads) +
                              "): Megatron-Core splits them over tp x cp");
    }
}
}  // namespace detail

namespace detail {
/// validate(plan)'s checks of full recompute's method, the MoE all-to-all overlap and the FP8
/// recipe, out of line: off the planner's hot path (plans that set none of them skip it).
[[gnu::cold, gnu::noinline]] inline void validate_stack_options(const plan& p) {
    if (p.recompute_num_layers < 0 || p.recompute_num_layers > plan_limits::stage_layers)
        throw input_error("plan.recompute_num_layers", std::to_string(p.recompute_num_layers),
                          "0 (every layer) or the layers per recompute group (uniform) or per model chunk (block)");
    if (p.recompute_mode != recompute::full && (p.recompute_num_layers != 0 || p.full_recompute_method != recompute_method::uniform))
        throw input_error(p.recompute_num_layers != 0 ? "plan.recompute_num_layers" : "plan.recompute_method",
                          (p.recompute_num_layers != 0 ? std::to_string(p.recompute_num_layers)
                                                       : std::string(to_string(p.full_recompute_method))) +
                              " with recompute " + std::string(to_string(p.recompute_mode)),
                          "recompute full (Megatron-Core: recompute_num_layers and recompute_method apply to full granularity)");
    if (p.full_recompute_method == recompute_method::block && p.recompute_num_layers < 1)
        throw input_error("plan.recompute_num_layers", std::to_string(p.recompute_num_layers) + " with recompute method block",
                          "the layers to recompute per model chunk, >= 1");
    if (p.moe_a2a_overlap) {
        // Megatron-Core's TransformerConfig (core_v0.15) asserts these for overlap_moe_expert_parallel_comm
        const auto refuse = [&](const std::string& why) {
            throw input_error("plan.overlap_moe_expert_parallel_comm", "true with " + why,
                              "ep > 1, pp = 1 or the interleaved schedule (virtual stages), and no full recompute");
        };
        if (p.ep <= 1) refuse("ep " + std::to_string(p.ep));
        if (p.pp > 1 && p.schedule != pipeline_schedule::interleaved)
            refuse("pp " + std::to_string(p.pp) + " and schedule " + std::string(to_string(p.schedule)));
        if (p.recompute_mode == recompute::full) refuse("recompute full");
    }
    if (p.fp8_scaling != fp8_recipe::delayed && p.precision != dtype::fp8)
        throw input_error("plan.fp8_recipe", std::string(to_string(p.fp8_scaling)) + " with dtype " + std::string(to_string(p.precision)),
                          "dtype fp8 (per-tensor or 128-block scaling; MXFP8 and NVFP4 are dtypes of their own), or delayed");
}

/// validate(plan)'s checks of first_last_layers_bf16 (Megatron-Core TransformerConfig's
/// assertions), out of line: off the planner's hot path.
[[gnu::cold, gnu::noinline]] inline void validate_bf16_layers(const plan& p, int layers) {
    const bool low = p.precision == dtype::fp8 || p.precision == dtype::mxfp8 || p.precision == dtype::nvfp4 || p.precision == dtype::fp4;
    if (!low)
        throw input_error("plan.first_last_layers_bf16", "true with dtype " + std::string(to_string(p.precision)),
                          "a low-precision dtype (fp8, mxfp8, nvfp4, fp4) whose first and last layers stay in BF16");
    if (p.precision == dtype::fp8 && p.fp8_scaling == fp8_recipe::delayed)
        throw input_error("plan.first_last_layers_bf16", "true with fp8_recipe delayed",
                          "fp8_recipe tensorwise or blockwise, mxfp8 or nvfp4 (Megatron-Core: delayed scaling does not support first / last "
                          "layers in BF16)");
    const int per_stage = layers / std::max(1, p.pp);
    const std::string expected = "an integer in [0, layers / pp = " + std::to_string(per_stage) + "]";
    if (p.bf16_layers_at_start < 0 || p.bf16_layers_at_start > per_stage)
        throw input_error("plan.num_layers_at_start_in_bf16", std::to_string(p.bf16_layers_at_start), expected);
    if (p.bf16_layers_at_end < 0 || p.bf16_layers_at_end > per_stage)
        throw input_error("plan.num_layers_at_end_in_bf16", std::to_string(p.bf16_layers_at_end), expected);
}
}  // namespace detail

/// @brief Throws input_error naming the plan field unless the plan is usable for this model on
/// this cluster: every degree >= 1; tp x pp x dp x cp == GPUs; heads % tp == 0 and kv_heads
/// divisible (or divisor, for replicated K/V) ; pp x V <= layers (uneven splits allowed), or with
/// the embedding/loss counted as pipeline layers (layers + extras) % (pp x V) == 0
/// (validate_pipeline_split); B % (dp x b) == 0;
/// experts % ep == 0 and ep x etp dividing tp x cp x dp (EP carved out of DP x CP; with etp =
/// tp: ep divides dp x cp); seq % cp == 0 (and % tp with sequence parallelism);
/// ZeRO stage in 0-3; interleaved needs V >= 2 and pp >= 2 (Megatron-LM's rule); hybrid models:
/// tp and cp that split the Mamba-2 heads and groups (mamba_tp_ok, mamba_cp_ok).
inline void validate(const plan& p, const transformer& m, const cluster& c) {
    auto at_least_one = [](const char* name, long long v, long long hi) {
        if (v < 1 || v > hi) detail::throw_plan_range(name, v, hi);
    };
    at_least_one("tp", p.tp, plan_limits::degree);
    at_least_one("pp", p.pp, plan_limits::degree);
    at_least_one("dp", p.dp, plan_limits::dp);
    at_least_one("cp", p.cp, plan_limits::degree);
    at_least_one("ep", p.ep, plan_limits::degree);
    if (p.etp != 0) at_least_one("etp", p.etp, plan_limits::degree);
    at_least_one("micro_batch", p.micro_batch, plan_limits::micro_batch);
    at_least_one("global_batch", p.global_batch, plan_limits::global_batch);
    at_least_one("seq", p.seq, plan_limits::seq);
    at_least_one("virtual_stages", p.virtual_stages, plan_limits::virtual_stages);
    if (!(p.expert_load >= 1.0) || !(p.expert_load <= 1e6))
        throw input_error("plan.expert_load", detail::number_text(p.expert_load),
                          "the busiest expert rank's load relative to the mean, >= 1 (1 = balanced routing)");
    if (!(p.capacity_factor == 0.0 || (p.capacity_factor > 0.0 && p.capacity_factor <= 1e6)))
        throw input_error("plan.capacity_factor", detail::number_text(p.capacity_factor),
                          "0 (dropless) or a positive capacity factor such as 1.0 or 1.25");
    if (p.pad_to_capacity && p.capacity_factor == 0.0)
        throw input_error("plan.pad_to_capacity", "true without a capacity factor", "a capacity_factor > 0 to pad to");
    if (p.cpu_offloading_num_layers < 0 || p.cpu_offloading_num_layers > plan_limits::stage_layers)
        throw input_error("plan.cpu_offloading_num_layers", std::to_string(p.cpu_offloading_num_layers),
                          "0 (off) or the transformer layers per stage whose activations go to host memory");
    if (p.recompute_modules >= (1u << recompute_module_names.size()))
        throw input_error("plan.recompute_modules", std::to_string(p.recompute_modules),
                          "a bitmask of the recompute_module values (below " + std::to_string(1u << recompute_module_names.size()) + ")");
    // (per-tensor FP8 with a recipe of its own is megatron-core's default, stack_fp8_recipe: only its
    // one rule, a recipe without dtype fp8, needs the slow path)
    if (p.moe_a2a_overlap || (p.fp8_scaling != fp8_recipe::delayed && p.precision != dtype::fp8) ||
        p.recompute_num_layers != 0 || p.full_recompute_method != recompute_method::uniform) [[unlikely]]
        detail::validate_stack_options(p);
    if (p.zero < 0 || p.zero > plan_limits::zero)
        throw input_error("plan.zero", std::to_string(p.zero), "a ZeRO stage 0, 1, 2 or 3 (3 = FSDP)");
    if (p.gradient_accumulation_fusion && !has_gradient_accumulation_fusion(p.stack)) [[unlikely]]
        throw input_error("plan.gradient_accumulation_fusion",
                          std::string(*p.gradient_accumulation_fusion ? "true" : "false") + " with framework " +
                              std::string(to_string(p.stack)),
                          "unset outside the Megatron stacks (megatron-core, megatron-lm), whose setting it is");
    if (p.gradient_bytes != 1 && p.gradient_bytes != 2 && p.gradient_bytes != 4)
        throw input_error("plan.gradient_bytes", std::to_string(p.gradient_bytes), "1, 2 or 4 bytes per gradient element");
    if (p.optimizer_state_bytes < 0 || p.optimizer_state_bytes > plan_limits::optimizer_state_bytes)
        throw input_error("plan.optimizer_state_bytes", std::to_string(p.optimizer_state_bytes),
                          "bytes per parameter of optimizer state in [0, " + std::to_string(plan_limits::optimizer_state_bytes) +
                              "] (12: fp32 main parameters and Adam moments)");
    if (!(p.bucket.value() >= 1.0) || !std::isfinite(p.bucket.value()))
        throw input_error("plan.bucket", detail::number_text(p.bucket.value()) + " B", "a size >= 1 B");
    if (!(p.bucket_per_dp.value() >= 0.0) || !std::isfinite(p.bucket_per_dp.value()))
        throw input_error("plan.bucket_per_dp", detail::number_text(p.bucket_per_dp.value()) + " B", "a size >= 0 B");
    if (p.compute_efficiency &&
        (!(*p.compute_efficiency > 0.0) || *p.compute_efficiency > 1.0 || !std::isfinite(*p.compute_efficiency)))
        throw input_error("plan.compute_efficiency", detail::number_text(*p.compute_efficiency),
                          "a fraction of peak in (0, 1]");
    const long long gpus = static_cast<long long>(c.nodes) * c.node.gpus;
    if (p.gpus() != gpus)
        throw input_error("plan.tp x pp x dp x cp",
                          std::to_string(p.tp) + " x " + std::to_string(p.pp) + " x " + std::to_string(p.dp) +
                              " x " + std::to_string(p.cp) + " = " + std::to_string(p.gpus()),
                          "the cluster's GPU count (" + std::to_string(gpus) + ")");
    if (m.heads % p.tp != 0)
        throw input_error("plan.tp", std::to_string(p.tp),
                          "a divisor of the attention heads (" + std::to_string(m.heads) + ")");
    if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
        throw input_error("plan.tp", std::to_string(p.tp),
                          "a divisor or multiple of the key/value heads (" + std::to_string(m.kv_heads) + ")");
    if (m.is_hybrid() && (p.tp > 1 || p.cp > 1)) [[unlikely]]
        detail::validate_mamba_plan(p, m);
    if (!attention_cp_ok(m, p.attention, p.stack, p.cp)) [[unlikely]]
        throw input_error("plan.cp", std::to_string(p.cp),
                          "1 for a model that soft-caps its attention scores under megatron-core (Transformer Engine's "
                          "attention cannot soft-cap; Megatron-Core's unfused DotProductAttention runs no context "
                          "parallelism); or --framework fsdp/deepspeed, whose flash-attn soft-caps");
    if (p.schedule == pipeline_schedule::interleaved && (p.virtual_stages < 2 || p.pp < 2))
        throw input_error("plan.virtual_stages", std::to_string(p.virtual_stages),
                          "V >= 2 with pp >= 2 for the interleaved schedule (pp = " + std::to_string(p.pp) + ")");
    if (p.schedule != pipeline_schedule::interleaved && p.virtual_stages != 1)
        throw input_error("plan.virtual_stages", std::to_string(p.virtual_stages),
                          "1 unless the schedule is interleaved");
    const long long chunks = static_cast<long long>(p.pp) * p.chunks();
    if (p.pipeline_split_extras() == 0 && m.layers < chunks) detail::throw_too_many_stages(p, m.layers);
    validate_pipeline_split(p, m.layers);
    validate_stage_layers(p, m.layers);
    if (p.first_last_layers_bf16) [[unlikely]]
        detail::validate_bf16_layers(p, m.layers);
    // Megatron-Core's TransformerConfig rejects cpu_offloading_num_layers >= num_layers
    if (p.cpu_offloading_num_layers >= m.layers && p.cpu_offloading_num_layers > 0)
        throw input_error("plan.cpu_offloading_num_layers", std::to_string(p.cpu_offloading_num_layers),
                          "fewer than the model's layers (" + std::to_string(m.layers) + "), 0 = off");
    // ... and activation CPU offloading with pipeline parallelism or with activation recomputation
    // (megatron/core/transformer/transformer_config.py, core_v0.15-0.17: "Currently there is no
    // support for Pipeline parallelism with CPU offloading", "CPU offloading does not work when
    // activation recomputation is enabled")
    if (p.cpu_offloading_num_layers > 0 && p.pp > 1)
        throw input_error("plan.cpu_offloading_num_layers", std::to_string(p.cpu_offloading_num_layers) + " with pp " + std::to_string(p.pp),
                          "0 with pipeline parallelism (Megatron-Core offloads activations only with pp = 1)");
    if (p.cpu_offloading_num_layers > 0 && (p.recompute_mode != recompute::none || p.recompute_modules != 0))
        throw input_error("plan.cpu_offloading_num_layers",
                          std::to_string(p.cpu_offloading_num_layers) + " with recompute " +
                              (p.recompute_modules != 0 ? std::string("modules") : std::string(to_string(p.recompute_mode))),
                          "0 with activation recomputation (Megatron-Core does not offload and recompute together)");
    const long long per_step = static_cast<long long>(p.dp) * p.micro_batch;
    if (p.global_batch % per_step != 0)
        throw input_error("plan.global_batch", std::to_string(p.global_batch),
                          "a multiple of dp x micro_batch (" + std::to_string(per_step) + ")");
    if ((p.schedule == pipeline_schedule::zb_v || p.schedule == pipeline_schedule::dualpipe) && p.pp < 2)
        throw input_error("plan.schedule", std::string(to_string(p.schedule)) + " with pp " + std::to_string(p.pp),
                          "pp >= 2 (with pp = 1 use 1f1b)");
    if (p.schedule == pipeline_schedule::zb_v && m.layers < 2LL * p.pp)
        throw input_error("plan.pp", std::to_string(p.pp) + " with zb-v",
                          "at most half the layers (" + std::to_string(m.layers) + "): ZB-V puts two chunks on each device");
    if (p.schedule == pipeline_schedule::dualpipe && p.pp % 2 != 0)
        throw input_error("plan.pp", std::to_string(p.pp) + " with dualpipe", "an even number of stages for DualPipe");
    if (const long long mbs = p.global_batch / per_step; !schedule_accepts(p.schedule, p.pp, mbs))
        throw input_error("plan.global_batch", std::to_string(p.global_batch) + " (" + std::to_string(mbs) + " micro-batches)",
                          p.schedule == pipeline_schedule::zb_h1
                              ? "at least pp (" + std::to_string(p.pp) + ") micro-batches for zb-h1"
                              : "at least 2 x pp (" + std::to_string(2 * p.pp) + ") micro-batches" +
                                    (p.schedule == pipeline_schedule::dualpipe ? ", an even number," : "") + " for " +
                                    std::string(to_string(p.schedule)));
    if (p.ep != 1 && m.experts % p.ep != 0)
        throw input_error("plan.ep", std::to_string(p.ep), "a divisor of the experts (" + std::to_string(m.experts) + ")");
    if (p.ep != 1 || p.etp != 0) {  // (ep 1 with etp = tp holds for every plan: no divisions)
        // Megatron-Core (megatron/core/parallel_state.py, initialize_model_parallel): the expert
        // layers decompose each pipeline stage's tp x cp x dp ranks as etp x ep x expert-DP
        const long long stage = static_cast<long long>(p.tp) * p.cp * p.dp;
        const int etp = p.expert_tp();
        if (p.etp != 0 && (!m.is_moe() ? etp != p.tp : m.expert_width() % etp != 0))
            throw input_error("plan.etp", std::to_string(p.etp),
                              m.is_moe() ? "a divisor of the expert width (" + std::to_string(m.expert_width()) + ")"
                                         : "tp (" + std::to_string(p.tp) + ") or 0 for a dense model (no experts to split)");
        if (stage % etp != 0)
            throw input_error("plan.etp", std::to_string(etp),
                              "a divisor of tp x cp x dp (" + std::to_string(stage) + "): the expert layers' ranks of one stage");
        if ((stage / etp) % p.ep != 0) {
            if (etp == p.tp) {
                // name the flag that makes the plan valid: folding EP over TP (expert TP 1, as the
                // published Megatron-Bridge MoE recipes run) when ep divides tp x cp x dp
                std::string hint;
                if (p.tp > 1 && stage % p.ep == 0)
                    hint = "; or expert tensor parallelism 1 (--etp 1, Megatron's --expert-tensor-parallel-size 1), "
                           "which folds EP over TP: ep then divides tp x cp x dp (" + std::to_string(stage) + ")";
                throw input_error("plan.ep", std::to_string(p.ep),
                                  "a divisor of dp x cp (" + std::to_string(p.dp) + " x " + std::to_string(p.cp) + " = " +
                                      std::to_string(static_cast<long long>(p.dp) * p.cp) +
                                      "): expert parallelism is carved out of data and context parallelism" + hint);
            }
            throw input_error("plan.ep", std::to_string(p.ep),
                              "a divisor of tp x cp x dp / etp (" + std::to_string(stage) + " / " + std::to_string(etp) + " = " +
                                  std::to_string(stage / etp) + "): expert parallelism is carved out of the stage's ranks");
        }
    }
    if (p.seq % p.cp != 0)
        throw input_error("plan.seq", std::to_string(p.seq), "a multiple of cp (" + std::to_string(p.cp) + ")");
    if (p.sequence_parallel && (p.seq / p.cp) % p.tp != 0)
        throw input_error("plan.seq", std::to_string(p.seq),
                          "a multiple of cp x tp (" + std::to_string(p.cp * p.tp) + ") with sequence parallelism");
    if (c.node.intra.per_direction.value() == 0.0 && c.node.gpus > 1)
        throw input_error("cluster.intra.link", "0 GB/s", "a link with positive bandwidth");
}

/// @brief The parallel dimensions, in rank order from innermost (the dense layers' TP, CP, EP,
/// PP, DP), and the expert layers' own two groups: etp (expert tensor parallelism, innermost) and
/// edp (expert data parallelism: the ranks holding the same expert shard).
enum class parallel_dim { tp, cp, ep, pp, dp, etp, edp };

/// @brief Members of one group of size `n` whose consecutive members are `stride` ranks apart
/// that share a node of `g` GPUs: all n if the group fits in the node's span, else g / stride
/// (at least 1).
[[nodiscard]] constexpr int members_per_node(int n, long long stride, int g) {
    if (stride >= g) return 1;
    const long long fit = g / stride;  // members reachable inside one node at this stride
    return static_cast<int>(fit >= n ? n : (fit < 1 ? 1 : fit));
}

/// @brief Ranks of the innermost block of one pipeline stage that holds whole expert groups: the
/// least common multiple of tp x cp (the dense layers' inner dimensions) and etp x ep (the expert
/// layers'), i.e. tp x cp x the part of DP that the EP groups reach into. Ranks of this block are
/// consecutive; PP comes after it and the rest of DP outermost. With etp = tp and cp = 1 it is
/// tp x ep (EP carved out of DP right after TP); without EP, tp x cp.
[[nodiscard]] constexpr long long expert_block_ranks(const plan& p) {
    auto gcd = [](long long a, long long b) {
        while (b != 0) {
            const long long r = a % b;
            a = b;
            b = r;
        }
        return a;
    };
    const long long dense = static_cast<long long>(p.tp > 0 ? p.tp : 1) * (p.cp > 0 ? p.cp : 1);
    if (p.ep <= 1 && p.expert_tp() == p.tp) return dense;  // tp divides tp x cp: no gcd (the dense case)
    const long long expert = static_cast<long long>(p.expert_tp()) * (p.ep > 0 ? p.ep : 1);
    const long long g = gcd(dense, expert);
    return g > 0 ? dense / g * expert : dense;
}

/// @brief Where one group of a parallel dimension lives on the cluster, from the rank layout
/// TP (innermost), CP, DP_in, PP, DP_out (outermost), where TP x CP x DP_in is the expert block
/// (expert_block_ranks): the expert layers see the same block as ETP x EP x expert-DP_in, ETP
/// innermost, then EP (Megatron-Core's expert rank generator, megatron/core/parallel_state.py:
/// order tp-ep-dp-pp over the same ranks). Per group:
///   stride of a dimension = product of the sizes of the dimensions inside it;
///   ranks per node       = members_per_node(size, stride, gpus per node).
/// TP: tp ranks at stride 1; CP: cp at stride tp; EP: ep at stride etp; ETP: etp at stride 1.
/// The DP group (gradient reduction of dense parameters, dp x cp ranks) spans CP x DP_in inside
/// the block and DP_out outside it: its members per node multiply over both segments; the
/// expert-DP group likewise spans the block's expert-DP_in (stride etp x ep) and DP_out. For `pp`
/// the group is the two neighbouring stages of a send/recv (ranks = 2), at the block's stride.
/// Assumes degrees that divide the node or are multiples of it (as deployments do); a stride is
/// reported in ranks (>= the node size means one member per node).
[[nodiscard, gnu::always_inline]] constexpr placement group_placement(const plan& p, parallel_dim d, int gpus_per_node) {
    const int g = gpus_per_node;
    const int etp = p.expert_tp();
    const long long block = expert_block_ranks(p);
    const long long s_tp = 1, s_cp = p.tp, s_ep = etp, s_pp = block, s_dp = s_pp * p.pp;
    const long long dp_in = block / (static_cast<long long>(p.tp) * p.cp);
    const int outer = static_cast<int>(dp_in > 0 && p.dp >= dp_in ? p.dp / dp_in : 1);
    auto make = [](int ranks, int per_node, long long stride) {
        return placement{ranks, per_node < 1 ? 1 : per_node, static_cast<int>(stride > (1LL << 30) ? (1LL << 30) : stride)};
    };
    // a group of `inner` members at stride `s_in` inside the block and `outer` blocks at stride s_dp
    auto spanning = [&](int ranks, int inner, long long s_in) {
        long long per = static_cast<long long>(members_per_node(inner, s_in, g)) * members_per_node(outer, s_dp, g);
        // A node size the model-parallel span does not tile (72-GPU NVL72 racks with
        // tp x cp x ep x pp = 32) leaves some nodes with one member more than the floor
        // above: the group's GPUs (outer x s_dp) fill ceil(outer x s_dp / g) nodes, so at
        // least ranks / that many share one. Layouts that tile are unchanged (equality).
        const long long span_nodes = (static_cast<long long>(outer) * s_dp + g - 1) / g;
        if (span_nodes >= 1) {
            const long long fill = (ranks + span_nodes - 1) / span_nodes;
            if (fill > per) per = fill;
        }
        return make(ranks, static_cast<int>(per > ranks ? ranks : per), inner > 1 ? s_in : s_dp);
    };
    switch (d) {
        case parallel_dim::tp: return make(p.tp, members_per_node(p.tp, s_tp, g), s_tp);
        case parallel_dim::cp: return make(p.cp, members_per_node(p.cp, s_cp, g), s_cp);
        case parallel_dim::ep: return make(p.ep, members_per_node(p.ep, s_ep, g), s_ep);
        case parallel_dim::etp: return make(etp, members_per_node(etp, s_tp, g), s_tp);
        case parallel_dim::pp: {
            const int n = p.pp >= 2 ? 2 : 1;
            return make(n, members_per_node(n, s_pp, g), s_pp);
        }
        case parallel_dim::dp:
            // dense-parameter gradients reduce over dp x cp ranks (Megatron reduces over DP x CP)
            return spanning(p.dp * p.cp, static_cast<int>(p.cp * dp_in), s_cp);
        case parallel_dim::edp: {
            const long long shard = static_cast<long long>(etp) * p.ep;
            return spanning(p.expert_dp(), static_cast<int>(block / shard), shard);
        }
    }
    return placement{};
}

}  // namespace commscale
