#pragma once
/// @file hardware/accelerators.hpp
/// @brief The accelerator catalog: constexpr entries (`h100_sxm`, `mi300x`, ...) and runtime lookup
/// by the names of CLI.md (`accelerator_by_name("a100-80gb-sxm")`).
///
/// Conventions.
/// * Peaks are DENSE: where a vendor prints only the 2:4-sparsity figure ("1,979 TFLOPS*"), the
///   catalog stores half of it. nullopt means the data type has no published peak (unsupported,
///   or, for Gaudi2's fp32/tf32/fp16, not published by the vendor).
/// * fp32 is the highest dense fp32 rate a matmul can use: CUDA-core FMA on NVIDIA (no fp32 tensor
///   cores), the "FP32 Matrix" figure on AMD.
/// * HBM capacities quoted in "GB" are binary (HBM stacks are powers of two: nvidia-smi reports an
///   A100 80GB as 81920 MiB), so they are stored as GiB. Bandwidths are decimal (TB/s = 1e12 B/s).
/// * MI250X figures are per package (two GCDs), as AMD quotes them.
/// * compute_units: SMs / CUs from NVIDIA's A100, H100 and V100 whitepapers, the Ada whitepaper,
///   the Blackwell technical brief (Blackwell Ultra 160) and AMD's CDNA 2/3/4 whitepapers.
/// * fp8_mamf_ratio: the FP8 over the BF16 best-shape matmul fraction of ml-engineering's "Maximum
///   Achievable Matmul FLOPS" table (stas00/ml-engineering compute/accelerator/README.md).
/// * fp4_gemm_ratio: NVFP4 GEMMs run at a lower fraction of their peak than BF16's. Measured on
///   B300 only (te_gemm_profiling_b300): the 12 GEMMs of a 5B-parameter layer on pre-quantized
///   inputs take 13.102 ms in BF16, 7.161 in MXFP8 and 3.764 in NVFP4: NVFP4 3.48x BF16 against a
///   6x peak ratio, 0.580. B200 and
///   GB200 (no FP4 measurement; FP4 peak twice their FP8 peak, where B300's is three times): the
///   B300's NVFP4 kernel gain at those shapes over per-tensor FP8 (6.812 ms), 1.81x, over their FP8
///   rate, 1.81 x fp8_mamf_ratio / 2; over MXFP8 1.90x, which runs per-tensor FP8's GEMMs x
///   accelerator::mxfp8_gemm_time_ratio. Replace with a measurement where one exists.
/// * flash_attention_2_ratio: FlashAttention-2, causal, head dim 128, forward + backward at 16K
///   tokens, runs at 189 of 312 TFLOP/s on A100 and 328 of 989 on H100 (Dao-AILab/flash-attention
///   README, "Performance"; FlashAttention-3, Shah et al. 2024: "FlashAttention-2 achieves only
///   35% utilization on H100"). The attention core (layer_compute_time) reproduces both with
///   compute_constants' kernel figure 0.6 when Hopper's flash efficiency is 0.553 of the A100's
///   (the softmax exponentials, priced apart at each part's rate, take the rest): 0.553 on the
///   Hopper parts. On B200 the same benchmark script (head dim 64, non-causal, 16K tokens) measures
///   345.8 TFLOP/s forward + backward (flash_attn 2.7.4, Dao-AILab/flash-attention issue #1589)
///   against the README's 296 on H100: FA2 runs on Blackwell's legacy warp-level MMA path, 1.17x its
///   H100 rate on a 2.3x larger peak. The attention core reproduces that ratio at 0.286 on the
///   Blackwell parts (B200, B300, GB200, GB300; no B300 figure: as B200). 1 (no figure) elsewhere.
///   Test `validation: FlashAttention-2 on Hopper against A100 and on Blackwell against Hopper`.
/// * exponentials_per_bf16_flop: the special function units run 16 exp2 (MUFU.EX2) per clock per
///   SM on Ampere, Hopper and Blackwell (CUDA C++ Programming Guide, "Arithmetic Instructions"
///   throughput table), against the dense BF16 tensor-core FLOPs per clock per SM (A100
///   whitepaper; FlashAttention-3, Shah et al. 2024 Sec. 3: "989 TFLOPS of FP16 matmul but only
///   3.9 TFLOPS of special functions").
/// * host_bandwidth: the GPU's link to host memory, per direction, as each GPU gets it while all copy
///   at once (activation CPU offloading, predict/step.hpp). HGX/DGX and OAM parts: their PCIe host
///   interface (datasheets: A100 "PCIe Gen4 64 GB/s", H100 "PCIe Gen5 128 GB/s", both directions)
///   at the PCI-SIG x16 rate, 31.5 (Gen4) or 63.0 (Gen5) GB/s. GH200: NVLink-C2C, 900 GB/s both
///   directions (GH200 datasheet), 450. GB200 and GB300: one Grace CPU's NVLink-C2C, 900 GB/s both
///   directions, serves the superchip's two GPUs (NVIDIA GB200 NVL72 product page; Grace's
///   LPDDR5X, up to 512 GB/s, is not the narrower side): 225 GB/s per GPU and direction.

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../units.hpp"
#include "accelerator.hpp"

namespace commscale {

/// @brief Achievable fraction of the dense bf16 peak on large matmuls for accelerators without a
/// published measurement: 0.8, the low end of the NVIDIA measurements in the Maximum Achievable
/// Matmul FLOPS (MAMF) table of ml-engineering (Bekman, compute/accelerator/README.md: A100 SXM
/// 86.9%, A100 PCIe 81.1%, H100 SXM 80.3%, GH200 83.6%).
inline constexpr double default_compute_efficiency = 0.8;

namespace detail {
/// Dense peaks in TFLOPS (fp32, tf32, bf16, fp16, fp8, then the block-scaled mxfp8, nvfp4 and fp4 =
/// MXFP4, unsupported unless given); a negative value marks an unsupported/unpublished data type.
[[nodiscard]] constexpr std::array<std::optional<flop_rate>, dtype_count> peaks(double fp32, double tf32,
                                                                                double bf16, double fp16,
                                                                                double fp8, double mxfp8 = -1.0,
                                                                                double nvfp4 = -1.0, double fp4 = -1.0) {
    auto one = [](double t) -> std::optional<flop_rate> {
        if (t < 0) return std::nullopt;
        return flops_per_second(t * tera);
    };
    return {one(fp32), one(tf32), one(bf16), one(fp16), one(fp8), one(mxfp8), one(nvfp4), one(fp4)};
}
inline constexpr double unsupported = -1.0;
}  // namespace detail

/// @brief NVIDIA V100 SXM2 32GB: fp32 15.7, fp16 tensor 125 TFLOPS; no tf32/bf16/fp8; HBM2 900 GB/s;
/// 6 NVLink2 links. Efficiency: no MAMF measurement -> default_compute_efficiency (fp16 GEMM).
inline constexpr accelerator v100_sxm2{
    .name = "v100-sxm2", .display_name = "NVIDIA Tesla V100-SXM2-32GB",
    .memory = bytes(32.0 * gibi), .memory_bandwidth = bytes_per_second(900.0 * giga),
    .dense_peak = detail::peaks(15.7, detail::unsupported, detail::unsupported, 125.0, detail::unsupported),
    .scale_up_link = "nvlink2", .compute_efficiency = default_compute_efficiency,
    .compute_efficiency_basis = efficiency_basis::assumed,
    .source = "NVIDIA Tesla V100 datasheet (SXM2): FP32 15.7, Tensor 125 TFLOPS, 32 GB HBM2 900 GB/s, NVLink 300 GB/s",
    .power = 300.0,  // V100 SXM2 datasheet: max power 300 W
    .compute_units = 80,  // V100 whitepaper: 80 SMs
    .host_bandwidth = bytes_per_second(16.0 * 8.0 * giga * 128.0 / 130.0 / 8.0),  // PCIe Gen3 x16: 15.75 GB/s
    .device_names = {"v100-sxm2"},
    .reference_cluster = {},  // no preset of its kind: the default cluster
};

/// @brief NVIDIA A100 SXM4 40GB: fp32 19.5, tf32 156, bf16/fp16 312 TFLOPS dense (datasheet 312/624*
/// sparse); HBM2 1555 GB/s; NVLink3 600 GB/s. Efficiency 0.869 = 271.2/312 (MAMF, A100 SXM).
inline constexpr accelerator a100_40gb_sxm{
    .name = "a100-40gb-sxm", .display_name = "NVIDIA A100-SXM4-40GB",
    .memory = bytes(40.0 * gibi), .memory_bandwidth = bytes_per_second(1555.0 * giga),
    .dense_peak = detail::peaks(19.5, 156.0, 312.0, 312.0, detail::unsupported),
    .scale_up_link = "nvlink3", .compute_efficiency = 0.869,
    .source = "NVIDIA A100 datasheet (2021): FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS dense, 40GB HBM2 1,555 GB/s; "
              "efficiency: ml-engineering MAMF A100 SXM 271.2/312",
    .power = 400.0,  // A100 datasheet: SXM max TDP 400 W
    .compute_units = 108,  // A100 whitepaper: 108 SMs
    .exponentials_per_bf16_flop = 16.0 / 2048.0,  // 16 exp2 per 2,048 BF16 FLOPs per SM clock (1,024 FMA)
    .host_bandwidth = pcie<4, 16>.per_direction,  // A100 datasheet: PCIe Gen4 64 GB/s (both directions)
    .device_names = {"a100-sxm4-40gb"},
    .reference_cluster = "dgx-a100",
};

/// @brief NVIDIA A100 SXM4 80GB: as the 40GB but HBM2e 2039 GB/s. Efficiency 0.869 (MAMF, A100 SXM).
inline constexpr accelerator a100_80gb_sxm = [] {
    accelerator a = a100_40gb_sxm;  // the same silicon: peaks, SMs, exponentials, MAMF efficiency, power
    a.name = "a100-80gb-sxm";
    a.display_name = "NVIDIA A100-SXM4-80GB";
    a.memory = bytes(80.0 * gibi);
    a.memory_bandwidth = bytes_per_second(2039.0 * giga);
    a.source = "NVIDIA A100 datasheet (2021): FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS dense, 80GB HBM2e 2,039 GB/s; "
               "efficiency: ml-engineering MAMF A100 SXM 271.2/312";
    a.device_names = {"a100", "a100-sxm4-80gb"};
    return a;
}();

/// @brief NVIDIA A100 PCIe 80GB: same peaks, HBM2e 1935 GB/s; talks to peers over PCIe 4 x16 unless
/// an NVLink bridge pairs two cards. Efficiency 0.811 = 252.9/312 (MAMF, A100 PCIe).
inline constexpr accelerator a100_80gb_pcie = [] {
    accelerator a = a100_80gb_sxm;  // the same silicon: peaks, SMs, exponentials
    a.name = "a100-80gb-pcie";
    a.display_name = "NVIDIA A100 80GB PCIe";
    a.memory_bandwidth = bytes_per_second(1935.0 * giga);
    a.scale_up_link = "pcie4-x16";
    a.compute_efficiency = 0.811;
    a.source = "NVIDIA A100 datasheet (2021), PCIe 80GB: 312 TFLOPS BF16 dense, 1,935 GB/s, PCIe Gen4 64 GB/s "
               "(NVLink bridge optional); efficiency: ml-engineering MAMF A100 PCIe 252.9/312";
    a.power = 300.0;  // A100 datasheet: 80GB PCIe max TDP 300 W
    a.device_names = {"a100 80gb pcie", "a100-pcie"};
    a.reference_cluster = {};  // no preset of its kind: the default cluster
    return a;
}();

/// @brief NVIDIA A800 SXM4 80GB: A100 silicon with NVLink limited to 400 GB/s both directions
/// (8 NVLink3 links, 200 GB/s per direction). Efficiency as A100 SXM (same silicon).
inline constexpr accelerator a800_80gb_sxm{
    // A100 silicon and memory (the figures are the A100 80GB SXM's); a record of its own, not a
    // copy, because a copied optional that is then emptied is not a constant expression to Clang
    .name = "a800-80gb-sxm", .display_name = "NVIDIA A800-SXM4-80GB",
    .memory = a100_80gb_sxm.memory, .memory_bandwidth = a100_80gb_sxm.memory_bandwidth,
    .dense_peak = a100_80gb_sxm.dense_peak,
    .scale_up_link = "nvlink3-nv8", .compute_efficiency = a100_80gb_sxm.compute_efficiency,
    .source = "NVIDIA A800 datasheet: A100 compute, 80GB HBM2e 2,039 GB/s, NVLink 400 GB/s; "
              "distributed-training-lecture: A800 400 (200 per direction)",
    .power = std::nullopt,  // A800 datasheet gives no board power
    .compute_units = a100_80gb_sxm.compute_units,
    .fp8_mamf_ratio = a100_80gb_sxm.fp8_mamf_ratio,
    .exponentials_per_bf16_flop = a100_80gb_sxm.exponentials_per_bf16_flop,
    .host_bandwidth = a100_80gb_sxm.host_bandwidth,
    .device_names = {"a800"},
    .reference_cluster = {},  // no preset of its kind: the default cluster
};

/// @brief NVIDIA H100 SXM5 80GB: fp32 67, tf32 494.5, bf16/fp16 989.5, fp8 1979 TFLOPS dense
/// (datasheet 989/1979/3958 with sparsity); HBM3 3.35 TB/s; NVLink4 900 GB/s. Efficiency 0.803 =
/// 794.5/989 (MAMF, H100 SXM).
inline constexpr accelerator h100_sxm{
    .name = "h100-sxm", .display_name = "NVIDIA H100 80GB HBM3 (SXM5)",
    .memory = bytes(80.0 * gibi), .memory_bandwidth = bytes_per_second(3350.0 * giga),
    .dense_peak = detail::peaks(67.0, 494.5, 989.5, 989.5, 1979.0),
    .scale_up_link = "nvlink4", .compute_efficiency = 0.803,
    .source = "NVIDIA H100 datasheet (SXM): FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* TFLOPS (*sparse, halved), "
              "80GB HBM3 3.35 TB/s, NVLink 900 GB/s; efficiency: ml-engineering MAMF H100 SXM 794.5/989",
    .power = 700.0,  // H100 datasheet: SXM max TDP up to 700 W
    .compute_units = 132,  // H100 whitepaper: SXM5 132 SMs
    .fp8_mamf_ratio = 0.709 / 0.803,  // MAMF FP8 1402.6/1979 = 0.709 against BF16 0.803
    .flash_attention_2_ratio = 0.553,  // FA2 328 of 989 TFLOP/s against 189 of 312 on A100 (see above)
    .exponentials_per_bf16_flop = 16.0 / 4096.0,  // 16 exp2 per 4,096 BF16 FLOPs per SM clock (989.4 TFLOP/s = 132 SMs x 1.83 GHz x 4,096)
    .host_bandwidth = pcie<5, 16>.per_direction,  // H100 datasheet: PCIe Gen5 128 GB/s (both directions)
    .device_names = {"h100", "h100 80gb hbm3"},
    .reference_cluster = "dgx-h100",
};

/// @brief NVIDIA H100 PCIe 80GB: fp32 51, tf32 378, bf16/fp16 756.5, fp8 1513 TFLOPS dense; HBM2e
/// 2.0 TB/s; PCIe 5 x16. Efficiency: no MAMF measurement -> default_compute_efficiency.
inline constexpr accelerator h100_pcie{
    .name = "h100-pcie", .display_name = "NVIDIA H100 PCIe",
    .memory = bytes(80.0 * gibi), .memory_bandwidth = bytes_per_second(2000.0 * giga),
    .dense_peak = detail::peaks(51.0, 378.0, 756.5, 756.5, 1513.0),
    .scale_up_link = "pcie5-x16", .compute_efficiency = default_compute_efficiency,
    .compute_efficiency_basis = efficiency_basis::assumed,
    .source = "NVIDIA H100 datasheet (PCIe): FP32 51, TF32 756*, BF16/FP16 1,513*, FP8 3,026* TFLOPS (*sparse, halved), "
              "80GB 2 TB/s, PCIe Gen5 128 GB/s",
    .power = 350.0,  // H100 datasheet: PCIe max TDP 300-350 W
    .compute_units = 114,  // H100 whitepaper: PCIe 114 SMs
    // fp8_mamf_ratio 1: no FP8 MAMF figure
    .flash_attention_2_ratio = 0.553,  // Hopper, as H100 SXM
    .exponentials_per_bf16_flop = 16.0 / 4096.0,  // as H100 SXM
    .host_bandwidth = pcie<5, 16>.per_direction,  // H100 datasheet: PCIe Gen5 128 GB/s
    .device_names = {"h100 pcie"},
    .reference_cluster = {},  // no preset of its kind: the default cluster
};

/// @brief NVIDIA H800 SXM5: H100 silicon with NVLink limited to 400 GB/s both directions (8 NVLink4
/// links). Efficiency as H100 SXM (same silicon).
inline constexpr accelerator h800_sxm{
    // H100 silicon and memory (the figures are the H100 SXM's); a record of its own as the A800's
    .name = "h800-sxm", .display_name = "NVIDIA H800 (SXM5)",
    .memory = h100_sxm.memory, .memory_bandwidth = h100_sxm.memory_bandwidth,
    .dense_peak = h100_sxm.dense_peak,
    .scale_up_link = "nvlink4-nv8", .compute_efficiency = h100_sxm.compute_efficiency,
    .source = "NVIDIA H800 datasheet: H100 SXM compute, 80GB HBM3 3.35 TB/s, NVLink 400 GB/s",
    .power = std::nullopt,  // H800 datasheet gives no board power
    .compute_units = h100_sxm.compute_units,
    .fp8_mamf_ratio = h100_sxm.fp8_mamf_ratio,
    .flash_attention_2_ratio = h100_sxm.flash_attention_2_ratio,
    .exponentials_per_bf16_flop = h100_sxm.exponentials_per_bf16_flop,
    .host_bandwidth = h100_sxm.host_bandwidth,
    .device_names = {"h800"},
    .reference_cluster = {},  // no preset of its kind: the default cluster
};

/// @brief NVIDIA H200 SXM 141GB: H100 compute, HBM3e 4.8 TB/s. Efficiency as H100 SXM (same silicon).
inline constexpr accelerator h200_sxm = [] {
    accelerator a = h100_sxm;  // H100 silicon: peaks, SMs, exponentials, MAMF efficiency, power
    a.name = "h200-sxm";
    a.display_name = "NVIDIA H200 (SXM)";
    a.memory = bytes(141.0 * gibi);
    a.memory_bandwidth = bytes_per_second(4800.0 * giga);
    a.source = "NVIDIA H200 datasheet: FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* TFLOPS (*sparse, halved), "
               "141GB HBM3e 4.8 TB/s, NVLink 900 GB/s";
    a.power = 700.0;  // H200 datasheet: SXM max TDP up to 700 W
    a.fp8_mamf_ratio = 0.734 / 0.803;  // MAMF FP8 1453.4/1979 = 0.734 against BF16 0.803
    a.device_names = {"h200"};
    a.reference_cluster = "hgx-h200";
    return a;
}();

/// @brief NVIDIA GH200 Grace Hopper (GPU side, 96GB HBM3 version): H100 compute, 4.0 TB/s.
/// Efficiency 0.836 = 828.6/989 (MAMF, GH200; measured on the 141GB HBM3e version).
inline constexpr accelerator gh200{
    // H100 silicon with H200's FP8 MAMF figure; a record of its own as the A800's
    .name = "gh200", .display_name = "NVIDIA GH200 Grace Hopper Superchip (96GB)",
    .memory = bytes(96.0 * gibi), .memory_bandwidth = bytes_per_second(4000.0 * giga),
    .dense_peak = h100_sxm.dense_peak,
    .scale_up_link = h100_sxm.scale_up_link, .compute_efficiency = 0.836,
    .source = "NVIDIA GH200 datasheet: FP32 67, TF32 494, BF16/FP16 990, FP8 1,979 TFLOPS dense, 96GB HBM3 4 TB/s, "
              "NVLink 900 GB/s; efficiency: ml-engineering MAMF GH200 828.6/989",
    .power = std::nullopt,  // GH200 module power is configurable 450-1,000 W, CPU and GPU together
    .compute_units = h100_sxm.compute_units,
    .fp8_mamf_ratio = h200_sxm.fp8_mamf_ratio,
    .flash_attention_2_ratio = h100_sxm.flash_attention_2_ratio,
    .exponentials_per_bf16_flop = h100_sxm.exponentials_per_bf16_flop,
    .host_bandwidth = bytes_per_second(450.0 * giga),  // GH200 datasheet: NVLink-C2C 900 GB/s both directions
    .device_names = {"gh200"},
    .reference_cluster = "hgx-h200",  // the nearest preset: H100 silicon on NVLink4
};

/// @brief NVIDIA B200 (HGX B200, per GPU): fp32 75, tf32 1125, bf16/fp16 2250, fp8 4500 TFLOPS dense
/// (HGX B200 8-GPU: FP32 600 TF, TF32 18, FP16/BF16 36, FP8 72 PF with sparsity); 180 GB HBM3e
/// (DGX B200: 1,440 GB total), 8 TB/s; NVLink5 1.8 TB/s. Block-scaled formats: mxfp8 at the fp8 peak
/// (Blackwell tensor cores scale MX blocks in hardware), nvfp4 and MXFP4 at the FP4 peak, 144 PF sparse
/// per 8 GPUs = 9 PF dense per GPU. Efficiency 0.776 = 1745/2250 (ml-engineering).
inline constexpr accelerator b200{
    .name = "b200", .display_name = "NVIDIA B200 (SXM)",
    .memory = bytes(180.0 * gibi), .memory_bandwidth = bytes_per_second(8000.0 * giga),
    .dense_peak = detail::peaks(75.0, 1125.0, 2250.0, 2250.0, 4500.0, 4500.0, 9000.0, 9000.0),
    .scale_up_link = "nvlink5", .compute_efficiency = 0.776,
    .source = "NVIDIA HGX B200 / DGX B200 datasheets: per GPU FP32 75, TF32 2.25*, BF16/FP16 4.5*, FP8 9* PFLOPS (*sparse, "
              "halved), 180 GB HBM3e 8 TB/s, NVLink 1.8 TB/s; efficiency: ml-engineering B200 ~1745/2250 BF16",
    .power = 1000.0,  // HGX B200: up to 1,000 W per GPU
    .compute_units = 148,  // Blackwell technical brief: 148 SMs
    .fp8_mamf_ratio = 0.763 / 0.776,  // MAMF FP8 3432.5/4500 = 0.763 against BF16 0.776
    .fp4_gemm_ratio = (te_gemm_profiling_b300::fp8_current_ms / te_gemm_profiling_b300::nvfp4_ms) * (0.763 / 0.776) / 2.0,  // B300's NVFP4 over per-tensor FP8 kernel gain over the FP8 rate (see above)
    .flash_attention_2_ratio = 0.286,  // FA2 345.8 TFLOP/s against 296 on H100 (see above)
    .exponentials_per_bf16_flop = 16.0 / 8192.0,  // 16 exp2 per 8,192 BF16 FLOPs per SM clock (2.25 PFLOP/s = 148 SMs x 1.86 GHz x 8,192)
    .host_bandwidth = pcie<5, 16>.per_direction,  // HGX B200: PCIe Gen5 x16 to the x86 host
    .non_tn_fp8_gemm = true,  // compute capability 10.0: FP8 GEMMs in every layout (accelerator::non_tn_fp8_gemm)
    .device_names = {"b200"},
    .reference_cluster = "dgx-b200",
};

/// @brief NVIDIA B300 / Blackwell Ultra (HGX B300, per GPU): fp32 75, tf32 1125, bf16/fp16 2250, fp8
/// and mxfp8 4500, nvfp4/MXFP4 13500 TFLOPS dense (HGX B300 8-GPU: FP4 144 PF sparse | 108 PF dense,
/// FP8/FP6 72, FP16/BF16 36, TF32 18 PF sparse, FP32 600 TF); 288 GB HBM3e (2.3 TB per 8), 8 TB/s;
/// NVLink5 1.8 TB/s; 1,100 W. Efficiency 0.786 = 1769/2250 (ml-engineering MAMF table, B300 SXM).
inline constexpr accelerator b300{
    .name = "b300", .display_name = "NVIDIA B300 (Blackwell Ultra, SXM)",
    .memory = bytes(288.0 * gibi), .memory_bandwidth = bytes_per_second(8000.0 * giga),
    .dense_peak = detail::peaks(75.0, 1125.0, 2250.0, 2250.0, 4500.0, 4500.0, 13500.0, 13500.0),
    .scale_up_link = "nvlink5", .compute_efficiency = 0.786,
    .source = "NVIDIA HGX B300 datasheet (nvidia.com/en-us/data-center/hgx): 8 GPUs FP4 144* | 108 PF, FP8/FP6 72*, "
              "FP16/BF16 36*, TF32 18* PF (*sparse, halved), FP32 600 TF, 2.3 TB HBM3e, NVLink 1.8 TB/s per GPU; "
              "TDP 1.1 kW per GPU (Verda, NVIDIA GB300 NVL72: GPU Architecture & Performance)",
    .power = 1100.0,
    .compute_units = 160,  // Blackwell Ultra: 160 SMs
    .fp8_mamf_ratio = 0.745 / 0.786,  // MAMF FP8 3353.3/4500 = 0.745 against BF16 0.786
    .fp4_gemm_ratio = (te_gemm_profiling_b300::bf16_ms / te_gemm_profiling_b300::nvfp4_ms) / 6.0,  // TE gemm_profiling: NVFP4 3.48x BF16 at a 6x peak ratio
    .flash_attention_2_ratio = 0.286,  // as B200
    .exponentials_per_bf16_flop = 32.0 / 8192.0,  // Blackwell Ultra doubles the SFU rate (NVIDIA technical blog "Making Softmax More Efficient with NVIDIA Blackwell Ultra")
    .host_bandwidth = pcie<5, 16>.per_direction,  // HGX B300: PCIe Gen5 host CPUs
    .non_tn_fp8_gemm = true,  // compute capability 10.3: FP8 GEMMs in every layout (accelerator::non_tn_fp8_gemm)
    .device_names = {"b300"},
    .reference_cluster = "dgx-b300",
};

/// @brief NVIDIA GB200 (one Blackwell GPU of a GB200 NVL72 rack): the rack's figures / 72: fp32
/// 5,760/72 = 80, tf32 180 PF* -> 1250, bf16/fp16 360 PF* -> 2500, fp8/mxfp8 720 PF* -> 5000, FP4
/// 1,440 PF* -> 10000 TFLOPS dense (* sparse, halved); 13.4 TB HBM3e / 72 = 186 GB, 576 TB/s / 72 =
/// 8 TB/s; NVLink5 1.8 TB/s; 1,200 W. Efficiency 0.729 = 1822/2500 (ml-engineering MAMF table, GB200).
inline constexpr accelerator gb200{
    .name = "gb200", .display_name = "NVIDIA GB200 (Blackwell GPU of GB200 NVL72)",
    .memory = bytes(186.0 * gibi), .memory_bandwidth = bytes_per_second(8000.0 * giga),
    .dense_peak = detail::peaks(80.0, 1250.0, 2500.0, 2500.0, 5000.0, 5000.0, 10000.0, 10000.0),
    .scale_up_link = "nvlink5", .compute_efficiency = 0.729,
    .source = "NVIDIA GB200 NVL72 product page (nvidia.com/en-us/data-center/gb200-nvl72): 72 GPUs FP4 1,440*, "
              "FP8/FP6 720*, FP16/BF16 360*, TF32 180* PF (*sparse, halved), FP32 5,760 TF, up to 13.4 TB HBM3e "
              "576 TB/s, NVLink 130 TB/s; TDP 1.2 kW per GPU (Verda, NVIDIA GB300 NVL72: GPU Architecture & Performance)",
    .power = 1200.0,
    .compute_units = 148,  // as B200: 148 SMs
    .fp8_mamf_ratio = 0.723 / 0.729,  // MAMF FP8 3615.6/5000 = 0.723 against BF16 0.729
    .fp4_gemm_ratio = (te_gemm_profiling_b300::fp8_current_ms / te_gemm_profiling_b300::nvfp4_ms) * (0.723 / 0.729) / 2.0,  // as B200 (see above)
    .flash_attention_2_ratio = 0.286,  // as B200
    .exponentials_per_bf16_flop = 16.0 / 8192.0,  // as B200
    .host_bandwidth = bytes_per_second(225.0 * giga),  // NVLink-C2C 900 GB/s both directions per Grace, two GPUs (see above)
    .non_tn_fp8_gemm = true,  // compute capability 10.0: FP8 GEMMs in every layout (accelerator::non_tn_fp8_gemm)
    .device_names = {"gb200"},
    .reference_cluster = "gb200-nvl72",
};

/// @brief NVIDIA GB300 (one Blackwell Ultra GPU of a GB300 NVL72 rack): the rack's figures / 72:
/// fp32 80, tf32 180 PF* -> 1250, bf16/fp16 360 PF* -> 2500, fp8/mxfp8 720 PF* -> 5000, FP4 1,080 PF
/// dense -> 15000 TFLOPS; 288 GB HBM3e (20 TB / 72), 8 TB/s (576 / 72); NVLink5 1.8 TB/s; 1,400 W.
/// Efficiency: no MAMF or other GEMM measurement is published, and its 1,400 W budget, against
/// GB200's 1,200 and B300's 1,100, keeps clocks that neither part's figure describes: fitted
/// (efficiency_basis::fitted) to the 8 runs on GB300 of the calibration set (data/calibration,
/// Megatron-Bridge 25.11: Llama 3 8B/70B/405B in FP8, DeepSeek-V3, GPT-OSS 120B and Qwen3 in BF16
/// and MXFP8) by `commscale fit-compute data/calibration/published_runs.csv` around
/// default_compute_efficiency: 0.853 +- 0.054 (test `calibrate: compute_fit`). The two plans the
/// set has on both racks run 1.19x (Llama 3 8B, FP8) and 1.22x (Qwen3 30B-A3B, MXFP8) as fast on
/// GB300 as on GB200, where the default efficiency and the doubled exponential rate gave 1.06x and 1.03x.
inline constexpr accelerator gb300{
    .name = "gb300", .display_name = "NVIDIA GB300 (Blackwell Ultra GPU of GB300 NVL72)",
    .memory = bytes(288.0 * gibi), .memory_bandwidth = bytes_per_second(8000.0 * giga),
    .dense_peak = detail::peaks(80.0, 1250.0, 2500.0, 2500.0, 5000.0, 5000.0, 15000.0, 15000.0),
    .scale_up_link = "nvlink5", .compute_efficiency = 0.8706,
    .compute_efficiency_basis = efficiency_basis::fitted,
    .source = "NVIDIA GB300 NVL72 product page (nvidia.com/en-us/data-center/gb300-nvl72): 72 GPUs FP4 1,440* | 1,080 PF, "
              "FP8/FP6 720*, FP16/BF16 360*, TF32 180* PF (*sparse, halved), up to 20 TB HBM3e 576 TB/s, NVLink 130 TB/s; "
              "FP32 80 TF and TDP 1.4 kW per GPU (Verda, NVIDIA GB300 NVL72: GPU Architecture & Performance); "
              "efficiency: fitted to the calibration set's 8 GB300 runs (commscale fit-compute)",
    .power = 1400.0,
    .compute_units = 160,  // as B300: 160 SMs
    .fp8_mamf_ratio = 0.745 / 0.786,  // as B300 (the same chip, no figure of its own)
    .fp4_gemm_ratio = (te_gemm_profiling_b300::bf16_ms / te_gemm_profiling_b300::nvfp4_ms) / 6.0,  // as B300
    .flash_attention_2_ratio = 0.286,  // as B200
    .exponentials_per_bf16_flop = 32.0 / 8192.0,  // as B300
    .host_bandwidth = bytes_per_second(225.0 * giga),  // as GB200: one Grace per two GPUs (see above)
    .non_tn_fp8_gemm = true,  // compute capability 10.3: FP8 GEMMs in every layout (accelerator::non_tn_fp8_gemm)
    .device_names = {"gb300"},
    .reference_cluster = "gb300-nvl72",
};

/// @brief AMD Instinct MI250X (OAM, both GCDs): fp32 matrix 95.7, bf16/fp16 383 TFLOPS; no tf32/fp8;
/// 128 GB HBM2e 3.2768 TB/s. Efficiency 0.767 = 147.0/191.5 (MAMF, one GCD).
inline constexpr accelerator mi250x{
    .name = "mi250x", .display_name = "AMD Instinct MI250X",
    .memory = bytes(128.0 * gibi), .memory_bandwidth = bytes_per_second(3276.8 * giga),
    .dense_peak = detail::peaks(95.7, detail::unsupported, 383.0, 383.0, detail::unsupported),
    .scale_up_link = "xgmi-mi250x", .compute_efficiency = 0.767,
    .source = "AMD Instinct MI250X datasheet: FP32 matrix 95.7, FP16/BF16 383 TFLOPS, 128GB HBM2e 3.2768 TB/s; "
              "efficiency: ml-engineering MAMF MI250X 147.0/191.5 per GCD",
    .power = 560.0,  // MI250X datasheet: 560 W peak TBP
    .compute_units = 220,  // AMD CDNA 2 whitepaper: 2 x 110 CUs
    .host_bandwidth = pcie<4, 16>.per_direction,  // MI250X OAM: PCIe Gen4 x16 host interface
    .device_names = {"mi250"},
    .reference_cluster = {},  // no preset of its kind: the default cluster
};

/// @brief AMD Instinct MI300X: fp32 163.4, tf32 653.7, bf16/fp16 1307.4, fp8 2614.9 TFLOPS dense;
/// 192 GB HBM3 5.3 TB/s; 7 xGMI links. Efficiency 0.514 = 668.4/1300 (MAMF v2, ROCm 6.3).
inline constexpr accelerator mi300x{
    .name = "mi300x", .display_name = "AMD Instinct MI300X",
    .memory = bytes(192.0 * gibi), .memory_bandwidth = bytes_per_second(5300.0 * giga),
    .dense_peak = detail::peaks(163.4, 653.7, 1307.4, 1307.4, 2614.9),
    .scale_up_link = "xgmi-mi300x", .compute_efficiency = 0.514,
    .source = "AMD Instinct MI300X datasheet: FP32 163.4, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 TFLOPS dense, "
              "192GB HBM3 5.3 TB/s, 896 GB/s Infinity Fabric; efficiency: ml-engineering MAMF MI300X 668.4/1300",
    .power = 750.0,  // MI300X datasheet: 750 W peak TBP
    .compute_units = 304,  // AMD CDNA 3 whitepaper: 304 CUs
    .host_bandwidth = pcie<5, 16>.per_direction,  // MI300X OAM: PCIe Gen5 x16 host interface
    .device_names = {"mi300"},
    .reference_cluster = "mi300x-roce",
};

/// @brief AMD Instinct MI325X: MI300X compute, 256 GB HBM3e 6 TB/s, same Infinity Fabric.
/// Efficiency 0.604 = 784.9/1300 (MAMF, MI325X).
inline constexpr accelerator mi325x = [] {
    accelerator a = mi300x;  // MI300X compute (peaks, CUs) and Infinity Fabric
    a.name = "mi325x";
    a.display_name = "AMD Instinct MI325X";
    a.memory = bytes(256.0 * gibi);
    a.memory_bandwidth = bytes_per_second(6000.0 * giga);
    a.compute_efficiency = 0.604;
    a.source = "AMD Instinct MI325X datasheet: FP32 163.4, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 TFLOPS dense, "
               "256GB HBM3e 6 TB/s; efficiency: ml-engineering MAMF MI325X 784.9/1300";
    a.power = 1000.0;  // MI325X datasheet: 1,000 W peak TBP
    a.device_names = {"mi325"};
    return a;
}();

/// @brief AMD Instinct MI355X (CDNA 4): fp32 157.3, bf16/fp16 2516.6, fp8 and MXFP8 5033.2, MXFP4
/// (and MXFP6) 10066.3 TFLOPS dense; no tf32 (CDNA 4 drops XF32) and no NVFP4; 288 GB HBM3E 8 TB/s;
/// 7 Infinity Fabric links x 153.6 GB/s; 1,400 W TBP. Efficiency: no measurement ->
/// default_compute_efficiency.
inline constexpr accelerator mi355x{
    .name = "mi355x", .display_name = "AMD Instinct MI355X",
    .memory = bytes(288.0 * gibi), .memory_bandwidth = bytes_per_second(8000.0 * giga),
    .dense_peak = detail::peaks(157.3, detail::unsupported, 2516.6, 2516.6, 5033.2, 5033.2, detail::unsupported,
                                10066.3),
    .scale_up_link = "xgmi-mi355x", .compute_efficiency = default_compute_efficiency,
    .compute_efficiency_basis = efficiency_basis::assumed,
    .source = "AMD Instinct MI355X datasheet (amd.com/en/products/accelerators/instinct/mi350/mi355x): FP32 157.3, "
              "FP16/BF16 2.5, FP8/OCP-MXFP8 5.0, MXFP6/MXFP4 10.1 PFLOPS dense, 288 GB HBM3E 8 TB/s, "
              "Infinity Fabric 153.6 GB/s per link, 1,400 W TBP",
    .power = 1400.0,
    .compute_units = 256,  // AMD CDNA 4 whitepaper: 256 CUs
    .host_bandwidth = pcie<5, 16>.per_direction,  // MI355X OAM: PCIe Gen5 x16 host interface
    .device_names = {"mi355"},
    .reference_cluster = "mi355x-roce",
};

/// @brief Intel Gaudi2: bf16 432, fp8 865 TFLOPS (MME); fp32/tf32/fp16 peaks not published;
/// 96 GB HBM2e 2.45 TB/s; 21 x 100 GbE scale-up. Efficiency 0.969 = 418.7/432 (MAMF v2, Gaudi 2).
inline constexpr accelerator gaudi2{
    .name = "gaudi2", .display_name = "Intel Gaudi2 (HL-225)",
    .memory = bytes(96.0 * gibi), .memory_bandwidth = bytes_per_second(2450.0 * giga),
    .dense_peak = detail::peaks(detail::unsupported, detail::unsupported, 432.0, detail::unsupported, 865.0),
    .scale_up_link = "gaudi2-scaleup", .compute_efficiency = 0.969,
    .source = "Intel Gaudi2 whitepaper: MME BF16 432, FP8 865 TFLOPS, 96GB HBM2e 2.45 TB/s, 24 x 100 GbE RoCE; "
              "efficiency: ml-engineering MAMF Gaudi 2 418.7/432",
    .power = 600.0,  // Gaudi2 HL-225H: 600 W TDP
    .host_bandwidth = pcie<4, 16>.per_direction,  // Gaudi2 HL-225: PCIe Gen4 x16 host interface
    .device_names = {"hl-225", "gaudi2"},
    .reference_cluster = "gaudi2-hls",
};

/// @brief NVIDIA L40S: fp32 91.6, tf32 183, bf16/fp16 362.05, fp8 733 TFLOPS dense (datasheet 366*,
/// 733*, 1,466* with sparsity); 48 GB GDDR6 864 GB/s; PCIe 4 x16, no NVLink. Efficiency: no MAMF
/// measurement -> default_compute_efficiency.
inline constexpr accelerator l40s{
    .name = "l40s", .display_name = "NVIDIA L40S",
    .memory = bytes(48.0 * gibi), .memory_bandwidth = bytes_per_second(864.0 * giga),
    .dense_peak = detail::peaks(91.6, 183.0, 362.05, 362.05, 733.0),
    .scale_up_link = "pcie4-x16", .compute_efficiency = default_compute_efficiency,
    .compute_efficiency_basis = efficiency_basis::assumed,
    .source = "NVIDIA L40S datasheet: FP32 91.6, TF32 366*, BF16/FP16 733*, FP8 1,466* TFLOPS (*sparse, halved), "
              "48GB GDDR6 864 GB/s, PCIe Gen4 x16",
    .power = 350.0,  // L40S datasheet: max power 350 W
    .compute_units = 142,  // Ada whitepaper: L40S 142 SMs
    .host_bandwidth = pcie<4, 16>.per_direction,  // L40S datasheet: PCIe Gen4 x16 64 GB/s
    .device_names = {"l40s"},
    .reference_cluster = {},  // no preset of its kind: the default cluster
};

/// @brief Every catalog accelerator, in a stable order.
inline constexpr auto accelerator_catalog = std::to_array<accelerator>({
    v100_sxm2, a100_40gb_sxm, a100_80gb_sxm, a100_80gb_pcie, a800_80gb_sxm, h100_sxm, h100_pcie,
    h800_sxm,  h200_sxm,      gh200,         b200,           b300,          gb200,    gb300,
    mi250x,    mi300x,        mi325x,        mi355x,         gaudi2,        l40s});

/// @brief The names of all catalog accelerators, in catalog order.
inline constexpr auto accelerator_names = [] {
    std::array<std::string_view, accelerator_catalog.size()> names{};
    for (std::size_t i = 0; i < accelerator_catalog.size(); ++i) names[i] = accelerator_catalog[i].name;
    return names;
}();

/// @brief All catalog accelerators (see accelerator_catalog).
[[nodiscard]] constexpr std::span<const accelerator> all_accelerators() { return accelerator_catalog; }

/// @brief The catalog accelerator called `name` (exact, lower-case, as in CLI.md), or nullopt.
[[nodiscard]] constexpr std::optional<accelerator> find_accelerator(std::string_view name) {
    for (const accelerator& a : accelerator_catalog)
        if (a.name == name) return a;
    return std::nullopt;
}

/// @brief The catalog accelerator a device name as CUDA or ROCm report it belongs to ("NVIDIA
/// A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA GB200", "AMD Instinct MI300X"): the one with
/// the longest of its `device_names` inside `device`, case-insensitively; nullopt when none is.
[[nodiscard]] constexpr std::optional<accelerator> accelerator_for_device(std::string_view device) {
    const auto contains = [&](std::string_view part) {
        for (std::size_t i = 0; i + part.size() <= device.size(); ++i) {
            bool same = true;
            for (std::size_t k = 0; k < part.size() && same; ++k) same = detail::ascii_lower(device[i + k]) == part[k];
            if (same) return true;
        }
        return false;
    };
    std::optional<accelerator> best;
    std::size_t longest = 0;
    for (const accelerator& a : accelerator_catalog)
        for (const std::string_view part : a.device_names)
            if (!part.empty() && part.size() > longest && contains(part)) {
                best = a;
                longest = part.size();
            }
    return best;
}

/// @brief The catalog accelerator called `name`; throws input_error naming `field`, the value and
/// the closest known names ("did you mean ...") if there is none.
[[nodiscard]] inline accelerator accelerator_by_name(std::string_view name, std::string_view field = "accelerator") {
    if (auto a = find_accelerator(name)) return *a;
    throw unknown_name(std::string(field), name, accelerator_names);
}

}  // namespace commscale
