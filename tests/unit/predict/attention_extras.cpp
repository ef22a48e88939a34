// What some attention layers add, worked by hand from Megatron-Core's attention.py and training.py
// on Llama 3 8B with each switched on (h 4096, q 4096, kv 1024, 32 layers):
// * the attention output gate (Qwen3-Next; --attention-output-gate): a second query-wide output of
//   the QKV projection whose sigmoid scales the attention output (linear_qkv_out_dim,
//   _apply_output_gate);
// * QK norm (the Qwen3 family; --qk-layernorm): an RMSNorm over each head's query and key
//   (q_layernorm, k_layernorm, Transformer Engine's RMSNorm).
#include "catch_shim.hpp"
#include "model_fixtures.hpp"

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
    cluster c = cluster_by_name("dgx-h100");
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    const auto a = predict_step(plain, c, acc, p), b = predict_step(m, c, acc, p);
    const compute_params cp = compute_params_for(acc, dtype::bf16);
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
    cluster c = cluster_by_name("dgx-h100");
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    const auto a = predict_step(plain, c, acc, p), b = predict_step(m, c, acc, p);
    const compute_params cp = compute_params_for(acc, dtype::bf16);
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
