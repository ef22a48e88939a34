// The step model at long sequences under context parallelism against NeMo's published long-sequence
// table: NVIDIA/NeMo docs/source/performance/performance_long_sequence.md (at 19fadb67b0), "LLAMA3-8B
// (FP8) - B200": NeMo 25.04 (Megatron-Core with Transformer Engine), DGX B200, 8K to 1M tokens, the
// GPUs growing with the sequence (8 to 1,024), TP 1-4 and CP 1-16, "TFLOPS / GPU" with CP. A test,
// never fitting data.
//
// The table's TFLOP/s are NeMo's formula of that release (nemo/utils/flops_formulas.py `llama3`:
// the whole s x s attention square, vocabulary 128,256; the causal discount came in August 2025,
// after this table), so the measured tokens/s per GPU are the TFLOP/s over megatron_model_flops_
// per_token with megatron_attention_count::full. The table's DP column does not multiply out to its
// GPU column (TP x PP x DP x CP is a quarter of the GPUs from 32K on); the GPU column is taken, DP
// = GPUs / (TP CP), with the published global batch where it fills one micro-batch per replica
// and one per replica where it does not (512K and 1M tokens). With PP 1 each GPU's tokens per
// second do not depend on DP beyond the hidden gradient reduction.
//
// Recorded when written (predicted / measured - 1): +4.9% +1.7% +5.3% +4.9% +4.1% +2.7% +1.1% +1.9%
// from 8K to 1M tokens; with the ring attention's merges (detail::cp_ring_merge) and the constants
// refitted around them: +5.6% +2.1% +4.0% +3.0% +2.5% +0.8% -0.8% -0.2%; with the forward's
// reduce-scatters alone exposed under TP overlap (predict/step.hpp tp_exposure) and the constants
// refitted: +5.8% +2.7% +5.2% +4.5% +4.8% +3.2% +1.4% +2.0%. The same document's Llama 2 7B FP8 table on H100 (NeMo 24.03, cuDNN 9.0's
// fused attention) is not held here: the model, whose Transformer Engine attention constant is
// fitted to the 2024-25 releases, is 4% too fast at 8K, 15% at 16K and 26-45% at 32K-1M tokens
// (docs/accuracy.md).
#include "catch_shim.hpp"

#include <cmath>
#include <vector>

#include <commscale/calibrate/errors.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

TEST_CASE("validation: NeMo long-sequence Llama 3 8B FP8 on B200 with context parallelism", "[validation][step]") {
    struct row {
        int seq_k, gpus, global_batch, tp, cp;
        double tflops;  // published, with CP
    };
    const row rows[] = {{8, 8, 512, 1, 1, 1671},       {16, 16, 256, 1, 1, 1717},     {32, 32, 128, 1, 2, 1624},
                        {64, 64, 64, 1, 4, 1600},       {128, 128, 32, 2, 4, 1588},    {256, 256, 16, 4, 4, 1590},
                        {512, 512, 8, 4, 8, 1619},      {1024, 1024, 4, 4, 16, 1608}};
    const transformer& m = models::llama3_8b;
    megatron_flops_options nemo_25_04;
    nemo_25_04.attention = megatron_attention_count::full;
    nemo_25_04.vocab = 128256;
    std::vector<double> errs;
    for (const row& r : rows) {
        const int seq = r.seq_k * 1024, dp = r.gpus / (r.tp * r.cp);
        cluster c = presets::dgx_b200;
        c.nodes = r.gpus / c.node.gpus;
        plan p{.tp = r.tp, .pp = 1, .dp = dp, .cp = r.cp, .micro_batch = 1,
               .global_batch = r.global_batch >= dp ? r.global_batch : dp, .seq = seq};
        apply_framework(p, framework::megatron_core);
        p.precision = dtype::fp8;
        p.sequence_parallel = r.tp > 1;
        const auto s = predict_step(m, c, p);
        const double measured = r.tflops * 1e12 / in_flops(megatron_model_flops_per_token(m, seq, nemo_25_04));
        const double predicted = s.tokens_per_s / r.gpus;
        const double err = predicted / measured - 1.0;
        INFO(r.seq_k << "K tokens, TP " << r.tp << " CP " << r.cp << ": predicted " << predicted << " tokens/s per GPU, published "
                     << measured << " (" << 100 * err << "%)");
        CHECK(s.fits_in_memory);
        CHECK(s.bottleneck == step_bottleneck::compute);
        CHECK(std::fabs(err) <= 0.08);
        errs.push_back(err);
    }
    INFO("median error " << 100 * median(errs) << "%");
    CHECK(std::fabs(median(errs)) <= 0.05);
}
