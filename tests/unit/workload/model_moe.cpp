// Modern mixture-of-experts models: their Hugging Face config.json read by each family's own
// field names (tests/data/hf-configs, shapes as published on the Hub), parameter counts against
// the published total and active figures, and training FLOPs per token against a published
// figure. Every expected value is a publisher's number (model card, technical report), with what
// it includes stated next to it; none is the library's own output.
#include "catch_shim.hpp"
#include "model_fixtures.hpp"

#include <cmath>
#include <filesystem>

#include <commscale/io/model_json.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using nlohmann::json;

namespace {
transformer fixture(const char* name) {
    const auto file = std::filesystem::path(COMMSCALE_TEST_DATA_DIR) / "hf-configs" / (std::string(name) + ".json");
    return io::load_model_file(file.string());
}
/// |computed / published - 1| <= tolerance, with both numbers in the failure message.
void check_within(double computed, double published, double tolerance, const char* what) {
    INFO(what << ": computed " << computed << ", published " << published << ", tolerance " << tolerance);
    CHECK(std::fabs(computed / published - 1.0) <= tolerance);
}
/// A figure published to a unit of `unit` (e.g. 3.3B to 0.1B) stands for the interval of width
/// `unit` around it: the computed count must lie within `tolerance` of that interval, relative to
/// the figure (a count inside the interval passes at any tolerance).
void check_within_rounded(double computed, double published, double unit, double tolerance, const char* what) {
    const double lo = published - 0.5 * unit, hi = published + 0.5 * unit;
    const double outside = computed < lo ? lo - computed : (computed > hi ? computed - hi : 0.0);
    INFO(what << ": computed " << computed << ", published " << published << " (to " << unit << "), tolerance "
              << tolerance);
    CHECK(outside / published <= tolerance);
}
/// Parameters of Llama 4's vision encoder and projector, which the text model leaves out, from
/// the vision_config of meta-llama/Llama-4-Scout-17B-16E and -Maverick-17B-128E (the same in
/// both): 34 ViT layers of width 1408 with biases (Q, K, V, O 1408 x 1408 + 1408 each; MLP
/// 1408 x 5632 + 5632 and 5632 x 1408 + 1408; two LayerNorms of 2 x 1408), the 14 x 14 x 3
/// patch embedding (no bias), a class embedding, positional embeddings for (336/14)^2 + 1 = 577
/// positions, the pre/post LayerNorms, the pixel-shuffle adapter MLP (1408 x 4 -> 4096 -> 4096,
/// no biases) and the projector 4096 -> 5120 (multi_modal_projector_bias false): 871,932,416.
double llama4_vision_parameters() {
    const double w = 1408, f = 5632, layers = 34;
    const double layer = 4.0 * (w * w + w) + (w * f + f) + (f * w + w) + 2.0 * 2.0 * w;
    const double stem = 14.0 * 14 * 3 * w + w + 577.0 * w + 2.0 * 2.0 * w;
    const double adapter = 4.0 * w * 4096 + 4096.0 * 4096, projector = 4096.0 * 5120;
    return layers * layer + stem + adapter + projector;
}
/// Active parameters without the input embedding table: a lookup, no matmul. DeepSeek's and
/// OpenAI's active counts leave it out (the output head, a matmul, stays in).
double active_without_input_embedding(const transformer& m) {
    return active_parameters(m) - static_cast<double>(m.vocab) * m.hidden;
}
}  // namespace

TEST_CASE("DeepSeek-V3 config.json: MLA, routed and shared experts, leading dense layers, MTP") {
    const auto m = fixture("deepseek-v3");
    CHECK(m.layers == 61);
    CHECK(m.experts == 256);
    CHECK(m.experts_per_token == 8);
    CHECK(m.expert_ffn == 2048);
    CHECK(m.ffn == 18432);
    CHECK(m.shared_experts == 1);
    CHECK(m.dense_layers == 3);  // first_k_dense_replace
    CHECK(m.moe_layers() == 58);
    CHECK(m.mtp_layers == 1);
    CHECK(m.is_mla());
    CHECK(m.q_lora_rank == 1536);
    CHECK(m.kv_lora_rank == 512);
    CHECK(m.qk_head_dim() == 192);
    CHECK(m.value_head_dim() == 128);
    CHECK(m.gated_mlp);
    CHECK_FALSE(m.tied_embeddings);
    // DeepSeek-V3 Technical Report (abstract, section 4.2): 671B total parameters, 37B activated
    // per token, main model without the MTP module.
    check_within(total_parameters(m), 671e9, 0.01, "DeepSeek-V3 total");
    // 37B is given to the billion: the count without the input embedding table (36.6B) rounds
    // to it; with the table (37.55B) it would round to 38B.
    const double active = active_without_input_embedding(m);
    INFO("active without the input embedding " << active);
    CHECK(std::fabs(active - 37e9) <= 0.5e9);
    CHECK(active_parameters(m) > 37.5e9);
    // HF deepseek-ai/DeepSeek-V3 README: 685B on the Hub = 671B main model + the MTP module,
    // whose checkpoint layer stores its own copy of the embedding and the output head.
    const double on_hub = total_parameters(m) + mtp_parameters(m) + 2.0 * static_cast<double>(m.vocab) * m.hidden;
    check_within(on_hub, 685e9, 0.01, "DeepSeek-V3 on the Hub");
}

TEST_CASE("DeepSeek-V2 config.json: MLA and DeepSeekMoE give the V2 report's 236B and 21B") {
    // deepseek-ai/DeepSeek-V2 config.json (shape keys); DeepSeek-V2 report, abstract: 236B total,
    // 21B activated per token (to the billion, so within 0.5B).
    const auto m = io::model_from_json(json::parse(R"({"model_type": "deepseek_v2", "hidden_size": 5120,
        "num_hidden_layers": 60, "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 12288,
        "moe_intermediate_size": 1536, "n_routed_experts": 160, "n_shared_experts": 2, "num_experts_per_tok": 6,
        "first_k_dense_replace": 1, "moe_layer_freq": 1, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
        "max_position_embeddings": 163840, "tie_word_embeddings": false, "name": "deepseek-v2"})"));
    CHECK(m.dense_layers == 1);
    CHECK(m.shared_experts == 2);
    check_within(total_parameters(m), 236e9, 0.01, "DeepSeek-V2 total");
    CHECK(std::fabs(active_without_input_embedding(m) - 21e9) <= 0.5e9);
}

TEST_CASE("Kimi K2 config.json: the DeepSeek-V3 architecture with 384 experts and one dense layer") {
    const auto m = fixture("kimi-k2");
    CHECK(m.experts == 384);
    CHECK(m.heads == 64);
    CHECK(m.dense_layers == 1);
    CHECK(m.mtp_layers == 0);
    CHECK(m.is_mla());
    // Kimi Team 2025, Kimi K2: Open Agentic Intelligence (and the HF model card, which rounds to
    // 1T / 32B): 1.04T total, 32.6B activated. The active count matches with both embedding
    // tables counted (32.86B, 0.8%).
    check_within(active_parameters(m), 32.6e9, 0.01, "Kimi K2 active");
    // The released checkpoint: Hugging Face's safetensors count of moonshotai/Kimi-K2-Instruct
    // (and -Base) is 1026.5B. Its linear weights are block-fp8 with one fp32 scale per 128 x 128
    // block (weight_scale_inv), which HF counts as parameters and the model does not: per layer
    // the MLA projections q_a 1536 x 7168, q_b 12288 x 1536, kv_a 576 x 7168, kv_b 16384 x 512,
    // o 7168 x 8192 (672 + 1152 + 280 + 512 + 3584 scales), per expert gate and up 2048 x 7168
    // and down 7168 x 2048 (3 x 896), the dense layer's MLP 18432 wide (3 x 8064). The shapes
    // give 1026.41B + 0.0625B of scales = 1026.47B, which HF shows as 1026.5B (to 0.1B).
    auto blocks = [](double rows, double cols) { return std::ceil(rows / 128) * std::ceil(cols / 128); };
    const double scales = 61 * (blocks(1536, 7168) + blocks(12288, 1536) + blocks(576, 7168) + blocks(16384, 512) +
                                blocks(7168, 8192)) +
                          60.0 * 385 * (2 * blocks(2048, 7168) + blocks(7168, 2048)) +
                          (2 * blocks(18432, 7168) + blocks(7168, 18432));
    check_within_rounded(total_parameters(m) + scales, 1026.5e9, 0.1e9, 0.0, "Kimi K2 on the Hub, fp8 scales included");
    check_within(total_parameters(m), 1026.5e9, 0.01, "Kimi K2 total against the Hub's count");
    // The report's 1.04T is 1.3% over the checkpoint: it is the count with all 61 layers as MoE
    // layers (the dense layer's 396M replaced by 385 experts), not the released layout
    // (first_k_dense_replace 1); the model card's 1T is that count rounded.
    auto all_moe = m;
    all_moe.dense_layers = 0;
    check_within(total_parameters(all_moe), 1.04e12, 0.005, "Kimi K2 total, every layer MoE");
    check_within_rounded(total_parameters(m), 1.0e12, 0.1e12, 0.0, "Kimi K2 total, model card's 1T");
}

TEST_CASE("Qwen3-MoE config.json: num_experts, moe_intermediate_size, head_dim, decoder_sparse_step") {
    const auto a = fixture("qwen3-30b-a3b");
    CHECK(a.experts == 128);
    CHECK(a.experts_per_token == 8);
    CHECK(a.expert_ffn == 768);
    CHECK(a.head_dim() == 128);
    CHECK(a.dense_layers == 0);
    CHECK(a.sliding_layers == 0);  // sliding_window null, use_sliding_window false
    // HF Qwen/Qwen3-30B-A3B model card: 30.5B total, 3.3B activated, 29.9B non-embedding.
    check_within(total_parameters(a), 30.5e9, 0.01, "Qwen3-30B-A3B total");
    check_within(non_embedding_parameters(a), 29.9e9, 0.01, "Qwen3-30B-A3B non-embedding");
    // 3.3B is given to 0.1B: ours, all embeddings and the routers counted, is 3.353B, 0.1% above
    // the 3.35B that would still round to 3.3B. The shapes are right (the total and the
    // non-embedding count above agree with the card to 0.1%); the card states no more digits.
    check_within_rounded(active_parameters(a), 3.3e9, 0.1e9, 0.01, "Qwen3-30B-A3B active");
    const auto b = fixture("qwen3-235b-a22b");
    // HF Qwen/Qwen3-235B-A22B model card: 235B total, 22B activated, 234B non-embedding.
    check_within(total_parameters(b), 235e9, 0.01, "Qwen3-235B-A22B total");
    check_within(non_embedding_parameters(b), 234e9, 0.01, "Qwen3-235B-A22B non-embedding");
    check_within(active_parameters(b), 22e9, 0.01, "Qwen3-235B-A22B active");
    // decoder_sparse_step and mlp_only_layers: layer i is MoE when (i + 1) % step == 0 and i is
    // not listed (Qwen3MoeDecoderLayer)
    auto j = json::parse(R"({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
        "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
        "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936,
        "decoder_sparse_step": 2, "mlp_only_layers": [1, 2]})");
    CHECK(io::model_from_json(j).dense_layers == 25);  // 24 odd-indexed MoE layers, minus layer 1
}

TEST_CASE("Qwen2-MoE config.json: the shared expert's width in expert widths") {
    // Qwen/Qwen1.5-MoE-A2.7B config.json (shape keys); model card: 14.3B parameters in total,
    // 2.7B activated (all embeddings counted, as Qwen3's cards)
    auto j = json::parse(R"({"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632, "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1,
        "vocab_size": 151936, "max_position_embeddings": 8192, "tie_word_embeddings": false})");
    const auto m = io::model_from_json(j);
    CHECK(m.shared_experts == 4);
    check_within(total_parameters(m), 14.3e9, 0.01, "Qwen1.5-MoE-A2.7B total");
    check_within(active_parameters(m), 2.7e9, 0.01, "Qwen1.5-MoE-A2.7B active");
    j["shared_expert_intermediate_size"] = 5000;
    CHECK(model_test::json_error_field(j) == "model.shared_expert_intermediate_size");
}

TEST_CASE("GPT-OSS config.json: experts with biases, alternating sliding-window layers, sinks") {
    const auto m = fixture("gpt-oss-120b");
    CHECK(m.experts == 128);
    CHECK(m.experts_per_token == 4);
    CHECK(m.head_dim() == 64);
    CHECK(m.q_dim() == 4096);
    CHECK(m.sliding_layers == 18);
    CHECK(m.sliding_window == 128);
    CHECK(m.attention_sinks);
    CHECK(m.biases);
    CHECK(m.gated_mlp);
    // OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model Card, Table 1: 116.83B total; 5.13B active
    // per token, which counts the unembedding but not the embedding table.
    check_within(total_parameters(m), 116.83e9, 0.005, "gpt-oss-120b total");
    check_within(active_without_input_embedding(m), 5.13e9, 0.005, "gpt-oss-120b active");
    // without layer_types GptOssConfig alternates, sliding first
    auto j = json::parse(R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
        "num_local_experts": 32, "experts_per_token": 4, "vocab_size": 201088, "sliding_window": 128,
        "attention_bias": true, "tie_word_embeddings": false})");
    const auto small = io::model_from_json(j);
    CHECK(small.sliding_layers == 12);
    CHECK(small.experts_per_token == 4);
    // gpt-oss-20b, the same Table 1: 20.91B total, 3.61B active
    check_within(total_parameters(small), 20.91e9, 0.005, "gpt-oss-20b total");
    check_within(active_without_input_embedding(small), 3.61e9, 0.005, "gpt-oss-20b active");
}

TEST_CASE("Mixtral 8x22B config.json") {
    const auto m = fixture("mixtral-8x22b");
    CHECK(m.experts == 8);
    CHECK(m.experts_per_token == 2);
    CHECK(m.expert_width() == 16384);
    // Mistral AI 2024, Cheaper, Better, Faster, Stronger: 141B total, 39B active (all embeddings)
    check_within(total_parameters(m), 141e9, 0.01, "Mixtral 8x22B total");
    check_within(active_parameters(m), 39e9, 0.01, "Mixtral 8x22B active");
}

TEST_CASE("Llama 4 config.json: text_config, interleaved MoE layers, shared expert, chunked attention") {
    const auto scout = fixture("llama4-scout");
    CHECK(scout.experts == 16);
    CHECK(scout.experts_per_token == 1);
    CHECK(scout.shared_experts == 1);
    CHECK(scout.expert_ffn == 8192);
    CHECK(scout.ffn == 16384);
    CHECK(scout.dense_layers == 0);
    CHECK(scout.sliding_layers == 36);  // no_rope_layers: every fourth layer global
    CHECK(scout.sliding_window == 8192);
    const auto maverick = fixture("llama4-maverick");
    CHECK(maverick.experts == 128);
    CHECK(maverick.dense_layers == 24);  // interleave_moe_layer_step 2
    // Meta's model cards: Scout 17B active / 109B total, Maverick 17B active / 400B total. The
    // totals include the vision encoder and projector (0.872B, llama4_vision_parameters above),
    // which the text model leaves out: Scout's text model is 107.77B, 1.1% under 109B, and
    // 108.64B with the encoder. The active counts are the text path of a token, given to the
    // billion (17.17B and 17.18B, all embeddings counted, both round to 17B).
    const double vision = llama4_vision_parameters();
    CHECK(vision == 871932416.0);
    check_within(total_parameters(scout) + vision, 109e9, 0.01, "Llama 4 Scout total with the vision encoder");
    check_within(total_parameters(maverick) + vision, 400e9, 0.01, "Llama 4 Maverick total with the vision encoder");
    check_within_rounded(active_parameters(scout), 17e9, 1e9, 0.0, "Llama 4 Scout active");
    check_within_rounded(active_parameters(maverick), 17e9, 1e9, 0.0, "Llama 4 Maverick active");
}

TEST_CASE("new presets load from their data file and count as their fixtures") {
    for (const char* name : {"deepseek-v3", "kimi-k2", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b", "mixtral-8x22b",
                             "llama4-scout", "llama4-maverick"}) {
        INFO(name);
        const auto preset = model_by_name(name);
        const auto file = fixture(name);
        CHECK(total_parameters(preset) == total_parameters(file));
        CHECK(active_parameters(preset) == active_parameters(file));
        CHECK(mtp_parameters(preset) == mtp_parameters(file));
        CHECK(preset.sliding_layers == file.sliding_layers);
        CHECK(preset.attention_sinks == file.attention_sinks);
        CHECK(preset.qk_layernorm == file.qk_layernorm);
        CHECK(preset.rope_attention_factor == file.rope_attention_factor);
    }
}

TEST_CASE("MoE training FLOPs per token: DeepSeek-V3 250 GFLOPs and its dense comparison") {
    // Zhao et al. 2025, Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware
    // for AI Architectures (ISCA 2025), Table 2, training FLOPs per token at sequence length 4096:
    // DeepSeek-V2 155G, DeepSeek-V3 250G, Llama 3.1 405B 2448G. Their attention is causal (half
    // the score square); the library counts the full square, so half the attention core (x 3 for
    // forward + backward) comes off.
    const double s = 4096;
    auto causal_per_token = [&](const transformer& m) {
        const double core = m.layers * layer_forward_flops(m, s).attention_core().value();
        return model_flops_per_token(m, s).value() - 0.5 * 3.0 * core / s;
    };
    check_within(causal_per_token(models::deepseek_v3), 250e9, 0.02, "DeepSeek-V3 GFLOPs per token");
    check_within(causal_per_token(models::llama3_405b), 2448e9, 0.02, "Llama 3.1 405B GFLOPs per token");
    const auto v2 = io::model_from_json(json::parse(R"({"model_type": "deepseek_v2", "hidden_size": 5120,
        "num_hidden_layers": 60, "num_attention_heads": 128, "intermediate_size": 12288,
        "moe_intermediate_size": 1536, "n_routed_experts": 160, "n_shared_experts": 2, "num_experts_per_tok": 6,
        "first_k_dense_replace": 1, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400, "tie_word_embeddings": false})"));
    check_within(causal_per_token(v2), 155e9, 0.02, "DeepSeek-V2 GFLOPs per token");
    // The MTP module, apart (DeepSeek-V3 report, section 2.2: one module of depth 1): per token
    // 2 FLOPs per parameter it multiplies by (MLA without its latent norms, 8 routed + 1 shared
    // experts, router, M 2h x h, the shared output head h x V) + the attention core over s keys.
    const auto& m = models::deepseek_v3;
    const double h = m.hidden;
    const double matmul_params = attention_parameters(m) - m.q_lora_rank - m.kv_lora_rank +
                                 9.0 * mlp_parameters(m, 2048) + h * 256 + 2.0 * h * h + h * static_cast<double>(m.vocab);
    const double core = 2.0 * s * 128 * (192 + 128);
    CHECK_THAT(mtp_forward_flops(m, s).value() / s, Catch::Matchers::WithinRel(2.0 * matmul_params + core, 1e-12));
    CHECK(mtp_forward_flops(models::kimi_k2, s).value() == 0.0);
}

TEST_CASE("MoE FLOPs components: MLA projections, top-k plus shared experts, dense layers, sliding windows") {
    const auto& m = models::deepseek_v3;
    const auto f = layer_forward_flops(m, 1.0);  // one token, per layer (mean)
    // the MLA projections of one token cost 2 x their parameters (less the two latent norms)
    const double mla_params = attention_parameters(m) - m.q_lora_rank - m.kv_lora_rank;
    CHECK_THAT(f.qkv.value() + f.out_proj.value(), Catch::Matchers::WithinRel(2.0 * mla_params, 1e-12));
    // MLP: 58 MoE layers of 8 routed + 1 shared experts and 3 dense layers; gated, 3 h f each
    const double h = m.hidden;
    const double mlp = (58.0 * 9.0 * 3.0 * h * 2048 + 3.0 * 3.0 * h * 18432) / 61.0;
    CHECK_THAT(f.mlp.value(), Catch::Matchers::WithinRel(2.0 * mlp, 1e-12));
    // scores with d_n + d_r = 192, values with d_v = 128, over the seq keys of each query
    const auto g = layer_forward_flops(m, 4096.0);
    CHECK_THAT(g.scores.value(), Catch::Matchers::WithinRel(2.0 * 4096 * 4096 * 128 * 192, 1e-12));
    CHECK_THAT(g.values.value(), Catch::Matchers::WithinRel(2.0 * 4096 * 4096 * 128 * 128, 1e-12));
    // GPT-OSS: half the layers attend a causal window of 128 keys: 2w - w^2/s per query (twice
    // the causal mean, as the full layers' s is twice theirs) instead of s
    const auto& o = models::gpt_oss_120b;
    const double s = 8192, w = 128;
    const auto q = layer_forward_flops(o, s);
    const double span = 0.5 * s + 0.5 * (2.0 * w - w * w / s);
    CHECK_THAT(q.scores.value(), Catch::Matchers::WithinRel(2.0 * s * span * 64 * 64, 1e-12));
    // top-4 of 128 experts + no shared expert, one router
    CHECK_THAT(q.mlp.value(), Catch::Matchers::WithinRel(3.0 * 2.0 * s * 2880.0 * 4 * 2880, 1e-12));
    CHECK_THAT(q.router.value(), Catch::Matchers::WithinRel(2.0 * s * 2880.0 * 128, 1e-12));
}

TEST_CASE("MoE model state: routed experts (and the MTP module's) shard over EP, the rest does not") {
    const auto& m = models::deepseek_v3;
    const auto one = model_state_per_gpu(m, 1, 1, 1, 1, 0);
    const auto ep8 = model_state_per_gpu(m, 1, 1, 1, 8, 0);
    // weights of 2 bytes per parameter (mixed-precision Adam): everything, MTP module included
    CHECK_THAT(one.weights.value(), Catch::Matchers::WithinRel(2.0 * (total_parameters(m) + mtp_parameters(m)), 1e-9));
    const double routed = routed_expert_parameters(m) + m.mtp_layers * 256.0 * mlp_parameters(m, 2048);
    CHECK_THAT(one.weights.value() - ep8.weights.value(), Catch::Matchers::WithinRel(2.0 * routed * 7.0 / 8.0, 1e-9));
}

TEST_CASE("MoE config errors name the field, the value and what is accepted") {
    const auto base = json::parse(R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
        "num_attention_heads": 128, "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "kv_lora_rank": 512,
        "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280})");
    CHECK(model_test::json_error_field(base) == "no error");
    auto j = base;
    j["num_experts_per_tok"] = 300;
    CHECK(model_test::json_error_field(j) == "model.num_experts_per_tok");
    try {
        (void)io::model_from_json(j, "model");
    } catch (const input_error& e) {
        CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("n_routed_experts = 256"));
    }
    j = base;
    j["first_k_dense_replace"] = 61;  // no MoE layer left
    CHECK(model_test::json_error_field(j) == "model.first_k_dense_replace");
    j = base;
    j["v_head_dim"] = 0;
    CHECK(model_test::json_error_field(j) == "model.v_head_dim");
    j = base;
    j["kv_lora_rank"] = "512";
    CHECK(model_test::json_error_field(j) == "model.kv_lora_rank");
    j = base;
    j["n_shared_experts"] = -1;
    CHECK(model_test::json_error_field(j) == "model.n_shared_experts");
    j = base;
    j["mlp_only_layers"] = json::array({0, 99});
    CHECK(model_test::json_error_field(j) == "model.mlp_only_layers[1]");
    auto g = json::parse(R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 4,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
        "num_local_experts": 32, "experts_per_token": 4, "vocab_size": 201088,
        "layer_types": ["sliding_attention", "full_attention"]})");
    CHECK(model_test::json_error_field(g) == "model.layer_types");  // 2 entries for 4 layers
    g["layer_types"] = json::array({"sliding_attention", "full_attention", "sliding_attention", "full_attention"});
    CHECK(model_test::json_error_field(g) == "model.sliding_window");  // sliding layers need their window
    g["sliding_window"] = 128;
    CHECK(model_test::json_error_field(g) == "no error");
    auto l4 = json::parse(R"({"model_type": "llama4", "text_config": 5})");
    CHECK(model_test::json_error_field(l4) == "model.text_config");
    l4 = json::parse(R"({"model_type": "llama4", "text_config": {"model_type": "llama4", "text_config": {}}})");
    CHECK(model_test::json_error_field(l4) == "model.text_config.num_hidden_layers");  // one level only, then its keys
    l4 = json::parse(R"({"model_type": "llama4", "text_config": {"hidden_size": 5120, "num_hidden_layers": 48,
        "num_attention_heads": 40, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "vocab_size": 202048,
        "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": "2"}})");
    CHECK(model_test::json_error_field(l4) == "model.text_config.interleave_moe_layer_step");
    // validate: the struct's own checks
    auto m = models::deepseek_v3;
    m.dense_layers = 61;
    try {
        validate(m, "cfg");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "cfg.dense_layers");
    }
    m = models::gpt_oss_120b;
    m.sliding_window = 0;
    CHECK_THROWS_AS(validate(m), input_error);
    m = models::llama2_7b;
    m.dense_layers = 2;  // a dense model has no dense layers apart
    CHECK_THROWS_AS(validate(m), input_error);
}

TEST_CASE("step predictor on the MoE presets with expert parallelism: finite, and never above the GEMM rate") {
    // The compute model's GEMM shapes (MLA factors, shared experts, dense layers, sliding
    // windows) must cover the FLOPs flops.hpp counts: the efficiency achieved (hardware FLOPs /
    // (N x peak x compute time)) stays under the accelerator's large-GEMM efficiency, which no
    // kernel beats in this model, and above zero.
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 32;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 2, .pp = 4, .dp = 32, .ep = 8, .micro_batch = 1, .global_batch = 1024, .seq = 4096};
    p.recompute_mode = recompute::selective;
    p.sequence_parallel = true;
    for (const char* name : {"mixtral-8x22b", "deepseek-v3", "kimi-k2", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b",
                             "llama4-scout", "llama4-maverick"}) {
        INFO(name);
        const auto m = model_by_name(name);
        REQUIRE_NOTHROW(validate(p, m, c));
        const auto b = predict_step(m, c, acc, p);
        CHECK(std::isfinite(in_seconds(b.step)));
        CHECK(in_seconds(b.step) > 0);
        CHECK(in_seconds(b.ep.total) > 0);
        CHECK(b.efficiency > 0);
        CHECK(b.efficiency <= acc.compute_efficiency);
        CHECK(b.mfu > 0);
        CHECK(b.mfu < 1);
    }
}

TEST_CASE("step predictor: the MTP module adds its FLOPs to the last stage and to hardware FLOPs only") {
    // One efficiency for every kernel (compute_efficiency): without pipelining the step's compute
    // grows by micro-batches x 3 x the module's forward FLOPs / (t x efficiency x peak).
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 32;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 8, .pp = 1, .dp = 32, .ep = 8, .micro_batch = 1, .global_batch = 256, .seq = 4096};
    p.compute_efficiency = 0.4;
    auto without = models::deepseek_v3;
    without.mtp_layers = 0;
    const auto a = predict_step(without, c, acc, p);
    const auto b = predict_step(models::deepseek_v3, c, acc, p);
    const double rate = 0.4 * acc.peak(dtype::bf16)->value();
    const double expected = (256.0 / 32) * 3.0 * mtp_forward_flops(models::deepseek_v3, 4096, 1).value() / (8 * rate);
    CHECK_THAT(in_seconds(b.compute) - in_seconds(a.compute), Catch::Matchers::WithinRel(expected, 1e-9));
    CHECK(b.model_flops.value() == a.model_flops.value());
    CHECK_THAT(b.hardware_flops.value() - a.hardware_flops.value(),
               Catch::Matchers::WithinRel(3.0 * mtp_forward_flops(models::deepseek_v3, 4096, 256).value(), 1e-9));
}
