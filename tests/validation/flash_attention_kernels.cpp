// FlashAttention-2's published kernel rates against the library's attention core at its kernel
// figures (compute_constants' priors): Dao-AILab/flash-attention README, "Performance", forward +
// backward, causal, head dim 128, 16K tokens (batch x sequence 16K, hidden 2048): 189 TFLOP/s on
// A100 (of 312) and 328 on H100 (of 989); head dim 64, non-causal, 16K: 296 on H100 there and 345.8
// on B200 with the same benchmark script (flash_attn 2.7.4, flash-attention issue #1589).
// accelerator::flash_attention_2_ratio (0.553 on Hopper, 0.286 on Blackwell) was set from these
// figures, so the ratio checks re-derive it; the absolute rates check what the kernel figure 0.6
// and the exponentials priced at each part's rate give.
//
// Recorded when written: A100 168 TFLOP/s (0.89 of 189), H100 292 (0.89 of 328); H100 over A100
// 1.73 against 1.74 published; B200 over H100 at head dim 64 1.17 against 1.17.
#include "attention_fixtures.hpp"
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/predict/compute.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace {

// TFLOP/s of the library's FlashAttention-2 (the PyTorch stacks' kernel) forward + backward at the
// kernel figures, causal, hidden 2048 in heads of `head_dim`, one sequence of 16K tokens: the
// README's FLOP count, 4 s^2 d heads / 2 forward (causal) and 2.5x that backward.
double flash2_tflops(const accelerator& acc, int head_dim = 128) {
    constexpr int seq = 16384;
    const int heads = 2048 / head_dim;
    const compute_params c = compute_params_for(acc, dtype::bf16, kernel_constants, framework::fsdp);
    const auto core = attention_test::core_seconds(c, heads, 1, seq);
    const double flops = 3.5 * 4.0 * seq * static_cast<double>(seq) * head_dim * heads / 2.0;
    return flops / (core.fwd + core.bwd) / 1e12;
}

}  // namespace

TEST_CASE("validation: FlashAttention-2 on Hopper against A100 and on Blackwell against Hopper", "[validation][compute]") {
    const double a100 = flash2_tflops(a100_80gb_sxm), h100 = flash2_tflops(h100_sxm);
    INFO("A100 " << a100 << " TFLOP/s (published 189), H100 " << h100 << " (published 328)");
    // the ratio the catalog's flash_attention_2_ratio was set to reproduce
    CHECK_THAT(h100 / a100, WithinRel(328.0 / 189.0, 0.02));
    // the absolute rates: the kernel figure (0.6) was set before the exponentials were priced apart
    CHECK_THAT(a100, WithinRel(189.0, 0.15));
    CHECK_THAT(h100, WithinRel(328.0, 0.15));
    // Blackwell's legacy MMA path: B200 over H100 at head dim 64 (non-causal there, causal here;
    // the ratio of the two parts carries)
    const double b200_64 = flash2_tflops(b200, 64), h100_64 = flash2_tflops(h100_sxm, 64);
    INFO("head dim 64: H100 " << h100_64 << ", B200 " << b200_64 << " TFLOP/s (published 296, 345.8 non-causal)");
    CHECK_THAT(b200_64 / h100_64, WithinRel(345.8 / 296.0, 0.03));
    // the parts that share Hopper's silicon share its figure
    CHECK(h200_sxm.flash_attention_2_ratio == h100_sxm.flash_attention_2_ratio);
    CHECK(h800_sxm.flash_attention_2_ratio == h100_sxm.flash_attention_2_ratio);
}
