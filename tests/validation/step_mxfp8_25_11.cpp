// MXFP8 against per-tensor FP8 on Blackwell: Megatron-Bridge's 25.11 performance table
// (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md at tag v0.2.0, section "25.11 NeMo
// Container") lists the Llama 3 8B and Llama 3.1 405B runs as "FP8-CS (FP8-MX)": the first value
// with per-tensor current scaling (in the calibration set, data/calibration), the parenthesised
// one with the same plan in MXFP8 ("different quantization granularities"). The MXFP8 values are
// a test, never fitting data.
//
// Published (tokens/s per GPU, FP8-CS then FP8-MX): 8B on 8 GB300 37,556 / 36,108, on 8 GB200
// 31,508 / 29,789, on 8 B200 30,624 / 29,521; 405B on 128 B200 (TP 4, PP 8, VP 8, CP 2, global
// batch 64) 661 / 624: MXFP8 is 3.6-5.6% slower. Recorded when written (predicted / published - 1,
// MXFP8): -5.2%, +8.2%, +3.5%, +21.2%, median |error| 6.7%, MXFP8 over FP8 1.00-1.01 in the model;
// since GB300's GEMM efficiency is fitted to its FP8, BF16 and MXFP8 runs of the calibration set
// (0.878 against the default 0.8; this GB300 MXFP8 value is not among them): +0.4%, +8.8%, +4.0%,
// +20.2%, median 6.4%. Since MXFP8's GEMMs take per-tensor FP8's time x mxfp8_gemm_time_ratio
// (1.051, Transformer Engine's B300 GEMM profiling; they ran at per-tensor FP8's rate without its
// split-accumulator backward before): -0.4%, +4.2%, -3.6%, +13.0%, median 3.9%, MXFP8 over FP8
// 0.952-0.960 against the published 0.944-0.964.
// Before MXFP8 carried fp8_backward_slowdown's excess over its kernel figure and quantized its
// second (column-wise) copy: +1.7%, +16.0%, +10.8%, +32.0% (median 13.4%), MXFP8 1.07-1.10x FP8. The 405B row's recipe also turns off the overlap of the parameter all-gather
// for MXFP8 ("keeping this enabled causes NaN grad norm", scripts/performance/configs/llama31/
// llama31_llm_pretrain.py), which the plan does not express.
#include "catch_shim.hpp"

#include <cmath>
#include <vector>

#include <commscale/calibrate/errors.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

TEST_CASE("validation: Megatron-Bridge 25.11 MXFP8 runs against their per-tensor FP8 twins", "[validation][step]") {
    struct row {
        const char* name;
        const transformer* model;
        const cluster* system;
        int gpus, tp, pp, cp, vp, micro_batch, global_batch;
        double fp8, mxfp8;  // published tokens/s per GPU
    };
    const row rows[] = {
        {"Llama 3 8B GB300", &models::llama3_8b, &presets::gb300_nvl72, 8, 1, 1, 1, 1, 2, 128, 37556, 36108},
        {"Llama 3 8B GB200", &models::llama3_8b, &presets::gb200_nvl72, 8, 1, 1, 1, 1, 2, 128, 31508, 29789},
        {"Llama 3 8B B200", &models::llama3_8b, &presets::dgx_b200, 8, 1, 1, 1, 1, 2, 128, 30624, 29521},
        {"Llama 3.1 405B B200", &models::llama3_405b, &presets::dgx_b200, 128, 4, 8, 2, 8, 1, 64, 661, 624},
    };
    std::vector<double> errors;
    for (const row& r : rows) {
        cluster c = *r.system;
        c.nodes = r.gpus / c.node.gpus;
        plan p{.tp = r.tp, .pp = r.pp, .dp = r.gpus / (r.tp * r.pp * r.cp), .cp = r.cp, .micro_batch = r.micro_batch,
               .global_batch = r.global_batch, .seq = 8192};
        apply_framework(p, framework::megatron_core);
        p.gradient_bytes = 2;  // Megatron-Bridge's performance scripts: grad_reduce_in_fp32 False
        p.sequence_parallel = r.tp > 1;
        if (r.vp > 1) {
            p.schedule = pipeline_schedule::interleaved;
            p.virtual_stages = r.vp;
            // llama31_405b_pretrain_config counts the embedding and the loss as pipeline layers
            p.account_for_embedding_in_pipeline_split = true;
            p.account_for_loss_in_pipeline_split = true;
        }
        p.precision = dtype::fp8;
        const double fp8 = predict_step(*r.model, c, p).tokens_per_s / r.gpus;
        p.precision = dtype::mxfp8;
        const step_breakdown s = predict_step(*r.model, c, p);
        const double mx = s.tokens_per_s / r.gpus;
        const double err = mx / r.mxfp8 - 1.0;
        INFO(r.name << ": MXFP8 predicted " << mx << " tokens/s per GPU, published " << r.mxfp8 << " (" << 100 * err
                    << "%); MXFP8 over FP8 predicted " << mx / fp8 << ", published " << r.mxfp8 / r.fp8);
        CHECK(s.fits_in_memory);
        CHECK(std::fabs(err) <= 0.25);
        // the published MXFP8 runs are 3.6-5.6% slower than their FP8 twins: the model's ratio
        // within 2% of each
        CHECK_THAT(mx / fp8, WithinRel(r.mxfp8 / r.fp8, 0.02));
        errors.push_back(std::fabs(err));
    }
    INFO("median |error| " << 100 * median(errors) << "%");
    CHECK(median(errors) <= 0.10);
}
