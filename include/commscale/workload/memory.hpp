#pragma once
/// @file workload/memory.hpp
/// @brief Memory per GPU of a training plan: model state (weights, gradients, optimizer state)
/// split by tensor x pipeline (x expert) parallelism and sharded by ZeRO 1/2/3 (FSDP) over data
/// parallelism; activations per layer per micro-batch by Korthikanti et al. 2022 ("Reducing
/// Activation Recomputation in Large Transformer Models", Table 2), with tensor and sequence
/// parallelism and none/selective/full recompute; and the micro-batches a pipeline schedule keeps
/// in flight. Allocation-free: the step predictor and the planner call these in their hot loops.
///
/// Formulas and their sources, in one place: docs/model.md#the-step-term-by-term.

#include <algorithm>

#include "../units.hpp"
#include "flops.hpp"
#include "transformer.hpp"

namespace commscale {

// ---------------------------------------------------------------- model state

/// @brief Bytes of training state per parameter, split by what each ZeRO stage shards.
struct state_bytes {
    double weights = 2;    ///< working copy of the parameters (bf16/fp16): sharded by ZeRO-3 / FSDP
    double gradients = 2;  ///< gradients: sharded by ZeRO-2 and up
    double optimizer = 12; ///< fp32 master weights + Adam m + v (4 + 4 + 4): sharded by ZeRO-1 and up
    /// @brief Total bytes per parameter.
    [[nodiscard]] constexpr double total() const { return weights + gradients + optimizer; }
};

/// @brief Mixed-precision Adam, 16 bytes/parameter: 2 (fp16 weights) + 2 (fp16 gradients) + 12
/// (fp32 master weights, momentum, variance). Rajbhandari et al. 2020, "ZeRO", section 3.1
/// (2Ψ + 2Ψ + KΨ, K = 12); gpu-fabrics-for-genai "~16 bytes/parameter (4P + 12P)". The default.
inline constexpr state_bytes mixed_precision_adam{2, 2, 12};

/// @brief Mixed-precision Adam with fp32 gradients, 18 bytes/parameter: 2 + 4 + 12. The
/// ml-engineering book's "18 bytes per parameter" (6 weights fp32 + fp16, 4 gradients fp32,
/// 8 Adam), regrouped so the fp32 master copy sits with the optimizer state that ZeRO-1 shards.
inline constexpr state_bytes mixed_precision_adam_fp32_grads{2, 4, 12};

/// @brief Unsharded model-state bytes: parameters x bytes per parameter (e.g. 2e9 x 18 = 36 GB).
[[nodiscard]] constexpr data_size model_state_bytes(double params, state_bytes b = mixed_precision_adam) {
    return bytes(params * b.total());
}

/// @brief Model state held by one GPU, by component.
struct model_state {
    data_size weights{};
    data_size gradients{};
    data_size optimizer{};
    [[nodiscard]] constexpr data_size total() const { return weights + gradients + optimizer; }
};

/// @brief Model state per GPU: each component is params / (tp x pp) x its bytes, divided by dp
/// when the ZeRO stage shards it (1: optimizer; 2: + gradients; 3 = FSDP full shard: + weights).
/// Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B, N_d = 64 -> 120 / 31.4 / 16.6 / 1.9 GB.
/// `params` is the model's total; embeddings are assumed split with the rest (Megatron splits
/// the vocabulary over TP; with PP they sit on the first/last stage, a small error for large l).
[[nodiscard]] constexpr model_state model_state_per_gpu(double params, int tp, int pp, int dp, int zero_stage,
                                                        state_bytes b = mixed_precision_adam) {
    const double local = params / (static_cast<double>(std::max(tp, 1)) * std::max(pp, 1));
    const double d = std::max(dp, 1);
    model_state s;
    s.weights = bytes(local * b.weights / (zero_stage >= 3 ? d : 1.0));
    s.gradients = bytes(local * b.gradients / (zero_stage >= 2 ? d : 1.0));
    s.optimizer = bytes(local * b.optimizer / (zero_stage >= 1 ? d : 1.0));
    return s;
}

/// @brief Model state per GPU of a transformer, with expert parallelism: the routed experts'
/// parameters are split over ep x etp ranks instead of tp (Lepikhin et al. 2020, GShard: experts
/// sharded over the EP group; Megatron-Core expert tensor parallelism splits each expert's GEMMs
/// over etp ranks, `etp` 0 meaning tp), and ZeRO shards their state over the expert-data-parallel
/// ranks, the `expert_dp` replicas of each expert shard (0: dp x tp / (etp x ep), Megatron-Core's
/// expert_data_parallel_size with `dp` the ranks that share dense state, DP x CP), as the
/// distributed optimizer shards its expert buffer over the expert-DP group
/// (megatron/core/distributed/distributed_data_parallel.py: `expert_data_parallel_group`).
/// Everything else splits over tp x pp and shards over dp. Per GPU:
///   dense state  (P - P_e) / (tp pp) x bytes, / dp where ZeRO shards it
///   expert state P_e / (ep etp pp) x bytes, / expert_dp where ZeRO shards it
[[nodiscard]] constexpr model_state model_state_per_gpu(const transformer& m, int tp, int pp, int dp, int ep,
                                                        int zero_stage, state_bytes b = mixed_precision_adam,
                                                        int etp = 0, int expert_dp = 0) {
    // main model + multi-token-prediction modules (trained alongside, DeepSeek-V3 section 2.2);
    // routed experts of both sharded over EP
    const double total = total_parameters(m) + mtp_parameters(m);
    const double expert = routed_expert_parameters(m) +
                          (m.is_moe() ? m.mtp_layers * static_cast<double>(m.experts) * routed_expert_parameters_each(m) : 0.0);
    const int e = std::max(ep, 1), t = std::max(tp, 1), d = std::max(dp, 1);
    const int et = etp > 0 ? etp : t;
    const long long num = static_cast<long long>(d) * t, den = static_cast<long long>(et) * e;
    const int edp = expert_dp > 0 ? expert_dp : (num >= den ? static_cast<int>(num / den) : 1);
    if (et == t && edp == d) {
        // experts shard their state over the same ranks as the rest (no EP, no separate ETP)
        const double effective = total - expert + expert / e;
        return model_state_per_gpu(effective, tp, pp, dp, zero_stage, b);
    }
    const model_state dense = model_state_per_gpu(total - expert, tp, pp, dp, zero_stage, b);
    const model_state experts = model_state_per_gpu(expert / e, et, pp, edp, zero_stage, b);
    return {dense.weights + experts.weights, dense.gradients + experts.gradients, dense.optimizer + experts.optimizer};
}

// ---------------------------------------------------------------- activations

namespace detail {
/// Bytes the unfused attention core keeps per score for the backward (Korthikanti et al. 2022,
/// section 4.1: the softmax output 2, the dropout mask 1 and the dropout output 2, 5 a s^2 b);
/// the softmax output alone (2) for a model trained without dropout (transformer::dropout). The
/// softmax's saved output and the probabilities' copy are `sm`'s (score_softmax_cost): Hugging
/// Face's eager attention keeps its FP32 softmax output, 4, and the 16-bit probabilities that the
/// A V product saves, 2 (with dropout: its mask and output, 3, instead).
[[nodiscard]] constexpr double score_bytes(const transformer& m, score_softmax sm = score_softmax::fused) {
    const score_softmax_cost k = score_softmax_cost_of(sm);
    // + the soft-cap's tanh output, which its backward reads (eager_softcap)
    return k.softmax_saved_bytes + (m.dropout ? 3.0 : k.probs_copy_bytes) +
           (m.attn_logit_softcapping > 0.0 ? eager_softcap.saved_bytes : 0.0);
}

/// Bytes the unfused attention core keeps for its backward, before TP, for `s` tokens of `b`
/// sequences: score_bytes per score of the a x s x s scores, and with grouped-query attention the
/// repeated keys and values that its batched GEMMs keep beyond K and V (unfused_kv_expansion).
[[nodiscard]] constexpr double unfused_core_bytes(const transformer& m, double s, double b, score_softmax sm) {
    return score_bytes(m, sm) * m.heads * s * s * b + 2.0 * unfused_kv_expansion(m).saved_extra * s * b;
}

/// Bytes per token that some models add to an attention layer's saved activations, before TP:
/// * the attention output gate (transformer::attention_output_gate): the gate, 2 q_dim (Megatron-
///   Core's compiled `_apply_output_gate` keeps its inputs, the attention output being kept
///   already), and the gated output, which the output projection saves instead of the attention
///   output: 2 q_dim more in 16 bits; below 16 bits its quantized copy replaces the attention
///   output's (`q` the saved GEMM input's bytes);
/// * QK norm (transformer::qk_layernorm): each RMSNorm keeps its input, the query and key before
///   the norm, 2 (q_dim + kv) (the attention kernel keeps them after the norm and the rotary
///   embedding);
/// * QK L2 norm (transformer::qk_l2_norm) on the rotary layers (transformer::rope_fraction): the
///   compiled L2Norm keeps its input likewise, 2 (q_dim + kv).
/// Zero for a model with none of them.
[[nodiscard]] constexpr double attention_extra_activation_bytes(const transformer& m, double q) {
    if (!m.attention_output_gate && !m.qk_layernorm && !m.qk_l2_norm) [[likely]]
        return 0.0;
    return (m.attention_output_gate ? (q < 2.0 ? 2.0 : 4.0) * m.q_dim() : 0.0) + m.qk_norm_share() * 2.0 * (m.q_dim() + m.kv_dim());
}

/// activation_bytes_per_layer of a hybrid Mamba-Transformer (its doc comment, "Hybrid models").
/// Out of line: off the transformer's path.
[[gnu::cold, gnu::noinline]] constexpr data_size hybrid_activation_bytes(const transformer& m, double s, double b, int tp,
                                                              bool sequence_parallel, recompute r, double gemm_input_bytes,
                                                              unsigned modules, score_softmax sm) {
    const double t = std::max(tp, 1);
    const double q = gemm_input_bytes > 0.0 && gemm_input_bytes < 2.0 ? gemm_input_bytes : 2.0;
    const double h = m.hidden, kv = m.kv_dim(), qd = m.q_dim();
    const double sb = s * b;
    // one block per layer: its norm's input, the first GEMM's input (its norm's output), a dropout mask
    const double replicated = ((m.dropout ? 3.0 : 2.0) + ((modules & recompute_layernorm) ? 0.0 : q)) * sb * h;
    // attention layers: Q, K, V, the attention output (+ its quantized copy), the score tensor
    const double core = (r == recompute::selective || (modules & recompute_core_attn)) ? 0.0 : unfused_core_bytes(m, s, b, sm);
    const double attention = sb * (2.0 * qd + 4.0 * kv + 2.0 * qd + (q < 2.0 ? q * qd : 0.0) + attention_extra_activation_bytes(m, q)) + core;
    // MLP and MoE layers: FC1's output and FC2's input per unit of width, as for a transformer layer
    const double per_width = ((m.gated_mlp ? 4.0 : 2.0) + q) * sb;
    const double dense = (modules & recompute_mlp) ? 0.0 : per_width * m.ffn;
    double moe = 0.0;
    if (m.is_moe()) {
        const double fe = m.expert_width(), routed = m.experts_per_token * fe, shared = m.shared_experts * fe;
        if (!(modules & recompute_moe)) {
            // LatentMoE: + fc2_latent_proj's input, l per token
            moe = per_width * (routed + shared) + q * sb * m.moe_latent;
            if (modules & recompute_moe_act) moe -= q * sb * routed;
            if (modules & recompute_shared_experts) moe -= per_width * shared;
        }
    }
    // Mamba-2 layers: the fused kernel's zxbcdt (in_proj output) and out_x (scan output), the gated
    // RMSNorm's input and out_proj's input
    const double d_in = m.mamba_inner();
    const double mamba = sb * (2.0 * m.mamba_in_proj_width() + 2.0 * d_in + 2.0 * d_in + q * d_in);
    // Gated DeltaNet layers: in_proj's output, the conv1d's output (q, k, v, which
    // flash-linear-attention's chunk function saves with the decay's cumsum in fp32, beta, and
    // each chunk's inverted (I + A) matrix, C values per head and token), the rule's output, the
    // gated RMSNorm's input and out_proj's input
    double gdn = 0.0;
    if (m.gdn_fraction() > 0.0) {
        const hybrid_shape& y = *m.hybrid;
        const double v = y.gdn_v_dim(), heads = y.gdn_v_heads;
        gdn = sb * (2.0 * y.gdn_in_proj_width() + 2.0 * y.gdn_conv_channels() + 4.0 * heads + 2.0 * heads * gdn_chunk +
                    2.0 * v + 2.0 * v + q * v);
    }
    const double split = m.attention_fraction() * attention + m.dense_mlp_fraction() * dense + m.moe_fraction() * moe +
                         m.mamba_fraction() * mamba + m.gdn_fraction() * gdn;
    return bytes((sequence_parallel ? replicated / t : replicated) + split / t);
}
}  // namespace detail

/// @brief Bytes of activations one transformer layer stores for one micro-batch, by Korthikanti
/// et al. 2022 section 4 (16-bit activations, 1-byte dropout masks), generalized to GQA
/// (kv = kv_heads x d), a head width decoupled from h (d_q = heads x d: Qwen3, GPT-OSS; MLA: Q
/// and K a d_qk, V and the attention output a d_v wide), any FFN width f, gated MLP and MoE top-k:
///   replicated over TP (unless sequence parallel): norms 4sbh (Gemma's post-norms 4sbh more),
///     attention input 2sbh, MLP input 2sbh, two dropout masks 2sbh = 10 sbh (8 sbh for a model
///     without dropout: no masks)
///   split over TP: Q 2 sb d_q, K V 4sb kv, projection input 2 sb d_q, MLP 4sbf (gated: 6sbf: gate, up
///     and the product; fused SwiGLU as in Megatron) x top-k, attention core 5 a s^2 b (2 a s^2 b
///     without dropout: the softmax output alone; detail::score_bytes)
///   GPT (kv = d_q = h, f = 4h): sbh (10 + 24/t + 5as/(ht)), Table 2.
/// Sequence parallelism divides the replicated part by t too: sbh/t (34 + 5as/h). Selective
/// recompute drops the attention core: sbh (10 + 24/t), or 34 sbh / t with SP. Full recompute
/// keeps only the layer input, 2 sbh (Table 2, last row).
/// `seq` = s (tokens per sequence on this GPU, already divided by context parallelism),
/// `micro_batch` = b, `tp` = t.
/// `gemm_input_bytes` = q, the bytes per element of the GEMM inputs a linear layer saves for its
/// weight-gradient GEMM: 2 in bf16/fp16; 1 in FP8/MXFP8 with Transformer Engine, which saves the
/// quantized input, not the 16-bit one (transformer_engine/pytorch/module/linear.py and
/// layernorm_linear.py, `forward`: "Cached input tensor" `saved_inputmat = inputmat`, the FP8
/// tensor, after "Discard row-wise data since it is not needed in backward pass"; the norm's
/// output is quantized by the fused norm); in NVFP4 the same column-wise copy, 4-bit values and
/// one E4M3 scale per 16 (NVFP4Quantizer): 0.5625; in MXFP4, one E8M0 scale per 32: 0.53125
/// (saved_gemm_input_bytes). With q < 2 the inputs of the QKV and FC1 GEMMs (norm
/// outputs, 2 x 2sbh above) and of FC2 (the activation's output, 2 s b f) are held at q bytes,
/// and the output projection adds its quantized copy of the attention output, q sb d_q (the 16-bit
/// one stays: the attention kernel saves it for its own backward). The norms' inputs, the
/// attention's Q K V and output, and FC1's output (saved by the activation function) stay 16-bit.
///
/// `modules` (recompute_module bits, Megatron-Core's --recompute-modules) drop what each module
/// alone saves: layernorm its outputs (the QKV and FC1 inputs, 2 q sbh); core_attn the attention
/// core; mla_up_proj the Q, K, V of MLA (not its latents, which the up-projections' fused norms
/// keep, (2 + q) sb (r_q + r_kv)); mlp the dense MLP's FC1 output and FC2 input; moe the
/// same of the routed and shared experts; moe_act the routed experts' FC2 input (q s b k f_e);
/// shared_experts the shared experts' MLP. MoE terms count on the MoE share of the layers.
/// LatentMoE adds fc2_latent_proj's saved input, q s b l per MoE layer (l = moe_latent; its
/// fc1_latent_proj reads the norm's output counted above; moe recompute drops it too). The
/// attention output gate adds the gate and the gated output, 4 sb d_q (2 sb d_q below 16 bits),
/// QK norm its inputs, 2 sb (d_q + kv) (detail::attention_extra_activation_bytes).
///
/// Hybrid models (transformer::is_hybrid), per layer of one block, each kind weighted by its share
/// of the pattern: replicated (/t with SP) the norm's input 2 sbh, its output q sbh (the first
/// GEMM's input) and a dropout mask sbh where the model has dropout; split by t: attention layers
/// Q 2 sb q_dim, K V 4 sb kv, the attention output 2 sb q_dim (+ q sb q_dim quantized) and the
/// core 5 a s^2 b (unless selective or flash); MLP layers (2 + q or 4 + q) s b f; MoE layers the
/// same for top-k + shared expert widths; Mamba-2 layers what Megatron-Core's training path keeps
/// (megatron/core/ssm/mamba_mixer.py `_ssm_training` with use_mem_eff_path): the fused
/// `mamba_split_conv1d_scan_combined` saves its input zxbcdt, 2 sb (2 d_in + 2 G N + H), and the
/// scan's output before the z gating, out_x 2 sb d_in (state-spaces/mamba ssd_combined.py
/// MambaSplitConv1dScanCombinedFn.forward `ctx.save_for_backward`), the gated RMSNorm saves its
/// input 2 sb d_in, out_proj its input q sb d_in. The convolution's output and the chunk states
/// are not kept: the backward recomputes both (`causal_conv1d_fwd_function` and
/// `_chunk_state_fwd` again in MambaSplitConv1dScanCombinedFn.backward); their transient is
/// ssd_workspace_bytes. Nemotron-H 8B, s 8192, b 1, t 1, bf16: 841 MB per Mamba layer.
[[nodiscard]] constexpr data_size activation_bytes_per_layer(const transformer& m, double seq, double micro_batch,
                                                             int tp, bool sequence_parallel, recompute r,
                                                             double gemm_input_bytes = 2.0, unsigned modules = 0,
                                                             score_softmax softmax = score_softmax::fused) {
    const double s = seq, b = micro_batch, h = m.hidden, a = m.heads, kv = m.kv_dim();
    const double t = std::max(tp, 1);
    const double sbh = s * b * h;
    if (r == recompute::full) return bytes(2.0 * sbh);
    if (m.is_hybrid()) [[unlikely]]
        return detail::hybrid_activation_bytes(m, s, b, tp, sequence_parallel, r, gemm_input_bytes, modules, softmax);
    const double q = gemm_input_bytes > 0.0 && gemm_input_bytes < 2.0 ? gemm_input_bytes : 2.0;
    // norm inputs 4sbh (8sbh with Gemma's post-norms, whose inputs TENorm keeps: norms_per_layer),
    // QKV and FC1 inputs 2 q sbh, dropout masks 2sbh (10 sbh in 16 bits); a model trained without
    // dropout (transformer::dropout false) stores no mask
    const double replicated =
        (2.0 * m.norms_per_layer() + (m.dropout ? 2.0 : 0.0) + ((modules & recompute_layernorm) ? 0.0 : 2.0 * q)) * sbh;
    // MLP: (top-k + shared) experts' width on MoE layers, ffn on dense ones (mean over layers):
    // FC1's output (gated: gate and up, 4sbf; else 2sbf) and FC2's input, q s b f
    const double per_width = ((m.gated_mlp ? 4.0 : 2.0) + q) * s * b;  // FC1 output + FC2 input per unit of width
    double mlp = per_width * m.mlp_width_per_token();
    if (m.is_moe()) {
        const double moe = m.moe_fraction(), fe = m.expert_width();
        const double routed = moe * m.experts_per_token * fe, shared = moe * m.shared_experts * fe;
        const double dense = (1.0 - moe) * m.ffn;
        if (modules & recompute_moe) mlp -= per_width * (routed + shared);
        else {
            mlp += moe * q * s * b * m.moe_latent;  // LatentMoE: fc2_latent_proj's input, l per token
            if (modules & recompute_moe_act) mlp -= q * s * b * routed;
            if (modules & recompute_shared_experts) mlp -= per_width * shared;
        }
        if (modules & recompute_mlp) mlp -= per_width * dense;
    } else if (modules & recompute_mlp) {
        mlp = 0.0;
    }
    mlp = std::max(0.0, mlp);
    // Q 2 sb q_dim and K, V 4 sb kv (q_dim = heads x head_dim, = h unless the head width is
    // decoupled: Qwen3, GPT-OSS); MLA: Q a d_qk, K a d_qk, V a d_v wide (DeepSeek-V2 section 2.1)
    const double sbq = s * b * (m.is_mla() ? a * m.v_head_dim : m.q_dim());
    // MLA's latents, which its up-projections (TE LayerNormColumnParallelLinear, the q and kv norms
    // fused) keep whether or not mla_up_proj is recomputed: each norm's input, 2 r, and its output,
    // the GEMM input, q r, for the query latent r_q (none without q_lora_rank) and the KV latent r_kv
    const double mla_latents = m.is_mla() ? (2.0 + q) * s * b * (static_cast<double>(m.q_lora_rank) + m.kv_lora_rank) : 0.0;
    const double qkv = m.is_mla() ? ((modules & recompute_mla_up_proj) ? 0.0 : 2.0 * s * b * a * (2.0 * m.qk_head_dim() + m.v_head_dim)) + mla_latents
                                  : 2.0 * sbq + 4.0 * s * b * kv;
    // the attention output, 2 sb q_dim (MLA a d_v), + the output projection's quantized copy
    // below 16 bits
    const double proj = (2.0 + (q < 2.0 ? q : 0.0)) * sbq + s * b * detail::attention_extra_activation_bytes(m, q);
    const double split = qkv + proj + mlp;
    // the score tensor, which only the unfused core stores (the step model keeps it under
    // recompute::none alone): s x s whatever the window, as that kernel computes it
    // (predict/compute.hpp detail::attention_core_seconds), and the repeated K and V of grouped-
    // query attention (detail::unfused_core_bytes)
    const double core =
        (r == recompute::selective || (modules & recompute_core_attn)) ? 0.0 : detail::unfused_core_bytes(m, s, b, softmax);
    return bytes((sequence_parallel ? replicated / t : replicated) + (split + core) / t);
}

/// @brief Extra activations outside the layers (Korthikanti et al. 2022, section 4.3): on the
/// first stage the embedding dropout mask, s b h (/t with SP; none without dropout); on the last stage the output
/// norm and the fp32 logits for the cross-entropy, 4 s b h (1 + V/h) / t. With one stage, both.
[[nodiscard]] constexpr data_size activation_bytes_outside_layers(const transformer& m, double seq, double micro_batch,
                                                                  int tp, bool sequence_parallel, bool first_stage,
                                                                  bool last_stage) {
    const double sbh = seq * micro_batch * m.hidden, t = std::max(tp, 1);
    double v = 0;
    if (first_stage && m.dropout) v += sequence_parallel ? sbh / t : sbh;
    if (last_stage) v += 4.0 * sbh * (1.0 + static_cast<double>(m.vocab) / m.hidden) / t;
    // Gemma 2's final soft-cap keeps its tanh output per logit (eager_softcap)
    if (last_stage && m.final_logit_softcapping > 0.0)
        v += eager_softcap.saved_bytes * seq * micro_batch * static_cast<double>(m.vocab) / t;
    return bytes(v);
}

/// @brief Transient bytes of one Mamba-2 layer's backward on one GPU: the chunk-boundary states
/// the SSD backward recomputes in fp32 (`_chunk_state_fwd(..., states_in_fp32=True)` in
/// state-spaces/mamba ssd_combined.py `_mamba_chunk_scan_combined_bwd`) and their gradients
/// (`_chunk_scan_bwd_dstates`, fp32), (s/Q) chunks x (d_in / t) x N x 4 bytes each, for b
/// sequences of s tokens (s already divided by CP: Megatron's Mamba CP hands each rank the whole
/// sequence of d_in / (t c) channels, the same bytes). Gated DeltaNet layers the same for the
/// chunk states `chunk_gated_delta_rule_bwd` recomputes and their gradients (fla/ops/
/// gated_delta_rule/chunk.py: h and dh, (s / C) chunks x (Hv / t) heads x dk x dv, counted in
/// fp32 as the SSD's). Held by one layer at a time, so charged once per GPU, not per layer: the
/// larger of the two kinds. 0 for a model without Mamba-2 or Gated DeltaNet layers.
[[nodiscard, gnu::cold, gnu::noinline]] constexpr data_size ssd_workspace_bytes(const transformer& m, double seq, double micro_batch,
                                                                               int tp) {
    if (!m.is_hybrid()) return bytes(0.0);
    double mamba = 0.0, gdn = 0.0;
    if (m.mamba_fraction() > 0.0) {
        const double chunks = std::max(1.0, seq / std::max(m.hybrid->ssm_chunk, 1));
        mamba = 2.0 * 4.0 * micro_batch * chunks * m.mamba_inner() / std::max(tp, 1) * m.hybrid->ssm_state;
    }
    if (m.gdn_fraction() > 0.0) {
        const hybrid_shape& y = *m.hybrid;
        const double chunks = std::max(1.0, std::ceil(seq / gdn_chunk));
        gdn = 2.0 * 4.0 * micro_batch * chunks * y.gdn_v_heads / std::max(tp, 1) * y.gdn_qk_head_dim * static_cast<double>(y.gdn_v_head_dim);
    }
    return bytes(std::max(mamba, gdn));
}

/// @brief Recurrent SSM state of `sequences` sequences over the model's Mamba-2 layers: H P N
/// values per layer and sequence at `element_bytes` (Megatron-Core MambaMixer
/// `mamba_state_shapes_per_request`: (nheads, headdim, d_state), in the weights' dtype, 2; 4 for
/// the fp32 caches Nemotron 3's config asks for, `mamba_ssm_cache_dtype`). What inference caches
/// per sequence in place of a KV cache, and what one chunk of the scan hands the next; training
/// does not keep it (return_final_states false). Nemotron-H 8B: 24 x 2 MiB = 48 MiB per sequence in bf16.
/// Gated DeltaNet layers add their Hv x dk x dv state each.
[[nodiscard]] constexpr data_size ssm_state_bytes(const transformer& m, double sequences = 1.0, double element_bytes = 2.0) {
    if (!m.is_hybrid()) return bytes(0.0);
    const auto n = m.hybrid_layer_counts();
    const hybrid_shape& y = *m.hybrid;
    const double per_sequence = n.mamba * m.mamba_inner() * y.ssm_state +
                                n.gdn * static_cast<double>(y.gdn_v_heads) * y.gdn_qk_head_dim * y.gdn_v_head_dim;
    return bytes(sequences * per_sequence * element_bytes);
}

/// @brief Convolution state of `sequences` sequences over the model's Mamba-2 layers: the last K
/// inputs of each of the d_in + 2 G N channels per layer and sequence (Megatron-Core MambaMixer
/// `mamba_state_shapes_per_request`: (conv_dim, d_conv); HF NemotronH's cache the same), at
/// `element_bytes` (the conv weights' dtype, 2). Nemotron-H 8B: 24 x 80 KiB per sequence.
/// Gated DeltaNet layers add the last K inputs of their 2 qk + v channels.
[[nodiscard]] constexpr data_size conv_state_bytes(const transformer& m, double sequences = 1.0, double element_bytes = 2.0) {
    if (!m.is_hybrid()) return bytes(0.0);
    const auto n = m.hybrid_layer_counts();
    const hybrid_shape& y = *m.hybrid;
    const double per_sequence = n.mamba * m.mamba_conv_channels() * y.conv_kernel + n.gdn * y.gdn_conv_channels() * y.gdn_conv_kernel;
    return bytes(sequences * per_sequence * element_bytes);
}

/// @brief Micro-batches whose activations the first pipeline stage holds at its peak, in units of
/// one micro-batch through the whole stage (Korthikanti et al. 2022, section 4.2.3; Narayanan et
/// al. 2021, section 2.2): GPipe m (all forwards before any backward); 1F1B min(p, m);
/// interleaved 1F1B with v >= 2 chunks per device p (1 + (p-1)/(p v)) = p + (p-1)/v (capped at m).
/// Without pipelining (p = 1) one micro-batch.
[[nodiscard]] constexpr double in_flight_gpipe(int micro_batches) { return std::max(micro_batches, 1); }
[[nodiscard]] constexpr double in_flight_1f1b(int pp, int micro_batches) {
    return std::min(std::max(pp, 1), std::max(micro_batches, 1));
}
[[nodiscard]] constexpr double in_flight_interleaved(int pp, int micro_batches, int virtual_stages) {
    if (virtual_stages <= 1) return in_flight_1f1b(pp, micro_batches);  // one chunk per device is 1F1B
    const double p = std::max(pp, 1), v = virtual_stages;
    return std::min(p + (p - 1.0) / v, static_cast<double>(std::max(micro_batches, 1)));
}

/// @brief A plan's inputs to the memory model (allocation-free aggregate).
struct memory_plan {
    double seq = 2048;          ///< tokens per sequence on one GPU (divide by CP beforehand)
    double micro_batch = 1;     ///< sequences per micro-batch (b)
    int tp = 1, pp = 1, dp = 1, ep = 1;
    int etp = 0;                ///< expert tensor parallelism (0 = tp)
    int expert_dp = 0;          ///< replicas of each expert shard, ZeRO's shards of expert state (0 = dp tp / (etp ep))
    int zero_stage = 0;         ///< 0 (plain DP), 1, 2, 3 (= FSDP full shard)
    bool sequence_parallel = false;
    recompute recompute_mode = recompute::none;
    double in_flight = 1;       ///< micro-batches in flight on the first stage (in_flight_* above)
    double gemm_input_bytes = 2;  ///< bytes per saved GEMM input element (activation_bytes_per_layer): 1 in FP8/MXFP8
    /// layers of the stage whose saved activations are offloaded to host memory (Megatron-Core
    /// --cpu-offloading-num-layers): resident_layers below
    int offloaded_layers = 0;
    unsigned recompute_modules = 0;  ///< recompute_module bits (Megatron-Core --recompute-modules)
    /// With recompute full (plan::full_recompute_share, full_recompute_group): the share of layers
    /// that keep only a checkpoint (recompute_method::block: N of each chunk's layers), the others
    /// saving what `kept_mode` saves; and the layers per checkpoint (uniform with N > 1)
    double full_recompute_share = 1.0;
    int full_recompute_group = 1;
    recompute kept_mode = recompute::none;  ///< what a layer that is not recomputed saves (selective under FlashAttention)
    /// the unfused attention core's softmax (score_softmax: what it keeps per score, detail::score_bytes)
    score_softmax softmax = score_softmax::fused;
    state_bytes state = mixed_precision_adam;
    /// Bytes per element of the transformer layers' weights when they are kept quantized (FP8
    /// parameters, plan::fp8_param_gather: 1 for a per-tensor FP8 weight on parts without its
    /// transpose); 0: state.weights, as every other parameter. The embedding, the output layer and
    /// the final norm stay at state.weights (Megatron-Core quantizes only Transformer Engine's
    /// layers); the layers' norms are counted with their weights (under 0.1% of a layer's).
    double layer_weight_bytes = 0;
};

/// @brief `weights` (model state of every parameter at `p.state.weights` bytes) with the layers'
/// share at p.layer_weight_bytes: `embedding` is the part of `weights` that stays (the embedding
/// side's weights on the same GPU).
[[nodiscard]] constexpr data_size with_layer_weight_bytes(data_size weights, data_size embedding, const memory_plan& p) {
    if (!(p.layer_weight_bytes > 0) || p.layer_weight_bytes == p.state.weights || !(p.state.weights > 0)) return weights;
    return embedding + (weights - embedding) * (p.layer_weight_bytes / p.state.weights);
}

/// @brief Layers of a stage of `layers` whose activations stay in GPU memory when `offloaded` of
/// them are offloaded to the host: max(layers - offloaded, 0). Megatron-Core's activation CPU
/// offloading (`--cpu-offloading --cpu-offloading-num-layers N`, megatron/core/transformer/
/// transformer_block.py builds `get_cpu_offload_context(config.cpu_offloading,
/// config.cpu_offloading_num_layers, config.num_layers, ...)`) hands every tensor a layer saves
/// for backward to Transformer Engine's offload handler (transformer_engine/pytorch/cpu_offload.py,
/// `get_cpu_offload_context`: "num_layers: the number of layers to offload"), which copies the
/// activations of N layers to host memory as the forward pass leaves them and reloads them, a
/// layer ahead, in the backward pass after the resident layers' activations are freed. The peak
/// of GPU activation memory is then that of the resident layers (the reload buffer of one layer
/// is not counted: it is smaller than any one resident layer's freed activations).
[[nodiscard]] constexpr double resident_layers(double layers, int offloaded) {
    return std::max(layers - static_cast<double>(std::max(offloaded, 0)), 0.0);
}

/// @brief What one layer saves for backward under memory plan `p` (activation_bytes_per_layer at
/// its sequence, micro-batch, TP, recompute and saved-input precision): the unit of the activation
/// memory below and of what activation CPU offloading copies (predict/step.hpp).
/// Under full recompute a mean over the layers (Megatron-Core `--recompute-method`): uniform with N
/// layers per group keeps one checkpoint, the group's input, per N layers (2 sbh / N); block keeps
/// the checkpoint on its share of the layers and the whole activations (kept_mode) on the rest. The
/// transient of the group being recomputed in the backward is not counted (as for N = 1).
[[nodiscard]] constexpr data_size activation_bytes_per_layer(const transformer& m, const memory_plan& p) {
    const data_size own = activation_bytes_per_layer(m, p.seq, p.micro_batch, p.tp, p.sequence_parallel, p.recompute_mode,
                                                     p.gemm_input_bytes, p.recompute_modules, p.softmax);
    if (p.recompute_mode != recompute::full || (p.full_recompute_share >= 1.0 && p.full_recompute_group <= 1)) return own;
    const data_size checkpoints = own / static_cast<double>(std::max(p.full_recompute_group, 1));
    if (p.full_recompute_share >= 1.0) return checkpoints;
    const data_size kept = activation_bytes_per_layer(m, p.seq, p.micro_batch, p.tp, p.sequence_parallel, p.kept_mode,
                                                      p.gemm_input_bytes, p.recompute_modules, p.softmax);
    return p.full_recompute_share * checkpoints + (1.0 - p.full_recompute_share) * kept;
}

/// @brief Memory of one GPU (the first pipeline stage, which holds the most activations).
struct memory_breakdown {
    model_state state{};
    data_size activations{};  ///< layers per stage x in-flight micro-batches x per layer + embeddings/logits
    [[nodiscard]] constexpr data_size total() const { return state.total() + activations; }
};

/// @brief Memory per GPU for a plan: model state (model_state_per_gpu) plus activations
/// resident_layers(ceil(l / pp), offloaded_layers) x in_flight x activation_bytes_per_layer + activation_bytes_outside_layers
/// (first stage; with pp = 1 the last stage's logits too, for one micro-batch), + one Mamba-2
/// layer's backward transient (ssd_workspace_bytes) for a hybrid model.
[[nodiscard]] constexpr memory_breakdown memory_per_gpu(const transformer& m, const memory_plan& p) {
    memory_breakdown r;
    r.state = model_state_per_gpu(m, p.tp, p.pp, p.dp, p.ep, p.zero_stage, p.state, p.etp, p.expert_dp);
    if (p.layer_weight_bytes > 0) [[unlikely]]
        r.state.weights = with_layer_weight_bytes(
            r.state.weights, model_state_per_gpu(embedding_parameters(m), p.tp, p.pp, p.dp, p.zero_stage, p.state).weights, p);
    const int pp = std::max(p.pp, 1);
    const double layers_per_stage = (m.layers + pp - 1) / pp;
    const auto per_layer = activation_bytes_per_layer(m, p);
    r.activations = resident_layers(layers_per_stage, p.offloaded_layers) * std::max(p.in_flight, 1.0) * per_layer +
                    activation_bytes_outside_layers(m, p.seq, p.micro_batch, p.tp, p.sequence_parallel, true, pp == 1);
    if (m.is_hybrid()) [[unlikely]]
        r.activations += ssd_workspace_bytes(m, p.seq, p.micro_batch, p.tp);
    return r;
}

/// @brief Memory of one GPU of a pipeline stage whose layout is explicit, as Megatron-Core places
/// the embedding and the loss when they are counted as pipeline layers
/// (`--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`;
/// megatron/core/models/gpt/gpt_model.py builds the embedding with `pre_process`, the output
/// layer with `post_process`): `layers` transformer layers; with `first` the input embedding
/// (vocab x h, + learned positions); with `last` the output layer (vocab x h: the projection, or
/// the copy of a tied embedding Megatron-Core keeps on the last stage), the final norm and the
/// multi-token-prediction modules. Model state is model_state_per_gpu of these parameters (the
/// stage's own: pp = 1), activations layers x in_flight x activation_bytes_per_layer +
/// activation_bytes_outside_layers(first, last) (the first stage's in-flight count, an upper
/// bound for the later stages, as memory_per_gpu charges it).
[[nodiscard]] constexpr memory_breakdown stage_memory_per_gpu(const transformer& m, const memory_plan& p, int layers,
                                                              bool first, bool last) {
    transformer s = m;
    s.layers = std::max(layers, 0);
    if (!last) {
        s.mtp_layers = 0;
        s.mtp_depths = 0;
    }
    const double h = m.hidden, table = static_cast<double>(m.vocab) * h;
    double own = 0.0;  // the stage's embedding-side parameters
    if (first) own += table + (m.learned_positions ? static_cast<double>(m.max_seq) * h : 0.0);
    if (last && !(first && m.tied_embeddings)) own += table;
    if (last) own += h * (m.biases ? 2.0 : 1.0);  // final norm
    // model_state_per_gpu(s) counts the whole embedding_parameters(s); swap it for the stage's own
    // (model state is linear in the parameters on the same tp x dp ranks)
    const model_state all = model_state_per_gpu(s, p.tp, 1, p.dp, p.ep, p.zero_stage, p.state, p.etp, p.expert_dp);
    const model_state swap = model_state_per_gpu(own - embedding_parameters(s), p.tp, 1, p.dp, p.zero_stage, p.state);
    memory_breakdown r;
    r.state = {all.weights + swap.weights, all.gradients + swap.gradients, all.optimizer + swap.optimizer};
    if (p.layer_weight_bytes > 0) [[unlikely]]
        r.state.weights =
            with_layer_weight_bytes(r.state.weights, model_state_per_gpu(own, p.tp, 1, p.dp, p.zero_stage, p.state).weights, p);
    const auto per_layer = activation_bytes_per_layer(m, p);
    r.activations = resident_layers(s.layers, p.offloaded_layers) * std::max(p.in_flight, 1.0) * per_layer +
                    activation_bytes_outside_layers(m, p.seq, p.micro_batch, p.tp, p.sequence_parallel, first, last);
    if (m.is_hybrid() && s.layers > 0) [[unlikely]]
        r.activations += ssd_workspace_bytes(m, p.seq, p.micro_batch, p.tp);
    return r;
}

/// @brief True if the plan's memory fits `capacity` (e.g. accelerator::memory).
[[nodiscard]] constexpr bool fits_in_memory(const memory_breakdown& mb, data_size capacity) {
    return mb.total() <= capacity;
}

/// @brief Accelerators needed just to hold the model state: ceil(params x bytes / capacity).
/// gpu-fabrics-for-genai: GPT-3 175B at 16 B/param on 80 GB -> 35; 1.5T -> 300.
[[nodiscard]] constexpr double devices_for_model_state(double params, data_size capacity,
                                                       state_bytes b = mixed_precision_adam) {
    // The relative slack keeps an exact quotient (2800 GB / 80 GB = 35) from rounding up on a
    // last-bit floating-point error.
    const double n = params * b.total() / in_bytes(capacity) * (1.0 - 1e-12);
    const double c = static_cast<double>(static_cast<long long>(n));
    return c < n ? c + 1.0 : c;
}

}  // namespace commscale
