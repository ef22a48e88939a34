// Megatron-Core's --first-last-layers-bf16 (--num-layers-at-start-in-bf16, --num-layers-at-end-in-bf16):
// the first and last layers of an FP8/FP4 run computed in BF16, on the stages that hold them, with
// TransformerConfig's assertions as input errors.
#include "catch_shim.hpp"
#include "plan_fixtures.hpp"

#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
double bf16_layer_fb(const step_breakdown& r) { return in_seconds(r.layer.forward() + r.layer.backward()); }
}  // namespace

TEST_CASE("first_last_layers_bf16: each BF16 layer costs a BF16 layer's time, on the stage that holds it") {
    const auto& m = models::llama3_8b;
    const cluster c = plan_test::h100_nodes(1);
    // Megatron-Bridge's current-scaling recipe (bf16_with_fp8_current_scaling_mixed: one BF16 layer
    // at each end; its performance scripts switch them off)
    plan p{.tp = 1, .dp = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192, .precision = dtype::fp8};
    p.fp8_scaling = fp8_recipe::tensorwise;
    const auto fp8 = predict_step(m, c, p);
    plan b = p;
    b.precision = dtype::bf16;
    b.fp8_scaling = fp8_recipe::delayed;
    const auto bf16 = predict_step(m, c, b);
    // the BF16 layer is the slower one (its GEMMs at half the FP8 rate)
    REQUIRE(bf16_layer_fb(bf16) > bf16_layer_fb(fp8));
    plan q = p;
    q.first_last_layers_bf16 = true;  // 1 and 1, Megatron-Core's defaults
    const auto mixed = predict_step(m, c, q);
    // one stage: both BF16 layers on it, each at the BF16 plan's layer time instead of FP8's
    CHECK(in_seconds(mixed.stage_microbatch - fp8.stage_microbatch) ==
          Approx(2.0 * (bf16_layer_fb(bf16) - bf16_layer_fb(fp8))).epsilon(1e-9));
    q.bf16_layers_at_start = 0;
    q.bf16_layers_at_end = 4;
    CHECK(in_seconds(predict_step(m, c, q).stage_microbatch - fp8.stage_microbatch) ==
          Approx(4.0 * (bf16_layer_fb(bf16) - bf16_layer_fb(fp8))).epsilon(1e-9));
    // four stages of 8 layers: the 3 end layers slow the last stage, which also runs the output
    // layer, so the slowest stage grows by them
    cluster c4 = cluster_by_name("dgx-b200");
    c4.nodes = 4;
    plan s{.tp = 1, .pp = 4, .dp = 8, .micro_batch = 1, .global_batch = 256, .seq = 8192, .precision = dtype::mxfp8};
    const auto base4 = predict_step(m, c4, s);
    plan s16 = s;
    s16.precision = dtype::bf16;
    const double extra = bf16_layer_fb(predict_step(m, c4, s16)) - bf16_layer_fb(base4);
    s.first_last_layers_bf16 = true;
    s.bf16_layers_at_start = 0;
    s.bf16_layers_at_end = 3;
    CHECK(in_seconds(predict_step(m, c4, s).stage_microbatch - base4.stage_microbatch) == Approx(3.0 * extra).epsilon(1e-9));
}

TEST_CASE("first_last_layers_bf16: Megatron-Core's assertions name the field") {
    const auto& m = models::llama3_8b;
    const cluster c = plan_test::h100_nodes(1);
    plan p{.tp = 1, .dp = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192, .precision = dtype::fp8};
    p.first_last_layers_bf16 = true;
    // TransformerConfig: "Delayed scaling does not support first / last layer in BF16."
    CHECK_THAT(plan_test::error_of(p, m, c), Catch::StartsWith("plan.first_last_layers_bf16 |"));
    p.fp8_scaling = fp8_recipe::tensorwise;
    CHECK(plan_test::error_of(p, m, c) == "no error");
    // nothing to keep in BF16 in a BF16 run
    plan b = p;
    b.precision = dtype::bf16;
    b.fp8_scaling = fp8_recipe::delayed;
    CHECK_THAT(plan_test::error_of(b, m, c), Catch::StartsWith("plan.first_last_layers_bf16 |"));
    // each count in [0, layers / pp]: 32 / 1
    p.bf16_layers_at_start = 33;
    CHECK_THAT(plan_test::error_of(p, m, c), Catch::StartsWith("plan.num_layers_at_start_in_bf16 |"));
    p.bf16_layers_at_start = 1;
    p.bf16_layers_at_end = -1;
    CHECK_THAT(plan_test::error_of(p, m, c), Catch::StartsWith("plan.num_layers_at_end_in_bf16 |"));
    // the counts are read only with the flag (Megatron-Core), so they are free without it
    p.first_last_layers_bf16 = false;
    CHECK(plan_test::error_of(p, m, c) == "no error");
}
