#pragma once
/// @file parallel/framework.hpp
/// @brief Software-stack profiles: what each training framework does by default that changes
/// a step's time: optimizer-state sharding (ZeRO stage / distributed optimizer), the precision
/// gradients are reduced in, gradient bucket sizes, which communication it overlaps with what,
/// the attention kernel, and its pipeline engine. A profile is a documented bundle of defaults;
/// `apply_framework` writes it into a plan, after which explicit choices may override any field.
///
/// Each default cites the stack's own source file or documentation (paths as of the versions
/// named). Where a stack's library default differs from what its published performance recipes
/// run, the profile follows the recipes and says so: a profile describes how people train with
/// that stack, and every field can be overridden.
///
/// Formulas and their sources, in one place: docs/model.md#software-stack-profiles.

#include <array>
#include <string>
#include <string_view>

#include "../detail/names.hpp"
#include "../error.hpp"
#include "../units.hpp"

namespace commscale {

/// @brief Training software stacks with a profile.
enum class framework { megatron_core, megatron_lm, megatron_deepspeed, deepspeed, fsdp };
inline constexpr std::size_t framework_count = 5;

/// @brief CLI/JSON spellings of the stacks: `to_string`, `parse<framework>`.
inline constexpr std::array<name_entry<framework>, framework_count> framework_spellings{{
    {framework::megatron_core, "megatron-core"},
    {framework::megatron_lm, "megatron-lm"},
    {framework::megatron_deepspeed, "megatron-deepspeed"},
    {framework::deepspeed, "deepspeed"},
    {framework::fsdp, "fsdp"},
}};
static_assert(detail::in_enum_order(framework_spellings));
[[nodiscard]] constexpr const auto& name_table(framework) { return framework_spellings; }

/// @brief Whether `f` runs Megatron's own data-parallel wrappers and Transformer Engine's fused
/// weight-gradient accumulation (megatron-core, megatron-lm): the stacks with a
/// `--no-gradient-accumulation-fusion` (plan::gradient_accumulation_fusion).
[[nodiscard]] constexpr bool has_gradient_accumulation_fusion(framework f) {
    return f == framework::megatron_core || f == framework::megatron_lm;
}

/// @brief How a stack computes attention. `flash`: a fused IO-aware kernel (FlashAttention 2/3,
/// cuDNN fused attention through Transformer Engine, PyTorch SDPA); the s x s scores never reach
/// HBM. `unfused`: batched GEMMs for Q K^T and A V with a fused scale-mask-softmax and dropout
/// between them, the scores written to and read from HBM (Megatron-LM before
/// `--use-flash-attn`, 2023; Shoeybi et al. 2019; Korthikanti et al. 2022 Sec. 4.1's 5 a s^2 b
/// bytes are those tensors).
enum class attention_kernel { flash, unfused };

/// @brief CLI/JSON spellings of the attention kernels: `to_string`, `parse<attention_kernel>`.
inline constexpr std::array<name_entry<attention_kernel>, 2> attention_kernel_spellings{{
    {attention_kernel::flash, "flash"},
    {attention_kernel::unfused, "unfused"},
}};
static_assert(detail::in_enum_order(attention_kernel_spellings));
[[nodiscard]] constexpr const auto& name_table(attention_kernel) { return attention_kernel_spellings; }

/// @brief How an MoE layer sends its tokens to the expert-parallel ranks and back, and which
/// permutations it runs around that (Megatron-Core `--moe-token-dispatcher-type`, and with `flex`
/// `--moe-flex-dispatcher-backend`; megatron/core/transformer/moe/token_dispatcher.py).
/// * `alltoall` (MoEAlltoAllTokenDispatcher): permutes the tokens into one copy per selected
///   expert, sends them by NCCL all-to-all (payload T k h per rank), sorts the received copies by
///   local expert when a rank holds more than one (sort_chunks_by_idxs), and undoes both on the way
///   back; each MoE layer copies its split sizes to the host and synchronizes.
/// * `deepep` (`flex` with DeepEP, _DeepepManager): the communication kernels send each token once
///   per destination rank (deepseek-ai/DeepEP README), and the received tokens are permuted by
///   local expert on the rank.
/// * `hybridep` (`flex` with HybridEP, _HybridEPManager): one kernel permutes, sends and permutes
///   again for the experts, and its combine undoes it (DeepEP branch hybrid-ep,
///   docs/README_Hybrid-EP.md); each token sent once per destination rank.
/// The flex backends need expert parallelism (EP x expert TP > 1); a layer without it has no
/// dispatch and runs the all-to-all dispatcher's local permutations (layer_shape).
enum class moe_token_dispatcher { alltoall, deepep, hybridep };

/// @brief CLI/JSON spellings of the MoE token dispatchers.
inline constexpr std::array<name_entry<moe_token_dispatcher>, 3> moe_token_dispatcher_spellings{{
    {moe_token_dispatcher::alltoall, "alltoall"},
    {moe_token_dispatcher::deepep, "deepep"},
    {moe_token_dispatcher::hybridep, "hybridep"},
}};
static_assert(detail::in_enum_order(moe_token_dispatcher_spellings));
[[nodiscard]] constexpr const auto& name_table(moe_token_dispatcher) { return moe_token_dispatcher_spellings; }

/// @brief The defaults one stack applies. Bytes are per gradient element; a bucket of 0 means
/// "one bucket holding the whole gradient" (a contiguous buffer reduced in one call).
struct framework_profile {
    framework stack = framework::megatron_core;
    int zero = 1;                        ///< optimizer sharding: 0 none, 1 distributed optimizer / ZeRO-1, 2, 3 = FSDP
    int gradient_bytes = 4;              ///< precision gradients are reduced in across DP
    double bucket_params = 40e6;         ///< gradient bucket, in parameters (0 = whole gradient)
    double bucket_params_per_dp = 1e6;   ///< bucket grows with the DP size: max(bucket, this x dp)
    bool overlap_grad_reduce = true;     ///< DP gradient reduction runs under the backward
    bool overlap_param_gather = true;    ///< ZeRO parameter all-gathers run under the forward
    bool overlap_tp = true;              ///< TP collectives overlapped with GEMMs (userbuffers; needs SP)
    bool overlap_pp = true;              ///< steady-state pipeline send/recv overlapped with compute
    bool sequence_parallel = true;       ///< with TP >= 2, sequence parallelism (stack_sequence_parallel)
    bool fp8_current_scaling = true;     ///< per-tensor FP8 scaled from each tensor's own amax (stack_fp8_recipe)
    bool fp8_param_gather = true;        ///< FP8/MXFP8 models keep their weights quantized (plan::fp8_param_gather)
    bool expert_tp_one = true;           ///< MoE experts unsplit by TP (expert TP 1; stack_expert_tp)
    attention_kernel attention = attention_kernel::flash;
    bool reduce_every_micro_batch = false;  ///< gradients reduced after every micro-batch (no accumulation window)
    moe_token_dispatcher dispatcher = moe_token_dispatcher::hybridep;  ///< how MoE tokens reach their experts
    std::string_view source;             ///< where the defaults come from
};

/// @brief The profile of `f`. Sources per stack:
/// * megatron-core (Megatron-Core / NeMo 2023-2026): the configuration of Megatron-LM's published
///   weak-scaling table (README "Performance": `--use-distributed-optimizer --overlap-grad-reduce
///   --overlap-param-gather --tp-comm-overlap`); buckets of max(40M, 1M x DP) parameters
///   (megatron/core/distributed/distributed_data_parallel.py, `bucket_size`, in elements);
///   gradients kept and reduced in bf16, as NVIDIA's performance recipes run every model
///   (Megatron-Bridge r0.2.0 scripts/performance/configs/*/*_llm_pretrain.py:
///   `ddp.grad_reduce_in_fp32 = False`; NeMo 2.0's performance scripts likewise), not Megatron-LM's
///   training loop, where bf16 forces `accumulate_allreduce_grads_in_fp32` (megatron/training/
///   arguments.py; `--gradient-bytes 4`, or a runs CSV's `grad_reduce_in_fp32` true, for those runs);
///   `overlap_p2p_comm` on (arguments.py
///   `--no-overlap-p2p-communication` turns it off); Transformer Engine fused attention; the flex
///   MoE dispatcher with HybridEP, as NVIDIA's performance recipes run their MoE models on every
///   system they list (Megatron-Bridge src/megatron/bridge/perf_recipes: DeepSeek-V3/V4, Kimi K2,
///   Qwen3 MoE, GPT-OSS through gpt_oss/common.py, Nemotron-H; `moe_token_dispatcher_type = "flex"`,
///   `moe_flex_dispatcher_backend = "hybridep"`), not Megatron-Core's library default (allgather).
///   The other stacks send MoE tokens by all-to-all (DeepSpeed-MoE, torchtitan). Sequence
///   parallelism with every TP >= 2, as NVIDIA's performance recipes set it (Megatron-Bridge r0.2.0
///   scripts/performance/utils/utils.py: `WorkloadBaseConfig.sequence_parallel` is
///   `tensor_model_parallel_size > 1`), not Megatron-Core's library default (off); the TP overlap
///   above needs it. Per-tensor FP8 with current scaling (`--fp8-recipe tensorwise`), the only
///   per-tensor FP8 those scripts run (scripts/performance/argument_parser.py `--compute_dtype`
///   choices bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4; utils/helpers.py maps fp8_cs to
///   `bf16_with_fp8_current_scaling_mixed`), not Megatron-Core's library default (delayed).
///   The other profiles keep delayed scaling: Transformer Engine's default recipe, which
///   Composer's `amp_fp8` (llm-foundry) and DeepSpeed run; torchtitan's torchao float8 scales
///   tensorwise from the current amax (torchao `Float8LinearRecipeName.TENSORWISE`, its default;
///   delayed scaling removed in torchao 0.10, pytorch/ao#1680): `--fp8-recipe tensorwise` there.
///   FP8 parameters (`--fp8-param-gather`), which every FP8 and MXFP8 mixed-precision config of
///   Megatron-Bridge r0.2.0 sets (src/megatron/bridge/training/mixed_precision.py:
///   `cfg.fp8_param_gather = True` in bf16_with_fp8_delayed_scaling_mixed,
///   bf16_with_fp8_current_scaling_mixed, bf16_with_mxfp8_mixed and the rest), not
///   Megatron-Core's library default (off); the other profiles keep 16-bit weights (torchao's
///   float8 all-gather casts 16-bit shards as it gathers them).
///   Expert tensor parallelism 1, which every Megatron-Bridge r0.2.0 MoE recipe sets
///   (`expert_tensor_parallel_size = 1` in src/megatron/bridge/recipes deepseek_v3.py, gpt_oss.py,
///   qwen3_moe.py, qwen3_next.py, glm45.py, moonlight_16b.py and the performance scripts' MoE
///   workload configs), not Megatron-Core's library default (the TP degree); the other profiles
///   keep that default.
/// * megatron-lm (2021-2022, Narayanan et al. 2021; Korthikanti et al. 2022): no optimizer
///   sharding; gradients in one contiguous fp32 buffer all-reduced after the backward pass
///   (megatron/model/distributed.py `allreduce_gradients`, called after the pipeline schedule);
///   blocking `batch_isend_irecv` for pipeline transfers (megatron/p2p_communication.py);
///   unfused attention (fused scale-mask-softmax kernels).
/// * megatron-deepspeed (BLOOM, MT-NLG): DeepSpeed ZeRO-1 with its pipeline engine; gradients
///   reduced after the whole pipeline schedule (deepspeed/runtime/pipe/schedule.py `TrainSchedule`
///   ends with `ReduceGrads`), fp32 gradient accumulation (BF16_Optimizer), 5e8-element reduce
///   buckets (deepspeed/runtime/zero/config.py `reduce_bucket_size`), blocking p2p, and the
///   attention of the published runs (no FlashAttention).
/// * deepspeed (ZeRO-3 without Megatron: Hugging Face Trainer/Accelerate, DeepSpeed-Chat):
///   stage 3 with `overlap_comm` (its default for stage 3, deepspeed/runtime/zero/config.py),
///   gradients reduced in the training precision (`communication_data_type` defaults to the model
///   dtype), 5e8-element buckets, reduced after every micro-batch (ZeRO-3 reduces in backward
///   hooks), FlashAttention/SDPA attention.
/// * fsdp (PyTorch FSDP/FSDP2, torchtitan, Composer): FULL_SHARD (ZeRO-3) with per-layer
///   all-gathers prefetched one layer ahead and per-layer reduce-scatters in the backward
///   (torch/distributed/fsdp; Zhao et al. 2023, "PyTorch FSDP", Sec. 3.3-3.4); gradients reduced in
///   fp32 (torchtitan `mixed_precision_reduce = "float32"`); after every micro-batch (torchtitan
///   does not skip gradient sync during accumulation); SDPA flash attention; no TP overlap; with
///   TP >= 2, sequence parallelism (torchtitan's `apply_tp` shards the embedding output and the
///   norms on the sequence dimension: `SequenceParallel()`; PyTorch's TP tutorial likewise).
[[nodiscard]] constexpr framework_profile profile_of(framework f) {
    framework_profile p;
    p.stack = f;
    switch (f) {
        case framework::megatron_core:
            p.gradient_bytes = 2;
            p.source = "Megatron-LM README performance table flags; megatron/core/distributed/distributed_data_parallel.py";
            break;
        case framework::megatron_lm:
            p.sequence_parallel = false;
            p.fp8_current_scaling = false;
            p.fp8_param_gather = false;
            p.expert_tp_one = false;
            p.zero = 0;
            p.bucket_params = 0;
            p.bucket_params_per_dp = 0;
            p.overlap_grad_reduce = false;
            p.overlap_param_gather = false;
            p.overlap_tp = false;
            p.overlap_pp = false;
            p.attention = attention_kernel::unfused;
            p.dispatcher = moe_token_dispatcher::alltoall;
            p.source = "Narayanan et al. 2021; Megatron-LM 2021-2022 megatron/model/distributed.py, p2p_communication.py";
            break;
        case framework::megatron_deepspeed:
            p.sequence_parallel = false;
            p.fp8_current_scaling = false;
            p.fp8_param_gather = false;
            p.expert_tp_one = false;
            p.zero = 1;
            p.bucket_params = 5e8;
            p.bucket_params_per_dp = 0;
            p.overlap_grad_reduce = false;
            p.overlap_param_gather = false;
            p.overlap_tp = false;
            p.overlap_pp = false;
            p.attention = attention_kernel::unfused;
            p.dispatcher = moe_token_dispatcher::alltoall;
            p.source = "DeepSpeed deepspeed/runtime/pipe/schedule.py, deepspeed/runtime/zero/config.py; Smith et al. 2022";
            break;
        case framework::deepspeed:
            p.sequence_parallel = false;
            p.fp8_current_scaling = false;
            p.fp8_param_gather = false;
            p.expert_tp_one = false;
            p.zero = 3;
            p.gradient_bytes = 2;
            p.bucket_params = 5e8;
            p.bucket_params_per_dp = 0;
            p.overlap_tp = false;
            p.overlap_pp = false;
            p.reduce_every_micro_batch = true;
            p.dispatcher = moe_token_dispatcher::alltoall;
            p.source = "DeepSpeed deepspeed/runtime/zero/config.py (stage 3, overlap_comm, reduce_bucket_size)";
            break;
        case framework::fsdp:
            p.fp8_current_scaling = false;
            p.fp8_param_gather = false;
            p.expert_tp_one = false;
            p.zero = 3;
            p.bucket_params = 0;  // FSDP reduces per wrapped layer, not in buckets
            p.bucket_params_per_dp = 0;
            p.overlap_tp = false;
            p.overlap_pp = false;
            p.reduce_every_micro_batch = true;
            p.dispatcher = moe_token_dispatcher::alltoall;
            p.source = "PyTorch FSDP (Zhao et al. 2023); torchtitan defaults (mixed_precision_reduce float32)";
            break;
    }
    return p;
}

/// @brief Fraction by which GPU kernels slow down while a collective runs beside them: NCCL's
/// kernels occupy SMs (one CTA per channel; 16-32 channels on NVLink/IB systems, NCCL's
/// NCCL_MAX_NCHANNELS defaults) and contend for HBM bandwidth, out of 108 (A100) or 132 (H100)
/// SMs: 16/132 = 0.12. Overlapped communication therefore costs `overlap_compute_slowdown` x its
/// hidden time in extra compute (Megatron-Core's `--tp-comm-overlap` docs and Transformer Engine
/// userbuffers limit communication to a few SMs for the same reason). A documented default that
/// calibration can replace.
inline constexpr double overlap_compute_slowdown = 0.12;

}  // namespace commscale
