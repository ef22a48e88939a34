// Today's hardware: B300, GB200, GB300 and MI355X against their vendors' published figures
// (rack figures of the NVL72 product pages divided by 72, sparsity figures halved), the
// block-scaled data types (OCP MX v1.0, NVIDIA NVFP4) and the rack-scale presets. Expected values
// are the published numbers, not the library's output.
#include <string>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/hardware/links.hpp>
#include <commscale/io/hardware_json.hpp>
#include <commscale/predict/compute.hpp>
#include <commscale/workload/flops.hpp>

#include "catch_shim.hpp"

using namespace commscale;

namespace {
double peak_tflops(const accelerator& a, dtype d) { return in_tflops(*a.peak(d)); }
double gib(const accelerator& a) { return in_bytes(a.memory) / gibi; }
}  // namespace

TEST_CASE("B300: HGX B300 8-GPU figures per GPU (FP4 108 PF dense, FP8 72 and BF16 36 PF sparse)") {
    // HGX B300 datasheet: FP4 144 PF sparse | 108 PF dense, FP8/FP6 72 PF*, FP16/BF16 36 PF*,
    // TF32 18 PF*, FP32 600 TF, 2.3 TB HBM3e, NVLink 1.8 TB/s per GPU (* with sparsity).
    CHECK(peak_tflops(b300, dtype::fp4) == Approx(108000.0 / 8));
    CHECK(peak_tflops(b300, dtype::nvfp4) == Approx(108000.0 / 8));
    CHECK(peak_tflops(b300, dtype::fp8) == Approx(72000.0 / 8 / 2));
    CHECK(peak_tflops(b300, dtype::mxfp8) == Approx(72000.0 / 8 / 2));
    CHECK(peak_tflops(b300, dtype::bf16) == Approx(36000.0 / 8 / 2));
    CHECK(peak_tflops(b300, dtype::tf32) == Approx(18000.0 / 8 / 2));
    CHECK(peak_tflops(b300, dtype::fp32) == Approx(600.0 / 8));
    CHECK(gib(b300) == Approx(288.0));
    CHECK(8.0 * gib(b300) * gibi / 1e12 == Approx(2.3).epsilon(0.08));  // "up to 2.3 TB" per 8 GPUs (binary GiB, decimal TB)
    CHECK(in_GBps(b300.memory_bandwidth) == Approx(8000.0));
    CHECK(b300.scale_up_link == "nvlink5");
    CHECK(in_GBps(link_by_name(b300.scale_up_link).per_direction) == Approx(900.0));  // 1.8 TB/s duplex
    REQUIRE(b300.power.has_value());
    CHECK(*b300.power == Approx(1100.0));
}

TEST_CASE("GB200 NVL72: per-GPU peaks are the rack's figures over 72 GPUs, sparse halved") {
    // GB200 NVL72 product page: FP4 1,440 PF*, FP8/FP6 720 PF*, FP16/BF16 360 PF*, TF32 180 PF*,
    // FP32 5,760 TF, 13.4 TB HBM3e at 576 TB/s (* with sparsity).
    CHECK(peak_tflops(gb200, dtype::nvfp4) == Approx(1440000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::fp4) == Approx(1440000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::fp8) == Approx(720000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::mxfp8) == Approx(720000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::bf16) == Approx(360000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::fp16) == Approx(360000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::tf32) == Approx(180000.0 / 72 / 2));
    CHECK(peak_tflops(gb200, dtype::fp32) == Approx(5760.0 / 72));
    CHECK(in_GBps(gb200.memory_bandwidth) * 72 / 1000 == Approx(576.0));
    CHECK(72.0 * gib(gb200) * gibi / 1e12 == Approx(13.4).epsilon(0.08));
    REQUIRE(gb200.power.has_value());
    CHECK(*gb200.power == Approx(1200.0));
}

TEST_CASE("GB300 NVL72: FP4 1,080 PF dense, FP8 720 and BF16 360 PF sparse, 20 TB, over 72 GPUs") {
    // GB300 NVL72 product page: FP4 1,440 PF sparse | 1,080 PF dense (Blackwell Ultra's FP4
    // sparsity gain is less than 2x, so the dense figure is the published one), FP8/FP6 720 PF*,
    // FP16/BF16 360 PF*, TF32 180 PF*, up to 20 TB HBM3e at 576 TB/s.
    CHECK(peak_tflops(gb300, dtype::nvfp4) == Approx(1080000.0 / 72));
    CHECK(peak_tflops(gb300, dtype::fp4) == Approx(1080000.0 / 72));
    CHECK(peak_tflops(gb300, dtype::nvfp4) < 1440000.0 / 72);
    CHECK(peak_tflops(gb300, dtype::fp8) == Approx(720000.0 / 72 / 2));
    CHECK(peak_tflops(gb300, dtype::mxfp8) == Approx(720000.0 / 72 / 2));
    CHECK(peak_tflops(gb300, dtype::bf16) == Approx(360000.0 / 72 / 2));
    CHECK(peak_tflops(gb300, dtype::tf32) == Approx(180000.0 / 72 / 2));
    CHECK(in_GBps(gb300.memory_bandwidth) * 72 / 1000 == Approx(576.0));
    CHECK(72.0 * gib(gb300) * gibi / 1e12 == Approx(21.0).epsilon(0.08));  // "up to 21 TB" (20 TB in other material)
    CHECK(gib(gb300) == Approx(288.0));
    REQUIRE(gb300.power.has_value());
    CHECK(*gb300.power == Approx(1400.0));
}

TEST_CASE("MI355X: AMD datasheet dense peaks, MXFP4 but no NVFP4 or TF32, 288 GB 8 TB/s, 1,400 W") {
    // AMD Instinct MI355X datasheet: FP16/BF16 2.5 PF, FP8 5.0 PF, MXFP6/MXFP4 10.1 PF dense,
    // FP32 157.3 TF, 288 GB HBM3E, 8 TB/s, 1,400 W TBP, Infinity Fabric 153.6 GB/s per link x 7.
    CHECK(peak_tflops(mi355x, dtype::bf16) == Approx(2516.6));
    CHECK(peak_tflops(mi355x, dtype::fp16) == Approx(2516.6));
    CHECK(peak_tflops(mi355x, dtype::fp8) == Approx(5033.2));
    CHECK(peak_tflops(mi355x, dtype::mxfp8) == Approx(5033.2));
    CHECK(peak_tflops(mi355x, dtype::fp4) == Approx(10066.3));
    CHECK(peak_tflops(mi355x, dtype::fp32) == Approx(157.3));
    CHECK_FALSE(mi355x.peak(dtype::nvfp4).has_value());
    CHECK_FALSE(mi355x.peak(dtype::tf32).has_value());
    CHECK(gib(mi355x) == Approx(288.0));
    CHECK(in_GBps(mi355x.memory_bandwidth) == Approx(8000.0));
    REQUIRE(mi355x.power.has_value());
    CHECK(*mi355x.power == Approx(1400.0));
    const auto l = link_by_name(mi355x.scale_up_link);
    CHECK(2.0 * in_GBps(link_by_name("xgmi-mi355x-link").per_direction) == Approx(153.6));
    CHECK(2.0 * in_GBps(l.per_direction) == Approx(7 * 153.6));
}

TEST_CASE("power: datasheet TDP/TBP of the existing entries") {
    CHECK(*h100_sxm.power == Approx(700.0));   // H100 datasheet: SXM up to 700 W
    CHECK(*a100_80gb_sxm.power == Approx(400.0));  // A100 datasheet: SXM 400 W
    CHECK(*b200.power == Approx(1000.0));      // HGX B200: 1,000 W per GPU
    CHECK(*mi300x.power == Approx(750.0));     // MI300X datasheet: 750 W
    CHECK(*mi325x.power == Approx(1000.0));    // MI325X datasheet: 1,000 W
    CHECK_FALSE(gh200.power.has_value());      // configurable module power, CPU included
}

TEST_CASE("block-scaled dtypes: storage bits per element of OCP MX v1.0 and NVFP4") {
    // MXFP8: 32 x 8-bit elements + one 8-bit E8M0 scale; MXFP4: 32 x 4-bit + one E8M0;
    // NVFP4: 16 x 4-bit E2M1 + one FP8 E4M3 scale.
    CHECK(dtype_bits(dtype::mxfp8) == Approx((32 * 8 + 8) / 32.0));
    CHECK(dtype_bits(dtype::fp4) == Approx((32 * 4 + 8) / 32.0));
    CHECK(dtype_bits(dtype::nvfp4) == Approx((16 * 4 + 8) / 16.0));
    CHECK(dtype_bits(dtype::fp8) == Approx(8.0));
    CHECK(dtype_bytes(dtype::mxfp8) == Approx(1.03125));
    CHECK(dtype_bytes(dtype::nvfp4) == Approx(0.5625));
    for (const char* n : {"mxfp8", "nvfp4", "fp4"}) CHECK(to_string(parse<dtype>(n, "dtype")) == n);
    CHECK_THROWS_AS(parse<dtype>("mxfp6", "dtype"), input_error);
}

TEST_CASE("block-scaled dtypes: Blackwell has them, Hopper does not") {
    CHECK(peak_tflops(b200, dtype::mxfp8) == Approx(peak_tflops(b200, dtype::fp8)));
    CHECK(peak_tflops(b200, dtype::nvfp4) == Approx(144000.0 / 8 / 2));  // HGX B200: FP4 144 PF sparse per 8 GPUs
    for (const accelerator& a : {h100_sxm, h200_sxm, a100_80gb_sxm, mi300x}) {
        INFO(a.name);
        CHECK_FALSE(a.peak(dtype::mxfp8).has_value());
        CHECK_FALSE(a.peak(dtype::nvfp4).has_value());
        CHECK_FALSE(a.peak(dtype::fp4).has_value());
    }
}

TEST_CASE("missing precision: the error names the accelerator and what it supports") {
    try {
        (void)peak_for(mi355x, dtype::nvfp4, "--dtype");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "--dtype");
        CHECK(e.value() == "nvfp4");
        CHECK(e.expected() == "a data type mi355x supports: fp32, bf16, fp16, fp8, mxfp8, fp4");
    }
    CHECK_THROWS_AS(peak_for(h100_sxm, dtype::mxfp8), input_error);
}

TEST_CASE("fp8 split accumulator slows the backward of per-tensor fp8: MXFP8 takes its GEMM times x 1.051, NVFP4 the fitted excess") {
    // kernel figure: cuBLASLt's split accumulator 1.047x on one H200 (data/measurements/
    // h200_compute_kernels.json); the default is fitted to the calibration set's FP8 runs above it
    CHECK(compute_params_for(h100_sxm, dtype::fp8, kernel_constants).backward_gemm_slowdown == Approx(1.047).epsilon(0.01));
    CHECK(compute_params_for(h100_sxm, dtype::fp8).backward_gemm_slowdown > 1.047);
    CHECK(compute_params_for(h100_sxm, dtype::bf16).backward_gemm_slowdown == Approx(1.0));
    // MXFP8: per-tensor FP8's GEMMs, backward factor included, at 1 / 1.051 of their rate
    // (Transformer Engine's GEMM profiling on B300: 7.161 against 6.812 ms for the same 12 GEMMs)
    for (const compute_constants* k : {&kernel_constants, &fitted_compute_constants}) {
        const compute_params fp8 = compute_params_for(b200, dtype::fp8, *k);
        const compute_params mx = compute_params_for(b200, dtype::mxfp8, *k);
        CHECK(mx.backward_gemm_slowdown == Approx(fp8.backward_gemm_slowdown));
        CHECK(fp8.gemm_efficiency / mx.gemm_efficiency == Approx(7.161 / 6.812));
    }
    // NVFP4's GEMMs have no split accumulator: none at the kernel figures, the fitted FP8 work
    // beyond it with the defaults
    CHECK(compute_params_for(b200, dtype::nvfp4, kernel_constants).backward_gemm_slowdown == Approx(1.0));
    CHECK(compute_params_for(b200, dtype::nvfp4).backward_gemm_slowdown ==
          Approx(fitted_compute_constants.fp8_backward_slowdown / kernel_constants.fp8_backward_slowdown));
    CHECK(compute_params_for(b200, dtype::mxfp8).gemm_input_bytes == Approx(1.03125));
}

TEST_CASE("accelerator JSON: power_W and the new peaks round-trip") {
    const nlohmann::json j = accelerator_to_json(gb300);
    CHECK(j["power_W"].get<double>() == Approx(1400.0));
    CHECK(j["peak_tflops"]["nvfp4"].get<double>() == Approx(15000.0));
    const accelerator back = accelerator_from_json(j, "accelerator");
    REQUIRE(back.power.has_value());
    CHECK(*back.power == Approx(1400.0));
    CHECK(in_tflops(*back.peak(dtype::mxfp8)) == Approx(5000.0));
    nlohmann::json bad = j;
    bad["power_W"] = -5;
    CHECK_THROWS_AS(accelerator_from_json(bad, "accelerator"), input_error);
}

TEST_CASE("presets: NVL72 racks, DGX B300 and MI355X RoCE as their sources describe") {
    const cluster g2 = cluster_by_name("gb200-nvl72");
    CHECK(g2.node.gpus == 4);           // compute tray
    CHECK(g2.nodes == 18);              // 18 trays per rack
    CHECK(g2.scale_up_domain == 72);    // one NVLink domain per rack
    CHECK(g2.node.nics == 4);           // one NIC per GPU
    CHECK(in_GBps(g2.node.intra.per_direction) == Approx(900.0));
    CHECK(in_GBps(g2.node.inter.per_direction) * 8 == Approx(400.0));  // ConnectX-7 400 Gb/s
    CHECK(g2.node.in_switch_reduction);
    const cluster g3 = cluster_by_name("gb300-nvl72");
    CHECK(g3.node.gpus == 4);
    CHECK(g3.domain_gpus() == 72);
    CHECK(in_GBps(g3.node.inter.per_direction) * 8 == Approx(800.0));  // ConnectX-8 800 Gb/s
    CHECK(cluster_by_name("dgx-b300").node.accelerator == "b300");
    CHECK(in_GBps(cluster_by_name("dgx-b300").node.inter.per_direction) * 8 == Approx(800.0));
    const cluster m = cluster_by_name("mi355x-roce");
    CHECK(m.node.accelerator == "mi355x");
    CHECK(m.node.fabric == intra_fabric::mesh);
    CHECK(in_GBps(m.node.inter.per_direction) * 8 == Approx(400.0));  // Pollara 400
}

TEST_CASE("NVL72: an 8-GPU group inside one rack runs on NVLink, one GPU per rack on the NICs") {
    cluster c = cluster_by_name("gb200-nvl72");
    c.nodes = 8 * 18;  // 8 racks of 18 trays; a placement counts ranks per NVLink domain (rack)
    const auto inside = predict_collective(c, placement{.ranks = 8, .ranks_per_node = 8, .stride = 1},
                                           collective_op::all_gather, bytes(1.0 * gibi));
    const auto across = predict_collective(c, placement{.ranks = 8, .ranks_per_node = 1, .stride = 1},
                                           collective_op::all_gather, bytes(1.0 * gibi));
    // NVLink5 900 GB/s per direction bounds the busbw inside the rack; one 400G NIC (50 GB/s)
    // across racks.
    CHECK(in_GBps(inside.busbw) > 300.0);
    CHECK(in_GBps(inside.busbw) <= 900.0);
    CHECK(in_GBps(across.busbw) <= 50.0);
    CHECK(in_GBps(across.busbw) > 20.0);
}

TEST_CASE("preset_for_gpu maps the device names nccl-tests and rccl-tests print to presets") {
    // cudaDeviceProp::name / hipDeviceProp_t::name strings as they appear in device lines
    CHECK(preset_for_gpu("NVIDIA A100-SXM4-80GB") == "dgx-a100");
    CHECK(preset_for_gpu("NVIDIA H100 80GB HBM3") == "dgx-h100");
    CHECK(preset_for_gpu("NVIDIA H200") == "hgx-h200");
    CHECK(preset_for_gpu("NVIDIA B200") == "dgx-b200");
    CHECK(preset_for_gpu("NVIDIA B300 SXM6 AC") == "dgx-b300");
    CHECK(preset_for_gpu("NVIDIA GB200") == "gb200-nvl72");  // not dgx-b200
    CHECK(preset_for_gpu("NVIDIA GB300") == "gb300-nvl72");
    CHECK(preset_for_gpu("AMD Instinct MI300X") == "mi300x-roce");
    CHECK(preset_for_gpu("AMD Instinct MI355X") == "mi355x-roce");
    CHECK(preset_for_gpu("Tesla V100-SXM2-16GB") == default_cluster_name);
    CHECK(preset_for_gpu("") == default_cluster_name);
    for (const char* gpu : {"NVIDIA GB200", "NVIDIA B300 SXM6 AC", "AMD Instinct MI355X", "HL-225"})
        CHECK(find_cluster(preset_for_gpu(gpu)).has_value());
}

TEST_CASE("accelerator_for_device: the accelerator record's device names, the longest match winning") {
    const auto named = [](const char* device) {
        const auto a = accelerator_for_device(device);
        return a ? std::string(a->name) : std::string("none");
    };
    CHECK(named("NVIDIA A100-SXM4-80GB") == "a100-80gb-sxm");
    CHECK(named("NVIDIA A100-SXM4-40GB") == "a100-40gb-sxm");
    CHECK(named("NVIDIA A100 80GB PCIe") == "a100-80gb-pcie");
    CHECK(named("NVIDIA H100 80GB HBM3") == "h100-sxm");
    CHECK(named("NVIDIA H100 PCIe") == "h100-pcie");  // "h100 pcie" is longer than "h100"
    CHECK(named("NVIDIA GH200 480GB") == "gh200");    // "gh200" is longer than "h200"
    CHECK(named("NVIDIA GB200") == "gb200");          // "gb200" is longer than "b200"
    CHECK(named("NVIDIA B300 SXM6 AC") == "b300");
    CHECK(named("AMD Instinct MI325X") == "mi325x");
    CHECK(named("HL-225") == "gaudi2");
    CHECK(named("Tesla V100-SXM2-32GB") == "v100-sxm2");
    CHECK(named("a GPU of the future") == "none");
    // every record that names a reference cluster names a preset, and a preset of its vendor's
    // scale-up family (the same kind of link): a log is not priced on another vendor's fabric
    for (const accelerator& a : all_accelerators()) {
        INFO(a.name);
        CHECK_FALSE(a.device_names[0].empty());
        for (const std::string_view d : a.device_names)
            for (const char ch : d) CHECK_FALSE((ch >= 'A' && ch <= 'Z'));
        if (a.reference_cluster.empty()) continue;
        const auto c = find_cluster(a.reference_cluster);
        REQUIRE(c.has_value());
        CHECK(link_by_name(a.scale_up_link).family == c->node.intra.family);
        CHECK(preset_for_gpu(a.display_name) == a.reference_cluster);
    }
}
