// accelerator::mxfp8_gemm_time_ratio: MXFP8's GEMMs take per-tensor FP8's time (its backward factor
// included) times this ratio. Default: Transformer Engine's GEMM profiling tutorial on one B300
// (docs/examples/gemm_profiling/gemm_profiling.rst, pre-quantized inputs: the 12 GEMMs of a 5B layer
// in 7.161 ms as MXFP8 against 6.812 ms with per-tensor current scaling); an accelerator JSON may
// give a measurement of its own part.
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

TEST_CASE("mxfp8_gemm_time_ratio: the default is Transformer Engine's B300 pair, and a part's own figure replaces it") {
    CHECK_THAT(b200.mxfp8_gemm_time_ratio, WithinRel(7.161 / 6.812, 1e-12));
    CHECK(mxfp8_gemm_time_ratio == b200.mxfp8_gemm_time_ratio);

    const auto per_tensor = compute_params_for(b200, dtype::fp8, fitted_compute_constants, framework::megatron_core,
                                               fp8_recipe::tensorwise);
    const auto mx = compute_params_for(b200, dtype::mxfp8, fitted_compute_constants, framework::megatron_core);
    // forward GEMMs 1.051x per-tensor FP8's time, backward the same with the same backward factor
    CHECK_THAT(mx.inv_gemm_rate, WithinRel(per_tensor.inv_gemm_rate * 7.161 / 6.812, 1e-12));
    CHECK_THAT(mx.backward_gemm_slowdown, WithinRel(per_tensor.backward_gemm_slowdown, 1e-12));

    // a part whose MXFP8 GEMMs run as fast as its per-tensor FP8 ones (ratio 1), and one at 1.3
    accelerator same = b200, slower = b200;
    same.mxfp8_gemm_time_ratio = 1.0;
    slower.mxfp8_gemm_time_ratio = 1.3;
    const auto at_one = compute_params_for(same, dtype::mxfp8, fitted_compute_constants, framework::megatron_core);
    const auto at_1_3 = compute_params_for(slower, dtype::mxfp8, fitted_compute_constants, framework::megatron_core);
    CHECK_THAT(at_one.inv_gemm_rate, WithinRel(per_tensor.inv_gemm_rate, 1e-12));
    CHECK_THAT(at_1_3.inv_gemm_rate, WithinRel(1.3 * per_tensor.inv_gemm_rate, 1e-12));
    // per-tensor FP8 and BF16 do not read it
    CHECK(compute_params_for(slower, dtype::fp8, fitted_compute_constants, framework::megatron_core, fp8_recipe::tensorwise)
              .inv_gemm_rate == per_tensor.inv_gemm_rate);
    CHECK(compute_params_for(slower, dtype::bf16, fitted_compute_constants, framework::megatron_core).inv_gemm_rate ==
          compute_params_for(b200, dtype::bf16, fitted_compute_constants, framework::megatron_core).inv_gemm_rate);

    // in a step: Llama 3 8B on 8 B200 in MXFP8, the layer's GEMMs (large, compute-bound at 8K
    // tokens) 1.3x as long as at ratio 1; its attention and memory-bound kernels unchanged
    const layer_shape s = [] {
        layer_shape x;
        x.seq = 8192;
        return x;
    }();
    const layer_time one = layer_compute_time(models::llama3_8b, s, at_one);
    const layer_time more = layer_compute_time(models::llama3_8b, s, at_1_3);
    CHECK_THAT(more.gemm_fwd.value(), WithinRel(1.3 * one.gemm_fwd.value(), 0.02));
    CHECK_THAT(more.gemm_bwd.value(), WithinRel(1.3 * one.gemm_bwd.value(), 0.02));
    CHECK(more.attention_fwd == one.attention_fwd);
    CHECK(more.elementwise_fwd == one.elementwise_fwd);
}
