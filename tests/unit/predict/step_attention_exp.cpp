// The compute model's terms added for the accuracy work of issue 24 that have published figures:
// the softmax exponentials on the special function units, and the optimizer's state bytes.
#include "catch_shim.hpp"

#include <cmath>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

TEST_CASE("softmax exponentials: H100 3.9 T/s (FlashAttention-3), doubled on Blackwell Ultra") {
    // Shah et al. 2024 (FlashAttention-3) Sec. 3: "the H100 SXM5 GPU has 989 TFLOPS of FP16
    // matmul but only 3.9 TFLOPS of special functions"; rounded to two digits: 2%.
    const compute_params h100 = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    CHECK_THAT(h100.exponentials_per_s, WithinRel(3.9e12, 0.02));
    // NVIDIA, "Making Softmax More Efficient with NVIDIA Blackwell Ultra": Blackwell Ultra doubles
    // the SFU throughput of Blackwell, at the same 8,192 dense BF16 FLOPs per clock per SM.
    CHECK(b300.exponentials_per_bf16_flop == 2.0 * b200.exponentials_per_bf16_flop);
    CHECK(gb300.exponentials_per_bf16_flop == 2.0 * gb200.exponentials_per_bf16_flop);
    // A100: 16 per clock per SM against 1,024 dense FP16 FMA (2,048 FLOPs): 312 T / 128 = 2.44 T/s
    const compute_params a100 = compute_params_for(accelerator_by_name("a100-80gb-sxm"), dtype::bf16);
    CHECK_THAT(a100.exponentials_per_s, WithinRel(312e12 / 128.0, 1e-9));
    // not priced where no figure is known (the term drops out)
    CHECK(mi300x.exponentials_per_bf16_flop == 0.0);
}

TEST_CASE("softmax exponentials: one per computed score, forward and backward, beside the GEMMs") {
    // Llama 3 8B, s 8192, b 1 on one H100: the flash forward computes half of the s x s scores per
    // head (causal), T s a / 2 exponentials; the attention time grows by that over the exponential
    // rate in the forward and again in the backward (P recomputed from the log-sum-exp): twice in
    // all, split between the passes 1 : attention_backward_time_ratio as the kernels' time is.
    const transformer& m = models::llama3_8b;
    const plan p{.micro_batch = 1, .seq = 8192};
    compute_params c = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    const layer_time with = layer_compute_time(m, p, c);
    const double exps = 0.5 * 8192.0 * 8192.0 * m.heads;
    const double rate = c.exponentials_per_s;
    c.exponentials_per_s = 0;
    const layer_time without = layer_compute_time(m, p, c);
    const double both = 2.0 * exps / rate, ratio = attention_backward_time_ratio;
    CHECK_THAT(in_seconds(with.attention_fwd - without.attention_fwd), WithinRel(both / (1.0 + ratio), 1e-9));
    CHECK_THAT(in_seconds(with.attention_bwd - without.attention_bwd), WithinRel(both * ratio / (1.0 + ratio), 1e-9));
    // the split as the probe measured cuDNN and FlashAttention-2 at 8K-32K tokens (2.5-3.0)
    CHECK(in_seconds(with.attention_bwd) / in_seconds(with.attention_fwd) > 2.5);
    CHECK(in_seconds(with.attention_bwd) / in_seconds(with.attention_fwd) < 3.0);
    CHECK(in_seconds(with.gemm_fwd) == in_seconds(without.gemm_fwd));
}

TEST_CASE("optimizer state bytes: ZeRO's K = 12, Apex remainders 10, bf16 moments without main parameters 4") {
    // Rajbhandari et al. 2020 Sec. 3.1: mixed-precision Adam keeps K = 12 bytes per parameter of
    // optimizer state (fp32 parameters, momentum, variance), sharded by ZeRO-1. With bf16 moments
    // and no main parameters (Apex DistributedFusedAdam dtype bf16, store_params False) it is 4.
    const transformer& m = models::nemotron4_340b;
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 16;
    plan p{.tp = 8, .pp = 8, .dp = 2, .micro_batch = 1, .global_batch = 32, .seq = 4096};
    p.precision = dtype::fp8;
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 12;
    p.sequence_parallel = true;
    const accelerator acc = accelerator_by_name("h100-sxm");
    const step_breakdown k12 = predict_step(m, c, acc, p);
    p.optimizer_state_bytes = 4;
    const step_breakdown k4 = predict_step(m, c, acc, p);
    // the optimizer state of the heaviest stage is 4 of 12 bytes per parameter of its shard
    CHECK_THAT(in_bytes(k4.memory.state.optimizer) / in_bytes(k12.memory.state.optimizer), WithinRel(4.0 / 12.0, 1e-12));
    CHECK(in_bytes(k4.memory.state.weights) == in_bytes(k12.memory.state.weights));
    // the optimizer step reads gradients (4 B) and the state, writes the state and the bf16 copy
    // (2 B): 30 bytes per parameter with K = 12, 14 with K = 4
    CHECK_THAT(in_seconds(k4.optimizer) / in_seconds(k12.optimizer), WithinRel(14.0 / 30.0, 1e-9));
    // NeMo 24.07's Nemotron-4 340B recipe (optim dtype bf16, grad_sync_dtype bf16, no dropout,
    // selective recompute) fits on the published 128-GPU layout; with fp32 moments it would not
    p.gradient_bytes = 2;
    p.recompute_mode = recompute::selective;
    CHECK(predict_step(m, c, acc, p).fits_in_memory);
    p.optimizer_state_bytes = 12;
    p.gradient_bytes = 4;
    CHECK_FALSE(predict_step(m, c, acc, p).fits_in_memory);
    // out of range is refused with the field named
    p.optimizer_state_bytes = -1;
    CHECK_THROWS_WITH(predict_step(m, c, acc, p), Catch::Contains("plan.optimizer_state_bytes"));
}

TEST_CASE("unfused attention: the fused softmax and the attention dropout at their bytes per score") {
    // Megatron's unfused core attention (megatron/core/transformer/dot_product_attention.py):
    // baddbmm writes the scores, ScaledUpperTriangMaskedSoftmax (megatron/core/fusions/
    // fused_softmax.py) reads them and writes the probabilities and, backward, reads the output
    // gradient and the saved probabilities and writes the input gradient, loading only the causal
    // half of each row and storing all of it (apex scaled_upper_triang_masked_softmax.h);
    // torch.nn.Dropout (native_dropout / native_dropout_backward) reads and writes the
    // probabilities and writes a 1-byte mask, and reads the gradient and the mask and writes the
    // gradient; bmm with V reads the probabilities. With a head width of 1 every one of these
    // kernels is bound by its bytes per score (16-bit): forward 2 (scores) + 1 + 2 (softmax) + 2
    // (AV) = 7, backward the four GEMMs' score-sized operand (dP written, P, dS twice read) 8 +
    // softmax 2 + 2 = 12; dropout 5 more each.
    transformer m = models::gpt3_175b;
    m.head_dim_override = 1;
    plan p{.tp = 8, .micro_batch = 1, .seq = 2048};
    p.attention = attention_kernel::unfused;
    const compute_params c = compute_params_for(accelerator_by_name("a100-80gb-sxm"), dtype::bf16);
    const double scores = static_cast<double>(m.heads) / p.tp * 2048.0 * 2048.0;
    const double per_byte = c.inv_memory_rate;
    m.dropout = false;
    const layer_time bare = layer_compute_time(m, p, c);
    CHECK_THAT(in_seconds(bare.attention_fwd), WithinRel(7.0 * scores * per_byte, 0.01));
    CHECK_THAT(in_seconds(bare.attention_bwd), WithinRel(12.0 * scores * per_byte, 0.01));
    m.dropout = true;
    const layer_time with = layer_compute_time(m, p, c);
    CHECK_THAT(in_seconds(with.attention_fwd - bare.attention_fwd), WithinRel(5.0 * scores * per_byte, 1e-9));
    CHECK_THAT(in_seconds(with.attention_bwd - bare.attention_bwd), WithinRel(5.0 * scores * per_byte, 1e-9));
    // what the backward keeps (Korthikanti et al. 2022 Sec. 4.1): the softmax output 2, the dropout
    // mask 1 and its output 2 bytes per score, 5 a s^2 b; the softmax output alone without dropout
    const auto core_bytes = [&](const transformer& x) {
        return in_bytes(activation_bytes_per_layer(x, 2048, 1, 8, false, recompute::none)) -
               in_bytes(activation_bytes_per_layer(x, 2048, 1, 8, false, recompute::selective));
    };
    CHECK_THAT(core_bytes(m), WithinRel(5.0 * scores, 1e-12));
    m.dropout = false;
    CHECK_THAT(core_bytes(m), WithinRel(2.0 * scores, 1e-12));
}

TEST_CASE("rotary embedding: fused, or Megatron-Core's unfused RoPE under a YaRN attention factor") {
    // megatron/core/models/common/embeddings/rope_utils.py apply_rotary_pos_emb: Transformer
    // Engine's fused RoPE takes no YaRN factor ("mscale ... is not supported by TE's fused RoPE.
    // Using unfused implementation."); _apply_rotary_pos_emb_bshd then runs on Q and K
    // t * cos + rotate_half(t) * sin and a cat: 12 element accesses per rotated element forward
    // (products 2 + 2, negation 1, rotate_half's cat 2, sum 3, cat 2), 13 backward (products 2 + 2,
    // negation 1, gather 2, sum 3, the slice's zero fill and copy 3), against the fused kernel's 2
    // and 4; 12 kernels per tensor forward, 7 backward, against one fused kernel (two backward).
    transformer m = models::llama3_8b;  // q 4096, K 1024 per token
    const plan p{.micro_batch = 1, .seq = 8192};
    const compute_params c = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    const layer_time fused = layer_compute_time(m, p, c);
    m.rope_attention_factor = 0.1 * std::log(32.0) + 1.0;  // GPT-OSS's
    const layer_time unfused = layer_compute_time(m, p, c);
    const double rotated = 8192.0 * (4096.0 + 1024.0);  // elements of Q and K
    CHECK_THAT(in_seconds(unfused.elementwise_fwd - fused.elementwise_fwd), WithinRel((12.0 - 2.0) * 2.0 * rotated * c.inv_memory_rate, 1e-9));
    CHECK_THAT(in_seconds(unfused.elementwise_bwd - fused.elementwise_bwd), WithinRel((13.0 - 4.0) * 2.0 * rotated * c.inv_memory_rate, 1e-9));
    CHECK_THAT(in_seconds(unfused.overhead_fwd - fused.overhead_fwd), WithinRel((24.0 - 1.0) * c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(unfused.overhead_bwd - fused.overhead_bwd), WithinRel((14.0 - 2.0) * c.kernel_overhead_s, 1e-9));
    CHECK(in_seconds(unfused.gemm_fwd) == in_seconds(fused.gemm_fwd));
    CHECK(in_seconds(unfused.attention_bwd) == in_seconds(fused.attention_bwd));
    // a model without rotary embedding (ALiBi) has no RoPE kernels either way
    transformer alibi = models::mpt_7b;
    const layer_time plain = layer_compute_time(alibi, p, c);
    alibi.rope_attention_factor = 1.5;
    CHECK(in_seconds(layer_compute_time(alibi, p, c).forward()) == in_seconds(plain.forward()));
}
