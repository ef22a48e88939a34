// The unfused attention core's softmax as each stack runs it (score_softmax, workload/
// transformer.hpp). Sources, read for these numbers:
// * Megatron-Core 0.10-0.19, megatron/core/fusions/fused_softmax.py: FusedScaleMaskSoftmax.
//   is_kernel_available (16 < sk <= 4096, sq % 4 == 0, sk % 4 == 0, attn_batches % 4 == 0 and a
//   multiple of the kernel's batches per block), forward_torch_softmax (the cached causal mask,
//   attention_mask_func's masked_fill_, torch.nn.Softmax in 16 bits when attention_softmax_in_fp32
//   is false, as Megatron-Bridge r0.2.0's GPTModelProvider sets it);
// * apex csrc/megatron/scaled_masked_softmax_cuda.cu, get_batch_per_block: 128 threads per block,
//   warps of min(next power of two of sk, 32) threads, two rows per warp up to 128 keys; its
//   scaled_upper_triang_masked_softmax.h, whose causal kernels load a row's keys up to the
//   query's own (`element_index < local_seq`) and store the whole row;
// * Hugging Face transformers, modeling_llama.py / modeling_gemma2.py eager_attention_forward
//   (product by `scaling`, additive mask, softmax(dim=-1, dtype=torch.float32).to(query.dtype));
//   ATen's softmax with a dtype (aten/src/ATen/native/SoftMax.cpp) casts a BF16 input before the
//   FP32 softmax (the fused half-to-float path is for Half alone).
// The byte counts below are those kernels' reads and writes per score; with a head width of 1
// every kernel of the core is bound by them (as in step_attention_exp.cpp's unfused test).
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

TEST_CASE("unfused softmax: Megatron's fused kernel where is_kernel_available, its PyTorch fallback elsewhere") {
    // rows (micro-batch x heads per rank), queries, keys
    CHECK(megatron_score_softmax(16, 4096, 4096) == score_softmax::fused);
    CHECK(megatron_score_softmax(16, 8192, 8192) == score_softmax::torch_fallback);  // sk <= 4096
    CHECK(megatron_score_softmax(16, 16, 16) == score_softmax::torch_fallback);      // 16 < sk
    CHECK(megatron_score_softmax(16, 4094, 4094) == score_softmax::torch_fallback);  // sk % 4
    CHECK(megatron_score_softmax(2, 2048, 2048) == score_softmax::torch_fallback);   // attn_batches % 4
    // eight rows per block up to 128 keys (32-thread warps, two rows each), four above
    CHECK(megatron_score_softmax(4, 128, 128) == score_softmax::torch_fallback);
    CHECK(megatron_score_softmax(8, 128, 128) == score_softmax::fused);
    CHECK(megatron_score_softmax(4, 132, 132) == score_softmax::fused);

    // Gemma 2 9B (16 heads), which Megatron-Bridge runs unfused: fused at 4,096 tokens, the
    // fallback at its 8,192-token training length; two heads per rank (TP 8) need micro-batch 2
    const transformer& g = models::gemma2_9b;
    plan p{.tp = 1, .micro_batch = 1, .seq = 4096};
    CHECK(layer_shape(p).attention_for(g) == attention_kernel::unfused);
    CHECK(layer_shape(p).softmax_for(g) == score_softmax::fused);
    p.seq = 8192;
    CHECK(layer_shape(p).softmax_for(g) == score_softmax::torch_fallback);
    p.seq = 4096;
    p.tp = 8;
    CHECK(layer_shape(p).softmax_for(g) == score_softmax::torch_fallback);
    p.micro_batch = 2;
    CHECK(layer_shape(p).softmax_for(g) == score_softmax::fused);
    // the PyTorch stacks train the Hugging Face classes: their unfused attention is the eager one
    p.stack = framework::fsdp;
    CHECK(layer_shape(p).softmax_for(g) == score_softmax::eager_fp32);
    p.stack = framework::deepspeed;
    CHECK(layer_shape(p).softmax_for(g) == score_softmax::eager_fp32);
    for (const framework f : {framework::megatron_core, framework::megatron_lm, framework::megatron_deepspeed}) {
        p.stack = f;
        CHECK(layer_shape(p).softmax_for(g) == score_softmax::fused);
    }
}

TEST_CASE("unfused softmax: its bytes per score and kernels, Megatron's fused kernel, its fallback and Hugging Face's eager attention") {
    transformer m = models::gpt3_175b;
    m.head_dim_override = 1;
    m.dropout = false;
    const compute_params c = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    layer_shape p;
    p.tp = 8;
    p.attention = attention_kernel::unfused;
    const auto scores = [&](const layer_shape& x) { return static_cast<double>(m.heads) / x.tp * x.seq * x.seq; };
    // The GEMMs' score-sized operands: forward the scores written and the probabilities read (4),
    // backward dP written, P and dS read twice (8). Megatron's fused causal kernel loads the causal
    // half of each row and stores all of it: forward 1 + 2, backward 2 + 2.
    p.seq = 4096;
    const layer_time fused = layer_compute_time(m, p, c);
    CHECK_THAT(in_seconds(fused.attention_fwd), WithinRel((4.0 + 3.0) * scores(p) * c.inv_memory_rate, 0.01));
    CHECK_THAT(in_seconds(fused.attention_bwd), WithinRel((8.0 + 4.0) * scores(p) * c.inv_memory_rate, 0.01));
    // beyond 4,096 keys: masked_fill_ (read 2 + a 1-byte mask element, write 2) and the softmax (4);
    // backward the softmax's 6 and masked_fill's gradient (read 2 + 1, write 2)
    p.seq = 8192;
    const layer_time fallback = layer_compute_time(m, p, c);
    CHECK_THAT(in_seconds(fallback.attention_fwd), WithinRel((4.0 + 5.0 + 4.0) * scores(p) * c.inv_memory_rate, 0.01));
    CHECK_THAT(in_seconds(fallback.attention_bwd), WithinRel((8.0 + 6.0 + 5.0) * scores(p) * c.inv_memory_rate, 0.01));
    // one kernel more each way (the mask's fill and its gradient), the layer's others unchanged
    CHECK_THAT(in_seconds(fallback.overhead_fwd - fused.overhead_fwd), WithinRel(c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(fallback.overhead_bwd - fused.overhead_bwd), WithinRel(c.kernel_overhead_s, 1e-9));
    // Hugging Face's eager attention: the product by `scaling` (4), the additive 16-bit mask (read
    // 2 + 2, write 2), the cast to FP32 (read 2, write 4), the FP32 softmax (read 4, write 4) and the
    // cast back (read 4, write 2); backward the two casts (6 each), the FP32 softmax's (12) and the
    // product's (4)
    p.seq = 4096;
    p.eager_scores = true;
    const layer_time eager = layer_compute_time(m, p, c);
    CHECK_THAT(in_seconds(eager.attention_fwd), WithinRel((4.0 + 4.0 + 6.0 + 6.0 + 8.0 + 6.0) * scores(p) * c.inv_memory_rate, 0.01));
    CHECK_THAT(in_seconds(eager.attention_bwd), WithinRel((8.0 + 6.0 + 12.0 + 6.0 + 4.0) * scores(p) * c.inv_memory_rate, 0.01));
    // five kernels forward and four backward where the fused softmax has one each
    CHECK_THAT(in_seconds(eager.overhead_fwd - fused.overhead_fwd), WithinRel(4.0 * c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(eager.overhead_bwd - fused.overhead_bwd), WithinRel(3.0 * c.kernel_overhead_s, 1e-9));
    // against the flash kernel (one forward, two backward): the core's two batched GEMMs forward
    // and four backward and the fused softmax, one kernel each way
    layer_shape flash = p;
    flash.eager_scores = false;
    flash.attention = attention_kernel::flash;
    const layer_time f = layer_compute_time(m, flash, c);
    CHECK_THAT(in_seconds(fused.overhead_fwd - f.overhead_fwd), WithinRel(2.0 * c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(fused.overhead_bwd - f.overhead_bwd), WithinRel(3.0 * c.kernel_overhead_s, 1e-9));
}

TEST_CASE("unfused softmax: what the backward keeps per score, Megatron's 2 (5 with dropout), Hugging Face's eager 6 (7)") {
    transformer m = models::gpt3_175b;
    const double s = 4096, b = 1, t = 8, scores = 96.0 / t * s * s * b;
    const auto core = [&](const transformer& x, score_softmax sm) {
        return in_bytes(activation_bytes_per_layer(x, s, b, 8, false, recompute::none, 2.0, 0, sm)) -
               in_bytes(activation_bytes_per_layer(x, s, b, 8, false, recompute::selective, 2.0, 0, sm));
    };
    // with dropout: the softmax output, the dropout mask and output (Korthikanti et al. 2022 Sec.
    // 4.1, 5 a s^2 b); Hugging Face's softmax output is FP32, 2 bytes more
    m.dropout = true;
    CHECK_THAT(core(m, score_softmax::fused), WithinRel(5.0 * scores, 1e-12));
    CHECK_THAT(core(m, score_softmax::torch_fallback), WithinRel(5.0 * scores, 1e-12));
    CHECK_THAT(core(m, score_softmax::eager_fp32), WithinRel(7.0 * scores, 1e-12));
    // without: the softmax output alone, which the A V product reads; Hugging Face's A V product
    // saves the 16-bit copy its cast made, beside the FP32 output the softmax saves
    m.dropout = false;
    CHECK_THAT(core(m, score_softmax::fused), WithinRel(2.0 * scores, 1e-12));
    CHECK_THAT(core(m, score_softmax::eager_fp32), WithinRel(6.0 * scores, 1e-12));
    // the step's memory plan takes the stack's softmax
    plan p{.tp = 8, .micro_batch = 1, .seq = 8192};
    p.attention = attention_kernel::unfused;
    CHECK(detail::memory_plan_of(m, p, 1).softmax == score_softmax::torch_fallback);
    p.stack = framework::fsdp;
    CHECK(detail::memory_plan_of(m, p, 1).softmax == score_softmax::eager_fp32);
}

TEST_CASE("unfused attention: grouped-query attention's keys and values repeated to the query heads") {
    // Megatron's DotProductAttention repeats the keys and values to the heads of the rank
    // (`repeat_interleave(np / ng, dim=2)`; Hugging Face's repeat_kv likewise) before the batched
    // GEMMs, which save the repeated copies: Llama 3 8B (32 query heads over 8 KV heads of 128)
    // against the same layer with 32 KV heads, which has nothing to repeat
    const transformer& gqa = models::llama3_8b;
    transformer mha = gqa;
    mha.kv_heads = mha.heads;
    layer_shape p;
    p.tp = 2;
    p.seq = 4096;
    p.attention = attention_kernel::unfused;
    const compute_params c = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    const layer_time a = layer_compute_time(gqa, p, c), b = layer_compute_time(mha, p, c);
    // per token and rank, each of K and V read at 1,024 / 2 and written at 4,096 / 2, 2 B each way;
    // the backward sums the gradient back over the same elements
    const double moved = 2.0 * 2.0 * (1024 + 4096) / 2.0 * 4096;
    CHECK_THAT(in_seconds(a.attention_fwd - b.attention_fwd), WithinRel(moved * c.inv_memory_rate, 1e-9));
    CHECK_THAT(in_seconds(a.attention_bwd - b.attention_bwd), WithinRel(moved * c.inv_memory_rate, 1e-9));
    CHECK_THAT(in_seconds(a.overhead_fwd - b.overhead_fwd), WithinRel(2.0 * c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(a.overhead_bwd - b.overhead_bwd), WithinRel(2.0 * c.kernel_overhead_s, 1e-9));
    // kept: the repeated K and V, 2 x 2 B x 4,096 per token, where the layer's saved K and V count
    // 2 x 2 B x 1,024 (the flash kernel saves those alone); split by t
    const auto core = [&](const transformer& x) {
        return in_bytes(activation_bytes_per_layer(x, 4096, 1, 2, false, recompute::none)) -
               in_bytes(activation_bytes_per_layer(x, 4096, 1, 2, false, recompute::selective));
    };
    CHECK_THAT(core(gqa) - core(mha), WithinRel(2.0 * 2.0 * (4096 - 1024) * 4096 / 2.0, 1e-12));
    // nothing to repeat where every query head has its own K and V (MHA; MLA)
    CHECK(unfused_kv_expansion(mha).moved == 0.0);
    CHECK(unfused_kv_expansion(models::deepseek_v3).moved == 0.0);
}
