// Hugging Face config.json loader: presets and data/models/*.json agree; real configs' key
// spellings; wrong types and impossible shapes are input errors naming the key.
#include "catch_shim.hpp"
#include "model_fixtures.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

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
    CHECK(a.moe_latent == b.moe_latent);
    CHECK(a.mtp_depths == b.mtp_depths);
    CHECK(a.q_lora_rank == b.q_lora_rank);
    CHECK(a.kv_lora_rank == b.kv_lora_rank);
    CHECK(a.qk_nope_head_dim == b.qk_nope_head_dim);
    CHECK(a.qk_rope_head_dim == b.qk_rope_head_dim);
    CHECK(a.v_head_dim == b.v_head_dim);
    CHECK(a.sliding_window == b.sliding_window);
    CHECK(a.sliding_layers == b.sliding_layers);
    CHECK(a.attention_sinks == b.attention_sinks);
    CHECK(a.attention_output_gate == b.attention_output_gate);
    CHECK(a.qk_layernorm == b.qk_layernorm);
    CHECK(a.rope_attention_factor == b.rope_attention_factor);
    CHECK(a.dropout == b.dropout);
    REQUIRE(a.is_hybrid() == b.is_hybrid());
    if (a.is_hybrid()) CHECK(*a.hybrid == *b.hybrid);  // pattern and Mamba-2 sizes
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
    CHECK(model_test::json_error_field(good) == "no error");
    CHECK(model_test::json_error_field(with("num_attention_heads", 30)) == "model.num_attention_heads");
    CHECK(model_test::json_error_field(with("num_key_value_heads", 5)) == "model.num_key_value_heads");
    CHECK(model_test::json_error_field(with("hidden_size", -4096)) == "model.hidden_size");
    CHECK(model_test::json_error_field(with("num_hidden_layers", "32")) == "model.num_hidden_layers");
    CHECK(model_test::json_error_field(with("num_hidden_layers", 32.5)) == "model.num_hidden_layers");
    CHECK(model_test::json_error_field(with("tie_word_embeddings", 3)) == "model.tie_word_embeddings");
    CHECK(model_test::json_error_field(with("num_experts_per_tok", 2)) == "model.num_experts_per_tok");  // 2 of 1 expert
    json missing = good;
    missing.erase("vocab_size");
    CHECK(model_test::json_error_field(missing) == "model.vocab_size");
    CHECK(model_test::json_error_field(json::array()) == "model");
    CHECK_THROWS_AS(io::load_model_file("/nonexistent/config.json", "--model"), input_error);
}

TEST_CASE("Qwen3-Next config.json: Gated DeltaNet layers as Megatron-Core's hybrid pattern") {
    // the preset's file (data/models/qwen3-next-80b-a3b.json, the HF config.json of
    // Qwen/Qwen3-Next-80B-A3B-Instruct): every fourth layer attention by full_attention_interval
    const transformer m = io::load_model_file(std::string(COMMSCALE_DATA_DIR) + "/models/qwen3-next-80b-a3b.json", "--model");
    REQUIRE(m.is_hybrid());
    CHECK(m.hybrid->pattern == models::qwen3_next_80b_a3b.hybrid->pattern);
    CHECK(m.layers == 96);
    CHECK(m.hybrid->gdn_v_heads == 32);
    CHECK(m.hybrid->gdn_qk_heads == 16);
    CHECK(m.shared_experts == 1);
    CHECK(m.gated_mlp);
    CHECK_FALSE(m.dropout);
    // layer_types (transformers >= 4.57 writes it) says the same; mlp_only_layers put a dense MLP
    json typed = {{"model_type", "qwen3_next"},  {"num_hidden_layers", 4},       {"hidden_size", 2048},
                  {"num_attention_heads", 16},   {"num_key_value_heads", 2},     {"head_dim", 256},
                  {"intermediate_size", 5120},   {"moe_intermediate_size", 512}, {"num_experts", 512},
                  {"num_experts_per_tok", 10},   {"vocab_size", 151936},         {"hidden_act", "silu"},
                  {"mlp_only_layers", {1}},
                  {"layer_types", {"linear_attention", "linear_attention", "linear_attention", "full_attention"}}};
    const transformer t = io::model_from_json(typed, "model");
    CHECK(t.hybrid->pattern == "GEG-GE*E");
    CHECK(t.layers == 8);
    // a layer_types entry that is neither kind, and value heads that are no multiple of the key heads
    typed["layer_types"][2] = "sliding_attention";
    CHECK(model_test::json_error_field(typed) == "model.layer_types[2]");
    typed["layer_types"][2] = "linear_attention";
    typed["linear_num_value_heads"] = 24;
    typed["linear_num_key_heads"] = 16;
    CHECK(model_test::json_error_field(typed) == "model.linear_num_value_heads");
}

TEST_CASE("linear-attention and other unmodelled mixers are refused, never read as softmax attention") {
    // Qwen3.5's hybrid layouts are not read here; a Qwen3-Next-like config under a model_type the
    // reader does not know is refused by its keys rather than read as 48 layers of full attention
    json qwen35 = io::model_to_json(models::llama2_7b);
    qwen35["model_type"] = "qwen3_5_moe";
    CHECK(model_test::json_error_field(qwen35) == "model.model_type");
    try {
        (void)io::model_from_json(qwen35, "model");
        FAIL("qwen3_5_moe accepted");
    } catch (const input_error& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.find("\"qwen3_5_moe\"") != std::string::npos);
        CHECK(what.find("not modelled") != std::string::npos);
    }
    json renamed = io::model_to_json(models::llama2_7b);
    renamed["model_type"] = "my_hybrid";
    renamed["full_attention_interval"] = 4;
    renamed["linear_num_value_heads"] = 32;
    CHECK(model_test::json_error_field(renamed) == "model.full_attention_interval");
    renamed.erase("full_attention_interval");
    CHECK(model_test::json_error_field(renamed) == "model.linear_num_value_heads");
    // layer_types naming a linear-attention layer outside qwen3_next
    json typed = io::model_to_json(models::llama2_7b);
    typed["layer_types"] = json::array();
    for (int i = 0; i < models::llama2_7b.layers; ++i)
        typed["layer_types"].push_back((i + 1) % 4 == 0 ? "full_attention" : "linear_attention");
    CHECK(model_test::json_error_field(typed) == "model.layer_types[0]");
    // full, sliding and chunked attention are what layer_types may hold
    for (int i = 0; i < models::llama2_7b.layers; ++i) typed["layer_types"][static_cast<std::size_t>(i)] = i % 2 ? "full_attention" : "sliding_attention";
    typed["sliding_window"] = 4096;
    CHECK(model_test::json_error_field(typed) == "no error");
    CHECK(io::model_from_json(typed, "model").sliding_layers == models::llama2_7b.layers / 2);
    // Jamba (attention every 8th layer among Mamba layers) and its keys under another name
    json jamba = io::model_to_json(models::llama2_7b);
    jamba["model_type"] = "jamba";
    CHECK(model_test::json_error_field(jamba) == "model.model_type");
    json mamba_keys = io::model_to_json(models::llama2_7b);
    mamba_keys["attn_layer_period"] = 8;
    CHECK(model_test::json_error_field(mamba_keys) == "model.attn_layer_period");
    // the hybrids the library models keep loading (their presets' files: the test above every preset)
    CHECK(model_test::json_error_field(io::model_to_json(models::nemotron_h_8b)) == "no error");
    CHECK(model_test::json_error_field(io::model_to_json(models::qwen3_next_80b_a3b)) == "no error");
}

TEST_CASE("rope_scaling of type yarn: the attention factor as Hugging Face derives it") {
    // transformers modeling_rope_utils._compute_yarn_parameters: attention_factor if given, else
    // get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) when both are non-zero, else
    // get_mscale(factor); get_mscale(s, m) = 0.1 m ln s + 1 (s > 1)
    json j = io::model_to_json(models::llama2_7b);
    auto factor_of = [&](json rope) {
        json x = j;
        x["rope_scaling"] = std::move(rope);
        return io::model_from_json(x, "model").rope_attention_factor;
    };
    // GPT-OSS's config: factor 32, no mscale
    CHECK_THAT(factor_of({{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0}}),
               Catch::Matchers::WithinRel(0.1 * std::log(32.0) + 1.0, 1e-15));
    CHECK(factor_of({{"type", "yarn"}, {"factor", 4.0}, {"attention_factor", 1.25}}) == 1.25);
    // DeepSeek-V3's: mscale = mscale_all_dim = 1, factor 40: the two scales cancel
    CHECK(factor_of({{"type", "yarn"}, {"factor", 40}, {"mscale", 1.0}, {"mscale_all_dim", 1.0}}) == 1.0);
    CHECK_THAT(factor_of({{"type", "yarn"}, {"factor", 40}, {"mscale", 0.707}, {"mscale_all_dim", 1.0}}),
               Catch::Matchers::WithinRel((0.0707 * std::log(40.0) + 1.0) / (0.1 * std::log(40.0) + 1.0), 1e-15));
    // mscale_all_dim 0 (falsy in Python): the default factor
    CHECK_THAT(factor_of({{"type", "yarn"}, {"factor", 40}, {"mscale", 1.0}, {"mscale_all_dim", 0}}),
               Catch::Matchers::WithinRel(0.1 * std::log(40.0) + 1.0, 1e-15));
    // other rope types and null scale nothing
    CHECK(factor_of({{"rope_type", "llama3"}, {"factor", 8.0}}) == 1.0);
    CHECK(factor_of(nullptr) == 1.0);
    CHECK(io::model_from_json(j, "model").rope_attention_factor == 1.0);
    // the GPT-OSS preset and its config agree
    CHECK(models::gpt_oss_120b.rope_attention_factor == Approx(0.1 * std::log(32.0) + 1.0).epsilon(1e-15));
    // bad values name their key
    auto error_of = [&](json rope) {
        json x = j;
        x["rope_scaling"] = std::move(rope);
        return model_test::json_error_field(x);
    };
    CHECK(error_of({{"type", "yarn"}}) == "model.rope_scaling.factor");
    CHECK(error_of({{"type", "yarn"}, {"factor", "32"}}) == "model.rope_scaling.factor");
    CHECK(error_of({{"type", "yarn"}, {"factor", -2}}) == "model.rope_scaling.factor");
    CHECK(error_of({{"type", "yarn"}, {"factor", 32}, {"attention_factor", 0}}) == "model.rope_scaling.attention_factor");
    CHECK(error_of(json::array()) == "model.rope_scaling");
    json bad = j;
    bad["rope_attention_factor"] = "nan";
    CHECK(model_test::json_error_field(bad) == "model.rope_attention_factor");
    transformer m = models::llama2_7b;
    m.rope_attention_factor = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(validate(m), Catch::Contains("model.rope_attention_factor"));
}

TEST_CASE("Nemotron-H and Nemotron 3 config.json: the hybrid pattern, the Mamba-2 mixer, the shared expert's width") {
    const std::string dir = std::string(COMMSCALE_TEST_DATA_DIR) + "/hf-configs/";
    // nvidia/Nemotron-H-8B-Base-8K: the preset's shape (attention_head_dim 128 = 4096 / 32)
    transformer h8 = io::load_model_file(dir + "nemotron-h-8b.json");
    transformer preset = models::nemotron_h_8b;
    preset.name = h8.name;
    preset.source = h8.source;
    check_same(h8, preset);
    CHECK(total_parameters(h8) == total_parameters(models::nemotron_h_8b));
    // nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16: n_shared_experts 1 of moe_shared_expert_intermediate_size
    // 3712, counted as 2 expert widths of 1856; head_dim 128 on a hidden of 2688; no dense layers
    // apart from the pattern's
    transformer nano = io::load_model_file(dir + "nemotron-3-nano-30b-a3b.json");
    CHECK(nano.shared_experts == 2);
    CHECK(nano.expert_width() == 1856);
    CHECK(nano.dense_layers == 0);
    CHECK(nano.head_dim() == 128);
    CHECK_FALSE(nano.dropout);
    CHECK_FALSE(nano.tied_embeddings);
    CHECK_FALSE(nano.gated_mlp);  // squared ReLU (mlp_hidden_act relu2)
    preset = models::nemotron3_nano;
    preset.name = nano.name;
    preset.source = nano.source;
    check_same(nano, preset);

    const json base = json::parse(io::read_file(dir + "nemotron-h-8b.json", "model"));
    // a per-layer layers_block_type list (newer NemotronH configs) reads as the same pattern
    json listed = base;
    listed.erase("hybrid_override_pattern");
    listed["layers_block_type"] = json::array();
    for (const char c : models::nemotron_h_8b.hybrid_pattern())
        listed["layers_block_type"].push_back(c == 'M' ? "mamba" : c == '*' ? "attention" : "mlp");
    CHECK(io::model_from_json(listed).hybrid_pattern() == models::nemotron_h_8b.hybrid_pattern());
    // loaded twice, one interned shape: equal transformers (the layer memo's key) compare one pointer
    CHECK(io::model_from_json(listed).hybrid == io::model_from_json(base).hybrid);
    // without mamba_num_heads: expand x hidden / mamba_head_dim = 2 x 4096 / 64 (NemotronHConfig)
    json expand = base;
    expand.erase("mamba_num_heads");
    CHECK(io::model_from_json(expand).hybrid->mamba_heads == 128);

    auto with = [&](const char* key, json v) {
        json j = base;
        j[key] = std::move(v);
        return j;
    };
    CHECK(model_test::json_error_field(with("hybrid_override_pattern", "M-M-")) == "model.hybrid_override_pattern");
    CHECK(model_test::json_error_field(with("hybrid_override_pattern", std::string(51, 'M') + "D")) == "model.hybrid_override_pattern");
    CHECK(model_test::json_error_field(with("n_groups", 3)) == "model.mamba_num_heads");  // 128 heads in 3 groups
    CHECK(model_test::json_error_field(with("ssm_state_size", 0)) == "model.ssm_state_size");
    json gdn = listed;
    gdn["layers_block_type"][3] = "gdn";
    CHECK(model_test::json_error_field(gdn) == "model.layers_block_type[3]");
    json latent = json::parse(io::read_file(dir + "nemotron-3-nano-30b-a3b.json", "model"));
    latent["moe_latent_size"] = 1024;  // LatentMoE (Nemotron 3 Super's key)
    CHECK(io::model_from_json(latent).moe_latent == 1024);
    CHECK(io::model_from_json(latent).expert_io() == 1024);
    latent["moe_latent_size"] = nullptr;  // null: none
    CHECK(io::model_from_json(latent).expert_io() == 2688);
    latent["moe_latent_size"] = 0;
    CHECK(model_test::json_error_field(latent) == "model.moe_latent_size");
    latent["moe_latent_size"] = -4;
    CHECK(model_test::json_error_field(latent) == "model.moe_latent_size");
    latent["moe_latent_size"] = "1024";
    CHECK(model_test::json_error_field(latent) == "model.moe_latent_size");
    // a latent width without routed experts names the key
    json dense_latent = base;
    dense_latent["moe_latent_size"] = 1024;
    CHECK(model_test::json_error_field(dense_latent) == "model.moe_latent_size");
    // a hybrid model's MTP module is an attention and an MoE block ("*E"); another layout names its key
    json mtp = json::parse(io::read_file(dir + "nemotron-3-nano-30b-a3b.json", "model"));
    mtp["num_nextn_predict_layers"] = 1;
    mtp["mtp_hybrid_override_pattern"] = "*E";
    CHECK(io::model_from_json(mtp).mtp_layers == 1);
    mtp["mtp_hybrid_override_pattern"] = "M*E";
    CHECK(model_test::json_error_field(mtp) == "model.mtp_hybrid_override_pattern");
}

// Where each family puts its sliding-window layers when the config lists no layer_types
// (transformers' configuration classes), and Gemma 3's text_config defaults.
TEST_CASE("Gemma 2 and 3, Mistral 7B v0.1, StarCoder2 and Qwen2: the sliding-window layers by family, and Gemma 3 text_config defaults") {
    // Gemma 3 27B (Gemma 3 technical report, section 2: five local layers of 1,024 tokens to one
    // global, the first layer local, QK norm; Google's "Gemma explained: What's new in Gemma 3"
    // module listing: 62 layers, q_proj 5376 -> 4096, k_proj and v_proj 5376 -> 2048, o_proj
    // 4096 -> 5376, q_norm and k_norm over 128, embed_tokens 262208 x 5376). Its config.json keeps
    // the language model in text_config with only what differs from Gemma3TextConfig.
    const json gemma3 = {{"model_type", "gemma3"},
                         {"text_config",
                          {{"hidden_size", 5376}, {"intermediate_size", 21504}, {"num_hidden_layers", 62},
                           {"num_attention_heads", 32}, {"num_key_value_heads", 16}, {"head_dim", 128},
                           {"sliding_window", 1024}, {"model_type", "gemma3_text"}}}};
    const transformer g = io::model_from_json(gemma3, "model");
    CHECK(g.vocab == 262208);
    CHECK(g.q_dim() == 4096);
    CHECK(g.kv_dim() == 2048);
    CHECK(g.sliding_layers == 52);  // 62 - 62 / 6 global
    CHECK(g.sliding_window == 1024);
    CHECK(g.qk_layernorm);
    CHECK(g.gated_mlp);  // GeGLU (gelu_pytorch_tanh, gate_proj and up_proj)
    CHECK(g.tied_embeddings);
    CHECK_FALSE(g.dropout);
    CHECK(attention_parameters(g) == 5376.0 * 4096 + 2 * 5376.0 * 2048 + 4096.0 * 5376 + 2 * 128);
    CHECK(total_parameters(g) == Approx(27e9).epsilon(0.02));  // "Gemma 3 27B"
    // the 12B's text config without vocab_size and head_dim: Gemma3TextConfig's 262,208 and 256
    const json gemma3_12b = {{"model_type", "gemma3_text"}, {"hidden_size", 3840}, {"intermediate_size", 15360},
                             {"num_hidden_layers", 48},     {"num_attention_heads", 16}, {"num_key_value_heads", 8}};
    const transformer g12 = io::model_from_json(gemma3_12b, "model");
    CHECK(g12.q_dim() == 16 * 256);
    CHECK(g12.sliding_layers == 40);
    CHECK(g12.sliding_window == 4096);  // Gemma3TextConfig's default window
    CHECK(total_parameters(g12) == Approx(12e9).epsilon(0.03));  // "Gemma 3 12B"
    // Gemma 2 (Gemma 2 report: local sliding windows of 4,096 tokens and global attention in
    // alternate layers): Gemma 2 9B's 42 layers, 21 local
    const json gemma2 = {{"model_type", "gemma2"}, {"hidden_size", 3584}, {"intermediate_size", 14336},
                         {"num_hidden_layers", 42}, {"num_attention_heads", 16}, {"num_key_value_heads", 8},
                         {"head_dim", 256},         {"vocab_size", 256000}};
    const transformer g2 = io::model_from_json(gemma2, "model");
    CHECK(g2.sliding_layers == 21);
    CHECK(g2.sliding_window == 4096);
    CHECK_FALSE(g2.qk_layernorm);
    // Mistral 7B v0.1 (Jiang et al. 2023: sliding window attention, W = 4096, in every layer);
    // later Mistral configs set sliding_window null
    json mistral = {{"model_type", "mistral"},      {"hidden_size", 4096},      {"intermediate_size", 14336},
                    {"num_hidden_layers", 32},      {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                    {"vocab_size", 32000},          {"sliding_window", 4096}};
    CHECK(io::model_from_json(mistral, "model").sliding_layers == 32);
    mistral["sliding_window"] = nullptr;
    CHECK(io::model_from_json(mistral, "model").sliding_layers == 0);
    // StarCoder2 (Lozhkov et al. 2024: sliding window attention of 4,096 tokens) likewise
    json starcoder2 = mistral;
    starcoder2["model_type"] = "starcoder2";
    starcoder2["sliding_window"] = 4096;
    CHECK(io::model_from_json(starcoder2, "model").sliding_layers == 32);
    CHECK(io::model_from_json(starcoder2, "model").biases);  // Starcoder2Config use_bias, default true
    starcoder2["use_bias"] = false;
    CHECK_FALSE(io::model_from_json(starcoder2, "model").biases);
    // Qwen2: released configs carry a sliding_window with use_sliding_window false (no window);
    // with it true, the layers from max_window_layers on
    json qwen2 = {{"model_type", "qwen2"},        {"hidden_size", 8192},      {"intermediate_size", 29568},
                  {"num_hidden_layers", 80},      {"num_attention_heads", 64}, {"num_key_value_heads", 8},
                  {"vocab_size", 152064},         {"sliding_window", 131072}, {"use_sliding_window", false},
                  {"max_window_layers", 70}};
    CHECK(io::model_from_json(qwen2, "model").sliding_layers == 0);
    qwen2["use_sliding_window"] = true;
    qwen2["sliding_window"] = 4096;
    CHECK(io::model_from_json(qwen2, "model").sliding_layers == 10);
    qwen2.erase("max_window_layers");
    CHECK(io::model_from_json(qwen2, "model").sliding_layers == 52);  // Qwen2Config's default 28
    // a bad pattern is named
    json bad = gemma3_12b;
    bad["sliding_window_pattern"] = 0;
    CHECK(model_test::json_error_field(bad).find("sliding_window_pattern") != std::string::npos);
}

TEST_CASE("OLMoE config.json: SwiGLU experts and QK norm by family, against the 6.9B and 1.3B active of its paper") {
    // OLMoE-1B-7B (Muennighoff et al. 2024, "OLMoE": 6.9B total, 1.3B active; HF OlmoeConfig:
    // 16 layers of 2048, 64 experts of 1024, 8 per token, SwiGLU, QK norm; Megatron-Bridge's
    // OlMoEModelProvider gated_linear_unit True, qk_layernorm True), here without hidden_act
    const json olmoe = {{"model_type", "olmoe"},    {"hidden_size", 2048},      {"intermediate_size", 1024},
                        {"num_experts", 64},        {"num_experts_per_tok", 8}, {"num_hidden_layers", 16},
                        {"num_attention_heads", 16}, {"num_key_value_heads", 16}, {"vocab_size", 50304},
                        {"tie_word_embeddings", false}};
    const transformer m = io::model_from_json(olmoe, "model");
    CHECK(m.gated_mlp);
    CHECK(m.qk_layernorm);
    CHECK(total_parameters(m) == Approx(6.9e9).epsilon(0.01));
    CHECK(active_parameters(m) == Approx(1.3e9).epsilon(0.02));
}

TEST_CASE("DBRX config.json: attn_config and ffn_config, against the model card's 132B and 36B active") {
    // Databricks' DBRX (model card and HF databricks/dbrx-base config.json): 40 layers of 6144, 48
    // heads with 8 KV heads, 16 GLU experts of 10752, 4 per token, vocabulary 100352, untied:
    // "132B total parameters of which 36B parameters are active on any input"
    const json dbrx = {{"model_type", "dbrx"},   {"d_model", 6144},  {"n_heads", 48},          {"n_layers", 40},
                       {"max_seq_len", 32768},   {"vocab_size", 100352}, {"resid_pdrop", 0.0},
                       {"attn_config", {{"kv_n_heads", 8}, {"clip_qkv", 8}, {"rope_theta", 500000}}},
                       {"ffn_config", {{"ffn_hidden_size", 10752}, {"moe_num_experts", 16}, {"moe_top_k", 4}}}};
    const transformer m = io::model_from_json(dbrx, "model");
    CHECK(m.kv_heads == 8);
    CHECK(m.experts == 16);
    CHECK(m.experts_per_token == 4);
    CHECK(m.expert_width() == 10752);
    CHECK(m.gated_mlp);
    CHECK_FALSE(m.tied_embeddings);
    CHECK_FALSE(m.dropout);
    CHECK(total_parameters(m) == Approx(132e9).epsilon(0.01));
    CHECK(active_parameters(m) == Approx(36e9).epsilon(0.02));
    // a bad nested value is named by its path
    json bad = dbrx;
    bad["ffn_config"]["moe_top_k"] = 0;
    CHECK(model_test::json_error_field(bad) == "model.ffn_config.moe_top_k");
    bad = dbrx;
    bad["attn_config"] = 3;
    CHECK(model_test::json_error_field(bad) == "model.attn_config");
}
