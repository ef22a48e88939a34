// FP8 parameters (Megatron-Core's --fp8-param-gather, plan::fp8_param_gather): the layers' weights
// kept quantized. A per-tensor FP8 weight is 1 byte on parts whose FP8 GEMMs take every operand
// layout (accelerator::non_tn_fp8_gemm: Transformer Engine's quantizer creates no transpose there)
// and 2 bytes (the data and its transpose) on Hopper; blockwise FP8 and MXFP8 keep two layouts. The
// embedding and the output layer stay 16-bit.
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace {
cluster nodes_of(const char* preset, int nodes) {
    cluster c = cluster_by_name(preset);
    c.nodes = nodes;
    return c;
}
double weights_GB(const step_breakdown& r) { return in_bytes(r.memory.state.weights) / 1e9; }
}  // namespace

TEST_CASE("fp8_param_gather: per-tensor FP8 weights are 1 byte on Blackwell, the embedding side 2") {
    // Llama 3 8B (Meta's model card: 8.03B parameters; input embedding and untied output layer
    // 128,256 x 4,096 each, 1.051B together) on one DGX B200, data parallel, distributed optimizer.
    const auto& m = models::llama3_8b;
    const cluster c = nodes_of("dgx-b200", 1);
    plan p{.tp = 1, .dp = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192, .precision = dtype::fp8};
    p.fp8_scaling = fp8_recipe::tensorwise;
    REQUIRE(p.fp8_param_gather);  // the megatron-core profile's default, as NVIDIA's recipes set it
    const double total = 8.03, embedding = 2.0 * 128256.0 * 4096.0 / 1e9;
    const auto fp8 = predict_step(m, c, p);
    CHECK_THAT(weights_GB(fp8), WithinRel(2.0 * embedding + 1.0 * (total - embedding), 0.005));
    // 16-bit weights without the flag
    plan wide = p;
    wide.fp8_param_gather = false;
    const auto bf16_weights = predict_step(m, c, wide);
    CHECK_THAT(weights_GB(bf16_weights), WithinRel(2.0 * total, 0.005));
    // only the memory changes
    CHECK(in_seconds(fp8.step) == in_seconds(bf16_weights.step));
    // delayed scaling keeps the same Float8Tensor: 1 byte too
    plan delayed = p;
    delayed.fp8_scaling = fp8_recipe::delayed;
    CHECK(weights_GB(predict_step(m, c, delayed)) == weights_GB(fp8));
    // two layouts: blockwise FP8 and MXFP8 stay at 2 bytes
    plan blockwise = p;
    blockwise.fp8_scaling = fp8_recipe::blockwise;
    CHECK(weights_GB(predict_step(m, c, blockwise)) == weights_GB(bf16_weights));
    plan mx = p;
    mx.precision = dtype::mxfp8;
    mx.fp8_scaling = fp8_recipe::delayed;
    CHECK(weights_GB(predict_step(m, c, mx)) == weights_GB(bf16_weights));
    // Hopper keeps each FP8 weight's transpose: 2 bytes
    const auto hopper = predict_step(m, nodes_of("dgx-h100", 1), p);
    CHECK_THAT(weights_GB(hopper), WithinRel(2.0 * total, 0.005));
    // the other stacks keep 16-bit weights (apply_framework)
    plan fsdp = p;
    apply_framework(fsdp, framework::fsdp);
    CHECK_FALSE(fsdp.fp8_param_gather);
}

TEST_CASE("fp8_param_gather: sharded and pipelined, the layers' share of the weights halves") {
    // Llama 3 70B on 64 GB200 (TP 4, PP 4: the first stage holds the embedding, ZeRO 3 shards the
    // weights over DP): the stage's weights without the embedding side halve, to the byte
    const auto& m = models::llama3_70b;
    const cluster c = nodes_of("gb200-nvl72", 64 / cluster_by_name("gb200-nvl72").node.gpus);
    for (int zero : {1, 3}) {
        plan p{.tp = 4, .pp = 4, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .zero = zero,
               .precision = dtype::fp8};
        p.fp8_scaling = fp8_recipe::tensorwise;
        p.sequence_parallel = true;
        plan wide = p;
        wide.fp8_param_gather = false;
        const double narrow_w = weights_GB(predict_step(m, c, p)), wide_w = weights_GB(predict_step(m, c, wide));
        // 70.55B parameters, 2 x 128,256 x 8,192 = 2.10B on the embedding side, over TP 4 x PP 4
        // (x DP 4 with ZeRO 3); the first stage holds the input embedding alone (1.05B)
        const double shard = zero == 3 ? 4.0 : 1.0;
        const double layers = (70.55 - 2.0 * 128256.0 * 8192.0 / 1e9) / 16.0 / shard;
        INFO("zero " << zero);
        CHECK_THAT(wide_w - narrow_w, WithinRel(layers, 0.02));
    }
}

TEST_CASE("fp8_param_gather: NVIDIA's Nemotron-H 56B FP8 recipe on 64 B200 fits") {
    // Megatron-Bridge's performance recipe nemotronh_56b_pretrain_64gpu_b200_fp8cs_config
    // (src/megatron/bridge/perf_recipes/nemotronh/b200/nemotronh.py): TP 2, no PP, sequence
    // parallel, micro-batch 1, global batch 192, 8,192 tokens, FP8 current scaling
    // (bf16_with_fp8_current_scaling_mixed: fp8_param_gather True; first/last BF16 layers off),
    // bf16 gradients (grad_reduce_in_fp32 False), distributed optimizer. NVIDIA benchmarks it, so it
    // fits in B200's 180 GB; with 16-bit weights the model would say it does not.
    const transformer m = model_by_name("nemotron-h-56b");
    const cluster c = nodes_of("dgx-b200", 8);
    plan p{.tp = 2, .dp = 32, .micro_batch = 1, .global_batch = 192, .seq = 8192, .precision = dtype::fp8};
    p.fp8_scaling = fp8_recipe::tensorwise;
    p.sequence_parallel = true;
    const auto r = predict_step(m, c, p);
    CHECK(r.fits_in_memory);
    plan wide = p;
    wide.fp8_param_gather = false;
    CHECK_FALSE(predict_step(m, c, wide).fits_in_memory);
}

TEST_CASE("NVFP4, MXFP4, MXFP8 and FP8 block scaling save their GEMM inputs' column-wise copies with their scales for the weight gradient") {
    // Transformer Engine's Linear keeps only the column-wise quantized input for the wgrad GEMM
    // ("Discard row-wise data since it is not needed in backward pass"): FP8 1 byte per element,
    // NVFP4 4 bits and an E4M3 scale per 16 (0.5625), MXFP4 4 bits and an E8M0 scale per 32
    // (0.53125). Per layer of Llama 3 8B (h 4,096, FFN 14,336; s 8,192, b 1, TP 1) those inputs are
    // the QKV and FC1 inputs and the output projection's copy of the attention output (3 s h) and
    // the FC2 input (s f); 32 layers, one micro-batch in flight.
    const auto& m = models::llama3_8b;
    const cluster c = nodes_of("dgx-b300", 1);
    plan p{.tp = 1, .dp = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192, .precision = dtype::fp8};
    p.fp8_scaling = fp8_recipe::tensorwise;
    const auto activations = [&](dtype d) {
        plan q = p;
        q.precision = d;
        if (d != dtype::fp8) q.fp8_scaling = fp8_recipe::delayed;
        return in_bytes(predict_step(m, c, q).memory.activations);
    };
    const double elements = 32.0 * (3.0 * 8192.0 * 4096.0 + 8192.0 * 14336.0);
    CHECK_THAT(activations(dtype::fp8) - activations(dtype::nvfp4), WithinRel((1.0 - 0.5625) * elements, 0.01));
    CHECK_THAT(activations(dtype::fp8) - activations(dtype::fp4), WithinRel((1.0 - 0.53125) * elements, 0.01));
    CHECK(activations(dtype::bf16) > activations(dtype::fp8));
    // MXFP8 keeps an E8M0 scale per 32 elements beside its 1-byte codes, FP8 block scaling an FP32
    // scale per 1 x 128 block: 1/32 byte per element more than per-tensor FP8 either way
    CHECK_THAT(activations(dtype::mxfp8) - activations(dtype::fp8), WithinRel(elements / 32.0, 0.01));
    plan block = p;
    block.fp8_scaling = fp8_recipe::blockwise;
    CHECK_THAT(in_bytes(predict_step(m, c, block).memory.activations) - activations(dtype::fp8), WithinRel(elements / 32.0, 0.01));
}
