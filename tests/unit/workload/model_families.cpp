// Hugging Face config.json of the common dense families, read by their own field names: the
// shapes must give each model card's published parameter count within 1%. The configs below are
// the relevant keys of each model's config.json on the Hugging Face Hub (values as published
// there); the expected totals are the model cards' or papers' figures, not the library's output.
#include "catch_shim.hpp"

#include <cmath>

#include <commscale/io/model_json.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/transformer.hpp>

using namespace commscale;
using nlohmann::json;

namespace {
transformer read(const char* text) { return io::model_from_json(json::parse(text), "model"); }
void check_total(const transformer& m, double published) {
    const double total = total_parameters(m);
    INFO(m.name << ": " << total << " parameters, published " << published);
    CHECK(std::fabs(total / published - 1.0) <= 0.01);
}
}  // namespace

TEST_CASE("MPT: n_layers, n_heads, d_model, expansion_ratio, ALiBi, no biases") {
    // mosaicml/mpt-7b config.json; model card: 6.7B parameters
    const auto m = read(R"({"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
        "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432, "no_bias": true,
        "attn_config": {"alibi": true, "attn_impl": "triton"}, "name": "mpt-7b"})");
    CHECK(m.layers == 32);
    CHECK(m.ffn == 4 * 4096);
    CHECK(m.max_seq == 2048);
    CHECK(m.alibi);
    CHECK_FALSE(m.biases);
    CHECK_FALSE(m.gated_mlp);
    CHECK(m.tied_embeddings);
    check_total(m, 6.7e9);
}

TEST_CASE("BLOOM: n_layer, n_head, ALiBi, biases") {
    // bigscience/bloom config.json; Le Scao et al. 2022 Table 3: 176,247M parameters
    const auto m = read(R"({"model_type": "bloom", "hidden_size": 14336, "n_head": 112, "n_layer": 70,
        "vocab_size": 250880, "name": "bloom"})");
    CHECK(m.alibi);
    CHECK(m.biases);
    CHECK(m.ffn == 4 * 14336);
    check_total(m, 176.247e9);
}

TEST_CASE("GPT-J: n_embd, n_inner null, rotary, parallel attention, untied") {
    // EleutherAI/gpt-j-6b config.json; model card: 6,053,381,344 parameters
    const auto m = read(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28, "n_inner": null,
        "rotary_dim": 64, "n_positions": 2048, "vocab_size": 50400, "tie_word_embeddings": false, "name": "gpt-j-6b"})");
    CHECK(m.ffn == 4 * 4096);
    CHECK(m.parallel_attention);
    CHECK_FALSE(m.learned_positions);
    CHECK_FALSE(m.tied_embeddings);
    check_total(m, 6.053381344e9);
}

TEST_CASE("GPT-NeoX: use_parallel_residual, untied by default") {
    // EleutherAI/gpt-neox-20b config.json; Black et al. 2022: 20,554,567,680 parameters
    const auto m = read(R"({"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64,
        "num_hidden_layers": 44, "intermediate_size": 24576, "vocab_size": 50432, "rotary_pct": 0.25,
        "use_parallel_residual": true, "max_position_embeddings": 2048, "name": "gpt-neox-20b"})");
    CHECK(m.parallel_attention);
    CHECK_FALSE(m.tied_embeddings);
    CHECK(m.biases);
    check_total(m, 20.55456768e9);
}

TEST_CASE("Falcon: multi_query gives one K/V head, parallel attention, no biases") {
    // tiiuae/falcon-7b config.json; model card: 7B (6.92B)
    const auto m = read(R"({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71,
        "num_hidden_layers": 32, "multi_query": true, "new_decoder_architecture": false, "parallel_attn": true,
        "bias": false, "alibi": false, "vocab_size": 65024, "name": "falcon-7b"})");
    CHECK(m.kv_heads == 1);
    CHECK(m.head_dim() == 64);
    CHECK(m.parallel_attention);
    CHECK_FALSE(m.biases);
    CHECK_FALSE(m.alibi);
    check_total(m, 6.92e9);
    // falcon-40b: new decoder architecture with 8 K/V groups (num_kv_heads)
    const auto f40 = read(R"({"model_type": "falcon", "hidden_size": 8192, "num_attention_heads": 128,
        "num_hidden_layers": 60, "num_kv_heads": 8, "new_decoder_architecture": true, "vocab_size": 65024})");
    CHECK(f40.kv_heads == 8);
    CHECK(f40.head_dim() == 64);
}

TEST_CASE("Gemma: head_dim decoupled from hidden / heads, gated, tied") {
    // google/gemma-7b config.json: hidden 3072, 16 heads of 256; Gemma Team 2024 Table 2: 8.54B
    const auto m = read(R"({"model_type": "gemma", "hidden_size": 3072, "num_attention_heads": 16,
        "num_key_value_heads": 16, "head_dim": 256, "num_hidden_layers": 28, "intermediate_size": 24576,
        "vocab_size": 256000, "hidden_act": "gelu", "max_position_embeddings": 8192, "name": "gemma-7b"})");
    CHECK(m.head_dim() == 256);
    CHECK(m.q_dim() == 4096);
    CHECK(m.gated_mlp);
    CHECK(m.tied_embeddings);
    check_total(m, 8.54e9);
    // the query width enters the FLOPs: QKV is 2 T h (q + 2 kv)
    const auto f = layer_forward_flops(m, 1.0);
    CHECK(f.qkv.value() == Approx(2.0 * 3072 * (4096 + 2 * 4096)));
}

TEST_CASE("Qwen3 and Phi-3: gated, rotary, untied") {
    // Qwen/Qwen3-8B config.json; model card: 8.2B
    const auto q = read(R"({"model_type": "qwen3", "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 36, "intermediate_size": 12288,
        "vocab_size": 151936, "tie_word_embeddings": false, "max_position_embeddings": 40960})");
    CHECK(q.gated_mlp);
    CHECK(q.head_dim_override == 0);  // 4096 / 32 = 128: not decoupled
    check_total(q, 8.2e9);
    // microsoft/Phi-3-mini-4k-instruct config.json; Abdin et al. 2024: 3.8B
    const auto p = read(R"({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
        "num_key_value_heads": 32, "num_hidden_layers": 32, "intermediate_size": 8192, "vocab_size": 32064,
        "tie_word_embeddings": false, "max_position_embeddings": 4096})");
    CHECK(p.gated_mlp);
    check_total(p, 3.8e9);
}

TEST_CASE("Nemotron: plain squared-ReLU MLP, and unknown families name the missing field") {
    const auto n = read(R"({"model_type": "nemotron", "hidden_size": 6144, "num_attention_heads": 48,
        "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32, "intermediate_size": 24576,
        "hidden_act": "relu2", "vocab_size": 256000, "tie_word_embeddings": false})");
    CHECK_FALSE(n.gated_mlp);
    CHECK(n.kv_heads == 8);
    // an unknown model type without the generic keys: the error names the key it needed
    try {
        (void)read(R"({"model_type": "somethingnew", "width": 4096, "depth": 32})");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(std::string(e.field()) == "model.num_hidden_layers");
    }
    // head_dim must be a positive size
    CHECK_THROWS_AS(read(R"({"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
        "head_dim": 0, "vocab_size": 100})"), input_error);
}
