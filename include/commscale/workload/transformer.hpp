#pragma once
/// @file workload/transformer.hpp
/// @brief A decoder-only transformer described by the fields of a Hugging Face `config.json`
/// (layers, hidden size, attention and key/value heads, FFN width, vocabulary, context length,
/// mixture-of-experts), and its parameter count: total, active per token (MoE), and per layer.
///
/// Parameter accounting (per layer, head dimension d = hidden / heads, kv = kv_heads x d):
///   attention  Q h x h + K h x kv + V h x kv + O h x h          (Vaswani et al. 2017; GQA:
///              Ainslie et al. 2023 share K/V between heads_per_group query heads)
///   MLP        gated (SwiGLU, Shazeer 2020): 3 x h x ffn; plain: 2 x h x ffn, per expert
///   router     h x experts when experts > 1 (Jiang et al. 2024, Mixtral)
///   norms      2 per layer (+1 final): weight (RMSNorm) or weight + bias (LayerNorm)
///   biases     when `biases`: q/k/v/o biases and MLP biases (GPT-2/3, OPT, BLOOM; not LLaMA)
///   embeddings vocab x h, plus the output projection when not tied, plus max_seq x h for
///              learned absolute positions (GPT-2/3, OPT, MT-NLG, Megatron)
/// With plain MLP, ffn = 4h, kv = h this is the familiar 12 l h^2 (1 + 13/(12h)) + (V + s) h of
/// Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters", eq. (2).

#include <string>
#include <string_view>

#include "../error.hpp"

namespace commscale {

/// @brief Shape of a decoder-only transformer; field names follow Hugging Face config.json
/// (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads,
/// intermediate_size, vocab_size, max_position_embeddings, num_local_experts,
/// num_experts_per_tok, tie_word_embeddings). Aggregate: write it with designated initializers.
struct transformer {
    std::string_view name{};       ///< e.g. "llama2-70b"
    int layers = 0;                ///< num_hidden_layers (l)
    int hidden = 0;                ///< hidden_size (h)
    int heads = 0;                 ///< num_attention_heads (a)
    int kv_heads = 0;              ///< num_key_value_heads (= heads without GQA/MQA)
    int ffn = 0;                   ///< intermediate_size (4h for GPT, 8h/3 rounded for SwiGLU models)
    int vocab = 0;                 ///< vocab_size (V)
    int max_seq = 0;               ///< max_position_embeddings (context length)
    int experts = 1;               ///< num_local_experts (1 = dense)
    int experts_per_token = 1;     ///< num_experts_per_tok (top-k routing)
    bool gated_mlp = false;        ///< SwiGLU/GeGLU: three FFN matrices instead of two
    bool tied_embeddings = false;  ///< tie_word_embeddings: output projection shares the input embedding
    bool learned_positions = false;  ///< learned absolute position embeddings (max_seq x h parameters)
    bool biases = false;           ///< linear layers and norms carry biases (GPT/OPT/BLOOM style)
    std::string_view source{};     ///< where the shape comes from (paper, model card, config.json)
    int head_dim_override = 0;     ///< head_dim when not hidden / heads (Gemma 7B: 256 with h 3072, 16 heads)
    bool alibi = false;            ///< ALiBi attention biases instead of rotary (BLOOM, MPT): no rotary kernel
    bool parallel_attention = false;  ///< attention and MLP read the same input (GPT-J, GPT-NeoX, Falcon)

    /// @brief Head dimension: head_dim_override, else h / a.
    [[nodiscard]] constexpr int head_dim() const {
        return head_dim_override > 0 ? head_dim_override : (heads > 0 ? hidden / heads : 0);
    }
    /// @brief Width of the query (and attention output) projection: heads x head_dim (= h unless
    /// head_dim is decoupled).
    [[nodiscard]] constexpr int q_dim() const { return heads * head_dim(); }
    /// @brief Width of the key (or value) projection: kv_heads x head_dim.
    [[nodiscard]] constexpr int kv_dim() const { return kv_heads * head_dim(); }
    /// @brief True for a mixture-of-experts model (experts > 1).
    [[nodiscard]] constexpr bool is_moe() const { return experts > 1; }
};

/// @brief Parameters of one transformer layer, by component (all counts, not bytes).
struct layer_parameters {
    double attention = 0;   ///< Q, K, V, O projections (with biases when the model has them)
    double mlp_expert = 0;  ///< one expert's MLP (the whole MLP for a dense model)
    double mlp = 0;         ///< all experts' MLPs
    double router = 0;      ///< MoE gate h x experts (0 for dense)
    double norms = 0;       ///< the layer's two norms
    /// @brief All parameters of the layer.
    [[nodiscard]] constexpr double total() const { return attention + mlp + router + norms; }
};

/// @brief Parameters of one layer. Formula in the file comment; counts, dimensionless.
[[nodiscard]] constexpr layer_parameters parameters_per_layer(const transformer& m) {
    const double h = m.hidden, kv = m.kv_dim(), f = m.ffn, q = m.q_dim();
    const double bias = m.biases ? 1.0 : 0.0;
    layer_parameters p;
    // Q is h x q and O q x h (q = heads x head_dim, = h usually); K and V are h x kv
    // (grouped-query attention shares them).
    p.attention = 2.0 * h * q + 2.0 * h * kv + bias * (q + h + 2.0 * kv);
    p.mlp_expert = m.gated_mlp ? 3.0 * h * f + bias * (2.0 * f + h) : 2.0 * h * f + bias * (f + h);
    p.mlp = p.mlp_expert * m.experts;
    p.router = m.experts > 1 ? h * m.experts : 0.0;
    p.norms = 2.0 * h * (1.0 + bias);
    return p;
}

/// @brief Embedding parameters: vocab x h input table, + vocab x h output projection when not
/// tied, + max_seq x h learned positions, + the final norm.
[[nodiscard]] constexpr double embedding_parameters(const transformer& m) {
    const double h = m.hidden;
    double p = static_cast<double>(m.vocab) * h;
    if (!m.tied_embeddings) p += static_cast<double>(m.vocab) * h;
    if (m.learned_positions) p += static_cast<double>(m.max_seq) * h;
    p += h * (m.biases ? 2.0 : 1.0);  // final norm
    return p;
}

/// @brief Total parameter count: layers x per-layer + embeddings (all experts included).
[[nodiscard]] constexpr double total_parameters(const transformer& m) {
    return m.layers * parameters_per_layer(m).total() + embedding_parameters(m);
}

/// @brief Parameters one token passes through: as total_parameters, but only
/// experts_per_token of the experts' MLPs (Mixtral 8x7B: 12.9B active of 46.7B, Jiang et al. 2024).
[[nodiscard]] constexpr double active_parameters(const transformer& m) {
    const auto p = parameters_per_layer(m);
    const int k = m.experts > 1 ? m.experts_per_token : 1;
    const double layer = p.attention + p.mlp_expert * k + p.router + p.norms;
    return m.layers * layer + embedding_parameters(m);
}

/// @brief Parameters without the embedding tables (what Kaplan et al. 2020 call N), all experts.
[[nodiscard]] constexpr double non_embedding_parameters(const transformer& m) {
    return m.layers * parameters_per_layer(m).total();
}

/// @brief Largest model validate accepts: 1e15 parameters (about 500x the largest published).
inline constexpr double max_model_parameters = 1e15;

/// @brief Largest sizes validate accepts, generous bounds far beyond any published model (the
/// largest dense ones have ~1e12 parameters, 128 layers of hidden 2e4-5e4, FFN ~1e5, vocabularies
/// ~2.6e5, up to 256 experts): beyond them a config is a typo, and FLOP and memory figures would
/// leave the ranges the predictor keeps finite. io/model_json.hpp names the config.json keys.
struct model_size_limits {
    static constexpr int layers = 100'000;
    static constexpr int hidden = 1 << 20;
    static constexpr int ffn = 1 << 23;
    static constexpr int vocab = 1 << 24;
    static constexpr int experts = 1 << 16;
    static constexpr int max_seq = 1 << 30;
};

/// @brief Throws input_error (field path `<field>.<member>`) unless the shape is possible:
/// every size >= 1, heads divide hidden, kv_heads divide heads, 1 <= experts_per_token <= experts,
/// sizes within generous bounds and at most max_model_parameters in all.
inline void validate(const transformer& m, std::string_view field = "model") {
    const std::string f(field);
    auto positive = [&](const char* name, int v) {
        if (v < 1) throw input_error(f + "." + name, std::to_string(v), "an integer >= 1");
    };
    positive("layers", m.layers);
    positive("hidden", m.hidden);
    positive("heads", m.heads);
    positive("kv_heads", m.kv_heads);
    positive("ffn", m.ffn);
    positive("vocab", m.vocab);
    positive("max_seq", m.max_seq);
    positive("experts", m.experts);
    positive("experts_per_token", m.experts_per_token);
    if (m.head_dim_override < 0 || m.head_dim_override > model_size_limits::hidden)
        throw input_error(f + ".head_dim_override", std::to_string(m.head_dim_override),
                          "0 (hidden / heads) or a head dimension in [1, " + std::to_string(model_size_limits::hidden) + "]");
    if (m.head_dim_override == 0 && m.hidden % m.heads != 0)
        throw input_error(f + ".heads", std::to_string(m.heads),
                          "a divisor of hidden (" + std::to_string(m.hidden) + ")");
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        throw input_error(f + ".kv_heads", std::to_string(m.kv_heads),
                          "a divisor of heads (" + std::to_string(m.heads) + ")");
    if (m.experts_per_token > m.experts)
        throw input_error(f + ".experts_per_token", std::to_string(m.experts_per_token),
                          "an integer in [1, experts = " + std::to_string(m.experts) + "]");
    // model_size_limits (above)
    auto at_most = [&](const char* name, int v, int limit) {
        if (v > limit)
            throw input_error(f + "." + name, std::to_string(v), "an integer in [1, " + std::to_string(limit) + "]");
    };
    at_most("layers", m.layers, model_size_limits::layers);
    at_most("hidden", m.hidden, model_size_limits::hidden);
    at_most("ffn", m.ffn, model_size_limits::ffn);
    at_most("vocab", m.vocab, model_size_limits::vocab);
    at_most("experts", m.experts, model_size_limits::experts);
    at_most("max_seq", m.max_seq, model_size_limits::max_seq);
    const double params = total_parameters(m);
    if (!(params <= max_model_parameters))
        throw input_error(f, commscale::detail::number_text(params) + " parameters (layers " + std::to_string(m.layers) +
                                 ", hidden " + std::to_string(m.hidden) + ", ffn " + std::to_string(m.ffn) + ", experts " +
                                 std::to_string(m.experts) + ")",
                          "a model of at most 1e15 parameters");
}

}  // namespace commscale
