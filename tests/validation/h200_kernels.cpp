// The compute model's kernel-level figures against kernels measured on one NVIDIA H200 SXM 141GB
// (700 W, driver 580.159.04, CUDA 13.0, PyTorch 2.11, cuDNN 9.19) by apps/probe/compute_probe.py:
// data/measurements/h200_compute_kernels.json (see data/measurements/README.md), and the NCCL
// probe's output on the same machine (data/measurements/h200_nccl_probe_1gpu.json); and the same
// probe on one H100 80GB HBM3 SXM (data/measurements/h100_compute_kernels.json, the last test).
//
// What these measurements are to the library: the FP8 split-accumulator figure is the kernel
// prior of compute_constants::fp8_backward_slowdown (checked here to be re-derivable from the
// file); everything else was set without them (ml-engineering's MAMF table, the flash-attention
// and FlashAttention-3 papers' figures, and the fit to data/calibration/published_runs.csv, which
// holds no kernel measurement), so the checks below are independent. The GPU ran at its power
// limit during the GEMM sweep (688 W, SM clock 1230 of 1980 MHz after it, random normal data),
// as training runs do.
//
// Recorded when written (measured / library):
// * best-shape BF16 779 TFLOP/s (MAMF figure 0.803 x 989 = 794); FP8 1409 (0.734 x 1979 = 1453).
// * Llama 3 8B and 70B layer GEMMs (fprop, dgrad, wgrad; 1,024-16,384 tokens; TP 1-8): BF16
//   607-644 TFLOP/s, FP8 forward (fast accumulation) 1122-1315, backward (split) 1062-1258;
//   predicted / measured time per group 0.93-1.10 from 4,096 tokens, up to 1.26 below: the
//   forward of narrow TP-sharded GEMMs, in which the wave model (256 x 128 tiles over the 132 SMs)
//   leaves SMs idle. The M sweep (64-8,192 tokens, CUDA-graph timed) shows cuBLAS without that
//   loss: the roofline without waves plus the 2 us per-kernel overhead fits it within a median 4%,
//   with the waves 17% (up to 8x for 768 columns). The library keeps the waves for now: without
//   them on Hopper the published NeMo 24.09 Llama 3.1 runs in BF16 (step_published_stacks.cpp) go
//   from within 4% to 6-10% too fast (mean 7.8%), so the waves stand in for a slow-down of real
//   Hopper stacks that the model does not itemize (docs/accuracy.md).
// * cuDNN attention, causal, head dim 128, forward + backward: 0.44 of the BF16 peak at 2K tokens,
//   0.56 at 8K-16K. The library's attention core (its exponentials priced apart) reproduces it
//   with te_attention_efficiency 0.63-0.71 (median 0.66); the value fitted to the calibration
//   set, 0.56, predicts it 11-23% slow. FlashAttention-2 in PyTorch runs at 0.32 of the peak, and
//   the kernel figure of attention_efficiency (0.6, FA2 on A100) with H200's
//   flash_attention_2_ratio (0.553, from the flash-attention README's H100 figure) reproduces it
//   within 9% (median 2%).
// * memory-bound: a copy at 0.87 of the 4.8 TB/s, eager RMSNorm 0.56, SiLU x multiply 0.87, the
//   FP8 cast 0.68, amax 0.76; the fitted memory_efficiency 0.69 lies inside that range.
// * a tiny kernel costs 0.92 us of GPU time replayed from a CUDA graph and 9.8 us launched from a
//   Python loop; the fitted kernel_overhead_s (2.0 us) lies between.
// * grouped expert GEMMs (torch._grouped_mm) at 0.72-1.10 of the dense GEMM's rate, median 0.95,
//   against grouped_gemm_efficiency 0.86.
#include "attention_fixtures.hpp"
#include "catch_shim.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include <commscale/calibrate/errors.hpp>
#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/compute.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace h200_kernels {

nlohmann::json read_measurements_file(const std::string& name) {
    std::ifstream in(std::string(COMMSCALE_DATA_DIR) + "/measurements/" + name);
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
}

const nlohmann::json& measured() {
    static const nlohmann::json j = read_measurements_file("h200_compute_kernels.json");
    return j;
}

constexpr double tflops = 1e12;

/// The layer GEMMs' time without fast accumulation over their time with it, for each input- and
/// weight-gradient GEMM of a probe file's FP8 rows (the kernel figure of fp8_backward_slowdown).
std::vector<double> split_accumulator_ratios(const nlohmann::json& j) {
    std::map<std::tuple<std::string, int, int, std::string, std::string>, std::pair<double, double>> fp8;
    for (const auto& r : j["gemm"]["rows"])
        if (r["search"] == "layer" && r["dtype"] == "fp8") {
            auto& pair = fp8[{r["model"].get<std::string>(), r["tp"].get<int>(), r["tokens"].get<int>(),
                              r["gemm"].get<std::string>(), r["phase"].get<std::string>()}];
            (r["fast_accum"].get<bool>() ? pair.first : pair.second) = r["seconds"].get<double>();
        }
    std::vector<double> split;
    for (const auto& [key, pair] : fp8)
        if (std::get<4>(key) != "fprop") split.push_back(pair.second / pair.first);
    return split;
}

/// |log(predicted / measured)| of each GEMM of a probe file's M sweep in `type`: the GEMM roofline
/// (detail::gemm_seconds, wave quantization over `units` SMs, 0 for none) plus the per-kernel
/// overhead, at the dtype's large-GEMM rate (the median of the runs from 4,096 tokens, so that
/// the shape dependence alone is compared).
std::vector<double> m_sweep_errors(const nlohmann::json& j, const accelerator& acc, const std::string& type, int units) {
    std::vector<double> large, error;
    for (const auto& r : j["gemm_m_sweep"]["rows"])
        if (r["dtype"] == type && r["m"].get<int>() >= 4096) large.push_back(r["tflops"].get<double>());
    compute_params c = compute_params_for(acc, type == "fp8" ? dtype::fp8 : dtype::bf16, kernel_constants);
    c.gemm_efficiency = median(large) * tflops / c.gemm_peak.value();
    c.compute_units = units;
    c.finish();
    for (const auto& r : j["gemm_m_sweep"]["rows"])
        if (r["dtype"] == type)
            error.push_back(std::fabs(std::log((detail::gemm_seconds(r["m"], r["n"], r["k"], c) + c.kernel_overhead_s) /
                                               r["seconds"].get<double>())));
    return error;
}


}  // namespace h200_kernels

TEST_CASE("validation: H200 kernels, the device and the best-shape GEMM rates", "[validation][compute]") {
    using namespace h200_kernels;
    const auto& j = measured();
    const std::string name = j["device"]["name"];
    const auto acc = accelerator_for_device(name);
    REQUIRE(acc.has_value());
    CHECK(acc->name == "h200-sxm");
    CHECK(j["device"]["multiprocessors"].get<int>() == acc->compute_units);
    // the SXM part's HBM3e: 141 GB (datasheet) against 143,771 MiB reported by the driver
    CHECK_THAT(j["device"]["memory_bytes"].get<double>(), WithinRel(acc->memory.value(), 0.08));

    // best shape of a 125-shape search (4,096-16,384 per side): the MAMF figure within 5%
    const double bf16 = j["gemm"]["best"]["bf16"]["tflops"].get<double>() * tflops;
    const double fp8 = j["gemm"]["best"]["fp8"]["tflops"].get<double>() * tflops;
    CHECK_THAT(acc->compute_efficiency * acc->peak(dtype::bf16)->value(), WithinRel(bf16, 0.05));
    CHECK_THAT(acc->compute_efficiency * acc->fp8_mamf_ratio * acc->peak(dtype::fp8)->value(), WithinRel(fp8, 0.05));
}

TEST_CASE("validation: H200 kernels, a transformer layer's GEMMs", "[validation][compute]") {
    using namespace h200_kernels;
    const auto& j = measured();
    const accelerator& acc = h200_sxm;
    // per (dtype, model, tp, tokens, accumulation): measured and predicted seconds of the layer's
    // four GEMMs in one phase group (forward; backward = input + weight gradients)
    struct sums { double measured = 0, predicted = 0; };
    std::map<std::tuple<std::string, std::string, int, int, std::string>, sums> groups;
    const compute_params bf16 = compute_params_for(acc, dtype::bf16, kernel_constants);
    const compute_params fp8 = compute_params_for(acc, dtype::fp8, kernel_constants);
    for (const auto& r : j["gemm"]["rows"]) {
        if (r["search"] != "layer") continue;
        const std::string type = r["dtype"], phase = r["phase"], model = r["model"];
        const double m = r["m"], n = r["n"], k = r["k"], s = r["seconds"];
        const int tp = r["tp"], tokens = r["tokens"];
        const bool fast = type == "fp8" && r["fast_accum"].get<bool>();
        const bool backward = phase != "fprop";
        // Transformer Engine's choice: fast accumulation forward, split backward
        if (type == "fp8" && fast == backward) continue;
        const compute_params& c = type == "fp8" ? fp8 : bf16;
        double predicted = detail::gemm_seconds(m, n, k, c);
        if (backward) predicted *= c.backward_gemm_slowdown;
        auto& g = groups[{type, model, tp, tokens, backward ? "backward" : "forward"}];
        g.measured += s;
        g.predicted += predicted;
    }
    REQUIRE(groups.size() == 2 * 2 * 4 * 5);
    std::map<std::string, std::vector<double>> ratio;  // measured / predicted time, per dtype
    for (const auto& [key, g] : groups) {
        INFO(std::get<0>(key) << " " << std::get<1>(key) << " tp " << std::get<2>(key) << " " << std::get<3>(key)
                              << " tokens " << std::get<4>(key) << ": measured " << g.measured << " s, predicted "
                              << g.predicted << " s");
        // From 4,096 tokens every group within 12% of the kernel figures (a large-GEMM figure, 0.85
        // of the MAMF rate: BF16 predicted 2-7% fast, FP8 up to 10% slow). Below, the forward
        // groups of the narrow TP-sharded GEMMs are predicted up to 26% slow (the wave model; the
        // M sweep below): 30% there.
        CHECK_THAT(g.predicted, WithinRel(g.measured, std::get<3>(key) >= 4096 ? 0.12 : 0.30));
        ratio[std::get<0>(key)].push_back(g.measured / g.predicted);
    }
    CHECK_THAT(median(ratio["bf16"]), WithinRel(1.0, 0.10));
    CHECK_THAT(median(ratio["fp8"]), WithinRel(1.0, 0.10));

    // the kernel figure of fp8_backward_slowdown: the backward GEMMs without fast accumulation
    // against with it, median over the 160 input- and weight-gradient GEMMs
    const std::vector<double> split = split_accumulator_ratios(j);
    REQUIRE(split.size() == 160);
    CHECK_THAT(median(split), WithinRel(kernel_constants.fp8_backward_slowdown, 0.01));
    // the fitted value carries FP8 work the model does not itemize (current-scaling amax passes,
    // transposes): above the kernel figure, not below it
    CHECK(fitted_compute_constants.fp8_backward_slowdown > median(split));
}

TEST_CASE("validation: H200 kernels, attention against the fitted attention constants", "[validation][compute]") {
    using namespace h200_kernels;
    const auto& j = measured();
    // the library's attention core (detail::attention_core_seconds: FLOPs at the kernel's
    // efficiency x s / (s + 512), plus the softmax exponentials on the special function units) for
    // the measured shape: causal, head dim 128, 16 heads (hidden 2048), batch x sequence = 16K
    // tokens; cuDNN is Megatron-Core's (te_attention_efficiency), FlashAttention-2 the PyTorch
    // stacks' (attention_efficiency). cuDNN against the constant fitted to whole runs
    // (published_runs.csv), not to these kernels; FlashAttention-2 against its kernel figure (0.6,
    // FA2 on A100) times H200's flash_attention_2_ratio (0.553, set from the flash-attention
    // README's H100 figure, not from these measurements): the fitted value is the PyTorch stacks'
    // attention as a whole (ALiBi, masking, the kernels around it), 0.56 of the kernel figure.
    std::vector<double> cudnn_ratio, flash_ratio;
    for (const auto& r : j["attention"]["rows"]) {
        if (r.contains("error") || !r["causal"].get<bool>() || r["head_dim"] != 128) continue;
        const int seq = r["seq"], batch = r["batch"];
        if (seq < 2048) continue;
        const bool cudnn = r["backend"] == "cudnn";
        const compute_params c = compute_params_for(h200_sxm, dtype::bf16, cudnn ? fitted_compute_constants : kernel_constants,
                                                    cudnn ? framework::megatron_core : framework::fsdp);
        const auto core = attention_test::core_seconds(c, 16, batch, seq);
        const double measured_s = r["fwd_s"].get<double>() + r["bwd_s"].get<double>();
        const double ratio = (core.fwd + core.bwd) / measured_s;  // predicted / measured time
        INFO(r["backend"].get<std::string>() << " seq " << seq << ": predicted / measured fwd+bwd time " << ratio
                                             << " (fwd " << core.fwd / r["fwd_s"].get<double>() << ", bwd "
                                             << core.bwd / r["bwd_s"].get<double>() << ")");
        // FlashAttention-2 within 10%; cuDNN predicted 6-17% slow by the fitted constant (above)
        if (cudnn) {
            CHECK(ratio > 1.0);
            CHECK(ratio < 1.25);
        } else {
            CHECK_THAT(ratio, WithinRel(1.0, 0.10));
        }
        (cudnn ? cudnn_ratio : flash_ratio).push_back(ratio);
    }
    REQUIRE(cudnn_ratio.size() == 5);
    REQUIRE(flash_ratio.size() == 5);
    CHECK_THAT(median(flash_ratio), WithinRel(1.0, 0.05));
}

TEST_CASE("validation: H200 and H100 kernels, attention's backward time over its forward's", "[validation][compute]") {
    // attention_backward_time_ratio (2.8) is the median over both probe files' causal,
    // head-dimension-128 rows from 8,192 to 32,768 tokens, cuDNN and FlashAttention-2 (12 rows:
    // 2.54-3.03, median 2.815), re-derived here; shorter sequences take relatively longer
    // backwards (3.2-5.0 at 512-2,048 tokens), which the constant leaves out
    using namespace h200_kernels;
    const nlohmann::json h100 = read_measurements_file("h100_compute_kernels.json");
    std::vector<double> ratio;
    for (const nlohmann::json* j : {&measured(), &h100})
        for (const auto& r : (*j)["attention"]["rows"]) {
            if (r.contains("error") || !r["causal"].get<bool>() || r["head_dim"] != 128 || r["seq"].get<int>() < 8192) continue;
            const double x = r["bwd_s"].get<double>() / r["fwd_s"].get<double>();
            CHECK(x > 2.4);
            CHECK(x < 3.2);
            ratio.push_back(x);
        }
    REQUIRE(ratio.size() == 12);
    CHECK_THAT(median(ratio), WithinRel(attention_backward_time_ratio, 0.01));
}

TEST_CASE("validation: H200 kernels, memory-bound kernels, kernel overhead and grouped GEMMs", "[validation][compute]") {
    using namespace h200_kernels;
    const auto& j = measured();
    const double hbm = h200_sxm.memory_bandwidth.value();
    std::map<std::string, double> fraction;
    for (const auto& r : j["memory"]["rows"]) fraction[r["kernel"]] = r["bytes_per_s"].get<double>() / hbm;
    // a copy: the kernel figure of memory_efficiency (best-in-class kernels at 0.8-0.9 of HBM)
    CHECK_THAT(fraction.at("copy"), WithinRel(kernel_constants.memory_efficiency, 0.10));
    CHECK(fraction.at("copy") < 1.0);
    // the fitted value inside the spread of the element-wise kernels a layer runs
    const double lo = std::min({fraction.at("rmsnorm_fwd"), fraction.at("silu_mul"), fraction.at("cast_bf16_fp8"), fraction.at("amax")});
    const double hi = std::max({fraction.at("rmsnorm_fwd"), fraction.at("silu_mul"), fraction.at("cast_bf16_fp8"), fraction.at("amax")});
    CHECK(fitted_compute_constants.memory_efficiency > lo);
    CHECK(fitted_compute_constants.memory_efficiency < hi);

    // per-kernel overhead: between a kernel replayed from a CUDA graph and one launched from Python
    const auto& o = j["overhead"];
    CHECK(o["tiny_kernel_graph_replay_s"].get<double>() < fitted_compute_constants.kernel_overhead_s);
    CHECK(fitted_compute_constants.kernel_overhead_s < o["tiny_kernel_eager_gpu_s"].get<double>());

    // grouped expert GEMMs against the dense GEMM of the same rows
    std::vector<double> grouped;
    for (const auto& r : j["moe"]["rows"])
        if (r.contains("grouped_tflops")) grouped.push_back(r["grouped_tflops"].get<double>() / r["dense_tflops"].get<double>());
    REQUIRE(grouped.size() == 24);
    CHECK_THAT(median(grouped), WithinRel(kernel_constants.grouped_gemm_efficiency, 0.12));
}

TEST_CASE("validation: H200 kernels, the NCCL probe's output on the same machine", "[validation][probe]") {
    const auto sets = read_measurements(std::string(COMMSCALE_DATA_DIR) + "/measurements/h200_nccl_probe_1gpu.json");
    REQUIRE(sets.size() == 7);
    for (const auto& s : sets) {
        CHECK(s.tool == "commscale-probe");
        CHECK(s.gpu == "NVIDIA H200");
        CHECK(s.ranks == 1);
    }
    CHECK(preset_for_gpu(sets.front().gpu) == "hgx-h200");
    // one rank: all_reduce is a device-local copy; its largest message moves the buffer in and out
    // of HBM, below the datasheet's 4.8 TB/s and above half of it
    const auto& ar = sets.front();
    REQUIRE(ar.op == collective_op::all_reduce);
    const double copy = 2.0 * ar.rows.back().algbw.value();
    CHECK(copy < h200_sxm.memory_bandwidth.value());
    CHECK(copy > 0.5 * h200_sxm.memory_bandwidth.value());
}

TEST_CASE("validation: H200 kernels, GEMMs of 64-8,192 tokens: the roofline and the per-kernel overhead", "[validation][compute]") {
    using namespace h200_kernels;
    const auto& j = measured();
    // the forward GEMMs of TP-sharded Llama 3 layers (768-8,192 output columns) at 64-8,192 tokens,
    // each the GPU time of one call in a CUDA graph, against the library's GEMM roofline
    // (detail::gemm_seconds, here without wave quantization) plus the per-kernel overhead every
    // kernel is charged (kernel_overhead_s), at each dtype's large-GEMM rate (the median of the
    // runs from 4,096 tokens, so that the shape dependence alone is compared): the small-M end is
    // the weights' read from HBM and the kernel's fixed cost, as the model has them
    for (const std::string type : {"bf16", "fp8"}) {
        const std::vector<double> error = m_sweep_errors(j, h200_sxm, type, 0);
        const std::vector<double> wave_error = m_sweep_errors(j, h200_sxm, type, h200_sxm.compute_units);
        REQUIRE(error.size() == 6 * 56);
        INFO(type << ": median |log error| " << median(error) << ", with waves " << median(wave_error));
        CHECK(median(error) < 0.06);  // measured 0.038 (BF16), 0.043 (FP8); with the waves 0.17
        CHECK(median(error) < median(wave_error));
    }
}

TEST_CASE("validation: H100 kernels, the same probe on the part most calibration runs ran on", "[validation][compute]") {
    // data/measurements/h100_compute_kernels.json: one H100 80GB HBM3 SXM (700 W, driver 580.159.04,
    // CUDA 13.0, PyTorch 2.11). Recorded when written: best BF16 784 TFLOP/s, FP8 1441; FP8 split
    // accumulator 1.046x; a copy at 2.98 TB/s; cuDNN attention 0.57 of the BF16 peak at 16K tokens;
    // the M sweep 4.6% (BF16) and 5.2% (FP8) off the roofline without waves, 15-17% with them.
    using namespace h200_kernels;
    const nlohmann::json j = read_measurements_file("h100_compute_kernels.json");
    const auto acc = accelerator_for_device(j["device"]["name"].get<std::string>());
    REQUIRE(acc.has_value());
    CHECK(acc->name == "h100-sxm");
    CHECK(j["device"]["multiprocessors"].get<int>() == acc->compute_units);
    // the MAMF figures (ml-engineering, measured on another H100) within 5%
    CHECK_THAT(acc->compute_efficiency * acc->peak(dtype::bf16)->value(),
               WithinRel(j["gemm"]["best"]["bf16"]["tflops"].get<double>() * tflops, 0.05));
    CHECK_THAT(acc->compute_efficiency * acc->fp8_mamf_ratio * acc->peak(dtype::fp8)->value(),
               WithinRel(j["gemm"]["best"]["fp8"]["tflops"].get<double>() * tflops, 0.05));
    // a copy between 0.8 and 1 of the datasheet's 3.35 TB/s
    for (const auto& r : j["memory"]["rows"])
        if (r["kernel"] == "copy") {
            CHECK(r["bytes_per_s"].get<double>() < acc->memory_bandwidth.value());
            CHECK(r["bytes_per_s"].get<double>() > 0.8 * acc->memory_bandwidth.value());
        }
    // the split accumulator as on the H200 (the prior of fp8_backward_slowdown) within 1%
    const std::vector<double> split = split_accumulator_ratios(j);
    REQUIRE(split.size() == 160);
    CHECK_THAT(median(split), WithinRel(kernel_constants.fp8_backward_slowdown, 0.01));
    // the M sweep: the roofline without waves plus the per-kernel overhead within 6% (median)
    for (const std::string type : {"bf16", "fp8"}) {
        const std::vector<double> error = m_sweep_errors(j, *acc, type, 0);
        INFO(type << ": median |log error| " << median(error));
        CHECK(median(error) < 0.06);
    }
}

TEST_CASE("validation: H200 attention against the heads per rank", "[validation][compute]") {
    // data/measurements/h200_attention_heads.json: cuDNN and FlashAttention-2, causal, head
    // dimension 128, micro-batch 1, 1-128 query heads (8 per KV head), 2,048-32,768 tokens, two
    // runs (each row's repeat_*). The occupancy factor 1 - exp(-W / w) of the attention core
    // (cudnn_attention_fill_waves, flash_attention_2_fill_waves) is fitted to it: re-derived here
    // (least squares in log over the rows from 0.9 waves up, the sequence factor s / (s + 512)
    // held, the scale free), and the library's attention core, exponentials included, checked
    // against every such row with and without it, the scale apart (the fitted efficiencies are a
    // training run's, not these kernels').
    using namespace h200_kernels;
    const nlohmann::json j = read_measurements_file("h200_attention_heads.json");
    const int units = h200_sxm.compute_units;
    struct point {
        int heads, seq;
        double seconds, rate;  // mean of the two runs; forward + backward FLOPs over it
    };
    for (const std::string backend : {"cudnn", "flash"}) {
        std::vector<point> pts;
        for (const auto& r : j["attention_heads"]["rows"]) {
            REQUIRE_FALSE(r.contains("error"));
            if (r["backend"] != backend) continue;
            const int h = r["q_heads"], s = r["seq"];
            if (detail::attention_tile_waves(1, h, s, units) < 0.9) continue;
            const double t = 0.5 * (r["fwd_s"].get<double>() + r["bwd_s"].get<double>() + r["repeat_fwd_s"].get<double>() +
                                    r["repeat_bwd_s"].get<double>());
            pts.push_back({h, s, t, 3.5 * 2.0 * h * static_cast<double>(s) * s * 128.0 / t});
        }
        REQUIRE(pts.size() == 34);
        // the fit
        double best_w = 0, best_sse = std::numeric_limits<double>::infinity();
        for (int i = 1; i <= 200; ++i) {
            const double w = 0.025 * i;
            std::vector<double> res;
            for (const point& p : pts) {
                const double waves = detail::attention_tile_waves(1, p.heads, p.seq, units);
                // the sequence factor s / (s + 512) as the library has it (flash_attention_efficiency at peak 1)
                res.push_back(std::log(p.rate) - std::log(flash_attention_efficiency(p.seq, 1.0) * (1.0 - std::exp(-waves / w))));
            }
            double mean = 0, sse = 0;
            for (double x : res) mean += x / static_cast<double>(res.size());
            for (double x : res) sse += (x - mean) * (x - mean);
            if (sse < best_sse) best_sse = sse, best_w = w;
        }
        const bool cudnn = backend == "cudnn";
        INFO(backend << ": fitted fill waves " << best_w);
        CHECK_THAT(best_w, WithinRel(cudnn ? cudnn_attention_fill_waves : flash_attention_2_fill_waves, 0.03));
        // the library's attention core on each measured shape, with the factor and without it:
        // the mean |deviation| of log(predicted / measured) about its mean
        auto spread = [&](bool occupancy) {
            compute_params c = compute_params_for(h200_sxm, dtype::bf16, kernel_constants,
                                                  cudnn ? framework::megatron_core : framework::fsdp);
            if (!occupancy) c.attention_fill_waves = 0;
            std::vector<double> e;
            for (const point& p : pts) {
                const transformer m{.name = "attention-heads", .layers = 1, .hidden = 128 * p.heads, .heads = p.heads,
                                    .kv_heads = std::max(1, p.heads / 8), .ffn = 4 * 128 * p.heads, .vocab = 32000,
                                    .max_seq = p.seq, .source = "the attention_heads sweep's shape"};
                layer_shape shape;
                shape.seq = p.seq;
                const auto core = detail::attention_core_seconds(m, shape, c, p.seq);
                e.push_back(std::log((core.fwd + core.bwd) / p.seconds));
            }
            double mean = 0, dev = 0;
            for (const double x : e) mean += x / static_cast<double>(e.size());
            for (const double x : e) dev += std::fabs(x - mean) / static_cast<double>(e.size());
            return dev;
        };
        const double with = spread(true), without = spread(false);
        INFO("mean |log error| about the mean: " << with << " with the occupancy factor, " << without << " without");
        // recorded: cuDNN 0.082 against 0.206, FlashAttention-2 0.105 against 0.236
        CHECK(with < 0.12);
        CHECK(with < 0.6 * without);
    }
}
