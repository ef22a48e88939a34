// The step model against Megatron-Bridge's 25.09 performance table, MoE runs: DeepSeek-V3, Qwen3
// 30B-A3B and Qwen3 235B-A22B on GB200, B200 and H100, per-tensor FP8 and MXFP8:
// tests/data/published/megatron_bridge_25_09_moe.csv (the table's rows with the settings of that
// release's performance scripts; the file's header says where each comes from). A test, never
// fitting data: the calibration set (data/calibration) holds the next release, 25.11, whose MoE runs
// are dropless; all but one of these drop tokens at capacity factor 1 with padding
// (Megatron-Bridge's "tokendrop": static shapes, no host synchronization in the dispatcher), so they
// test the part of the MoE model the calibration set cannot: the experts' kernels without the
// dropless synchronization, and per-tensor FP8 beside MXFP8 on the same plans.
//
// Recorded when written (predicted / published - 1; the 40%-MFU rule of thumb is +106% to +293% on
// every run: an MoE model's active parameters do not set its speed). GB200: DeepSeek-V3 FP8 +0.2%,
// Qwen3 30B-A3B FP8 +2.0% and MXFP8 -2.1%, Qwen3 235B-A22B FP8 -2.0% and MXFP8 -2.4%; B200:
// DeepSeek-V3 FP8 +17.4% and MXFP8 +24.6%, Qwen3 30B-A3B FP8 -30.0%, Qwen3 235B-A22B FP8 -5.0% and
// MXFP8 -7.7%; H100: DeepSeek-V3 FP8 (dropless, DeepEP) -13.8%, Qwen3 30B-A3B -4.5%, Qwen3
// 235B-A22B -15.0%. Median |error| 5.0% (mean error -2.4%).
//
// Before the backward charged the experts' launch cost to their GEMMs alone (predict/compute.hpp
// count_layer_kernels) the same rows were at -9.5%, -31.4%, -10.2%, -20.5%, -10.1% (GB200), -27.3%,
// +12.9%, -66.0%, -42.2%, -17.2% (B200), -14.6%, -32.8%, -22.0% (H100): median |error| 20.5%, every
// per-tensor FP8 run too slow, and per-tensor FP8 up to 1.4x slower than MXFP8 on one plan where the
// table has them within 4% (Qwen3 30B-A3B on GB200: 22,775 and 23,723 tokens/s per GPU). The one
// row that cannot be expressed is DeepSeek-V3's MXFP8 layout on GB200 as printed (PP 8 with EP 64 on
// 256 GPUs). Where the model still misses: DeepSeek-V3 on 256 B200 (PP 16, EP 8) +17% and +25%, and
// Qwen3 30B-A3B on 8 B200 at micro-batch 1 -30% (64 micro-batches of 4,096 tokens, launch-bound).
#include "catch_shim.hpp"
#include "published_fixtures.hpp"

#include <cmath>
#include <string>

#include <commscale/calibrate/accuracy.hpp>
#include <commscale/hardware/clusters.hpp>

using namespace commscale;

TEST_CASE("validation: Megatron-Bridge 25.09 MoE runs (token dropping, FP8 and MXFP8, GB200, B200, H100)", "[validation][step]") {
    const auto runs = published_test::runs_of("megatron_bridge_25_09_moe.csv");
    REQUIRE(runs.size() == 14);
    const accuracy_report report = accuracy(runs, presets::dgx_h100);  // every row names its cluster
    REQUIRE(report.runs.size() == runs.size());
    int expressed = 0;
    double fp8_30b_gb200 = 0, mxfp8_30b_gb200 = 0;
    for (const auto& r : report.runs) {
        INFO(published_test::describe(r));
        if (!r.expressible) {
            // EP 64 cannot divide the 32 data-parallel ranks the printed PP 8 leaves
            CHECK(r.label.find("DeepSeek-V3 GB200 MXFP8") != std::string::npos);
            continue;
        }
        ++expressed;
        CHECK(r.fits_in_memory);  // NVIDIA ran every one
        CHECK(std::fabs(r.rel_error) <= 0.35);
        // the model beats the rule of thumb on every run
        CHECK(std::fabs(r.rel_error) < std::fabs(r.rule_rel_error));
        if (r.label.find("Qwen3 30B-A3B GB200 FP8") != std::string::npos) fp8_30b_gb200 = r.predicted_tokens_per_s_per_gpu;
        if (r.label.find("Qwen3 30B-A3B GB200 MXFP8") != std::string::npos) mxfp8_30b_gb200 = r.predicted_tokens_per_s_per_gpu;
    }
    CHECK(expressed == 13);
    INFO("median |error| " << 100 * report.overall.median_abs_error << "% (rule of thumb "
                           << 100 * report.overall.rule_median_abs_error << "%), median error "
                           << 100 * report.overall.median_error << "%");
    // the aims (10% dense Hopper, 12% Blackwell) on the whole table
    CHECK(report.overall.median_abs_error <= 0.10);
    CHECK(std::fabs(report.overall.median_error) <= 0.10);
    // per-tensor FP8 and MXFP8 on one token-dropping plan: the table's 22,775 and 23,723 tokens/s
    // per GPU (MXFP8 4% faster); the model within 10% of each other, not 1.4x apart
    REQUIRE(fp8_30b_gb200 > 0);
    REQUIRE(mxfp8_30b_gb200 > 0);
    CHECK(std::fabs(fp8_30b_gb200 / mxfp8_30b_gb200 - 22775.0 / 23723.0) <= 0.10);
}
