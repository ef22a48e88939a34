// Hugging Face config.json loader: presets and data/models/*.json agree; real configs' key
// spellings; wrong types and impossible shapes are input errors naming the key.
#include "catch_shim.hpp"

#include <filesystem>

#include <commscale/io/model_json.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using nlohmann::json;

namespace {
void check_same(const transformer& a, const transformer& b) {
    CHECK(a.name == b.name);
    CHECK(a.layers == b.layers);
    CHECK(a.hidden == b.hidden);
    CHECK(a.heads == b.heads);
    CHECK(a.kv_heads == b.kv_heads);
    CHECK(a.ffn == b.ffn);
    CHECK(a.vocab == b.vocab);
    CHECK(a.max_seq == b.max_seq);
    CHECK(a.experts == b.experts);
    CHECK(a.experts_per_token == b.experts_per_token);
    CHECK(a.gated_mlp == b.gated_mlp);
    CHECK(a.tied_embeddings == b.tied_embeddings);
    CHECK(a.learned_positions == b.learned_positions);
    CHECK(a.biases == b.biases);
    CHECK(a.source == b.source);
    CHECK(a.head_dim() == b.head_dim());
    CHECK(a.expert_width() == b.expert_width());
    CHECK(a.shared_experts == b.shared_experts);
    CHECK(a.dense_layers == b.dense_layers);
    CHECK(a.mtp_layers == b.mtp_layers);
    CHECK(a.q_lora_rank == b.q_lora_rank);
    CHECK(a.kv_lora_rank == b.kv_lora_rank);
    CHECK(a.qk_nope_head_dim == b.qk_nope_head_dim);
    CHECK(a.qk_rope_head_dim == b.qk_rope_head_dim);
    CHECK(a.v_head_dim == b.v_head_dim);
    CHECK(a.sliding_window == b.sliding_window);
    CHECK(a.sliding_layers == b.sliding_layers);
    CHECK(a.attention_sinks == b.attention_sinks);
}

std::string error_field(const json& j) {
    try {
        (void)io::model_from_json(j, "model");
    } catch (const input_error& e) {
        return e.field();
    }
    return "no error";
}
}  // namespace

TEST_CASE("every preset has a data/models/<name>.json that loads to the same shape, and no extra files") {
    const std::filesystem::path dir = std::filesystem::path(COMMSCALE_DATA_DIR) / "models";
    for (const auto& m : all_models()) {
        INFO(m.name);
        const auto file = dir / (std::string(m.name) + ".json");
        REQUIRE(std::filesystem::exists(file));
        check_same(io::load_model_file(file.string()), m);
    }
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().extension() == ".json";
    CHECK(files == all_models().size());
}

TEST_CASE("model_to_json round-trips") {
    for (const auto& m : all_models()) {
        INFO(m.name);
        check_same(io::model_from_json(io::model_to_json(m)), m);
    }
}

TEST_CASE("a Llama-style config.json: GQA, SwiGLU from model_type, untied, unknown keys ignored") {
    // The shape of HF meta-llama/Meta-Llama-3-8B config.json (abridged).
    const json j = json::parse(R"({
      "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 128000,
      "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
      "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
      "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 128256})");
    const auto m = io::model_from_json(j, "model", "Meta-Llama-3-8B");
    CHECK(m.name == "Meta-Llama-3-8B");
    CHECK(m.kv_heads == 8);
    CHECK(m.gated_mlp);
    CHECK(!m.tied_embeddings);
    CHECK(!m.biases);
    // Same count as the preset and the model card's 8.03B.
    CHECK(total_parameters(m) == total_parameters(models::llama3_8b));
}

TEST_CASE("GPT-2 keys: n_layer, n_embd, n_head, n_positions, n_inner null = 4h, tied by default") {
    const json j = json::parse(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
      "n_positions": 1024, "n_ctx": 1024, "n_inner": null, "vocab_size": 50257, "activation_function": "gelu_new"})");
    const auto m = io::model_from_json(j);
    CHECK(m.ffn == 4 * 768);
    CHECK(m.kv_heads == 12);
    CHECK(m.tied_embeddings);
    CHECK(m.learned_positions);
    CHECK(!m.gated_mlp);
    // GPT-2 small: 124M parameters (124,439,808 in HF transformers).
    CHECK(total_parameters(m) == Approx(124'439'808.0).epsilon(1e-9));
}

TEST_CASE("wrong types and impossible shapes are input errors naming the key") {
    json good = io::model_to_json(models::llama2_7b);
    auto with = [&](const char* key, json v) {
        json j = good;
        j[key] = std::move(v);
        return j;
    };
    CHECK(error_field(good) == "no error");
    CHECK(error_field(with("num_attention_heads", 30)) == "model.num_attention_heads");
    CHECK(error_field(with("num_key_value_heads", 5)) == "model.num_key_value_heads");
    CHECK(error_field(with("hidden_size", -4096)) == "model.hidden_size");
    CHECK(error_field(with("num_hidden_layers", "32")) == "model.num_hidden_layers");
    CHECK(error_field(with("num_hidden_layers", 32.5)) == "model.num_hidden_layers");
    CHECK(error_field(with("tie_word_embeddings", 3)) == "model.tie_word_embeddings");
    CHECK(error_field(with("num_experts_per_tok", 2)) == "model.num_experts_per_tok");  // 2 of 1 expert
    json missing = good;
    missing.erase("vocab_size");
    CHECK(error_field(missing) == "model.vocab_size");
    CHECK(error_field(json::array()) == "model");
    CHECK_THROWS_AS(io::load_model_file("/nonexistent/config.json", "--model"), input_error);
}
