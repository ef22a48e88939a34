#pragma once
/// @file workload/flops.hpp
/// @brief Training FLOPs of a transformer: the scaling-law approximations 6PD (8PD with full
/// recompute) and the exact matmul count per layer (projections with grouped-query attention,
/// attention scores and values, MLP with or without gating, MoE top-k, logits), with model FLOPs
/// (what the model needs) and hardware FLOPs (what the GPU executes, recompute included) apart.
///
/// Conventions (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
/// Clusters", section 5.1 / appendix): a (m x k)(k x n) matmul costs 2mkn FLOPs; the backward pass
/// costs twice the forward; only matmuls are counted (softmax, norms, activations are < 1%);
/// attention scores are counted over the full s x s square (causal masking not subtracted).
/// For a GPT layer (kv = h, ffn = 4h) this gives 72 B s l h^2 (1 + s/6h + V/(12 l h)) model FLOPs
/// per iteration, and 96 B s l h^2 (1 + s/6h + V/(16 l h)) with full recompute.
///
/// Formulas and their sources, in one place: docs/model.md#workload, #megatrons-count.

#include <optional>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../hardware/accelerator.hpp"
#include "../units.hpp"
#include "transformer.hpp"

namespace commscale {

/// @brief Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation
/// in Large Transformer Models"): none; selective = only the attention core (QK^T, softmax,
/// dropout, attention over V) is recomputed; full = every layer's forward is recomputed from its
/// stored input.
enum class recompute { none, selective, full };

/// @brief CLI/JSON spellings of the recomputation modes: `to_string`, `parse<recompute>`.
inline constexpr std::array<name_entry<recompute>, 3> recompute_spellings{{
    {recompute::none, "none"},
    {recompute::selective, "selective"},
    {recompute::full, "full"},
}};
static_assert(detail::in_enum_order(recompute_spellings));
[[nodiscard]] constexpr const auto& name_table(recompute) { return recompute_spellings; }

/// @brief How full recompute chooses its layers, as Megatron-Core's `--recompute-method` with
/// `--recompute-granularity full` and `--recompute-num-layers N` (megatron/core/transformer/
/// transformer_block.py `_checkpointed_forward`, core_v0.15): uniform checkpoints the input of
/// each group of N consecutive layers of a model chunk and recomputes every layer (N = 1: the
/// per-layer full recompute of Korthikanti et al. 2022); block checkpoints the first N layers of
/// each model chunk (one per pipeline stage, or per virtual stage) and keeps the activations of
/// the rest, which it does not recompute.
enum class recompute_method { uniform, block };

/// @brief CLI/JSON spellings of the recompute methods: `to_string`, `parse<recompute_method>`.
inline constexpr std::array<name_entry<recompute_method>, 2> recompute_method_spellings{{
    {recompute_method::uniform, "uniform"},
    {recompute_method::block, "block"},
}};
static_assert(detail::in_enum_order(recompute_method_spellings));
[[nodiscard]] constexpr const auto& name_table(recompute_method) { return recompute_method_spellings; }

/// @brief Modules recomputed in the backward pass instead of storing their outputs, as Megatron-Core's
/// `--recompute-granularity selective --recompute-modules` names them (megatron/core/transformer/
/// transformer_config.py `recompute_modules`): a bitmask of these values. Each one drops what the
/// module alone saves for the backward (workload/memory.hpp activation_bytes_per_layer) and adds its
/// forward to the backward (predict/compute.hpp module_recompute_time).
enum recompute_module : unsigned {
    recompute_core_attn = 1u,       ///< the attention core (Korthikanti et al. 2022's selective recompute)
    recompute_layernorm = 2u,       ///< the two norms: their outputs, the QKV and FC1 inputs
    recompute_mla_up_proj = 4u,     ///< MLA's up-projections: the Q, K, V they produce
    recompute_mlp = 8u,             ///< the dense MLP: FC1's output and FC2's input
    recompute_moe = 16u,            ///< the MoE layer's experts: their FC1 outputs and FC2 inputs
    recompute_moe_act = 32u,        ///< the routed experts' activation: FC2's input
    recompute_shared_experts = 64u  ///< the shared experts' MLP
};

/// @brief Megatron-Core's spellings of the recompute modules, in bit order.
inline constexpr std::array<std::string_view, 7> recompute_module_names{
    "core_attn", "layernorm", "mla_up_proj", "mlp", "moe", "moe_act", "shared_experts"};

/// @brief Parses a comma-separated list of recompute modules ("layernorm,moe_act"; "" or "none" is
/// none) into a bitmask; input_error naming `field`, the unknown entry and the accepted names.
[[nodiscard]] inline unsigned recompute_modules_from_names(std::string_view list, std::string_view field = "recompute_modules") {
    unsigned mask = 0;
    if (list.empty() || list == "none") return 0;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = list.find(',', start);
        std::string_view item = list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        bool found = false;
        for (std::size_t i = 0; i < recompute_module_names.size(); ++i)
            if (item == recompute_module_names[i]) {
                mask |= 1u << i;
                found = true;
            }
        if (!found) {
            std::string accepted;
            for (auto n : recompute_module_names) accepted += (accepted.empty() ? "" : ", ") + std::string(n);
            throw input_error(std::string(field), "'" + std::string(item) + "'",
                              "a comma-separated list of " + accepted + " (or none)");
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return mask;
}

/// @brief The comma-separated names of a recompute-module bitmask ("" for none).
[[nodiscard]] inline std::string recompute_modules_names(unsigned mask) {
    std::string out;
    for (std::size_t i = 0; i < recompute_module_names.size(); ++i)
        if (mask & (1u << i)) out += (out.empty() ? "" : ",") + std::string(recompute_module_names[i]);
    return out;
}

// ---------------------------------------------------------------- approximations (6PD / 8PD)

/// @brief FLOPs per parameter per token of the PD approximation: 6 = 2 forward + 4 backward
/// (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1); 8 with full
/// recompute (one more forward; ml-engineering "2x forward and 2x backward", gpu-fabrics-for-genai
/// "8 x 175e9 x 300e9 = 420 ZFLOP"). Selective recompute only repeats the attention core, which
/// this approximation does not count: 6.
[[nodiscard]] constexpr double flops_per_parameter_token(recompute r) {
    return r == recompute::full ? 8.0 : 6.0;
}

/// @brief Training FLOPs ~ k x P x D (k = 6, or 8 with full recompute): P parameters (active
/// parameters for MoE), D tokens. Kaplan et al. 2020, C = 6ND.
[[nodiscard]] constexpr flop_count approx_training_flops(double params, double tokens, double flops_per_param_token = 6.0) {
    return flops(flops_per_param_token * params * tokens);
}

/// @brief As above with k chosen by the recompute mode.
[[nodiscard]] constexpr flop_count approx_training_flops(double params, double tokens, recompute r) {
    return approx_training_flops(params, tokens, flops_per_parameter_token(r));
}

// ---------------------------------------------------------------- exact matmul count

/// @brief Forward FLOPs of one transformer layer for `sequences` sequences of `seq` tokens, by
/// component (2 FLOPs per multiply-add; d = head_dim, kv = kv_heads x d, f = ffn, E experts, k top-k).
/// Where MoE and dense layers, or sliding-window and full-attention layers, mix, the fields are
/// means over the model's layers (layers x total() is every layer's FLOPs).
struct layer_flops {
    flop_count qkv{};          ///< 2 B s h (q + 2 kv): Q, K, V projections (GQA shrinks K, V; MLA: its low-rank factors;
                               ///< hybrid models: + the Mamba-2 in_proj 2 B s h (2 d_in + 2 G N + H) of the M layers)
    flop_count scores{};       ///< 2 B s span a d_qk: Q K^T over all heads (span = s, or the sliding window)
    flop_count values{};       ///< 2 B s span a d_v: attention-weighted sum of V
    flop_count out_proj{};     ///< 2 B s a d_v h (hybrid models: + the Mamba-2 out_proj 2 B s d_in h of the M layers)
    flop_count mlp{};          ///< MLP: top-k routed + shared experts on MoE layers, the dense MLP elsewhere
    flop_count router{};       ///< 2 B s h E (MoE gate), 0 for dense
    flop_count scan{};         ///< hybrid models: the causal conv1d and the chunked SSD scan (ssd_forward_flops_per_token),
                               ///< and Gated DeltaNet's conv1d and chunked delta rule (gdn_forward_flops_per_token)
    /// @brief The attention core (scores + values): what selective recompute repeats.
    [[nodiscard]] constexpr flop_count attention_core() const { return scores + values; }
    /// @brief All forward FLOPs of the layer.
    [[nodiscard]] constexpr flop_count total() const { return qkv + scores + values + out_proj + mlp + router + scan; }
};

/// @brief Forward FLOPs per token of one Mamba-2 mixer's causal conv1d and chunked SSD scan, the
/// library's own count (2 FLOPs per multiply-add), from the four matmul steps of the SSD algorithm
/// (Dao & Gu 2024, "Transformers are SSMs", section 7.1 and Listing 1; the Triton kernels of
/// state-spaces/mamba `mamba_ssm/ops/triton/ssd_combined.py` `_mamba_chunk_scan_combined_fwd`),
/// chunk length Q, H heads of width P (d_in = H P), state N, G groups, conv width K:
///   conv1d          2 K (d_in + 2 G N)     depthwise, K taps per channel (causal_conv1d)
///   C B^T           2 Q G N                per chunk and group a (Q x N)(N x Q) product (`_bmm_chunk_fwd`)
///   diagonal blocks 2 Q d_in               (L o C B^T) X, per chunk and head (Q x Q)(Q x P) (`_chunk_scan_fwd`)
///   chunk states    2 N d_in               B^T X, per chunk and head (N x Q)(Q x P) (`_chunk_state_fwd`)
///   state passing   2 N d_in / Q           one state update per chunk and head (`_state_passing_fwd`)
///   state output    2 N d_in               C h, per chunk and head (Q x N)(N x P) (`_chunk_scan_fwd`)
/// The causal mask is not subtracted (the kernels compute whole Q x Q blocks); the gating, the D
/// skip and the dt softplus are element-wise and not counted. Nemotron-H 8B (Q 128, N 128, G 8,
/// d_in 8192, K 4): 6.65 MFLOP per token, ~3% of its Mamba layer's projections. Megatron's count
/// charges 7 d_in N instead (megatron_model_flops_per_token). 0 without Mamba heads.
[[nodiscard]] constexpr double ssd_forward_flops_per_token(const transformer& m) {
    if (!m.hybrid || m.hybrid->mamba_heads <= 0) return 0.0;
    const hybrid_shape& y = *m.hybrid;
    const double d_in = y.mamba_inner(), N = y.ssm_state, G = y.mamba_groups, Q = y.ssm_chunk > 0 ? y.ssm_chunk : 1.0;
    return 2.0 * y.conv_kernel * y.conv_channels() + 2.0 * Q * G * N + 2.0 * Q * d_in + 4.0 * N * d_in + 2.0 * N * d_in / Q;
}

/// @brief Chunk length of flash-linear-attention's chunked gated delta rule (fla/ops/gated_delta_rule/
/// chunk.py, `chunk_size` 64), which Megatron-Core's and Hugging Face's Gated DeltaNet layers call.
inline constexpr double gdn_chunk = 64.0;

/// @brief Forward FLOPs per token of one Gated DeltaNet mixer's causal conv1d and chunked gated
/// delta rule, the library's own count (2 FLOPs per multiply-add), from the steps of
/// flash-linear-attention's `chunk_gated_delta_rule_fwd` (Yang et al. 2025, "Gated Delta Networks",
/// section 3.3: the WY representation of each chunk's updates; fla/ops/gated_delta_rule/chunk.py),
/// chunk length C (gdn_chunk), Hv value heads of width dv, each with a query-key head of width dk
/// (the Hk query-key heads repeated), conv width K:
///   conv1d          2 K (2 qk + v)          depthwise over q, k and v
///   K K^T           2 C dk                  the chunk's beta-scaled key products (`chunk_scaled_dot_kkt_fwd`)
///   (I + A)^-1      2 C^2 / 3               the lower-triangular solve per chunk (`solve_tril`)
///   W, U            2 C (dk + dv)           W = T K, U = T V (`recompute_w_u_fwd`)
///   states          4 dk dv                 v - W h and the state update h + K^T v (`chunk_gated_delta_rule_fwd_h`)
///   output          2 dk dv + 2 C (dk + dv) Q h and the chunk's masked Q K^T times v (`chunk_fwd_o`)
/// per value head and token. The masks are not subtracted (the kernels compute whole C x C
/// blocks); the gates, the L2 norms of q and k and the sigmoid of beta are element-wise and not
/// counted. Qwen3-Next-80B-A3B (Hv 32, dk = dv = 128, K 4): 5.92 MFLOP per token. Megatron's count
/// charges 8 Hv dv^2 (training.py `gdn_layer_flops`: "KK^T, VK^T, S(a(I-bKK^T)), and SQ"), 4.19
/// MFLOP there (megatron_model_flops_per_token). 0 without GDN heads.
[[nodiscard]] constexpr double gdn_forward_flops_per_token(const transformer& m) {
    if (!m.hybrid || m.hybrid->gdn_v_heads <= 0) return 0.0;
    const hybrid_shape& y = *m.hybrid;
    const double C = gdn_chunk, dk = y.gdn_qk_head_dim, dv = y.gdn_v_head_dim;
    const double per_head = 2.0 * C * dk + 2.0 * C * C / 3.0 + 2.0 * C * (dk + dv) + 6.0 * dk * dv + 2.0 * C * (dk + dv);
    return 2.0 * y.gdn_conv_kernel * y.gdn_conv_channels() + y.gdn_v_heads * per_head;
}

namespace detail {
/// layer_forward_flops of a hybrid Mamba-Transformer: each kind of layer weighted by its share of
/// the pattern (attention, dense MLP, MoE with its router, Mamba-2 projections and scan), every
/// attention layer at full causal length. Out of line: off the transformer's path.
[[gnu::cold, gnu::noinline]] constexpr layer_flops hybrid_layer_forward_flops(const transformer& m, double seq, double sequences) {
    const double h = m.hidden, a = m.heads, tokens = seq * sequences;
    const double att = m.attention_fraction(), mamba = m.mamba_fraction(), gdn = m.gdn_fraction();
    const double q = m.q_dim();
    const double gdn_in = gdn > 0.0 ? m.hybrid->gdn_in_proj_width() : 0.0, gdn_v = gdn > 0.0 ? m.hybrid->gdn_v_dim() : 0.0;
    layer_flops r;
    // the token mixers' input and output projections: attention's QKV (+ its output gate) and O,
    // Mamba-2's and Gated DeltaNet's in_proj and out_proj
    r.qkv = flops(att * 2.0 * tokens * h * m.qkv_dim() + mamba * 2.0 * tokens * h * m.mamba_in_proj_width() +
                  gdn * 2.0 * tokens * h * gdn_in);
    r.out_proj = flops(att * 2.0 * tokens * q * h + mamba * 2.0 * tokens * m.mamba_inner() * h + gdn * 2.0 * tokens * gdn_v * h);
    r.scores = flops(att * 2.0 * tokens * seq * a * m.head_dim());
    r.values = flops(att * 2.0 * tokens * seq * a * m.head_dim());
    r.mlp = flops(2.0 * tokens * m.mlp_macs_per_token());
    r.router = flops(m.is_moe() ? m.moe_fraction() * 2.0 * tokens * h * m.experts : 0.0);
    r.scan = flops(mamba * tokens * ssd_forward_flops_per_token(m) + gdn * tokens * gdn_forward_flops_per_token(m));
    return r;
}
}  // namespace detail

/// @brief Forward FLOPs of one layer (see layer_flops). `seq` tokens per sequence, `sequences`
/// sequences (B). Formula: Narayanan et al. 2021 appendix, generalized to GQA, gated MLP and MoE:
/// * MLA (DeepSeek-V2 report, section 2.1; no weight absorption in training): the projections
///   cost 2 B s x their parameters (W_DQ, W_UQ, W_DKV, W_UK/W_UV; file comment of
///   transformer.hpp); scores use the query/key head width d_n + d_r, values d_v.
/// * MoE layers: k routed experts + the shared experts, each a gated MLP of width expert_ffn,
///   plus the router 2 B s h E; dense layers of an MoE model: the MLP of width ffn. LatentMoE:
///   the routed experts' GEMMs over the latent width l instead of h, plus the projections
///   2 x 2 B s h l (Megatron-Core moe_layer.py fc1_latent_proj, fc2_latent_proj).
/// * sliding-window layers (GPT-OSS): a causal window of w keys, counted like the full layers at
///   twice its causal mean, 2w - w^2/s keys per query instead of s (transformer::attention_span);
///   chunked layers (Llama 4) n whole chunks of w and one of r = s - n w, (n w^2 + r^2) / s keys.
/// * hybrid Mamba-Transformer models: the attention terms on the * layers, the dense MLP on the -
///   layers, the MoE terms on the E layers, and on the M layers the Mamba-2 projections
///   2 B s h (2 d_in + 2 G N + H) + 2 B s d_in h plus the conv1d and SSD scan B s
///   ssd_forward_flops_per_token, on the G layers Gated DeltaNet's 2 B s h (2 qk + 2 v + 2 Hv) +
///   2 B s v h plus B s gdn_forward_flops_per_token, each weighted by its share of the pattern.
[[nodiscard]] constexpr layer_flops layer_forward_flops(const transformer& m, double seq, double sequences = 1.0) {
    if (m.is_hybrid()) [[unlikely]]
        return detail::hybrid_layer_forward_flops(m, seq, sequences);
    const double h = m.hidden, a = m.heads;
    const double tokens = seq * sequences;
    const double span = m.attention_span(seq);
    layer_flops r;
    if (m.is_mla()) {
        const double dn = m.qk_nope_head_dim, dr = m.qk_rope_head_dim, dv = m.v_head_dim;
        const double rq = m.q_lora_rank, rkv = m.kv_lora_rank;
        const double q_proj = m.q_lora_rank > 0 ? h * rq + rq * a * (dn + dr) : h * a * (dn + dr);
        const double kv_proj = h * (rkv + dr) + rkv * a * (dn + dv);
        r.qkv = flops(2.0 * tokens * (q_proj + kv_proj));
        r.out_proj = flops(2.0 * tokens * a * dv * h);
    } else {
        // the fused QKV projection, + q for the attention output gate (transformer::qkv_dim)
        r.qkv = flops(2.0 * tokens * h * m.qkv_dim());
        r.out_proj = flops(2.0 * tokens * m.q_dim() * h);
    }
    r.scores = flops(2.0 * tokens * span * a * m.qk_head_dim());
    r.values = flops(2.0 * tokens * span * a * m.value_head_dim());
    // mlp_macs_per_token: g h x ((k + shared) x expert width) on MoE layers (LatentMoE: the
    // routed experts in the latent width, + the latent projections), g h ffn on dense ones (mean)
    r.mlp = flops(2.0 * tokens * m.mlp_macs_per_token());
    r.router = flops(m.is_moe() ? m.moe_fraction() * 2.0 * tokens * h * m.experts : 0.0);
    return r;
}

/// @brief Forward FLOPs of the output projection (logits): 2 B s h V.
[[nodiscard]] constexpr flop_count logits_forward_flops(const transformer& m, double seq, double sequences = 1.0) {
    return flops(2.0 * seq * sequences * m.hidden * static_cast<double>(m.vocab));
}

/// @brief Forward FLOPs of the multi-token-prediction modules (DeepSeek-V3 technical report,
/// section 2.2), apart from forward_flops as DeepSeek's per-token figures leave them out: per
/// module one MoE layer (all layers of `m` counted as MoE layers, full attention), the projection
/// M of the concatenated hidden state and embedding 2 B s (2h) h, and its own logits 2 B s h V.
namespace detail {
/// mtp_forward_flops of a model with MTP modules (out of line: the common case is none).
[[gnu::noinline]] constexpr flop_count mtp_modules_forward_flops(const transformer& m, double seq, double sequences) {
    const transformer block = mtp_block(m);
    const double tokens = seq * sequences, h = m.hidden;
    const double per_module = layer_forward_flops(block, seq, sequences).total().value() + 2.0 * tokens * 2.0 * h * h +
                              2.0 * tokens * h * static_cast<double>(m.vocab);
    return flops(m.mtp_passes() * per_module);
}
}  // namespace detail

[[nodiscard]] constexpr flop_count mtp_forward_flops(const transformer& m, double seq, double sequences = 1.0) {
    if (m.mtp_layers <= 0) return flops(0.0);
    return detail::mtp_modules_forward_flops(m, seq, sequences);
}

/// @brief forward_flops with the layer's FLOPs `layer` = layer_forward_flops(m, seq, sequences) at hand.
[[nodiscard]] constexpr flop_count forward_flops(const transformer& m, const layer_flops& layer, double seq,
                                                 double sequences) {
    return static_cast<double>(m.layers) * layer.total() + logits_forward_flops(m, seq, sequences);
}

/// @brief Forward FLOPs of the whole model: layers x layer + logits.
[[nodiscard]] constexpr flop_count forward_flops(const transformer& m, double seq, double sequences = 1.0) {
    return forward_flops(m, layer_forward_flops(m, seq, sequences), seq, sequences);
}

/// @brief Model FLOPs of one training iteration over B sequences of s tokens: 3 x forward
/// (backward = 2 x forward). What MFU counts (Chowdhery et al. 2022, PaLM, appendix B).
/// GPT shape: 72 B s l h^2 (1 + s/6h + V/(12 l h)) (Narayanan et al. 2021, eq. 3).
[[nodiscard]] constexpr flop_count model_flops(const transformer& m, double seq, double sequences = 1.0) {
    return 3.0 * forward_flops(m, seq, sequences);
}

/// @brief Hardware FLOPs of one training iteration: model FLOPs plus what recompute repeats.
/// full: every layer's forward once more (logits are not recomputed), giving
/// 96 B s l h^2 (1 + s/6h + V/(16 l h)) for GPT (Narayanan et al. 2021, eq. 3 with recompute);
/// selective: the attention core once more, + l x 4 B s^2 h (Korthikanti et al. 2022, section 5).
/// What HFU counts. `full_share`: the share of the layers full recompute repeats
/// (plan::full_recompute_share; recompute_method block recomputes N layers per model chunk).
/// The one with `layer` = layer_forward_flops(m, seq, sequences) and `model` = model_flops(m, seq,
/// sequences) at hand (the step predictor computes both once).
[[nodiscard]] constexpr flop_count hardware_flops(const transformer& m, const layer_flops& layer, flop_count model,
                                                  recompute r, double full_share) {
    const double l = m.layers;
    flop_count extra = flops(0.0);
    if (r == recompute::full) extra = full_share * l * layer.total();
    else if (r == recompute::selective) extra = l * layer.attention_core();
    return model + extra;
}
[[nodiscard]] constexpr flop_count hardware_flops(const transformer& m, double seq, double sequences, recompute r,
                                                  double full_share = 1.0) {
    const auto layer = layer_forward_flops(m, seq, sequences);
    return hardware_flops(m, layer, 3.0 * forward_flops(m, layer, seq, sequences), r, full_share);
}

/// @brief Model FLOPs per token of training at context `seq` (model_flops / (B s)); ~ 6 x active
/// parameters plus the attention-score term 12 l s h (per token).
[[nodiscard]] constexpr flop_count model_flops_per_token(const transformer& m, double seq) {
    return model_flops(m, seq, 1.0) / seq;
}

/// @brief Narayanan et al. 2021 closed form for GPT-shaped models, FLOPs per iteration:
/// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) without recompute, 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
/// with full recompute. Exact for kv = h, ffn = 4h, dense, no gating (used to cross-check).
[[nodiscard]] constexpr flop_count narayanan_flops(const transformer& m, double seq, double sequences, bool full_recompute) {
    const double B = sequences, s = seq, l = m.layers, h = m.hidden, V = m.vocab;
    if (full_recompute) return flops(96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h)));
    return flops(72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h)));
}

// ---------------------------------------------------------------- Megatron-Core's count

/// @brief How Megatron's count charges the core attention (Q K^T and the attention over V).
enum class megatron_attention_count {
    /// Half of the s x s square (the causal mask): Megatron-LM since commit 8873b55d6a
    /// (2025-03-06, "Fixes in number of floating-point operation estimates for MoE and attention
    /// layer"; first in core_v0.12.0), Megatron-Bridge 25.11 (v0.2.0) and later: what the NeMo
    /// 25.x / Megatron-Bridge performance tables report.
    causal,
    /// The whole square: Megatron-LM before 8873b55d6a (core_r0.8.0 to core_r0.11.0) and NeMo's
    /// `nemo/utils/flops_formulas.py` (12 s h per layer and token), what the NeMo 24.07
    /// performance table reports.
    full,
};

/// @brief The conventions of one release of Megatron's count that are not in the model's shape.
struct megatron_flops_options {
    megatron_attention_count attention = megatron_attention_count::causal;
    /// TP: Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by x TP
    /// (megatron/training/tokenizer `_vocab_size_with_padding`; Megatron-Bridge
    /// `utils/vocab_utils.py::calculate_padded_vocab_size`) and counts the logits over the padded one.
    int tensor_parallel = 1;
    int make_vocab_size_divisible_by = 128;  ///< Megatron's --make-vocab-size-divisible-by (default 128)
    /// > 0: count the logits over this vocabulary as is, no padding. NeMo 24.07's formulas use
    /// fixed sizes (`nemo/collections/common/parts/perf_metrics_utils.py` LLM_VOCAB_SIZE_MAP: GPT-3
    /// 51200, Llama 2 32000, Llama 3 128256, Nemotron 256000).
    int vocab = 0;
    /// Megatron's args.swiglu (x3 MLP GEMMs instead of x2). Unset: the model's gated_mlp, except a
    /// model with attention sinks (GPT-OSS), whose gated quick-GELU MLP Megatron runs with
    /// --quick-geglu and Megatron-Bridge 25.11 with activation_func quick_gelu, both counted x2
    /// (Bridge's `flop_utils.py` counts the gated MLP x3 only when activation_func is F.silu).
    std::optional<bool> swiglu{};
};

/// @brief The vocabulary Megatron's count charges the logits over: options.vocab when set, else
/// the model's vocabulary rounded up to a multiple of make_vocab_size_divisible_by x TP.
[[nodiscard]] constexpr double megatron_logits_vocab(const transformer& m, const megatron_flops_options& o = {}) {
    if (o.vocab > 0) return o.vocab;
    const long long multiple = static_cast<long long>(o.make_vocab_size_divisible_by > 0 ? o.make_vocab_size_divisible_by : 1) *
                               (o.tensor_parallel > 0 ? o.tensor_parallel : 1);
    return static_cast<double>((static_cast<long long>(m.vocab) + multiple - 1) / multiple * multiple);
}

/// @brief Model FLOPs per token of one training iteration at sequence length `seq`, exactly as
/// Megatron-Core counts them for "Model TFLOP/sec/GPU": Megatron-LM
/// `megatron/training/training.py::num_floating_point_operations` (`transformer_flops`, BSHD
/// batches: B s tokens, B s^2 for the core attention), read at commit d98e8a64dd (2026-08-22);
/// the same terms as Megatron-Bridge v0.2.0 (the 25.11 container)
/// `src/megatron/bridge/training/utils/flop_utils.py::num_floating_point_operations`.
/// With L = layers + mtp_layers (each MTP module counted as one more layer of the last layer's
/// kind, MoE here), 6 = 3 GEMMs (forward, data and weight gradients) x 2 per multiply-add,
/// g = 3 with SwiGLU else 2, q = heads x head_dim, kv = kv_heads x head_dim:
///   MLP     6 h g (ffn x dense layers + (top-k x expert width + shared x expert width) x MoE layers)
///   attn    L x 6 (h (q + 2 kv [+ q with --attention-output-gate]) + q h)           (GQA / MHA)
///           MLA: L x 6 (r_q (h + a (d_n + d_r) + 1) + r_kv (h + a (d_n + d_v) + 1) + h d_r + a d_v h)
///           (without q_lora_rank: h a (d_n + d_r) for the first term; the +1s are the norms)
///   core    L x 6 q s (causal; x2 full square); MLA: L x 6 (a (d_n + d_r) + a d_v) s / 2 (x2 full)
///   MTP     6 mtp (3 h + 2 h^2)                                  (norms and the 2h -> h projection)
///   logits  6 h V_padded (1 + mtp)
/// Not counted (as in Megatron): router, norms elsewhere, softmax, sliding windows (every layer is
/// counted at full causal length), recompute.
///
/// The library's own count (model_flops_per_token, what mfu and tflops_per_gpu use, and what the
/// step predictor's compute model is built on) differs by design, and is left as it is:
/// * attention: the full s x s square (Narayanan et al. 2021), Megatron's count before March 2025
///   and NeMo 24.07's, which it matches within 0.1% on every NeMo 24.07 run of the calibration
///   set. Against the current causal count it is larger by 6 q s per layer and token: 12.5% for
///   Llama 3 8B at 8192 tokens, 7.2% for 70B, 4.0% for 405B, 12.6% for DeepSeek-V3 at 4096,
///   21% for Qwen3-30B-A3B, 13% for Qwen3-235B-A22B (tests/validation/workload_megatron_flops.cpp);
/// * GPT-OSS: its gated MLP counted x3 and its sliding windows counted (Megatron: x2, no windows),
///   together +24 to +28% over Megatron's count;
/// * the router (2 h E per MoE layer and token), the unpadded vocabulary (both < 0.5%);
/// * MTP modules: in hardware FLOPs, not in model FLOPs (Megatron: in model FLOPs, +4% for
///   DeepSeek-V3's one module).
///
/// Hybrid Mamba-Transformer models follow training.py's own branch (`hybrid_flops`, the same at
/// d98e8a64dd and since it appeared in b957578e76, 2025-03-17), per token with the pattern's
/// layer counts n_*, n_M, n_-, n_E, p = head_dim x heads / h, g = KV heads, f = ffn, x 3/2 with
/// SwiGLU:
///   3 (n_* (4 h p (h + h g / heads) + 2 s h p) + n_- 4 h f + n_M (2 h (2 d + 2 G N + H) + 7 d N
///      + 2 d h) + n_G 2 (h (2 qk + 2 v + 2 Hv) + K (2 qk + v) + 4 Hv dv^2 + h v)
///      + n_E 4 h (k f_e + S f_e) + 2 h V_padded)
/// (LatentMoE: n_E (4 l k f_e + 4 h l + 4 h S f_e); with MTP, each depth one more * and E block
/// and 2 h V_padded more, read at Megatron-LM d98e8a64dd training.py `hybrid_flops`,
/// `moe_layer_flops` and hybrid_layer_allocation.py `get_hybrid_layer_counts`)
/// with d = 2h whatever the model's mamba_num_heads x mamba_head_dim (Nemotron 3 Nano: 5376 for
/// its 4096), the core attention always causal (`attention` does not apply) and the scan charged
/// 7 d N, where the library's own count uses d_in and the SSD steps (ssd_forward_flops_per_token);
/// n_G's term is training.py's `gdn_layer_flops`. `attn_layer_flops` has no term for the attention
/// output gate (transformer::attention_output_gate), so neither has this count. A Qwen3-Next run
/// that Megatron-Core builds as a GPT model (`--experimental-attention-variant gated_delta_net`)
/// logs the GPT branch instead, which counts the gate, 6 h q per attention layer and token
/// (forward and backward; 2.7% of Qwen3-Next-80B-A3B's count at 4,096 tokens).
namespace detail {
/// megatron_model_flops_per_token of a hybrid model: training.py's `hybrid_flops` branch.
/// Out of line: off the transformer's path.
[[gnu::cold, gnu::noinline]] constexpr double megatron_hybrid_flops_per_token(const transformer& m, double s,
                                                                              const megatron_flops_options& o) {
    const auto n = m.hybrid_layer_counts();
    const double h = m.hidden, heads = m.heads;
    const bool swiglu = o.swiglu ? *o.swiglu : m.gated_mlp;
    const double scale = swiglu ? 3.0 / 2.0 : 1.0;
    // attn_layer_flops: p = kv_channels x heads / h, g = query groups; 4 h p (h + h g / heads) + 2 s h p
    const double p = static_cast<double>(m.head_dim()) * heads / h, g = m.kv_heads;
    const double attention = 4.0 * h * p * (h + h * (g / heads)) + 2.0 * s * h * p;
    // mlp_layer_flops with expansion ffn / h
    const double mlp = 4.0 * (static_cast<double>(m.ffn) / h) * scale * h * h;
    // mamba_layer_flops: d_in = 2 h (not heads x head_dim), in_proj + 7 d_in N (scan) + out_proj
    const double d_in = 2.0 * h;
    const hybrid_shape& y = *m.hybrid;
    const double mamba = 2.0 * h * (2.0 * d_in + 2.0 * y.mamba_groups * static_cast<double>(y.ssm_state) + y.mamba_heads) +
                         7.0 * d_in * y.ssm_state + 2.0 * d_in * h;
    // moe_layer_flops: routed top-k x moe_ffn_hidden_size, shared moe_shared_expert_intermediate_size;
    // LatentMoE: the routed experts over moe_latent_size, + 4 h l for the two projections
    const double fe = m.expert_width();
    const double routed = m.moe_latent > 0
                              ? 4.0 * m.moe_latent * fe * m.experts_per_token * scale + 4.0 * h * m.moe_latent
                              : 4.0 * h * fe * m.experts_per_token * scale;
    const double moe = routed + 4.0 * h * (m.shared_experts * fe) * scale;
    // MTP depths: get_hybrid_layer_counts counts each depth's blocks (an attention and an MoE or
    // MLP block, the mtp_hybrid_override_pattern "*E" of Nemotron 3 Super) and the logits are
    // charged once more per depth; its 2h -> h projection is not counted
    const double mtp = m.mtp_passes() > 0 ? m.mtp_passes() : 0.0;
    const double logits = 2.0 * h * megatron_logits_vocab(m, o) * (1.0 + mtp);
    const double mtp_blocks = mtp * (attention + (m.is_moe() ? moe : mlp));
    // gdn_layer_flops: in_proj, conv1d, the delta rule's 4 Hv dv^2 and out_proj
    const double qk = y.gdn_qk_dim(), v = y.gdn_v_dim();
    const double gdn = 2.0 * (h * y.gdn_in_proj_width() + y.gdn_conv_kernel * (2.0 * qk + v) +
                              4.0 * y.gdn_v_heads * static_cast<double>(y.gdn_v_head_dim) * y.gdn_v_head_dim + h * v);
    return 3.0 * (n.attention * attention + n.mlp * mlp + n.mamba * mamba + n.gdn * gdn + (m.is_moe() ? n.moe * moe : 0.0) +
                  mtp_blocks + logits);
}
}  // namespace detail

[[nodiscard]] constexpr flop_count megatron_model_flops_per_token(const transformer& m, double seq,
                                                                  const megatron_flops_options& o = {}) {
    if (m.is_hybrid()) return flops(detail::megatron_hybrid_flops_per_token(m, seq, o));
    const double h = m.hidden, a = m.heads, s = seq;
    const double mtp = m.mtp_passes() > 0 ? m.mtp_passes() : 0;  // --mtp-num-layers: the depths run
    const double layers = m.layers + mtp;
    // training.py: the MTP modules join the kind of the last layer (last_layer_is_moe); the
    // catalog's MoE models end on an MoE layer (dense layers lead or interleave).
    const double moe_layers = m.is_moe() ? m.moe_layers() + mtp : 0.0;
    const double dense_layers = layers - moe_layers;
    const bool swiglu = o.swiglu ? *o.swiglu : (m.gated_mlp && !m.attention_sinks);
    const double g = swiglu ? 3.0 : 2.0;  // ffn_expansion_factor
    const double width = m.expert_width();
    // LatentMoE: the routed experts at k f g l / h per unit of h, + 2 l for the projections
    const double routed = m.moe_latent > 0 ? m.experts_per_token * width * static_cast<double>(m.moe_latent) / h +
                                                 2.0 * m.moe_latent / g
                                           : m.experts_per_token * width;
    const double mlp = 6.0 * h * g *
                       (static_cast<double>(m.ffn) * dense_layers + (routed + m.shared_experts * width) * moe_layers);
    const double core_factor = o.attention == megatron_attention_count::causal ? 1.0 : 2.0;
    double attn_linear = 0, attn_core = 0;
    if (m.is_mla()) {
        const double dn = m.qk_nope_head_dim, dr = m.qk_rope_head_dim, dv = m.v_head_dim;
        const double rq = m.q_lora_rank, rkv = m.kv_lora_rank;
        const double q_term = m.q_lora_rank > 0 ? rq * (h + a * (dn + dr) + 1.0) : h * a * (dn + dr);
        attn_linear = 6.0 * (q_term + rkv * (h + a * (dn + dv) + 1.0) + h * dr + a * dv * h);
        attn_core = 6.0 * (a * (dn + dr) / 2.0 + a * dv / 2.0) * core_factor * s;
    } else {
        // training.py: gate_projection_size = query_projection_size with --attention-output-gate
        const double q = m.q_dim();
        attn_linear = 6.0 * (h * m.qkv_dim() + q * h);
        attn_core = 6.0 * q * core_factor * s;  // 6 q / 2 (causal) x 2 (QK^T and the values)
    }
    const double mtp_proj = 6.0 * mtp * (3.0 * h + 2.0 * h * h);
    const double logits = 6.0 * h * megatron_logits_vocab(m, o) * (1.0 + mtp);
    return flops(mlp + layers * (attn_linear + attn_core) + mtp_proj + logits);
}

/// @brief Megatron's model FLOPs of one iteration over `sequences` sequences of `seq` tokens
/// (megatron_model_flops_per_token x B s), what Megatron divides by the iteration time and the
/// GPUs for "Model TFLOP/sec/GPU".
[[nodiscard]] constexpr flop_count megatron_model_flops(const transformer& m, double seq, double sequences,
                                                        const megatron_flops_options& o = {}) {
    return megatron_model_flops_per_token(m, seq, o) * (seq * sequences);
}

// ---------------------------------------------------------------- precision and peak

/// @brief The accelerator's dense peak for `precision`; input_error naming `field` if the
/// accelerator has no peak for it (e.g. fp8 on A100).
[[nodiscard]] inline flop_rate peak_for(const accelerator& acc, dtype precision, std::string_view field = "dtype") {
    if (auto p = acc.peak(precision)) return *p;
    std::string supported;
    for (std::size_t i = 0; i < dtype_count; ++i) {
        const auto d = static_cast<dtype>(i);
        if (!acc.peak(d)) continue;
        supported += (supported.empty() ? "" : ", ") + std::string(to_string(d));
    }
    throw input_error(std::string(field), std::string(to_string(precision)),
                      "a data type " + std::string(acc.name) + " supports: " + supported);
}

}  // namespace commscale
