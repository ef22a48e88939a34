// Hybrid Mamba-Transformer models (Nemotron-H, Nemotron 3): parameter counts against the model
// cards, Megatron-Core's FLOP count worked by hand from training.py's hybrid formulas, the library's
// own SSD count, activation and state memory, and the errors a bad pattern or shape gets.
#include "catch_shim.hpp"
#include "model_fixtures.hpp"

#include <commscale/workload/flops.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

using model_test::error_field;

// Transformers keep their layer: one attention, one MLP, two blocks (hybrid fields all absent).
static_assert(!models::llama3_8b.is_hybrid());
static_assert(models::llama3_8b.attention_fraction() == 1.0 && models::llama3_8b.mamba_fraction() == 0.0);
static_assert(models::llama3_8b.dense_mlp_fraction() == 1.0 && models::llama3_8b.blocks_per_layer() == 2.0);
static_assert(models::deepseek_v3.dense_mlp_fraction() == 1.0 - models::deepseek_v3.moe_fraction());
static_assert(mamba_parameters(models::llama3_8b) == 0.0 && ssd_forward_flops_per_token(models::llama3_8b) == 0.0);

TEST_CASE("the patterns count as the model cards describe the layers") {
    // Nemotron-H 8B: 24 Mamba-2, 24 MLP, 4 attention (ADLR Nemotron-H page); 56B: 54, 54, 10;
    // 47B: five attention layers; Nemotron 3 Nano: 23 Mamba-2, 23 MoE, 6 attention.
    const auto h8 = models::nemotron_h_8b.hybrid_layer_counts();
    CHECK((h8.mamba == 24 && h8.mlp == 24 && h8.attention == 4 && h8.moe == 0));
    const auto h56 = models::nemotron_h_56b.hybrid_layer_counts();
    CHECK((h56.mamba == 54 && h56.mlp == 54 && h56.attention == 10));
    CHECK(models::nemotron_h_47b.hybrid_layer_counts().attention == 5);
    const auto nano = models::nemotron3_nano.hybrid_layer_counts();
    CHECK((nano.mamba == 23 && nano.moe == 23 && nano.attention == 6 && nano.mlp == 0));
    CHECK(models::nemotron3_nano.moe_layers() == 23);
    CHECK(models::nemotron_h_8b.blocks_per_layer() == 1.0);
}

TEST_CASE("Nemotron-H 8B counted by hand from its config.json: 8,100,852,736 parameters") {
    // Per Mamba-2 layer (h 4096, 128 heads x 64 = d_in 8192, state 128, 8 groups, conv 4):
    // in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128) = 76,021,760; conv1d (8192 + 2048) x 4 weights
    // + 10,240 biases = 51,200; dt_bias, A_log, D 3 x 128 = 384; gated RMSNorm 8192; out_proj
    // 8192 x 4096 = 33,554,432: 109,635,968.
    const double mixer = 76'021'760.0 + 51'200.0 + 384.0 + 8'192.0 + 33'554'432.0;
    CHECK(mamba_parameters(models::nemotron_h_8b) == mixer);
    // attention: Q and O 4096 x 4096, K and V 4096 x 1024; MLP 2 x 4096 x 21504 (squared ReLU)
    const double attention = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024, mlp = 2.0 * 4096 * 21504;
    // one RMSNorm per layer and the final one; untied input and output tables of 131072 x 4096
    const double total = 24 * mixer + 4 * attention + 24 * mlp + 53.0 * 4096 + 2.0 * 131072 * 4096;
    CHECK(total == 8'100'852'736.0);
    // (the library sums means over the pattern's layers: equal to the last bits)
    CHECK(total_parameters(models::nemotron_h_8b) == Approx(total).epsilon(1e-15));
    CHECK(active_parameters(models::nemotron_h_8b) == Approx(total).epsilon(1e-15));
    // the model card says "8B" (one significant figure): 8.10B rounds to it
    CHECK(total_parameters(models::nemotron_h_8b) > 7.5e9);
    CHECK(total_parameters(models::nemotron_h_8b) < 8.5e9);
}

TEST_CASE("Nemotron-H 47B and 56B within 1% of their model cards") {
    // "This model has 56B model parameters." / "47B" (HF model cards of the -Base-8K checkpoints)
    CHECK_THAT(total_parameters(models::nemotron_h_56b), WithinRel(56e9, 0.01));  // 56.32B
    CHECK_THAT(total_parameters(models::nemotron_h_47b), WithinRel(47e9, 0.01));  // 46.79B
}

TEST_CASE("Nemotron 3 Nano: 31.6B total, 3.2B active (3.6B with embeddings), within 1%") {
    // NVIDIA's Nemotron 3 announcement: "a 3.2B active (3.6B with embeddings), 31.6B total parameter
    // model". "3.6B" counts both 131072 x 2688 tables, "3.2B" leaves out the input one (a lookup,
    // as DeepSeek's 37B does); the model card's rounder "30B total / 3.5B active" is within 5%.
    // Counted: 31.58B, 3.58B, 3.23B.
    const auto& m = models::nemotron3_nano;
    CHECK_THAT(total_parameters(m), WithinRel(31.6e9, 0.01));
    CHECK_THAT(active_parameters(m), WithinRel(3.6e9, 0.01));
    CHECK_THAT(active_parameters(m) - 131072.0 * 2688, WithinRel(3.2e9, 0.01));
    // the routed experts: 23 layers x 128 x 2 x 2688 x 1856
    CHECK(routed_expert_parameters(m) == Approx(23.0 * 128 * 2 * 2688 * 1856).epsilon(1e-15));
}

TEST_CASE("Nemotron 3 Super (LatentMoE): the checkpoint's element count, to the parameter") {
    // Megatron-Bridge examples/model_verification_cards/nemotron-3-super-120b-a12b/card.yaml (at
    // 067f987df0): the BF16 export "exactly reproduces all 42,683 source tensors and
    // 123,611,033,088 elements, including the 41 FP32 router correction-bias tensors" of
    // nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16: the main model and its one MTP module. The
    // library does not count the routers' e_score_correction_bias (one per expert and MoE layer,
    // 40 + 1 MTP layers x 512 = 20,992 elements), so the check is against the rest, exactly.
    const auto& m = models::nemotron3_super;
    const auto n = m.hybrid_layer_counts();
    CHECK(n.mamba == 40);
    CHECK(n.moe == 40);
    CHECK(n.attention == 8);
    CHECK(total_parameters(m) + mtp_parameters(m) == 123'611'033'088.0 - 41.0 * 512);
    // the parts, by hand: one MoE layer = 512 experts x (1024 x 2688 + 2688 x 1024) (squared ReLU,
    // in the latent width) + the shared MLP 2 x 4096 x 5376 + router 4096 x 512 + latent
    // projections 2 x 4096 x 1024
    const double moe_layer = 512.0 * 2 * 1024 * 2688 + 2.0 * 4096 * 5376 + 4096.0 * 512 + 2.0 * 4096 * 1024;
    CHECK(routed_expert_parameters(m) == 40.0 * 512 * 2 * 1024 * 2688);
    CHECK(latent_projection_parameters(m) == 2.0 * 4096 * 1024);
    // MTP: eh_proj 2h x h, enorm, hnorm, final norm 3h, and one attention + one MoE block with a norm each
    const double attention = 2.0 * 4096 * 4096 + 2.0 * 4096 * 256;
    CHECK(mtp_parameters(m) == 2.0 * 4096 * 4096 + 3.0 * 4096 + attention + 4096 + moe_layer + 4096);
    // without the latent width the experts would be 4x as large (4096 / 1024): the model card's
    // "120B total" only holds with it
    transformer plain = m;
    plain.moe_latent = 0;
    CHECK(total_parameters(plain) > 3.0 * total_parameters(m));
}

TEST_CASE("Nemotron 3 Ultra: 550B total, 55B active without the input table, as its name says") {
    // NVIDIA-Nemotron-3-Ultra-550B-A55B: 549.31B counted, and 55.0B active leaving out the input
    // embedding table (the convention of Nano's "3.2B active", a lookup), within 0.5%; the
    // vocabulary is the preset's stated assumption (131072, the Nemotron 3 family's)
    const auto& m = models::nemotron3_ultra;
    CHECK_THAT(total_parameters(m), WithinRel(550e9, 0.005));
    CHECK_THAT(active_parameters(m) - 131072.0 * 8192, WithinRel(55e9, 0.005));
    const auto n = m.hybrid_layer_counts();
    CHECK(n.mamba == 48);
    CHECK(n.moe == 48);
    CHECK(n.attention == 12);
}

TEST_CASE("LatentMoE FLOPs: the routed experts in the latent width plus the two projections") {
    const auto& m = models::nemotron3_super;
    const double s = 8192, h = 4096, l = 1024, fe = 2688, k = 22;
    // the library's forward count on an MoE layer, per token: 2 x (2 l k f_e + 2 h S f_e + 2 h l),
    // squared ReLU (two matrices), S = 2 expert widths of shared MLP; the mean over the layers
    const double moe_macs = 2.0 * l * k * fe + 2.0 * h * 2 * fe + 2.0 * h * l;
    CHECK(layer_forward_flops(m, s).mlp.value() == Approx(2.0 * s * moe_macs * 40.0 / 88.0).epsilon(1e-12));
    // Megatron's hybrid count (training.py moe_layer_flops with moe_latent_size, d98e8a64dd):
    // 4 l f_e k + 4 h l + 4 h f_shared per MoE layer and token; each of the 2 MTP depths
    // (--mtp-num-layers 2 over the one repeated module) adds an attention and an MoE block and
    // another 2 h V of logits; all x 3
    const double p = 128.0 * 32 / h;
    const double attn = 4 * h * p * (h + h * 2.0 / 32.0) + 2 * s * h * p;
    const double d = 2 * h, mamba = 2 * h * (2 * d + 2 * 8 * 128.0 + 128) + 7 * d * 128 + 2 * d * h;
    const double moe = 4 * l * fe * k + 4 * h * l + 4 * h * 5376.0;
    const double expected = 3 * (8 * attn + 40 * mamba + 40 * moe + 2 * (attn + moe) + 3 * 2 * h * 131072);
    CHECK(megatron_model_flops_per_token(m, s).value() == Approx(expected).epsilon(1e-12));
    // the library's MTP FLOPs run each depth: twice the one module's
    transformer once = m;
    once.mtp_depths = 0;
    CHECK(mtp_forward_flops(m, s).value() == Approx(2.0 * mtp_forward_flops(once, s).value()).epsilon(1e-12));
    CHECK(mtp_parameters(m) == mtp_parameters(once));  // the depths share the module's weights
    // depths below the modules, or without a module, name the field
    once.mtp_depths = 3;
    once.mtp_layers = 0;
    CHECK(error_field(once) == "model.mtp_depths");
    // a transformer with a latent width: training.py's transformer branch, 6 h g (k f_e l / h + 2 l) per MoE layer
    transformer q = models::qwen3_30b_a3b;
    const double plain = megatron_model_flops_per_token(q, 4096).value();
    q.moe_latent = 512;
    const double latent = megatron_model_flops_per_token(q, 4096).value();
    const double hq = q.hidden, g = 3.0, layers = q.layers;
    CHECK(plain - latent == Approx(6.0 * hq * g * layers * (8.0 * 768 - (8.0 * 768 * 512 / hq + 2.0 * 512 / g))).epsilon(1e-9));
}

TEST_CASE("Megatron's count of a hybrid model: training.py hybrid_flops worked by hand") {
    // Megatron-LM megatron/training/training.py num_floating_point_operations, hybrid branch
    // (d98e8a64dd), per token of a BSHD batch at s = 8192 (seqlen_squared_sum / tokens = s):
    //   attn  4 h p (h + h g / n) + 2 s h p, p = kv_channels x n / h
    //   mlp   4 (ffn / h) h^2 (x 3/2 SwiGLU)
    //   mamba 2 h (2 d + 2 G N + H) + 7 d N + 2 d h, d = 2 h
    //   moe   4 h f_e k + 4 h f_shared
    //   logits 2 h V_padded; all x 3.
    const double s = 8192;
    {  // Nemotron-H 8B: h 4096, 32 heads of 128 (p = 1), 8 groups, ffn 21504, H 128, N 128, G 8
        const double h = 4096;
        const double attn = 4 * h * 1.0 * (h + h * 8.0 / 32.0) + 2 * s * h * 1.0;
        const double mlp = 4 * (21504.0 / h) * h * h;
        const double d = 2 * h, mamba = 2 * h * (2 * d + 2 * 8 * 128.0 + 128) + 7 * d * 128 + 2 * d * h;
        const double logits = 2 * h * 131072;  // 131072 is a multiple of 128
        const double expected = 3 * (4 * attn + 24 * mlp + 24 * mamba + logits);
        CHECK(expected == 46'707'769'344.0);
        CHECK(megatron_model_flops_per_token(models::nemotron_h_8b, s).value() == Approx(expected).epsilon(1e-12));
        // the count has no full-square variant for hybrid models (causal since it appeared)
        CHECK(megatron_model_flops_per_token(models::nemotron_h_8b, s, {.attention = megatron_attention_count::full}).value() ==
              Approx(expected).epsilon(1e-12));
    }
    {  // Nemotron 3 Nano: h 2688, 32 heads x 128 (p = 4096 / 2688), 2 groups, top-6 of width 1856,
       // shared 3712, 64 Mamba heads (d = 2h = 5376 in Megatron's count, not 64 x 64)
        const double h = 2688, p = 128.0 * 32 / h;
        const double attn = 4 * h * p * (h + h * 2.0 / 32.0) + 2 * s * h * p;
        const double d = 2 * h, mamba = 2 * h * (2 * d + 2 * 8 * 128.0 + 64) + 7 * d * 128 + 2 * d * h;
        const double moe = 4 * h * 1856.0 * 6 + 4 * h * 3712.0;
        const double expected = 3 * (6 * attn + 23 * mamba + 23 * moe + 2 * h * 131072);
        CHECK(megatron_model_flops_per_token(models::nemotron3_nano, s).value() == Approx(expected).epsilon(1e-12));
    }
}

TEST_CASE("the library's own count: projections at 2 FLOPs per parameter, the SSD scan by its steps") {
    const auto& m = models::nemotron_h_8b;
    // SSD per token (Q 128, N 128, G 8, d_in 8192, K 4): conv 2 x 4 x 10240, C B^T 2 x 128 x 8 x 128,
    // diagonal blocks 2 x 128 x 8192, chunk states and state output 4 x 128 x 8192, state passing
    // 2 x 128 x 8192 / 128
    const double ssd = 2.0 * 4 * 10240 + 2.0 * 128 * 8 * 128 + 2.0 * 128 * 8192 + 4.0 * 128 * 8192 + 2.0 * 128 * 8192 / 128;
    CHECK(ssd == 6'651'904.0);
    CHECK(ssd_forward_flops_per_token(m) == ssd);
    // forward per token: 2 x every matmul parameter (Mamba projections, attention, MLP, logits),
    // scores and values over the whole square on the 4 attention layers, the scan on the 24 M layers
    const double s = 4096;
    const double projections = 24 * (4096.0 * 18560 + 8192.0 * 4096) + 4 * (2.0 * 4096 * 4096 + 2.0 * 4096 * 1024) +
                               24 * (2.0 * 4096 * 21504) + 131072.0 * 4096;
    const double expected = 2 * projections + 4 * (2 * 2.0 * s * 4096) + 24 * ssd;
    CHECK(forward_flops(m, s).value() / s == Approx(expected).epsilon(1e-12));
    CHECK(model_flops_per_token(m, s).value() == Approx(3 * expected).epsilon(1e-12));
    // full recompute repeats every layer's forward (the scan included), selective only attention
    const auto lf = layer_forward_flops(m, s);
    CHECK(hardware_flops(m, s, 1, recompute::selective).value() ==
          Approx(model_flops(m, s).value() + 52 * lf.attention_core().value()).epsilon(1e-12));
    CHECK(lf.scan.value() == Approx(24.0 / 52 * s * ssd).epsilon(1e-12));
}

TEST_CASE("Qwen3-Next-80B-A3B: Gated DeltaNet layers counted by hand from Hugging Face's modules") {
    const auto& m = models::qwen3_next_80b_a3b;
    const auto n = m.hybrid_layer_counts();
    // the model card's 48 layers: 36 Gated DeltaNet and 12 gated-attention mixers, each before an
    // MoE block of 512 experts (10 routed + 1 shared)
    CHECK(n.gdn == 36);
    CHECK(n.attention == 12);
    CHECK(n.moe == 48);
    CHECK(n.mamba + n.mlp == 0);
    // Qwen3NextGatedDeltaNet (transformers models/qwen3_next/modeling_qwen3_next.py): in_proj_qkvz
    // h -> 2 key_dim + 2 value_dim, in_proj_ba h -> 2 Hv, conv1d over 2 key_dim + value_dim channels
    // of width 4 without bias, dt_bias and A_log (Hv each), the gated norm (head_v_dim), out_proj
    // value_dim -> h; key_dim = 16 x 128, value_dim = 32 x 128, h = 2048
    const double gdn = 2048.0 * (2 * 2048 + 2 * 4096) + 2048.0 * 64 + 4.0 * (2 * 2048 + 4096) + 2 * 32 + 128 + 4096.0 * 2048;
    CHECK(gdn == 33'718'464.0);
    CHECK(gdn_parameters(m) == gdn);
    // Qwen3NextAttention: q_proj h -> 2 x 16 x 256 (the query and the output gate), k_proj and
    // v_proj h -> 2 x 256, o_proj 4096 -> h, q_norm and k_norm 256 each
    const double attention = 2048.0 * 8192 + 2 * 2048.0 * 512 + 4096.0 * 2048 + 2 * 256;
    CHECK(attention_parameters(m) == attention);
    // Qwen3NextSparseMoeBlock: 512 experts and one shared expert of 3 x 2048 x 512, the router
    // 2048 x 512 and the shared expert's gate 2048 x 1 (not counted)
    const double expert = 3 * 2048.0 * 512, router = 2048.0 * 512;
    const double embeddings = 2 * 151936.0 * 2048;                      // untied
    const double norms = 2 * 48 * 2048.0 + 2048;                         // two per layer, the final one
    const double total = embeddings + 36 * gdn + 12 * attention + 48 * (513 * expert + router) + norms;
    CHECK(total_parameters(m) == Approx(total).epsilon(1e-12));
    // the card's 80B (two digits): 79.67B
    CHECK_THAT(total, WithinRel(80e9, 0.01));
    // active without the embedding tables (and the final norm, which embedding_parameters holds):
    // 10 routed and the shared expert, 3.25B; the card's 3B is one digit
    const double active = active_parameters(m) - embedding_parameters(m);
    CHECK(active == Approx(36 * gdn + 12 * attention + 48 * (11 * expert + router) + norms - 2048).epsilon(1e-12));
    CHECK(active > 2.95e9);
    CHECK(active < 3.5e9);
    // inference state per sequence: each GDN layer's 32 heads of 128 x 128 and the last 4 inputs
    // of its 8192 convolution channels, in bf16
    CHECK(ssm_state_bytes(m).value() == 36.0 * 32 * 128 * 128 * 2);
    CHECK(conv_state_bytes(m).value() == 36.0 * 8192 * 4 * 2);
}

TEST_CASE("Gated DeltaNet FLOPs: Megatron's gdn_layer_flops by hand, the library's by the chunk kernel's steps") {
    const auto& m = models::qwen3_next_80b_a3b;
    const double s = 4096, h = 2048, qk = 2048, v = 4096, hv = 32, dk = 128, dv = 128, C = 64;
    {  // Megatron-LM training.py (d98e8a64dd) hybrid_flops, per token: attn_layer_flops (kv_channels
       // 256, 16 heads: p = 2, 2 query groups), gdn_layer_flops 2 (h (2 qk + 2 v + 2 Hv) + 4 (2 qk + v)
       // + 4 Hv dv^2 + h v), moe_layer_flops 4 h (10 x 512) x 3/2 + 4 h 512 x 3/2, logits 2 h V
       // (151936 is a multiple of 128); all x 3
        const double p = 256.0 * 16 / h;
        const double attn = 4 * h * p * (h + h * 2.0 / 16.0) + 2 * s * h * p;
        const double gdn = 2 * (h * (2 * qk + 2 * v + 2 * hv) + 4 * (2 * qk + v) + 4 * hv * dv * dv + h * v);
        const double moe = 4 * h * 512.0 * 10 * 1.5 + 4 * h * 512.0 * 1.5;
        const double expected = 3 * (12 * attn + 36 * gdn + 48 * moe + 2 * h * 151936);
        CHECK(megatron_model_flops_per_token(m, s).value() == Approx(expected).epsilon(1e-12));
    }
    {  // the chunked delta rule per value head and token (C 64): K K^T 2 C dk, the triangular
       // solve 2 C^2 / 3, W and U 2 C (dk + dv), the states 4 dk dv, the output 2 dk dv +
       // 2 C (dk + dv); the conv1d 2 x 4 x 8192
        const double per_head = 2 * C * dk + 2 * C * C / 3 + 2 * C * (dk + dv) + 6 * dk * dv + 2 * C * (dk + dv);
        const double rule = 2 * 4 * 8192.0 + hv * per_head;
        CHECK(gdn_forward_flops_per_token(m) == Approx(rule).epsilon(1e-12));
        CHECK(rule / 1e6 == Approx(5.92).margin(0.005));
        // Megatron's delta-rule term, 8 Hv dv^2 = 4.19 MFLOP: the kernel's intra-chunk products come on top
        CHECK(rule > 8 * hv * dv * dv);
        // the layer's forward: the scan on the 36 G blocks of 96
        CHECK(layer_forward_flops(m, s).scan.value() == Approx(36.0 / 96 * s * rule).epsilon(1e-12));
    }
}

TEST_CASE("activations of a Mamba-2 layer are what Megatron's fused training path saves") {
    // an all-Mamba pattern isolates the mixer: per token, zxbcdt 2 (2 d_in + 2 G N + H), out_x
    // 2 d_in, the gated norm's input 2 d_in, out_proj's input 2 d_in, all / t; the block's norm
    // input 2h and output 2h replicated (/t with SP); no dropout mask
    hybrid_shape mamba_only = models::nemotron_h_8b_hybrid;
    mamba_only.pattern = "MMMM";
    transformer m = models::nemotron_h_8b;
    m.layers = 4;
    m.hybrid = &mamba_only;
    REQUIRE(error_field(m) == "no error");
    const double s = 8192, b = 2, t = 4, h = 4096, d_in = 8192;
    const double split = 2 * (2 * d_in + 2 * 8 * 128 + 128) + 2 * d_in + 2 * d_in + 2 * d_in;
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 4, false, recompute::none)) == Approx(s * b * (4 * h + split / t)));
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 4, true, recompute::none)) == Approx(s * b * (4 * h + split) / t));
    // FP8: out_proj's input and the block norm's output kept at one byte
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 4, false, recompute::none, 1.0)) ==
          Approx(s * b * (3 * h + (split - d_in) / t)));
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 4, false, recompute::full)) == Approx(2 * s * b * h));
    // the SSD backward's fp32 chunk states and their gradients, one layer at a time:
    // 2 x 4 B x b x (s / 128) chunks x d_in / t x N
    CHECK(in_bytes(ssd_workspace_bytes(m, s, b, 4)) == Approx(8.0 * b * (s / 128) * d_in / t * 128));
    CHECK(in_bytes(ssd_workspace_bytes(models::llama3_8b, s, b, 4)) == 0.0);
}

TEST_CASE("activations of a Gated DeltaNet layer are what its chunk kernel saves") {
    // an all-GDN pattern isolates the mixer (Qwen3-Next's: qk 2048, v 4096, 32 value heads): per
    // token, in_proj's output 2 (2 qk + 2 v + 2 Hv), the conv1d's output 2 (2 qk + v), the decay's
    // cumsum in fp32 4 Hv, each 64-token chunk's inverse 2 Hv C, the rule's output 2 v, the gated
    // norm's input 2 v, out_proj's input 2 v, all / t; the block's norm input and output 2h each
    hybrid_shape gdn_only = models::qwen3_next_80b_a3b_hybrid;
    gdn_only.pattern = "GGGG";
    transformer m = models::qwen3_next_80b_a3b;
    m.layers = 4;
    m.experts = 1;
    m.experts_per_token = 1;
    m.shared_experts = 0;
    m.expert_ffn = 0;
    m.hybrid = &gdn_only;
    REQUIRE(error_field(m) == "no error");
    const double s = 4096, b = 1, t = 2, h = 2048, qk = 2048, v = 4096, hv = 32;
    const double split = 2 * (2 * qk + 2 * v + 2 * hv) + 2 * (2 * qk + v) + 4 * hv + 2 * hv * 64 + 2 * v + 2 * v + 2 * v;
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 2, false, recompute::none)) == Approx(s * b * (4 * h + split / t)));
    // the backward's recomputed chunk states and their gradients, fp32, one layer at a time:
    // 2 x 4 B x b x (s / 64) chunks x Hv / t x dk x dv
    CHECK(in_bytes(ssd_workspace_bytes(m, s, b, 2)) == Approx(8.0 * b * (s / 64) * hv / t * 128 * 128));
}

TEST_CASE("an attention layer of a hybrid model stores Q, K, V and its output at their own widths") {
    // Nano's attention: 32 heads x 128 = 4096 wide on a hidden of 2688, 2 KV heads (256 wide)
    hybrid_shape attention_only = models::nemotron3_nano_hybrid;
    attention_only.pattern = "**";
    transformer m = models::nemotron3_nano;
    m.layers = 2;
    m.hybrid = &attention_only;
    m.experts = 1;
    m.experts_per_token = 1;
    m.shared_experts = 0;
    REQUIRE(error_field(m) == "no error");
    const double s = 4096, b = 1, h = 2688;
    // flash (selective: no score tensor): norm 2h + GEMM input 2h, then Q 2 x 4096, K V 4 x 256,
    // output 2 x 4096
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 1, false, recompute::selective)) ==
          Approx(s * b * (4 * h + 2.0 * 4096 + 4.0 * 256 + 2.0 * 4096)));
}

TEST_CASE("SSM and conv state: what inference keeps per sequence") {
    // Megatron-Core MambaMixer.mamba_state_shapes_per_request: (nheads, headdim, d_state) and
    // (conv_dim, d_conv) per layer and sequence; 16-bit by default
    CHECK(in_bytes(ssm_state_bytes(models::nemotron_h_8b)) == 24.0 * 128 * 64 * 128 * 2);  // 48 MiB
    CHECK(in_bytes(conv_state_bytes(models::nemotron_h_8b)) == 24.0 * 10240 * 4 * 2);
    CHECK(in_bytes(ssm_state_bytes(models::nemotron3_nano, 8, 4.0)) == 23.0 * 8 * 64 * 64 * 128 * 4);  // fp32 cache
    CHECK(in_bytes(ssm_state_bytes(models::llama3_8b)) == 0.0);
}

TEST_CASE("bad hybrid shapes are input errors naming the field, the value and what is accepted") {
    transformer m = models::nemotron_h_8b;
    CHECK(error_field(m) == "no error");
    hybrid_shape y = models::nemotron_h_8b_hybrid;
    m.hybrid = &y;
    y.pattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-X-";
    try {
        validate(m, "model");
        FAIL("accepted a pattern with X");
    } catch (const input_error& e) {
        CHECK(e.field() == "model.hybrid.pattern");
        CHECK_THAT(e.what(), Catch::Matchers::Contains("'X' at position 50"));
        CHECK_THAT(e.what(), Catch::Matchers::Contains("M (Mamba-2), G (Gated DeltaNet), * (attention), - (MLP), E (MoE)"));
    }
    y.pattern = "M-M-";  // 4 symbols for 52 layers
    try {
        validate(m, "model");
        FAIL("accepted a pattern of the wrong length");
    } catch (const input_error& e) {
        CHECK(e.field() == "model.hybrid.pattern");
        CHECK_THAT(e.what(), Catch::Matchers::Contains("4 symbols"));
        CHECK_THAT(e.what(), Catch::Matchers::Contains("(52)"));
    }
    y = models::nemotron_h_8b_hybrid;
    y.mamba_groups = 3;  // 128 heads are not a multiple of 3 groups
    CHECK(error_field(m) == "model.hybrid.mamba_heads");
    y = models::nemotron_h_8b_hybrid;
    y.ssm_state = 0;
    CHECK(error_field(m) == "model.hybrid.ssm_state");
    m = models::nemotron_h_8b;
    m.experts = 8;  // routed experts without an E layer
    CHECK(error_field(m) == "model.hybrid.pattern");
    m = models::nemotron3_nano;
    m.experts = 1;  // E layers without experts
    m.experts_per_token = 1;
    CHECK(error_field(m) == "model.experts");
    m = models::nemotron_h_8b;
    m.sliding_layers = 4;
    m.sliding_window = 1024;
    CHECK(error_field(m) == "model.sliding_layers");
    // a pattern with no Mamba-2 layer needs no mixer sizes (0 accepted), but none negative
    hybrid_shape attention_mlp{.pattern = "*-*-"};
    transformer small = models::llama3_8b;
    small.layers = 4;
    small.hybrid = &attention_mlp;
    CHECK(error_field(small) == "no error");
    attention_mlp.conv_kernel = -1;
    CHECK(error_field(small) == "model.hybrid.conv_kernel");
}
