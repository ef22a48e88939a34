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
    .source = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-7b-hf config.json", .dropout = false};

/// LLaMA 2 13B: Touvron et al. 2023; HF meta-llama/Llama-2-13b-hf config.json.
inline constexpr transformer llama2_13b{
    .name = "llama2-13b", .layers = 40, .hidden = 5120, .heads = 40, .kv_heads = 40, .ffn = 13824,
    .vocab = 32000, .max_seq = 4096, .gated_mlp = true,
    .source = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-13b-hf config.json", .dropout = false};

/// LLaMA 2 70B (GQA with 8 KV heads): Touvron et al. 2023; HF meta-llama/Llama-2-70b-hf config.json.
inline constexpr transformer llama2_70b{
    .name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
    .vocab = 32000, .max_seq = 4096, .gated_mlp = true,
    .source = "Touvron et al. 2023, Llama 2; HF meta-llama/Llama-2-70b-hf config.json", .dropout = false};

/// Llama 3 8B: Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Meta-Llama-3-8B.
inline constexpr transformer llama3_8b{
    .name = "llama3-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn = 14336,
    .vocab = 128256, .max_seq = 8192, .gated_mlp = true,
    .source = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Meta-Llama-3-8B config.json", .dropout = false};

/// Llama 3 70B: Dubey et al. 2024, Table 3; HF meta-llama/Meta-Llama-3-70B config.json.
inline constexpr transformer llama3_70b{
    .name = "llama3-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
    .vocab = 128256, .max_seq = 8192, .gated_mlp = true,
    .source = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Meta-Llama-3-70B config.json", .dropout = false};

/// Llama 3.1 405B: Dubey et al. 2024, Table 3 (126 layers, 16384, FFN 53248, 128 heads, 8 KV heads);
/// HF meta-llama/Llama-3.1-405B config.json (vocab 128256, context 131072).
inline constexpr transformer llama3_405b{
    .name = "llama3-405b", .layers = 126, .hidden = 16384, .heads = 128, .kv_heads = 8, .ffn = 53248,
    .vocab = 128256, .max_seq = 131072, .gated_mlp = true,
    .source = "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3; HF meta-llama/Llama-3.1-405B config.json", .dropout = false};

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
    .source = "Jiang et al. 2024, Mixtral of Experts, Table 1; HF mistralai/Mixtral-8x7B-v0.1 config.json", .dropout = false};

/// Mixtral 8x22B: Mistral AI 2024, "Cheaper, Better, Faster, Stronger" (141B total, 39B active);
/// HF mistralai/Mixtral-8x22B-v0.1 config.json (56 layers, 6144, 48 heads, 8 KV heads, FFN 16384,
/// 8 experts top-2, vocab 32768, 65536 positions, untied).
inline constexpr transformer mixtral_8x22b{
    .name = "mixtral-8x22b", .layers = 56, .hidden = 6144, .heads = 48, .kv_heads = 8, .ffn = 16384,
    .vocab = 32768, .max_seq = 65536, .experts = 8, .experts_per_token = 2, .gated_mlp = true,
    .source = "Mistral AI 2024, Cheaper, Better, Faster, Stronger; HF mistralai/Mixtral-8x22B-v0.1 config.json", .dropout = false};

/// DeepSeek-V3 (671B total, 37B active; + 14B multi-token prediction): DeepSeek-AI 2024,
/// DeepSeek-V3 Technical Report, section 4.2; HF deepseek-ai/DeepSeek-V3 config.json (61 layers,
/// 7168, 128 heads, MLA q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128;
/// 256 routed + 1 shared experts of 2048, top-8; first_k_dense_replace 3 with FFN 18432;
/// vocab 129280; 163840 positions; num_nextn_predict_layers 1).
inline constexpr transformer deepseek_v3{
    .name = "deepseek-v3", .layers = 61, .hidden = 7168, .heads = 128, .kv_heads = 128, .ffn = 18432,
    .vocab = 129280, .max_seq = 163840, .experts = 256, .experts_per_token = 8, .gated_mlp = true,
    .source = "DeepSeek-AI 2024, DeepSeek-V3 Technical Report; HF deepseek-ai/DeepSeek-V3 config.json",
    .expert_ffn = 2048, .shared_experts = 1, .dense_layers = 3, .mtp_layers = 1, .q_lora_rank = 1536,
    .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128, .dropout = false};

/// Kimi K2 (1.04T total, 32.6B active): Kimi Team 2025, Kimi K2: Open Agentic Intelligence
/// (the HF model card rounds to 1T / 32B); HF moonshotai/Kimi-K2-Instruct config.json: the DeepSeek-V3 architecture with 64
/// heads, 384 routed experts, one dense layer, vocab 163840, 131072 positions, no MTP layers.
inline constexpr transformer kimi_k2{
    .name = "kimi-k2", .layers = 61, .hidden = 7168, .heads = 64, .kv_heads = 64, .ffn = 18432,
    .vocab = 163840, .max_seq = 131072, .experts = 384, .experts_per_token = 8, .gated_mlp = true,
    .source = "Kimi Team 2025, Kimi K2: Open Agentic Intelligence; HF moonshotai/Kimi-K2-Instruct config.json",
    .expert_ffn = 2048, .shared_experts = 1, .dense_layers = 1, .q_lora_rank = 1536,
    .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128, .dropout = false};

/// Qwen3-30B-A3B (30.5B total, 3.3B active, 29.9B non-embedding): Qwen Team 2025, Qwen3
/// Technical Report, and the HF Qwen/Qwen3-30B-A3B model card and config.json
/// (48 layers, 2048, 32 heads x 128, 4 KV heads, 128 experts of 768, top-8, vocab 151936).
inline constexpr transformer qwen3_30b_a3b{
    .name = "qwen3-30b-a3b", .layers = 48, .hidden = 2048, .heads = 32, .kv_heads = 4, .ffn = 6144,
    .vocab = 151936, .max_seq = 40960, .experts = 128, .experts_per_token = 8, .gated_mlp = true,
    .source = "Qwen Team 2025, Qwen3 Technical Report; HF Qwen/Qwen3-30B-A3B config.json",
    .head_dim_override = 128, .expert_ffn = 768, .qk_layernorm = true, .dropout = false};

/// Qwen3-235B-A22B (235B total, 22B active, 234B non-embedding): Qwen3 Technical Report;
/// HF Qwen/Qwen3-235B-A22B model card and config.json (94 layers, 4096, 64 heads x 128, 4 KV
/// heads, 128 experts of 1536, top-8, vocab 151936).
inline constexpr transformer qwen3_235b_a22b{
    .name = "qwen3-235b-a22b", .layers = 94, .hidden = 4096, .heads = 64, .kv_heads = 4, .ffn = 12288,
    .vocab = 151936, .max_seq = 40960, .experts = 128, .experts_per_token = 8, .gated_mlp = true,
    .source = "Qwen Team 2025, Qwen3 Technical Report; HF Qwen/Qwen3-235B-A22B config.json",
    .head_dim_override = 128, .expert_ffn = 1536, .qk_layernorm = true, .dropout = false};

/// Qwen3-Next-80B-A3B (80B total, 3B active: the HF Qwen/Qwen3-Next-80B-A3B-Instruct model card):
/// 48 layers, each a token mixer and an MoE block, three Gated DeltaNet layers to each gated
/// attention layer (config.json full_attention_interval 4), hidden 2048, attention 16 heads x 256
/// with 2 KV heads, Gated DeltaNet 16 query-key heads and 32 value heads of 128 with a convolution
/// of 4, 512 experts of 512 top-10 and one shared expert of 512, vocab 151936, untied, 262,144
/// tokens. Written as Megatron-Core's hybrid pattern ("GE GE GE *E" twelve times, 96 blocks):
/// With the attention output gate (q_proj's second half, 2048 x 4096 in each of the 12 attention
/// layers, 0.1B): 79.67B total and 3.25B active without the embedding tables. Not modelled: partial
/// rotary, zero-centred norms (no cost apart) and the MTP module.
inline constexpr hybrid_shape qwen3_next_80b_a3b_hybrid{
    .pattern = "GEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*EGEGEGE*E",
    .gdn_qk_heads = 16, .gdn_v_heads = 32, .gdn_qk_head_dim = 128, .gdn_v_head_dim = 128, .gdn_conv_kernel = 4};
inline constexpr transformer qwen3_next_80b_a3b{
    .name = "qwen3-next-80b-a3b", .layers = 96, .hidden = 2048, .heads = 16, .kv_heads = 2, .ffn = 5120,
    .vocab = 151936, .max_seq = 262144, .experts = 512, .experts_per_token = 10, .gated_mlp = true,
    .source = "Qwen Team 2025, Qwen3-Next; HF Qwen/Qwen3-Next-80B-A3B-Instruct config.json",
    .head_dim_override = 256, .expert_ffn = 512, .shared_experts = 1, .attention_output_gate = true, .qk_layernorm = true, .dropout = false,
    .hybrid = &qwen3_next_80b_a3b_hybrid};

/// gpt-oss-120b (116.83B total, 5.13B active): OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model
/// Card, Table 1; HF openai/gpt-oss-120b config.json (36 layers, 2880, 64 heads x 64, 8 KV heads,
/// 128 experts of 2880 top-4, vocab 201088, sliding window 128 on every other layer, attention
/// sinks, biases in attention, experts and router; YaRN factor 32 with no mscale, so the attention
/// factor is Hugging Face's default 0.1 ln 32 + 1).
inline constexpr transformer gpt_oss_120b{
    .name = "gpt-oss-120b", .layers = 36, .hidden = 2880, .heads = 64, .kv_heads = 8, .ffn = 2880,
    .vocab = 201088, .max_seq = 131072, .experts = 128, .experts_per_token = 4, .gated_mlp = true,
    .biases = true, .source = "OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model Card; HF openai/gpt-oss-120b config.json",
    .head_dim_override = 64, .sliding_window = 128, .sliding_layers = 18, .attention_sinks = true,
    .rope_attention_factor = 1.3465735902799727, .dropout = false};

/// Llama 4 Scout (17B active, 109B total with the vision encoder): Meta 2025, "The Llama 4 herd"
/// and the meta-llama/Llama-4-Scout-17B-16E model card; text_config of its config.json (48
/// layers, 5120, 40 heads, 8 KV heads, 16 routed experts of 8192 top-1 + 1 shared expert, dense
/// MLP 16384 unused (interleave_moe_layer_step 1), vocab 202048, chunked attention of 8192 on the
/// 36 RoPE layers, every fourth layer global and without rotary embedding (NoPE), the query and
/// key of the RoPE layers L2-normed (use_qk_norm)).
inline constexpr transformer llama4_scout{
    .name = "llama4-scout", .layers = 48, .hidden = 5120, .heads = 40, .kv_heads = 8, .ffn = 16384,
    .vocab = 202048, .max_seq = 10485760, .experts = 16, .experts_per_token = 1, .gated_mlp = true,
    .source = "Meta 2025, Llama 4 Scout model card; HF meta-llama/Llama-4-Scout-17B-16E config.json (text_config)",
    .expert_ffn = 8192, .shared_experts = 1, .sliding_window = 8192, .sliding_layers = 36, .chunked_attention = true,
    .nope_layers = 12, .qk_l2_norm = true, .dropout = false};

/// Llama 4 Maverick (17B active, 400B total with the vision encoder): Meta 2025, the
/// meta-llama/Llama-4-Maverick-17B-128E model card; text_config of its config.json: as Scout with
/// 128 routed experts on every other layer (interleave_moe_layer_step 2), dense MLP 16384 on the
/// others, context 1048576, no QK norm (use_qk_norm false; Megatron-Bridge's
/// Llama4Experts128ModelProvider qk_l2_norm False).
inline constexpr transformer llama4_maverick{
    .name = "llama4-maverick", .layers = 48, .hidden = 5120, .heads = 40, .kv_heads = 8, .ffn = 16384,
    .vocab = 202048, .max_seq = 1048576, .experts = 128, .experts_per_token = 1, .gated_mlp = true,
    .source = "Meta 2025, Llama 4 Maverick model card; HF meta-llama/Llama-4-Maverick-17B-128E config.json (text_config)",
    .expert_ffn = 8192, .shared_experts = 1, .dense_layers = 24, .sliding_window = 8192, .sliding_layers = 36,
    .chunked_attention = true, .nope_layers = 12, .dropout = false};

/// Gemma 2 9B and 27B: Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical
/// Size", Table 1 and section 2 (GeGLU, head_dim 256 for 9B and 128 for 27B, sliding windows of
/// 4,096 on every other layer, the first local; pre- and post-norms; attention and final logit
/// soft-caps 50 and 30), with the HF google/gemma-2-9b and google/gemma-2-27b config.json (vocab
/// 256,000, tied, context 8,192). Their non-embedding parameters are the report's Table 2 exactly:
/// 8,324,201,984 and 26,047,480,320 (tests/unit/predict/gemma.cpp).
inline constexpr transformer gemma2_9b{
    .name = "gemma2-9b", .layers = 42, .hidden = 3584, .heads = 16, .kv_heads = 8, .ffn = 14336,
    .vocab = 256000, .max_seq = 8192, .gated_mlp = true, .tied_embeddings = true,
    .source = "Gemma Team 2024, Gemma 2 report, Tables 1-2; HF google/gemma-2-9b config.json",
    .head_dim_override = 256, .sliding_window = 4096, .sliding_layers = 21, .post_norms = true,
    .attn_logit_softcapping = 50.0, .final_logit_softcapping = 30.0, .dropout = false};
inline constexpr transformer gemma2_27b{
    .name = "gemma2-27b", .layers = 46, .hidden = 4608, .heads = 32, .kv_heads = 16, .ffn = 36864,
    .vocab = 256000, .max_seq = 8192, .gated_mlp = true, .tied_embeddings = true,
    .source = "Gemma Team 2024, Gemma 2 report, Tables 1-2; HF google/gemma-2-27b config.json",
    .head_dim_override = 128, .sliding_window = 4096, .sliding_layers = 23, .post_norms = true,
    .attn_logit_softcapping = 50.0, .final_logit_softcapping = 30.0, .dropout = false};

/// GPT-3 5B as NeMo and Megatron-Core benchmark it (NVIDIA NeMo performance tables): NeMo
/// `nemo/collections/llm/gpt/model/base.py` GPTConfig5B (24 layers, 4096, 32 heads, FFN 16384,
/// sequence 2048); GPT-3 architecture otherwise (GPT-2 tokenizer, learned positions, tied, biases).
inline constexpr transformer gpt3_5b{
    .name = "gpt3-5b", .layers = 24, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn = 16384,
    .vocab = 50257, .max_seq = 2048, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "NeMo nemo/collections/llm/gpt/model/base.py GPTConfig5B (NeMo performance tables' GPT3-5B)"};

/// GPT-3 20B as NeMo benchmarks it: NeMo `nemo/collections/llm/gpt/model/base.py` GPTConfig20B
/// (44 layers, 6144, 48 heads, FFN 24576, sequence 2048); GPT-3 architecture otherwise.
inline constexpr transformer gpt3_20b{
    .name = "gpt3-20b", .layers = 44, .hidden = 6144, .heads = 48, .kv_heads = 48, .ffn = 24576,
    .vocab = 50257, .max_seq = 2048, .tied_embeddings = true, .learned_positions = true, .biases = true,
    .source = "NeMo nemo/collections/llm/gpt/model/base.py GPTConfig20B (NeMo performance tables' GPT3-20B)"};

/// Nemotron-4 340B: NVIDIA 2024, Nemotron-4 340B Technical Report, Table 1 (96 layers, hidden
/// 18432, 96 attention heads, 8 KV heads, sequence 4096, vocabulary 256000, squared-ReLU MLP,
/// untied embeddings); FFN 73728 from NeMo `nemo/collections/llm/gpt/model/nemotron.py`
/// Nemotron4Config340B.
inline constexpr transformer nemotron4_340b{
    .name = "nemotron4-340b", .layers = 96, .hidden = 18432, .heads = 96, .kv_heads = 8, .ffn = 73728,
    .vocab = 256000, .max_seq = 4096,
    .source = "NVIDIA 2024, Nemotron-4 340B Technical Report, Table 1; NeMo Nemotron4Config340B; no dropout "
              "(NeMo-Framework-Launcher conf/training/nemotron/nemotron_340b.yaml: hidden_dropout, attention_dropout 0)",
    .dropout = false};

/// Nemotron-H 8B (8B parameters, Nemotron-H model card; 8.10B counted): NVIDIA 2025, "Nemotron-H:
/// A Family of Accurate and Efficient Hybrid Mamba-Transformer Models" (arXiv 2504.03624); HF
/// nvidia/Nemotron-H-8B-Base-8K config.json (tests/data/hf-configs/ORIGIN.md): 52 layers = 24
/// Mamba-2 + 24 MLP + 4 attention, hidden 4096, 32 heads, 8 KV heads, squared-ReLU MLP 21504,
/// Mamba-2 128 heads x 64, state 128, 8 groups, conv 4, chunk 128, vocab 131072, untied, no dropout.
inline constexpr hybrid_shape nemotron_h_8b_hybrid{
    .pattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", .mamba_heads = 128,
    .mamba_head_dim = 64, .ssm_state = 128, .mamba_groups = 8, .conv_kernel = 4, .ssm_chunk = 128};
inline constexpr transformer nemotron_h_8b{
    .name = "nemotron-h-8b", .layers = 52, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn = 21504,
    .vocab = 131072, .max_seq = 8192,
    .source = "NVIDIA 2025, Nemotron-H technical report (arXiv 2504.03624); HF nvidia/Nemotron-H-8B-Base-8K config.json",
    .dropout = false, .hybrid = &nemotron_h_8b_hybrid};

/// Nemotron-H 47B (47B parameters, model card), distilled from 56B: HF nvidia/Nemotron-H-47B-Base-8K;
/// shape of Megatron-Bridge `recipes/nemotronh/h100/nemotronh.py` nemotronh_47b_pretrain_8gpu_h100_bf16_config
/// and Megatron-LM examples/post_training/modelopt/conf/nvidia/Nemotron-H-47B-Reasoning-128K.sh: 98
/// layers = 45 Mamba-2 + 48 MLP + 5 attention, hidden 8192, 64 heads x 128, 8 KV heads, MLP 30720,
/// Mamba-2 256 heads x 64, state 256, 8 groups, vocab 131072.
inline constexpr hybrid_shape nemotron_h_47b_hybrid{
    .pattern = "M-M-M-M-M-M-M-M-M*-M-M-M-M-M-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-M-M---MM---M-M*-M-M-M-M-M-",
    .mamba_heads = 256, .mamba_head_dim = 64, .ssm_state = 256, .mamba_groups = 8, .conv_kernel = 4, .ssm_chunk = 128};
inline constexpr transformer nemotron_h_47b{
    .name = "nemotron-h-47b", .layers = 98, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 30720,
    .vocab = 131072, .max_seq = 8192,
    .source = "NVIDIA 2025, Nemotron-H technical report; HF nvidia/Nemotron-H-47B-Base-8K; Megatron-Bridge nemotronh_47b recipe",
    .dropout = false, .hybrid = &nemotron_h_47b_hybrid};

/// Nemotron-H 56B (56B parameters, model card; 56.32B counted): HF nvidia/Nemotron-H-56B-Base-8K;
/// shape of Megatron-Bridge nemotronh_56b_pretrain_8gpu_h100_bf16_config and Megatron-LM
/// examples/post_training/modelopt/conf/nvidia/Nemotron-H-56B-Base-8K.sh: 118 layers = 54 Mamba-2 +
/// 54 MLP + 10 attention (the ADLR Nemotron-H page), hidden 8192, 64 heads x 128, 8 KV heads, MLP
/// 32768, Mamba-2 256 heads x 64, state 256, 8 groups, vocab 131072.
inline constexpr hybrid_shape nemotron_h_56b_hybrid{
    .pattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-"
               "M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    .mamba_heads = 256, .mamba_head_dim = 64, .ssm_state = 256, .mamba_groups = 8, .conv_kernel = 4, .ssm_chunk = 128};
inline constexpr transformer nemotron_h_56b{
    .name = "nemotron-h-56b", .layers = 118, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 32768,
    .vocab = 131072, .max_seq = 8192,
    .source = "NVIDIA 2025, Nemotron-H technical report; HF nvidia/Nemotron-H-56B-Base-8K; Megatron-Bridge nemotronh_56b recipe",
    .dropout = false, .hybrid = &nemotron_h_56b_hybrid};

/// Nemotron 3 Nano 30B-A3B (31.6B total, 3.6B active with the embeddings, 3.2B without the input
/// table: NVIDIA's Nemotron 3 announcement; 30B / 3.5B on the model card): HF
/// nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json (tests/data/hf-configs/ORIGIN.md): 52 layers = 23 Mamba-2 + 23 MoE + 6 attention,
/// hidden 2688, 32 heads x 128, 2 KV heads, 128 routed experts of 1856 top-6 + a shared MLP of
/// 3712 (two expert widths), squared ReLU, Mamba-2 64 heads x 64, state 128, 8 groups, vocab 131072.
inline constexpr hybrid_shape nemotron3_nano_hybrid{
    .pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", .mamba_heads = 64, .mamba_head_dim = 64,
    .ssm_state = 128, .mamba_groups = 8, .conv_kernel = 4, .ssm_chunk = 128};
inline constexpr transformer nemotron3_nano{
    .name = "nemotron3-nano-30b-a3b", .layers = 52, .hidden = 2688, .heads = 32, .kv_heads = 2, .ffn = 1856,
    .vocab = 131072, .max_seq = 262144, .experts = 128, .experts_per_token = 6,
    .source = "NVIDIA 2025, Nemotron 3 Nano technical report; HF nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json",
    .head_dim_override = 128, .shared_experts = 2, .dropout = false, .hybrid = &nemotron3_nano_hybrid};

/// Nemotron 3 Super 120B-A12B (120B total, 12B active: NVIDIA's Nemotron 3 Super technical
/// report and model card): LatentMoE in a hybrid Mamba-Transformer, the shape of Megatron-LM
/// examples/post_training/modelopt/conf/nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16.sh and
/// tests/functional_tests/test_cases/nemotron/nemotron3_super_release_gb200/model_config.yaml (at
/// d98e8a64dd): 88 layers = 40 Mamba-2 + 40 MoE + 8 attention, hidden 4096, 32 heads x 128
/// (kv-channels), 2 query groups, 512 routed experts of 2688 top-22 in a latent width of 1024
/// (--moe-latent-size) + a shared MLP of 5376 (two expert widths), squared ReLU, Mamba-2 128
/// heads x 64 (Megatron's defaults: state 128, 8 groups), vocab 131072, untied, no dropout, no
/// position embedding; one MTP module of an attention and an MoE block (HF
/// num_nextn_predict_layers 1, mtp_hybrid_override_pattern "*E") trained as 2 depths
/// (--mtp-num-layers 2 over the repeated module in that release configuration and in Megatron-Bridge's
/// recipes/nemotronh/h100/nemotron_3_super.py, mtp_use_repeated_layer); 1M-token context (model card).
inline constexpr hybrid_shape nemotron3_super_hybrid{
    .pattern = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
    .mamba_heads = 128, .mamba_head_dim = 64, .ssm_state = 128, .mamba_groups = 8, .conv_kernel = 4, .ssm_chunk = 128};
inline constexpr transformer nemotron3_super{
    .name = "nemotron3-super-120b-a12b", .layers = 88, .hidden = 4096, .heads = 32, .kv_heads = 2, .ffn = 2688,
    .vocab = 131072, .max_seq = 1048576, .experts = 512, .experts_per_token = 22,
    .source = "NVIDIA 2026, Nemotron 3 Super technical report; Megatron-LM modelopt conf NVIDIA-Nemotron-3-Super-120B-A12B-BF16.sh",
    .head_dim_override = 128, .shared_experts = 2, .mtp_layers = 1, .moe_latent = 1024, .mtp_depths = 2, .dropout = false,
    .hybrid = &nemotron3_super_hybrid};

/// Nemotron 3 Ultra 550B-A55B (the name's 550B total, 55B active): LatentMoE in a hybrid
/// Mamba-Transformer, the shape of Megatron-LM
/// examples/post_training/modelopt/conf/nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh (at
/// d98e8a64dd): 108 layers = 48 Mamba-2 + 48 MoE + 12 attention, hidden 8192, 64 heads x 128, 2
/// query groups, 512 routed experts of 5120 top-22 in a latent width of 2048 + a shared MLP of
/// 10240 (two expert widths), squared ReLU, Mamba-2 256 heads x 64 (state 128, 8 groups:
/// Megatron's defaults), untied, no dropout, no position embedding; one MTP module trained as 2
/// depths (Megatron-Bridge recipes/nemotronh/h100/nemotron_3_ultra.py: mtp_num_layers 2,
/// mtp_use_repeated_layer). The vocabulary, which that configuration does not state, is taken as
/// the Nemotron 3 family's 131072 (Nano, Super): 549.3B total and 55.0B active without the input
/// table then match the name (a 262144 vocabulary would give 551.5B and 56.1B).
inline constexpr hybrid_shape nemotron3_ultra_hybrid{
    .pattern = "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    .mamba_heads = 256, .mamba_head_dim = 64, .ssm_state = 128, .mamba_groups = 8, .conv_kernel = 4, .ssm_chunk = 128};
inline constexpr transformer nemotron3_ultra{
    .name = "nemotron3-ultra-550b-a55b", .layers = 108, .hidden = 8192, .heads = 64, .kv_heads = 2, .ffn = 5120,
    .vocab = 131072, .max_seq = 1048576, .experts = 512, .experts_per_token = 22,
    .source = "Megatron-LM modelopt conf NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh; Megatron-Bridge nemotron_3_ultra recipe (MTP); vocabulary 131072 assumed",
    .head_dim_override = 128, .shared_experts = 2, .mtp_layers = 1, .moe_latent = 2048, .mtp_depths = 2, .dropout = false,
    .hybrid = &nemotron3_ultra_hybrid};

/// MPT 125M-70B (MosaicML): the model section of llm-foundry's pretraining yamls
/// (scripts/train/yamls/pretrain/mpt-*.yaml at commit 8c8dd48f, the commit of the benchmark table in
/// data/calibration/); MPTConfig defaults: ALiBi (no positions), no biases, tied embeddings, a plain
/// 4h GELU MLP, emb_pdrop and resid_pdrop 0 (no dropout). Some yamls change the heads so that d_head is 128 for FlashAttention (760m, 1b, 3b).
inline constexpr transformer mpt_125m{
    .name = "mpt-125m", .layers = 12, .hidden = 768, .heads = 12, .kv_heads = 12, .ffn = 3072,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-125m.yaml @ 8c8dd48f (d_model 768, n_heads 12, n_layers 12, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_350m{
    .name = "mpt-350m", .layers = 24, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn = 4096,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-350m.yaml @ 8c8dd48f (d_model 1024, n_heads 16, n_layers 24, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_760m{
    .name = "mpt-760m", .layers = 24, .hidden = 1536, .heads = 12, .kv_heads = 12, .ffn = 6144,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-760m.yaml @ 8c8dd48f (d_model 1536, n_heads 12, n_layers 24, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_1b{
    .name = "mpt-1b", .layers = 24, .hidden = 2048, .heads = 16, .kv_heads = 16, .ffn = 8192,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-1b.yaml @ 8c8dd48f (d_model 2048, n_heads 16, n_layers 24, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_3b{
    .name = "mpt-3b", .layers = 32, .hidden = 2560, .heads = 20, .kv_heads = 20, .ffn = 10240,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-3b.yaml @ 8c8dd48f (d_model 2560, n_heads 20, n_layers 32, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_7b{
    .name = "mpt-7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn = 16384,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-7b.yaml @ 8c8dd48f (d_model 4096, n_heads 32, n_layers 32, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_13b{
    .name = "mpt-13b", .layers = 40, .hidden = 5120, .heads = 40, .kv_heads = 40, .ffn = 20480,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-13b.yaml @ 8c8dd48f (d_model 5120, n_heads 40, n_layers 40, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_30b{
    .name = "mpt-30b", .layers = 48, .hidden = 7168, .heads = 56, .kv_heads = 56, .ffn = 28672,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-30b.yaml @ 8c8dd48f (d_model 7168, n_heads 56, n_layers 48, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};
inline constexpr transformer mpt_70b{
    .name = "mpt-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 64, .ffn = 32768,
    .vocab = 50368, .max_seq = 2048, .tied_embeddings = true,
    .source = "llm-foundry scripts/train/yamls/pretrain/mpt-70b.yaml @ 8c8dd48f (d_model 8192, n_heads 64, n_layers 80, expansion_ratio 4, vocab_size 50368, max_seq_len 2048; MPTConfig: ALiBi, no_bias, tied embeddings)",
    .alibi = true, .dropout = false};

}  // namespace models

/// @brief Every preset, in the order of CLI.md.
inline constexpr auto model_presets = std::to_array<transformer>({
    models::gpt2_large, models::gpt3_175b,  models::llama2_7b,   models::llama2_13b,  models::llama2_70b,
    models::llama3_8b,  models::llama3_70b, models::llama3_405b, models::opt_175b,    models::bloom_176b,
    models::mt_nlg_530b, models::megatron_1t, models::gpt3_5b,   models::gpt3_20b,    models::nemotron4_340b,
    models::mixtral_8x7b, models::mixtral_8x22b, models::deepseek_v3,
    models::kimi_k2, models::qwen3_30b_a3b, models::qwen3_235b_a22b, models::qwen3_next_80b_a3b, models::gpt_oss_120b,
    models::llama4_scout,
    models::llama4_maverick, models::gemma2_9b, models::gemma2_27b, models::nemotron_h_8b, models::nemotron_h_47b, models::nemotron_h_56b,
    models::nemotron3_nano, models::nemotron3_super, models::nemotron3_ultra, models::mpt_125m, models::mpt_350m, models::mpt_760m, models::mpt_1b,
    models::mpt_3b, models::mpt_7b, models::mpt_13b, models::mpt_30b, models::mpt_70b});

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
