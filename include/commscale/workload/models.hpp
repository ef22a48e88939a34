#pragma once
/// @file workload/models.hpp
/// @brief Preset transformer shapes with their sources, and lookup by name. The same shapes live
/// in data/models/<name>.json in Hugging Face config.json form (a test proves they agree).

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "transformer.hpp"

namespace commscale {

namespace models {

/// GPT-2 Large (774M): Radford et al. 2019; HF openai-community/gpt2-large config.json
/// (n_layer 36, n_embd 1280, n_head 20, n_positions 1024, n_inner null = 4h).
inline constexpr transformer gpt2_large{
    .name = "gpt2-large", .layers = 36, .hidden = 1280, .heads = 20, .kv_heads = 20, .ffn = 5120,
    .vocab = 50257, .max_seq = 1024, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "Radford et al. 2019 (GPT-2); HF openai-community/gpt2-large config.json"};

/// GPT-3 175B: Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads x 128, n_ctx 2048,
/// d_ff = 4 d_model, GPT-2 tokenizer of 50257 tokens, GPT-2 architecture: learned positions, tied).
inline constexpr transformer gpt3_175b{
    .name = "gpt3-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96, .ffn = 49152,
    .vocab = 50257, .max_seq = 2048, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1"};

/// LLaMA 2 7B: Touvron et al. 2023; HF meta-llama/Llama-2-7b-hf config.json.
inline constexpr transformer llama2_7b{
    .name = "llama2-7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn = 11008,
    .vocab = 32000, .max_seq = 4096, .gated_mlp = true,
    .source = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-7b-hf config.json"};

/// LLaMA 2 13B: Touvron et al. 2023; HF meta-llama/Llama-2-13b-hf config.json.
inline constexpr transformer llama2_13b{
    .name = "llama2-13b", .layers = 40, .hidden = 5120, .heads = 40, .kv_heads = 40, .ffn = 13824,
    .vocab = 32000, .max_seq = 4096, .gated_mlp = true,
    .source = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-13b-hf config.json"};

/// LLaMA 2 70B (GQA with 8 KV heads): Touvron et al. 2023; HF meta-llama/Llama-2-70b-hf config.json.
inline constexpr transformer llama2_70b{
    .name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
    .vocab = 32000, .max_seq = 4096, .gated_mlp = true,
    .source = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-70b-hf config.json"};

/// Llama 3 8B: Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Meta-Llama-3-8B.
inline constexpr transformer llama3_8b{
    .name = "llama3-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn = 14336,
    .vocab = 128256, .max_seq = 8192, .gated_mlp = true,
    .source = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Meta-Llama-3-8B config.json"};

/// Llama 3 70B: Dubey et al. 2024, Table 3; HF meta-llama/Meta-Llama-3-70B config.json.
inline constexpr transformer llama3_70b{
    .name = "llama3-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
    .vocab = 128256, .max_seq = 8192, .gated_mlp = true,
    .source = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Meta-Llama-3-70B config.json"};

/// Llama 3.1 405B: Dubey et al. 2024, Table 3 (126 layers, 16384, FFN 53248, 128 heads, 8 KV heads);
/// HF meta-llama/Llama-3.1-405B config.json (vocab 128256, context 131072).
inline constexpr transformer llama3_405b{
    .name = "llama3-405b", .layers = 126, .hidden = 16384, .heads = 128, .kv_heads = 8, .ffn = 53248,
    .vocab = 128256, .max_seq = 131072, .gated_mlp = true,
    .source = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Llama-3.1-405B config.json"};

/// OPT-175B: Zhang et al. 2022, Table 1 (96 layers, 96 heads, 12288); HF facebook/opt-* configs
/// (ffn_dim 4h, vocab 50272, 2048 positions, tied word embeddings). OPT's position table has 2
/// extra offset rows, ignored here (25k parameters).
inline constexpr transformer opt_175b{
    .name = "opt-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96, .ffn = 49152,
    .vocab = 50272, .max_seq = 2048, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "Zhang et al. 2022, OPT: Open Pre-trained Transformer Language Models, Table 1"};

/// BLOOM 176B: BigScience 2022 (Le Scao et al.), Table 3 (70 layers, 14336, 112 heads, ALiBi,
/// vocab 250880); HF bigscience/bloom config.json.
inline constexpr transformer bloom_176b{
    .name = "bloom-176b", .layers = 70, .hidden = 14336, .heads = 112, .kv_heads = 112, .ffn = 57344,
    .vocab = 250880, .max_seq = 2048, .tied_embeddings = true, .biases = true,
    .source = "Le Scao et al. 2022, BLOOM, Table 3; HF bigscience/bloom config.json"};

/// MT-NLG 530B: Smith et al. 2022, Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B,
/// section 3.1 (105 layers, hidden 20480, 128 heads, sequence 2048, GPT-2 tokenizer).
inline constexpr transformer mt_nlg_530b{
    .name = "mt-nlg-530b", .layers = 105, .hidden = 20480, .heads = 128, .kv_heads = 128, .ffn = 81920,
    .vocab = 50257, .max_seq = 2048, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "Smith et al. 2022, Megatron-Turing NLG 530B, section 3.1"};

/// Megatron 1T: Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU
/// Clusters, Table 1 (128 layers, hidden 25600, 160 heads, vocab 51200, sequence 2048; 1008B).
inline constexpr transformer megatron_1t{
    .name = "megatron-1t", .layers = 128, .hidden = 25600, .heads = 160, .kv_heads = 160, .ffn = 102400,
    .vocab = 51200, .max_seq = 2048, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters, Table 1"};

/// Mixtral 8x7B: Jiang et al. 2024, Mixtral of Experts, Table 1; HF mistralai/Mixtral-8x7B-v0.1
/// config.json (8 experts, top-2, 46.7B total / 12.9B active).
inline constexpr transformer mixtral_8x7b{
    .name = "mixtral-8x7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn = 14336,
    .vocab = 32000, .max_seq = 32768, .experts = 8, .experts_per_token = 2, .gated_mlp = true,
    .source = "Jiang et al. 2024, Mixtral of Experts, Table 1; HF mistralai/Mixtral-8x7B-v0.1 config.json"};

}  // namespace models

/// @brief Every preset, in the order of CLI.md.
inline constexpr std::array<transformer, 13> model_presets{
    models::gpt2_large, models::gpt3_175b,  models::llama2_7b,   models::llama2_13b,  models::llama2_70b,
    models::llama3_8b,  models::llama3_70b, models::llama3_405b, models::opt_175b,    models::bloom_176b,
    models::mt_nlg_530b, models::megatron_1t, models::mixtral_8x7b};

/// @brief All presets.
[[nodiscard]] constexpr std::span<const transformer> all_models() { return model_presets; }

/// @brief The preset named `name`, or nullopt.
[[nodiscard]] constexpr std::optional<transformer> find_model(std::string_view name) {
    for (const auto& m : model_presets)
        if (m.name == name) return m;
    return std::nullopt;
}

/// @brief The preset named `name`; throws input_error naming `field` with "did you mean" otherwise.
[[nodiscard]] inline transformer model_by_name(std::string_view name, std::string_view field = "model") {
    if (auto m = find_model(name)) return *m;
    std::array<std::string_view, model_presets.size()> names{};
    for (std::size_t i = 0; i < model_presets.size(); ++i) names[i] = model_presets[i].name;
    throw unknown_name(std::string(field), name, names);
}

}  // namespace commscale
