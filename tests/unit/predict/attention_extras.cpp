// What some attention layers add, worked by hand from Megatron-Core's attention.py and training.py
// on Llama 3 8B with each switched on (h 4096, q 4096, kv 1024, 32 layers):
// * the attention output gate (Qwen3-Next; --attention-output-gate): a second query-wide output of
//   the QKV projection whose sigmoid scales the attention output (linear_qkv_out_dim,
//   _apply_output_gate);
// * QK norm (the Qwen3 family; --qk-layernorm): an RMSNorm over each head's query and key
//   (q_layernorm, k_layernorm, Transformer Engine's RMSNorm).
#include "catch_shim.hpp"
#include "model_fixtures.hpp"

#include <fstream>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/model_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
transformer gated(transformer m) {
    m.attention_output_gate = true;
    return m;
}
transformer qk_normed(transformer m) {
    m.qk_layernorm = true;
    return m;
}
// One plan (TP 2 with sequence parallelism, 8,192 tokens, on DGX H100) predicted for a model and a
// variant of it, with the bf16 compute parameters their layer times come from.
struct step_pair {
    step_breakdown a, b;
    compute_params cp;
};
step_pair predict_pair(const transformer& plain, const transformer& variant) {
    const cluster c = cluster_by_name("dgx-h100");
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    const plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    return {predict_step(plain, c, acc, p), predict_step(variant, c, acc, p), compute_params_for(acc, dtype::bf16)};
}
}  // namespace

TEST_CASE("attention output gate: parameters and FLOPs, the library's and Megatron's GPT count") {
    const transformer& plain = models::llama3_8b;
    const transformer m = gated(plain);
    const double h = 4096, q = 4096, kv = 1024, s = 8192;
    CHECK(m.qkv_dim() == q + q + 2 * kv);
    // W_Q doubles: h x q more per layer
    CHECK(attention_parameters(m) - attention_parameters(plain) == h * q);
    CHECK(total_parameters(m) - total_parameters(plain) == 32 * h * q);
    // forward FLOPs of the QKV projection: 2 tokens h (2 q + 2 kv)
    CHECK(layer_forward_flops(m, s).qkv.value() == 2 * s * h * (2 * q + 2 * kv));
    CHECK(model_flops_per_token(m, s).value() - model_flops_per_token(plain, s).value() == Approx(32 * 6 * h * q));
    // Megatron-LM training.py transformer_flops: gate_projection_size = query_projection_size,
    // inside 6 h (q + k + v + gate) per layer and token
    CHECK(megatron_model_flops_per_token(m, s).value() - megatron_model_flops_per_token(plain, s).value() ==
          Approx(32 * 6 * h * q));
    // the hybrid branch (hybrid_flops: attn_layer_flops) has no gate term
    transformer next_plain = models::qwen3_next_80b_a3b;
    next_plain.attention_output_gate = false;
    CHECK(megatron_model_flops_per_token(models::qwen3_next_80b_a3b, s).value() ==
          megatron_model_flops_per_token(next_plain, s).value());
    // but the library's own count does: 12 attention layers of 96 blocks, 2048 x 4096 each
    CHECK(model_flops_per_token(models::qwen3_next_80b_a3b, s).value() - model_flops_per_token(next_plain, s).value() ==
          Approx(12 * 6 * 2048.0 * 4096));
}

TEST_CASE("attention output gate: the fused sigmoid-and-multiply at its bytes, one kernel each way") {
    const transformer& plain = models::llama3_8b;
    const transformer m = gated(plain);
    const auto [a, b, cp] = predict_pair(plain, m);
    // x * sigmoid(gate) under torch.compile over T q / t = 8192 x 2048 elements: forward reads x
    // and the gate and writes the product (3 x 2 B), backward reads the gradient, x and the gate
    // and writes two gradients (5 x 2 B)
    const double elements = 8192.0 * 4096 / 2;
    CHECK(in_seconds(b.layer.elementwise_fwd - a.layer.elementwise_fwd) == Approx(6 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(b.layer.elementwise_bwd - a.layer.elementwise_bwd) == Approx(10 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(b.layer.overhead_fwd - a.layer.overhead_fwd) == Approx(cp.kernel_overhead_s));
    CHECK(in_seconds(b.layer.overhead_bwd - a.layer.overhead_bwd) == Approx(cp.kernel_overhead_s));
    // the QKV GEMM is q / t wider, 2 T h q / t more FLOPs forward: slower, by no more than those
    // FLOPs at a quarter of the dense peak
    const double extra = in_seconds(b.layer.gemm_fwd - a.layer.gemm_fwd);
    CHECK(extra > 0.0);
    CHECK(extra < 2 * 8192.0 * 4096 * 4096 / 2 / (0.25 * cp.bf16_peak.value()));
    CHECK(a.layer.attention_fwd == b.layer.attention_fwd);
    CHECK(b.step > a.step);
}

TEST_CASE("attention output gate: the gate and the gated output are saved for the backward") {
    const transformer& plain = models::llama3_8b;
    const transformer m = gated(plain);
    const double s = 8192, b = 2, t = 4, q = 4096;
    // bf16: the gate (2 sb q) and the output projection's input, now the gated output (2 sb q)
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 4, true, recompute::selective)) -
              in_bytes(activation_bytes_per_layer(plain, s, b, 4, true, recompute::selective)) ==
          Approx(4 * s * b * q / t));
    // FP8: the projection keeps its 1-byte copy of the gated output instead of the attention
    // output's, so only the gate adds
    CHECK(in_bytes(activation_bytes_per_layer(m, s, b, 4, true, recompute::selective, 1.0)) -
              in_bytes(activation_bytes_per_layer(plain, s, b, 4, true, recompute::selective, 1.0)) ==
          Approx(2 * s * b * q / t));
}

TEST_CASE("attention output gate: read from config.json, written back, refused with MLA") {
    // qwen3_next's q_proj carries the gate by default; another family takes the key
    const transformer next = io::load_model_file(std::string(COMMSCALE_DATA_DIR) + "/models/qwen3-next-80b-a3b.json", "--model");
    CHECK(next.attention_output_gate);
    const nlohmann::json llama = io::model_to_json(models::llama3_8b);
    CHECK_FALSE(llama.contains("attention_output_gate"));
    nlohmann::json with_gate = llama;
    with_gate["attention_output_gate"] = true;
    const transformer read = io::model_from_json(with_gate, "model");
    CHECK(read.attention_output_gate);
    CHECK(io::model_to_json(read)["attention_output_gate"] == true);
    CHECK(io::model_from_json(io::model_to_json(read), "model") == read);
    // MLA has no fused QKV projection to widen
    transformer mla = models::deepseek_v3;
    mla.attention_output_gate = true;
    CHECK(model_test::error_field(mla) == "model.attention_output_gate");
    with_gate["attention_output_gate"] = "yes";
    CHECK_THROWS_AS(io::model_from_json(with_gate, "model"), input_error);
}

TEST_CASE("QK norm: two RMSNorms per attention layer at their bytes, their inputs saved") {
    const transformer& plain = models::llama3_8b;
    const transformer m = qk_normed(plain);
    // one weight of head_dim for the queries and one for the keys
    CHECK(attention_parameters(m) - attention_parameters(plain) == 2 * 128);
    // no FLOPs counted (norms are not, in the library's count or Megatron's)
    CHECK(model_flops_per_token(m, 8192).value() == model_flops_per_token(plain, 8192).value());
    CHECK(megatron_model_flops_per_token(m, 8192).value() == megatron_model_flops_per_token(plain, 8192).value());
    const auto [a, b, cp] = predict_pair(plain, m);
    // over T (q + kv) / t = 8192 x 5120 / 2 elements: forward read and write 2 B each; backward
    // read the gradient and the input, write the gradient
    const double elements = 8192.0 * (4096 + 1024) / 2;
    CHECK(in_seconds(b.layer.elementwise_fwd - a.layer.elementwise_fwd) == Approx(4 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(b.layer.elementwise_bwd - a.layer.elementwise_bwd) == Approx(6 * elements * cp.inv_memory_rate));
    // one kernel per norm forward, two backward (the input's gradient, the weight's)
    CHECK(in_seconds(b.layer.overhead_fwd - a.layer.overhead_fwd) == Approx(2 * cp.kernel_overhead_s));
    CHECK(in_seconds(b.layer.overhead_bwd - a.layer.overhead_bwd) == Approx(4 * cp.kernel_overhead_s));
    CHECK(a.layer.gemm_fwd == b.layer.gemm_fwd);
    // each norm keeps its input, the query and the key before it: 2 sb (q + kv) / t
    const double s = 8192, mb = 2, t = 4;
    CHECK(in_bytes(activation_bytes_per_layer(m, s, mb, 4, true, recompute::selective)) -
              in_bytes(activation_bytes_per_layer(plain, s, mb, 4, true, recompute::selective)) ==
          Approx(2 * s * mb * (4096 + 1024) / t));
    // read by default for the Qwen3 family, taken from the key elsewhere, refused with MLA
    const transformer qwen = io::load_model_file(std::string(COMMSCALE_DATA_DIR) + "/models/qwen3-30b-a3b.json", "--model");
    CHECK(qwen.qk_layernorm);
    nlohmann::json llama = io::model_to_json(plain);
    CHECK_FALSE(io::model_from_json(llama, "model").qk_layernorm);
    llama["qk_layernorm"] = true;
    CHECK(io::model_from_json(llama, "model") == m);
    CHECK(io::model_to_json(m)["qk_layernorm"] == true);
    transformer mla = models::deepseek_v3;
    mla.qk_layernorm = true;
    CHECK(model_test::error_field(mla) == "model.qk_layernorm");
}

// Llama 4 (Meta 2025; HF Llama4TextAttention; Megatron-Bridge llama4_utils.py get_llama4_layer_spec):
// every fourth layer is global and has no rotary embedding (NoPE); the other three attend within
// chunks of attention_chunk_size and, in Scout (use_qk_norm), pass each head's query and key
// through a weightless L2 norm (Megatron-Core torch_norm.py L2Norm, compiled).
namespace {
transformer with_nope(transformer m, int nope) {
    m.nope_layers = nope;
    return m;
}
}  // namespace

TEST_CASE("Llama 4: NoPE layers run no rotary pass") {
    // Llama 3 8B with 8 of its 32 layers NoPE: the fused RoPE (read and write 2 B per query and
    // key element forward, twice that backward, one kernel forward and two backward) on 24
    const transformer& plain = models::llama3_8b;
    const transformer m = with_nope(plain, 8);
    CHECK(m.rope_fraction() == 0.75);
    CHECK(attention_parameters(m) == attention_parameters(plain));
    const auto [a, b, cp] = predict_pair(plain, m);
    const double elements = 8192.0 * (4096 + 1024) / 2;  // T (q + kv) / t
    CHECK(in_seconds(a.layer.elementwise_fwd - b.layer.elementwise_fwd) == Approx(0.25 * 4 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(a.layer.elementwise_bwd - b.layer.elementwise_bwd) == Approx(0.25 * 8 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(a.layer.overhead_fwd - b.layer.overhead_fwd) == Approx(0.25 * cp.kernel_overhead_s));
    CHECK(in_seconds(a.layer.overhead_bwd - b.layer.overhead_bwd) == Approx(0.25 * 2 * cp.kernel_overhead_s));
    CHECK(a.layer.gemm_fwd == b.layer.gemm_fwd);
    CHECK(a.layer.attention_fwd == b.layer.attention_fwd);
    // models without rotary positions have no rotary layers to count
    transformer alibi = models::mpt_7b;
    CHECK(alibi.rope_fraction() == 0.0);
    alibi.nope_layers = 8;
    CHECK(alibi.rope_fraction() == 0.0);
    CHECK(model_test::error_field(with_nope(plain, 33)) == "model.nope_layers");
    CHECK(model_test::error_field(with_nope(plain, -1)) == "model.nope_layers");
}

TEST_CASE("Llama 4: the QK L2 norm on the rotary layers at its bytes, no weights, its inputs saved") {
    const transformer plain = with_nope(models::llama3_8b, 8);
    transformer m = plain;
    m.qk_l2_norm = true;
    CHECK(attention_parameters(m) == attention_parameters(plain));
    CHECK(model_flops_per_token(m, 8192).value() == model_flops_per_token(plain, 8192).value());
    CHECK(megatron_model_flops_per_token(m, 8192).value() == megatron_model_flops_per_token(plain, 8192).value());
    const auto [a, b, cp] = predict_pair(plain, m);
    // on 24 of 32 layers, over T (q + kv) / t elements: forward read and write 2 B, backward read
    // the gradient and the input and write the gradient; one compiled kernel per tensor each way
    const double elements = 8192.0 * (4096 + 1024) / 2;
    CHECK(in_seconds(b.layer.elementwise_fwd - a.layer.elementwise_fwd) == Approx(0.75 * 4 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(b.layer.elementwise_bwd - a.layer.elementwise_bwd) == Approx(0.75 * 6 * elements * cp.inv_memory_rate));
    CHECK(in_seconds(b.layer.overhead_fwd - a.layer.overhead_fwd) == Approx(0.75 * 2 * cp.kernel_overhead_s));
    CHECK(in_seconds(b.layer.overhead_bwd - a.layer.overhead_bwd) == Approx(0.75 * 2 * cp.kernel_overhead_s));
    // each norm keeps its input: 2 sb (q + kv) / t on the rotary layers
    const double s = 8192, mb = 2, t = 4;
    CHECK(in_bytes(activation_bytes_per_layer(m, s, mb, 4, true, recompute::selective)) -
              in_bytes(activation_bytes_per_layer(plain, s, mb, 4, true, recompute::selective)) ==
          Approx(0.75 * 2 * s * mb * (4096 + 1024) / t));
    // refused with MLA, whose latents have their own norms
    transformer mla = models::deepseek_v3;
    mla.qk_l2_norm = true;
    CHECK(model_test::error_field(mla) == "model.qk_l2_norm");
}

TEST_CASE("Llama 4: chunked attention's keys per query, worked by hand") {
    // Scout: 36 of 48 layers attend within chunks of 8192 (full-square convention: seq keys per
    // query on a full layer; a chunk of w tokens attended causally counts w)
    const transformer& scout = models::llama4_scout;
    CHECK(scout.attention_span(8192) == 8192);
    CHECK(scout.attention_span(4096) == 4096);
    // 32K tokens, four whole chunks: 12/48 x 32768 + 36/48 x 8192
    CHECK(scout.attention_span(32768) == Approx(0.25 * 32768 + 0.75 * 8192));
    // 20,000 tokens: two chunks of 8192 and one of 3616, (2 x 8192^2 + 3616^2) / 20000 = 7364.66
    CHECK(scout.attention_span(20000) == Approx(0.25 * 20000 + 0.75 * 7364.6592));
    // a sliding window of 8192 instead: 2 w - w^2 / seq = 14336 keys at 32K
    transformer sliding = scout;
    sliding.chunked_attention = false;
    CHECK(sliding.attention_span(32768) == Approx(0.25 * 32768 + 0.75 * 14336));
    // the attention FLOPs follow: at 32K the chunked layers cost a quarter of a full layer's
    // score work, the sliding ones 7/16
    transformer full = scout;
    full.sliding_layers = 0;
    const double core_full = layer_forward_flops(full, 32768).attention_core().value();
    CHECK(layer_forward_flops(scout, 32768).attention_core().value() == Approx(core_full * (0.25 + 0.75 * 0.25)));
    CHECK(layer_forward_flops(sliding, 32768).attention_core().value() == Approx(core_full * (0.25 + 0.75 * 0.4375)));
}

TEST_CASE("Llama 4: NoPE layers, chunked attention and the QK L2 norm read from config.json") {
    const std::string dir = std::string(COMMSCALE_DATA_DIR) + "/models/";
    const transformer scout = io::load_model_file(dir + "llama4-scout.json", "--model");
    CHECK(scout.nope_layers == 12);
    CHECK(scout.sliding_layers == 36);
    CHECK(scout.sliding_window == 8192);
    CHECK(scout.chunked_attention);
    CHECK(scout.qk_l2_norm);
    CHECK(scout == models::llama4_scout);
    // Maverick's config sets use_qk_norm false (Megatron-Bridge: qk_l2_norm False)
    const transformer maverick = io::load_model_file(dir + "llama4-maverick.json", "--model");
    CHECK_FALSE(maverick.qk_l2_norm);
    CHECK(maverick.nope_layers == 12);
    CHECK(maverick == models::llama4_maverick);
    // written back and read again
    CHECK(io::model_from_json(io::model_to_json(scout), "model") == scout);
    CHECK(io::model_to_json(scout)["nope_layers"] == 12);
    CHECK(io::model_to_json(scout)["chunked_attention"] == true);
    CHECK(io::model_to_json(scout)["qk_l2_norm"] == true);
    CHECK_FALSE(io::model_to_json(models::llama3_8b).contains("nope_layers"));
    // without no_rope_layers, Llama4TextConfig's interval: every fourth layer, or no_rope_layer_interval
    std::ifstream in(dir + "llama4-scout.json");
    const nlohmann::json file = nlohmann::json::parse(in);
    nlohmann::json j = file;
    j["text_config"].erase("no_rope_layers");
    j["text_config"].erase("use_qk_norm");
    const transformer by_default = io::model_from_json(j, "model");
    CHECK(by_default.nope_layers == 12);
    CHECK(by_default.sliding_layers == 36);
    CHECK(by_default.qk_l2_norm);  // Llama4TextConfig's default
    j["text_config"]["no_rope_layer_interval"] = 3;
    CHECK(io::model_from_json(j, "model").nope_layers == 16);
    CHECK(io::model_from_json(j, "model").sliding_layers == 32);
    // malformed: one entry short, an entry neither 0 nor 1
    nlohmann::json bad = file;
    bad["text_config"]["no_rope_layers"].erase(0);
    CHECK(model_test::json_error_field(bad).find("no_rope_layers") != std::string::npos);
    bad = file;
    bad["text_config"]["no_rope_layers"][5] = 2;
    CHECK(model_test::json_error_field(bad).find("no_rope_layers[5]") != std::string::npos);
    // layer_types naming both kinds of windowed layer is refused; chunked_attention entries set the flag
    nlohmann::json typed = io::model_to_json(models::llama3_8b);
    typed["sliding_window"] = 4096;
    typed["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 32; ++i) typed["layer_types"].push_back(i % 4 == 3 ? "full_attention" : "chunked_attention");
    const transformer chunked = io::model_from_json(typed, "model");
    CHECK(chunked.chunked_attention);
    CHECK(chunked.sliding_layers == 24);
    typed["layer_types"][0] = "sliding_attention";
    CHECK(model_test::json_error_field(typed).find("layer_types[") != std::string::npos);
    // other families: none of the three unless given
    const transformer llama3 = io::model_from_json(io::model_to_json(models::llama3_8b), "model");
    CHECK(llama3.nope_layers == 0);
    CHECK_FALSE(llama3.qk_l2_norm);
    CHECK_FALSE(llama3.chunked_attention);
}

TEST_CASE("QK norm: GLM-4.5's use_qk_norm, and both GLM-4.5 sizes against their model card") {
    // HF zai-org/GLM-4.5 and GLM-4.5-Air config.json (model_type glm4_moe): GLM-4.5 92 layers (3
    // dense), hidden 5120, dense MLP 12288, 160 routed experts of 1536 + 1 shared, top-8, 96 heads
    // of 128 with 8 KV heads, QK norm (use_qk_norm; Megatron-Core --qk-layernorm); the Air 46
    // layers (1 dense), hidden 4096, MLP 10944, 128 experts of 1408, no QK norm. The model card
    // (transformers docs/source/en/model_doc/glm4_moe.md): 355B total and 32B active, and 106B and
    // 12B; "active" there without the embeddings, "total" with them (and without the MTP module,
    // which the library counts apart: 4.0B for GLM-4.5, within the card's rounding either way).
    nlohmann::json glm = {{"model_type", "glm4_moe"},   {"hidden_size", 5120},       {"intermediate_size", 12288},
                          {"moe_intermediate_size", 1536}, {"n_routed_experts", 160}, {"n_shared_experts", 1},
                          {"num_experts_per_tok", 8},    {"first_k_dense_replace", 3}, {"num_hidden_layers", 92},
                          {"num_attention_heads", 96},   {"num_key_value_heads", 8},  {"head_dim", 128},
                          {"hidden_act", "silu"},        {"attention_bias", true},    {"partial_rotary_factor", 0.5},
                          {"max_position_embeddings", 131072}, {"num_nextn_predict_layers", 1},
                          {"tie_word_embeddings", false}, {"use_qk_norm", true},     {"vocab_size", 151552}};
    const transformer big = io::model_from_json(glm, "model");
    CHECK(big.qk_layernorm);
    CHECK(total_parameters(big) == Approx(355e9).epsilon(0.01));
    CHECK(active_parameters(big) - embedding_parameters(big) == Approx(32e9).epsilon(0.02));
    nlohmann::json air = glm;
    air.update({{"hidden_size", 4096}, {"intermediate_size", 10944}, {"moe_intermediate_size", 1408},
                {"n_routed_experts", 128}, {"first_k_dense_replace", 1}, {"num_hidden_layers", 46}, {"use_qk_norm", false}});
    const transformer small = io::model_from_json(air, "model");
    CHECK_FALSE(small.qk_layernorm);
    CHECK(total_parameters(small) == Approx(106e9).epsilon(0.01));
    CHECK(active_parameters(small) - embedding_parameters(small) == Approx(12e9).epsilon(0.02));
    // use_qk_norm is GLM's key (and Llama 4's L2 norm, above), not a QK norm for other families
    nlohmann::json llama = io::model_to_json(models::llama3_8b);
    llama["use_qk_norm"] = true;
    CHECK_FALSE(io::model_from_json(llama, "model").qk_layernorm);
}
