// The loss's cross-entropy, as the output layer charges it, against the kernels Liger-Kernel's
// benchmark times on one H100 80GB HBM3 (linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv,
// kernel_name megatron_cross_entropy, from benchmark/scripts/benchmark_megatron_cross_entropy.py:
// bf16 logits of S 2,048 x B 4 = 8,192 tokens over a vocabulary of 131,072, TP 1, forward and
// backward, median of the timed loops):
//   Liger's Triton kernel (LigerMegatronCrossEntropy)               7.96 ms
//   Megatron-Core's fused native kernel (fused_vocab_parallel_...)  18.23 ms
//   Megatron-Core's unfused kernel (vocab_parallel_cross_entropy)    21.25 ms
// Liger's kernel is built as Transformer Engine's (transformer_engine/pytorch/triton/
// cross_entropy.py, v2.9: an online-softmax pass over the logits, a pass that writes the gradient
// over them, the backward's scaling), which Megatron-Bridge's performance scripts run
// (`cross_entropy_fusion_impl = "te"`, scripts/performance/utils/helpers.py, r0.2.0). The model
// charges every stack that kernel's time (16 bytes per logit element at the fitted memory-bound
// rate); the native kernel, which NeMo 24.07's configs ran, takes 2.3x it and is not modelled
// (docs/accuracy.md (13), docs/model.md "Not modelled"). A test, not fitting data: the 16 bytes
// and the memory-bound rate were set without it.
//
// Recorded when written: the model's cross-entropy 7.49 ms (0.94 of Liger's kernel).
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/predict/compute.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

TEST_CASE("validation: cross-entropy kernels, the loss over a 131K vocabulary on H100", "[validation][compute]") {
    const accelerator h100 = accelerator_by_name("h100-sxm");
    transformer m = model_by_name("llama3-8b");  // hidden 4096, as the benchmark's logits GEMM would have
    m.vocab = 131072;                            // the benchmark's vocabulary
    layer_shape s;
    s.micro_batch = 4;
    s.seq = 2048;  // 8,192 tokens on one rank (TP 1, CP 1)
    const compute_params c = compute_params_for(h100, dtype::bf16);
    const double tokens = 8192.0, vocab = 131072.0;
    // output_layer_time is the logits GEMM forward and its two backward GEMMs plus the loss
    const double gemms = 3.0 * detail::gemm_seconds(tokens, vocab, m.hidden, c);
    const double loss_s = in_seconds(output_layer_time(m, s, c)) - gemms;
    INFO("model's cross-entropy " << loss_s * 1e3 << " ms, Liger's Triton kernel 7.96 ms");
    CHECK_THAT(loss_s, WithinRel(7.96e-3, 0.15));
}
