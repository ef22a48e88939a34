// The compute model's parts against whole Llama 3 layers measured on one NVIDIA H200 SXM 141GB
// and one H100 80GB HBM3 SXM (700 W each, driver 580.159.04, CUDA 13.0, PyTorch 2.11, cuDNN 9.19)
// by apps/probe/compute_probe.py --only=layers: data/measurements/h200_layers.json and
// h100_layers.json (see data/measurements/README.md). Each row is one tensor-parallel rank's layer
// (Llama 3 8B on TP 1, 70B on TP 4 and TP 8; no sequence parallelism, no communication),
// micro-batch 1, 2,048-32,768 tokens, BF16 or FP8 with per-tensor current scaling, eager PyTorch
// with cuDNN's fused attention; forward and backward timed and split by kernel (torch.profiler).
// The GEMM and attention kernels are the ones a Megatron-Core layer runs (cuBLAS, cuDNN); the rest
// is eager PyTorch, not Transformer Engine's fused kernels.
//
// What these measurements are to the library: nothing was set from them (the attention
// backward-to-forward ratio comes from the isolated kernels of the *_compute_kernels.json files);
// the checks are independent of the calibration set the compute constants are fitted to
// (data/calibration/published_runs.csv). The GPUs ran between 1,380 and 1,980 MHz (smi_before /
// smi_after of each row): short cases well above the sustained clock of a training run at its
// power limit (1,230 MHz after the kernel files' GEMM sweeps), the 16K-32K ones near 700 W.
//
// Recorded when written (predicted with the fitted constants / measured kernel time; H200, H100):
// * attention (cuDNN, causal, grouped-query, head dim 128), forward + backward, from 8,192 tokens:
//   0.98-1.27 (median 1.14) and 0.97-1.23 (1.10); the FP8 cases, which ran at higher clocks, at
//   the top of those ranges; the forward and the backward apart 0.95-1.31. Its growth from 8,192
//   to 32,768 tokens within 9%; with 8 query heads per rank (70B on TP 8) only since the
//   occupancy factor (cudnn_attention_fill_waves; 16-20% too steep by the sequence alone, the
//   8-head cases at 8,192 tokens up to 13% fast before it). cuDNN's backward takes 2.6-3.3x its
//   forward's time in place, as in the isolated kernels from which attention_backward_time_ratio
//   (2.8) is taken; before it, the model's 2.5x FLOPs at one efficiency gave 2.2x, its forward
//   2-47% slow.
// * GEMMs: BF16 1.12-1.31x the in-place kernel time (median 1.21) and 1.10-1.27x (1.17); FP8 (the
//   split accumulator alone) 1.24-1.32x (1.28) and 1.25-1.35x (1.29): the model's rates are a
//   training run's at sustained clocks, where the H200's GEMM sweep measured 607-644 TFLOP/s for
//   these layers' BF16 GEMMs against 740-800 in place here.
// * everything else: the eager layer's element-wise kernels (RMSNorm, rotary embedding as
//   rotate-half, SiLU x multiply, residual adds, copies) take 1.1-2.6x and 1.0-2.1x the model's
//   fused traffic and kernel overhead in BF16; its per-tensor FP8 casts run as 6 kernels each,
//   with the transposes of the backward's FP8 operands as strided copies (3.4-8.5x, 2.8-7.2x).
#include "catch_shim.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include <commscale/calibrate/errors.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/predict/compute.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace hopper_layers {

/// The two records: an H200 SXM 141GB and an H100 80GB HBM3 SXM, the same probe and cases.
constexpr const char* files[] = {"h200_layers.json", "h100_layers.json"};

/// A record, parsed once for the test cases that read it.
const nlohmann::json& measured(const std::string& file) {
    static std::map<std::string, nlohmann::json> parsed;
    if (const auto it = parsed.find(file); it != parsed.end()) return it->second;
    std::ifstream in(std::string(COMMSCALE_DATA_DIR) + "/measurements/" + file);
    REQUIRE(in.good());
    return parsed.emplace(file, nlohmann::json::parse(in)).first->second;
}

/// The compute model's part of a kernel, from its name: cuBLAS's Hopper GEMM kernels are named
/// nvjet_*, CUTLASS's and older cuBLAS ones *gemm* / *xmma*; cuDNN's fused attention is
/// cudnn_generated_*sdpa*, with its helper kernels in namespace cudnn::fusion (the backward's
/// dO . O, the dQ conversion, the head reduction of grouped-query attention).
enum class part { gemm, attention, rest };
part part_of(const std::string& name) {
    if (name.find("nvjet") != std::string::npos || name.find("gemm") != std::string::npos ||
        name.find("xmma") != std::string::npos || name.find("cutlass") != std::string::npos)
        return part::gemm;
    if (name.find("sdpa") != std::string::npos || name.find("cudnn") != std::string::npos ||
        name.find("fmha") != std::string::npos)
        return part::attention;
    return part::rest;
}

struct parts {
    double gemm = 0, attention = 0, rest = 0;
};

parts kernel_seconds(const nlohmann::json& table) {
    parts p;
    for (const auto& [name, launches_seconds] : table.items()) {
        const double s = launches_seconds.at(1).get<double>();
        switch (part_of(name)) {
        case part::gemm: p.gemm += s; break;
        case part::attention: p.attention += s; break;
        case part::rest: p.rest += s; break;
        }
    }
    return p;
}

/// One measured row with the model's prediction of the same layer.
struct row {
    std::string label;
    std::string model;
    int tp = 1, seq = 0;
    bool fp8 = false;
    parts fwd, bwd;         ///< measured kernel seconds by part
    layer_time predicted;   ///< fitted constants, Megatron-Core's stack
    layer_time kernel;      ///< the kernel-level constants (compute_constants' priors)
};

std::vector<row> rows(const nlohmann::json& j) {
    const auto acc = accelerator_for_device(j["device"]["name"].get<std::string>());
    REQUIRE(acc.has_value());
    std::vector<row> out;
    for (const auto& r : j["layers"]["rows"]) {
        REQUIRE_FALSE(r.contains("error"));
        row x;
        x.model = r["model"];
        x.tp = r["tp"];
        x.seq = r["seq"];
        x.fp8 = r["precision"] == "fp8";
        x.label = std::string(acc->name) + " " + x.model + " TP " + std::to_string(x.tp) + " " + r["precision"].get<std::string>() + " " +
                  std::to_string(x.seq) + " tokens";
        x.fwd = kernel_seconds(r["fwd_kernels"]);
        const parts both = kernel_seconds(r["fwd_bwd_kernels"]);
        x.bwd = {both.gemm - x.fwd.gemm, both.attention - x.fwd.attention, both.rest - x.fwd.rest};
        layer_shape s;
        s.tp = x.tp;
        s.seq = x.seq;
        s.micro_batch = 1;
        s.sequence_parallel = false;
        const transformer m = model_by_name(x.model);
        const dtype d = x.fp8 ? dtype::fp8 : dtype::bf16;
        x.predicted = layer_compute_time(m, s, compute_params_for(*acc, d, fitted_compute_constants,
                                                                  framework::megatron_core, fp8_recipe::tensorwise));
        x.kernel = layer_compute_time(m, s, compute_params_for(*acc, d, kernel_constants,
                                                               framework::megatron_core, fp8_recipe::tensorwise));
        out.push_back(x);
    }
    return out;
}

}  // namespace hopper_layers

TEST_CASE("validation: Hopper layers, the records: device, cases and a repeat run", "[validation][compute]") {
    using namespace hopper_layers;
    for (const std::string file : files) {
        const nlohmann::json& j = measured(file);
        const auto acc = accelerator_for_device(j["device"]["name"].get<std::string>());
        REQUIRE(acc.has_value());
        CHECK(acc->name == (file.starts_with("h200") ? "h200-sxm" : "h100-sxm"));
        // 3 layer shapes x 2 precisions x 5 sequence lengths
        REQUIRE(j["layers"]["rows"].size() == 30);
        // the second run of the same cases, right after the first: the layers' times agree within
        // 2% (median; recorded 0.9% on the H200 and 0.7% on the H100, up to 25% in the
        // launch-bound 2,048-token cases), so that the comparisons below are not one run's noise
        std::vector<double> drift;
        for (const auto& r : j["layers"]["rows"])
            drift.push_back(std::fabs(std::log((r["fwd_s"].get<double>() + r["bwd_s"].get<double>()) /
                                               (r["repeat_fwd_s"].get<double>() + r["repeat_bwd_s"].get<double>()))));
        INFO(file);
        CHECK(median(drift) < 0.02);
        // the kernel tables hold the layer's GPU time: their sum within 10% of the CUDA-event time
        // from 8,192 tokens, where the eager launches keep ahead of the GPU
        for (const auto& r : j["layers"]["rows"]) {
            if (r["seq"].get<int>() < 8192) continue;
            double sum = 0;
            for (const auto& [name, v] : r["fwd_bwd_kernels"].items()) sum += v.at(1).get<double>();
            INFO(r["model"].get<std::string>() << " " << r["precision"].get<std::string>() << " " << r["seq"].get<int>());
            CHECK_THAT(sum, WithinRel(r["fwd_s"].get<double>() + r["bwd_s"].get<double>(), 0.10));
        }
    }
}

TEST_CASE("validation: Hopper layers, attention in place and its growth with the sequence", "[validation][compute]") {
    using namespace hopper_layers;
    for (const std::string file : files) {
        std::vector<double> ratio;
        std::map<std::tuple<std::string, int, bool>, std::map<int, std::pair<double, double>>> by_seq;
        for (const row& x : rows(measured(file))) {
            const double measured_s = x.fwd.attention + x.bwd.attention;
            const double predicted_s = (x.predicted.attention_fwd + x.predicted.attention_bwd).value();
            by_seq[{x.model, x.tp, x.fp8}][x.seq] = {predicted_s, measured_s};
            if (x.seq < 8192) continue;  // below, cuDNN's helper kernels and short tiles: 0.6-1.0
            const double r = predicted_s / measured_s;
            INFO(x.label << ": predicted / measured attention time " << r << " (forward "
                         << x.predicted.attention_fwd.value() / x.fwd.attention << ", backward "
                         << x.predicted.attention_bwd.value() / x.bwd.attention << ")");
            // te_attention_efficiency was fitted to whole training runs at their sustained clocks,
            // not to these kernels: never more than 10% fast, at most 35% slow (recorded 0.97-1.27)
            CHECK(r > 0.90);
            CHECK(r < 1.35);
            ratio.push_back(r);
            // cuDNN's backward takes 2.6-3.3x its forward's time, as attention_backward_time_ratio
            // (2.8) has it: the forward and the backward apart as close as their sum
            CHECK(x.bwd.attention / x.fwd.attention > 2.4);
            CHECK(x.bwd.attention / x.fwd.attention < 3.4);
            for (const double part : {x.predicted.attention_fwd.value() / x.fwd.attention,
                                      x.predicted.attention_bwd.value() / x.bwd.attention}) {
                CHECK(part > 0.85);
                CHECK(part < 1.40);  // recorded 0.95-1.31
            }
        }
        INFO(file);
        REQUIRE(ratio.size() == 18);
        // recorded: median 1.14 (H200) and 1.10 (H100)
        CHECK(median(ratio) > 1.0);
        CHECK(median(ratio) < 1.2);
        // long sequences cost what they cost: from 8,192 to 32,768 tokens the attention time grows
        // 12.9-16.1x (causal: the scores grow with s^2, the efficiency a little), and the model
        // follows it within 10% (recorded 2-9%). With 8 query heads and 1 KV head per rank (70B on
        // TP 8) the kernel has 3.9 waves of tiles at 8,192 tokens and runs below its many-head
        // efficiency (cudnn_attention_fill_waves): the model's growth there, 15.4x by the sequence
        // alone, is 14.0x with it (measured 12.9-13.3x)
        for (const auto& [key, seqs] : by_seq) {
            const double predicted_growth = seqs.at(32768).first / seqs.at(8192).first;
            const double measured_growth = seqs.at(32768).second / seqs.at(8192).second;
            INFO(std::get<0>(key) << " TP " << std::get<1>(key) << (std::get<2>(key) ? " fp8" : " bf16") << ": growth "
                                  << predicted_growth << " predicted, " << measured_growth << " measured");
            CHECK_THAT(predicted_growth, WithinRel(measured_growth, 0.10));
        }
    }
}

TEST_CASE("validation: Hopper layers, GEMMs and the rest of the layer in place", "[validation][compute]") {
    using namespace hopper_layers;
    for (const std::string file : files) {
        std::map<bool, std::vector<double>> gemm_ratio;
        for (const row& x : rows(measured(file))) {
            const double measured_gemm = x.fwd.gemm + x.bwd.gemm;
            // the GEMMs: the model's rate is a training run's at sustained clocks (the GEMM sweeps
            // of h200_compute_kernels.json and h100_compute_kernels.json at 1,230 MHz: 607-644
            // TFLOP/s for these layers' BF16 GEMMs on the H200), so never faster than these
            // kernels in place at 1,380-1,980 MHz; FP8 with the kernel-level backward factor (the
            // split accumulator alone), not the fitted one that also carries Transformer Engine's
            // unitemized FP8 work
            const layer_time& model = x.fp8 ? x.kernel : x.predicted;
            const double r = (model.gemm_fwd + model.gemm_bwd).value() / measured_gemm;
            INFO(x.label << ": predicted / measured GEMM time " << r);
            CHECK(r > 1.0);
            CHECK(r < (x.fp8 ? 1.45 : 1.40));
            gemm_ratio[x.fp8].push_back(r);
            // the rest of the layer: eager PyTorch's separate element-wise kernels move more than
            // the fused traffic the model prices for Megatron-Core, in BF16 as in FP8 (whose eager
            // current scaling runs 6 kernels per tensor), never less
            const layer_time& p = x.predicted;
            const double rest_model = (p.elementwise_fwd + p.overhead_fwd + p.elementwise_bwd + p.overhead_bwd).value();
            INFO("element-wise: measured / predicted " << (x.fwd.rest + x.bwd.rest) / rest_model);
            CHECK(x.fwd.rest + x.bwd.rest > rest_model);
        }
        // recorded: BF16 median 1.21 (H200) and 1.17 (H100), FP8 1.28 and 1.29
        INFO(file);
        CHECK(median(gemm_ratio[false]) < 1.25);
        CHECK(median(gemm_ratio[true]) < 1.35);
    }
}
