// Memory per GPU: model state (16 / 18 bytes per parameter, ZeRO sharding) and activations
// (Korthikanti et al. 2022, Table 2), against the published figures.
#include "catch_shim.hpp"

#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using namespace commscale::literals;
using Catch::Matchers::WithinRel;

TEST_CASE("ml-engineering: mixed precision needs 18 bytes/param, 2B params -> 36 GB") {
    STATIC_REQUIRE(mixed_precision_adam_fp32_grads.total() == 18.0);
    CHECK_THAT(in_bytes(model_state_bytes(2e9, mixed_precision_adam_fp32_grads)), WithinRel(36e9, 1e-12));
}

TEST_CASE("gpu-fabrics-for-genai: 16 bytes/param, GPT-3 175B needs ~35 80-GB GPUs for state, 1.5T ~300") {
    STATIC_REQUIRE(mixed_precision_adam.total() == 16.0);
    CHECK(devices_for_model_state(175e9, 80_GB) == 35.0);
    CHECK(devices_for_model_state(1.5e12, 80_GB) == 300.0);
    // The preset's own count (174.6B) gives the same answer.
    CHECK(devices_for_model_state(total_parameters(models::gpt3_175b), 80_GB) == 35.0);
    CHECK(devices_for_model_state(175e9 + 1e9, 80_GB) == 36.0);
}

TEST_CASE("ZeRO (Rajbhandari et al. 2020) Figure 1: 7.5B params on 64 GPUs -> 120 / 31.4 / 16.6 / 1.9 GB") {
    const double psi = 7.5e9;
    const double expected[] = {120e9, 31.4e9, 16.6e9, 1.9e9};
    for (int stage = 0; stage <= 3; ++stage) {
        INFO("ZeRO stage " << stage);
        // The paper rounds to one decimal (1.875 -> 1.9): tolerance 1.5%.
        CHECK_THAT(in_bytes(model_state_per_gpu(psi, 1, 1, 64, stage).total()), WithinRel(expected[stage], 0.015));
    }
    // Tensor and pipeline parallelism divide the state before sharding.
    CHECK_THAT(in_bytes(model_state_per_gpu(psi, 8, 4, 1, 0).total()), WithinRel(120e9 / 32, 1e-12));
    // ZeRO-1 shards only the optimizer state.
    const auto z1 = model_state_per_gpu(psi, 1, 1, 64, 1);
    CHECK_THAT(in_bytes(z1.weights), WithinRel(15e9, 1e-12));
    CHECK_THAT(in_bytes(z1.gradients), WithinRel(15e9, 1e-12));
    CHECK_THAT(in_bytes(z1.optimizer), WithinRel(90e9 / 64, 1e-12));
}

TEST_CASE("Korthikanti et al. 2022 Table 2 for GPT-3 175B (s 2048, b 1, h 12288, a 96, t 8)") {
    const auto& m = models::gpt3_175b;
    const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
    // Section 4: for GPT-3, 5as/h = 80.
    CHECK(5 * a * s / h == 80.0);
    auto per_layer = [&](int tp, bool sp, recompute r) {
        return in_bytes(activation_bytes_per_layer(m, s, b, tp, sp, r));
    };
    CHECK_THAT(per_layer(1, false, recompute::none), WithinRel(sbh * (34 + 80), 1e-12));
    CHECK_THAT(per_layer(8, false, recompute::none), WithinRel(sbh * (10 + 24 / t + 80 / t), 1e-12));
    CHECK_THAT(per_layer(8, true, recompute::none), WithinRel(sbh / t * (34 + 80), 1e-12));
    CHECK_THAT(per_layer(8, false, recompute::selective), WithinRel(sbh * (10 + 24 / t), 1e-12));
    CHECK_THAT(per_layer(8, true, recompute::selective), WithinRel(sbh * 34 / t, 1e-12));
    CHECK_THAT(per_layer(8, true, recompute::full), WithinRel(2 * sbh, 1e-12));
    // Section 4.2.2: selective recompute saves 70% of the activation memory for GPT-3 ...
    CHECK_THAT(1 - per_layer(1, false, recompute::selective) / per_layer(1, false, recompute::none), WithinRel(0.70, 0.01));
    // Abstract: sequence parallelism with selective recompute cuts activation memory ~5x
    // against tensor parallelism alone (23 sbh / 4.25 sbh = 5.4x for GPT-3).
    CHECK_THAT(per_layer(8, false, recompute::none) / per_layer(8, true, recompute::selective), WithinRel(5.0, 0.1));
}

TEST_CASE("Korthikanti et al. 2022: MT-NLG 530B (a 128, h 20480) 5as/h = 64, selective saves 65%") {
    const auto& m = models::mt_nlg_530b;
    const double none = in_bytes(activation_bytes_per_layer(m, 2048, 1, 1, false, recompute::none));
    const double sel = in_bytes(activation_bytes_per_layer(m, 2048, 1, 1, false, recompute::selective));
    CHECK_THAT(none, WithinRel(2048.0 * 20480 * (34 + 64), 1e-12));
    CHECK_THAT(1 - sel / none, WithinRel(0.65, 0.01));
    // Megatron 1T (a 160, h 25600): also 5as/h = 64; TP+SP+selective / TP = (34/8) / (10 + 3 + 8) ~ 1/5.
    const auto& t1 = models::megatron_1t;
    const double tp = in_bytes(activation_bytes_per_layer(t1, 2048, 1, 8, false, recompute::none));
    const double best = in_bytes(activation_bytes_per_layer(t1, 2048, 1, 8, true, recompute::selective));
    CHECK_THAT(tp / best, WithinRel(21.0 / 4.25, 1e-12));
}

TEST_CASE("pipeline in-flight micro-batches: 1F1B first stage holds p, GPipe m, interleaved p + (p-1)/v") {
    STATIC_REQUIRE(in_flight_1f1b(8, 64) == 8.0);
    STATIC_REQUIRE(in_flight_1f1b(8, 4) == 4.0);
    STATIC_REQUIRE(in_flight_gpipe(64) == 64.0);
    STATIC_REQUIRE(in_flight_interleaved(8, 64, 1) == 8.0);  // one chunk per device is plain 1F1B
    // Korthikanti et al. 2022 section 4.2.3: interleaving multiplies the first stage's memory by
    // (1 + (p-1)/(p v)); with v = 2, p = 8: 8 x (1 + 7/16) = 11.5 micro-batches.
    STATIC_REQUIRE(in_flight_interleaved(8, 64, 2) == 11.5);
    // With 1F1B the first stage holds p micro-batches of l/p layers: the whole model's activations
    // for one micro-batch, sbhl/t (34 + 5as/h) with SP (Korthikanti et al. 2022, eq. 5), independent of p.
    const auto& m = models::gpt3_175b;
    memory_plan p{.seq = 2048, .micro_batch = 1, .tp = 8, .pp = 8, .dp = 1, .sequence_parallel = true,
                  .in_flight = in_flight_1f1b(8, 64)};
    const auto mb = memory_per_gpu(m, p);
    const double sbh = 2048.0 * 12288;
    const double layers = sbh * 96 / 8 * (34 + 80);
    const double embedding_dropout = sbh / 8;
    CHECK_THAT(in_bytes(mb.activations), WithinRel(layers + embedding_dropout, 1e-12));
    CHECK(fits_in_memory(mb, 80_GB) == (in_bytes(mb.total()) <= 80e9));
}

TEST_CASE("expert parallelism shards the experts' parameters") {
    const auto& m = models::mixtral_8x7b;
    const auto one = model_state_per_gpu(m, 1, 1, 1, 1, 0);
    const auto ep8 = model_state_per_gpu(m, 1, 1, 1, 8, 0);
    CHECK_THAT(in_bytes(one.total()), WithinRel(16 * total_parameters(m), 1e-12));
    const double experts = 32 * 8 * 3.0 * 4096 * 14336;
    CHECK_THAT(in_bytes(ep8.total()), WithinRel(16 * (total_parameters(m) - experts * 7 / 8), 1e-12));
}

TEST_CASE("FP8/MXFP8: Transformer Engine saves the GEMM inputs quantized, 1 byte (Llama 3 70B, s 8192, b 2)") {
    // Llama 3 70B: h 8192, 8 K/V heads of 128 (kv 1024 = h/8), SwiGLU f 28672 = 3.5 h.
    const auto& m = models::llama3_70b;
    const double s = 8192, b = 2, sbh = s * b * 8192;
    // derived here per tensor a layer keeps for backward (bytes, in units of sbh):
    //   16-bit: norm inputs 2 + 2, QKV input 2, Q 2, K V 2 x 2 x 1/8, attention output 2, FC1 input
    //   2, FC1 output (gate + up) 2 x 2 x 3.5, FC2 input 2 x 3.5 = 33.5; Llama trains without
    //   dropout (hidden_dropout 0), so no masks; with dropout the two 1-byte masks make it 35.5
    //   FP8 (transformer_engine/pytorch/module/linear.py `_Linear.forward` keeps the quantized
    //   input): QKV, FC1 inputs 1 each, FC2 input 3.5, + the output projection's FP8 copy of the
    //   attention output 1: 33.5 - 1 - 1 - 3.5 + 1 = 29
    const double bf16 = in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective));
    const double fp8 = in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective, 1.0));
    CHECK_THAT(bf16, WithinRel(33.5 * sbh, 1e-12));
    CHECK_THAT(fp8, WithinRel(29.0 * sbh, 1e-12));
    transformer with_dropout = m;
    with_dropout.dropout = true;
    CHECK_THAT(in_bytes(activation_bytes_per_layer(with_dropout, s, b, 1, false, recompute::selective)),
               WithinRel(35.5 * sbh, 1e-12));
    CHECK_THAT(in_bytes(activation_bytes_per_layer(with_dropout, s, b, 1, false, recompute::selective, 1.0)),
               WithinRel(31.0 * sbh, 1e-12));
    // 2 bytes is the 16-bit model unchanged; full recompute keeps the 16-bit layer input either way
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective, 2.0)) == bf16);
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, s, b, 8, true, recompute::full, 1.0)), WithinRel(2 * sbh, 1e-12));
    // with TP 8 and sequence parallelism every term divides by 8
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, s, b, 8, true, recompute::selective, 1.0)), WithinRel(29.0 * sbh / 8, 1e-12));
}

TEST_CASE("activations of a head width decoupled from h: Qwen3 235B-A22B's Q, QK norm inputs and attention output are 2h wide, MLA's output a d_v and its latents kept") {
    // Qwen3 235B-A22B (HF config.json): h 4096, 64 heads of 128 (q = 8192 = 2h), 4 K/V heads
    // (kv 512 = h/8), 128 experts of 1536, top-8, no shared expert, no dropout.
    const auto& m = models::qwen3_235b_a22b;
    REQUIRE(m.q_dim() == 2 * m.hidden);
    const double s = 4096, b = 1, sbh = s * b * 4096;
    // derived here per tensor a layer keeps for backward (bytes, in units of sbh), bf16:
    //   norm inputs 2 + 2, QKV input 2, FC1 input 2 = 8; Q 2 x 2 = 4; K, V 2 x 2 x 1/8 = 0.5; the
    //   QK norms' inputs (Q and K before the norm) 2 x (2 + 1/8) = 4.25; the attention output
    //   2 x 2 = 4; FC1 output (gate + up) of 8 experts 2 x 2 x 8 x 1536 / 4096 = 12; FC2 input
    //   2 x 8 x 1536 / 4096 = 6: 38.75 (Q, the norm's Q and the output counted h wide: 32.75)
    //   FP8: QKV and FC1 inputs 1 each, FC2 input 3, + the output projection's FP8 copy of the
    //   attention output 2: 38.75 - 1 - 1 - 3 + 2 = 35.75
    REQUIRE(m.qk_layernorm);
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective)), WithinRel(38.75 * sbh, 1e-12));
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective, 1.0)), WithinRel(35.75 * sbh, 1e-12));
    // with TP 4 and sequence parallelism every term divides by 4
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, s, b, 4, true, recompute::selective)), WithinRel(38.75 * sbh / 4, 1e-12));
    // without the QK norm, 4.25 less
    transformer no_norm = m;
    no_norm.qk_layernorm = false;
    CHECK_THAT(in_bytes(activation_bytes_per_layer(no_norm, s, b, 1, false, recompute::selective)), WithinRel(34.5 * sbh, 1e-12));

    // DeepSeek-V3's MLA: the attention output is a d_v = 128 x 128 = 16384 wide (h 7168). The FP8
    // copy of it replaces nothing, while the QKV (q down-projection) and FC1 inputs (h each), the
    // FC2 input (8 routed + 1 shared expert of 2048, or the dense ffn 18432: 18432 either way) and
    // the up-projections' inputs, the normed latents r_q 1536 and r_kv 512, drop from 2 bytes to 1:
    // bf16 - fp8 = (7168 + 7168 + 18432 + 1536 + 512 - 16384) s b = 18432 s b
    const auto& d = models::deepseek_v3;
    const double sb = s * b;
    const double bf16 = in_bytes(activation_bytes_per_layer(d, s, b, 1, false, recompute::selective));
    const double fp8 = in_bytes(activation_bytes_per_layer(d, s, b, 1, false, recompute::selective, 1.0));
    CHECK_THAT(bf16 - fp8, WithinRel(18432.0 * sb, 1e-9));
    // recomputing mla_up_proj drops Q, K (a x 192 each) and V (a x 128), 2 x 128 x 512 s b, and
    // keeps the latents (each norm's input and output, 2 x 2 x (1536 + 512) s b in bf16)
    const double up = in_bytes(activation_bytes_per_layer(d, s, b, 1, false, recompute::selective, 2.0, recompute_mla_up_proj));
    CHECK_THAT(bf16 - up, WithinRel(2.0 * 128 * 512 * sb, 1e-9));
}

TEST_CASE("activation CPU offloading (--cpu-offloading-num-layers): offloaded layers leave GPU memory") {
    const auto& m = models::llama3_70b;  // 80 layers
    memory_plan p;
    p.seq = 8192;
    p.micro_batch = 2;
    p.dp = 64;
    p.zero_stage = 3;
    p.recompute_mode = recompute::selective;
    const auto per_layer = in_bytes(activation_bytes_per_layer(m, 8192, 2, 1, false, recompute::selective));
    const auto outside = in_bytes(activation_bytes_outside_layers(m, 8192, 2, 1, false, true, true));
    const auto all = memory_per_gpu(m, p);
    CHECK_THAT(in_bytes(all.activations), WithinRel(80 * per_layer + outside, 1e-12));
    // Megatron-Bridge's Llama 3 70B GB200 recipe offloads 40 of the 80 layers: 40 stay resident
    p.offloaded_layers = 40;
    const auto off = memory_per_gpu(m, p);
    CHECK_THAT(in_bytes(off.activations), WithinRel(40 * per_layer + outside, 1e-12));
    CHECK(in_bytes(off.state.total()) == in_bytes(all.state.total()));  // model state stays on the GPU
    CHECK(resident_layers(8, 10) == 0.0);  // never below zero
    CHECK(resident_layers(8, 0) == 8.0);
    // the explicit-stage path offloads the same way (20 of a stage's 40 layers)
    const auto stage = stage_memory_per_gpu(m, p, 40, false, false);
    CHECK(in_bytes(stage.activations) == 0.0);
    p.offloaded_layers = 20;
    CHECK_THAT(in_bytes(stage_memory_per_gpu(m, p, 40, false, false).activations), WithinRel(20 * per_layer, 1e-12));
}

TEST_CASE("recompute modules (Megatron-Core --recompute-modules): each drops what it alone saves") {
    // GPT-OSS 120B: h 2880, 64 heads x 64, 8 K/V heads, 128 experts of 2880, top-4, gated (SwiGLU)
    const auto& m = models::gpt_oss_120b;
    const double s = 4096, b = 1, h = 2880, sbh = s * b * h;
    auto bytes_with = [&](unsigned modules) {
        return in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective, 2.0, modules));
    };
    const double none = bytes_with(0);
    // layernorm: the two norms' outputs, the QKV and FC1 inputs, 2 bytes x 2 sbh
    CHECK_THAT(none - bytes_with(recompute_layernorm), WithinRel(4.0 * sbh, 1e-12));
    // moe_act: the routed experts' FC2 input, 2 bytes x s b x top-4 x 2880 (every layer is MoE)
    CHECK_THAT(none - bytes_with(recompute_moe_act), WithinRel(2.0 * s * b * 4.0 * 2880.0, 1e-12));
    // moe: FC1 output (gate and up, 4 bytes per width) and FC2 input (2) of the routed experts
    CHECK_THAT(none - bytes_with(recompute_moe), WithinRel(6.0 * s * b * 4.0 * 2880.0, 1e-12));
    // moe includes moe_act; the two together drop no more than moe alone
    CHECK(bytes_with(recompute_moe | recompute_moe_act) == bytes_with(recompute_moe));
    // the recipe's pair, as Megatron-Bridge runs GPT-OSS on H100/B200/GB200
    CHECK_THAT(none - bytes_with(recompute_layernorm | recompute_moe_act),
               WithinRel(4.0 * sbh + 2.0 * s * b * 4.0 * 2880.0, 1e-12));
    // a dense model: mlp drops FC1's output and FC2's input, 6 s b f for SwiGLU (Llama 3 8B, f 14336)
    const auto& l = models::llama3_8b;
    const double d0 = in_bytes(activation_bytes_per_layer(l, s, b, 1, false, recompute::selective, 2.0, 0));
    const double d1 = in_bytes(activation_bytes_per_layer(l, s, b, 1, false, recompute::selective, 2.0, recompute_mlp));
    CHECK_THAT(d0 - d1, WithinRel(6.0 * s * b * 14336.0, 1e-12));
    // MLA (DeepSeek-V3): mla_up_proj drops Q, K and V: 2 s b a (2 x 192 + 128)
    const auto& d = models::deepseek_v3;
    const double q0 = in_bytes(activation_bytes_per_layer(d, s, b, 1, false, recompute::selective, 2.0, 0));
    const double q1 = in_bytes(activation_bytes_per_layer(d, s, b, 1, false, recompute::selective, 2.0, recompute_mla_up_proj));
    CHECK_THAT(q0 - q1, WithinRel(2.0 * s * b * 128.0 * (2.0 * 192.0 + 128.0), 1e-12));
    // names: Megatron-Core's spellings, a bad entry named with the accepted list
    CHECK(recompute_modules_from_names("layernorm,moe_act") == (recompute_layernorm | recompute_moe_act));
    CHECK(recompute_modules_names(recompute_layernorm | recompute_moe_act) == "layernorm,moe_act");
    CHECK(recompute_modules_from_names("none") == 0u);
    CHECK_THROWS_WITH(recompute_modules_from_names("layernorm,attn", "--recompute-modules"),
                      Catch::Contains("--recompute-modules") && Catch::Contains("'attn'") && Catch::Contains("core_attn"));
}

TEST_CASE("full recompute by method (Megatron-Core --recompute-method, --recompute-num-layers): Korthikanti Table 2 mixed") {
    // GPT-3 175B, s 2048, b 1, t 8 with sequence parallelism: a checkpointed layer keeps its input,
    // 2 sbh (Table 2, full recompute); a layer that is not recomputed keeps 34 sbh / t under
    // FlashAttention (Table 2's selective row: no s x s scores)
    const auto& m = models::gpt3_175b;
    const double sbh = 2048.0 * 12288.0, t = 8;
    memory_plan p;
    p.seq = 2048;
    p.tp = 8;
    p.sequence_parallel = true;
    p.recompute_mode = recompute::full;
    p.kept_mode = recompute::selective;
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, p)), WithinRel(2 * sbh, 1e-12));
    // block: 3 of a chunk's 12 layers recomputed (share 1/4), the other 9 keep everything
    p.full_recompute_share = 0.25;
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, p)), WithinRel(0.25 * 2 * sbh + 0.75 * 34 * sbh / t, 1e-12));
    // uniform with 4 layers per group: one checkpoint (the group's input) per 4 layers
    p.full_recompute_share = 1.0;
    p.full_recompute_group = 4;
    CHECK_THAT(in_bytes(activation_bytes_per_layer(m, p)), WithinRel(2 * sbh / 4, 1e-12));
    // and the whole stage: 96 layers on 8 stages, 8 micro-batches in flight on the first (1F1B)
    p.pp = 8;
    p.in_flight = 8;
    p.full_recompute_group = 1;
    p.full_recompute_share = 0.25;
    const double outside = in_bytes(activation_bytes_outside_layers(m, 2048, 1, 8, true, true, false));
    CHECK_THAT(in_bytes(memory_per_gpu(m, p).activations),
               WithinRel(12 * 8 * (0.25 * 2 * sbh + 0.75 * 34 * sbh / t) + outside, 1e-12));
}
