// Full recompute by method (Megatron-Core `--recompute-granularity full --recompute-method
// uniform|block --recompute-num-layers N`; megatron/core/transformer/transformer_block.py
// `_checkpointed_forward`): block recomputes the first N layers of each model chunk and keeps the
// others' activations; uniform checkpoints groups of N layers and recomputes them all.
#include "catch_shim.hpp"

#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace {
plan llama3_8b_h100(recompute r, recompute_method method = recompute_method::uniform, int n = 0) {
    // Megatron-Bridge r0.2.0's Llama 3 8B H100 FP8 recipe (scripts/performance/configs/llama3/
    // workload_base_configs.py LLAMA3_8B_H100_FP8_CS_BASE_CONFIG: recompute_num_layers=5, which
    // utils/helpers.py set_recompute_overrides turns into granularity full, method block; no
    // FSDP, micro-batch 1, global batch 128 of 8,192 tokens; grad_reduce_in_fp32 False)
    plan p;
    p.dp = 8;
    p.micro_batch = 1;
    p.global_batch = 128;
    p.seq = 8192;
    p.precision = dtype::fp8;
    p.gradient_bytes = 2;
    p.recompute_mode = r;
    p.full_recompute_method = method;
    p.recompute_num_layers = n;
    return p;
}
}  // namespace

TEST_CASE("recompute method block: the step repeats the forward of N of each chunk's layers") {
    const auto& m = models::llama3_8b;  // 32 layers, one chunk with pp 1
    const auto& c = presets::dgx_h100;
    const auto none = predict_step(m, c, llama3_8b_h100(recompute::none));
    const auto full = predict_step(m, c, llama3_8b_h100(recompute::full));
    const auto block5 = predict_step(m, c, llama3_8b_h100(recompute::full, recompute_method::block, 5));
    // 5 of 32 layers recomputed: 5/32 of full recompute's extra compute and hardware FLOPs
    CHECK_THAT(in_seconds(block5.compute - none.compute), WithinRel(5.0 / 32.0 * in_seconds(full.compute - none.compute), 1e-9));
    CHECK_THAT(in_flops(block5.hardware_flops - none.hardware_flops),
               WithinRel(5.0 / 32.0 * in_flops(full.hardware_flops - none.hardware_flops), 1e-12));
    // full recompute's extra FLOPs are one forward of the layers (Narayanan et al. 2021 eq. 3 vs
    // its recompute form): the block's are 5 layers' forward, per sequence 2 x 5 x layer FLOPs
    CHECK_THAT(in_flops(block5.hardware_flops - none.hardware_flops),
               WithinRel(128.0 * 5.0 * layer_forward_flops(m, 8192, 1).total().value(), 1e-9));
    CHECK(block5.model_flops.value() == none.model_flops.value());  // MFU counts no recompute
    // N >= the chunk's layers is full recompute; block with pp 4: 8 layers per chunk, N = 2 is a quarter
    const auto block32 = predict_step(m, c, llama3_8b_h100(recompute::full, recompute_method::block, 32));
    CHECK_THAT(in_seconds(block32.step), WithinRel(in_seconds(full.step), 1e-12));
    CHECK(llama3_8b_h100(recompute::full, recompute_method::block, 40).full_recompute_share(32) == 1.0);
    plan staged = llama3_8b_h100(recompute::full, recompute_method::block, 2);
    staged.pp = 4;
    staged.dp = 2;
    CHECK(staged.full_recompute_share(32) == 0.25);
    staged.schedule = pipeline_schedule::interleaved;
    staged.virtual_stages = 2;  // 4 layers per chunk: N = 2 of them
    CHECK(staged.full_recompute_share(32) == 0.5);
    // memory: the 5 checkpointed layers keep their 2 sbh input, the 27 others what they keep
    // without recompute; the difference from none is 5 x (kept - 2 sbh)
    const double sbh = 8192.0 * 4096.0;
    const double kept = in_bytes(activation_bytes_per_layer(m, 8192, 1, 1, false, recompute::selective, 1.0));
    CHECK_THAT(in_bytes(none.memory.activations - block5.memory.activations), WithinRel(5.0 * (kept - 2.0 * sbh), 1e-9));
    // the recipe fits the H100's 80 GB with room for the workspace the model does not count
    CHECK(block5.fits_in_memory);
    CHECK(in_bytes(block5.memory.total()) < in_bytes(none.memory.total()));
}

TEST_CASE("recompute method uniform: every layer recomputed, one checkpoint per group") {
    const auto& m = models::llama3_8b;
    const auto& c = presets::dgx_h100;
    const auto full = predict_step(m, c, llama3_8b_h100(recompute::full));
    const auto grouped = predict_step(m, c, llama3_8b_h100(recompute::full, recompute_method::uniform, 4));
    CHECK_THAT(in_seconds(grouped.step), WithinRel(in_seconds(full.step), 1e-12));
    const double sbh = 8192.0 * 4096.0;
    // 32 checkpoints of 2 sbh -> 8
    CHECK_THAT(in_bytes(full.memory.activations - grouped.memory.activations), WithinRel(24.0 * 2.0 * sbh, 1e-9));
}

TEST_CASE("recompute method: Megatron-Core's rules are input errors") {
    const auto& m = models::llama3_8b;
    const auto& c = presets::dgx_h100;
    // recompute_num_layers and the method apply to full granularity only
    CHECK_THROWS_WITH(predict_step(m, c, llama3_8b_h100(recompute::selective, recompute_method::uniform, 5)),
                      Catch::Contains("plan.recompute_num_layers") && Catch::Contains("recompute full"));
    CHECK_THROWS_WITH(predict_step(m, c, llama3_8b_h100(recompute::none, recompute_method::block, 0)),
                      Catch::Contains("plan.recompute_method") && Catch::Contains("block"));
    // block needs its N
    CHECK_THROWS_WITH(predict_step(m, c, llama3_8b_h100(recompute::full, recompute_method::block, 0)),
                      Catch::Contains("plan.recompute_num_layers") && Catch::Contains(">= 1"));
    CHECK_THROWS_WITH(predict_step(m, c, llama3_8b_h100(recompute::full, recompute_method::uniform, -1)),
                      Catch::Contains("plan.recompute_num_layers") && Catch::Contains("-1"));
    // spellings
    CHECK(parse<recompute_method>("block", "x") == recompute_method::block);
    CHECK(to_string(recompute_method::uniform) == "uniform");
}
