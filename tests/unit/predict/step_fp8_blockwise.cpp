// FP8 block scaling (Megatron-Core --fp8-recipe blockwise, Transformer Engine's Float8BlockScaling,
// Megatron-Bridge's "FP8-SC") against what Transformer Engine v2.9 runs for it:
// common/recipe/__init__.py Float8BlockScaling (1 x 128 blocks of activations and gradients, 128 x
// 128 of weights; "when Transformer Engine needs both the FP8 tensor and its transpose ... both
// versions are computed from the high precision input"; use_split_accumulator asserted for fprop,
// dgrad and wgrad), pytorch/csrc/quantizer.cpp Float8BlockQuantizer::quantize (nvte_quantize_v2
// alone: each block's amax inside the cast), pytorch/csrc/extensions/cast.cpp
// multi_tensor_quantize_impl (the fused multi-tensor cast is delayed scaling's only).
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace {
// the split accumulator's cost on a per-tensor E4M3 GEMM: a median 1.047x, rounded to 1.05, over
// the Llama 3 8B / 70B layers of data/measurements/h200_compute_kernels.json (test `validation:
// H200 kernels`); the kernel-level default of compute_constants::fp8_backward_slowdown
constexpr double blockwise_split_accumulator = 1.05;

layer_shape blockwise_llama70b_tp4() {
    layer_shape s;
    s.tp = 4;
    s.micro_batch = 1;
    s.seq = 8192;
    s.sequence_parallel = true;
    return s;
}
}  // namespace

TEST_CASE("fp8 recipe blockwise: one cast kernel, two quantized layouts, expert by expert") {
    CHECK(parse<fp8_recipe>("blockwise", "x") == fp8_recipe::blockwise);
    CHECK(to_string(fp8_recipe::blockwise) == "blockwise");
    CHECK(quantize_kernels_for(dtype::fp8, fp8_recipe::blockwise) == 1.0);
    CHECK(quantized_layouts_for(dtype::fp8, fp8_recipe::blockwise) == 2.0);
    CHECK(quantized_layouts_for(dtype::fp8, fp8_recipe::tensorwise) == 1.0);
    CHECK(quantized_layouts_for(dtype::fp8, fp8_recipe::delayed) == 1.0);
    CHECK_FALSE(fused_grouped_cast_for(dtype::fp8, fp8_recipe::blockwise));
    CHECK(blockwise_split_accumulator == kernel_constants.fp8_backward_slowdown);

    const auto delayed = compute_params_for(h100_sxm, dtype::fp8, fitted_compute_constants,
                                            framework::megatron_core, fp8_recipe::delayed);
    const auto block = compute_params_for(h100_sxm, dtype::fp8, fitted_compute_constants,
                                          framework::megatron_core, fp8_recipe::blockwise);
    // quantizing one bf16 element: read 2 bytes, write a 1-byte code for each of the two layouts
    // (the FP32 scale per 128 elements not counted, as MXFP8's per 32 is not): 4 bytes, 3 per-tensor
    CHECK(block.cast_bytes() == 4.0);
    CHECK(delayed.cast_bytes() == 3.0);
    CHECK(block.gemm_input_bytes == 1.0);
    // every GEMM split-accumulated: the rate is per-tensor FP8's over the split accumulator's figure
    CHECK_THAT(block.gemm_efficiency, WithinRel(delayed.gemm_efficiency / blockwise_split_accumulator, 1e-12));
    // the backward: split-accumulated already, with the fitted excess over that figure on top, the
    // per-tensor backward GEMMs' time (rate x slowdown the same)
    CHECK_THAT(block.backward_gemm_slowdown * block.inv_gemm_rate,
               WithinRel(delayed.backward_gemm_slowdown * delayed.inv_gemm_rate, 1e-12));
    CHECK_THAT(block.backward_gemm_slowdown,
               WithinRel(fitted_compute_constants.fp8_backward_slowdown / blockwise_split_accumulator, 1e-12));
}

TEST_CASE("fp8 recipe blockwise: a Llama 3 70B layer's GEMMs and casts, worked by hand") {
    const auto& m = models::llama3_70b;
    const layer_shape s = blockwise_llama70b_tp4();
    const auto cp = [](fp8_recipe r) {
        return compute_params_for(h100_sxm, dtype::fp8, fitted_compute_constants, framework::megatron_core, r);
    };
    const auto delayed = layer_compute_time(m, s, cp(fp8_recipe::delayed));
    const auto block = layer_compute_time(m, s, cp(fp8_recipe::blockwise));
    // 8,192 tokens through (8,192 x 2,560), (2,048 x 8,192) and the MLP's (8,192 x 14,336) and
    // (7,168 x 8,192) per TP rank: compute-bound, so the forward GEMMs take the split accumulator's
    // 1.05x and the backward ones what they take per tensor
    CHECK_THAT(in_seconds(block.gemm_fwd), WithinRel(blockwise_split_accumulator * in_seconds(delayed.gemm_fwd), 1e-9));
    CHECK_THAT(in_seconds(block.gemm_bwd), WithinRel(in_seconds(delayed.gemm_bwd), 1e-9));
    CHECK(block.attention_fwd == delayed.attention_fwd);  // attention stays in bf16
    // the casts' second layout: one more byte per quantized element, T x (h + q/t + h + f/t) of
    // them forward (the QKV, projection, FC1 and FC2 inputs), twice that backward
    const double T = 8192.0, h = 8192.0, q = 8192.0 / 4.0, f = 28672.0 / 4.0;
    const auto c = cp(fp8_recipe::blockwise);
    const double extra = T * 1.0 * (h + q + h + f) / (c.memory_bandwidth.value() * c.memory_efficiency);
    CHECK_THAT(in_seconds(block.elementwise_fwd - delayed.elementwise_fwd), WithinRel(extra, 1e-9));
    CHECK_THAT(in_seconds(block.elementwise_bwd - delayed.elementwise_bwd), WithinRel(2.0 * extra, 1e-9));
    // one kernel per quantized tensor, as delayed scaling: the same launches in a dense layer
    CHECK(block.overhead_fwd == delayed.overhead_fwd);
}

TEST_CASE("fp8 recipe blockwise through the step, and its rules") {
    // Megatron-Bridge r0.2.0's Llama 3 70B H100 layout (TP 4, PP 8, VP 5) on 64 H100
    cluster c = presets::dgx_h100;
    c.nodes = 8;
    plan p{.tp = 4, .pp = 8, .dp = 2, .micro_batch = 1, .global_batch = 128, .seq = 8192};
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 5;
    p.sequence_parallel = true;
    p.precision = dtype::fp8;
    const auto delayed = predict_step(models::llama3_70b, c, p);
    p.fp8_scaling = fp8_recipe::tensorwise;
    const auto current = predict_step(models::llama3_70b, c, p);
    p.fp8_scaling = fp8_recipe::blockwise;
    const auto block = predict_step(models::llama3_70b, c, p);
    // the same traffic and model state (1-byte codes gathered either way); the saved GEMM inputs
    // carry an FP32 scale per 128-element block, 1/32 byte per element more than per-tensor FP8's:
    // more activation memory, by less than 1/32 of it (the saved inputs are a part of it)
    CHECK(in_seconds(block.tp.total) == Approx(in_seconds(delayed.tp.total)));
    CHECK(in_bytes(block.memory.state.total()) == Approx(in_bytes(delayed.memory.state.total())));
    const double extra = in_bytes(block.memory.activations) - in_bytes(delayed.memory.activations);
    CHECK(extra > 0);
    CHECK(extra < in_bytes(delayed.memory.activations) / 32.0);
    // slower than either per-tensor recipe: the forward GEMMs' split accumulator and the second
    // layout's casts outweigh current scaling's launches; by a few percent, not more
    CHECK(block.step > current.step);
    CHECK(current.step > delayed.step);
    CHECK(in_seconds(block.step) < 1.08 * in_seconds(delayed.step));
    // first and last layers in BF16 are allowed (not with delayed scaling, Megatron-Core asserts)
    p.first_last_layers_bf16 = true;
    CHECK_NOTHROW(predict_step(models::llama3_70b, c, p));
    p.first_last_layers_bf16 = false;
    // the recipe is FP8's: with another precision it is an input error naming it
    p.precision = dtype::mxfp8;
    CHECK_THROWS_WITH(predict_step(models::llama3_70b, c, p),
                      Catch::Contains("plan.fp8_recipe") && Catch::Contains("blockwise") && Catch::Contains("mxfp8"));
}
