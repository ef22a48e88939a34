// Training FLOPs: the 6PD / 8PD approximations against the worked numbers of the source
// documents, and the exact per-layer count against Narayanan et al. 2021's closed form.
#include "catch_shim.hpp"

#include <commscale/workload/flops.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using namespace commscale::literals;
using Catch::Matchers::WithinRel;

TEST_CASE("ml-engineering: 2B params, seq 2048, global batch 16, 8 GPUs -> 65.536 TFLOP per GPU with recompute") {
    // "2B params x 4 x 2 x seqlen 2048 x global batch 16 / 8 GPUs = 65.536 TFLOP" (4 = 2x forward
    // + 2x backward, i.e. 8PD with full recompute); without recompute factor 3: 49.152 TFLOP.
    const double tokens = 2048.0 * 16.0;
    const flop_count per_gpu = approx_training_flops(2e9, tokens, recompute::full) / 8.0;
    CHECK_THAT(in_flops(per_gpu), WithinRel(65.536e12, 1e-12));
    CHECK_THAT(in_flops(approx_training_flops(2e9, tokens, recompute::none) / 8.0), WithinRel(49.152e12, 1e-12));
    // At 50% MFU of the A100's 312 TFLOPS bf16 peak = 156 TFLOPS: 0.42 s per iteration.
    const duration t = per_gpu / (0.5 * 312_TFLOPS);
    CHECK_THAT(in_seconds(t), WithinRel(0.42, 0.01));
    STATIC_REQUIRE(flops_per_parameter_token(recompute::full) == 8.0);
    STATIC_REQUIRE(flops_per_parameter_token(recompute::none) == 6.0);
}

TEST_CASE("will-it-scale: C = 6PD for P = 10B and a 32 x 128-token batch is 2.4576e14 FLOPs") {
    // The document writes "24.576 x 10^14", ten times too large: 6 x 1e10 x 4096 = 2.4576e14.
    const flop_count c = approx_training_flops(1e10, 32.0 * 128.0);
    CHECK_THAT(in_flops(c), WithinRel(2.4576e14, 1e-12));
    CHECK(in_flops(c) < 24.576e14 / 5.0);  // not the document's figure
    // Per step on N nodes of 8 A100 at 50% of 300 TFLOPS: 0.2048 / N s (not the document's 2/N).
    for (int n : {1, 4, 16}) {
        const duration t = c / (static_cast<double>(n) * 8.0 * 150_TFLOPS);
        CHECK_THAT(in_seconds(t), WithinRel(0.2048 / n, 1e-12));
    }
}

TEST_CASE("gpu-fabrics-for-genai: GPT-3 8 x 175e9 x 300e9 = 420 ZFLOP (the table's column is 8PD)") {
    CHECK_THAT(in_flops(approx_training_flops(175e9, 300e9, recompute::full)), WithinRel(420e21, 1e-12));
    // 6PD would be 315 ZFLOP: the table's figures include the recompute forward.
    CHECK_THAT(in_flops(approx_training_flops(175e9, 300e9)), WithinRel(315e21, 1e-12));
}

TEST_CASE("exact count equals Narayanan et al. 2021's 72 / 96 B s l h^2 closed forms for GPT-3 175B") {
    const auto& m = models::gpt3_175b;
    for (double b : {1.0, 1536.0}) {
        INFO("batch " << b);
        CHECK_THAT(in_flops(model_flops(m, 2048, b)), WithinRel(in_flops(narayanan_flops(m, 2048, b, false)), 1e-12));
        CHECK_THAT(in_flops(hardware_flops(m, 2048, b, recompute::full)),
                   WithinRel(in_flops(narayanan_flops(m, 2048, b, true)), 1e-12));
        CHECK(in_flops(hardware_flops(m, 2048, b, recompute::none)) == in_flops(model_flops(m, 2048, b)));
    }
    // Independent hand calculation, B = 1: 72 x 2048 x 96 x 12288^2 x (1 + 2048/73728 + 50257/14155776)
    const double h = 12288, s = 2048, l = 96, V = 50257;
    const double hand = 72.0 * s * l * h * h * (1.0 + s / (6 * h) + V / (12 * l * h));
    CHECK_THAT(in_flops(model_flops(m, 2048, 1)), WithinRel(hand, 1e-12));
    CHECK_THAT(hand, WithinRel(6.0 * 175e9 * 2048 * 1.03, 0.01));  // ~6PD plus 3% attention and logits
}

TEST_CASE("Megatron 1T: exact model FLOPs per token are within 3% above 6P (Kaplan et al. 2020 neglect the context term)") {
    // Model FLOPs per token = 6 P (1 + s/6h + ...): close to 6 x parameters for large h.
    const auto& m = models::megatron_1t;
    const double ratio = in_flops(model_flops_per_token(m, 2048)) / (6.0 * total_parameters(m));
    CHECK(ratio > 1.0);
    CHECK(ratio < 1.03);
}

TEST_CASE("recompute factors: full recompute costs ~4/3 of model FLOPs, selective only the attention core") {
    const auto& m = models::gpt3_175b;
    const double model = in_flops(model_flops(m, 2048, 1));
    const double full = in_flops(hardware_flops(m, 2048, 1, recompute::full));
    const double sel = in_flops(hardware_flops(m, 2048, 1, recompute::selective));
    // 96 (1 + s/6h + V/16lh) / (72 (1 + s/6h + V/12lh)) with s/h = 1/6, V/lh = 0.0426: 1.3322
    CHECK_THAT(full / model, WithinRel(1.3322, 1e-3));
    // Selective adds one forward of QK^T and attention x V per layer, 4 B s^2 h:
    // (s/18h) / (1 + s/6h + V/12lh) = (1/108) / 1.03133 = 0.898% for GPT-3 (s = 2048, h = 12288).
    CHECK_THAT(sel / model - 1.0, WithinRel(0.00898, 0.01));
    // Longer sequences make the attention core (and selective recompute) weigh more.
    const double sel8k = in_flops(hardware_flops(m, 8192, 1, recompute::selective)) / in_flops(model_flops(m, 8192, 1));
    CHECK(sel8k > sel / model);
}

TEST_CASE("grouped-query attention, gated MLP and MoE change the count as their shapes say") {
    // LLaMA-2 70B per token, forward: 2 x (non-embedding matmul params) + 2 h V (logits) + 4 s h l.
    const auto& m = models::llama2_70b;
    const double h = 8192, kv = 1024, f = 28672, l = 80, V = 32000, s = 4096;
    const double per_token_fwd = l * (2 * h * (h + 2 * kv) + 2 * h * h + 3 * 2 * h * f + 4 * s * h) + 2 * h * V;
    CHECK_THAT(in_flops(forward_flops(m, s, 1)) / s, WithinRel(per_token_fwd, 1e-12));
    // Mixtral: a token passes through 2 of 8 experts; FLOPs follow the 12.9B active parameters,
    // not the 46.7B total (Jiang et al. 2024).
    const double mix = in_flops(model_flops_per_token(models::mixtral_8x7b, 4096));
    CHECK(mix < 6.0 * 14e9);
    CHECK(mix > 6.0 * 12.9e9);
}

TEST_CASE("precision picks the accelerator's peak, an unsupported one is an input error") {
    accelerator a100{};
    a100.name = "a100-test";
    // NVIDIA A100 datasheet: 312 TFLOPS bf16 dense, 156 tf32, 19.5 fp32; no fp8.
    a100.dense_peak[static_cast<std::size_t>(dtype::bf16)] = 312_TFLOPS;
    a100.dense_peak[static_cast<std::size_t>(dtype::tf32)] = 156_TFLOPS;
    CHECK(in_tflops(peak_for(a100, dtype::bf16)) == Approx(312));
    CHECK(in_tflops(peak_for(a100, parse<dtype>("tf32", "dtype"))) == Approx(156));
    CHECK_THROWS_AS(peak_for(a100, dtype::fp8, "--dtype"), input_error);
    CHECK_THROWS_AS(parse<dtype>("bf17", "--dtype"), input_error);
    CHECK(parse<recompute>("selective", "recompute") == recompute::selective);
    CHECK_THROWS_AS(parse<recompute>("some", "recompute"), input_error);
}
