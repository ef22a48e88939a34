// Per-tensor FP8's scaling recipe (Megatron-Core --fp8-recipe delayed|tensorwise) and the MoE
// all-to-all overlap (--overlap-moe-expert-parallel-comm), against the kernel launches Transformer
// Engine makes and the chunks Megatron-Core's schedules pair.
#include "catch_shim.hpp"

#include <algorithm>

#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

TEST_CASE("fp8 recipe tensorwise: three more launches per quantized tensor, expert by expert") {
    // Float8CurrentScalingQuantizer::quantize: nvte_compute_amax (zero-amax and amax kernels),
    // nvte_compute_scale_from_amax, then the cast (transformer_engine/pytorch/csrc/quantizer.cpp,
    // common/recipe/current_scaling.cu, v2.9); delayed scaling: the cast alone
    CHECK(quantize_kernels_for(dtype::fp8, fp8_recipe::tensorwise) == 4.0);
    CHECK(quantize_kernels_for(dtype::fp8, fp8_recipe::delayed) == 1.0);
    CHECK(quantize_kernels_for(dtype::mxfp8) == 1.0);
    // a dense layer: four forward GEMMs, each input quantized; the backward quantizes each output
    // gradient: 4 x 3 more kernels each way
    const auto& l = models::llama3_8b;
    const auto dense_delayed = detail::count_layer_kernels(l, 4.0, 1.0);
    const auto dense_current = detail::count_layer_kernels(l, 4.0, 4.0);
    CHECK(dense_current.forward - dense_delayed.forward == 12.0);
    CHECK(dense_current.backward - dense_delayed.backward == 12.0);
    // MoE: the grouped GEMMs' inputs are quantized per local expert (multi_tensor_quantize_impl fuses
    // only delayed scaling's casts, csrc/extensions/cast.cpp): Qwen3 30B-A3B with EP 8 has 16 local
    // experts, two grouped GEMMs each: 2 x 16 x 3 more launch-bound kernels forward, after the
    // dropless dispatcher's host synchronization. Backward the launch-bound kernels are the experts'
    // GEMMs alone, one cuBLASLt call per expert and operand gradient (TransformerEngine's
    // multi-stream grouped GEMM): 2 grouped GEMMs x 16 experts x (dgrad, wgrad), whatever the recipe
    const auto& q = models::qwen3_30b_a3b;
    const auto moe_delayed = detail::count_layer_kernels(q, 4.0, 1.0, 8);
    const auto moe_current = detail::count_layer_kernels(q, 4.0, 4.0, 8);
    CHECK(moe_current.moe_forward - moe_delayed.moe_forward == 2.0 * 16.0 * 3.0);
    CHECK(moe_current.moe_backward == 2.0 * 16.0 * 2.0);
    CHECK(moe_delayed.moe_backward == 2.0 * 16.0 * 2.0);
    CHECK(detail::count_layer_kernels(q, 4.0, 0.0, 8).moe_backward == 2.0 * 16.0 * 2.0);
    // delayed scaling casts every expert's input in one fused multi-tensor kernel
    // (nvte_multi_cast_transpose): 16 GEMMs + 1 cast per grouped GEMM
    CHECK(fused_grouped_cast_for(dtype::fp8, fp8_recipe::delayed));
    CHECK_FALSE(fused_grouped_cast_for(dtype::fp8, fp8_recipe::tensorwise));
    CHECK_FALSE(fused_grouped_cast_for(dtype::mxfp8));
    const auto moe_fused = detail::count_layer_kernels(q, 4.0, 1.0, 8, 2.0, true);
    CHECK(moe_delayed.moe_forward - moe_fused.moe_forward == 2.0 * (16.0 - 1.0));
    // bf16: no quantization at all
    CHECK(detail::count_layer_kernels(l, 4.0, 0.0).forward == dense_delayed.forward - 4.0);

    // through the step: the same plan, slower by the launches' overhead only
    plan p;
    p.dp = 8;
    p.micro_batch = 1;
    p.global_batch = 128;
    p.seq = 8192;
    p.precision = dtype::fp8;
    const auto delayed = predict_step(l, presets::dgx_h100, p);
    p.fp8_scaling = fp8_recipe::tensorwise;
    const auto current = predict_step(l, presets::dgx_h100, p);
    const double launches = 16.0 * 32.0 * 24.0;  // micro-batches x layers x (12 + 12) kernels
    CHECK_THAT(in_seconds(current.compute - delayed.compute),
               WithinRel(launches * fitted_compute_constants.kernel_overhead_s, 1e-6));
    // the recipe is per-tensor FP8's: with another precision it is an input error
    p.precision = dtype::bf16;
    CHECK_THROWS_WITH(predict_step(l, presets::dgx_h100, p),
                      Catch::Contains("plan.fp8_recipe") && Catch::Contains("tensorwise") && Catch::Contains("bf16"));
    CHECK(parse<fp8_recipe>("tensorwise", "x") == fp8_recipe::tensorwise);
}

namespace {
/// Megatron-Bridge r0.2.0's Qwen3 235B-A22B H100 recipe: 256 GPUs, TP 2, PP 8, VP 4, EP 32, global
/// batch 2048, the all-to-all dispatcher, current-scaled FP8, without moe_a2a_overlap (Megatron-Core
/// overlap_moe_expert_parallel_comm), which the tests set.
cluster qwen3_235b_h100_cluster() {
    cluster c = presets::dgx_h100;
    c.nodes = 32;
    return c;
}
plan qwen3_235b_h100_plan() {
    plan p;
    p.tp = 2;
    p.pp = 8;
    p.dp = 16;
    p.ep = 32;
    p.etp = 1;
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 4;
    p.sequence_parallel = true;
    p.micro_batch = 1;
    p.global_batch = 2048;
    p.seq = 4096;
    p.dispatcher = moe_token_dispatcher::alltoall;
    p.precision = dtype::fp8;
    p.fp8_scaling = fp8_recipe::tensorwise;
    p.gradient_bytes = 2;
    return p;
}
/// The share of that recipe's chunks the overlap pairs: 128 micro-batches x 4 chunks = 512 per
/// stage; the first stage's warm-up is 2 (8 - 1) + (4 - 1) 8 = 38 chunks
/// (forward_backward_pipelining_with_interleaving), as many cool down unpaired.
constexpr double qwen3_235b_h100_paired = (512.0 - 38.0) / 512.0;
}  // namespace

TEST_CASE("MoE all-to-all overlap: the paired chunks hide their all-to-alls, warm-up and cool-down do not") {
    const auto& m = models::qwen3_235b_a22b;
    const cluster c = qwen3_235b_h100_cluster();
    plan p = qwen3_235b_h100_plan();
    const auto alone = predict_step(m, c, p);
    p.moe_a2a_overlap = true;
    const double paired = qwen3_235b_h100_paired;
    CHECK_THAT(p.moe_a2a_overlap_share(), WithinRel(paired, 1e-12));
    const auto overlapped = predict_step(m, c, p);
    CHECK_THAT(in_seconds(overlapped.ep.total), WithinRel(in_seconds(alone.ep.total), 1e-12));
    CHECK(in_seconds(alone.ep.exposed) == in_seconds(alone.ep.total));
    // the paired share waits only for what exceeds the compute it runs beside: here the bf16
    // all-to-alls over the NICs (EP 32 spans 8 nodes) outlast the stage's compute, so part of them
    // stays exposed, the unpaired warm-up and cool-down in full
    // (the stage's compute of the step, without the optimizer and the overlap's slow-down)
    // (the overlapped plan's own compute: its backward's expert kernels are launch-bound, below)
    const double total = in_seconds(alone.ep.total),
                 busy = in_seconds(overlapped.compute) - in_seconds(overlapped.optimizer) - in_seconds(overlapped.overlap_slowdown);
    CHECK_THAT(in_seconds(overlapped.ep.exposed),
               WithinRel((1.0 - paired) * total + paired * std::max(0.0, total - busy), 1e-9));
    CHECK(in_seconds(overlapped.ep.exposed) < 0.5 * total);
    CHECK(in_seconds(overlapped.step) < in_seconds(alone.step));
    // without pipelining every micro-batch but one pairs: (m - 1) / m
    plan flat = p;
    flat.pp = 1;
    flat.dp = 128;
    flat.schedule = pipeline_schedule::one_f_one_b;
    flat.virtual_stages = 1;
    CHECK_THAT(flat.moe_a2a_overlap_share(), WithinRel(15.0 / 16.0, 1e-12));  // 2048 / 128 = 16 micro-batches
    // Megatron-Core's assertions, as input errors
    plan bad = p;
    bad.schedule = pipeline_schedule::one_f_one_b;
    bad.virtual_stages = 1;
    CHECK_THROWS_WITH(predict_step(m, c, bad), Catch::Contains("plan.overlap_moe_expert_parallel_comm") && Catch::Contains("1f1b"));
    bad = p;
    bad.recompute_mode = recompute::full;
    CHECK_THROWS_WITH(predict_step(m, c, bad), Catch::Contains("plan.overlap_moe_expert_parallel_comm") && Catch::Contains("recompute full"));
    plan dense;
    dense.dp = 8;
    dense.moe_a2a_overlap = true;
    CHECK_THROWS_WITH(predict_step(models::llama3_8b, presets::dgx_h100, dense),
                      Catch::Contains("plan.overlap_moe_expert_parallel_comm") && Catch::Contains("ep 1"));
}

TEST_CASE("MoE all-to-all overlap, dropless: the paired backward's expert kernels are launch-bound, all of them") {
    // Megatron-Core's combined 1F1B (model_chunk_schedule_plan.py TransformerLayerSchedulePlan.run)
    // issues a paired layer's backward sub-modules from the CPU thread that waits on the dropless
    // dispatcher's synchronization and paces the forward's experts: beside the 4 expert GEMMs per
    // local expert that every backward charges moe_launch_overhead_s, the experts' other kernels
    // are charged it too on the paired share. Qwen3 235B-A22B (128 experts, every layer MoE) on EP
    // 32: 4 local experts; per-tensor FP8 with current scaling quantizes each expert GEMM's input in
    // 4 kernels (Float8CurrentScalingQuantizer), expert by expert; the all-to-all dispatcher with
    // more than one local expert permutes, sorts, sorts back and unpermutes (4): 2 x 4 x 4 + 1
    // (activation) + 4 = 37 kernels per layer, as many in the backward as in the forward.
    const auto& m = models::qwen3_235b_a22b;
    const cluster c = qwen3_235b_h100_cluster();
    plan p = qwen3_235b_h100_plan();
    const auto alone = predict_step(m, c, p);
    p.moe_a2a_overlap = true;
    const auto overlapped = predict_step(m, c, p);
    const double paired = qwen3_235b_h100_paired;
    const double other = 2.0 * 4.0 * 4.0 + 1.0 + 4.0;
    const auto& k = fitted_compute_constants;
    CHECK_THAT(in_seconds(overlapped.layer.overhead_bwd) - in_seconds(alone.layer.overhead_bwd),
               WithinRel(paired * other * (k.moe_launch_overhead_s - k.kernel_overhead_s), 1e-9));
    // the forward's kernels are charged as before, and the step is slower for it than its
    // all-to-all overlap alone would make it
    CHECK(in_seconds(overlapped.layer.overhead_fwd) == in_seconds(alone.layer.overhead_fwd));
    CHECK(in_seconds(overlapped.compute) > in_seconds(alone.compute));
    // token dropping with padding (static shapes, no synchronization): no kernel is paced by it
    p.capacity_factor = 1.0;
    p.pad_to_capacity = true;
    const auto padded_overlapped = predict_step(m, c, p);
    p.moe_a2a_overlap = false;
    const auto padded = predict_step(m, c, p);
    CHECK(in_seconds(padded_overlapped.layer.overhead_bwd) == in_seconds(padded.layer.overhead_bwd));
}
