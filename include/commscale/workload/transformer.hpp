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
///
/// Modern mixture-of-experts models (all fields below default to "absent", so a plain shape is
/// counted as above):
///   MLA        multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2 technical report,
///              section 2.1.2-2.1.3; DeepSeek-V3 technical report, section 2.1.1), a heads, d_n
///              qk_nope_head_dim, d_r qk_rope_head_dim, d_v v_head_dim, r_q q_lora_rank, r_kv
///              kv_lora_rank: W_DQ h x r_q + q_norm r_q + W_UQ r_q x a (d_n + d_r)
///              (without q_lora_rank: W_Q h x a (d_n + d_r)), W_DKV h x (r_kv + d_r) + kv_norm
///              r_kv + W_UK/W_UV r_kv x a (d_n + d_v), W_O a d_v x h.
///   experts    E routed experts of width expert_ffn (moe_intermediate_size) and S shared experts
///              of the same width that every token passes (DeepSeekMoE, Dai et al. 2024; Llama 4);
///              top-k of the routed ones per token; router h x E (+ E biases with `biases`).
///   dense      dense_layers of an MoE model carry a dense MLP of width ffn instead of experts
///              (DeepSeek-V3 first_k_dense_replace = 3; Llama 4 Maverick every other layer).
///   latent     LatentMoE (Nemotron 3 Super; Megatron-Core `--moe-latent-size`, moe_layer.py
///              fc1_latent_proj / fc2_latent_proj, experts.py): each MoE layer projects its input
///              h -> l (moe_latent) before the router's dispatch and l -> h after the combine,
///              TELinear h x l and l x h duplicated on every TP rank (+ l + h biases); the routed
///              experts run in the latent width (fc1 l x f, fc2 f x l; gated 3 l f), the shared
///              experts and the router on the full hidden state.
///   MTP        mtp_layers multi-token-prediction modules (DeepSeek-V3 section 2.2): each one
///              transformer layer (an MoE layer) + projection M 2h x h + two RMSNorms, sharing the
///              embedding and output head with the main model; counted apart (mtp_parameters),
///              as DeepSeek's 671B excludes them. In a hybrid model the module's layer is its
///              attention block and its MLP or MoE block (Nemotron 3 Super's
///              mtp_hybrid_override_pattern "*E"), the same parameters and work.
///   sinks      attention_sinks: one learned logit per head (GPT-OSS, OpenAI 2025 model card).
///   QK norm    qk_layernorm: an RMSNorm over each head's query and key before the rotary embedding,
///              one weight of head_dim for all query heads and one for all key heads (Qwen3:
///              HF Qwen3Attention `q_norm`, `k_norm`; Megatron-Core `--qk-layernorm`).
///   gate       attention_output_gate: a sigmoid gate on the attention output, from a second
///              query-wide output of the query projection, W_Q h x 2 q (Qwen3-Next: Qwen Team
///              2025, HF Qwen3NextAttention `q_proj`; Megatron-Core `--attention-output-gate`,
///              attention.py: linear_qkv q + 2 kv + q wide, `_apply_output_gate`).
///   sliding    sliding_layers attend a window of sliding_window keys (GPT-OSS every other layer):
///              no parameters, fewer attention FLOPs. With chunked_attention they attend within
///              fixed chunks of sliding_window tokens instead (Llama 4's attention_chunk_size on its
///              RoPE layers; HF Llama4TextAttention, Megatron-Bridge llama4_utils.py `chunkify`).
///   NoPE       nope_layers carry no rotary embedding (Llama 4's global layers, every fourth: HF
///              no_rope_layers[i] = 0): no parameters, no FLOPs, no rotary pass on those layers.
///   QK L2 norm qk_l2_norm: a weightless L2 norm (x / sqrt(mean(x^2) + eps)) over each head's query
///              and key on the layers with a rotary embedding (Llama 4 Scout: HF Llama4TextL2Norm,
///              `use_qk_norm`; Megatron-Core `--qk-l2-norm`, torch_norm.py L2Norm): no parameters.
///   post-norms post_norms: a second norm on each residual branch's output before the residual add
///              (Gemma 2 and 3: HF Gemma2DecoderLayer post_attention_layernorm and
///              post_feedforward_layernorm; Megatron-Bridge gemma2_provider.py
///              TERowParallelLinearLayerNorm): four norms per layer, 4 h parameters (RMSNorm).
///   soft-caps  attn_logit_softcapping c: the attention scores become c tanh(x / c) before the
///              softmax; final_logit_softcapping the same on the output logits before the loss
///              (Gemma 2: 50 and 30, Gemma 2 report section 2; HF Gemma2Config). No parameters;
///              the work they add is the step model's (predict/compute.hpp).
///   YaRN       rope_attention_factor: YaRN's attention factor, by which the rotary embedding's
///              sine and cosine are scaled (GPT-OSS 0.1 ln 32 + 1); no parameters, no FLOPs: it
///              decides which RoPE kernels Megatron-Core runs (predict/compute.hpp).
/// Hybrid Mamba-Transformer models (Nemotron-H, Nemotron 3; all fields below default to "absent"):
///   pattern    hybrid_override_pattern (hybrid_shape, behind transformer::hybrid), one symbol per layer (Megatron-Core
///              megatron/core/models/hybrid/hybrid_layer_allocation.py `Symbols`): M a Mamba-2
///              mixer, * self-attention, - an MLP of width ffn, E an MoE layer. Each layer is one
///              block with one pre-norm (RMSNorm, h) and one residual add, not the attention + MLP
///              pair of a transformer layer; layers = the pattern's length.
///   Mamba-2    (Dao & Gu 2024, "Transformers are SSMs", section 7; Megatron-Core
///              megatron/core/ssm/mamba_mixer.py; HF NemotronHMamba2Mixer), H mamba_num_heads, P
///              mamba_head_dim, d_in = H P, N ssm_state_size, G n_groups, K conv_kernel:
///              in_proj h x (2 d_in + 2 G N + H) (z, x, B, C, dt), depthwise conv1d over
///              d_in + 2 G N channels of width K with a bias each (use_conv_bias, which Megatron
///              asserts), dt_bias, A_log and D (H each), the gated RMSNorm weight d_in, out_proj
///              d_in x h (+ in/out biases with `biases`).
///   GDN        G a Gated DeltaNet mixer (Yang et al. 2025, "Gated Delta Networks", ICLR; Qwen3-Next;
///              Megatron-Core's `Symbols.GDN` and training.py `gdn_layer_flops`; HF
///              Qwen3NextGatedDeltaNet), Hk linear_num_key_heads of width dk, Hv
///              linear_num_value_heads of width dv, K linear_conv_kernel_dim; qk = Hk dk,
///              v = Hv dv: in_proj h x (2 qk + 2 v + 2 Hv) (q, k, v, the output gate z, beta
///              and the decay a), a depthwise conv1d over q, k and v (2 qk + v channels of width K,
///              no bias), dt_bias and A_log (Hv each), the gated RMSNorm weight dv (shared by the
///              heads), out_proj v x h. Qwen3-Next-80B-A3B is "GE GE GE *E" twelve times: each of
///              its 48 layers a mixer block and an MoE block, 96 symbols.
/// The per-layer fields of layer_parameters, and every per-layer quantity of the library, are
/// means over the pattern's layers (attention_fraction, mamba_fraction, dense_mlp_fraction,
/// moe_fraction); a pipeline stage holds its count of mean layers (Megatron-Core gives each stage
/// a contiguous run of the pattern, whose own mix may differ from the mean: not modelled).
/// Publishers count "active" parameters differently: active_parameters counts both embedding
/// tables (Mixtral, Qwen, Kimi K2, Llama 4 match it); DeepSeek's 37B and OpenAI's 5.13B leave out
/// the input embedding table (a lookup), tests/unit/workload/model_moe.cpp checks each against its own.
/// GPT-OSS's RMSNorms have no bias, but `biases` counts LayerNorm biases (2h per layer, 0.0002%).

#include <string>
#include <string_view>

#include "../error.hpp"

namespace commscale {

/// @brief The layer pattern and the Mamba-2 mixer of a hybrid Mamba-Transformer (file comment).
/// A transformer refers to one through `transformer::hybrid`, a pointer to an immutable value that
/// lives as long as the process (a constexpr preset's, or one io/model_json.hpp interns), as it
/// refers to its name through a string_view: a transformer without one copies and compares (the
/// layer memo's key) as cheaply as before, and equal pointers mean equal shapes. Aggregate.
struct hybrid_shape {
    std::string_view pattern{};  ///< hybrid_override_pattern: M Mamba-2, * attention, - MLP, E MoE, one per layer
    int mamba_heads = 0;         ///< mamba_num_heads (H)
    int mamba_head_dim = 0;      ///< mamba_head_dim (P); the mixer's inner width d_in = H P
    int ssm_state = 0;           ///< ssm_state_size (N, d_state)
    int mamba_groups = 0;        ///< n_groups (G): heads of a group share B and C
    int conv_kernel = 0;         ///< conv_kernel (K): width of the causal depthwise convolution
    int ssm_chunk = 0;           ///< chunk_size (Q) of the chunked SSD scan
    int gdn_qk_heads = 0;        ///< linear_num_key_heads (Hk): Gated DeltaNet query and key heads
    int gdn_v_heads = 0;         ///< linear_num_value_heads (Hv): value heads, each with its own state
    int gdn_qk_head_dim = 0;     ///< linear_key_head_dim (dk)
    int gdn_v_head_dim = 0;      ///< linear_value_head_dim (dv)
    int gdn_conv_kernel = 0;     ///< linear_conv_kernel_dim (K): the causal convolution over q, k and v

    /// @brief Every field equal; ordered field by field (an intern pool's order).
    [[nodiscard]] constexpr bool operator==(const hybrid_shape&) const = default;
    [[nodiscard]] constexpr auto operator<=>(const hybrid_shape&) const = default;
    /// @brief Mamba-2 mixer inner width d_in = mamba_num_heads x mamba_head_dim.
    [[nodiscard]] constexpr double mamba_inner() const { return static_cast<double>(mamba_heads) * mamba_head_dim; }
    /// @brief Channels of the Mamba-2 causal convolution: x, B and C, d_in + 2 G N.
    [[nodiscard]] constexpr double conv_channels() const { return mamba_inner() + 2.0 * static_cast<double>(mamba_groups) * ssm_state; }
    /// @brief Output width of the Mamba-2 input projection: z, x, B, C, dt: 2 d_in + 2 G N + H.
    [[nodiscard]] constexpr double in_proj_width() const { return mamba_inner() + conv_channels() + mamba_heads; }
    /// @brief Gated DeltaNet query (and key) width qk = Hk dk.
    [[nodiscard]] constexpr double gdn_qk_dim() const { return static_cast<double>(gdn_qk_heads) * gdn_qk_head_dim; }
    /// @brief Gated DeltaNet value width v = Hv dv (also the output gate's and out_proj's input).
    [[nodiscard]] constexpr double gdn_v_dim() const { return static_cast<double>(gdn_v_heads) * gdn_v_head_dim; }
    /// @brief Channels of the Gated DeltaNet convolution: q, k and v, 2 qk + v.
    [[nodiscard]] constexpr double gdn_conv_channels() const { return 2.0 * gdn_qk_dim() + gdn_v_dim(); }
    /// @brief Output width of the Gated DeltaNet input projection: q, k, v, z, beta, a: 2 qk + 2 v + 2 Hv.
    [[nodiscard]] constexpr double gdn_in_proj_width() const { return 2.0 * gdn_qk_dim() + 2.0 * gdn_v_dim() + 2.0 * gdn_v_heads; }
};

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
    // Mixture-of-experts and attention variants (defaults: absent).
    int expert_ffn = 0;            ///< moe_intermediate_size: width of one expert's MLP (0 = ffn)
    int shared_experts = 0;        ///< n_shared_experts: experts every token passes (DeepSeekMoE, Llama 4)
    int dense_layers = 0;          ///< layers of an MoE model with a dense MLP of width ffn (first_k_dense_replace, ...)
    int mtp_layers = 0;            ///< num_nextn_predict_layers: multi-token-prediction modules (DeepSeek-V3)
    int moe_latent = 0;            ///< moe_latent_size: the routed experts' input/output width (LatentMoE; 0 = hidden)
    /// MTP depths trained, Megatron-Core's --mtp-num-layers, when they repeat the mtp_layers modules
    /// (--mtp-use-repeated-layer: Nemotron 3 Super trains 2 depths of its one module); 0 = mtp_layers
    int mtp_depths = 0;
    int q_lora_rank = 0;           ///< MLA query compression rank (0 = full-rank query projection)
    int kv_lora_rank = 0;          ///< MLA key/value compression rank (> 0 means multi-head latent attention)
    int qk_nope_head_dim = 0;      ///< MLA per-head query/key width without rotary
    int qk_rope_head_dim = 0;      ///< MLA per-head (decoupled) rotary query/key width
    int v_head_dim = 0;            ///< MLA per-head value width
    int sliding_window = 0;        ///< keys a sliding-window layer attends (0 = none)
    int sliding_layers = 0;        ///< layers with sliding-window attention (GPT-OSS: every other one)
    bool attention_sinks = false;  ///< one learned sink logit per head (GPT-OSS)
    /// A sigmoid gate on the attention output from a second query-wide projection (Qwen3-Next;
    /// Megatron-Core --attention-output-gate): h x q more per attention layer (file comment).
    bool attention_output_gate = false;
    /// An RMSNorm over each head's query and key (Qwen3; Megatron-Core --qk-layernorm): 2 head_dim
    /// parameters per attention layer (file comment).
    bool qk_layernorm = false;
    /// The sliding layers attend within fixed chunks of sliding_window tokens, not a sliding
    /// window (Llama 4's chunked attention; file comment).
    bool chunked_attention = false;
    /// Layers without a rotary embedding (Llama 4: every fourth; file comment).
    int nope_layers = 0;
    /// A weightless L2 norm over each head's query and key on the layers with a rotary embedding
    /// (Llama 4 Scout; Megatron-Core --qk-l2-norm; file comment).
    bool qk_l2_norm = false;
    /// A second norm on each residual branch's output, before the residual add (Gemma 2 and 3;
    /// file comment): four norms per layer instead of two.
    bool post_norms = false;
    /// Soft-cap of the attention scores, c tanh(x / c) before the softmax (Gemma 2: 50; 0 = none;
    /// file comment).
    double attn_logit_softcapping = 0.0;
    /// Soft-cap of the output logits before the loss (Gemma 2: 30; 0 = none; file comment).
    double final_logit_softcapping = 0.0;
    /// YaRN's attention factor (Hugging Face rope_scaling.attention_factor, by default
    /// 0.1 ln(factor) + 1; Megatron-Core's YaRN "concentration factor"): the rotary embedding's
    /// sine and cosine are scaled by it. 1 without YaRN scaling (or with DeepSeek-V3's mscale =
    /// mscale_all_dim); GPT-OSS 0.1 ln 32 + 1 = 1.3466.
    double rope_attention_factor = 1.0;
    /// Dropout on the residual branches and the embedding (hidden_dropout > 0), and on the
    /// attention probabilities where the attention is unfused (attention_dropout; the models here
    /// set both or neither: Megatron's GPT 0.1 and 0.1, BLOOM 0 and 0): its 1-byte masks are
    /// stored for the backward. False for models trained without it (Llama, Mixtral, Qwen3,
    /// DeepSeek-V3, GPT-OSS, MPT: hidden_dropout / resid_pdrop 0), whose layers store no mask.
    bool dropout = true;
    /// Hybrid Mamba-Transformer (Nemotron-H, Nemotron 3): its layer pattern and Mamba-2 mixer
    /// (hybrid_shape, file comment); nullptr for a transformer.
    const hybrid_shape* hybrid = nullptr;

    /// @brief Every field equal, the name and source texts included (the layer memo's key).
    [[nodiscard]] constexpr bool operator==(const transformer&) const = default;

    /// @brief Head dimension: head_dim_override, else h / a.
    [[nodiscard]] constexpr int head_dim() const {
        return head_dim_override > 0 ? head_dim_override : (heads > 0 ? hidden / heads : 0);
    }
    /// @brief Width of the query (and attention output) projection: heads x head_dim (= h unless
    /// head_dim is decoupled).
    [[nodiscard]] constexpr int q_dim() const { return heads * head_dim(); }
    /// @brief Width of the key (or value) projection: kv_heads x head_dim.
    [[nodiscard]] constexpr int kv_dim() const { return kv_heads * head_dim(); }
    /// @brief Output width of the fused QKV projection (not MLA): q + 2 kv, + q for the attention
    /// output gate (Megatron-Core attention.py `linear_qkv_out_dim`).
    [[nodiscard]] constexpr int qkv_dim() const { return q_dim() * (attention_output_gate ? 2 : 1) + 2 * kv_dim(); }
    /// @brief True for a mixture-of-experts model (experts > 1).
    [[nodiscard]] constexpr bool is_moe() const { return experts > 1; }
    /// @brief True for a hybrid Mamba-Transformer model (a hybrid_override_pattern is set).
    [[nodiscard]] constexpr bool is_hybrid() const { return hybrid != nullptr; }
    /// @brief The hybrid pattern ("" for a transformer).
    [[nodiscard]] constexpr std::string_view hybrid_pattern() const { return hybrid ? hybrid->pattern : std::string_view(); }
    /// @brief Layers of the pattern by kind: M, G, *, - and E symbols (other symbols are counted
    /// nowhere; validate rejects them).
    struct hybrid_layers {
        int mamba = 0, attention = 0, mlp = 0, moe = 0, gdn = 0;
    };
    [[nodiscard, gnu::noinline]] constexpr hybrid_layers hybrid_layer_counts() const {
        hybrid_layers n;
        for (const char c : hybrid_pattern()) {
            n.mamba += c == 'M';
            n.attention += c == '*';
            n.mlp += c == '-';
            n.moe += c == 'E';
            n.gdn += c == 'G';
        }
        return n;
    }
    /// @brief Share of a hybrid pattern's layers that are `symbol` (0 without a pattern). Out of
    /// line, so that the accessors below stay one test on a transformer's path.
    [[gnu::noinline]] constexpr double hybrid_share(char symbol) const {
        const std::string_view pattern = hybrid_pattern();
        int n = 0;
        for (const char c : pattern) n += c == symbol;
        return pattern.empty() ? 0.0 : static_cast<double>(n) / static_cast<double>(pattern.size());
    }
    /// @brief Share of the layers with self-attention: 1, or the *'s of a hybrid pattern.
    [[nodiscard]] constexpr double attention_fraction() const { return is_hybrid() ? hybrid_share('*') : 1.0; }
    /// @brief Share of the layers that are Mamba-2 mixers: 0, or the M's of a hybrid pattern.
    [[nodiscard]] constexpr double mamba_fraction() const { return is_hybrid() ? hybrid_share('M') : 0.0; }
    /// @brief Share of the layers that are Gated DeltaNet mixers: 0, or the G's of a hybrid pattern.
    [[nodiscard]] constexpr double gdn_fraction() const { return is_hybrid() ? hybrid_share('G') : 0.0; }
    /// @brief Residual blocks per layer, each one norm, one residual add and one TP-split output
    /// projection: 2 in a transformer layer (attention, MLP), 1 in a hybrid model's layer.
    [[nodiscard]] constexpr double blocks_per_layer() const { return is_hybrid() ? 1.0 : 2.0; }
    /// @brief Norms on the residual stream per layer: one per residual block, two per block with
    /// post_norms (Gemma 2 and 3: 4).
    [[nodiscard]] constexpr double norms_per_layer() const { return blocks_per_layer() * (post_norms ? 2.0 : 1.0); }
    /// @brief Mamba-2 mixer inner width d_in = mamba_num_heads x mamba_head_dim (0 for a transformer).
    [[nodiscard]] constexpr double mamba_inner() const { return hybrid ? hybrid->mamba_inner() : 0.0; }
    /// @brief Channels of the Mamba-2 causal convolution: x, B and C, d_in + 2 G N (0 for a transformer).
    [[nodiscard]] constexpr double mamba_conv_channels() const { return hybrid ? hybrid->conv_channels() : 0.0; }
    /// @brief Output width of the Mamba-2 input projection: z, x, B, C, dt: 2 d_in + 2 G N + H.
    [[nodiscard]] constexpr double mamba_in_proj_width() const { return hybrid ? hybrid->in_proj_width() : 0.0; }
    /// @brief True with multi-head latent attention (kv_lora_rank > 0).
    [[nodiscard]] constexpr bool is_mla() const { return kv_lora_rank > 0; }
    /// @brief Width of one expert's MLP: expert_ffn, else ffn.
    [[nodiscard]] constexpr int expert_width() const { return expert_ffn > 0 ? expert_ffn : ffn; }
    /// @brief Multi-token-prediction passes per step: mtp_depths, else mtp_layers (each module once).
    [[nodiscard]] constexpr int mtp_passes() const { return mtp_depths > 0 ? mtp_depths : mtp_layers; }
    /// @brief Width of the routed experts' input and output, what the dispatcher moves per token
    /// copy: moe_latent with LatentMoE, else hidden.
    [[nodiscard]] constexpr int expert_io() const { return moe_latent > 0 ? moe_latent : hidden; }
    /// @brief Layers whose MLP is routed experts: layers - dense_layers for MoE, 0 for dense; the
    /// E layers of a hybrid pattern.
    [[nodiscard]] constexpr int moe_layers() const {
        if (is_hybrid()) return is_moe() ? hybrid_layer_counts().moe : 0;
        return is_moe() ? layers - dense_layers : 0;
    }
    /// @brief Fraction of layers that are MoE layers (0 for a dense model; a hybrid pattern's E's).
    [[nodiscard]] constexpr double moe_fraction() const {
        if (is_hybrid()) return is_moe() ? hybrid_share('E') : 0.0;
        return layers > 0 ? static_cast<double>(moe_layers()) / layers : 0.0;
    }
    /// @brief Fraction of layers with a dense MLP of width ffn: 1 for a dense transformer,
    /// 1 - moe_fraction for an MoE one, the -'s of a hybrid pattern.
    [[nodiscard]] constexpr double dense_mlp_fraction() const {
        if (is_hybrid()) return hybrid_share('-');
        return is_moe() ? 1.0 - moe_fraction() : 1.0;
    }
    /// @brief Per-head width of queries and keys: qk_nope + qk_rope with MLA, else head_dim.
    [[nodiscard]] constexpr int qk_head_dim() const { return is_mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim(); }
    /// @brief Per-head width of values: v_head_dim with MLA, else head_dim.
    [[nodiscard]] constexpr int value_head_dim() const { return is_mla() ? v_head_dim : head_dim(); }
    /// @brief Mean over layers of the FFN width one token passes: (top-k + shared) x expert width
    /// on MoE layers, ffn on dense layers (and on every layer of a dense model).
    [[nodiscard, gnu::always_inline]] constexpr double mlp_width_per_token() const {
        if (is_hybrid()) return hybrid_mlp_width_per_token();
        if (!is_moe()) return ffn;
        const double moe = moe_fraction();
        return moe * (experts_per_token + shared_experts) * static_cast<double>(expert_width()) + (1.0 - moe) * ffn;
    }
    /// @brief mlp_width_per_token of a hybrid model: the E layers' (top-k + shared) x expert width
    /// and the - layers' ffn, weighted by their shares of the pattern. Out of line.
    [[gnu::cold, gnu::noinline]] constexpr double hybrid_mlp_width_per_token() const {
        const double moe = moe_fraction();
        return moe * (experts_per_token + shared_experts) * static_cast<double>(expert_width()) + dense_mlp_fraction() * ffn;
    }
    /// @brief Mean over layers of the MLP's weights one token multiplies (multiply-adds per token,
    /// forward): g h x mlp_width_per_token with g = 3 gated, 2 plain; with LatentMoE the routed
    /// experts' g l k f instead of g h k f, plus the two latent projections 2 h l on MoE layers.
    [[nodiscard]] constexpr double mlp_macs_per_token() const {
        const double g = gated_mlp ? 3.0 : 2.0, h = hidden;
        if (moe_latent <= 0 || !is_moe()) return g * h * mlp_width_per_token();
        const double moe = moe_fraction(), l = moe_latent, fe = expert_width();
        return g * h * mlp_width_per_token() + moe * (g * (l - h) * experts_per_token * fe + 2.0 * h * l);
    }
    /// @brief Mean over layers of the keys one query is charged in the full-square convention of
    /// workload/flops.hpp (seq keys per query, twice the causal mean of seq / 2): seq on
    /// full-attention layers; on sliding-window layers twice the causal mean of a window of w
    /// keys, w - w^2 / (2 seq) for seq >= w, i.e. 2w - w^2 / seq (= seq at w = seq, ~2w for w << seq);
    /// on chunked layers (chunked_attention) n full chunks of w and a last one of r = seq - n w
    /// tokens, each attended causally: (n w^2 + r^2) / seq (= w when w divides seq).
    [[nodiscard]] constexpr double attention_span(double seq) const {
        if (sliding_window <= 0 || sliding_layers <= 0 || layers <= 0 || !(seq > 0)) return seq;
        const double sl = static_cast<double>(sliding_layers) / layers, w = sliding_window;
        double window = seq;
        if (w < seq) {
            if (chunked_attention) {
                const double n = static_cast<double>(static_cast<long long>(seq / w));  // whole chunks
                const double r = seq - n * w;
                window = (n * w * w + r * r) / seq;
            } else {
                window = 2.0 * w - w * w / seq;
            }
        }
        return (1.0 - sl) * seq + sl * window;
    }
    /// @brief Share of the layers with a rotary embedding (1 - nope_layers / layers; 0 without
    /// rotary positions: learned positions or ALiBi).
    [[nodiscard]] constexpr double rope_fraction() const {
        if (learned_positions || alibi) return 0.0;
        return layers > 0 ? 1.0 - static_cast<double>(nope_layers) / layers : 1.0;
    }
    /// @brief The QK L2 norm's passes per attention layer, mean over layers: rope_fraction with
    /// qk_l2_norm (it runs on the rotary layers), else 0.
    [[nodiscard]] constexpr double qk_l2_norm_share() const { return qk_l2_norm ? rope_fraction() : 0.0; }
    /// @brief Norms over each attention layer's query and key, mean over layers: 1 with QK norm
    /// (every attention layer) plus qk_l2_norm_share.
    [[nodiscard]] constexpr double qk_norm_share() const { return (qk_layernorm ? 1.0 : 0.0) + qk_l2_norm_share(); }
};

/// @brief What a logit soft-cap c tanh(x / c) (transformer::attn_logit_softcapping,
/// final_logit_softcapping) costs per 16-bit element where it runs as eager PyTorch, as
/// Megatron-Bridge runs it (gemma2_provider.py `logit_softcapping`: `scale * torch.tanh(logits /
/// scale)`): forward the division, the tanh and the product, one kernel each, each reading and
/// writing 2 bytes (12); backward their gradients, 4, 6 (tanh's reads its saved output too) and 4
/// bytes (14), three kernels; the tanh output kept for the backward, 2 bytes (torch.tanh saves its
/// result). The attention core's unfused soft-cap (predict/compute.hpp) and the output layer's
/// both pay it, over the scores and over the logits (workload/memory.hpp keeps the saved bytes).
struct softcap_cost {
    double fwd_bytes, bwd_bytes, kernels_each_way, saved_bytes;
};
inline constexpr softcap_cost eager_softcap{12.0, 14.0, 3.0, 2.0};

/// @brief How the unfused attention core turns its 16-bit s x s scores into probabilities
/// (predict/compute.hpp detail::attention_core_seconds; workload/memory.hpp detail::score_bytes).
/// * `fused`: Megatron's FusedScaleMaskSoftmax with its fused CUDA kernel
///   (ScaledUpperTriangMaskedSoftmax under the causal mask; megatron/core/fusions/fused_softmax.py),
///   which reads the scores and writes the probabilities, and backward reads the output gradient
///   and the saved probabilities and writes the input gradient, one kernel each way. It loads only
///   the row's causal part, the keys up to the query's own (apex csrc/megatron/
///   scaled_upper_triang_masked_softmax.h: `local_seq = blockIdx.x + 1`, loads where
///   `element_index < local_seq`), half the square, and stores the whole row, zeros above the
///   diagonal: 1 + 2 = 3 bytes per score forward, 2 + 2 = 4 backward. Megatron-Core runs it where
///   `is_kernel_available` (megatron_score_softmax).
/// * `torch_fallback`: the same module's `forward_torch_softmax` elsewhere, in 16 bits
///   (attention_softmax_in_fp32 false, as Megatron-Bridge r0.2.0's GPTModelProvider sets it):
///   attention_mask_func's `masked_fill_` in place with the cached [s, s] causal mask
///   (get_default_causal_mask; read the score and a 1-byte mask element, write the score: 5),
///   then torch.nn.Softmax (4); backward the softmax's (6) and masked_fill's, `grad.masked_fill(mask,
///   0)` (5): 9 and 11 bytes, two kernels each way.
/// * `eager_fp32`: Hugging Face transformers' eager attention (attn_implementation "eager";
///   `eager_attention_forward` in modeling_llama.py, modeling_gemma2.py and the models copied
///   from them), which the PyTorch stacks run where they do not run a flash kernel: the product
///   by `scaling` (read and write 2 bytes: 4), the additive causal mask of the model's dtype
///   broadcast over the heads (read 2 + 2, write 2: 6), `softmax(dim=-1, dtype=torch.float32)`
///   (ATen's softmax with a dtype casts a BF16 input first, aten/src/ATen/native/SoftMax.cpp: read
///   2 write 4, then read 4 write 4) and `.to(query.dtype)` (read 4, write 2): 30 bytes in five
///   kernels; backward the cast back (read 2, write 4), the FP32 softmax backward (read 4 + 4,
///   write 4), the cast to BF16 (read 4, write 2) and the product (4): 28 bytes in four kernels
///   (the mask's addition passes its gradient through).
/// `softmax_saved_bytes` per score is what the softmax saves for its backward (its output: 2 in
/// 16 bits, 4 in FP32) and `probs_copy_bytes` the 16-bit probabilities that the A V product saves
/// where they are a tensor of their own (eager_fp32's cast; the fused kernels' output is the same
/// tensor). Attention dropout (transformer::dropout) adds its own passes and keeps its mask and
/// output in place of that copy.
enum class score_softmax { fused, torch_fallback, eager_fp32 };
struct score_softmax_cost {
    double fwd_bytes, bwd_bytes, kernels_fwd, kernels_bwd, softmax_saved_bytes, probs_copy_bytes;
};
/// @brief Per-score cost of `k` (score_softmax's doc comment).
[[nodiscard]] constexpr score_softmax_cost score_softmax_cost_of(score_softmax k) {
    switch (k) {
        case score_softmax::torch_fallback: return {9.0, 11.0, 2.0, 2.0, 2.0, 0.0};
        case score_softmax::eager_fp32: return {30.0, 28.0, 5.0, 4.0, 4.0, 2.0};
        case score_softmax::fused: break;
    }
    return {3.0, 4.0, 1.0, 1.0, 2.0, 0.0};
}
/// @brief The softmax Megatron's FusedScaleMaskSoftmax runs over `attn_batches` (micro-batch x
/// heads per rank) rows of `sq` queries by `sk` keys under the causal mask: its fused kernel
/// where `is_kernel_available` (megatron/core/fusions/fused_softmax.py, Megatron-Core 0.10-0.19:
/// 16 < sk <= 4096, sq and sk multiples of 4, attn_batches a multiple of 4 and of the kernel's
/// batches per block, which apex's scaled_masked_softmax_cuda `get_batch_per_block` makes 8 up to
/// 128 keys (two rows per 32-thread warp, 128 threads) and 4 above), its 16-bit PyTorch fallback
/// elsewhere. The masked_softmax_fusion flag that also gates it is on in Megatron-LM's arguments
/// and Megatron-Bridge's GPTModelProvider. The megatron-lm and megatron-deepspeed profiles take the
/// same limit: Megatron-LM's own megatron/model/fused_softmax.py had it from January 2022 (2,048
/// keys before; its legacy copy went to 16,384 with apex's kernels in July 2023).
[[nodiscard]] constexpr score_softmax megatron_score_softmax(long long attn_batches, long long sq, long long sk) {
    const long long per_block = sk <= 128 ? 8 : 4;
    return sk > 16 && sk <= 4096 && sq > 0 && sq % 4 == 0 && sk % 4 == 0 && attn_batches > 0 && attn_batches % per_block == 0
               ? score_softmax::fused
               : score_softmax::torch_fallback;
}

/// @brief Grouped-query attention's keys and values repeated to the query heads before the unfused
/// core's batched GEMMs (Megatron's DotProductAttention: `key.repeat_interleave(np / ng, dim=2)`
/// and the same for the value; Hugging Face's `repeat_kv`, an expand and a copying reshape), in
/// 16-bit elements per token before tensor parallelism: forward each copy reads its kv_dim and
/// writes q_dim (`moved`: 2 (kv_dim + q_dim)), the backward sums the gradient back over the same
/// elements, two kernels each way; the GEMMs save the repeated copies in place of K and V, 2 (q_dim -
/// kv_dim) more (`saved_extra`). Zero without grouping (and for MLA, whose heads have their own K
/// and V).
struct kv_expansion_cost {
    double moved = 0, kernels_each_way = 0, saved_extra = 0;
};
[[nodiscard]] constexpr kv_expansion_cost unfused_kv_expansion(const transformer& m) {
    if (m.heads <= m.kv_heads) return {};
    const double q = m.q_dim(), kv = m.kv_dim();
    return {2.0 * (kv + q), 2.0, 2.0 * (q - kv)};
}

/// @brief Parameters of one transformer layer, by component (all counts, not bytes). Where MoE
/// and dense layers mix (dense_layers > 0), the MLP fields are means over the model's layers, so
/// that layers x total() is every layer's parameters.
struct layer_parameters {
    double attention = 0;   ///< the token mixers: Q, K, V, O projections (MLA: its down/up projections and norms;
                            ///< sinks; hybrid models: with the Mamba-2 mixers of the M layers, mamba_parameters)
    double mlp_expert = 0;  ///< one routed expert's MLP (the whole MLP for a dense model)
    double mlp = 0;         ///< all routed experts' MLPs (mean over layers), or the dense model's MLP
    double shared = 0;      ///< MoE models: shared experts, LatentMoE's latent projections and the dense
                            ///< layers' MLPs (mean over layers)
    double router = 0;      ///< MoE gate h x experts (mean over layers; 0 for dense)
    double norms = 0;       ///< the layer's norms (transformer::norms_per_layer: two, four with post_norms, one in a hybrid model's layer)
    /// @brief All parameters of the layer.
    [[nodiscard]] constexpr double total() const { return attention + mlp + shared + router + norms; }
};

/// @brief Attention parameters of one layer (file comment: standard/GQA or MLA, + sinks).
[[nodiscard, gnu::always_inline]] constexpr double attention_parameters(const transformer& m) {
    const double h = m.hidden, a = m.heads;
    const double bias = m.biases ? 1.0 : 0.0;
    double p = 0;
    if (m.is_mla()) {
        const double dn = m.qk_nope_head_dim, dr = m.qk_rope_head_dim, dv = m.v_head_dim;
        const double rq = m.q_lora_rank, rkv = m.kv_lora_rank;
        p += m.q_lora_rank > 0 ? h * rq + rq + rq * a * (dn + dr) : h * a * (dn + dr);  // W_DQ, q_norm, W_UQ (or W_Q)
        p += h * (rkv + dr) + rkv + rkv * a * (dn + dv);                              // W_DKV (+ W_KR), kv_norm, W_UK, W_UV
        p += a * dv * h;                                                              // W_O
        p += bias * (a * (dn + dr) + rkv + dr + a * (dn + dv) + h);
    } else {
        const double kv = m.kv_dim(), q = m.q_dim();
        // Q is h x q and O q x h (q = heads x head_dim, = h usually); K and V are h x kv
        // (grouped-query attention shares them); the output gate another h x q.
        const double gate = m.attention_output_gate ? 1.0 : 0.0;
        p = (2.0 + gate) * h * q + 2.0 * h * kv + bias * ((1.0 + gate) * q + h + 2.0 * kv);
    }
    if (m.attention_sinks) p += a;
    if (m.qk_layernorm) p += 2.0 * m.head_dim();
    return p;
}

/// @brief Parameters of an MLP of width f (gated: 3 h f; plain: 2 h f; + biases).
[[nodiscard]] constexpr double mlp_parameters(const transformer& m, double f) {
    const double h = m.hidden, bias = m.biases ? 1.0 : 0.0;
    return m.gated_mlp ? 3.0 * h * f + bias * (2.0 * f + h) : 2.0 * h * f + bias * (f + h);
}

/// @brief Router parameters of one MoE layer: h x E (+ E biases with `biases`); 0 for dense.
[[nodiscard]] constexpr double router_parameters(const transformer& m) {
    return m.is_moe() ? static_cast<double>(m.hidden) * m.experts + (m.biases ? m.experts : 0.0) : 0.0;
}

/// @brief Parameters of one routed expert's MLP of width f = expert_width over its input width
/// i = expert_io (hidden, or LatentMoE's latent): gated 3 i f, plain 2 i f (+ biases).
[[nodiscard]] constexpr double routed_expert_parameters_each(const transformer& m) {
    if (m.moe_latent <= 0) return mlp_parameters(m, m.expert_width());
    const double i = m.moe_latent, f = m.expert_width(), bias = m.biases ? 1.0 : 0.0;
    return m.gated_mlp ? 3.0 * i * f + bias * (2.0 * f + i) : 2.0 * i * f + bias * (f + i);
}

/// @brief LatentMoE's projections of one MoE layer: fc1_latent_proj h x l and fc2_latent_proj
/// l x h (+ l + h biases with `biases`); 0 without a latent width.
[[nodiscard]] constexpr double latent_projection_parameters(const transformer& m) {
    if (m.moe_latent <= 0 || !m.is_moe()) return 0.0;
    const double h = m.hidden, l = m.moe_latent;
    return 2.0 * h * l + (m.biases ? l + h : 0.0);
}

/// @brief Parameters of one Mamba-2 mixer (file comment), without the layer's pre-norm:
/// in_proj h (2 d_in + 2 G N + H), conv1d (d_in + 2 G N)(K + 1), dt_bias, A_log, D 3 H, gated
/// RMSNorm d_in, out_proj d_in h (+ 2 d_in + 2 G N + H + h biases with `biases`). Nemotron-H 8B
/// (h 4096, H 128, P 64, N 128, G 8, K 4): 109,635,968. 0 without Mamba heads.
[[nodiscard]] constexpr double mamba_parameters(const transformer& m) {
    if (!m.hybrid || m.hybrid->mamba_heads <= 0) return 0.0;
    const hybrid_shape& y = *m.hybrid;
    const double h = m.hidden, d_in = y.mamba_inner(), in_width = y.in_proj_width(), conv = y.conv_channels();
    const double bias = m.biases ? 1.0 : 0.0;
    return h * in_width + conv * (y.conv_kernel + 1.0) + 3.0 * y.mamba_heads + d_in + d_in * h + bias * (in_width + h);
}

/// @brief Parameters of one Gated DeltaNet mixer (file comment), without the layer's pre-norm:
/// in_proj h (2 qk + 2 v + 2 Hv), conv1d (2 qk + v) K, dt_bias and A_log 2 Hv, the gated RMSNorm
/// dv, out_proj v h. Qwen3-Next-80B-A3B (h 2048, Hk 16, Hv 32, dk = dv = 128, K 4): 33,718,464.
/// 0 without GDN heads.
[[nodiscard]] constexpr double gdn_parameters(const transformer& m) {
    if (!m.hybrid || m.hybrid->gdn_v_heads <= 0) return 0.0;
    const hybrid_shape& y = *m.hybrid;
    const double h = m.hidden;
    return h * y.gdn_in_proj_width() + y.gdn_conv_channels() * y.gdn_conv_kernel + 2.0 * y.gdn_v_heads + y.gdn_v_head_dim +
           y.gdn_v_dim() * h;
}

namespace detail {
/// parameters_per_layer of a hybrid Mamba-Transformer: each kind of layer weighted by its share
/// of the pattern, one pre-norm per layer. Out of line: off the transformer's path.
[[gnu::cold, gnu::noinline]] constexpr layer_parameters hybrid_parameters_per_layer(const transformer& m) {
    const double h = m.hidden, bias = m.biases ? 1.0 : 0.0;
    const double moe = m.moe_fraction(), dense = m.dense_mlp_fraction();
    layer_parameters p;
    // the token mixers: attention on the * layers, the Mamba-2 mixer on the M layers, Gated
    // DeltaNet on the G layers
    p.attention = m.attention_fraction() * attention_parameters(m) + m.mamba_fraction() * mamba_parameters(m) +
                  m.gdn_fraction() * gdn_parameters(m);
    p.norms = h * (1.0 + bias);
    if (!m.is_moe()) {
        p.mlp_expert = mlp_parameters(m, m.ffn);
        p.mlp = dense * p.mlp_expert;
        return p;
    }
    p.mlp_expert = routed_expert_parameters_each(m);
    p.mlp = moe * p.mlp_expert * m.experts;
    p.shared = moe * (mlp_parameters(m, m.expert_width()) * m.shared_experts + latent_projection_parameters(m)) +
               dense * mlp_parameters(m, m.ffn);
    p.router = moe * router_parameters(m);
    return p;
}
}  // namespace detail

/// @brief Parameters of one layer (mean over layers where MoE and dense layers, or a hybrid
/// pattern's kinds, mix). Formula in the file comment; counts, dimensionless.
[[nodiscard]] constexpr layer_parameters parameters_per_layer(const transformer& m) {
    if (m.is_hybrid()) [[unlikely]]
        return detail::hybrid_parameters_per_layer(m);
    const double h = m.hidden;
    const double bias = m.biases ? 1.0 : 0.0;
    layer_parameters p;
    p.attention = attention_parameters(m);
    p.norms = m.norms_per_layer() * h * (1.0 + bias);
    if (!m.is_moe()) {
        p.mlp_expert = mlp_parameters(m, m.ffn);
        p.mlp = p.mlp_expert;
        return p;
    }
    const double moe = m.moe_fraction();
    p.mlp_expert = routed_expert_parameters_each(m);
    p.mlp = moe * p.mlp_expert * m.experts;
    p.shared = moe * (mlp_parameters(m, m.expert_width()) * m.shared_experts + latent_projection_parameters(m)) +
               (1.0 - moe) * mlp_parameters(m, m.ffn);
    p.router = moe * router_parameters(m);
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

/// @brief The layer of one multi-token-prediction module as a transformer of its own: `m` with
/// every layer an MoE layer (a dense model's: its MLP) and full attention; a hybrid model's
/// module is an attention block and an MoE or MLP block (mtp_hybrid_override_pattern "*E" of
/// Nemotron 3 Super), i.e. one transformer layer of the same shapes.
[[nodiscard]] constexpr transformer mtp_block(const transformer& m) {
    transformer block = m;
    block.dense_layers = 0;
    block.sliding_layers = 0;
    block.hybrid = nullptr;
    return block;
}

/// @brief Total parameter count of the main model: all layers + embeddings (all experts
/// included; multi-token-prediction modules apart, see mtp_parameters).
[[nodiscard]] constexpr double total_parameters(const transformer& m) {
    return m.layers * parameters_per_layer(m).total() + embedding_parameters(m);
}

/// @brief Parameters of the multi-token-prediction modules (DeepSeek-V3 technical report,
/// section 2.2): per module one MoE transformer layer, the projection M (2h x h) and the RMSNorms
/// of the hidden state and of the embedding, + the output head's norm; embedding and output head
/// shared with the main model. 0 without MTP.
[[nodiscard]] constexpr double mtp_parameters(const transformer& m) {
    if (m.mtp_layers <= 0) return 0.0;
    const double h = m.hidden;
    const double layer = attention_parameters(m) + 2.0 * h * (m.biases ? 2.0 : 1.0) +
                         (m.is_moe() ? routed_expert_parameters_each(m) * m.experts +
                                           mlp_parameters(m, m.expert_width()) * m.shared_experts +
                                           latent_projection_parameters(m) + router_parameters(m)
                                     : mlp_parameters(m, m.ffn));
    return m.mtp_layers * (layer + 2.0 * h * h + 3.0 * h);
}

/// @brief Parameters one token passes through: as total_parameters, but on MoE layers only
/// experts_per_token of the routed experts (+ the shared ones). Embeddings included (input table
/// and output head); MTP modules not. Mixtral 8x7B: 12.9B active of 46.7B (Jiang et al. 2024).
[[nodiscard]] constexpr double active_parameters(const transformer& m) {
    const auto p = parameters_per_layer(m);
    double mlp = p.mlp;
    if (m.is_moe()) mlp = m.moe_fraction() * p.mlp_expert * m.experts_per_token + p.shared;
    return m.layers * (p.attention + mlp + p.router + p.norms) + embedding_parameters(m);
}

/// @brief Parameters without the embedding tables (what Kaplan et al. 2020 call N), all experts.
[[nodiscard]] constexpr double non_embedding_parameters(const transformer& m) {
    return m.layers * parameters_per_layer(m).total();
}

/// @brief Parameters of all routed experts (what expert parallelism shards), 0 for dense models.
[[nodiscard]] constexpr double routed_expert_parameters(const transformer& m) {
    return m.is_moe() ? m.layers * parameters_per_layer(m).mlp : 0.0;
}

/// @brief Throws input_error naming `field` (e.g. `model.hybrid_override_pattern`) unless
/// `pattern` is a hybrid layer pattern of `layers` layers: one of M (Mamba-2), G (Gated DeltaNet),
/// * (attention), - (MLP), E (MoE) per layer (Megatron-Core's `Symbols` of
/// hybrid_layer_allocation.py; its other symbols, pipeline separators and MTP patterns are not
/// modelled).
[[gnu::cold]] inline void validate_hybrid_pattern(std::string_view pattern, int layers, std::string_view field) {
    const std::string accepted = "one symbol per layer: M (Mamba-2), G (Gated DeltaNet), * (attention), - (MLP), E (MoE)";
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c != 'M' && c != 'G' && c != '*' && c != '-' && c != 'E')
            throw input_error(std::string(field),
                              "'" + std::string(1, c) + "' at position " + std::to_string(i) + " of \"" +
                                  std::string(pattern.substr(0, 120)) + (pattern.size() > 120 ? "...\"" : "\""),
                              accepted);
    }
    if (pattern.size() != static_cast<std::size_t>(layers))
        throw input_error(std::string(field), std::to_string(pattern.size()) + " symbols",
                          accepted + ", as many as the layers (" + std::to_string(layers) + ")");
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
    /// A config.json count that another field bounds (attention heads by hidden, KV heads by
    /// heads, experts per token by experts): any positive int up to 2^30.
    static constexpr int bounded_count = 1 << 30;
    /// MPT's expansion_ratio (ffn / hidden, llm-foundry default 4): 1/8 to 64.
    static constexpr double min_expansion_ratio = 0.125;
    static constexpr double max_expansion_ratio = 64.0;
    /// YaRN's attention factor (rope_attention_factor; GPT-OSS 1.35): at most 100.
    static constexpr double max_rope_attention_factor = 100.0;
    /// A logit soft-cap (attn_logit_softcapping, final_logit_softcapping; Gemma 2: 50 and 30): at
    /// most 1e6, beyond which tanh(x / c) x c is the identity for any logit a model produces.
    static constexpr double max_logit_softcap = 1e6;
    /// Mamba-2's expand (mixer inner width / hidden, default 2): 1/16 to 64.
    static constexpr double min_mamba_expand = 0.0625;
    static constexpr double max_mamba_expand = 64.0;
    /// Mamba-2 causal convolution width (conv_kernel, typically 4): 2^10.
    static constexpr int conv_kernel = 1 << 10;
    /// Mamba-2 SSD scan chunk (chunk_size, typically 128-256): 2^16.
    static constexpr int ssm_chunk = 1 << 16;
};

/// @brief Throws input_error (field path `<field>.<member>`) unless the shape is possible:
/// every size >= 1, heads divide hidden, kv_heads divide heads, 1 <= experts_per_token <= experts,
/// sizes within generous bounds and at most max_model_parameters in all.
namespace detail {
/// Cold, out-of-line throwers for validate(transformer): the checks stay inline and cheap, the
/// messages are built only on failure (validate runs in the step predictor's hot path).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_model_field(std::string_view field, const char* name, int v,
                                                                      const std::string& accepted) {
    throw input_error(std::string(field) + "." + name, std::to_string(v), accepted);
}
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_model_range(std::string_view field, const char* name, int v,
                                                                      int lo, int hi, const char* what) {
    throw_model_field(field, name, v, std::string(what) + " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}
/// The hybrid Mamba-Transformer checks of validate(transformer), naming `<field>.hybrid.<member>`:
/// the pattern (validate_hybrid_pattern); every Mamba-2 size >= 1 when the pattern has M layers
/// (>= 0 otherwise), heads a multiple of the groups (Megatron-Core's MambaMixer asserts nheads %
/// ngroups == 0); E layers exactly when the model has routed experts; and none of the
/// transformer-only variants the pattern cannot carry (dense_layers: the pattern places the MLP
/// layers; sliding windows, MTP, MLA, parallel attention). Out of line: off the transformer's path.
[[gnu::cold, gnu::noinline]] inline void validate_hybrid(const transformer& m, std::string_view field) {
    const hybrid_shape& y = *m.hybrid;
    const std::string hybrid_field = std::string(field) + ".hybrid";
    auto path = [field](const char* name) { return std::string(field) + "." + name; };
    struct size_field { const char* name; int v; int hi; };
    const size_field sizes[] = {{"mamba_heads", y.mamba_heads, model_size_limits::hidden},
                                {"mamba_head_dim", y.mamba_head_dim, model_size_limits::hidden},
                                {"ssm_state", y.ssm_state, model_size_limits::hidden},
                                {"mamba_groups", y.mamba_groups, model_size_limits::hidden},
                                {"conv_kernel", y.conv_kernel, model_size_limits::conv_kernel},
                                {"ssm_chunk", y.ssm_chunk, model_size_limits::ssm_chunk}};
    validate_hybrid_pattern(y.pattern, m.layers, hybrid_field + ".pattern");
    const size_field gdn_sizes[] = {{"gdn_qk_heads", y.gdn_qk_heads, model_size_limits::hidden},
                                    {"gdn_v_heads", y.gdn_v_heads, model_size_limits::hidden},
                                    {"gdn_qk_head_dim", y.gdn_qk_head_dim, model_size_limits::hidden},
                                    {"gdn_v_head_dim", y.gdn_v_head_dim, model_size_limits::hidden},
                                    {"gdn_conv_kernel", y.gdn_conv_kernel, model_size_limits::conv_kernel}};
    const auto n = m.hybrid_layer_counts();
    // a mixer's sizes: >= 1 where the pattern has its layers, >= 0 otherwise
    auto check_sizes = [&](const auto& fields, int layers_of_kind, const char* with_layers) {
        for (const auto& f : fields) {
            if (layers_of_kind > 0 && (f.v < 1 || f.v > f.hi)) throw_model_range(hybrid_field, f.name, f.v, 1, f.hi, with_layers);
            if (layers_of_kind == 0 && (f.v < 0 || f.v > f.hi)) throw_model_range(hybrid_field, f.name, f.v, 0, f.hi, "an integer");
        }
    };
    check_sizes(sizes, n.mamba, "an integer (the pattern has Mamba-2 layers)");
    check_sizes(gdn_sizes, n.gdn, "an integer (the pattern has Gated DeltaNet layers)");
    if (n.gdn > 0 && y.gdn_v_heads % y.gdn_qk_heads != 0)
        throw input_error(hybrid_field + ".gdn_v_heads", std::to_string(y.gdn_v_heads),
                          "a multiple of gdn_qk_heads (" + std::to_string(y.gdn_qk_heads) + "): value heads share each query-key head");
    if (n.mamba > 0 && y.mamba_heads % y.mamba_groups != 0)
        throw input_error(hybrid_field + ".mamba_heads", std::to_string(y.mamba_heads),
                          "a multiple of mamba_groups (" + std::to_string(y.mamba_groups) + "): each group's heads share B and C");
    if (n.moe > 0 && !m.is_moe())
        throw input_error(path("experts"), std::to_string(m.experts), "> 1 for a pattern with E (MoE) layers");
    if (n.moe == 0 && m.is_moe())
        throw input_error(hybrid_field + ".pattern", "\"" + std::string(y.pattern.substr(0, 120)) + "\" (no E layer)",
                          "at least one E (MoE) layer for a model with " + std::to_string(m.experts) + " experts");
    const size_field absent[] = {{"dense_layers", m.dense_layers, 0}, {"sliding_layers", m.sliding_layers, 0},
                                 {"kv_lora_rank", m.kv_lora_rank, 0}};
    for (const auto& f : absent)
        if (f.v != 0) throw_model_field(field, f.name, f.v, "0 in a hybrid model (not modelled with a hybrid pattern)");
    if (m.parallel_attention)
        throw input_error(path("parallel_attention"), "true", "false in a hybrid model (each layer is one block)");
}
}  // namespace detail

inline void validate(const transformer& m, std::string_view field = "model") {
    // field paths built only on failure: validate runs in the step predictor's allocation-free path
    auto path = [field](const char* name) { return std::string(field) + "." + name; };
    auto positive = [field](const char* name, int v) {
        if (v < 1) detail::throw_model_field(field, name, v, "an integer >= 1");
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
        detail::fail([&] {
            return input_error(path("head_dim_override"), std::to_string(m.head_dim_override),
                               "0 (hidden / heads) or a head dimension in [1, " + std::to_string(model_size_limits::hidden) + "]");
        });
    if (m.head_dim_override == 0 && m.hidden % m.heads != 0)
        detail::fail([&] {
            return input_error(path("heads"), std::to_string(m.heads),
                               "a divisor of hidden (" + std::to_string(m.hidden) + ")");
        });
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        detail::fail([&] {
            return input_error(path("kv_heads"), std::to_string(m.kv_heads),
                               "a divisor of heads (" + std::to_string(m.heads) + ")");
        });
    if (m.experts_per_token > m.experts)
        detail::fail([&] {
            return input_error(path("experts_per_token"), std::to_string(m.experts_per_token),
                               "an integer in [1, experts = " + std::to_string(m.experts) + "]");
        });
    auto in_range = [field](const char* name, int v, int lo, int hi, const char* what) {
        if (v < lo || v > hi) detail::throw_model_range(field, name, v, lo, hi, what);
    };
    in_range("expert_ffn", m.expert_ffn, 0, model_size_limits::ffn, "0 (= ffn) or an expert MLP width, an integer");
    in_range("shared_experts", m.shared_experts, 0, model_size_limits::experts, "an integer");
    if (!m.is_moe() && m.dense_layers != 0)
        detail::fail([&] {
            return input_error(path("dense_layers"), std::to_string(m.dense_layers),
                               "0 (only a mixture-of-experts model has dense layers apart)");
        });
    in_range("dense_layers", m.dense_layers, 0, m.is_moe() ? m.layers - 1 : 0, "an integer (at least one MoE layer)");
    in_range("mtp_layers", m.mtp_layers, 0, model_size_limits::layers, "an integer");
    in_range("moe_latent", m.moe_latent, 0, model_size_limits::hidden, "0 (none) or LatentMoE's latent width, an integer");
    if (m.mtp_depths != 0 && (m.mtp_layers < 1 || m.mtp_depths < m.mtp_layers || m.mtp_depths > model_size_limits::layers))
        detail::fail([&] {
            return input_error(path("mtp_depths"), std::to_string(m.mtp_depths),
                               "0 (= mtp_layers) or an integer in [mtp_layers = " + std::to_string(m.mtp_layers) + ", " +
                                   std::to_string(model_size_limits::layers) + "] with at least one MTP module");
        });
    if (m.moe_latent > 0 && !m.is_moe())
        detail::fail([&] {
            return input_error(path("moe_latent"), std::to_string(m.moe_latent),
                               "0 (a latent width needs a mixture-of-experts model, experts > 1)");
        });
    in_range("q_lora_rank", m.q_lora_rank, 0, model_size_limits::hidden, "an integer");
    in_range("kv_lora_rank", m.kv_lora_rank, 0, model_size_limits::hidden, "an integer");
    in_range("qk_nope_head_dim", m.qk_nope_head_dim, 0, model_size_limits::hidden, "an integer");
    in_range("qk_rope_head_dim", m.qk_rope_head_dim, 0, model_size_limits::hidden, "an integer");
    in_range("v_head_dim", m.v_head_dim, 0, model_size_limits::hidden, "an integer");
    if (m.is_mla()) {
        if (m.qk_nope_head_dim + m.qk_rope_head_dim < 1)
            detail::fail([&] {
                return input_error(path("qk_nope_head_dim"), std::to_string(m.qk_nope_head_dim),
                                   "qk_nope_head_dim + qk_rope_head_dim >= 1 with multi-head latent attention");
            });
        if (m.v_head_dim < 1)
            detail::fail([&] {
                return input_error(path("v_head_dim"), std::to_string(m.v_head_dim),
                                   "an integer >= 1 with multi-head latent attention (kv_lora_rank > 0)");
            });
        if (m.attention_output_gate)
            detail::fail([&] {
                return input_error(path("attention_output_gate"), "true",
                                   "false with multi-head latent attention (the gate is modelled on the fused QKV projection)");
            });
        if (m.qk_layernorm)
            detail::fail([&] {
                return input_error(path("qk_layernorm"), "true",
                                   "false with multi-head latent attention (its query and key/value latent norms are part of MLA)");
            });
        if (m.qk_l2_norm)
            detail::fail([&] {
                return input_error(path("qk_l2_norm"), "true",
                                   "false with multi-head latent attention (its query and key/value latent norms are part of MLA)");
            });
    }
    if (!(m.rope_attention_factor > 0.0 && m.rope_attention_factor <= model_size_limits::max_rope_attention_factor))
        detail::fail([&] {
            return input_error(path("rope_attention_factor"), commscale::detail::number_text(m.rope_attention_factor),
                               "a YaRN attention factor in (0, " +
                                   commscale::detail::number_text(model_size_limits::max_rope_attention_factor) + "] (1: none)");
        });
    auto softcap = [&path](const char* name, double v) {
        if (!(v >= 0.0 && v <= model_size_limits::max_logit_softcap))
            detail::fail([&] {
                return input_error(path(name), commscale::detail::number_text(v),
                                   "0 (none) or a soft-cap c > 0, at most " +
                                       commscale::detail::number_text(model_size_limits::max_logit_softcap) + " (Gemma 2: 50 and 30)");
            });
    };
    softcap("attn_logit_softcapping", m.attn_logit_softcapping);
    softcap("final_logit_softcapping", m.final_logit_softcapping);
    if (m.post_norms && m.is_hybrid())
        detail::fail([&] {
            return input_error(path("post_norms"), "true", "false in a hybrid model (its layers carry one pre-norm each)");
        });
    in_range("sliding_layers", m.sliding_layers, 0, m.layers, "an integer (layers with a sliding window)");
    in_range("nope_layers", m.nope_layers, 0, m.layers, "an integer (layers without a rotary embedding)");
    in_range("sliding_window", m.sliding_window, m.sliding_layers > 0 ? 1 : 0, model_size_limits::max_seq,
             "an integer (>= 1 with sliding_layers > 0)");
    if (m.is_hybrid()) [[unlikely]]
        detail::validate_hybrid(m, field);
    // model_size_limits (above)
    auto at_most = [field](const char* name, int v, int limit) {
        if (v > limit) detail::throw_model_range(field, name, v, 1, limit, "an integer");
    };
    at_most("layers", m.layers, model_size_limits::layers);
    at_most("hidden", m.hidden, model_size_limits::hidden);
    at_most("ffn", m.ffn, model_size_limits::ffn);
    at_most("vocab", m.vocab, model_size_limits::vocab);
    at_most("experts", m.experts, model_size_limits::experts);
    at_most("max_seq", m.max_seq, model_size_limits::max_seq);
    const double params = total_parameters(m);
    if (!(params <= max_model_parameters))
        detail::fail([&] {
            return input_error(std::string(field), commscale::detail::number_text(params) + " parameters (layers " + std::to_string(m.layers) +
                                      ", hidden " + std::to_string(m.hidden) + ", ffn " + std::to_string(m.ffn) + ", experts " +
                                      std::to_string(m.experts) + ")",
                               "a model of at most 1e15 parameters");
        });
}

}  // namespace commscale
