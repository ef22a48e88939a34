#pragma once
/// @file predict/compute.hpp
/// @brief How long one GPU computes one transformer layer, for its shapes and precision: the
/// GEMMs of the layer on a roofline (Williams et al. 2009, "Roofline"; NVIDIA "GPU Performance
/// Background User's Guide": a GEMM is math-bound when its arithmetic intensity
/// 2MNK / (bytes of A, B, C) exceeds peak FLOP/s / memory bandwidth, otherwise memory-bound),
/// the attention core with its own kernel efficiency, and the memory-bound element-wise kernels
/// (norms, residual adds, dropout, activation functions, rotary embedding, fp8 casts) at a
/// fraction of the HBM bandwidth. Small hidden sizes, short sequences and large TP degrees run
/// further below peak because element-wise traffic grows with b s h while GEMM work grows with
/// b s h^2; fp8 speeds up the GEMMs only (attention and element-wise kernels stay in bf16, as in
/// Transformer Engine's default recipe), and adds the casts of every GEMM input.
///
/// All times are for one micro-batch on one GPU. Allocation-free, constexpr-friendly.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../hardware/accelerator.hpp"
#include "../hardware/accelerators.hpp"
#include "../parallel/framework.hpp"
#include "../parallel/plan.hpp"
#include "../units.hpp"
#include "../workload/flops.hpp"
#include "../workload/transformer.hpp"

namespace commscale {

/// @brief The compute model's constants that no kernel benchmark pins down for a whole training
/// stack, each with the kernel-level figure it starts from (its prior) and, as the checked-in
/// default `fitted_compute_constants`, the value fitted to the project's calibration set
/// (data/calibration/published_runs.csv, 118 published runs; calibrate/compute_fit.hpp, `commscale
/// fit-compute`). A what-if that wants the kernel-level figures alone passes `kernel_constants`.
struct compute_constants {
    /// Fraction of the accelerator's best-shape matmul rate (its MAMF figure, accelerator::
    /// compute_efficiency) that a transformer layer's own GEMMs sustain, forward and backward.
    /// Kernel figure: a 5B-parameter layer's 12 BF16 GEMMs on B300 run at 1503 TFLOP/s against a
    /// best shape of 1769 (Transformer Engine docs/examples/gemm_profiling; ml-engineering MAMF
    /// table): 0.85.
    double gemm_shape_efficiency = 0.85;
    /// FlashAttention-2's fraction of the bf16 dense peak at long sequences, forward and backward
    /// together (backward = 2.5 x forward FLOPs), in the PyTorch stacks (FSDP, DeepSpeed,
    /// Megatron-LM and Megatron-DeepSpeed with --use-flash-attn). Kernel figure: FlashAttention-2 on
    /// A100, causal, head dim 128, 16K tokens: 189 of 312 TFLOP/s fwd+bwd (flash-attention README;
    /// Dao 2023, Sec. 4.1): 0.6. The calibration runs it is fitted to, llm-foundry's on A100, ran
    /// flash-attn 1.0's Triton FlashAttention (its benchmark script's default `--attn_impl triton`),
    /// about half FA2's rate, so the fitted value is that kernel's, standing in for the PyTorch
    /// stacks' work the model does not charge (docs/accuracy.md, item (14)).
    double attention_efficiency = 0.6;
    /// The same for Megatron-Core, whose Transformer Engine runs cuDNN's fused attention (or
    /// FlashAttention-3 on Hopper). Kernel figure: cuDNN forward, causal, head dim 128, on H100:
    /// 539 of 989 TFLOP/s at 16K tokens, the backward at 0.85-0.9x the forward's rate (flash-attention
    /// README; FlashAttention-3, Shah et al. 2024): 0.5.
    double te_attention_efficiency = 0.5;
    /// Fraction of the HBM bandwidth that the memory-bound kernels (norms, activations, residuals,
    /// rotary, casts, cross-entropy, optimizer) sustain. Kernel figure: best-in-class reductions
    /// hold ~90% of H100's HBM, Megatron's RMSNorm forward 2.07 TB/s (62%) and its backward 4-5x the
    /// forward time (Dao-AILab/quack membound-sol; Liger-Kernel benchmark data): 0.8.
    double memory_efficiency = 0.8;
    /// GPU time per kernel beyond its work, in seconds: the launch latency and the ramp and tail
    /// of each dependent kernel, charged for every kernel of a layer (layer_kernel_count). Kernel
    /// figure: a CUDA launch takes 5-20 us on the CPU (HolisticTraceAnalysis kernel launch stats),
    /// mostly hidden while the GPU is busy; 2 us of it reaches the GPU timeline.
    double kernel_overhead_s = 2e-6;
    /// Share of the dense GEMMs' rate that the routed experts' grouped GEMMs keep (many narrow
    /// GEMMs of a few hundred to a few thousand tokens each). Kernel figure: torchao's MXFP8 grouped
    /// GEMM on B200 with DeepSeek-V3 shapes runs its forward at 65.6% of peak against the FP8 best
    /// shape's 76.3% (pytorch/ao torchao/prototype/moe_training README; ml-engineering MAMF): 0.86.
    double grouped_gemm_efficiency = 0.86;
    /// Time per kernel of an MoE layer's expert computation (layer_kernels::moe_forward: each local
    /// expert's GEMMs and their quantization, the activation, the dispatcher's permutations, with
    /// dropless routing; layer_kernels::moe_backward: the experts' dgrad and wgrad GEMMs), in
    /// seconds. Forward: Megatron-Core's dispatchers copy the tokens per expert to the host and
    /// synchronize once per MoE layer (MoEAlltoAllTokenDispatcher._maybe_dtoh_and_synchronize; the
    /// flex dispatcher's num_permuted_tokens, megatron/core/transformer/moe/token_dispatcher.py),
    /// so the GPU drains and the kernels after it run as the CPU launches them: max(kernels x this,
    /// their GEMM time) (detail::set_kernel_overheads). Backward: no synchronization, but
    /// Transformer Engine's GroupedLinear runs the dgrad and wgrad GEMM of each local expert as its
    /// own cuBLASLt call on one of several streams (general_grouped_gemm ->
    /// nvte_multi_tensor_gemm), each charged in full, whatever the routing; under Megatron-Core's
    /// `--overlap-moe-expert-parallel-comm` with dropless routing, the backward's other expert
    /// kernels too (layer_shape::paced_backward_share). Kernel figure: that
    /// multi-stream path runs 8 expert GEMMs of 128 tokens (N = K = 2,048, NVFP4) in 0.267 ms on
    /// SM100, GEMMs alone with the operands prepared beforehand (NVIDIA/TransformerEngine PR 3134,
    /// benchmarks/linear/benchmark_grouped_linear.py, "pure" multi-stream row), 33 us per GEMM
    /// against 0.1 us of tensor work: 3.3e-5.
    double moe_launch_overhead_s = 3.3e-5;
    /// Slow-down of the backward GEMMs (input and weight gradients) in FP8 training with per-tensor
    /// scaling (`dtype::fp8`; MXFP8 below), against the forward GEMM's rate, and of the FP8 work that the model
    /// does not itemize beside them. Transformer Engine runs the backward GEMMs with cuBLASLt's split
    /// accumulator (periodic promotion of the FP8 tensor-core partial sums to FP32;
    /// `_2X_ACC_DGRAD = True`, `_2X_ACC_WGRAD = True`, forward `_2X_ACC_FPROP = False`,
    /// transformer_engine/pytorch/module/base.py), the forward with fast accumulation (cuBLASLt
    /// `CUBLASLT_MATMUL_DESC_FAST_ACCUM`). Kernel figure, measured here: on one H200 (H100 silicon)
    /// with CUDA 13.0's cuBLASLt, the 160 input- and weight-gradient GEMMs of Llama 3 8B (TP 1, 2) and
    /// 70B (TP 4, 8) layers at 1,024-16,384 tokens (per-tensor-scaled E4M3, torch._scaled_mm) take a
    /// median 1.047x (time-weighted 1.046x) as long without fast accumulation as with it
    /// (data/measurements/h200_compute_kernels.json from apps/probe/compute_probe.py; test
    /// `validation: H200 kernels`): 1.05. An earlier third-party figure on H100 was 1.1-1.2x
    /// (pytorch/ao issue #2377). The fitted value's excess over that figure is the FP8 work the model
    /// does not itemize (quantization of both operand layouts, amax passes, scale handling), which
    /// MXFP8 and NVFP4 training do as well (NVFP4 more: random Hadamard transforms, stochastic
    /// rounding). MXFP8's GEMMs take per-tensor FP8's time, this factor included, times
    /// mxfp8_gemm_time_ratio (Transformer Engine's GEMM profiling on B300 times both as the
    /// library runs them); NVFP4 and FP8 block scaling carry the excess alone (this over the
    /// kernel figure, at least 1).
    double fp8_backward_slowdown = 1.05;
    /// Fraction of the bf16 dense peak that the Mamba-2 chunked SSD scan (hybrid models) sustains,
    /// forward and backward, on the FLOPs of workload/flops.hpp ssd_forward_flops_per_token.
    /// Kernel figure: the Triton chunk-scan kernels of state-spaces/mamba (`mamba_chunk_scan_combined`),
    /// as vLLM runs them for prefill on one H100, process 1.26e7 tokens/s at 8192 tokens with 128
    /// heads of 64, one group and state 128 (vllm-project/vllm PR 27299, "Original" column): 6.3 to
    /// 8.5 MFLOP per token for chunks of 128 to 256, 80 to 106 TFLOP/s, 0.08-0.11 of 989; the fused
    /// kernel of that PR reaches 1.8x. No backward figure is published: the backward is charged at
    /// the same rate. 0.1. Not fitted: the calibration set (data/calibration) has no hybrid run.
    double ssd_scan_efficiency = 0.1;

    /// @brief Every constant equal.
    [[nodiscard]] constexpr bool operator==(const compute_constants&) const = default;
};

/// @brief The kernel-level figures alone (the priors of the fit; see compute_constants).
inline constexpr compute_constants kernel_constants{};

/// @brief MXFP8's GEMM time over per-tensor FP8's, the same GEMMs with Transformer Engine's
/// settings for each (per-tensor: the split accumulator in the backward; MXFP8: 32-element block
/// scales read by the tensor cores). Kernel figure: Transformer Engine's GEMM profiling tutorial
/// (te_gemm_profiling_b300, hardware/accelerator.hpp) times the 12 GEMMs of a 5B layer on one
/// B300 on pre-quantized inputs at 7.161 ms in MXFP8 and 6.812 ms with per-tensor current
/// scaling: 1.051 (test `validation: TE GEMM profiling`). The only published
/// pair: the default of accelerator::mxfp8_gemm_time_ratio, which the step model reads (an
/// accelerator JSON may give its own). Megatron-Bridge's 25.09 and 25.11 tables run the same
/// Llama 3 plans 2-6% slower in MXFP8 than in per-tensor FP8 (tests `validation: Megatron-Bridge
/// 25.11 MXFP8 runs`, `validation: Megatron-Bridge 25.09 dense Llama runs`), which the model put
/// at 0-1% faster with MXFP8's GEMMs at per-tensor FP8's rate.
inline constexpr double mxfp8_gemm_time_ratio = accelerator{}.mxfp8_gemm_time_ratio;

/// @brief The defaults of the step predictor: the constants fitted to the calibration set by
/// `commscale fit-compute data/calibration/published_runs.csv` (calibrate/compute_fit.hpp; the
/// test `calibrate: compute_fit` re-derives them and fails when these drift). Fitted in log space
/// with the kernel-level figures as log-normal priors; cross-validated errors in docs/accuracy.md.
inline constexpr compute_constants fitted_compute_constants{
    .gemm_shape_efficiency = 0.8432,
    .attention_efficiency = 0.3333,
    .te_attention_efficiency = 0.5878,
    .memory_efficiency = 0.6855,
    .kernel_overhead_s = 2.055e-06,
    .moe_launch_overhead_s = 4.479e-05,
    .fp8_backward_slowdown = 1.2141};

namespace detail {
/// Names the first out-of-range constant of validate(compute_constants) (cold path).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_compute_constants(const compute_constants& k, std::string_view where) {
    const auto fraction = [&](double v, std::string_view field) {
        if (!(v > 0.0 && v <= 1.0))
            throw input_error(std::string(where) + "." + std::string(field), detail::number_text(v), "a fraction in (0, 1]");
    };
    fraction(k.gemm_shape_efficiency, "gemm_shape_efficiency");
    fraction(k.attention_efficiency, "attention_efficiency");
    fraction(k.te_attention_efficiency, "te_attention_efficiency");
    fraction(k.memory_efficiency, "memory_efficiency");
    fraction(k.grouped_gemm_efficiency, "grouped_gemm_efficiency");
    fraction(k.ssd_scan_efficiency, "ssd_scan_efficiency");
    if (!(k.fp8_backward_slowdown >= 0.5 && k.fp8_backward_slowdown <= 3.0))
        throw input_error(std::string(where) + ".fp8_backward_slowdown", detail::number_text(k.fp8_backward_slowdown),
                          "a factor in [0.5, 3]");
    if (!(k.moe_launch_overhead_s >= 0.0 && k.moe_launch_overhead_s <= 1e-3))
        throw input_error(std::string(where) + ".moe_launch_overhead_s", detail::number_text(k.moe_launch_overhead_s),
                          "seconds in [0, 0.001]");
    if (!(k.kernel_overhead_s >= 0.0 && k.kernel_overhead_s <= 1e-3))
        throw input_error(std::string(where) + ".kernel_overhead_s", detail::number_text(k.kernel_overhead_s),
                          "seconds in [0, 0.001]");
    throw input_error(std::string(where), "compute constants", "efficiencies in (0, 1] and overheads in [0, 0.001] s");
}
}  // namespace detail

/// @brief Whether every constant is in range: the efficiencies in (0, 1], the per-kernel
/// overheads in [0, 1 ms], the FP8 backward slow-down in [0.5, 3].
[[nodiscard]] constexpr bool in_range(const compute_constants& k) {
    const auto in_unit = [](double v) { return v > 0.0 && v <= 1.0; };
    return in_unit(k.gemm_shape_efficiency) && in_unit(k.attention_efficiency) && in_unit(k.te_attention_efficiency) &&
           in_unit(k.memory_efficiency) && in_unit(k.grouped_gemm_efficiency) && in_unit(k.ssd_scan_efficiency) &&
           k.fp8_backward_slowdown >= 0.5 && k.fp8_backward_slowdown <= 3.0 && k.moe_launch_overhead_s >= 0.0 &&
           k.moe_launch_overhead_s <= 1e-3 && k.kernel_overhead_s >= 0.0 && k.kernel_overhead_s <= 1e-3;
}

/// @brief Throws input_error naming `where`.<field> unless in_range(k).
inline void validate(const compute_constants& k, std::string_view where) {
    // one inline test on the predictor's path; the field is found (and named) only on failure
    if (in_range(k)) return;
    detail::throw_compute_constants(k, where);
}

/// @brief Fraction of the HBM bandwidth that memory-bound kernels sustain under the kernel-level
/// figures (compute_constants::memory_efficiency); the fitted value is in fitted_compute_constants.
inline constexpr double default_memory_efficiency = kernel_constants.memory_efficiency;

/// @brief FlashAttention efficiency at long sequences under the kernel-level figures
/// (compute_constants::attention_efficiency); the fitted value is in fitted_compute_constants.
inline constexpr double flash_attention_peak_efficiency = kernel_constants.attention_efficiency;


/// @brief Sequence length at which FlashAttention reaches half of its long-sequence efficiency
/// in the fit s / (s + s_half) of the FlashAttention-2 benchmark curves (causal, head dim 128,
/// A100: ~100 TFLOP/s at 512 tokens, ~160 at 2k, ~185 at 8k+ fwd+bwd; Dao 2023 Fig. 4-6): 512.
inline constexpr double flash_attention_half_seq = 512.0;

/// @brief A fused attention kernel's backward time over its forward's: 2.8, the median (2.815) of
/// the causal, head-dimension-128 rows from 8,192 to 32,768 tokens of the compute probe's
/// attention sweep on an H100 and an H200 (data/measurements/h100_compute_kernels.json and
/// h200_compute_kernels.json, `attention`: cuDNN 2.83-3.03, FlashAttention-2 2.54-2.80; whole
/// Llama 3 layers in place, h200_layers.json and h100_layers.json: 2.6-3.3). The backward's 2.5x
/// FLOPs (the scores recomputed from the saved log-sum-exp, four GEMMs) run at a lower rate than
/// the forward's: they also accumulate dQ across key blocks and write dQ, dK and dV. The attention
/// core's time, FLOPs at the kernel's efficiency plus the exponentials of both passes, is split
/// between the passes by it: the sum stays what it was, and the recomputed forward (selective
/// recompute, core_attn, full recompute) costs what the kernel's forward does.
inline constexpr double attention_backward_time_ratio = 2.8;

/// @brief How a fused attention kernel's efficiency falls when a rank's heads and sequence give it
/// too few tiles to fill the GPU: the factor 1 - exp(-W / w) on its efficiency, W the waves of
/// 128-query tiles, b (a / t) ceil((s / c) / 128) over the accelerator's SMs (b micro-batch, a / t
/// the rank's query heads, s / c its queries; detail::attention_tile_waves), w the kernel's fill
/// constant. Fitted (least squares
/// in log, the efficiency's scale free and the sequence factor s / (s + 512) held) to the compute
/// probe's `attention_heads` sweep on an H200 (data/measurements/h200_attention_heads.json: causal,
/// head dimension 128, 1-128 query heads, 2,048-32,768 tokens, the rows from 0.9 waves up; the
/// test `validation: H200 attention against the heads per rank` re-derives them): cuDNN,
/// Transformer Engine's fused attention, 1.7 waves; FlashAttention-2, the PyTorch stacks', 1.5.
/// With them the fitted curve follows the sweep within a median 5% and 7%, against 17% and 19%
/// by the sequence alone, and the library's attention core, exponentials priced apart, within a
/// mean 8% and 10% about its scale, against 21% and 24%: 8 query heads at 4,096 tokens (Llama 3
/// 70B on TP 8) run at 0.6 of the efficiency 128 heads reach, and from about 8 waves the factor
/// is 1 (the kernel figures' benchmarks, 16 heads of 16K tokens, run at 15).
inline constexpr double cudnn_attention_fill_waves = 1.7;
inline constexpr double flash_attention_2_fill_waves = 1.5;

namespace detail {
/// Waves of 128-query attention tiles over `units` SMs: `batch` x `heads` x ceil(`queries` / 128)
/// / units (cudnn_attention_fill_waves).
[[nodiscard]] inline double attention_tile_waves(double batch, double heads, double queries, int units) {
    return batch * heads * std::ceil(queries / 128.0) / units;
}
}  // namespace detail

/// @brief Per-micro-batch time of one layer on one GPU, by part (forward and backward apart).
struct layer_time {
    duration gemm_fwd{}, attention_fwd{}, elementwise_fwd{}, overhead_fwd{};
    duration gemm_bwd{}, attention_bwd{}, elementwise_bwd{}, overhead_bwd{};
    duration scan_fwd{}, scan_bwd{};  ///< hybrid models: the Mamba-2 SSD scan (mean over the layers; 0 otherwise)
    /// @brief Forward time.
    [[nodiscard]] constexpr duration forward() const { return gemm_fwd + attention_fwd + elementwise_fwd + overhead_fwd + scan_fwd; }
    /// @brief Backward time (weight and input gradients; recompute not included).
    [[nodiscard]] constexpr duration backward() const { return gemm_bwd + attention_bwd + elementwise_bwd + overhead_bwd + scan_bwd; }
};

/// @brief Inputs of the compute model besides the model and plan.
struct compute_params {
    flop_rate gemm_peak{};       ///< dense peak of the GEMM precision
    flop_rate bf16_peak{};       ///< dense peak of bf16 (attention and non-fp8 work)
    double gemm_efficiency = 0.8;  ///< large-GEMM fraction of peak (accelerator MAMF figure x shape factor)
    double bf16_gemm_efficiency = 0.8;  ///< the same for the GEMMs that stay in bf16 (logits, unfused attention)
    byte_rate memory_bandwidth{};
    double memory_efficiency = default_memory_efficiency;
    double gemm_input_bytes = 2.0;  ///< bytes per GEMM input element (1 for fp8, 0.5 for fp4)
    /// HBM bytes per GEMM-input element of a pass that finds the tensor's amax before its cast
    /// (NVFP4's per-tensor scale: 2; amax_pass_bytes_for); the cast itself reads 2 bytes and writes
    /// gemm_input_bytes (cast_bytes)
    double amax_pass_bytes = 0;
    /// Kernels per quantized tensor: the cast, and with FP8 current scaling (fp8_recipe::
    /// tensorwise) the zero-amax, amax and scale kernels before it: 4 (quantize_kernels_for)
    double quantize_kernels = 1;
    /// A grouped GEMM's inputs, one per local expert, are quantized by one fused multi-tensor cast
    /// (per-tensor FP8 with delayed scaling; fused_grouped_cast_for), not expert by expert
    bool fused_grouped_cast = false;
    /// Quantized copies written per GEMM input (quantized_layouts_for): 2 for the block-scaled
    /// formats, whose backward GEMMs need a second copy scaled along the other dimension, else 1
    double quantized_layouts = 1;
    /// @brief HBM bytes that quantizing one bf16 GEMM-input element moves.
    [[nodiscard]] constexpr double cast_bytes() const {
        return 2.0 + quantized_layouts * gemm_input_bytes + amax_pass_bytes;
    }
    /// @brief Kernels that quantize one GEMM input: quantize_kernels in low precision (GEMM inputs
    /// below 2 bytes), none in 16 bits.
    [[nodiscard]] constexpr double input_quantize_kernels() const { return gemm_input_bytes < 2.0 ? quantize_kernels : 0.0; }
    int compute_units = 0;          ///< SMs / CUs that GEMM tiles are spread over (0: no wave quantization)
    double backward_gemm_slowdown = 1.0;  ///< compute_constants::fp8_backward_slowdown for fp8 and mxfp8, its excess over the kernel figure for nvfp4, mxfp4 and fp8 block scaling, else 1
    double attention_scale = 1.0;   ///< calibration scale on FlashAttention's efficiency (fit-step)
    double attention_efficiency = flash_attention_peak_efficiency;  ///< FlashAttention at long sequences
    double attention_fill_waves = 0;  ///< the fused kernel's fill constant (cudnn_attention_fill_waves; 0: none)
    double kernel_overhead_s = 0;   ///< per-kernel time beyond its work (compute_constants)
    double grouped_gemm_efficiency = 1.0;  ///< routed experts' grouped GEMMs, on top of gemm_efficiency
    double moe_launch_overhead_s = 0;      ///< per launch-bound kernel of an MoE layer's experts (compute_constants)
    double exponentials_per_s = 0;  ///< softmax exponentials per second of the special function units (0: not priced)
    double ssd_scan_efficiency = kernel_constants.ssd_scan_efficiency;  ///< Mamba-2 SSD scan, fraction of the bf16 peak
    double inv_gemm_rate = 0;       ///< 1 / (gemm_peak x gemm_efficiency), s per FLOP (set by finish())
    double inv_memory_rate = 0;     ///< 1 / (memory_bandwidth x memory_efficiency), s per byte

    /// @brief Recomputes the reciprocal rates after any field changed.
    constexpr void finish() {
        inv_gemm_rate = 1.0 / (gemm_peak.value() * gemm_efficiency);
        inv_memory_rate = 1.0 / (memory_bandwidth.value() * memory_efficiency);
    }
    /// @brief Every field equal (the layer memo's key).
    [[nodiscard]] bool operator==(const compute_params&) const = default;
};

/// @brief GEMM output tile (rows x columns) of the wave-quantization model: 256 x 128, the largest
/// bf16 tile of cuBLAS/CUTLASS on Ampere and Hopper and the example of NVIDIA's "Matrix
/// Multiplication Background User's Guide" (Sec. "Tile Quantization" / "Wave Quantization").
inline constexpr double gemm_tile_rows = 256.0, gemm_tile_cols = 128.0;

/// @brief The fields of a plan that one layer's compute time reads (layer_compute_time,
/// output_layer_time, mtp_time and the routed experts' GEMMs take it; a plan converts to it): the
/// parallel degrees that split the layer's work, the micro-batch and sequence, sequence
/// parallelism, the attention kernel and the MoE load. Those functions cannot read any other
/// field of the plan, so the layer memo (layer_and_output_cached), keyed on this struct, the
/// model and the compute parameters with their defaulted equality, holds every input they read.
struct layer_shape {
    int tp = 1, cp = 1, ep = 1;
    int etp = 1;                ///< expert tensor parallelism in effect (plan::expert_tp())
    int micro_batch = 1, seq = 2048;
    bool sequence_parallel = false;
    attention_kernel attention = attention_kernel::flash;
    double expert_load = 1.0;   ///< plan::effective_expert_load()
    /// plan::dispatcher with expert parallelism; without it (ep x etp = 1) no dispatch, the
    /// all-to-all dispatcher's local permutations
    moe_token_dispatcher dispatcher = moe_token_dispatcher::alltoall;
    /// dropless MoE routing: the dispatcher synchronizes with the host once per MoE layer (false
    /// with plan::pad_to_capacity, whose shapes are static; detail::set_kernel_overheads)
    bool host_sync = true;
    /// Share of the backward's MoE chunks whose expert kernels are all launch-bound, as the
    /// forward's are after the synchronization: plan::moe_a2a_overlap_share under dropless routing
    /// (0 with plan::pad_to_capacity or without the overlap). Megatron-Core's combined 1F1B
    /// (megatron/core/models/common/model_chunk_schedule_plan.py TransformerLayerSchedulePlan.run)
    /// issues each paired layer's sub-modules from one CPU thread in the order combine backward,
    /// attention and router forward, MLP backward, dispatch forward (the dropless dispatcher's
    /// host synchronization), the MLP's weight gradients, dispatch backward, MLP forward, combine
    /// forward, attention backward, each backward sub-module through its own autograd call: the
    /// CPU that paces the forward's experts issues the backward's expert kernels (their
    /// quantizations, activation and permutations beside the GEMMs every backward charges) between
    /// them (detail::set_kernel_overheads).
    double paced_backward_share = 0.0;
    /// The stack's flash attention takes a logit soft-cap (flash_takes_softcap; attention_for).
    bool flash_softcap = true;
    /// The stack's unfused attention is Hugging Face's eager attention (eager_attention_scores;
    /// softmax_for).
    bool eager_scores = false;

    constexpr layer_shape() = default;
    /// @brief The layer's view of `p` (implicit: the layer functions take a plan where they did).
    constexpr layer_shape(const plan& p)  // NOLINT(google-explicit-constructor)
        : tp(p.tp), cp(p.cp), ep(p.ep), etp(p.expert_tp()), micro_batch(p.micro_batch), seq(p.seq),
          sequence_parallel(p.sequence_parallel), attention(p.attention), expert_load(p.effective_expert_load()),
          dispatcher(static_cast<long long>(p.ep) * p.expert_tp() > 1 ? p.dispatcher : moe_token_dispatcher::alltoall),
          host_sync(!p.pad_to_capacity), paced_backward_share(p.pad_to_capacity ? 0.0 : p.moe_a2a_overlap_share()),
          flash_softcap(flash_takes_softcap(p.stack)), eager_scores(eager_attention_scores(p.stack)) {}
    /// @brief The attention kernel that runs `m` (attention_kernel_for: unfused where the model
    /// soft-caps its attention scores and the stack's flash kernel cannot).
    [[nodiscard]] constexpr attention_kernel attention_for(const transformer& m) const {
        return attention_kernel_for(m, attention, flash_softcap);
    }
    /// @brief The softmax of the unfused attention core over `m`'s scores on this rank
    /// (score_softmax_for).
    [[nodiscard]] constexpr score_softmax softmax_for(const transformer& m) const {
        return score_softmax_for(m, eager_scores, tp, cp, micro_batch, seq);
    }
    [[nodiscard]] constexpr int expert_tp() const { return etp; }
    [[nodiscard]] constexpr double effective_expert_load() const { return expert_load; }
    [[nodiscard]] constexpr bool operator==(const layer_shape&) const = default;
};

namespace detail {
/// Share of the compute units busy over a GEMM's waves: tiles / (waves x units), tiles =
/// ceil(M / 256) ceil(N / 128) x `batch` GEMMs scheduled together (NVIDIA Matrix Multiplication
/// Background guide, wave quantization).
[[nodiscard]] constexpr double wave_efficiency(double M, double N, double batch, int units) {
    if (units <= 0) return 1.0;
    const double tiles = std::ceil(M * (1.0 / gemm_tile_rows)) * std::ceil(N * (1.0 / gemm_tile_cols)) *
                         (batch > 1.0 ? std::round(batch) : 1.0);
    if (tiles <= units) return tiles / units;
    const double waves = std::ceil(tiles / units);
    return tiles / (waves * units);
}
/// Roofline time of `batch` (M x K)(K x N) GEMMs: max(2MNK / (peak eff wave), bytes / (bw eff))
/// with A and B read in the input precision and C written in bf16.
[[nodiscard]] constexpr double gemm_seconds(double M, double N, double K, const compute_params& c, double batch = 1.0) {
    if (M <= 0 || N <= 0 || K <= 0) return 0.0;
    const double work = batch * 2.0 * M * N * K * c.inv_gemm_rate / wave_efficiency(M, N, batch, c.compute_units);
    const double traffic = batch * ((M * K + K * N) * c.gemm_input_bytes + M * N * 2.0) * c.inv_memory_rate;
    return std::max(work, traffic);
}
/// Forward GEMM (M x K)(K x N) and its backward: the input gradient (M x N)(N x K) and the weight
/// gradient (K x M)(M x N), each with its own output tiling.
struct gemm_pair { double fwd = 0, bwd = 0; };
[[nodiscard]] constexpr gemm_pair gemm_fwd_bwd(double M, double N, double K, const compute_params& c, double batch = 1.0) {
    return {gemm_seconds(M, N, K, c, batch), gemm_seconds(M, K, N, c, batch) + gemm_seconds(K, N, M, c, batch)};
}
/// The routed experts' two grouped GEMMs of one MoE layer on one GPU, up (gate and up
/// projections) and down. EP carved out of DP x CP: each TP rank dispatches its 1/t share of the
/// T k routed tokens (Megatron-Core's MoE with TP runs sequence-parallel) and receives as many on
/// average; an expert-TP group of e = etp ranks gathers its members' tokens, so each rank runs
/// T k e / t tokens through 1/e of the width of each of its E / ep local experts: the same FLOPs
/// for any etp, in GEMMs e times taller and 1/e as wide (e = t: T k tokens, width / t). The
/// busiest rank (which sets the pace) runs its effective load times that (imbalance, capacity,
/// padding).
struct routed_gemms {
    gemm_pair up, down;
};
/// Routed token copies one rank runs through its experts per micro-batch, on an MoE layer: T k e / t
/// (see routed_gemms) times the busiest rank's effective load.
[[nodiscard]] constexpr double routed_copies(const transformer& m, const layer_shape& p) {
    const double T = static_cast<double>(p.micro_batch) * p.seq / p.cp;
    return T * m.experts_per_token * p.effective_expert_load() * (static_cast<double>(p.expert_tp()) / p.tp);
}
/// Permutation kernels of the MoE dispatcher per MoE layer, forward (parallel/framework.hpp
/// moe_token_dispatcher): the all-to-all dispatcher's permutation into expert order and its
/// unpermutation (moe_utils.permute / unpermute), and with expert parallelism and more than one
/// local expert the sort of the received copies by local expert and back (sort_chunks_by_idxs);
/// DeepEP's local permutation and unpermutation; none for HybridEP, whose communication kernels
/// permute as they send.
[[nodiscard]] constexpr double permutation_kernels(const transformer& m, const layer_shape& p) {
    switch (p.dispatcher) {
        case moe_token_dispatcher::hybridep: return 0.0;
        case moe_token_dispatcher::deepep: return 2.0;
        case moe_token_dispatcher::alltoall: break;
    }
    return p.ep > 1 && m.experts > p.ep ? 4.0 : 2.0;
}
/// HBM bytes of those `kernels` (permutation_kernels) for `copies` routed token copies of one MoE
/// layer, forward (the backward runs each in reverse over the same bytes): the permutation reads
/// each of the T tokens
/// and writes its k copies, the unpermutation reads the copies and writes the probability-weighted
/// sums, 2 copies h (1 + 1/k) values each way; the sort reads and writes every copy, there and back.
[[nodiscard]] constexpr double permutation_bytes(const transformer& m, double kernels, double copies) {
    if (kernels == 0.0) return 0.0;
    const double row = copies * m.expert_io() * 2.0;  // one read or write of every copy in bf16 (LatentMoE: l wide)
    return 2.0 * row * (1.0 + 1.0 / std::max(1, m.experts_per_token)) + (kernels - 2.0) * 2.0 * row;
}
[[nodiscard]] constexpr routed_gemms routed_expert_gemms(const transformer& m, const layer_shape& p, const compute_params& c) {
    // the experts' input and output width: hidden, or LatentMoE's latent width
    const double h = m.expert_io(), fe = m.expert_width(), gate = m.gated_mlp ? 2.0 : 1.0;
    const double local_experts = std::max(1.0, static_cast<double>(m.experts) / p.ep);
    const double et = p.expert_tp();
    const double per_expert = routed_copies(m, p) / local_experts;
    compute_params g = c;  // grouped GEMMs at compute_constants::grouped_gemm_efficiency of the dense rate
    g.inv_gemm_rate = c.inv_gemm_rate / c.grouped_gemm_efficiency;
    return {gemm_fwd_bwd(per_expert, gate * fe / et, h, g, local_experts), gemm_fwd_bwd(per_expert, h, fe / et, g, local_experts)};
}
/// LatentMoE's projections of one MoE layer into `add` (weight `moe`): fc1_latent_proj (T/t x h)
/// (h x l) and fc2_latent_proj (T/t x l)(l x h), duplicated on every TP rank, each over its own
/// T / t sequence-parallel tokens (Megatron-Core moe_layer.py, parallel_mode "duplicated").
template <class Add>
constexpr void add_latent_projections(const transformer& m, double T, double t, const compute_params& c, Add& add, double moe) {
    if (m.moe_latent <= 0) return;
    const double h = m.hidden, l = m.moe_latent;
    add(gemm_fwd_bwd(T / t, l, h, c), moe);
    add(gemm_fwd_bwd(T / t, h, l, c), moe);
}
/// Bytes of the low-precision cast of fc2_latent_proj's input per micro-batch (the MoE share of
/// the layers; fc1_latent_proj's input is the MoE block's first GEMM input, cast already): T l / t.
[[nodiscard]] constexpr double latent_cast_bytes(const transformer& m, double T, double t, const compute_params& c) {
    if (m.moe_latent <= 0 || !(c.gemm_input_bytes < 2.0)) return 0.0;
    return m.moe_fraction() * T * c.cast_bytes() * m.moe_latent / t;
}
/// Time to move `bytes` through HBM at the memory-bound efficiency.
[[nodiscard]] constexpr double memory_seconds(double bytes_moved, const compute_params& c) {
    return bytes_moved * c.inv_memory_rate;
}
}  // namespace detail

/// @brief Bytes per GEMM-input element of the amax pass that quantizing to `precision` runs
/// before the cast (compute_params::amax_pass_bytes): NVFP4 reads each bf16 tensor once more to
/// find its amax for the per-tensor FP32 scale (fused there with the random Hadamard transform of
/// the weight-gradient inputs; Transformer Engine docs/examples/gemm_profiling, "What GEMMs Do Not
/// Cover"): 2. Held against that page's B300 measurement: NVFP4's quantization adds 2.689 ms to a
/// 5B layer's 12 GEMMs and MXFP8's 1.823 (autocast less pre-quantized), 1.48x, against (2 + 2 +
/// 0.5625) / (2 + 1.03125) = 1.51x here (test `validation: TE GEMM profiling`). MXFP8 and MXFP4
/// scale each block by its own maximum within the cast, and per-tensor FP8 takes its scale from the
/// amax history (delayed scaling): 0.
[[nodiscard]] constexpr double amax_pass_bytes_for(dtype precision) { return precision == dtype::nvfp4 ? 2.0 : 0.0; }

/// @brief Kernels per quantized tensor (compute_params::quantize_kernels): the cast (cast and
/// transpose), and for FP8 current scaling (fp8_recipe::tensorwise) the three Transformer Engine
/// launches before it for each tensor (Float8CurrentScalingQuantizer: `nvte_compute_amax`, which
/// zeroes the amax and reduces, then `nvte_compute_scale_from_amax`; transformer_engine/pytorch/
/// csrc/quantizer.cpp, v2.9): 4. A grouped (MoE) input is quantized expert by expert then
/// (multi_tensor_quantize_impl fuses only delayed scaling's casts; csrc/extensions/cast.cpp),
/// which is where the count weighs: every launch-bound expert kernel pays moe_launch_overhead_s.
/// The amax reduction's read of the bf16 tensor (2 bytes per element, except where a norm finds
/// the amax as it writes: FUSED_NORM_AMAX_FP8, csrc/extensions/normalization.cpp) is not charged:
/// charged, the calibration fit moves te_attention_efficiency from 0.58 to 0.63 to keep the
/// Megatron-Bridge 25.11 runs, already predicted slow on H100, where they were, and the held-out
/// NeMo long-sequence B200 runs (delayed scaling) go from +3% to +8% (docs/accuracy.md): those
/// runs carry less unitemized FP8 work than the pass would add, in fp8_backward_slowdown. FP8
/// block scaling (fp8_recipe::blockwise) finds each block's amax inside its one quantize kernel
/// (Float8BlockQuantizer::quantize: nvte_quantize_v2 alone; for 1 x 128 blocks
/// block_scaled_1d_cast_transpose_kernel writes both layouts, common/transpose/
/// quantize_transpose_vector_blockwise.cu): 1.
[[nodiscard]] constexpr double quantize_kernels_for(dtype precision, fp8_recipe recipe = fp8_recipe::delayed) {
    return precision == dtype::fp8 && recipe == fp8_recipe::tensorwise ? 4.0 : 1.0;
}

/// @brief Whether a grouped GEMM's per-expert inputs are quantized by one kernel
/// (compute_params::fused_grouped_cast): Transformer Engine's multi_tensor_quantize_impl runs
/// nvte_multi_cast_transpose over every split for delayed scaling's Float8Quantizer and quantizes
/// each split on its own otherwise (csrc/extensions/cast.cpp, v2.9).
[[nodiscard]] constexpr bool fused_grouped_cast_for(dtype precision, fp8_recipe recipe = fp8_recipe::delayed) {
    return precision == dtype::fp8 && recipe == fp8_recipe::delayed;
}

/// @brief Quantized copies of each GEMM input (compute_params::quantized_layouts). Transformer
/// Engine quantizes a linear layer's input for the forward GEMM row-wise and, when the weight
/// gradient needs it, column-wise, and the output gradient both ways ("dgrad GEMM requires row-wise
/// usage, wgrad GEMM requires column-wise usage"; transformer_engine/pytorch/module/linear.py,
/// v2.9). A block-scaled format (MXFP8, NVFP4, MXFP4) scales blocks along the GEMM's reduction
/// dimension, so the column-wise copy is a second quantization with its own scales (MXFP8Quantizer
/// allocates columnwise_data and columnwise_scale_inv, tensor/mxfp8_tensor.py): 2. FP8 block
/// scaling likewise ("during the quantization both versions are computed from the high precision
/// input", common/recipe/__init__.py Float8BlockScaling): 2. Per-tensor FP8's column-wise copy is a
/// transpose of the same codes, left inside fp8_backward_slowdown: 1.
[[nodiscard]] constexpr double quantized_layouts_for(dtype precision, fp8_recipe recipe = fp8_recipe::delayed) {
    const bool block_scaled = precision == dtype::mxfp8 || precision == dtype::nvfp4 || precision == dtype::fp4 ||
                              (precision == dtype::fp8 && recipe == fp8_recipe::blockwise);
    return block_scaled ? 2.0 : 1.0;
}

/// @brief Compute parameters for accelerator `acc` training in `precision` on `stack` under the
/// constants `k` (by default the fitted ones): GEMMs at the accelerator's MAMF figure x
/// k.gemm_shape_efficiency; attention at the stack's kernel's efficiency (Transformer Engine's in
/// Megatron-Core, FlashAttention-2's elsewhere). FP8 block scaling (fp8_recipe::blockwise) runs
/// every GEMM with the split accumulator, the forward's too: its rate is the per-tensor FP8 rate
/// over the split accumulator's kernel figure (kernel_constants.fp8_backward_slowdown), and its
/// backward carries, as NVFP4 does, the fitted excess over that figure (its two quantized layouts
/// itemized: quantized_layouts_for), so that its backward GEMMs take what per-tensor FP8's do.
/// MXFP8 takes per-tensor FP8's GEMM times, backward factor included, times
/// acc.mxfp8_gemm_time_ratio.
[[nodiscard]] inline compute_params compute_params_for(const accelerator& acc, dtype precision,
                                                       const compute_constants& k = fitted_compute_constants,
                                                       framework stack = framework::megatron_core,
                                                       fp8_recipe recipe = fp8_recipe::delayed) {
    compute_params c;
    c.gemm_peak = peak_for(acc, precision, "plan.dtype");
    c.bf16_peak = acc.peak(dtype::bf16) ? *acc.peak(dtype::bf16) : c.gemm_peak;
    const bool fp8_rate = precision == dtype::fp8 || precision == dtype::mxfp8;
    const bool fp4_rate = precision == dtype::nvfp4 || precision == dtype::fp4;
    c.bf16_gemm_efficiency = std::min(1.0, acc.compute_efficiency * k.gemm_shape_efficiency);
    c.gemm_efficiency = c.bf16_gemm_efficiency * (fp8_rate ? acc.fp8_mamf_ratio : fp4_rate ? acc.fp4_gemm_ratio : 1.0);
    const bool fp8_blockwise = precision == dtype::fp8 && recipe == fp8_recipe::blockwise;
    if (fp8_blockwise) c.gemm_efficiency /= kernel_constants.fp8_backward_slowdown;
    if (precision == dtype::mxfp8) c.gemm_efficiency /= acc.mxfp8_gemm_time_ratio;
    c.memory_efficiency = k.memory_efficiency;
    // FlashAttention-2 (the PyTorch stacks) at its A100 fraction scaled to this part's
    // (accelerator::flash_attention_2_ratio); Transformer Engine's kernels have their own constant
    c.attention_efficiency = stack == framework::megatron_core ? k.te_attention_efficiency
                                                               : k.attention_efficiency * acc.flash_attention_2_ratio;
    c.attention_fill_waves = stack == framework::megatron_core ? cudnn_attention_fill_waves : flash_attention_2_fill_waves;
    c.kernel_overhead_s = k.kernel_overhead_s;
    c.grouped_gemm_efficiency = k.grouped_gemm_efficiency;
    c.moe_launch_overhead_s = k.moe_launch_overhead_s;
    c.ssd_scan_efficiency = k.ssd_scan_efficiency;
    c.memory_bandwidth = acc.memory_bandwidth.value() > 0 ? acc.memory_bandwidth : bytes_per_second(2e12);
    c.gemm_input_bytes = dtype_bytes(precision);
    c.amax_pass_bytes = amax_pass_bytes_for(precision);
    c.quantize_kernels = quantize_kernels_for(precision, recipe);
    c.fused_grouped_cast = fused_grouped_cast_for(precision, recipe);
    c.quantized_layouts = quantized_layouts_for(precision, recipe);
    c.compute_units = acc.compute_units;
    c.exponentials_per_s = c.bf16_peak.value() * acc.exponentials_per_bf16_flop;
    // per-tensor FP8: the split accumulator (the kernel figure) and the low-precision work not
    // itemized (the fit's excess over it); MXFP8 as per-tensor FP8 (its rate above is per-tensor
    // FP8's GEMM time times acc.mxfp8_gemm_time_ratio); NVFP4 and MXFP4, which have no split
    // accumulator, and FP8 block scaling, whose rate has it already: that excess alone
    if ((precision == dtype::fp8 && !fp8_blockwise) || precision == dtype::mxfp8)
        c.backward_gemm_slowdown = k.fp8_backward_slowdown;
    else if (fp8_rate || fp4_rate)
        c.backward_gemm_slowdown = std::max(1.0, k.fp8_backward_slowdown / kernel_constants.fp8_backward_slowdown);
    c.finish();
    return c;
}

/// @brief FlashAttention's fraction of peak at sequence length `seq`: `peak` x s / (s + s_half)
/// (see flash_attention_half_seq).
[[nodiscard]] constexpr double flash_attention_efficiency(double seq, double peak = flash_attention_peak_efficiency) {
    return peak * seq / (seq + flash_attention_half_seq);
}


/// @brief Kernels one layer launches for one micro-batch, forward and backward (a mean over the
/// model's layers where MoE and dense layers differ).
struct layer_kernels {
    double forward = 0, backward = 0;
    double moe_forward = 0;  ///< of `forward`, the MoE part after the dispatcher's host synchronization
    double moe_backward = 0; ///< of `backward`, the MoE experts' launch-bound GEMMs (dgrad and wgrad of FC1 and FC2 per local expert)
    /// of `backward`, the MoE experts' other kernels (the quantization of each expert GEMM's output
    /// gradient, the activation's backward, the permutations'), as many as the forward's after
    /// its synchronization beside its GEMMs; launch-bound on layer_shape::paced_backward_share
    double moe_backward_other = 0;
};

namespace detail {
/// Element-wise passes that some models add to each attention layer, for one micro-batch on one
/// GPU, T tokens, q / t query and kv / t key columns, and their kernels (count_layer_kernels):
/// * the attention output gate (transformer::attention_output_gate): Megatron-Core's
///   `_apply_output_gate` (attention.py, x * sigmoid(gate) under `@jit_fuser`, torch.compile: one
///   kernel each way) reads the attention output and the gate and writes the gated output
///   forward, 3 x 2 B per query element, and reads the output gradient, the output and the gate
///   and writes both gradients backward, 5 x 2 B;
/// * QK norm (transformer::qk_layernorm): Transformer Engine's RMSNorm over each head's query and
///   key (Megatron-Core attention.py `q_layernorm`, `k_layernorm`, TENorm), one kernel each,
///   reading and writing 2 B per element forward; backward reading the gradient and the input and
///   writing the gradient, 3 x 2 B, with a second kernel each for the weight's gradient (TE's
///   rmsnorm_bwd and its dgamma reduction);
/// * QK L2 norm (transformer::qk_l2_norm, Llama 4 Scout) on the layers with a rotary embedding
///   (transformer::rope_fraction): Megatron-Core's weightless L2Norm (torch_norm.py, `_norm` under
///   `@jit_fuser`, torch.compile) over each head's query and key, one kernel each way per tensor,
///   the same bytes as QK norm (no weight to reduce in the backward).
/// Zero for a model with none of them.
struct attention_extras {
    double fwd = 0, bwd = 0;
};
[[nodiscard]] constexpr attention_extras attention_extra_bytes(const transformer& m, double T, double t) {
    if (!m.attention_output_gate && !m.qk_layernorm && !m.qk_l2_norm) [[likely]]
        return {};
    const double q = T * m.q_dim() / t, k = T * m.kv_dim() / t;
    const double gate = m.attention_output_gate ? 1.0 : 0.0, norm = m.qk_norm_share();
    return {gate * 6.0 * q + norm * 4.0 * (q + k), gate * 10.0 * q + norm * 6.0 * (q + k)};
}
/// Kernels of attention_extra_bytes' passes, forward and backward: one per norm and tensor
/// forward; backward two for QK norm's (the input's and the weight's gradient), one for the
/// weightless L2 norm's.
[[nodiscard]] constexpr attention_extras attention_extra_kernels(const transformer& m) {
    const double gate = m.attention_output_gate ? 1.0 : 0.0, rms = m.qk_layernorm ? 1.0 : 0.0, l2 = m.qk_l2_norm_share();
    return {gate + 2.0 * (rms + l2), gate + 4.0 * rms + 2.0 * l2};
}

/// The per-kernel overheads of one layer (`n`, count_layer_kernels / count_hybrid_layer_kernels):
/// kernel_overhead_s for each kernel outside the MoE experts; the experts' kernels
/// (compute_constants::moe_launch_overhead_s) forward after the dropless dispatcher's host
/// synchronization (MoEAlltoAllTokenDispatcher._maybe_dtoh_and_synchronize; the flex dispatcher's
/// num_permuted_tokens; megatron/core/transformer/moe/token_dispatcher.py), when the GPU drains and
/// runs each following kernel as the CPU launches it: max(kernels x launch - `moe_gpu_fwd`, the
/// routed GEMMs' forward time, kernels x kernel_overhead_s); dropping and padding to the capacity
/// (layer_shape::host_sync false: Megatron-Core's drop_and_pad, static shapes, cuda_sync_point
/// "no_sync") keeps the CPU ahead, kernel_overhead_s apiece. Backward, with or without the
/// synchronization, moe_launch_overhead_s for each expert GEMM (Transformer Engine's multi-stream
/// grouped GEMM, one cuBLASLt call per expert and operand gradient) and kernel_overhead_s for the
/// backward's other kernels (its quantizations, activation and permutations), except on the share
/// of the backward that Megatron-Core's combined 1F1B issues beside a dropless forward
/// (layer_shape::paced_backward_share), where the experts' other kernels are launch-bound too.
inline void set_kernel_overheads(layer_time& r, const layer_kernels& n, double moe_gpu_fwd, const layer_shape& p,
                                 const compute_params& c) {
    const double moe_floor = c.kernel_overhead_s * n.moe_forward;
    const double moe_fwd = p.host_sync ? std::max(c.moe_launch_overhead_s * n.moe_forward - moe_gpu_fwd, moe_floor) : moe_floor;
    r.overhead_fwd = seconds(c.kernel_overhead_s * (n.forward - n.moe_forward) + moe_fwd);
    const double paced = n.moe_backward + p.paced_backward_share * n.moe_backward_other;
    r.overhead_bwd = seconds(c.kernel_overhead_s * (n.backward - paced) + c.moe_launch_overhead_s * paced);
}
/// Kernels of one grouped GEMM over `local` experts: one GEMM per expert and the quantization of
/// its input, `quantize_kernels` per expert (0 in bf16), or one fused cast for all of them.
[[nodiscard]] constexpr double grouped_gemm_kernels(double local, double quantize_kernels, bool fused_cast) {
    if (quantize_kernels <= 0.0) return local;
    return local + (fused_cast ? 1.0 : local * quantize_kernels);
}
/// Launch-bound kernels of an MoE layer's backward over `local` experts: the input- and
/// weight-gradient GEMMs of FC1 and FC2 of each, one cuBLASLt call apiece on Transformer Engine's
/// multi-stream grouped GEMM (general_grouped_gemm -> nvte_multi_tensor_gemm), 4 per expert.
[[nodiscard]] constexpr double expert_backward_gemm_kernels(double local) { return 4.0 * local; }
/// The MoE experts' kernels of one layer (layer_kernels::moe_forward, moe_backward,
/// moe_backward_other), `moe` the share of the layers that are MoE, over `local` experts: forward,
/// after the dispatcher's synchronization, one GEMM per local expert for FC1 and FC2 (each with its
/// input's quantization in low precision, grouped_gemm_kernels), the activation and the
/// dispatcher's `permutations`; backward, the launch-bound GEMMs (expert_backward_gemm_kernels)
/// and as many other kernels as the forward has beside its 2 GEMMs per expert.
struct moe_kernel_counts {
    double forward = 0, backward = 0, backward_other = 0;
};
[[nodiscard]] constexpr moe_kernel_counts moe_expert_kernels(double moe, double local, double quantize_kernels, bool fused_cast,
                                                             double permutations) {
    if (moe <= 0.0) return {};
    const double forward = moe * (2.0 * grouped_gemm_kernels(local, quantize_kernels, fused_cast) + 1.0 + permutations);
    return {forward, moe * expert_backward_gemm_kernels(local), forward - moe * 2.0 * local};
}
/// The rotary embedding's passes over Q and K (16-bit element accesses per rotated element,
/// forward and backward) and its kernels per layer, as Megatron-Core applies it (megatron/core/
/// models/common/embeddings/rope_utils.py apply_rotary_pos_emb): Transformer Engine's fused kernel
/// reads and writes each element once (backward twice that, as every element-wise kernel here),
/// one kernel; but the fused kernel takes no YaRN attention factor ("mscale=... is not supported by
/// TE's fused RoPE. Using unfused implementation."), so a model whose factor is not 1
/// (transformer::rope_attention_factor, GPT-OSS) runs _apply_rotary_pos_emb_bshd on Q and on K:
/// t * cos + rotate_half(t) * sin, then torch.cat with the (empty) unrotated part. Forward: the two
/// products read and write 2 + 2, rotate_half's negation of one half 1 and its cat 2, the sum 3
/// (two reads, one write), the final cat 2: 12; backward: the products' gradients 2 + 2, the
/// negation 1, the halves' gradients gathered 2, the two paths summed 3, the slice's gradient (a
/// zero fill and a copy) 3: 13. Kernels per tensor: forward cos and sin of the positions, their
/// scaling and casts (6), the two products, the negation, the sum and the two cats (6); backward
/// 7 (two products, negation, gather, sum, zero fill, copy): 24 and 14 for Q and K.
struct rope_passes {
    double fwd = 2.0, bwd = 4.0, kernels_fwd = 1.0, kernels_bwd = 2.0;
};
[[nodiscard]] constexpr rope_passes rope_cost(const transformer& m) {
    if (m.rope_attention_factor == 1.0) [[likely]]
        return {};
    return {12.0, 13.0, 24.0, 14.0};
}
/// Kernels of one layer, as Megatron-Core with Transformer Engine launches them: forward, each GEMM
/// (`gemms`, counted by the layer), the attention kernel, the norms (transformer::norms_per_layer:
/// two, four with Gemma's post-norms, whose TENorm runs apart), two fused bias-dropout-residual
/// adds, the activation, the rotary embedding where the model has one, the MoE router, the top-k
/// and the dispatcher's `permutations` (MoE layers only), and with FP8/MXFP8/NVFP4 one quantization
/// per GEMM input of `quantize_kernels` kernels (compute_params::quantize_kernels; 0 in bf16);
/// backward, two GEMMs per GEMM, the attention backward and its preprocessing (2), twice the
/// element-wise kernels and the quantization of each output gradient. Of these, the MoE
/// experts' kernels (compute_constants::moe_launch_overhead_s): forward, one GEMM per local expert
/// for FC1 and FC2 (each with its input's quantization in low precision, or one fused cast of all
/// of them with `fused_grouped_cast`: grouped_gemm_kernels), the activation, and the
/// dispatcher's `permutations` kernels (permutation_kernels); backward the experts' GEMMs alone,
/// dgrad and wgrad of FC1 and FC2 per local expert (4 per expert): the figure behind
/// moe_launch_overhead_s is per cuBLASLt call of the multi-stream grouped GEMM (TransformerEngine
/// PR 3134), and the backward's quantizations, activation and permutations are ordinary launches
/// (kernel_overhead_s), the CPU running ahead of them with no synchronization in the backward
/// (expert_backward_gemm_kernels). Charging them the GEMMs' launch cost as well (twice the
/// forward's launch-bound kernels) makes per-tensor FP8, whose current scaling quantizes expert by
/// expert in 4 kernels, 1.4-3x slower than MXFP8 on Megatron-Bridge 25.09's token-dropping Qwen3
/// runs, where the table has them within 4% (test `validation: Megatron-Bridge 25.09 MoE runs`).
[[nodiscard]] constexpr layer_kernels count_layer_kernels(const transformer& m, double gemms, double quantize_kernels, int ep = 1,
                                                          double permutations = 2.0, bool fused_grouped_cast = false) {
    const double rotary = m.rope_fraction();  // the layers with a rotary embedding (NoPE layers have none)
    const double elementwise = m.norms_per_layer() + 2.0 + 1.0 + rotary + (m.experts > 1 ? (2.0 + permutations) * m.moe_fraction() : 0.0);
    // the unfused rotary embedding's kernels beyond the fused one's (rope_cost)
    const rope_passes rope = rope_cost(m);
    const double rope_fwd = rotary * (rope.kernels_fwd - 1.0), rope_bwd = rotary * (rope.kernels_bwd - 2.0);
    const double quantize = gemms * quantize_kernels;
    const double local = std::max(1.0, static_cast<double>(m.experts) / std::max(1, ep));
    const moe_kernel_counts moe =
        moe_expert_kernels(m.experts > 1 ? m.moe_fraction() : 0.0, local, quantize_kernels, fused_grouped_cast, permutations);
    // the output gate's and QK norm's kernels (attention_extra_bytes)
    const attention_extras extra = attention_extra_kernels(m);
    return {gemms + 1.0 + elementwise + quantize + rope_fwd + extra.fwd,
            2.0 * gemms + 2.0 + 2.0 * elementwise + quantize + rope_bwd + extra.bwd, moe.forward, moe.backward, moe.backward_other};
}
/// Kernels of one layer of a hybrid model (means over the pattern): every layer its norm and its
/// residual add; attention layers the attention kernel (backward: it and its preprocessing); MLP
/// and MoE layers the activation; MoE layers the router, permutation, unpermutation and top-k
/// (the MoE forward after the sync as in count_layer_kernels); Mamba-2 layers the gated RMSNorm,
/// and the causal conv1d with the five SSD kernels of state-spaces/mamba ssd_combined.py
/// `_mamba_chunk_scan_combined_fwd` (`_chunk_cumsum_fwd`, `_chunk_state_fwd`, `_state_passing_fwd`,
/// `_bmm_chunk_fwd`, `_chunk_scan_fwd`) forward, 19 backward (`_mamba_chunk_scan_combined_bwd`:
/// the conv1d recomputed and its backward, four forward kernels recomputed, thirteen gradient
/// kernels from `_chunk_scan_bwd_dz` to `_chunk_cumsum_bwd`, the reverse cumsum as three PyTorch
/// ops); Gated DeltaNet layers the gated RMSNorm, and forward the causal conv1d, the decay's and
/// beta's four element-wise ops and flash-linear-attention's eight (`chunk_gated_delta_rule_fwd`
/// with the q and k L2 norms: l2norm x 2, chunk_local_cumsum, chunk_scaled_dot_kkt_fwd,
/// solve_tril, recompute_w_u_fwd, chunk_gated_delta_rule_fwd_h, chunk_fwd_o), 16 backward (its
/// nine: the recomputed W, U and states, chunk_bwd_dv_local, chunk_gated_delta_rule_bwd_dhu,
/// chunk_bwd_dqkwg, prepare_wy_repr_bwd, the cumsum's and the two L2 norms'; the conv1d's backward
/// and the gating's six); GEMMs, quantization and the MoE experts' launch-bound kernels as in
/// count_layer_kernels.
[[nodiscard, gnu::cold]] constexpr layer_kernels count_hybrid_layer_kernels(const transformer& m, double gemms, double quantize_kernels,
                                                                            int ep = 1, double permutations = 2.0,
                                                                            bool fused_grouped_cast = false) {
    const double att = m.attention_fraction(), mamba = m.mamba_fraction(), moe = m.is_moe() ? m.moe_fraction() : 0.0;
    const double gdn = m.gdn_fraction();
    const double mlp = m.dense_mlp_fraction() + moe;
    const double elementwise = 2.0 + mlp + (2.0 + permutations) * moe + mamba + gdn;
    const double quantize = gemms * quantize_kernels;
    const double local = std::max(1.0, static_cast<double>(m.experts) / std::max(1, ep));
    const moe_kernel_counts experts = moe_expert_kernels(moe, local, quantize_kernels, fused_grouped_cast, permutations);
    // attention layers: the attention kernel (backward: it and its preprocessing), + the output
    // gate's and QK norm's (attention_extra_bytes)
    const attention_extras extra = attention_extra_kernels(m);
    const double att_fwd = att * (1.0 + extra.fwd);
    const double att_bwd = att * (2.0 + extra.bwd);
    return {gemms + att_fwd + 6.0 * mamba + 13.0 * gdn + elementwise + quantize,
            2.0 * gemms + att_bwd + 19.0 * mamba + 16.0 * gdn + 2.0 * elementwise + quantize, experts.forward, experts.backward,
            experts.backward_other};
}
}  // namespace detail

namespace detail {
/// The attention core of one layer for one micro-batch on one GPU, forward and backward, over
/// `span` keys per query (layer_compute_time's doc comment: flash at flash_attention_efficiency
/// with the softmax exponentials, or the unfused GEMMs and softmax passes). The kernel is
/// layer_shape::attention_for. The unfused core computes every score of the s x s square whatever
/// the window (Megatron-Core's DotProductAttention and Hugging Face's eager attention multiply the
/// whole query and key blocks and mask afterwards), so `span` is the flash kernel's alone.
/// Attention soft-capping (transformer::attn_logit_softcapping): in the flash kernel one tanh per
/// score on the exponentials' unit (MUFU.TANH), forward and backward (flash-attn's `softcap`
/// applies it to the recomputed scores of the backward too); unfused, Megatron-Bridge's eager
/// soft-cap over the 16-bit scores (eager_softcap: 12 bytes per score forward, 14 backward). The
/// unfused softmax is the stack's (layer_shape::softmax_for, score_softmax).
[[nodiscard, gnu::always_inline]] inline gemm_pair attention_core_seconds(const transformer& m, const layer_shape& p,
                                                                          const compute_params& c, double span) {
    const double t = p.tp, b = p.micro_batch, s = p.seq, T = b * s / p.cp;
    const double a = m.heads, d_qk = m.qk_head_dim(), d_v = m.value_head_dim();
    const double heads_here = static_cast<double>(m.heads) / t;
    const bool softcap = m.attn_logit_softcapping > 0.0;
    if (p.attention_for(m) == attention_kernel::flash) {
        const double fwd_flops = 0.5 * 2.0 * T * span * a * (d_qk + d_v) / t;
        // under context parallelism each kernel covers the rank's s / c queries: Transformer Engine's
        // ring attention (AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention/
        // dot_product_attention/context_parallel.py) holds two of 2c chunks of the sequence per rank
        // and runs one fused-attention call per step against the keys of one peer, so the
        // efficiency is the one of an s / c sequence
        double rate = c.bf16_peak.value() * flash_attention_efficiency(s / p.cp, c.attention_efficiency);
        // too few 128-query tiles to fill the GPU (cudnn_attention_fill_waves)
        if (c.attention_fill_waves > 0 && c.compute_units > 0) {
            rate *= 1.0 - std::exp(-attention_tile_waves(b, heads_here, s / p.cp, c.compute_units) / c.attention_fill_waves);
        }
        // one softmax exponential per score computed, in the forward and again in the backward
        // (which recomputes P from the saved log-sum-exp), on the special function units, which
        // the tensor cores wait for between the two GEMMs (FlashAttention-3 Sec. 3; NVIDIA,
        // "Making Softmax More Efficient with NVIDIA Blackwell Ultra")
        const double exps = c.exponentials_per_s > 0 ? (softcap ? 2.0 : 1.0) * 0.5 * T * span * a / t / c.exponentials_per_s : 0.0;
        // forward and backward: their sum split by the kernels' measured time ratio
        const double both = (3.5 * fwd_flops / rate + 2.0 * exps) / c.attention_scale;
        const double fwd = both / (1.0 + attention_backward_time_ratio);
        return {fwd, both - fwd};
    }
    compute_params bf = c;
    bf.gemm_peak = c.bf16_peak;
    bf.gemm_efficiency = c.bf16_gemm_efficiency;
    bf.gemm_input_bytes = 2.0;
    bf.finish();
    const double batch = b * heads_here;
    const auto qk = gemm_fwd_bwd(s / p.cp, s, d_qk, bf, batch), av = gemm_fwd_bwd(s / p.cp, d_v, s, bf, batch);
    const double gemms = qk.fwd + av.fwd, gemms_bwd = qk.bwd + av.bwd;
    const double scores = batch * (s / p.cp) * s;
    // bytes per score: the softmax as the stack runs it (score_softmax: Megatron's fused kernel,
    // its PyTorch fallback beyond 4,096 keys, or Hugging Face's eager FP32 softmax); the attention
    // dropout of a model trained with dropout (torch.nn.Dropout: native_dropout reads the
    // probabilities and writes them and a 1-byte mask, native_dropout_backward reads the gradient
    // and the mask and writes the gradient): 5 and 5
    const score_softmax_cost sm = score_softmax_cost_of(p.softmax_for(m));
    const double dropout = m.dropout ? 5.0 : 0.0;
    const double cap_fwd = softcap ? eager_softcap.fwd_bytes : 0.0, cap_bwd = softcap ? eager_softcap.bwd_bytes : 0.0;
    // grouped-query attention's K and V repeated to the query heads (unfused_kv_expansion), 2 B
    const double expand = 2.0 * unfused_kv_expansion(m).moved * T / t;
    return {gemms + memory_seconds((sm.fwd_bytes + dropout + cap_fwd) * scores + expand, c),
            gemms_bwd + memory_seconds((sm.bwd_bytes + dropout + cap_bwd) * scores + expand, c)};
}

/// Bytes and kernels that Transformer Engine's ring attention adds to one attention layer for one
/// micro-batch on one GPU under context parallelism c > 1 (AttnFuncWithCPAndKVP2P, the p2p
/// `cp_comm_type` Megatron-Core uses by default; transformer_engine/pytorch/attention/
/// dot_product_attention/context_parallel.py, v2.9, bshd/sbhd layouts, 16-bit attention, which is
/// what Megatron's FP8 recipes run unless --fp8-dot-product-attention). Forward: K and V
/// concatenated into the first send buffer (read and write 2 B per K/V element); each of the c
/// steps returns a partial output of o = T a d_v / t elements, merged after the last step, one
/// fused kernel each: step 0's scaled in place (`flash_attn_fwd_out_correction_init`: read 2 B,
/// write 2), each later one added (`flash_attn_fwd_out_correction`, `out.add_`: read 2 + 2, write
/// 2) over the whole output on the ranks the causal split gives a full step (c - i of c at step i)
/// and over its second half on the others: o (4 + 4.5 (c - 1)) bytes. Backward: K and V copied
/// into the ring's buffer, and each step's dQ and dK/dV accumulated in 16 bits (`dq.add_(dq_)`,
/// `dk.add_`/`copy_`: read 2 + 2, write 2, or a 4-byte copy; 5 B a mean) over the query and K/V
/// widths: c x 5 (T a d_qk / t + K/V width) bytes. Kernels: forward c - 1 more attention calls,
/// c output merges, c - 1 log-sum-exp merges and the concatenation (3c - 1); backward c - 1 more
/// attention calls, 3c accumulations and the copy (4c). Zero without CP or with the unfused kernel.
struct cp_merge_cost {
    double bytes_fwd = 0, bytes_bwd = 0, kernels_fwd = 0, kernels_bwd = 0;
};
[[nodiscard]] constexpr cp_merge_cost cp_ring_merge(const transformer& m, const layer_shape& p) {
    if (p.cp <= 1 || p.attention_for(m) != attention_kernel::flash) [[likely]]
        return {};
    const double c = p.cp, t = p.tp, T = static_cast<double>(p.micro_batch) * p.seq / p.cp, a = m.heads;
    const double out = a * m.value_head_dim() / t, dq = a * m.qk_head_dim() / t;
    // K/V as the ring carries them: MLA's per-head keys and values, else the GQA width
    const double kv = m.is_mla() ? a * (m.qk_head_dim() + m.value_head_dim()) / t : 2.0 * m.kv_dim() / t;
    return {T * (out * (4.0 + 4.5 * (c - 1.0)) + 4.0 * kv), T * (c * 5.0 * (dq + kv) + 4.0 * kv), 3.0 * c - 1.0,
            4.0 * c};
}

/// One Mamba-2 layer's chunked SSD scan for one micro-batch on one GPU (T = b s / c tokens, H / t
/// heads; Megatron-Core's Mamba CP gives each rank the whole sequence of H / (t c) heads, the same
/// work), forward and backward, each the larger of its FLOPs at ssd_scan_efficiency x the bf16
/// peak and its traffic at the memory-bound rate. Forward: workload/flops.hpp
/// ssd_forward_flops_per_token without the conv1d (a memory-bound kernel, charged with the
/// element-wise ones); it reads x, B, C, dt and z and writes the gated output and out_x,
/// 2 (d_in + 2 G N + H + d_in + 2 d_in) bytes per token. Backward (state-spaces/mamba
/// `_mamba_chunk_scan_combined_bwd`): the gradients of each product, twice the forward FLOPs, plus
/// the forward steps it recomputes (C B^T, the chunk states and their passing), twice the traffic.
[[nodiscard, gnu::cold]] inline gemm_pair ssd_scan_seconds(const transformer& m, const layer_shape& p, const compute_params& c) {
    const double t = p.tp, T = static_cast<double>(p.micro_batch) * p.seq / p.cp;
    const hybrid_shape& y = *m.hybrid;
    const double d_in = y.mamba_inner(), N = y.ssm_state, G = y.mamba_groups, Q = y.ssm_chunk > 0 ? y.ssm_chunk : 1.0;
    const double conv = 2.0 * y.conv_kernel * y.conv_channels();
    const double fwd_flops = T * (ssd_forward_flops_per_token(m) - conv) / t;
    const double recomputed = T * (2.0 * Q * G * N + 2.0 * N * d_in + 2.0 * N * d_in / Q) / t;
    const double rate = c.bf16_peak.value() * c.ssd_scan_efficiency;
    const double bytes_fwd = 2.0 * T * (y.conv_channels() + y.mamba_heads + 3.0 * d_in) / t;
    return {std::max(fwd_flops / rate, memory_seconds(bytes_fwd, c)),
            std::max((2.0 * fwd_flops + recomputed) / rate, memory_seconds(2.0 * bytes_fwd, c))};
}

/// One Gated DeltaNet layer's chunked delta rule for one micro-batch on one GPU (T = b s tokens,
/// Hv / t value heads: Megatron-Core splits the heads over TP), forward and backward, each the
/// larger of its FLOPs at ssd_scan_efficiency x the bf16 peak and its traffic at the memory-bound
/// rate. Forward: workload/flops.hpp gdn_forward_flops_per_token without the conv1d (a
/// memory-bound kernel, charged with the element-wise ones); it reads q, k, v, the decay and beta
/// and writes the output, 2 (2 qk + v + 2 Hv + v) bytes per token, and writes each chunk's state
/// (dk x dv per value head, fp32) for the output and the backward. Backward
/// (`chunk_gated_delta_rule_bwd`, fla/ops/gated_delta_rule/chunk.py): the gradients of each
/// product, twice the forward FLOPs, plus the W, U and chunk states it recomputes, and twice the
/// traffic. The rate is the Mamba-2 SSD scan's: both are Triton kernels of chunked matmuls around
/// a sequential pass over the chunks' states, and no throughput of flash-linear-attention's kernel
/// is published beside a FLOP count (docs/model.md).
[[nodiscard, gnu::cold]] inline gemm_pair gdn_scan_seconds(const transformer& m, const layer_shape& p, const compute_params& c) {
    const double t = p.tp, T = static_cast<double>(p.micro_batch) * p.seq / p.cp;
    const hybrid_shape& y = *m.hybrid;
    const double conv = 2.0 * y.gdn_conv_kernel * y.gdn_conv_channels();
    const double fwd_flops = T * (gdn_forward_flops_per_token(m) - conv) / t;
    const double dk = y.gdn_qk_head_dim, dv = y.gdn_v_head_dim, C = gdn_chunk;
    const double recomputed = T * y.gdn_v_heads * (2.0 * C * (dk + dv) + 4.0 * dk * dv) / t;
    const double rate = c.bf16_peak.value() * c.ssd_scan_efficiency;
    const double bytes_fwd = T * (2.0 * (y.gdn_conv_channels() + 2.0 * y.gdn_v_heads + y.gdn_v_dim()) +
                                  4.0 * y.gdn_v_heads * dk * dv / C) / t;
    return {std::max(fwd_flops / rate, memory_seconds(bytes_fwd, c)),
            std::max((2.0 * fwd_flops + recomputed) / rate, memory_seconds(2.0 * bytes_fwd, c))};
}

/// layer_compute_time of a hybrid Mamba-Transformer (its doc comment, "Hybrid models"). Out of
/// line: off the transformer's path.
[[gnu::cold, gnu::noinline]] inline layer_time hybrid_layer_compute_time(const transformer& m, const layer_shape& p,
                                                                          const compute_params& c) {
    layer_time r;
    const double t = p.tp, b = p.micro_batch, s = p.seq, T = b * s / p.cp;
    const double h = m.hidden, q = m.q_dim(), f = m.ffn, d_in = m.mamba_inner();
    const double att = m.attention_fraction(), mamba = m.mamba_fraction(), dense = m.dense_mlp_fraction();
    const double gdn = m.gdn_fraction();
    const double moe = m.is_moe() ? m.moe_fraction() : 0.0;
    double gf = 0, gb = 0, gemm_kernels = 0, moe_copies = 0, moe_gpu_fwd = 0;
    auto add = [&](gemm_pair x, double weight) {
        gf += weight * x.fwd;
        gb += weight * x.bwd;
        gemm_kernels += weight;
    };
    // attention layers: QKV (+ the output gate: transformer::qkv_dim) and output projections
    add(gemm_fwd_bwd(T, m.qkv_dim() / t, h, c), att);
    add(gemm_fwd_bwd(T, h, q / t, c), att);
    // Mamba-2 layers: in_proj (z, x, B, C, dt) column-parallel, out_proj row-parallel
    add(gemm_fwd_bwd(T, m.mamba_in_proj_width() / t, h, c), mamba);
    add(gemm_fwd_bwd(T, h, d_in / t, c), mamba);
    // Gated DeltaNet layers: in_proj (q, k, v, z, beta, a) column-parallel, out_proj row-parallel
    const double gdn_v = gdn > 0.0 ? m.hybrid->gdn_v_dim() : 0.0;
    if (gdn > 0.0) {
        add(gemm_fwd_bwd(T, m.hybrid->gdn_in_proj_width() / t, h, c), gdn);
        add(gemm_fwd_bwd(T, h, gdn_v / t, c), gdn);
    }
    // MLP layers
    const double gate = m.gated_mlp ? 2.0 : 1.0;
    add(gemm_fwd_bwd(T, gate * f / t, h, c), dense);
    add(gemm_fwd_bwd(T, h, f / t, c), dense);
    // MoE layers: as layer_compute_time's (routed grouped GEMMs, shared experts, router)
    if (moe > 0.0) {
        const auto routed = routed_expert_gemms(m, p, c);
        add(routed.up, moe);
        add(routed.down, moe);
        moe_gpu_fwd = moe * (routed.up.fwd + routed.down.fwd);
        gemm_kernels += moe * 2.0 * (std::max(1.0, static_cast<double>(m.experts) / p.ep) - 1.0);
        moe_copies = moe * routed_copies(m, p);
        if (m.shared_experts > 0) {
            const double fs = m.shared_experts * static_cast<double>(m.expert_width());
            add(gemm_fwd_bwd(T, gate * fs / t, h, c), moe);
            add(gemm_fwd_bwd(T, h, fs / t, c), moe);
        }
        add(gemm_fwd_bwd(T, m.experts, h, c), moe);
        add_latent_projections(m, T, t, c, add, moe);
    }
    r.gemm_fwd = seconds(gf);
    r.gemm_bwd = seconds(gb * c.backward_gemm_slowdown);
    // attention core at full length; the SSD scan
    const gemm_pair core = attention_core_seconds(m, p, c, s);
    r.attention_fwd = seconds(att * core.fwd);
    r.attention_bwd = seconds(att * core.bwd);
    if (mamba > 0.0) {
        const gemm_pair scan = ssd_scan_seconds(m, p, c);
        r.scan_fwd = seconds(mamba * scan.fwd);
        r.scan_bwd = seconds(mamba * scan.bwd);
    }
    if (gdn > 0.0) {
        const gemm_pair scan = gdn_scan_seconds(m, p, c);
        r.scan_fwd += seconds(gdn * scan.fwd);
        r.scan_bwd += seconds(gdn * scan.bwd);
    }
    // element-wise: one norm and one residual add per layer (5.5 h, half a transformer layer's
    // 11 h), the activation, Mamba-2's conv1d (read and write d_in + 2 G N) and gated RMSNorm (d_in),
    // Gated DeltaNet's conv1d (2 qk + v) and gated RMSNorm (v)
    const double replicated = 5.5 * h / (p.sequence_parallel ? t : 1.0);
    const double f_token = m.mlp_width_per_token();
    const double act = (m.gated_mlp ? 3.0 : 2.0) * f_token / t;
    const double mixer = mamba * 2.0 * (m.mamba_conv_channels() + d_in) / t +
                         (gdn > 0.0 ? gdn * 2.0 * (m.hybrid->gdn_conv_channels() + gdn_v) / t : 0.0);
    double bytes_fwd = 2.0 * T * (replicated + act + mixer);
    if (c.gemm_input_bytes < 2.0)
        bytes_fwd += T * c.cast_bytes() *
                     (att * (h + q / t) + mamba * (h + d_in / t) + gdn * (h + gdn_v / t) + (dense + moe) * h + f_token / t);
    const double permutations = permutation_kernels(m, p);
    const double permute = permutation_bytes(m, permutations, moe_copies);
    const double latent_cast = latent_cast_bytes(m, T, t, c);
    if (c.gemm_input_bytes < 2.0) bytes_fwd += moe_copies * c.cast_bytes() * m.expert_io() + latent_cast;
    // backward: twice the forward traffic (the permutations once), and the conv1d recomputed (read
    // and write its channels)
    const double conv_recompute = 2.0 * T * mamba * 2.0 * m.mamba_conv_channels() / t;
    // the attention layers' ring-attention merges under context parallelism (cp_ring_merge)
    const cp_merge_cost cp_merge = cp_ring_merge(m, p);
    const attention_extras extra = attention_extra_bytes(m, T, t);
    r.elementwise_fwd = seconds(memory_seconds(bytes_fwd + permute + att * (cp_merge.bytes_fwd + extra.fwd), c));
    r.elementwise_bwd =
        seconds(memory_seconds(2.0 * bytes_fwd + permute + conv_recompute + att * (cp_merge.bytes_bwd + extra.bwd), c));
    layer_kernels n =
        count_hybrid_layer_kernels(m, gemm_kernels, c.input_quantize_kernels(), p.ep, permutations, c.fused_grouped_cast);
    n.forward += att * cp_merge.kernels_fwd;
    n.backward += att * cp_merge.kernels_bwd;
    set_kernel_overheads(r, n, moe_gpu_fwd, p, c);
    return r;
}
}  // namespace detail

/// @brief Time of one layer for one micro-batch of `p` on one GPU.
///
/// Per GPU, T = b s / c tokens (c = CP), t = TP, h hidden, q = heads x head_dim, kv = K/V width,
/// f = FFN width (per expert), k = experts per token:
/// * GEMMs (forward): QKV (T x h)(h x (q + 2 kv)/t); output (T x q/t)(q/t x h); MLP (T k x h)
///   (h x (2 or 1) f/t) and (T k x f/t)(f/t x h); routed experts with expert tensor parallelism
///   e = etp: (T k e/t x h)(h x (2 or 1) f/e) and back, over the E/ep local experts; MoE router
///   (T x h)(h x E). Backward: the input
///   and weight gradients, two GEMMs of the same FLOPs with their own output shapes. Each GEMM at
///   the accelerator's large-GEMM efficiency x its wave quantization, or memory-bound.
/// * Attention core, flash: 4 T s q / t FLOPs forward (QK^T and AV; half of them skipped by the
///   causal mask), 2.5 x in the backward, at flash_attention_efficiency(s / c) of the bf16 peak
///   (under CP each kernel covers s / c queries),
///   plus one softmax exponential per computed score in each (T s a / 2t) at the accelerator's
///   exponential rate (exponentials_per_bf16_flop); the FLOPs' rate times 1 - exp(-W / w) where
///   the rank's 128-query tiles fill W < 8 waves of the SMs (cudnn_attention_fill_waves,
///   flash_attention_2_fill_waves); the sum split between forward and backward as the kernels'
///   times are, 1 : attention_backward_time_ratio (2.8).
///   Unfused: the two batched GEMMs (s/c x d)(d x s) and (s/c x s)(s x d) per head on the
///   roofline, over the full square, plus the softmax and dropout passes over the (b a/t s/c s)
///   score tensor: the softmax as the stack runs it (score_softmax: Megatron's fused causal kernel
///   3 bytes per element forward and 4 backward, its PyTorch fallback beyond 4,096 keys 9 and 11,
///   Hugging Face's eager FP32 softmax 30 and 28), the dropout of a model trained with it 5 and 5
///   (read + write, 1-byte mask; backward gradient and mask read, gradient written), and with
///   grouped-query attention the keys' and values' repeat to the query heads (unfused_kv_expansion).
///   Context parallelism (c > 1) adds the ring attention's merges of its c partial outputs and
///   gradients as memory-bound bytes and kernels (detail::cp_ring_merge, Transformer Engine's
///   AttnFuncWithCPAndKVP2P): 8.5 bytes per output element forward at c = 2.
/// * Modern MoE shapes: MLA's down-projections (T x h)(h x (r_q + r_kv + d_r)), replicated over
///   TP, and its up-projections and W_O split by t; scores with the query/key head width
///   d_n + d_r and values with d_v. LatentMoE: the routed experts' GEMMs over the latent width l
///   (T k e/t x l)(l x (2 or 1) f/e) and back, their permutations and casts l wide, and the
///   projections (T/t x h)(h x l) and (T/t x l)(l x h) duplicated on every TP rank (each rank its
///   sequence-parallel tokens). Shared experts as one dense MLP of S x expert width; dense
///   layers of an MoE model (moe_fraction) with the dense MLP; the layer returned is the mean over
///   the model's layers. Sliding-window layers charge attention_span(s) keys per query (half of
///   it under the causal flash kernel) instead of s; the unfused core computes all s (detail::
///   attention_core_seconds, with the attention soft-cap's passes).
/// * Element-wise, forward, in bf16 element accesses per token: two norms (read + write h each,
///   4h; with Gemma's post-norms, transformer::post_norms, four, 8h), two residual adds with
///   dropout (read 2h + write h + mask, 7h), replicated on every TP rank unless sequence
///   parallelism splits them by t; the activation function (gated: read 2f write f; plain: read
///   f write f) and rotary embedding on Q and K (2 (q + kv), on the layers
///   that have one: transformer::rope_fraction, Llama 4's NoPE layers none) split by t; low
///   precision adds a cast of each GEMM input (read 2 B, write 1 B in fp8; compute_params::
///   cast_bytes). Backward: twice the forward traffic
///   (an element-wise backward reads the output gradient and a saved input and writes a gradient).
///   The attention output gate (transformer::attention_output_gate) widens the QKV GEMM by q / t
///   and adds its fused sigmoid-and-multiply, 6 and 10 bytes per query element forward and
///   backward; QK norm (transformer::qk_layernorm) its two RMSNorms, 4 and 6 bytes per query and
///   key element, and the QK L2 norm (transformer::qk_l2_norm) the same on the rotary layers
///   (detail::attention_extra_bytes).
/// * Hybrid models (transformer::is_hybrid): the mean over the pattern's layers, each one block:
///   attention layers their projections and core (full length), MLP and MoE layers as above,
///   Mamba-2 layers in_proj (T x h)(h x (2 d_in + 2 G N + H)/t) and out_proj (T x d_in/t)(d_in/t x h)
///   on the roofline and the SSD scan as its own kernel (detail::ssd_scan_seconds, at
///   compute_constants::ssd_scan_efficiency); element-wise one norm and one residual add per layer
///   (5.5 h), the conv1d (read + write d_in + 2 G N, recomputed in the backward) and the gated
///   RMSNorm (d_in) split by t, and no rotary pass (Nemotron-H and Nemotron 3 train with
///   `--position-embedding-type none`, Megatron-LM examples/post_training/modelopt/conf/nvidia).
[[nodiscard]] inline layer_time layer_compute_time(const transformer& m, const layer_shape& p, const compute_params& c) {
    if (m.is_hybrid()) [[unlikely]]
        return detail::hybrid_layer_compute_time(m, p, c);
    layer_time r;
    const double t = p.tp, b = p.micro_batch, s = p.seq, T = b * s / p.cp;
    const double h = m.hidden, q = static_cast<double>(m.heads) * m.head_dim(), kv = m.kv_dim(), f = m.ffn;
    const double a = m.heads;
    // per-head width of V (MLA: d_v; else head_dim)
    const double d_v = m.value_head_dim();
    // GEMMs
    double gf = 0, gb = 0, gemm_kernels = 0;  // forward GEMM kernels (layer mean)
    double moe_copies = 0;  // MoE: routed token copies on this rank (mean over the layers)
    double moe_gpu_fwd = 0;  // the routed experts' forward GEMM time (mean over the layers)
    auto add = [&](detail::gemm_pair x, double weight = 1.0) {
        gf += weight * x.fwd;
        gb += weight * x.bwd;
        gemm_kernels += weight;
    };
    if (m.is_mla()) {
        // MLA (DeepSeek-V2 report, section 2.1): the down-projections to the latents are not
        // split by TP (Megatron-Core MLA replicates them); the up-projections and W_O are.
        const double rq = m.q_lora_rank, rkv = m.kv_lora_rank, dn = m.qk_nope_head_dim, dr = m.qk_rope_head_dim;
        if (m.q_lora_rank > 0) {
            add(detail::gemm_fwd_bwd(T, rq + rkv + dr, h, c));
            add(detail::gemm_fwd_bwd(T, a * (dn + dr) / t, rq, c));
        } else {
            add(detail::gemm_fwd_bwd(T, rkv + dr, h, c));
            add(detail::gemm_fwd_bwd(T, a * (dn + dr) / t, h, c));
        }
        add(detail::gemm_fwd_bwd(T, a * (dn + d_v) / t, rkv, c));
        add(detail::gemm_fwd_bwd(T, h, a * d_v / t, c));
    } else {
        // the fused QKV projection (+ q for the attention output gate: transformer::qkv_dim)
        add(detail::gemm_fwd_bwd(T, m.qkv_dim() / t, h, c));
        add(detail::gemm_fwd_bwd(T, h, q / t, c));
    }
    const double gate = m.gated_mlp ? 2.0 : 1.0;
    if (m.experts > 1) {
        // MoE layers (moe_fraction of them): grouped GEMM over the experts held locally (E / ep
        // of them), T k tokens spread evenly; the shared experts as one dense MLP of S x expert
        // width; the router. Dense layers of the model: the dense MLP of width ffn.
        const double moe = m.moe_fraction(), fe = m.expert_width();
        const auto routed = detail::routed_expert_gemms(m, p, c);
        add(routed.up, moe);
        add(routed.down, moe);
        moe_gpu_fwd = moe * (routed.up.fwd + routed.down.fwd);
        // Transformer Engine's GroupedLinear launches one GEMM per local expert (general_grouped_gemm
        // -> nvte_multi_stream_cublas_gemm, transformer_engine/pytorch/cpp_extensions/gemm.py):
        // E / ep kernels per grouped GEMM, one of which `add` counted
        gemm_kernels += moe * 2.0 * (std::max(1.0, static_cast<double>(m.experts) / p.ep) - 1.0);
        moe_copies = moe * detail::routed_copies(m, p);
        if (m.shared_experts > 0) {
            const double fs = m.shared_experts * fe;
            add(detail::gemm_fwd_bwd(T, gate * fs / t, h, c), moe);
            add(detail::gemm_fwd_bwd(T, h, fs / t, c), moe);
        }
        add(detail::gemm_fwd_bwd(T, m.experts, h, c), moe);
        detail::add_latent_projections(m, T, t, c, add, moe);
        if (moe < 1.0) {
            add(detail::gemm_fwd_bwd(T, gate * f / t, h, c), 1.0 - moe);
            add(detail::gemm_fwd_bwd(T, h, f / t, c), 1.0 - moe);
        }
    } else {
        add(detail::gemm_fwd_bwd(T, gate * f / t, h, c));
        add(detail::gemm_fwd_bwd(T, h, f / t, c));
    }
    r.gemm_fwd = seconds(gf);
    r.gemm_bwd = seconds(gb * c.backward_gemm_slowdown);
    // attention core; sliding-window layers attend min(s, window) keys (attention_span)
    const detail::gemm_pair core = detail::attention_core_seconds(m, p, c, m.attention_span(s));
    r.attention_fwd = seconds(core.fwd);
    r.attention_bwd = seconds(core.bwd);
    // element-wise
    // the norms (read + write h each: two, four with post-norms) and the two residual adds (7 h)
    const double replicated = (2.0 * m.norms_per_layer() + 7.0) * h / (p.sequence_parallel ? t : 1.0);
    const double f_token = m.mlp_width_per_token();  // (k + shared) x expert width, or ffn, mean over layers
    const double act = (m.gated_mlp ? 3.0 : 2.0) * f_token / t;
    // the rotary embedding's passes over Q and K (detail::rope_cost: fused, or unfused with a
    // YaRN attention factor), in element accesses per token; its backward beyond twice the forward
    const detail::rope_passes rope = detail::rope_cost(m);
    const double rotary = m.rope_fraction() * (m.is_mla() ? rope.fwd * (a * m.qk_rope_head_dim / t + m.qk_rope_head_dim)
                                                            : rope.fwd * (q + kv) / t);
    const double rotary_bwd_excess = rotary * (rope.bwd / rope.fwd - 2.0);
    double bytes_fwd = 2.0 * T * (replicated + act + rotary);
    if (c.gemm_input_bytes < 2.0) bytes_fwd += T * c.cast_bytes() * (h + q / t + h + f_token / t);
    // MoE token permutations as the dispatcher runs them (detail::permutation_bytes), the backward
    // over the same bytes; in low precision the experts' FC1 input is quantized per routed copy
    // after the permutation (the FC2 input, k expert widths per token, is in the casts above)
    const double permutations = detail::permutation_kernels(m, p);
    const double permute = detail::permutation_bytes(m, permutations, moe_copies);
    const double latent_cast = detail::latent_cast_bytes(m, T, t, c);
    if (c.gemm_input_bytes < 2.0) bytes_fwd += moe_copies * c.cast_bytes() * m.expert_io() + latent_cast;
    // context parallelism: the ring attention's merges of partial outputs and gradients
    const detail::cp_merge_cost cp_merge = detail::cp_ring_merge(m, p);
    const detail::attention_extras extra = detail::attention_extra_bytes(m, T, t);
    r.elementwise_fwd = seconds(detail::memory_seconds(bytes_fwd + permute + cp_merge.bytes_fwd + extra.fwd, c));
    r.elementwise_bwd = seconds(detail::memory_seconds(
        2.0 * bytes_fwd + permute + cp_merge.bytes_bwd + 2.0 * T * rotary_bwd_excess + extra.bwd, c));
    // per-kernel overhead (compute_constants::kernel_overhead_s) x the kernels of the layer
    layer_kernels n =
        detail::count_layer_kernels(m, gemm_kernels, c.input_quantize_kernels(), p.ep, permutations, c.fused_grouped_cast);
    n.forward += cp_merge.kernels_fwd;
    n.backward += cp_merge.kernels_bwd;
    // the unfused core (attention_core_seconds) in place of the flash kernel's one forward and two
    // backward kernels: its two batched GEMMs forward and four backward, the softmax's kernels
    // (score_softmax_cost), the soft-cap's passes, three each way, and the K and V repeats of
    // grouped-query attention (unfused_kv_expansion), two each way
    if (p.attention_for(m) == attention_kernel::unfused) {
        const score_softmax_cost sm = score_softmax_cost_of(p.softmax_for(m));
        const double cap = m.attn_logit_softcapping > 0.0 ? eager_softcap.kernels_each_way : 0.0;
        const double expand = unfused_kv_expansion(m).kernels_each_way;
        n.forward += 2.0 + sm.kernels_fwd + cap + expand - 1.0;
        n.backward += 4.0 + sm.kernels_bwd + cap + expand - 2.0;
    }
    detail::set_kernel_overheads(r, n, moe_gpu_fwd, p, c);
    return r;
}

namespace detail {
/// Everything layer_compute_time, output_layer_time and mtp_time read (the model, the plan's
/// layer_shape, the compute parameters), for an exact memo: the structs themselves with their
/// defaulted equality, so a field added to any of them is part of the key.
struct layer_key {
    transformer m;
    layer_shape shape;
    compute_params c;
    [[nodiscard]] bool operator==(const layer_key&) const = default;
};
}  // namespace detail

/// @brief Forward and backward time of the routed experts' GEMMs of one MoE layer for one
/// micro-batch on one GPU (the part of layer_compute_time that EP and expert tensor parallelism
/// shape; see detail::routed_expert_gemms). Zero for a dense model.
[[nodiscard]] inline duration routed_expert_gemm_time(const transformer& m, const layer_shape& p, const compute_params& c) {
    if (m.experts <= 1) return seconds(0.0);
    const auto g = detail::routed_expert_gemms(m, p, c);
    return seconds(g.up.fwd + g.down.fwd + (g.up.bwd + g.down.bwd) * c.backward_gemm_slowdown);
}

/// @brief Extra forward time that recompute adds to one layer's backward: the whole forward
/// (full) or the attention core (selective; Korthikanti et al. 2022). `full_share`: the share of
/// the layers full recompute repeats (plan::full_recompute_share: recompute_method block recomputes
/// N of each model chunk's layers), a mean over the layers.
[[nodiscard]] constexpr duration recompute_time(const layer_time& l, recompute r, double full_share = 1.0) {
    if (r == recompute::full) return full_share * l.forward();
    if (r == recompute::selective) return l.attention_fwd;
    return seconds(0.0);
}

/// @brief Forward time that Megatron-Core's module-level recompute (`modules`, recompute_module bits;
/// --recompute-modules) adds to one layer's backward for one micro-batch: the forward of each
/// recomputed module, with the same kernels as layer_compute_time: core_attn the attention core
/// (not again under recompute::selective, which already repeats it; nothing under full);
/// layernorm the two pre-norms (one in a hybrid model's layer; not Gemma's post-norms, which sit in
/// the output projections' modules; read and write h values each per
/// token, split by t with sequence parallelism); mla_up_proj MLA's up-projection GEMMs; mlp the dense MLP's two GEMMs and its
/// activation; moe the routed experts' grouped GEMMs and the shared experts' MLP; moe_act the
/// routed experts' activation (read 2 f_e, write f_e values per routed copy, gated; 1 and 1
/// plain); shared_experts the shared experts' MLP. MoE terms weigh by the MoE share of the layers.
[[nodiscard]] inline duration module_recompute_time(const transformer& m, const plan& p, const compute_params& c,
                                                    const layer_time& l, unsigned modules) {
    if (modules == 0 || p.recompute_mode == recompute::full) return seconds(0.0);
    const double t = p.tp, T = static_cast<double>(p.micro_batch) * p.seq / p.cp, h = m.hidden;
    const double gate = m.gated_mlp ? 2.0 : 1.0, act_bytes = (m.gated_mlp ? 3.0 : 2.0) * 2.0;
    double sec = 0.0;
    if ((modules & recompute_core_attn) && p.recompute_mode != recompute::selective) sec += in_seconds(l.attention_fwd);
    if (modules & recompute_layernorm)
        sec += detail::memory_seconds(T * m.blocks_per_layer() * (2.0 * h * 2.0) / (p.sequence_parallel ? t : 1.0), c);
    if ((modules & recompute_mla_up_proj) && m.is_mla()) {
        const double a = m.heads, rq = m.q_lora_rank, rkv = m.kv_lora_rank;
        if (m.q_lora_rank > 0) sec += detail::gemm_seconds(T, a * (m.qk_nope_head_dim + m.qk_rope_head_dim) / t, rq, c);
        sec += detail::gemm_seconds(T, a * (m.qk_nope_head_dim + m.value_head_dim()) / t, rkv, c);
    }
    const double moe = m.is_moe() ? m.moe_fraction() : 0.0;
    auto mlp_forward = [&](double width) {  // a dense-style MLP of `width`, split by t
        return detail::gemm_seconds(T, gate * width / t, h, c) + detail::gemm_seconds(T, h, width / t, c) +
               detail::memory_seconds(T * act_bytes * width / t, c);
    };
    if (modules & recompute_mlp) sec += m.dense_mlp_fraction() * mlp_forward(m.ffn);
    if (moe > 0.0) {
        const double fe = m.expert_width() / p.expert_tp();
        const bool whole = (modules & recompute_moe) != 0;
        if (whole) {
            const auto g = detail::routed_expert_gemms(m, p, c);
            sec += moe * (g.up.fwd + g.down.fwd);
        }
        if (whole || (modules & recompute_moe_act))
            sec += moe * detail::memory_seconds(detail::routed_copies(m, p) * act_bytes * fe, c);
        if ((whole || (modules & recompute_shared_experts)) && m.shared_experts > 0)
            sec += moe * mlp_forward(static_cast<double>(m.shared_experts) * m.expert_width());
    }
    return seconds(sec);
}

/// @brief Output layer of the last stage for one micro-batch: the logits GEMM (T x h)(h x V/t)
/// forward and its two backward GEMMs, plus the vocabulary-parallel cross-entropy at 16 bytes per
/// logit element forward and backward: the time of a fused Triton kernel like Transformer Engine's
/// (`--cross-entropy-fusion-impl te`, which Megatron-Bridge's performance scripts run; Liger-Kernel's
/// kernel of the same design takes 7.96 ms on H100 for 8,192 tokens x 131,072, the model 7.5: test
/// `validation: cross-entropy kernels`). Megatron-Core's native fused kernel takes 2.3x that and is
/// not modelled (docs/accuracy.md (13)). The logits GEMM stays in bf16 under fp8 training:
/// Megatron-Core's output layer is a plain `ColumnParallelLinear` outside the Transformer Engine
/// fp8 autocast that wraps the transformer block (megatron/core/models/gpt/gpt_model.py,
/// transformer_block.py), as are the embedding lookups.
[[nodiscard]] inline duration output_layer_time(const transformer& m, const layer_shape& p, const compute_params& c) {
    const double T = static_cast<double>(p.micro_batch) * p.seq / p.cp;
    const double v = static_cast<double>(m.vocab) / p.tp;
    double g = 0;
    if (c.gemm_input_bytes < 2.0) {
        compute_params bf = c;
        bf.gemm_peak = c.bf16_peak;
        bf.gemm_efficiency = c.bf16_gemm_efficiency;
        bf.gemm_input_bytes = 2.0;
        bf.finish();
        g = detail::gemm_seconds(T, v, m.hidden, bf);
    } else {
        g = detail::gemm_seconds(T, v, m.hidden, c);
    }
    // Gemma 2's final soft-cap, c tanh(x / c) over the 16-bit logits before the loss
    // (Megatron-Bridge gemma2_provider.py Gemma2OutputLayer): eager_softcap's passes, forward and
    // backward
    const double cap = m.final_logit_softcapping > 0.0 ? eager_softcap.fwd_bytes + eager_softcap.bwd_bytes : 0.0;
    return seconds(3.0 * g + detail::memory_seconds((16.0 + cap) * T * v, c));
}

/// @brief Forward + backward of the multi-token-prediction modules (DeepSeek-V3 technical report,
/// section 2.2) for one micro-batch, on the last pipeline stage: per module one MoE layer
/// (layer_compute_time with every layer an MoE layer and full attention), the projection M
/// (T x 2h)(2h x h/t) and its own output layer (output_layer_time). 0 without MTP.
[[nodiscard]] inline duration mtp_time(const transformer& m, const layer_shape& p, const compute_params& c) {
    if (m.mtp_layers <= 0) return seconds(0.0);
    const layer_time lt = layer_compute_time(mtp_block(m), p, c);
    const double T = static_cast<double>(p.micro_batch) * p.seq / p.cp, h = m.hidden;
    const auto proj = detail::gemm_fwd_bwd(T, h / p.tp, 2.0 * h, c);
    const duration one = lt.forward() + lt.backward() + seconds(proj.fwd + proj.bwd * c.backward_gemm_slowdown) +
                         output_layer_time(m, p, c);
    return static_cast<double>(m.mtp_passes()) * one;  // each depth run (repeated modules: mtp_depths)
}

/// @brief One transformer layer's times and the last stage's output layer (with the MTP modules)
/// for one micro-batch: what the step predictor takes from the compute model per plan.
struct layer_and_output {
    layer_time layer;  ///< layer_compute_time
    duration output{};  ///< output_layer_time + mtp_time
};

/// @brief layer_compute_time, output_layer_time and mtp_time through a small per-thread exact memo
/// (16 entries: 8 sets of 2, the least recently used of a set replaced): the planner and scaling
/// sweeps evaluate many plans that share a layer's shapes (they differ in pipeline depth, ZeRO
/// stage, recompute or schedule). Two ways per set keep two shapes whose hashes meet (a sweep
/// alternating between them, one in bf16 and one in MXFP8, say) from evicting each other on every
/// call. Same results as the functions themselves; allocation-free.
[[nodiscard]] inline layer_and_output layer_and_output_cached(const transformer& m, const layer_shape& p, const compute_params& c) {
    struct slot { detail::layer_key key; layer_and_output value; bool used = false; };
    struct set { slot way[2]; unsigned mru = 0; };
    thread_local set table[8];
    // the set from the fields that differ between the plans of one search (and the model's
    // size): equality, not the hash, decides a hit, so the hash may leave fields out
    const auto mix = [](std::uint64_t h, std::uint64_t x) { return (h ^ x) * 1099511628211ull; };  // FNV-1a step
    std::uint64_t h = 1469598103934665603ull;
    h = mix(h, static_cast<std::uint64_t>(p.tp) | static_cast<std::uint64_t>(p.cp) << 20 | static_cast<std::uint64_t>(p.ep) << 40);
    h = mix(h, static_cast<std::uint64_t>(p.micro_batch) | static_cast<std::uint64_t>(p.seq) << 24 |
                   static_cast<std::uint64_t>(p.etp) << 48 | (p.sequence_parallel ? 1ull << 63 : 0ull));
    h = mix(h, static_cast<std::uint64_t>(m.hidden) | static_cast<std::uint64_t>(m.layers) << 32);
    h = mix(h, std::bit_cast<std::uint64_t>(c.inv_gemm_rate));
    h ^= h >> 33;  // MurmurHash3's fmix64: the low bits see the high ones
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    set& st = table[h & 7u];
    // the model's name and source texts are no input of the layer functions: a slot's key takes
    // the caller's views before the comparison (the same characters at the same address), so the
    // model is compared in place, not copied
    const auto hit = [&](slot& s) {
        s.key.m.name = m.name;
        s.key.m.source = m.source;
        return s.used && s.key.shape == p && s.key.c == c && s.key.m == m;
    };
    if (hit(st.way[st.mru])) return st.way[st.mru].value;
    const unsigned other = st.mru ^ 1u;
    st.mru = other;  // a hit in the other way or the replacement: either way now the most recent
    slot& s = st.way[other];
    if (hit(s)) return s.value;
    s.key = {m, p, c};
    s.value = {layer_compute_time(m, p, c), output_layer_time(m, p, c) + mtp_time(m, p, c)};
    s.used = true;
    return s.value;
}

/// @brief layer_compute_time through the memo of layer_and_output_cached.
[[nodiscard]] inline layer_time layer_compute_time_cached(const transformer& m, const layer_shape& p, const compute_params& c) {
    return layer_and_output_cached(m, p, c).layer;
}

/// @brief Optimizer step (mixed-precision Adam, memory-bound) for `params` parameters held by
/// this GPU's optimizer shard, whose own state is `state_bytes` per parameter (plan::
/// optimizer_state_bytes): reads the fp32 gradient (4 B) and the state, writes the state and the
/// bf16 working copy (2 B): 30 bytes per parameter with fp32 main weights and moments (12 B;
/// Rajbhandari et al. 2020 Sec. 3.1's 16-byte state, read and written once).
[[nodiscard]] constexpr duration optimizer_time(double params, const compute_params& c, int state_bytes = 12) {
    return seconds(detail::memory_seconds((4.0 + 2.0 * state_bytes + 2.0) * params, c));
}

}  // namespace commscale
