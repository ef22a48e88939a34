#pragma once
/// @file hardware/accelerator.hpp
/// @brief The accelerator value type: dense peak FLOP/s per data type (vendors' sparsity figures
/// halved), memory capacity and bandwidth, the scale-up link, a default achievable compute
/// efficiency for large matmuls, the compute units and special-function rate the compute model
/// reads, and the source.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "../detail/names.hpp"
#include "../units.hpp"
#include "links.hpp"

namespace commscale {

/// @brief Numeric formats with a tensor-core peak.
/// * fp8: per-tensor scaled FP8 (E4M3/E5M2), 8 bits per element.
/// * mxfp8: OCP Microscaling MXFP8 (OCP MX Specification v1.0): 32 FP8 elements share one 8-bit
///   E8M0 scale, 8 + 8/32 = 8.25 bits per element.
/// * nvfp4: NVIDIA NVFP4 (NVIDIA technical blog "Introducing NVFP4 for Efficient and Accurate
///   Low-Precision Inference"; Transformer Engine docs): 16 FP4 E2M1 elements share one FP8 E4M3
///   scale, 4 + 8/16 = 4.5 bits per element (the per-tensor FP32 scale is negligible).
/// * fp4: OCP MXFP4 (OCP MX v1.0): 32 FP4 E2M1 elements share one E8M0 scale, 4 + 8/32 = 4.25 bits.
enum class dtype { fp32, tf32, bf16, fp16, fp8, mxfp8, nvfp4, fp4 };
inline constexpr std::size_t dtype_count = 8;

/// @brief Lower-case spellings of the data types (CLI `--dtype`, JSON `peak_tflops` keys):
/// `to_string`, `parse<dtype>`.
inline constexpr std::array<name_entry<dtype>, dtype_count> dtype_spellings{{
    {dtype::fp32, "fp32"}, {dtype::tf32, "tf32"}, {dtype::bf16, "bf16"}, {dtype::fp16, "fp16"},
    {dtype::fp8, "fp8"}, {dtype::mxfp8, "mxfp8"}, {dtype::nvfp4, "nvfp4"}, {dtype::fp4, "fp4"},
}};
static_assert(detail::in_enum_order(dtype_spellings));
[[nodiscard]] constexpr const auto& name_table(dtype) { return dtype_spellings; }

/// @brief Storage bits per element, block scales included (see dtype): fp32/tf32 32, bf16/fp16
/// 16, fp8 8, mxfp8 8.25, nvfp4 4.5, fp4 (MXFP4) 4.25.
[[nodiscard]] constexpr double dtype_bits(dtype d) {
    switch (d) {
        case dtype::fp32:
        case dtype::tf32: return 32.0;
        case dtype::bf16:
        case dtype::fp16: return 16.0;
        case dtype::fp8: return 8.0;
        case dtype::mxfp8: return 8.0 + 8.0 / 32.0;
        case dtype::nvfp4: return 4.0 + 8.0 / 16.0;
        case dtype::fp4: return 4.0 + 8.0 / 32.0;
    }
    return 16.0;
}

/// @brief Where an accelerator's compute_efficiency (its best-shape matmul fraction of peak) comes from.
/// * measured: a published measurement of the part (ml-engineering's MAMF table, a vendor
///   benchmark), or a value the user gave.
/// * assumed: none published: default_compute_efficiency (hardware/accelerators.hpp).
/// * fitted: none published; fitted to the published training runs on the part in the project's
///   calibration set (calibrate/compute_fit.hpp, `commscale fit-compute`), from
///   default_compute_efficiency as the prior. `fit-compute` refits every accelerator of its runs
///   that is not `measured`.
enum class efficiency_basis { measured, assumed, fitted };

/// @brief Lower-case spellings of efficiency_basis (accelerator JSON `compute_efficiency_basis`).
inline constexpr std::array<name_entry<efficiency_basis>, 3> efficiency_basis_spellings{{
    {efficiency_basis::measured, "measured"}, {efficiency_basis::assumed, "assumed"}, {efficiency_basis::fitted, "fitted"},
}};
static_assert(detail::in_enum_order(efficiency_basis_spellings));
[[nodiscard]] constexpr const auto& name_table(efficiency_basis) { return efficiency_basis_spellings; }

/// @brief Ranges of the accelerator figures the JSON reader accepts: far beyond any built part (a
/// GB300 has 288 GB at 8 TB/s and 160 SMs), so that a figure outside is a unit slip or a typo.
struct accelerator_limits {
    static constexpr double memory_GiB = 1e9;             ///< HBM capacity, GiB
    static constexpr double memory_bandwidth_GBps = 1e9;  ///< HBM bandwidth, GB/s
    static constexpr double min_peak_tflops = 1e-3;       ///< a dense peak, TFLOPS (1 GFLOP/s) ...
    static constexpr double max_peak_tflops = 1e9;        ///< ... to 1e9 TFLOPS
    static constexpr double min_compute_efficiency = 0.01;  ///< best-shape matmul fraction of peak, ...
    static constexpr double max_compute_efficiency = 1.0;   ///< ... at most the peak
    static constexpr double min_power_W = 1.0;            ///< board power, W (1 W ...
    static constexpr double max_power_W = 1e6;            ///< ... to 1 MW)
    static constexpr int compute_units = 1'000'000;       ///< SMs / CUs
    static constexpr double min_fp8_mamf_ratio = 0.01;    ///< FP8 over BF16 best-shape fraction ...
    static constexpr double max_fp8_mamf_ratio = 10.0;
    static constexpr double min_fp4_gemm_ratio = 0.01;    ///< FP4 over BF16 GEMM fraction of peak ...
    static constexpr double max_fp4_gemm_ratio = 10.0;
    static constexpr double min_mxfp8_gemm_time_ratio = 0.1;  ///< MXFP8 over per-tensor FP8 GEMM time ...
    static constexpr double max_mxfp8_gemm_time_ratio = 10.0;
    static constexpr double min_flash_attention_2_ratio = 0.01;  ///< FlashAttention-2's fraction of peak over A100's ...
    static constexpr double max_flash_attention_2_ratio = 10.0;
    static constexpr double max_exponentials_per_bf16_flop = 1.0;
    static constexpr double min_host_bandwidth_GBps = 0.1;  ///< GPU-host link, GB/s per direction ...
    static constexpr double max_host_bandwidth_GBps = 1e6;  ///< ... (0.1 GB/s to 1 PB/s)
};

/// @brief Transformer Engine's GEMM profiling tutorial (NVIDIA/TransformerEngine docs/examples/
/// gemm_profiling/gemm_profiling.rst, "Autocast vs Pre-quantized"): the 12 GEMMs (fprop, dgrad,
/// wgrad) of a 5B-parameter layer (hidden 4096, FFN 16384, 15,872 tokens) on one B300, on
/// pre-quantized inputs, per-layer totals in ms by precision. The one published set of GEMM times
/// by precision on Blackwell: the catalog's fp4_gemm_ratio of B300, GB300, B200 and GB200
/// (hardware/accelerators.hpp) and the default mxfp8_gemm_time_ratio (below) come from it.
struct te_gemm_profiling_b300 {
    static constexpr double bf16_ms = 13.102, fp8_current_ms = 6.812, mxfp8_ms = 7.161, nvfp4_ms = 3.764;
};

/// @brief One accelerator model.
struct accelerator {
    std::string_view name;                                   ///< e.g. "a100-80gb-sxm"
    std::string_view display_name;                           ///< e.g. "NVIDIA A100-SXM4-80GB"
    data_size memory{};                                      ///< HBM capacity
    byte_rate memory_bandwidth{};                            ///< HBM bandwidth
    std::array<std::optional<flop_rate>, dtype_count> dense_peak{};  ///< indexed by dtype; nullopt = unsupported
    std::string_view scale_up_link;                          ///< catalog link name (full complement per GPU)
    double compute_efficiency = 0.5;                         ///< achievable fraction of peak for large matmuls (documented per entry)
    efficiency_basis compute_efficiency_basis = efficiency_basis::measured;  ///< where compute_efficiency comes from
    std::string_view source;
    std::optional<double> power;                             ///< board power in watts (TDP/TBP from the datasheet); nullopt = not published
    /// Streaming multiprocessors (NVIDIA) or compute units (AMD) that GEMM tiles are spread over;
    /// 0 = unknown (then no wave quantization is applied).
    int compute_units = 0;
    /// Best-shape FP8 matmul rate over the best-shape BF16 rate (ml-engineering MAMF table): the
    /// GEMM efficiency of FP8 and MXFP8 training is compute_efficiency times this; 1 where no FP8
    /// figure is published.
    double fp8_mamf_ratio = 1.0;
    /// The GEMM rate of NVFP4 and MXFP4 training as a fraction of the FP4 peak, over the BF16 GEMM
    /// rate as a fraction of the BF16 peak, at the same shapes: the GEMM efficiency of FP4 training
    /// is compute_efficiency times this; 1 where no FP4 figure is known (see the catalog entries).
    double fp4_gemm_ratio = 1.0;
    /// MXFP8's GEMM time over per-tensor FP8's at the same shapes, each with Transformer Engine's
    /// settings (per-tensor scaling: the split accumulator in the backward; MXFP8: 32-element
    /// block scales the tensor cores read): the step model runs MXFP8's GEMMs at per-tensor FP8's
    /// time, its backward factor included, times this (predict/compute.hpp). Default: Transformer
    /// Engine's GEMM profiling on one B300 (te_gemm_profiling_b300: 7.161 against 6.812 ms on
    /// pre-quantized inputs), 1.051, the one published pair, for every part; replace it with a
    /// measurement of yours (accelerator JSON `mxfp8_gemm_time_ratio`).
    double mxfp8_gemm_time_ratio = te_gemm_profiling_b300::mxfp8_ms / te_gemm_profiling_b300::fp8_current_ms;
    /// FlashAttention-2's fraction of this accelerator's BF16 peak over its fraction of the A100's
    /// (the kernel the PyTorch stacks run; compute_constants::attention_efficiency is the A100's):
    /// the kernel does not use Hopper's warpgroup tensor-core instructions, so it keeps a smaller
    /// share of the larger peak. 1 where no figure is known (see the catalog entries).
    double flash_attention_2_ratio = 1.0;
    /// Softmax exponentials per clock per SM over dense BF16 tensor-core FLOPs per clock per SM:
    /// the exponential rate is the dense BF16 peak times this; 0 = not known (the exponentials are
    /// then not priced apart).
    double exponentials_per_bf16_flop = 0.0;
    /// The link between this accelerator and its host's memory, per direction, as one GPU gets it
    /// when every GPU of the node or superchip copies at once: what Transformer Engine's activation
    /// CPU offloading moves its tensors over (predict/step.hpp, "offload"). PCIe Gen5 x16, 63.0 GB/s
    /// (hardware/links.hpp `pcie<5, 16>`), unless the entry says otherwise.
    byte_rate host_bandwidth = pcie<5, 16>.per_direction;
    /// FP8 GEMMs take their operands in every layout, not only the TN one that Hopper's FP8
    /// tensor cores require: Transformer Engine's `nvte_is_non_tn_fp8_gemm_supported`
    /// (transformer_engine/common/transformer_engine.cpp: compute capability 10.x, 11.x and 13 and
    /// up, i.e. Blackwell's data-center parts, not 12.x) gates the transposed copy of a per-tensor
    /// FP8 tensor (transformer_engine/pytorch/csrc/quantizer.cpp, Float8Quantizer::create_tensor:
    /// `create_transpose = columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported()`). With FP8
    /// parameters (plan::fp8_param_gather) a layer's weights are 1 byte per element where this
    /// holds, 2 (the data and its transpose) where it does not (workload/memory.hpp).
    bool non_tn_fp8_gemm = false;
    /// Lower-case parts of the device names CUDA and ROCm report for this accelerator (nvidia-smi,
    /// rocm-smi, the device lines of nccl-tests and rccl-tests: "NVIDIA A100-SXM4-80GB", "AMD
    /// Instinct MI300X"), matched case-insensitively by accelerator_for_device, where the longest
    /// match over the catalog wins ("gb200" over "b200", "h100 pcie" over "h100"). Empty: none.
    std::array<std::string_view, 2> device_names{};
    /// The cluster preset a measurement on this accelerator is priced on when no cluster is named
    /// (`commscale fit` without --cluster; preset_for_gpu): its vendor's reference system, or the
    /// nearest preset of its generation; empty: the default cluster (dgx-a100).
    std::string_view reference_cluster;

    /// @brief Dense peak for a data type, or nullopt if unsupported.
    [[nodiscard]] constexpr std::optional<flop_rate> peak(dtype d) const {
        return dense_peak[static_cast<std::size_t>(d)];
    }
};

}  // namespace commscale
