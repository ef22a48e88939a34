// `commscale models` and `commscale model NAME|FILE`: the transformer presets (CLI.md "Models"),
// their parameter counts and training FLOPs per token.
#include <commscale/io/model_json.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../model.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace models_command {

using namespace commscale;

nlohmann::json describe(const transformer& m, double seq) {
    auto j = io::model_to_json(m);
    const auto layer = parameters_per_layer(m);
    j["parameters"] = total_parameters(m);
    j["active_parameters"] = active_parameters(m);
    j["non_embedding_parameters"] = non_embedding_parameters(m);
    j["embedding_parameters"] = embedding_parameters(m);
    j["mtp_parameters"] = mtp_parameters(m);
    // layer_parameters counts a hybrid model's Mamba-2 and Gated DeltaNet mixers with the attention
    // (the token mixers)
    const double mamba = m.mamba_fraction() * mamba_parameters(m), gdn = m.gdn_fraction() * gdn_parameters(m);
    j["per_layer"] = {{"attention", layer.attention - mamba - gdn}, {"mlp", layer.mlp}, {"shared_mlp", layer.shared},
                      {"router", layer.router}, {"norms", layer.norms}, {"mamba", mamba}, {"gdn", gdn}, {"total", layer.total()}};
    if (m.is_hybrid()) {
        const auto n = m.hybrid_layer_counts();
        j["hybrid_layers"] = {{"mamba", n.mamba}, {"gdn", n.gdn}, {"attention", n.attention}, {"mlp", n.mlp}, {"moe", n.moe}};
        // per sequence, in the weights' 16-bit dtype (workload/memory.hpp)
        j["ssm_state_bytes_per_sequence"] = in_bytes(ssm_state_bytes(m));
        j["conv_state_bytes_per_sequence"] = in_bytes(conv_state_bytes(m));
    }
    j["seq"] = seq;
    j["model_flops_per_token"] = in_flops(model_flops_per_token(m, seq));
    j["mtp_flops_per_token"] = 3.0 * in_flops(mtp_forward_flops(m, seq)) / seq;
    return j;
}

std::string billions(double p) { return cli::num(p / 1e9, 2); }

cli::registrar reg_models{cli::command{
    "models",
    "list the transformer presets (shape, parameters)",
    "usage: commscale models [--json]\n"
    "JSON: {\"models\": [{name, num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads,\n"
    "       intermediate_size, vocab_size, max_position_embeddings, ..., parameters, active_parameters, source}]}",
    {},
    [](const cli::args& a, std::ostream& out) {
        if (a.flag("json")) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& m : all_models()) list.push_back(describe(m, std::min(m.max_seq, 2048)));
            cli::print_json(out, {{"models", std::move(list)}});
            return 0;
        }
        std::vector<std::vector<std::string>> rows;
        for (const auto& m : all_models())
            rows.push_back({std::string(m.name), std::to_string(m.layers), std::to_string(m.hidden), std::to_string(m.heads),
                            std::to_string(m.kv_heads), std::to_string(m.ffn), std::to_string(m.vocab),
                            m.is_moe() ? std::to_string(m.experts_per_token) + "/" + std::to_string(m.experts) : "-",
                            billions(total_parameters(m)), billions(active_parameters(m))});
        cli::print_table(out, {"name", "layers", "hidden", "heads", "kv", "ffn", "vocab", "experts", "params B", "active B"}, rows);
        return 0;
    },
    0, 0}};

/// What `model`'s options give.
struct model_request {
    std::optional<int> seq;  ///< context length for FLOPs per token
};

cli::registrar reg_model{cli::bound_command<model_request>(
    "model",
    "show one transformer (preset or Hugging Face config.json): shape, parameters, FLOPs per token",
    "usage: commscale model NAME|FILE [--seq S] [--json]\n"
    "  NAME  a preset (commscale models) or FILE a Hugging Face config.json\n"
    "  --seq S  context length for FLOPs per token (default min(max_position_embeddings, 2048))\n"
    "FLOPs per token are model FLOPs of training (forward + backward = 3 x forward, no recompute).\n"
    "JSON: the model as config.json keys plus parameters, active_parameters, non_embedding_parameters,\n"
    "      embedding_parameters, mtp_parameters (multi-token-prediction modules, not in parameters),\n"
    "      per_layer {attention, mlp, shared_mlp, router, norms, mamba, gdn, total} (means over the layers where\n"
    "      MoE and dense layers, or a hybrid pattern's kinds, mix; mlp: all routed experts, shared_mlp: shared\n"
    "      experts and dense layers; mamba: Mamba-2 mixers; gdn: Gated DeltaNet mixers), seq,\n"
    "      model_flops_per_token, mtp_flops_per_token (training FLOPs of the MTP modules, apart); hybrid models\n"
    "      also hybrid_layers {mamba, gdn, attention, mlp, moe}, ssm_state_bytes_per_sequence and\n"
    "      conv_state_bytes_per_sequence (inference caches, bf16)\n"
    "MoE config.json of DeepSeek-V3/Kimi K2 (MLA, shared experts, first_k_dense_replace, MTP), Qwen3-MoE,\n"
    "GPT-OSS (sliding-window layers, sinks), Mixtral, Llama 4 (text_config), Nemotron-H / Nemotron 3\n"
    "(hybrid_override_pattern, Mamba-2 mixers) and Qwen3-Next (Gated DeltaNet mixers) are read by their own keys.",
    {cli::opt::integer<model_request>("seq", &model_request::seq, 1, 1 << 24, "context length (tokens)")},
    [](const model_request& r, const cli::args& a, std::ostream& out) {
        const std::string& v = a.positional[0];
        const transformer m = cli::load_model_value(v, "model");
        const double seq = static_cast<double>(r.seq.value_or(std::min(m.max_seq, 2048)));
        const auto j = describe(m, seq);
        if (a.flag("json")) {
            cli::print_json(out, j);
            return 0;
        }
        const auto layer = parameters_per_layer(m);
        // in layer.attention (the token mixers)
        const double mamba = m.mamba_fraction() * mamba_parameters(m), gdn = m.gdn_fraction() * gdn_parameters(m);
        out << "name           " << m.name << "\n"
            << "shape          " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads << " heads ("
            << m.kv_heads << " KV), ffn " << m.ffn << (m.gated_mlp ? " gated" : "") << ", vocab " << m.vocab
            << ", context " << m.max_seq << "\n";
        if (m.is_moe()) {
            out << "experts        " << m.experts_per_token << " of " << m.experts << " routed per token";
            if (m.shared_experts > 0) out << " + " << m.shared_experts << " shared";
            out << ", width " << m.expert_width() << ", " << m.moe_layers() << " MoE layers";
            if (m.dense_layers > 0) out << " + " << m.dense_layers << " dense";
            if (m.moe_latent > 0) out << "; LatentMoE: routed experts in a latent width of " << m.moe_latent;
            out << "\n";
        }
        if (m.is_mla())
            out << "attention      MLA: q_lora_rank " << m.q_lora_rank << ", kv_lora_rank " << m.kv_lora_rank
                << ", qk head " << m.qk_nope_head_dim << " + " << m.qk_rope_head_dim << " rope, v head " << m.v_head_dim << "\n";
        if (m.attention_output_gate || m.qk_layernorm || m.qk_l2_norm) {
            out << "attention      ";
            const char* sep = "";
            if (m.qk_layernorm) {
                out << "QK norm (RMSNorm over each head's query and key)";
                sep = "; ";
            }
            if (m.qk_l2_norm) {
                out << sep << "QK L2 norm (weightless, over each head's query and key on the rotary layers)";
                sep = "; ";
            }
            if (m.attention_output_gate)
                out << sep << "output gate: the attention output times sigmoid(x W_G), q_proj " << 2 * m.q_dim() << " wide (query and gate)";
            out << "\n";
        }
        if (m.sliding_layers > 0)
            out << (m.chunked_attention ? "chunked attn.  chunks of " : "sliding window ") << m.sliding_window << " keys on "
                << m.sliding_layers << " of " << m.layers << " layers\n";
        if (m.nope_layers > 0) out << "rotary         none on " << m.nope_layers << " of " << m.layers << " layers (NoPE)\n";
        if (m.post_norms) out << "norms          4 per layer: a post-norm on each branch's output before the residual add\n";
        if (m.attn_logit_softcapping > 0.0 || m.final_logit_softcapping > 0.0) {
            out << "soft-caps      c tanh(x / c) on";
            if (m.attn_logit_softcapping > 0.0) out << " the attention scores (c = " << m.attn_logit_softcapping << ")";
            if (m.attn_logit_softcapping > 0.0 && m.final_logit_softcapping > 0.0) out << " and";
            if (m.final_logit_softcapping > 0.0) out << " the output logits (c = " << m.final_logit_softcapping << ")";
            out << "\n";
        }
        if (m.rope_attention_factor != 1.0)
            out << "rotary         YaRN attention factor " << cli::num(m.rope_attention_factor, 3)
                << " (Megatron-Core runs its unfused RoPE)\n";
        if (m.is_hybrid()) {
            const auto n = m.hybrid_layer_counts();
            // the recurrent mixers' inference caches, printed once after the first mixer's line
            const std::string states = cli::num(in_bytes(ssm_state_bytes(m)) / (1 << 20), 1) + " MiB + conv state " +
                                       cli::num(in_bytes(conv_state_bytes(m)) / (1 << 20), 2) + " MiB per sequence (bf16)";
            out << "hybrid         ";
            if (n.mamba > 0 || n.gdn == 0) out << n.mamba << " Mamba-2 + ";
            if (n.gdn > 0) out << n.gdn << " Gated DeltaNet + ";
            out << n.attention << " attention + " << n.mlp << " MLP + " << n.moe << " MoE layers (" << m.hybrid->pattern << ")\n";
            if (n.mamba > 0)
                out << "Mamba-2        " << m.hybrid->mamba_heads << " heads x " << m.hybrid->mamba_head_dim << ", state "
                    << m.hybrid->ssm_state << ", " << m.hybrid->mamba_groups << " groups, conv " << m.hybrid->conv_kernel << ", chunk "
                    << m.hybrid->ssm_chunk << "; SSM state " << states << "\n";
            if (n.gdn > 0)
                out << "Gated DeltaNet " << m.hybrid->gdn_qk_heads << " key heads x " << m.hybrid->gdn_qk_head_dim << ", "
                    << m.hybrid->gdn_v_heads << " value heads x " << m.hybrid->gdn_v_head_dim << ", conv " << m.hybrid->gdn_conv_kernel
                    << (n.mamba > 0 ? std::string() : "; state " + states) << "\n";
        }
        if (m.mtp_layers > 0)
            out << "MTP            " << m.mtp_layers << " module(s), " << billions(mtp_parameters(m)) << " B (not in the total)"
                << (m.mtp_passes() != m.mtp_layers ? ", trained as " + std::to_string(m.mtp_passes()) + " depths" : std::string())
                << "\n";
        out << "parameters     " << billions(total_parameters(m)) << " B total, " << billions(active_parameters(m))
            << " B active, " << billions(embedding_parameters(m)) << " B embeddings\n"
            << "per layer      attention " << cli::num((layer.attention - mamba - gdn) / 1e6, 1) << " M, MLP "
            << cli::num((layer.mlp + layer.shared) / 1e6, 1) << " M, "
            << (m.is_hybrid() && (mamba > 0.0 || gdn <= 0.0) ? "Mamba-2 " + cli::num(mamba / 1e6, 1) + " M, " : std::string())
            << (gdn > 0.0 ? "Gated DeltaNet " + cli::num(gdn / 1e6, 1) + " M, " : std::string()) << "norms "
            << cli::num(layer.norms / 1e3, 1) << " K\n"
            << "FLOPs/token    " << cli::num(in_flops(model_flops_per_token(m, seq)) / 1e9, 2) << " GFLOP at seq "
            << cli::num(seq, 0) << " (training, no recompute)\n"
            << "source         " << m.source << "\n";
        return 0;
    },
    1, 1)};

}  // namespace models_command
}  // namespace
