// The step model against Meta's own Llama 3.1 405B pre-training runs: Grattafiori et al. 2024, "The
// Llama 3 Herd of Models", Sec. 3.3.2 and Table 4 (also on Balaji's SC'24 slide "Herding Llamas"):
// H100 80GB at 700 W, 8 per server over NVLink, 400 Gb/s RoCE per GPU, BF16, 16M tokens per step:
//   8,192 GPUs, TP 8, CP 1,  PP 16, DP 64,  8,192 tokens,   430 TFLOP/s per GPU (BF16 MFU 43%)
//  16,384 GPUs, TP 8, CP 1,  PP 16, DP 128, 8,192 tokens,   400 TFLOP/s (41%)
//  16,384 GPUs, TP 8, CP 16, PP 16, DP 8,   131,072 tokens, 380 TFLOP/s (38%)
// Their pipeline drops one transformer layer from the first and the last stage (the embedding and
// the loss counted as pipeline layers) and runs an interleaved schedule; their FSDP shards the
// optimizer state and the gradients but keeps the parameters gathered after the forward pass
// (ZeRO 2 here). Not published, so assumed: 8 virtual stages (126 + 2 = 128 slots of one layer, the
// layout of NVIDIA's recipes for this model), micro-batch 1, sequence parallelism. The dgx-h100
// preset stands in for their servers (8 x 400 Gb/s per node; its InfiniBand against their RoCE, and
// their 7:1 oversubscription between pods is not modelled: the DP traffic it carries is hidden under
// compute here). A test, never fitting data. The TFLOP/s are compared in Megatron-Core's count
// (causal attention, workload/flops.hpp megatron_model_flops_per_token); Meta's count is not
// published beyond "BF16 MFU" (430 / 989 = 43%), and counting the full attention square instead
// would raise the published 8K figures' tokens/s by 4% and the 131K one's by 40%.
//
// The model prices Megatron-Core's stack (the `megatron-core` profile: overlapped TP, DP and PP
// traffic, fused kernels), and on that stack it matches NVIDIA's runs of this model on H100 in BF16
// (NeMo 24.09 on 576 and 2,304 GPUs, +0.3% and +1.9%: step_published_stacks.cpp). Meta's stack ran
// the 8K-token plans about a fifth slower than that. Recorded when written (Megatron's count):
// 8,192 GPUs 534.7 TFLOP/s (+24.4%), 16,384 GPUs 494.8 (+23.7%), CP 16 at 131K 409.8 (+7.8%). What
// the model does get right is how the plan changes the rate: from 8,192 to 16,384 GPUs the step has
// half the micro-batches per pipeline, so the bubble doubles: -7.5% in the model, -7.0% measured.
// At 131K tokens the model loses less than Meta's stack did (-23% against -12% from the 8K plan).
#include "catch_shim.hpp"

#include <cmath>

#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
struct meta_run {
    const char* name;
    int gpus, dp, cp, seq;
    double published_tflops;  // per GPU, Table 4
};

// The predicted step of Meta's plan for `r` on r.gpus H100s (the dgx-h100 preset)
step_breakdown predict_meta_run(const transformer& m, const meta_run& r) {
    cluster c = presets::dgx_h100;
    c.nodes = r.gpus / c.node.gpus;
    plan p{.tp = 8, .pp = 16, .dp = r.dp, .cp = r.cp, .micro_batch = 1,
           .global_batch = 16 * 1024 * 1024 / r.seq, .seq = r.seq};
    apply_framework(p, framework::megatron_core);
    p.zero = 2;
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 8;
    p.account_for_embedding_in_pipeline_split = true;
    p.account_for_loss_in_pipeline_split = true;
    p.sequence_parallel = true;
    p.precision = dtype::bf16;
    return predict_step(m, c, p);
}

// Megatron-Core's model TFLOP/s per GPU of step `s` of run `r`
double megatron_tflops(const transformer& m, const meta_run& r, const step_breakdown& s) {
    return s.tokens_per_s * in_flops(megatron_model_flops_per_token(m, r.seq)) / r.gpus / 1e12;
}
}  // namespace

TEST_CASE("validation: Meta's Llama 3.1 405B pre-training (Llama 3 paper, Table 4)", "[validation][step]") {
    const transformer m = model_by_name("llama3-405b");
    const meta_run runs[] = {{"8,192 GPUs, DP 64, 8K tokens", 8192, 64, 1, 8192, 430.0},
                             {"16,384 GPUs, DP 128, 8K tokens", 16384, 128, 1, 8192, 400.0},
                             {"16,384 GPUs, CP 16, 131K tokens", 16384, 8, 16, 131072, 380.0}};
    double predicted[3] = {};
    for (int i = 0; i < 3; ++i) {
        const step_breakdown s = predict_meta_run(m, runs[i]);
        predicted[i] = megatron_tflops(m, runs[i], s);
        const double err = predicted[i] / runs[i].published_tflops - 1.0;
        INFO(runs[i].name << ": predicted " << predicted[i] << " TFLOP/s per GPU, published " << runs[i].published_tflops
                          << " (" << 100 * err << "%), memory " << in_bytes(s.memory.total()) / gibi << " GiB");
        // Meta trained every one of these plans: they fit in 80 GB under ZeRO 2
        CHECK(s.fits_in_memory);
        CHECK(s.bottleneck == step_bottleneck::compute);
        // the recorded errors (header), with a few points' margin: a change that widens them fails here
        CHECK(std::fabs(err) <= (runs[i].cp > 1 ? 0.12 : 0.28));
    }
    // doubling the GPUs at a fixed 16M-token step halves the micro-batches per pipeline: 400 / 430
    const double ratio = predicted[1] / predicted[0];
    INFO("16,384 over 8,192 GPUs: predicted " << ratio << ", published " << 400.0 / 430.0);
    CHECK(ratio == Approx(400.0 / 430.0).margin(0.02));
}
