// Gemma 2 and 3's layer (Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical
// Size", section 2; HF Gemma2DecoderLayer, Gemma2Attention; Megatron-Bridge r0.2.0
// src/megatron/bridge/models/gemma/gemma2_provider.py), worked by hand on Llama 3 8B with each piece
// switched on (h 4096, 32 heads of 128, kv 1024, 32 layers):
// * post-norms: an RMSNorm on each sub-layer's output before the residual add ("we use RMSNorm to
//   normalize the input and output of each transformer sub-layer"): four norms per layer
//   (TERowParallelLinearLayerNorm's TENorm, a kernel of its own);
// * soft-capping c tanh(x / c) of the attention scores (c = 50) and of the output logits (c = 30).
//   Transformer Engine's attention cannot soft-cap, so Megatron-Bridge runs Gemma 2's attention
//   unfused (Gemma2DotProductAttention: baddbmm, the soft-cap, the masked softmax, bmm); the
//   PyTorch stacks' flash-attn (>= 2.6, `softcap`) keeps the fused kernel.
#include "catch_shim.hpp"
#include "model_fixtures.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/model_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
// Llama 3 8B with Gemma 2's attention soft-cap (c = 50)
transformer attention_capped(transformer m) {
    m.attn_logit_softcapping = 50.0;
    return m;
}
// TP 2 with sequence parallelism, 8,192 tokens, one sequence per micro-batch, on H100 in bf16
const plan tp2{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
compute_params h100_bf16() { return compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16); }
}  // namespace

TEST_CASE("Gemma post-norms: two more norms per layer, their weights, bytes, kernels and saved inputs") {
    const transformer& plain = models::llama3_8b;
    transformer m = plain;
    m.post_norms = true;
    const double h = 4096, T = 8192, t = 2;
    CHECK(m.norms_per_layer() == 4);
    CHECK(parameters_per_layer(m).norms - parameters_per_layer(plain).norms == 2 * h);
    CHECK(total_parameters(m) - total_parameters(plain) == 32 * 2 * h);
    // no FLOPs counted for norms, in the library's count or Megatron's
    CHECK(model_flops_per_token(m, 8192).value() == model_flops_per_token(plain, 8192).value());
    const compute_params c = h100_bf16();
    const layer_time a = layer_compute_time(plain, tp2, c), b = layer_compute_time(m, tp2, c);
    // each norm reads and writes h 16-bit values per token, on T / t tokens under sequence
    // parallelism; the backward reads the gradient and the input and writes the gradient (twice)
    const double bytes = 2 * (2.0 * 2 * h) * T / t;
    CHECK(in_seconds(b.elementwise_fwd - a.elementwise_fwd) == Approx(bytes * c.inv_memory_rate));
    CHECK(in_seconds(b.elementwise_bwd - a.elementwise_bwd) == Approx(2 * bytes * c.inv_memory_rate));
    // a kernel per norm forward, two backward (the input's and the weight's gradients)
    CHECK(in_seconds(b.overhead_fwd - a.overhead_fwd) == Approx(2 * c.kernel_overhead_s));
    CHECK(in_seconds(b.overhead_bwd - a.overhead_bwd) == Approx(4 * c.kernel_overhead_s));
    CHECK(a.gemm_fwd == b.gemm_fwd);
    CHECK(a.attention_fwd == b.attention_fwd);
    // each keeps its input for the backward: 2 s b h more, split by t with sequence parallelism
    const double s = 8192, mb = 2;
    CHECK(in_bytes(activation_bytes_per_layer(m, s, mb, 4, true, recompute::selective)) -
              in_bytes(activation_bytes_per_layer(plain, s, mb, 4, true, recompute::selective)) ==
          Approx(2 * 2 * s * mb * h / 4));
    // a hybrid model's layers carry one pre-norm each: post-norms refused there
    transformer hybrid = models::nemotron_h_8b;
    hybrid.post_norms = true;
    CHECK(model_test::error_field(hybrid) == "model.post_norms");
}

TEST_CASE("Gemma 2 attention soft-cap: unfused under megatron-core, at its three passes per score") {
    const transformer& plain = models::llama3_8b;
    const transformer m = attention_capped(plain);
    const compute_params c = h100_bf16();
    CHECK(layer_shape(tp2).attention_for(m) == attention_kernel::unfused);
    CHECK(layer_shape(tp2).attention_for(plain) == attention_kernel::flash);
    plan unfused = tp2;
    unfused.attention = attention_kernel::unfused;
    const layer_time a = layer_compute_time(plain, unfused, c), b = layer_compute_time(m, tp2, c);
    // b (16 heads on each of the 2 ranks) x s x s scores, 16-bit: the division, the tanh and the
    // product read and write 2 bytes each (12); backward 4, 6 and 4 (14)
    const double scores = 16.0 * 8192 * 8192;
    CHECK(in_seconds(b.attention_fwd - a.attention_fwd) == Approx(12 * scores * c.inv_memory_rate));
    CHECK(in_seconds(b.attention_bwd - a.attention_bwd) == Approx(14 * scores * c.inv_memory_rate));
    CHECK(in_seconds(b.overhead_fwd - a.overhead_fwd) == Approx(3 * c.kernel_overhead_s));
    CHECK(in_seconds(b.overhead_bwd - a.overhead_bwd) == Approx(3 * c.kernel_overhead_s));
    // the tanh's output is kept beside the softmax's: 4 bytes per score instead of 2, split by t
    CHECK(in_bytes(activation_bytes_per_layer(m, 8192, 1, 2, true, recompute::none)) -
              in_bytes(activation_bytes_per_layer(plain, 8192, 1, 2, true, recompute::none)) ==
          Approx(2 * 32.0 * 8192 * 8192 / 2));
    // the step keeps the scores, 4 bytes each (4.3 GB per layer, one micro-batch in flight without a
    // pipeline), which the flash kernel does not, and the keys and values repeated from 8 to 32
    // heads for the batched GEMMs (2 x 2 B x (4,096 - 1,024) per token more, split by t)
    const cluster dgx = cluster_by_name("dgx-h100");
    const accelerator h100 = accelerator_by_name("h100-sxm");
    const step_breakdown flash = predict_step(plain, dgx, h100, tp2), capped = predict_step(m, dgx, h100, tp2);
    CHECK(in_bytes(capped.memory.activations - flash.memory.activations) ==
          Approx(32 * (4 * 16.0 * 8192 * 8192 + 2 * 2.0 * (4096 - 1024) * 8192 / 2)));
}

TEST_CASE("Gemma 2 attention soft-cap: no context parallelism under megatron-core, plan refused and not searched") {
    const transformer m = attention_capped(models::llama3_8b);
    const cluster dgx = cluster_by_name("dgx-h100");
    plan cp2{.tp = 2, .dp = 2, .cp = 2, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    try {
        validate(cp2, m, dgx);
        FAIL("a soft-capped model with CP 2 under megatron-core was accepted");
    } catch (const input_error& e) {
        CHECK(e.field() == "plan.cp");
    }
    cp2.stack = framework::fsdp;  // flash-attn soft-caps: CP stays
    CHECK_NOTHROW(validate(cp2, m, dgx));
    CHECK_NOTHROW(validate(cp2, models::llama3_8b, dgx));
    CHECK_FALSE(attention_cp_ok(m, attention_kernel::flash, framework::megatron_core, 2));
    CHECK(attention_cp_ok(m, attention_kernel::flash, framework::megatron_core, 1));
    CHECK(attention_cp_ok(models::llama3_8b, attention_kernel::flash, framework::megatron_core, 2));
    // the planner leaves CP out for it (and keeps it for the same model uncapped)
    search_request r;
    r.global_batch = 64;
    r.seq = 32768;
    r.top_k = 1000000;
    r.max_virtual_stages = 2;
    r.max_micro_batch = 1;
    const accelerator h100 = accelerator_by_name("h100-sxm");
    const search_result capped = search_plans(m, dgx, h100, r), plain = search_plans(models::llama3_8b, dgx, h100, r);
    REQUIRE_FALSE(capped.top.empty());
    bool plain_cp = false;
    for (const auto& x : capped.top) CHECK(x.p.cp == 1);
    for (const auto& x : plain.top) plain_cp = plain_cp || x.p.cp > 1;
    CHECK(plain_cp);
}

TEST_CASE("Gemma 2 attention soft-cap: the PyTorch stacks' flash kernel keeps it, a tanh per score") {
    const transformer& plain = models::llama3_8b;
    const transformer m = attention_capped(plain);
    const compute_params c = h100_bf16();
    plan fsdp = tp2;
    fsdp.stack = framework::fsdp;
    CHECK(layer_shape(fsdp).attention_for(m) == attention_kernel::flash);
    const layer_time a = layer_compute_time(plain, fsdp, c), b = layer_compute_time(m, fsdp, c);
    // causal: half the 8192^2 scores of 32 heads over 2 ranks; one more special-function op per
    // score in the forward and again in the backward, at the exponentials' rate
    REQUIRE(c.exponentials_per_s > 0);
    const double per_pass = 0.5 * 8192 * 8192 * 32 / 2 / c.exponentials_per_s;
    const double both = in_seconds(b.attention_fwd + b.attention_bwd - a.attention_fwd - a.attention_bwd);
    CHECK(both == Approx(2 * per_pass / c.attention_scale));
    CHECK(b.elementwise_fwd == a.elementwise_fwd);
    CHECK(b.overhead_fwd == a.overhead_fwd);
}

TEST_CASE("Unfused attention computes the whole square: a sliding window saves it nothing") {
    transformer windowed = models::llama3_8b;
    windowed.sliding_layers = 16;
    windowed.sliding_window = 1024;
    const compute_params c = h100_bf16();
    plan unfused = tp2;
    unfused.attention = attention_kernel::unfused;
    const layer_time full = layer_compute_time(models::llama3_8b, unfused, c), win = layer_compute_time(windowed, unfused, c);
    CHECK(win.attention_fwd == full.attention_fwd);
    CHECK(win.attention_bwd == full.attention_bwd);
    CHECK(activation_bytes_per_layer(windowed, 8192, 1, 2, true, recompute::none) ==
          activation_bytes_per_layer(models::llama3_8b, 8192, 1, 2, true, recompute::none));
    // the flash kernel skips the keys outside the window: half the layers attend 2w - w^2/s keys
    const layer_time flash_full = layer_compute_time(models::llama3_8b, tp2, c), flash_win = layer_compute_time(windowed, tp2, c);
    CHECK(flash_win.attention_fwd < 0.7 * flash_full.attention_fwd);
}

TEST_CASE("Gemma 2 final soft-cap: three passes over the logits, the tanh output kept") {
    const transformer& plain = models::llama3_8b;
    transformer m = plain;
    m.final_logit_softcapping = 30.0;
    const compute_params c = h100_bf16();
    // 8,192 tokens x 128,256 / 2 logits per rank: 12 bytes forward, 14 backward
    const double logits = 8192.0 * 128256 / 2;
    CHECK(in_seconds(output_layer_time(m, tp2, c) - output_layer_time(plain, tp2, c)) == Approx(26 * logits * c.inv_memory_rate));
    CHECK(in_bytes(activation_bytes_outside_layers(m, 8192, 1, 2, true, false, true)) -
              in_bytes(activation_bytes_outside_layers(plain, 8192, 1, 2, true, false, true)) ==
          Approx(2 * logits));
    CHECK(activation_bytes_outside_layers(m, 8192, 1, 2, true, true, false) ==
          activation_bytes_outside_layers(plain, 8192, 1, 2, true, true, false));
    m.final_logit_softcapping = -1;
    CHECK(model_test::error_field(m) == "model.final_logit_softcapping");
    m.final_logit_softcapping = 0;
    m.attn_logit_softcapping = std::numeric_limits<double>::quiet_NaN();
    CHECK(model_test::error_field(m) == "model.attn_logit_softcapping");
}

TEST_CASE("Gemma 2 and 3 from config.json: post-norms, soft-caps, and the report's parameter counts") {
    // Hugging Face google/gemma-2-2b, -9b, -27b config.json; the Gemma 2 report's Table 2 gives
    // their non-embedding parameters: 2,024,517,888, 8,324,201,984 and 26,047,480,320, which four
    // RMSNorms per layer (and the final one) make exact
    nlohmann::json g2 = {{"model_type", "gemma2"},      {"hidden_size", 2304},       {"intermediate_size", 9216},
                         {"num_hidden_layers", 26},     {"num_attention_heads", 8},  {"num_key_value_heads", 4},
                         {"head_dim", 256},             {"vocab_size", 256000},      {"max_position_embeddings", 8192},
                         {"sliding_window", 4096},      {"hidden_activation", "gelu_pytorch_tanh"},
                         {"attn_logit_softcapping", 50.0}, {"final_logit_softcapping", 30.0}};
    const auto non_embedding = [](const transformer& m) {
        return total_parameters(m) - static_cast<double>(m.vocab) * m.hidden;  // tied embedding
    };
    const transformer small = io::model_from_json(g2, "model");
    CHECK(small.post_norms);
    CHECK(small.attn_logit_softcapping == 50.0);
    CHECK(small.final_logit_softcapping == 30.0);
    CHECK(non_embedding(small) == 2024517888.0);
    nlohmann::json g9 = g2;
    g9.update({{"hidden_size", 3584}, {"intermediate_size", 14336}, {"num_hidden_layers", 42}, {"num_attention_heads", 16},
               {"num_key_value_heads", 8}});
    CHECK(non_embedding(io::model_from_json(g9, "model")) == 8324201984.0);
    nlohmann::json g27 = g2;
    g27.update({{"hidden_size", 4608}, {"intermediate_size", 36864}, {"num_hidden_layers", 46}, {"num_attention_heads", 32},
                {"num_key_value_heads", 16}, {"head_dim", 128}});
    CHECK(non_embedding(io::model_from_json(g27, "model")) == 26047480320.0);
    // Gemma2Config's soft-caps where the keys are absent; null turns one off
    g2.erase("attn_logit_softcapping");
    g2["final_logit_softcapping"] = nullptr;
    const transformer defaults = io::model_from_json(g2, "model");
    CHECK(defaults.attn_logit_softcapping == 50.0);
    CHECK(defaults.final_logit_softcapping == 0.0);
    g2["attn_logit_softcapping"] = -3;
    CHECK(model_test::json_error_field(g2) == "model.attn_logit_softcapping");
    // Gemma 3: post-norms, no soft-caps (Gemma3TextConfig's None); Llama: neither
    const transformer g3 = io::model_from_json({{"model_type", "gemma3_text"}, {"hidden_size", 3840}, {"intermediate_size", 15360},
                                                {"num_hidden_layers", 48}, {"num_attention_heads", 16},
                                                {"num_key_value_heads", 8}, {"max_position_embeddings", 131072}},
                                               "model");
    CHECK(g3.post_norms);
    CHECK(g3.attn_logit_softcapping == 0.0);
    CHECK(g3.final_logit_softcapping == 0.0);
    const transformer llama = io::model_from_json(io::model_to_json(models::llama3_8b), "model");
    CHECK_FALSE(llama.post_norms);
    CHECK(llama.attn_logit_softcapping == 0.0);
    // written back and read again
    CHECK(io::model_from_json(io::model_to_json(small), "model") == small);
}
