// The step model against Megatron-Bridge's 25.09 performance table, dense Llama runs on GB200, B200
// and H100 in per-tensor FP8 and MXFP8: tests/data/published/megatron_bridge_25_09.csv (the table's
// rows with the settings of that release's performance recipes; the file's header says where each
// comes from). These runs are a test, never fitting data: the calibration set (data/calibration)
// holds the next release, 25.11, whose table runs six of these plans again (Llama 3 8B on GB200,
// B200 and H100, Llama 3 70B and Llama 3.1 405B on H100, Llama 3.1 405B on B200, within -4% to +5%
// of 25.09's figures there) and none of the other seven: Llama 3 70B on GB200 at global batch 128 and
// its MXFP8 layout (TP 2, PP 4, VP 5), Llama 3.1 405B on GB200 under Megatron-FSDP with 95 layers'
// activations offloaded and its MXFP8 layout (TP 4, PP 8, CP 2, VP 8), and the MXFP8 runs of Llama 3 8B
// on GB200 and B200 and of Llama 3.1 405B on B200.
//
// Recorded when written (predicted / published - 1; the 40%-MFU rule of thumb beside it): GB200 FP8
// +2.9%, +11.9%, +16.7% (rule +10.1%, +4.2%, +4.5%); GB200 MXFP8 +8.3%, +11.2%, +36.4% (+15.4%,
// +17.2%, +31.8%); B200 FP8 +1.9%, +11.0% (+3.6%, +3.3%); B200 MXFP8 +4.5%, +20.6% (+5.8%, +10.2%);
// H100 FP8 -6.8%, -10.7%, -0.4% (-2.9%, +1.6%, -0.2%). Median |error| 10.7% against the rule's 4.5%.
// Since MXFP8's GEMMs take per-tensor FP8's time x mxfp8_gemm_time_ratio (1.051, Transformer
// Engine's GEMM profiling on B300; they ran at per-tensor FP8's rate without its split-accumulator
// backward before), the MXFP8 runs are at +3.8%, +5.6%, +28.3% (GB200) and +0.1%, +13.4% (B200),
// and MXFP8 runs 4-5% slower than per-tensor FP8 on one plan in the model as in the table (2-6%):
// median |error| 6.8% against the rule's 4.5%. On the per-tensor FP8 Llama runs a constant 40% of
// the FP8 peak is the better guess, as on the calibration set's Megatron-Bridge 25.11 FP8 families
// of H100 and B200 (docs/accuracy.md). Where the model misses: Blackwell runs are predicted fast and
// H100 runs slow (every Blackwell run above measured, every H100 run below); the plans the model
// prices furthest off are the Megatron-FSDP runs with activation offloading (+12%, +17%) and TP 4 x
// PP 8 x CP 2 x VP 8 at 32 micro-batches (+11% in FP8 on B200, +13% and +28% in MXFP8 on B200 and
// GB200, where the GB200 run is 7% slower than the same plan on B200).
#include "catch_shim.hpp"
#include "published_fixtures.hpp"

#include <cmath>
#include <vector>

#include <commscale/calibrate/accuracy.hpp>
#include <commscale/calibrate/errors.hpp>

using namespace commscale;

TEST_CASE("validation: Megatron-Bridge 25.09 dense Llama runs (FP8 and MXFP8, GB200, B200, H100)", "[validation][step]") {
    const accuracy_report report = published_test::checked_report("megatron_bridge_25_09.csv", 13, 0.40);
    std::vector<double> blackwell, hopper;
    for (const auto& r : report.runs) (r.accelerator == "h100-sxm" ? hopper : blackwell).push_back(r.rel_error);
    REQUIRE(blackwell.size() == 10);
    REQUIRE(hopper.size() == 3);
    INFO("median |error| " << 100 * report.overall.median_abs_error << "% (rule of thumb "
                           << 100 * report.overall.rule_median_abs_error << "%); median error Blackwell "
                           << 100 * median(blackwell) << "%, H100 " << 100 * median(hopper) << "%");
    // the aim for Blackwell, 12%, on the whole table
    CHECK(report.overall.median_abs_error <= 0.12);
    // no drift by accelerator generation beyond 15% at the median (recorded: Blackwell +8.3%, H100 -6.8%)
    CHECK(std::fabs(median(blackwell)) <= 0.15);
    CHECK(std::fabs(median(hopper)) <= 0.15);
}
