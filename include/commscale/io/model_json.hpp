#pragma once
/// @file io/model_json.hpp
/// @brief Transformer shapes from a Hugging Face `config.json`, so users can point at the config
/// of the model they train. Keys read (first present wins):
///   layers     num_hidden_layers | n_layer
///   hidden     hidden_size | n_embd | d_model
///   heads      num_attention_heads | n_head
///   kv_heads   num_key_value_heads | num_kv_heads   (default: heads, i.e. no GQA)
///   ffn        intermediate_size | ffn_dim | n_inner  (default, or null: 4 x hidden)
///   vocab      vocab_size
///   max_seq    max_position_embeddings | n_positions | seq_length  (default 2048, e.g. ALiBi models)
///   experts    num_local_experts | n_routed_experts | num_experts (default 1), experts_per_token
///              num_experts_per_tok | experts_per_token (default 1)
///   MoE        expert_ffn moe_intermediate_size (Llama 4: intermediate_size, dense ffn
///              intermediate_size_mlp), shared_experts n_shared_experts (Llama 4: 1; Qwen2-MoE:
///              shared_expert_intermediate_size / moe_intermediate_size), dense_layers
///              if given, else from first_k_dense_replace + moe_layer_freq (DeepSeek, Kimi),
///              decoder_sparse_step + mlp_only_layers (Qwen-MoE), interleave_moe_layer_step (Llama 4)
///   MTP        mtp_layers num_nextn_predict_layers (DeepSeek-V3); a hybrid model's module is
///              an attention and an MoE (or MLP) block: mtp_hybrid_override_pattern "*E" ("*-")
///              mtp_depths mtp_num_layers (Megatron-Core's depths over repeated modules)
///   latent     moe_latent moe_latent_size (LatentMoE, Nemotron 3 Super; null: none)
///   MLA        kv_lora_rank (present: multi-head latent attention), q_lora_rank (null: full
///              rank), qk_nope_head_dim, qk_rope_head_dim, v_head_dim (DeepSeek-V2/V3, Kimi K2)
///   sliding    sliding_layers if given, else the sliding_attention (or chunked_attention) entries
///              of layer_types, else the family's layout (gpt_oss and gemma2 every other layer;
///              gemma3, mistral, qwen2: below); window sliding_window (Llama 4: its chunked
///              attention, attention_chunk_size, on the RoPE layers)
///   chunked    chunked_attention if given, else true for chunked_attention entries of layer_types
///              and for Llama 4 with attention_chunk_size: the windowed layers attend within fixed
///              chunks
///   NoPE       nope_layers if given; else for Llama 4 the 0 entries of no_rope_layers, or every
///              no_rope_layer_interval-th layer (default 4); 0 otherwise
///   QK L2 norm qk_l2_norm (Megatron-Core's --qk-l2-norm) if given; else use_qk_norm for Llama 4
///              (default true); false otherwise
///   sinks      attention_sinks (default true for gpt_oss)
///   gate       attention_output_gate (Megatron-Core's --attention-output-gate; default true for
///              qwen3_next, whose q_proj is twice the query width)
///   QK norm    qk_layernorm (Megatron-Core's --qk-layernorm; default true for qwen3, qwen3_moe and
///              qwen3_next, gemma3_text, olmo2 and olmoe, whose attention has q_norm and k_norm, and
///              for glm4_moe with use_qk_norm)
///   post-norms post_norms if given; else true for gemma2 and gemma3_text (a norm on each residual
///              branch's output: post_attention_layernorm, post_feedforward_layernorm)
///   soft-caps  attn_logit_softcapping, final_logit_softcapping (0 or null: none; for gemma2 where
///              absent Gemma2Config's 50 and 30)
///   YaRN       rope_attention_factor if given; else for rope_scaling of rope_type (or type) "yarn"
///              its attention_factor, or Hugging Face's default from its factor (transformers
///              modeling_rope_utils `_compute_yarn_parameters`: get_mscale(factor, mscale) /
///              get_mscale(factor, mscale_all_dim) when both are given and non-zero, else
///              get_mscale(factor), get_mscale(s, m) = 0.1 m ln s + 1 for s > 1, else 1); 1 otherwise
///   dropout    dropout (true/false) if given; else hidden_dropout, resid_pdrop or
///              hidden_dropout_prob > 0; else false for the families trained without it (llama,
///              llama4_text, gemma, gemma2, gemma3_text, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2,
///              deepseek_v3, kimi_k2, gpt_oss, mpt, nemotron: transformers' NemotronConfig has no
///              residual dropout, and NeMo's Nemotron-3/4 training configs set hidden_dropout 0), true otherwise
///   tied       tie_word_embeddings (default: the family's transformers config class, below)
///   gated MLP  gated_mlp if given; else model_type in the SwiGLU families (llama, mistral, mixtral,
///              qwen2, gemma, ...) or hidden_act/activation_function silu/swiglu/geglu
///   positions  learned_positions if given; else model_type gpt2/opt/gpt_neo/... or n_positions present
///   biases     biases if given; else attention_bias; else use_bias for starcoder2 (default true);
///              else model_type gpt2/opt/bloom/gpt_neox/...
///   name       name | _name_or_path (default: the file's stem or "custom"); source (optional)
///   head_dim   head_dim | attention_head_dim (Gemma, Qwen3, Nemotron, Nemotron-H; default hidden / heads)
///   hybrid     hybrid_override_pattern (Nemotron-H, Nemotron 3: M Mamba-2, * attention, - MLP, E
///              MoE, one symbol per layer), or for nemotron_h a per-layer layers_block_type list
///              ("mamba", "attention", "mlp", "moe"); then the Mamba-2 mixer: mamba_num_heads
///              (default expand x hidden / mamba_head_dim), mamba_head_dim (64), ssm_state_size
///              (128), n_groups (8), conv_kernel (4), chunk_size (128), the defaults of HF's
///              NemotronHConfig; the MoE layers' shared experts from
///              moe_shared_expert_intermediate_size / moe_intermediate_size. moe_latent_size
///              (Nemotron 3 Super's latent MoE) is rejected: not modelled.
/// Family specifics by `model_type` (their configuration_*.py in Hugging Face transformers, or
/// the model's own config class):
///   mpt        n_layers, n_heads, d_model, ffn = expansion_ratio x d_model (default 4),
///              max_seq_len, ALiBi (attn_config.alibi, default true), no biases (no_bias, default true)
///   bloom      n_layer, n_head, n_embed | hidden_size, ALiBi, biases, 4h MLP
///   falcon     num_kv_heads (new_decoder_architecture) or multi_query (1 K/V head), ffn_hidden_size
///              (default 4h), parallel_attn (default true), alibi (default false), bias (default false)
///   gptj       n_embd, n_layer, n_head, n_inner (null: 4h), rotary, parallel attention+MLP, biases
///   gpt_neox   use_parallel_residual (default true), rotary, biases, untied embeddings
///   gpt2, opt  learned positions, biases, plain MLP (OPT: ffn_dim)
///   gemma, gemma2, gemma3_text, qwen3, phi3, llama, mistral, qwen2: gated MLP, rotary (head_dim
///              where given)
///   nemotron   plain squared-ReLU MLP (hidden_act relu2), rotary, head_dim
///   deepseek_v3, kimi_k2  MLA, routed + shared experts, leading dense layers, MTP
///   qwen3_moe  num_experts, moe_intermediate_size, head_dim
///   gpt_oss    num_local_experts, experts_per_token, head_dim, alternating sliding/full attention,
///              attention sinks, biases (attention_bias) in attention, experts and router
///   mixtral    num_local_experts, num_experts_per_tok
///   dbrx       d_model, n_heads, n_layers, max_seq_len; attn_config.kv_n_heads; ffn_config
///              ffn_hidden_size, moe_num_experts, moe_top_k (DbrxConfig's defaults where absent):
///              GLU experts on every layer, untied embeddings
///   llama4     the text_config object: interleaved MoE and dense layers, one shared expert
///   gemma2     sliding_window (default 4096) on every other layer, the first one local
///   gemma3     the text_config object (gemma3_text: vocab_size 262,208 and head_dim 256 where
///              absent, Gemma3TextConfig's defaults): GeGLU, QK norm, sliding_window (default
///              4096) on all but every sliding_window_pattern-th layer (default 6: 5 local, 1 global)
///   mistral, mixtral, starcoder2: sliding_window (Mistral 7B v0.1 and StarCoder2: 4,096; null in
///              Mixtral's and later Mistral configs) on every layer
///   qwen2, qwen3 (and their MoE types): with use_sliding_window, sliding_window on the layers
///              from max_window_layers (default 28) on
///   nemotron_h hybrid Mamba-Transformer (above), squared-ReLU MLPs (mlp_hidden_act relu2, not
///              gated), untied embeddings and no dropout by default (NemotronHConfig)
///   qwen3_next Gated DeltaNet and attention layers (layer_types, else full_attention_interval)
///              each before an MoE or MLP block, read into a hybrid pattern of two symbols per
///              layer (above); linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
///              linear_value_head_dim, linear_conv_kernel_dim (HF Qwen3NextConfig's defaults)
/// Not modelled, and refused with an input_error naming model_type or the key (never read as a
/// plain transformer): other linear attention (the Qwen3.5 family, Kimi Linear, MiniMax; layer_types
/// entries other than full, sliding or chunked attention outside qwen3_next), hybrids without a
/// hybrid pattern (Jamba, Zamba, Bamba, Falcon-H1, ...) and recurrent models (Mamba, RWKV):
/// detail::reject_unmodelled_mixers.
/// Every other key is ignored (real configs carry dozens), but a key above with a wrong type or
/// an impossible value (heads not dividing hidden, a negative size) is an input_error naming
/// its path, e.g. `model.num_attention_heads: expected a divisor of hidden (4096), got 30`.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../detail/intern.hpp"
#include "../error.hpp"
#include "../workload/transformer.hpp"
#include "file.hpp"
#include "json_reader.hpp"

namespace commscale::io {

namespace detail {

/// The first of `keys` present (non-null) in the object, or nullptr.
[[nodiscard]] inline const char* first_key(const json_reader& r, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        if (r.has(k)) return k;
    return nullptr;
}

[[nodiscard]] inline bool one_of(std::string_view v, std::initializer_list<std::string_view> set) {
    for (auto s : set)
        if (v == s) return true;
    return false;
}

/// Model types whose MLP is gated (SwiGLU / GeGLU) in Hugging Face transformers.
[[nodiscard]] inline bool gated_model_type(std::string_view type) {
    return one_of(type, {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3",
                         "olmo", "olmo2", "olmoe", "deepseek", "deepseek_v2", "deepseek_v3", "kimi_k2", "internlm2", "yi", "granite",
                         "cohere", "qwen3_moe", "qwen3_next", "gpt_oss", "llama4", "llama4_text"});
}

/// Architectures whose token mixers the library does not price, by model_type (Hugging Face
/// transformers' model directories): linear attention (the Qwen3.5 family, whose Gated DeltaNet
/// layouts are not read here; kimi_linear, MiniMax's lightning attention), hybrids laid out
/// otherwise than a hybrid_override_pattern (Jamba, Zamba, Bamba, Falcon-H1, Granite 4.0's
/// hybrid MoE, RecurrentGemma, LFM2's convolutions) and pure recurrent models (Mamba, Mamba-2, RWKV).
/// Read as a plain transformer, each would be priced as softmax attention in every layer.
[[nodiscard]] inline bool unmodelled_mixer_type(std::string_view type) {
    return one_of(type, {"qwen3_5", "qwen3_5_moe", "kimi_linear", "minimax", "minimax_m1", "jamba",
                         "zamba", "zamba2", "bamba", "falcon_h1", "falcon_mamba", "granitemoehybrid",
                         "recurrent_gemma", "lfm2", "mamba", "mamba2", "rwkv", "rwkv5", "rwkv6", "rwkv7"});
}

/// An input_error for a config.json whose layers mix tokens otherwise than softmax attention
/// (full, sliding-window or chunked), a hybrid pattern's Mamba-2 and Gated DeltaNet mixers and
/// qwen3_next's layers: by model_type, or, for a type this list does not know, by the keys those
/// configs carry (Qwen3-Next's full_attention_interval and linear_* sizes, Kimi Linear's
/// linear_attn_config, Jamba's attn_layer_period, Zamba's and Falcon-H1's Mamba sizes outside a
/// hybrid pattern). layer_types entries are checked where they are read.
inline void reject_unmodelled_mixers(const json_reader& r, const std::string& type) {
    const std::string accepted =
        "softmax-attention layers (full, sliding-window, chunked), a hybrid_override_pattern of Mamba-2 (M), Gated "
        "DeltaNet (G) and attention layers, or model_type qwen3_next; other linear-attention and recurrent mixers "
        "are not modelled";
    if (unmodelled_mixer_type(type))
        throw input_error(r.field("model_type"), "\"" + type + "\"", accepted);
    if (r.has("hybrid_override_pattern") || type == "nemotron_h" || type == "qwen3_next") return;  // read below
    for (const char* key : {"full_attention_interval", "linear_num_value_heads", "linear_num_key_heads",
                            "linear_attn_config", "attn_layer_period", "attn_layer_offset", "mamba_d_state",
                            "mamba_d_ssm", "ssm_state_size", "mamba_num_heads"})
        if (r.has(key)) throw input_error(r.field(key), "present", accepted);
}

/// Qwen-MoE's and Qwen3-Next's mlp_only_layers: which of `layers` layers keep a dense MLP (an
/// input_error naming the entry for an index outside [0, layers)).
[[nodiscard]] inline std::vector<bool> mlp_only_layers(const json_reader& r, int layers) {
    std::vector<bool> dense(static_cast<std::size_t>(layers), false);
    if (!r.has("mlp_only_layers")) return dense;
    const auto& arr = r.array("mlp_only_layers");
    for (std::size_t i = 0; i < arr.size(); ++i) {
        if (!arr[i].is_number_integer() || arr[i].get<long long>() < 0 || arr[i].get<long long>() >= layers)
            throw input_error(r.field("mlp_only_layers") + "[" + std::to_string(i) + "]", arr[i].dump(),
                              "a layer index in [0, " + std::to_string(layers - 1) + "]");
        dense[arr[i].get<std::size_t>()] = true;
    }
    return dense;
}

}  // namespace detail

/// @brief Reads a transformer from a Hugging Face config.json object (keys in the file comment).
/// Errors name `path.<key>`. `fallback_name` is used when the JSON has no name.
[[nodiscard]] inline transformer model_from_json(const nlohmann::json& j, const std::string& path = "model",
                                                 std::string_view fallback_name = "custom") {
    const json_reader r(j, path);
    // Llama 4 and Gemma 3: the language model's shape sits in text_config (Llama4Config,
    // Gemma3Config); name, source and tie_word_embeddings are the outer file's. Read as
    // llama4_text / gemma3_text (one level, never recursing).
    const std::string type = r.has("model_type") ? r.string("model_type") : std::string();
    if ((type == "llama4" || type == "gemma3") && r.has("text_config")) {
        (void)r.object("text_config");  // an input_error naming the field unless an object
        nlohmann::json text = j.at("text_config");
        text["model_type"] = type + "_text";
        for (const char* k : {"name", "_name_or_path", "source", "tie_word_embeddings"})
            if (j.contains(k) && !text.contains(k)) text[k] = j.at(k);
        return model_from_json(text, r.field("text_config"), fallback_name);
    }
    // DBRX keeps its attention and MoE shape in attn_config and ffn_config (transformers
    // configuration_dbrx.py: DbrxAttentionConfig kv_n_heads, default 1; DbrxFFNConfig
    // ffn_hidden_size 3584, moe_num_experts 4, moe_top_k 1; GLU experts; DbrxConfig
    // tie_word_embeddings False, resid_pdrop 0): read there, naming those fields, then as the
    // flat keys of an MoE with every layer routed.
    if (type == "dbrx" && (r.has("attn_config") || r.has("ffn_config"))) {
        nlohmann::json flat = j;
        flat.erase("attn_config");
        flat.erase("ffn_config");
        using lim = model_size_limits;
        if (r.has("attn_config")) {
            const json_reader a = r.object("attn_config");
            flat["num_key_value_heads"] = a.int32_or("kv_n_heads", 1, 1, lim::bounded_count);
        } else {
            flat["num_key_value_heads"] = 1;
        }
        const nlohmann::json none = nlohmann::json::object();
        const json_reader f = r.has("ffn_config") ? r.object("ffn_config") : json_reader(none, r.field("ffn_config"));
        const int width = f.int32_or("ffn_hidden_size", 3584, 1, lim::ffn);
        flat["intermediate_size"] = width;
        flat["moe_intermediate_size"] = width;
        flat["num_local_experts"] = f.int32_or("moe_num_experts", 4, 1, lim::experts);
        flat["num_experts_per_tok"] = f.int32_or("moe_top_k", 1, 1, lim::experts);
        if (!flat.contains("gated_mlp")) flat["gated_mlp"] = true;
        if (!flat.contains("tie_word_embeddings")) flat["tie_word_embeddings"] = false;
        if (!flat.contains("resid_pdrop") && !flat.contains("dropout")) flat["dropout"] = false;
        return model_from_json(flat, path, fallback_name);
    }
    using lim = model_size_limits;  // generous bounds (workload/transformer.hpp), named by the key
    auto int_key = [&](std::initializer_list<const char*> keys, int fallback, bool required,
                       int hi = lim::bounded_count) -> std::pair<int, const char*> {
        const char* k = detail::first_key(r, keys);
        if (!k) {
            if (required) throw input_error(r.field(*keys.begin()), "nothing (missing)", "an integer >= 1");
            return {fallback, nullptr};
        }
        return {r.int32(k, 1, hi), k};
    };
    transformer m;
    detail::reject_unmodelled_mixers(r, type);
    const auto [layers, layers_key] = int_key({"num_hidden_layers", "n_layer", "n_layers"}, 0, true, lim::layers);
    const auto [hidden, hidden_key] = int_key({"hidden_size", "n_embd", "d_model", "n_embed"}, 0, true, lim::hidden);
    const auto [heads, heads_key] = int_key({"num_attention_heads", "n_head", "n_heads"}, 0, true);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    // Gemma 3's text_config lists only what differs from Gemma3TextConfig's defaults, among them
    // head_dim 256 and vocab_size 262,208 (transformers configuration_gemma3.py)
    const bool gemma3 = type == "gemma3_text";
    if (const char* hd = detail::first_key(r, {"head_dim", "attention_head_dim"})) m.head_dim_override = r.int32(hd, 1, lim::hidden);
    else if (gemma3) m.head_dim_override = 256;
    if (m.head_dim_override * m.heads == m.hidden) m.head_dim_override = 0;  // not decoupled
    // hybrid Mamba-Transformer: the layer pattern (Nemotron-H, Nemotron 3)
    std::string pattern;
    const char* pattern_key = nullptr;
    if (r.has("hybrid_override_pattern")) {
        pattern_key = "hybrid_override_pattern";
        pattern = r.string(pattern_key);
    } else if (type == "nemotron_h" && r.has("layers_block_type")) {
        pattern_key = "layers_block_type";
        const auto& arr = r.array(pattern_key);
        for (std::size_t i = 0; i < arr.size(); ++i) {
            const std::string kind = arr[i].is_string() ? arr[i].get<std::string>() : std::string();
            const char c = kind == "mamba"                                   ? 'M'
                           : (kind == "attention" || kind == "full_attention") ? '*'
                           : kind == "mlp"                                     ? '-'
                           : kind == "moe"                                     ? 'E'
                                                                               : '?';
            if (c == '?')
                throw input_error(r.field(pattern_key) + "[" + std::to_string(i) + "]", arr[i].dump(),
                                  "\"mamba\", \"attention\", \"mlp\" or \"moe\"");
            pattern += c;
        }
    } else if (type == "qwen3_next") {
        // Qwen3-Next (HF Qwen3NextConfig): each layer a mixer block, Gated DeltaNet
        // ("linear_attention") or attention ("full_attention") by layer_types or else every
        // full_attention_interval-th layer (default 4), then its MLP block, MoE unless in
        // mlp_only_layers or off decoder_sparse_step; as Megatron-Core's hybrid pattern (G, *,
        // E, -), two symbols per layer
        std::vector<bool> full(static_cast<std::size_t>(m.layers), false);
        if (r.has("layer_types")) {
            pattern_key = "layer_types";
            const auto& arr = r.array(pattern_key);
            if (arr.size() != full.size())
                throw input_error(r.field(pattern_key), std::to_string(arr.size()) + " entries",
                                  "one entry per layer (" + std::to_string(m.layers) + ")");
            for (std::size_t i = 0; i < arr.size(); ++i) {
                const std::string kind = arr[i].is_string() ? arr[i].get<std::string>() : std::string();
                if (kind != "linear_attention" && kind != "full_attention")
                    throw input_error(r.field(pattern_key) + "[" + std::to_string(i) + "]", arr[i].dump(),
                                      "\"linear_attention\" or \"full_attention\"");
                full[i] = kind == "full_attention";
            }
        } else {
            pattern_key = "full_attention_interval";
            const int interval = r.int32_or(pattern_key, 4, 1, m.layers);
            for (std::size_t i = 0; i < full.size(); ++i) full[i] = (i + 1) % static_cast<std::size_t>(interval) == 0;
        }
        const bool moe_model = r.int32_or("num_experts", 0, 0, lim::experts) > 1;
        const int sparse_step = r.int32_or("decoder_sparse_step", 1, 1, m.layers);
        const std::vector<bool> mlp_only = detail::mlp_only_layers(r, m.layers);
        for (std::size_t i = 0; i < full.size(); ++i) {
            pattern += full[i] ? '*' : 'G';
            pattern += moe_model && !mlp_only[i] && (i + 1) % static_cast<std::size_t>(sparse_step) == 0 ? 'E' : '-';
        }
        if (m.layers > lim::layers / 2)
            throw input_error(r.field(layers_key), std::to_string(m.layers), "at most " + std::to_string(lim::layers / 2) + " layers");
        m.layers = static_cast<int>(pattern.size());  // blocks, as a hybrid pattern counts them
    }
    const bool hybrid = pattern_key != nullptr;
    hybrid_shape shape;  // interned into m.hybrid once the mixer's sizes are read (below)
    if (hybrid) {
        if (pattern.empty()) throw input_error(r.field(pattern_key), "\"\"", "one symbol per layer (" + std::to_string(m.layers) + ")");
        validate_hybrid_pattern(pattern, m.layers, r.field(pattern_key));
        shape.pattern = commscale::detail::intern(pattern);
    }
    if (m.head_dim_override == 0 && m.hidden % m.heads != 0)
        throw input_error(r.field(heads_key), std::to_string(m.heads), "a divisor of hidden (" + std::to_string(m.hidden) + ")");
    // Falcon-7B/40B (multi_query, not new_decoder_architecture): one K/V head
    const bool falcon_mqa = type == "falcon" && r.boolean_or("multi_query", false) &&
                            !r.boolean_or("new_decoder_architecture", false);
    const auto [kv, kv_key] = int_key({"num_key_value_heads", "num_kv_heads"}, falcon_mqa ? 1 : m.heads, false);
    m.kv_heads = falcon_mqa ? 1 : kv;
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        throw input_error(r.field(kv_key), std::to_string(m.kv_heads), "a divisor of heads (" + std::to_string(m.heads) + ")");
    // Llama 4: intermediate_size is an expert's width, intermediate_size_mlp the dense layers'
    const bool llama4 = type == "llama4_text" || type == "llama4";
    const auto [ffn, ffn_key] = llama4 ? int_key({"intermediate_size_mlp", "intermediate_size"}, 0, false, lim::ffn)
                                       : int_key({"intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"}, 0, false, lim::ffn);
    m.ffn = ffn;
    if (m.ffn == 0 && type == "mpt") {
        // MPT: the MLP is expansion_ratio x d_model (llm-foundry MPTConfig, default 4)
        const double ratio =
            r.has("expansion_ratio") ? r.number("expansion_ratio", lim::min_expansion_ratio, lim::max_expansion_ratio) : 4.0;
        m.ffn = static_cast<int>(std::lround(ratio * m.hidden));
    }
    if (m.ffn == 0) m.ffn = 4 * m.hidden;  // GPT-2's n_inner = null means 4 x n_embd (hidden <= 2^20)
    const auto [vocab, vocab_key] = int_key({"vocab_size"}, gemma3 ? 262208 : 0, !gemma3, lim::vocab);
    m.vocab = vocab;
    m.max_seq = int_key({"max_position_embeddings", "n_positions", "seq_length", "max_seq_len"}, 2048, false, lim::max_seq).first;
    // routed experts: Mixtral/GPT-OSS/Llama 4 num_local_experts, DeepSeek/Kimi n_routed_experts,
    // Qwen-MoE num_experts
    const auto [experts, experts_key] = int_key({"num_local_experts", "n_routed_experts", "num_experts"}, 1, false, lim::experts);
    m.experts = experts;
    const auto [k, k_key] = int_key({"num_experts_per_tok", "experts_per_token"}, 1, false);
    m.experts_per_token = k;
    if (m.experts_per_token > m.experts)
        throw input_error(r.field(k_key), std::to_string(k),
                          "an integer in [1, " + std::string(experts_key ? experts_key : "num_local_experts") + " = " +
                              std::to_string(m.experts) + "]");
    if (m.is_moe()) {
        if (llama4) m.expert_ffn = int_key({"intermediate_size"}, 0, false, lim::ffn).first;
        else m.expert_ffn = int_key({"moe_intermediate_size"}, 0, false, lim::ffn).first;
        if (m.expert_ffn == m.ffn) m.expert_ffn = 0;
        // shared experts: DeepSeek/Kimi n_shared_experts; Llama 4 one shared expert per MoE layer
        // (Llama4TextMoe.shared_expert, width intermediate_size)
        m.shared_experts = r.int32_or("n_shared_experts", llama4 ? 1 : 0, 0, lim::experts);
        // Qwen2-MoE: one shared MLP of shared_expert_intermediate_size, a whole number of expert
        // widths in the published configs (Qwen1.5-MoE-A2.7B 5632 = 4 x 1408), counted as that many
        // Nemotron 3: moe_shared_expert_intermediate_size, the shared MLP's whole width (Nano: one
        // shared expert of 3712 = 2 x 1856), counted as that many expert widths
        for (const char* key : {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"}) {
            if (!r.has(key)) continue;
            const int fs = r.int32(key, 0, lim::ffn), fe = m.expert_width();
            if (fs % fe != 0)
                throw input_error(r.field(key), std::to_string(fs), "a multiple of the expert width (" + std::to_string(fe) + ")");
            m.shared_experts = fs / fe;
        }
        // which layers are MoE layers (index i from 0), by each family's modeling code:
        //   DeepSeek-V2/V3, Kimi K2: i >= first_k_dense_replace and i % moe_layer_freq == 0
        //   Qwen2/3-MoE: i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
        //   Llama 4: (i + 1) % interleave_moe_layer_step == 0
        //   others (Mixtral, GPT-OSS): every layer
        if (r.has("dense_layers")) {
            m.dense_layers = r.int32("dense_layers", 0, m.layers - 1);
        } else if (hybrid) {
            m.dense_layers = 0;  // the pattern's E layers are the MoE layers
        } else {
            const int first_dense = r.int32_or("first_k_dense_replace", 0, 0, m.layers - 1);
            const int freq = r.int32_or("moe_layer_freq", 1, 1, m.layers);
            const int sparse_step = r.int32_or("decoder_sparse_step", 1, 1, m.layers);
            const int interleave = llama4 ? r.int32_or("interleave_moe_layer_step", 1, 1, m.layers) : 1;
            const std::vector<bool> mlp_only = detail::mlp_only_layers(r, m.layers);
            int moe = 0;
            for (int i = 0; i < m.layers; ++i) {
                const bool is_moe = i >= first_dense && i % freq == 0 && (i + 1) % sparse_step == 0 && (i + 1) % interleave == 0 &&
                                    !mlp_only[static_cast<std::size_t>(i)];
                moe += is_moe ? 1 : 0;
            }
            if (moe == 0)
                throw input_error(r.field(first_dense > 0 ? "first_k_dense_replace" : "num_hidden_layers"),
                                  std::to_string(first_dense > 0 ? first_dense : m.layers),
                                  "a layout with at least one mixture-of-experts layer");
            m.dense_layers = m.layers - moe;
        }
    }
    m.mtp_layers = r.int32_or("num_nextn_predict_layers", 0, 0, lim::layers);
    // MTP depths trained when the modules repeat (Megatron-Core --mtp-num-layers with
    // --mtp-use-repeated-layer; not a Hugging Face key)
    m.mtp_depths = r.int32_or("mtp_num_layers", 0, m.mtp_layers > 0 ? m.mtp_layers : 1, lim::layers);
    // LatentMoE (Nemotron 3 Super): the routed experts' width in and out; null or absent: none
    if (r.has("moe_latent_size")) {
        m.moe_latent = r.int32_or("moe_latent_size", 0, 1, lim::hidden);
        if (m.moe_latent > 0 && !m.is_moe())
            throw input_error(r.field("moe_latent_size"), std::to_string(m.moe_latent),
                              "null (a latent width needs routed experts: n_routed_experts > 1)");
    }
    // a hybrid model's MTP module: one attention block and one MoE (or MLP) block, the only
    // layout modelled (Nemotron 3 Super's "*E")
    if (hybrid && m.mtp_layers > 0 && r.has("mtp_hybrid_override_pattern")) {
        const std::string mtp_pattern = r.string("mtp_hybrid_override_pattern");
        const std::string expected = m.is_moe() ? "*E" : "*-";
        if (mtp_pattern != expected)
            throw input_error(r.field("mtp_hybrid_override_pattern"), "\"" + mtp_pattern.substr(0, 40) + "\"",
                              "\"" + expected + "\" (an attention block and " +
                                  (m.is_moe() ? std::string("an MoE block") : std::string("an MLP block")) +
                                  ", the MTP layout modelled)");
    }
    if (hybrid && pattern.find('M') != std::string::npos) {
        // Mamba-2 mixer sizes; without a key, HF NemotronHConfig's default
        shape.mamba_head_dim = r.int32_or("mamba_head_dim", 64, 1, lim::hidden);
        if (r.has("mamba_num_heads")) {
            shape.mamba_heads = r.int32("mamba_num_heads", 1, lim::hidden);
        } else {
            const double expand = r.has("expand") ? r.number("expand", lim::min_mamba_expand, lim::max_mamba_expand) : 2.0;
            const double inner = expand * m.hidden;
            if (std::fmod(inner, shape.mamba_head_dim) != 0.0)
                throw input_error(r.field("mamba_head_dim"), std::to_string(shape.mamba_head_dim),
                                  "a divisor of expand x hidden_size (" + commscale::detail::number_text(inner) +
                                      ") without mamba_num_heads");
            shape.mamba_heads = static_cast<int>(inner / shape.mamba_head_dim);
        }
        shape.ssm_state = r.int32_or("ssm_state_size", 128, 1, lim::hidden);
        shape.mamba_groups = r.int32_or("n_groups", 8, 1, lim::hidden);
        shape.conv_kernel = r.int32_or("conv_kernel", 4, 1, lim::conv_kernel);
        shape.ssm_chunk = r.int32_or("chunk_size", 128, 1, lim::ssm_chunk);
        if (shape.mamba_heads % shape.mamba_groups != 0)
            throw input_error(r.field("mamba_num_heads"), std::to_string(shape.mamba_heads),
                              "a multiple of n_groups (" + std::to_string(shape.mamba_groups) + ")");
    }
    if (hybrid && pattern.find('G') != std::string::npos) {
        // Gated DeltaNet mixer sizes; without a key, HF Qwen3NextConfig's default
        shape.gdn_qk_heads = r.int32_or("linear_num_key_heads", 16, 1, lim::hidden);
        shape.gdn_v_heads = r.int32_or("linear_num_value_heads", 32, 1, lim::hidden);
        shape.gdn_qk_head_dim = r.int32_or("linear_key_head_dim", 128, 1, lim::hidden);
        shape.gdn_v_head_dim = r.int32_or("linear_value_head_dim", 128, 1, lim::hidden);
        shape.gdn_conv_kernel = r.int32_or("linear_conv_kernel_dim", 4, 1, lim::conv_kernel);
        if (shape.gdn_v_heads % shape.gdn_qk_heads != 0)
            throw input_error(r.field("linear_num_value_heads"), std::to_string(shape.gdn_v_heads),
                              "a multiple of linear_num_key_heads (" + std::to_string(shape.gdn_qk_heads) + ")");
    }
    if (hybrid) m.hybrid = commscale::detail::intern_value(shape);
    // multi-head latent attention (DeepSeek-V2/V3, Kimi K2): kv_lora_rank present and not null
    if (r.has("kv_lora_rank")) {
        m.kv_lora_rank = r.int32("kv_lora_rank", 1, lim::hidden);
        m.q_lora_rank = r.int32_or("q_lora_rank", 0, 1, lim::hidden);  // null: full-rank query (V2-Lite)
        m.qk_nope_head_dim = r.int32("qk_nope_head_dim", 0, lim::hidden);
        m.qk_rope_head_dim = r.int32("qk_rope_head_dim", 0, lim::hidden);
        m.v_head_dim = r.int32("v_head_dim", 1, lim::hidden);
        if (m.qk_nope_head_dim + m.qk_rope_head_dim < 1)
            throw input_error(r.field("qk_nope_head_dim"), std::to_string(m.qk_nope_head_dim),
                              "qk_nope_head_dim + qk_rope_head_dim >= 1");
    }
    // sliding-window layers: layer_types (GPT-OSS, Gemma, transformers >= 4.53) counts them;
    // GPT-OSS without layer_types alternates, sliding first (GptOssConfig default); Llama 4
    // chunked attention (attention_chunk_size) on its RoPE layers (no_rope_layers[i] = 1; default
    // every fourth layer is a global NoPE layer), counted as a window of one chunk.
    // Llama 4's NoPE layers: no_rope_layers[i] = 0, else every no_rope_layer_interval-th layer
    // (HF Llama4TextConfig: (i + 1) % interval == 0, interval 4)
    if (r.has("nope_layers")) {
        m.nope_layers = r.int32("nope_layers", 0, m.layers);
    } else if (llama4) {
        if (r.has("no_rope_layers")) {
            const auto& arr = r.array("no_rope_layers");
            if (arr.size() != static_cast<std::size_t>(m.layers))
                throw input_error(r.field("no_rope_layers"), std::to_string(arr.size()) + " entries",
                                  "one 0 (NoPE) or 1 (RoPE) per layer (" + std::to_string(m.layers) + ")");
            for (std::size_t i = 0; i < arr.size(); ++i) {
                if (!arr[i].is_number_integer() || (arr[i].get<long long>() != 0 && arr[i].get<long long>() != 1))
                    throw input_error(r.field("no_rope_layers") + "[" + std::to_string(i) + "]", arr[i].dump(),
                                      "0 (a layer without rotary embedding) or 1");
                if (arr[i].get<long long>() == 0) ++m.nope_layers;
            }
        } else {
            m.nope_layers = m.layers / r.int32_or("no_rope_layer_interval", 4, 1, m.layers);
        }
    }
    bool chunked = false;
    if (r.has("sliding_layers")) {
        m.sliding_layers = r.int32("sliding_layers", 0, m.layers);
    } else if (hybrid) {
        // the pattern names every layer's mixer (qwen3_next's layer_types were read above)
    } else if (r.has("layer_types")) {
        const auto& arr = r.array("layer_types");
        if (arr.size() != static_cast<std::size_t>(m.layers))
            throw input_error(r.field("layer_types"), std::to_string(arr.size()) + " entries",
                              "one entry per layer (" + std::to_string(m.layers) + ")");
        bool sliding = false;
        for (std::size_t i = 0; i < arr.size(); ++i) {
            if (!arr[i].is_string())
                throw input_error(r.field("layer_types") + "[" + std::to_string(i) + "]", arr[i].dump(),
                                  "\"sliding_attention\", \"chunked_attention\" or \"full_attention\"");
            const auto t = arr[i].get<std::string>();
            if (t == "sliding_attention") sliding = true;
            else if (t == "chunked_attention") chunked = true;
            else if (t != "full_attention")  // linear_attention (Qwen3-Next) and the like: not modelled
                throw input_error(r.field("layer_types") + "[" + std::to_string(i) + "]", arr[i].dump(),
                                  "\"sliding_attention\", \"chunked_attention\" or \"full_attention\" (linear-attention "
                                  "and other recurrent layers are not modelled)");
            if (t != "full_attention") ++m.sliding_layers;
            if (chunked && sliding)
                throw input_error(r.field("layer_types") + "[" + std::to_string(i) + "]", arr[i].dump(),
                                  "one kind of windowed layer per model: \"sliding_attention\" or \"chunked_attention\"");
        }
    } else if (type == "gpt_oss") {
        m.sliding_layers = (m.layers + 1) / 2;
    } else if (type == "gemma2") {
        // Gemma2Config: sliding on layers i with (i + 1) odd, the first one local
        m.sliding_layers = (m.layers + 1) / 2;
    } else if (type == "gemma3_text") {
        // Gemma3TextConfig: sliding unless (i + 1) % sliding_window_pattern == 0 (5 local : 1 global)
        m.sliding_layers = m.layers - m.layers / r.int32_or("sliding_window_pattern", 6, 1, m.layers);
    } else if (detail::one_of(type, {"mistral", "mixtral", "starcoder2"}) && r.has("sliding_window")) {
        // MistralAttention, MixtralAttention, Starcoder2Attention: the window on every layer
        // (Mistral 7B v0.1 and StarCoder2: 4,096; null in Mixtral's and later Mistral configs)
        m.sliding_layers = m.layers;
    } else if (detail::one_of(type, {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}) && r.boolean_or("use_sliding_window", false) &&
               r.has("sliding_window")) {
        // Qwen2Config / Qwen3Config: the layers from max_window_layers (default 28) on
        m.sliding_layers = std::max(0, m.layers - r.int32_or("max_window_layers", 28, 0, lim::layers));
    } else if (llama4 && r.has("attention_chunk_size")) {
        m.sliding_layers = m.layers - m.nope_layers;  // the RoPE layers
        chunked = true;
    }
    m.chunked_attention = r.boolean_or("chunked_attention", chunked);
    if (m.sliding_layers > 0) {
        const char* w = llama4 && r.has("attention_chunk_size") ? "attention_chunk_size" : "sliding_window";
        if (r.has(w)) m.sliding_window = r.int32(w, 1, lim::max_seq);
        else if (detail::one_of(type, {"gemma2", "gemma3_text"})) m.sliding_window = 4096;  // Gemma2Config's and Gemma3TextConfig's default
        else throw input_error(r.field(w), "nothing (missing)", "the window of the sliding-window layers, an integer >= 1");
    }
    m.attention_sinks = r.boolean_or("attention_sinks", type == "gpt_oss");
    // Llama 4's weightless L2 norm over the query and key of its RoPE layers (use_qk_norm,
    // Llama4TextConfig default true; Maverick's config sets it false)
    m.qk_l2_norm = r.boolean_or("qk_l2_norm", llama4 && r.boolean_or("use_qk_norm", true));
    // Qwen3-Next's q_proj is 2 q wide, the query and the output gate (HF Qwen3NextAttention)
    m.attention_output_gate = r.boolean_or("attention_output_gate", type == "qwen3_next");
    // QK norm by family: each head's query and key in Qwen3 (HF Qwen3Attention q_norm, k_norm),
    // Gemma 3 (Gemma3Attention) and GLM-4.5 where its use_qk_norm says so (Glm4MoeAttention); the
    // whole query and key projections in OLMo 2 and OLMoE (Megatron-Bridge's OlMoEModelProvider
    // qk_layernorm True): the same bytes, their weights counted head_dim wide, a few thousand
    // parameters per layer short
    m.qk_layernorm = r.boolean_or("qk_layernorm", detail::one_of(type, {"qwen3", "qwen3_moe", "qwen3_next", "gemma3_text", "olmo2", "olmoe"}) ||
                                                      (type == "glm4_moe" && r.boolean_or("use_qk_norm", false)));
    // Gemma's post-norms (Gemma2DecoderLayer and Gemma3DecoderLayer post_attention_layernorm,
    // post_feedforward_layernorm) and Gemma 2's soft-caps (Gemma2Config defaults 50 and 30 where the
    // key is absent; null turns one off, as in Gemma 3's config, whose defaults are None)
    const bool gemma2 = type == "gemma2";
    m.post_norms = r.boolean_or("post_norms", gemma2 || type == "gemma3_text");
    const auto softcap = [&](const char* key, double gemma2_default) {
        if (r.has(key)) return r.number(key, 0.0, model_size_limits::max_logit_softcap);
        return gemma2 && !r.present(key) ? gemma2_default : 0.0;
    };
    m.attn_logit_softcapping = softcap("attn_logit_softcapping", 50.0);
    m.final_logit_softcapping = softcap("final_logit_softcapping", 30.0);
    if (r.has("rope_attention_factor")) {
        m.rope_attention_factor = r.number("rope_attention_factor", 1e-9, lim::max_rope_attention_factor);
    } else if (r.has("rope_scaling")) {
        const json_reader rs = r.object("rope_scaling");
        const std::string rope_type = rs.has("rope_type") ? rs.string("rope_type") : rs.string_or("type", "");
        if (rope_type == "yarn") {
            const double factor = rs.number("factor", 1e-9, 1e6);
            const auto get_mscale = [factor](double weight) { return factor <= 1.0 ? 1.0 : 0.1 * weight * std::log(factor) + 1.0; };
            if (rs.has("attention_factor")) {
                m.rope_attention_factor = rs.number("attention_factor", 1e-9, lim::max_rope_attention_factor);
            } else {
                const double ms = rs.number_or("mscale", 0.0, 0.0, 1e6), all = rs.number_or("mscale_all_dim", 0.0, 0.0, 1e6);
                m.rope_attention_factor = ms != 0.0 && all != 0.0 ? get_mscale(ms) / get_mscale(all) : get_mscale(1.0);
            }
        }
    }
    if (r.has("dropout")) {
        m.dropout = r.boolean("dropout");
    } else if (const char* key = r.has("hidden_dropout") ? "hidden_dropout"
                                 : r.has("resid_pdrop")  ? "resid_pdrop"
                                 : r.has("hidden_dropout_prob") ? "hidden_dropout_prob"
                                                                : nullptr) {
        m.dropout = r.number(key, 0.0, 1.0) > 0.0;
    } else {
        m.dropout = !detail::one_of(type, {"llama", "llama4_text", "gemma", "gemma2", "gemma3_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
                                           "qwen3_moe", "qwen3_next", "deepseek_v2", "deepseek_v3", "kimi_k2", "gpt_oss", "mpt",
                                           "nemotron", "nemotron_h"});
    }
    // Without the key, each family's transformers config class decides: LlamaConfig, MistralConfig,
    // MixtralConfig, Qwen2Config, Qwen2MoeConfig, Qwen3Config, Qwen3MoeConfig, DeepseekV3Config,
    // Phi3Config, NemotronConfig, GptOssConfig, Llama4TextConfig, GPTNeoXConfig and GPTJConfig
    // default tie_word_embeddings=False; the others (GPT-2, Gemma, OPT, BLOOM, MPT, Falcon) keep
    // PretrainedConfig's True.
    m.tied_embeddings = r.boolean_or(
        "tie_word_embeddings",
        !detail::one_of(type, {"llama", "llama4_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
                               "deepseek_v3", "kimi_k2", "phi3", "nemotron", "nemotron_h", "gpt_oss", "gpt_neox", "gptj"}));
    const char* act_key = detail::first_key(r, {"hidden_act", "activation_function"});
    const std::string act = act_key ? r.string(act_key) : std::string();
    if (r.has("gated_mlp")) m.gated_mlp = r.boolean("gated_mlp");
    else m.gated_mlp = detail::gated_model_type(type) ||
                       detail::one_of(act, {"silu", "swiglu", "geglu", "swish"});
    if (r.has("learned_positions")) m.learned_positions = r.boolean("learned_positions");
    else m.learned_positions = detail::one_of(type, {"gpt2", "opt", "gpt_neo", "gpt_bigcode", "megatron-gpt"}) ||
                               (type.empty() && r.has("n_positions"));
    if (r.has("biases")) m.biases = r.boolean("biases");
    else if (r.has("attention_bias")) m.biases = r.boolean("attention_bias");
    else if (type == "mpt") m.biases = !r.boolean_or("no_bias", true);
    else if (type == "starcoder2") m.biases = r.boolean_or("use_bias", true);  // Starcoder2Config use_bias
    else if (type == "falcon") m.biases = r.boolean_or("bias", false);
    else m.biases = detail::one_of(type, {"gpt2", "opt", "bloom", "gpt_neox", "gpt_neo", "gpt_bigcode", "gptj", "megatron-gpt"}) ||
                    (type.empty() && r.has("n_embd"));
    // ALiBi: BLOOM always; MPT when attn_config.alibi (default true in MPTConfig); Falcon's alibi flag
    if (r.has("alibi")) m.alibi = r.boolean("alibi");
    else if (type == "bloom") m.alibi = true;
    else if (type == "mpt") {
        m.alibi = true;
        if (r.has("attn_config")) {
            const json_reader ac = r.object("attn_config");
            m.alibi = ac.boolean_or("alibi", true);
        }
    }
    // attention and MLP side by side on the same input
    if (r.has("parallel_attention")) m.parallel_attention = r.boolean("parallel_attention");
    else if (type == "gpt_neox") m.parallel_attention = r.boolean_or("use_parallel_residual", true);
    else if (type == "falcon") m.parallel_attention = r.boolean_or("parallel_attn", true);
    else m.parallel_attention = type == "gptj";

    std::string name(fallback_name);
    if (r.has("name")) name = r.string("name");
    else if (r.has("_name_or_path")) name = r.string("_name_or_path");
    m.name = commscale::detail::intern(name);
    m.source = commscale::detail::intern(r.string_or("source", "Hugging Face config.json"));
    // The total is named by the keys it comes from (validate would say layers, hidden, ...).
    if (const double params = total_parameters(m); !(params <= max_model_parameters)) {
        auto key = [](const char* given, const char* fallback) { return std::string(given ? given : fallback); };
        throw input_error(path,
                          commscale::detail::number_text(params) + " parameters (" + key(layers_key, "num_hidden_layers") +
                              " " + std::to_string(m.layers) + ", " + key(hidden_key, "hidden_size") + " " +
                              std::to_string(m.hidden) + ", " + key(ffn_key, "intermediate_size") + " " +
                              std::to_string(m.ffn) + ", " + key(vocab_key, "vocab_size") + " " + std::to_string(m.vocab) +
                              ", " + key(experts_key, "num_local_experts") + " " + std::to_string(m.experts) + ")",
                          "a model of at most 1e15 parameters");
    }
    validate(m, path);
    return m;
}

/// @brief Reads a model file (Hugging Face config.json); the name defaults to the file's stem.
/// Errors name `field` (e.g. `--model`) for the file and `field.<key>` for its content.
[[nodiscard]] inline transformer load_model_file(const std::string& file, const std::string& field = "model") {
    const auto text = read_file(file, field);
    const auto j = parse_json(text, file);
    return model_from_json(j, field, std::filesystem::path(file).stem().string());
}

/// @brief The model as a Hugging Face-style config.json object, plus `name`, `source` and the
/// explicit flags `gated_mlp`, `learned_positions`, `biases`; model_from_json reads it back to
/// the same value.
[[nodiscard]] inline nlohmann::json model_to_json(const transformer& m) {
    nlohmann::json j;
    j["name"] = std::string(m.name);
    j["num_hidden_layers"] = m.layers;
    j["hidden_size"] = m.hidden;
    j["num_attention_heads"] = m.heads;
    j["num_key_value_heads"] = m.kv_heads;
    j["intermediate_size"] = m.ffn;
    j["vocab_size"] = m.vocab;
    j["max_position_embeddings"] = m.max_seq;
    if (m.experts > 1) {
        j["num_local_experts"] = m.experts;
        j["num_experts_per_tok"] = m.experts_per_token;
    }
    j["tie_word_embeddings"] = m.tied_embeddings;
    j["gated_mlp"] = m.gated_mlp;
    j["learned_positions"] = m.learned_positions;
    j["biases"] = m.biases;
    if (m.head_dim_override > 0) j["head_dim"] = m.head_dim_override;
    if (m.is_moe()) {
        if (m.expert_ffn > 0) j["moe_intermediate_size"] = m.expert_ffn;
        if (m.shared_experts > 0) j["n_shared_experts"] = m.shared_experts;
        j["dense_layers"] = m.dense_layers;
    }
    if (m.mtp_layers > 0) j["num_nextn_predict_layers"] = m.mtp_layers;
    if (m.moe_latent > 0) j["moe_latent_size"] = m.moe_latent;
    if (m.mtp_depths > 0) j["mtp_num_layers"] = m.mtp_depths;
    if (m.is_mla()) {
        j["kv_lora_rank"] = m.kv_lora_rank;
        if (m.q_lora_rank > 0) j["q_lora_rank"] = m.q_lora_rank;
        j["qk_nope_head_dim"] = m.qk_nope_head_dim;
        j["qk_rope_head_dim"] = m.qk_rope_head_dim;
        j["v_head_dim"] = m.v_head_dim;
    }
    if (m.sliding_layers > 0) {
        j["sliding_layers"] = m.sliding_layers;
        j["sliding_window"] = m.sliding_window;
    }
    if (m.attention_sinks) j["attention_sinks"] = true;
    if (m.attention_output_gate) j["attention_output_gate"] = true;
    if (m.qk_layernorm) j["qk_layernorm"] = true;
    if (m.chunked_attention) j["chunked_attention"] = true;
    if (m.nope_layers > 0) j["nope_layers"] = m.nope_layers;
    if (m.qk_l2_norm) j["qk_l2_norm"] = true;
    if (m.post_norms) j["post_norms"] = true;
    if (m.attn_logit_softcapping > 0.0) j["attn_logit_softcapping"] = m.attn_logit_softcapping;
    if (m.final_logit_softcapping > 0.0) j["final_logit_softcapping"] = m.final_logit_softcapping;
    if (m.rope_attention_factor != 1.0) j["rope_attention_factor"] = m.rope_attention_factor;
    if (m.is_hybrid()) {
        const hybrid_shape& y = *m.hybrid;
        j["hybrid_override_pattern"] = std::string(y.pattern);
        if (y.mamba_heads > 0) {
            j["mamba_num_heads"] = y.mamba_heads;
            j["mamba_head_dim"] = y.mamba_head_dim;
            j["ssm_state_size"] = y.ssm_state;
            j["n_groups"] = y.mamba_groups;
            j["conv_kernel"] = y.conv_kernel;
            j["chunk_size"] = y.ssm_chunk;
        }
        if (y.gdn_v_heads > 0) {
            j["linear_num_key_heads"] = y.gdn_qk_heads;
            j["linear_num_value_heads"] = y.gdn_v_heads;
            j["linear_key_head_dim"] = y.gdn_qk_head_dim;
            j["linear_value_head_dim"] = y.gdn_v_head_dim;
            j["linear_conv_kernel_dim"] = y.gdn_conv_kernel;
        }
    }
    j["dropout"] = m.dropout;
    j["alibi"] = m.alibi;
    j["parallel_attention"] = m.parallel_attention;
    j["source"] = std::string(m.source);
    return j;
}

}  // namespace commscale::io
