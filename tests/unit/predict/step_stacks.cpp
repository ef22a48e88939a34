// Software-stack profiles (parallel/framework.hpp), the shape- and precision-aware compute model
// (predict/compute.hpp) and uneven pipelines (parallel/plan.hpp stage_layers), checked against
// the stacks' documented defaults, published layer splits and the physics the model describes.
#include "catch_shim.hpp"

#include <cmath>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/scale.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

TEST_CASE("framework profiles resolve to each stack's documented defaults") {
    plan p;
    // Megatron-Core (Megatron-LM README performance flags; distributed_data_parallel.py)
    apply_framework(p, framework::megatron_core);
    CHECK(p.stack == framework::megatron_core);
    CHECK(p.zero == 1);                                 // --use-distributed-optimizer
    CHECK(p.gradient_bytes == 2);                       // ddp.grad_reduce_in_fp32 = False (performance recipes)
    CHECK(in_bytes(p.bucket) == Approx(40e6 * 2));      // 40M parameters of bf16 gradients
    CHECK(in_bytes(p.bucket_per_dp) == Approx(1e6 * 2));  // max(40M, 1M x dp)
    CHECK(p.overlap.dp);                                // --overlap-grad-reduce
    CHECK(p.overlap.zero);                              // --overlap-param-gather
    CHECK(p.overlap.tp);                                // --tp-comm-overlap
    CHECK(p.overlap.pp);                                // overlap_p2p_comm
    CHECK(p.attention == attention_kernel::flash);
    CHECK_FALSE(p.reduce_every_micro_batch);
    // the default plan is the default profile
    const plan d;
    CHECK(d.zero == p.zero);
    CHECK(d.gradient_bytes == p.gradient_bytes);
    CHECK(d.bucket == p.bucket);
    CHECK(d.bucket_per_dp == p.bucket_per_dp);
    CHECK(d.overlap.tp == p.overlap.tp);
    // Megatron-LM 2021-22: one contiguous fp32 buffer all-reduced after the backward, blocking p2p
    apply_framework(p, framework::megatron_lm);
    CHECK(p.zero == 0);
    CHECK(in_bytes(p.bucket) >= whole_gradient_bucket);
    CHECK_FALSE(p.overlap.dp);
    CHECK_FALSE(p.overlap.tp);
    CHECK_FALSE(p.overlap.pp);
    CHECK(p.attention == attention_kernel::unfused);
    // Megatron-DeepSpeed: ZeRO-1, reduce after the pipeline schedule, 5e8-element buckets
    apply_framework(p, framework::megatron_deepspeed);
    CHECK(p.zero == 1);
    CHECK(in_bytes(p.bucket) == Approx(5e8 * 4));
    CHECK_FALSE(p.overlap.dp);
    // DeepSpeed ZeRO-3: overlap_comm on for stage 3, reduced in the model dtype
    apply_framework(p, framework::deepspeed);
    CHECK(p.zero == 3);
    CHECK(p.gradient_bytes == 2);
    CHECK(p.overlap.dp);
    CHECK(p.overlap.zero);
    CHECK(p.reduce_every_micro_batch);
    // FSDP (torchtitan): FULL_SHARD, fp32 reduce, per-layer prefetch
    apply_framework(p, framework::fsdp);
    CHECK(p.zero == 3);
    CHECK(p.gradient_bytes == 4);
    CHECK(p.overlap.zero);
    CHECK_FALSE(p.overlap.tp);
    CHECK(p.attention == attention_kernel::flash);
    // names round-trip; unknown names suggest
    for (std::size_t i = 0; i < framework_count; ++i) {
        const auto f = static_cast<framework>(i);
        CHECK(parse<framework>(to_string(f), "plan.framework") == f);
    }
    CHECK_THROWS_WITH(parse<framework>("megatron_core", "--framework"), Catch::Matchers::Contains("megatron-core"));
}

TEST_CASE("set_gradient_bytes keeps the buckets' element count, as the stacks count them") {
    // Megatron-Core: bucket_size = max(40000000, 1000000 * dp) elements of the gradient buffer's
    // dtype (megatron/core/distributed/distributed_data_parallel.py), so fp32 gradients fill
    // 160 MB buckets and bf16 ones 80 MB
    plan p;
    apply_framework(p, framework::megatron_core);
    set_gradient_bytes(p, 4);
    CHECK(p.gradient_bytes == 4);
    CHECK(in_bytes(p.bucket) == Approx(40e6 * 4));
    CHECK(in_bytes(p.bucket_per_dp) == Approx(1e6 * 4));
    set_gradient_bytes(p, 2);
    CHECK(in_bytes(p.bucket) == Approx(40e6 * 2));
    // DeepSpeed's reduce_bucket_size is 5e8 elements (deepspeed/runtime/zero/config.py)
    apply_framework(p, framework::deepspeed);
    set_gradient_bytes(p, 4);
    CHECK(in_bytes(p.bucket) == Approx(5e8 * 4));
    // one bucket holding the whole gradient stays whole
    apply_framework(p, framework::megatron_lm);
    set_gradient_bytes(p, 2);
    CHECK(in_bytes(p.bucket) >= whole_gradient_bucket);
    CHECK(p.gradient_bytes == 2);
    // a bucket set after it (bytes, as --bucket gives it) is kept as given
    apply_framework(p, framework::megatron_core);
    set_gradient_bytes(p, 4);
    p.bucket = bytes(ddp_bucket_bytes);
    CHECK(in_bytes(p.bucket) == Approx(25e6));
}

TEST_CASE("uneven pipelines: Megatron's split, first/last stage options, slowest stage sets the pace") {
    const transformer l405 = model_by_name("llama3-405b");  // 126 layers
    REQUIRE(l405.layers == 126);
    plan p{.tp = 8, .pp = 16, .dp = 1, .micro_batch = 1, .global_batch = 16, .seq = 8192};
    // 126 = 16 x 7 + 14: fourteen stages after the first get 8, the first and last keep 7
    int total = 0;
    for (int s = 0; s < 16; ++s) total += stage_layers(p, 126, s);
    CHECK(total == 126);
    CHECK(stage_layers(p, 126, 0) == 7);
    CHECK(stage_layers(p, 126, 15) == 7);
    CHECK(max_stage_layers(p, 126) == 8);
    // Llama 3 405B's own split on PP 16: first and last stages with one layer fewer (Llama 3 paper
    // Sec. 3.3.2 removes a layer from the first and last stages; Megatron
    // --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers)
    p.first_stage_layers = 7;
    p.last_stage_layers = 7;
    CHECK(stage_layers(p, 126, 1) == 8);  // (126 - 14) / 14
    total = 0;
    for (int s = 0; s < 16; ++s) total += stage_layers(p, 126, s);
    CHECK(total == 126);
    // BLOOM-176B: 70 layers on 12 stages (Le Scao et al. 2022, Sec. 3.4.1: PP 12)
    const transformer bloom = model_by_name("bloom-176b");
    plan b{.tp = 4, .pp = 12, .dp = 8, .micro_batch = 2, .global_batch = 2048};
    total = 0;
    for (int s = 0; s < 12; ++s) total += stage_layers(b, bloom.layers, s);
    CHECK(total == 70);
    CHECK(max_stage_layers(b, bloom.layers) == 6);
    // a split that does not share the rest evenly is named
    p.first_stage_layers = 5;
    p.last_stage_layers = 0;
    cluster c = presets::dgx_h100;
    c.nodes = 16;
    CHECK_THROWS_WITH(predict_step(l405, c, p), Catch::Matchers::Contains("plan.first_stage_layers"));
    // the step predictor runs them; the slowest stage sets the pace: 126 layers on PP 16 have
    // 8-layer middle stages and a 7-layer last stage with the logits, while 128 layers put 8
    // layers and the logits on the last stage, which is then the slowest
    p.first_stage_layers = 0;
    p.recompute_mode = recompute::full;
    const auto s126 = predict_step(l405, c, p);
    transformer l128 = l405;
    l128.layers = 128;
    const auto s128 = predict_step(l128, c, p);
    CHECK(s126.max_stage_layers == 8);
    CHECK(s128.max_stage_layers == 8);
    CHECK(s126.stage_microbatch < s128.stage_microbatch);
}

TEST_CASE("compute model: fp8 speeds up only the GEMMs, small shapes run further below peak") {
    const accelerator h100 = accelerator_by_name("h100-sxm");
    const transformer l70 = model_by_name("llama3-70b");
    plan p{.tp = 4, .pp = 1, .dp = 1, .micro_batch = 1, .global_batch = 1, .seq = 4096};
    p.sequence_parallel = true;
    const auto bf = layer_compute_time(l70, p, compute_params_for(h100, dtype::bf16));
    const auto f8 = layer_compute_time(l70, p, compute_params_for(h100, dtype::fp8));
    const double speedup = in_seconds(bf.forward() + bf.backward()) / in_seconds(f8.forward() + f8.backward());
    INFO("fp8 layer speed-up over bf16: " << speedup);
    // H100 fp8 dense peak is 2x bf16 (1979 vs 989 TFLOPS, NVIDIA H100 datasheet); published fp8
    // training gains are 1.3-1.5x (NVIDIA Transformer Engine docs / NeMo performance tables)
    CHECK(speedup > 1.2);
    CHECK(speedup < 1.8);
    CHECK(f8.attention_fwd == bf.attention_fwd);  // attention stays in bf16
    CHECK(f8.elementwise_fwd > bf.elementwise_fwd);  // the casts
    // Transformer Engine's backward fp8 GEMMs use the split accumulator, the forward one fast
    // accumulation: backward/forward GEMM time is above bf16's (where the two backward GEMMs are
    // twice the forward work) by the split accumulator's cost, 1.047x on one H200 (median of 160
    // Llama-layer GEMMs, data/measurements/h200_compute_kernels.json; 1.1-1.2x in pytorch/ao
    // #2377 on H100), and by the FP8 work the fit to the calibration set adds to it
    // (fitted_compute_constants.fp8_backward_slowdown, at most 1.5x: docs/accuracy.md)
    const double split = (in_seconds(f8.gemm_bwd) / in_seconds(f8.gemm_fwd)) /
                         (in_seconds(bf.gemm_bwd) / in_seconds(bf.gemm_fwd));
    CHECK(split >= 1.04);
    CHECK(split <= 1.5);
    const auto f8_kernel = layer_compute_time(l70, p, compute_params_for(h100, dtype::fp8, kernel_constants));
    const double split_kernel = (in_seconds(f8_kernel.gemm_bwd) / in_seconds(f8_kernel.gemm_fwd)) /
                                (in_seconds(bf.gemm_bwd) / in_seconds(bf.gemm_fwd));
    CHECK_THAT(split_kernel, Catch::Matchers::WithinRel(1.047, 0.01));
    // the logits GEMM stays bf16 (Megatron-Core's output layer is outside the fp8 autocast)
    CHECK(in_seconds(output_layer_time(l70, p, compute_params_for(h100, dtype::fp8))) ==
          Approx(in_seconds(output_layer_time(l70, p, compute_params_for(h100, dtype::bf16)))));
    // GEMM efficiency: a large GEMM reaches the accelerator's MAMF fraction x the share a training
    // stack's GEMMs keep of it (compute_constants::gemm_shape_efficiency; Transformer Engine's
    // profile of a 5B layer on B300: 1503 of a best-shape 1769 TFLOP/s, 0.85), a small one less
    const compute_params cp = compute_params_for(h100, dtype::bf16);
    const double big = 2.0 * 8192.0 * 8192 * 8192 / detail::gemm_seconds(8192, 8192, 8192, cp) / cp.gemm_peak.value();
    const double small = 2.0 * 1024.0 * 512 * 512 / detail::gemm_seconds(1024, 512, 512, cp) / cp.gemm_peak.value();
    CHECK(big == Approx(h100.compute_efficiency * 1503.0 / 1769.0).epsilon(0.1));
    CHECK(small < 0.5 * big);
    // a 1.3B-class layer (h 2048) sustains a smaller fraction of peak than a 70B one (h 8192)
    const transformer small_model{.name = "gpt-1.3b", .layers = 24, .hidden = 2048, .heads = 16, .kv_heads = 16,
                                  .ffn = 8192, .vocab = 50257, .max_seq = 2048, .source = "GPT-3 XL shape"};
    plan q{.tp = 1, .pp = 1, .dp = 1, .micro_batch = 4, .global_batch = 4, .seq = 2048};
    auto frac = [&](const transformer& m, const plan& x) {
        const auto lt = layer_compute_time(m, x, cp);
        const double fl = 3.0 * layer_forward_flops(m, x.seq, x.micro_batch).total().value() / (x.tp * x.cp);
        return fl / in_seconds(lt.forward() + lt.backward()) / cp.gemm_peak.value();
    };
    const double f_small = frac(small_model, q), f_big = frac(l70, p);
    INFO("fraction of peak: 1.3B " << f_small << ", 70B tp4 " << f_big);
    CHECK(f_small < f_big);
    CHECK(f_big < h100.compute_efficiency);  // never above the large-GEMM figure
    // FlashAttention efficiency grows with the sequence toward its long-sequence figure
    CHECK(flash_attention_efficiency(512) == Approx(flash_attention_peak_efficiency / 2));
    CHECK(flash_attention_efficiency(16384) > 0.95 * flash_attention_peak_efficiency);
    // --compute-efficiency still overrides everything: compute = FLOPs / (N peak x)
    cluster c = presets::dgx_h100;
    plan r{.tp = 8, .pp = 1, .dp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    r.compute_efficiency = 0.5;
    const auto s = predict_step(l70, c, h100, r);
    CHECK(s.efficiency == Approx(0.5).epsilon(1e-9));
}

TEST_CASE("overlap as the stacks do it: Megatron-Core hides DP and TP that Megatron-LM 2021 exposes") {
    // GPT 175B on 64 DGX H100 nodes, TP 8 x PP 8 x DP 8, SP, interleaved V = 4
    const transformer m = model_by_name("gpt3-175b");
    cluster c = presets::dgx_h100;
    c.nodes = 64;
    plan p{.tp = 8, .pp = 8, .dp = 8, .micro_batch = 1, .global_batch = 1024, .seq = 2048};
    p.sequence_parallel = true;
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 4;
    plan core = p, old = p;
    apply_framework(core, framework::megatron_core);
    apply_framework(old, framework::megatron_lm);
    core.sequence_parallel = old.sequence_parallel = true;
    const auto a = predict_step(m, c, core), b = predict_step(m, c, old);
    CHECK(a.dp.exposed < b.dp.exposed);
    CHECK(b.dp.exposed == b.dp.total);            // all-reduce after the backward
    CHECK(a.tp.exposed < 0.5 * a.tp.total);       // userbuffers hide most TP
    CHECK(b.tp.exposed == b.tp.total);
    CHECK(a.overlap_slowdown.value() > 0);         // hidden communication costs some compute
    CHECK(a.step < b.step);
    CHECK(a.bottleneck == step_bottleneck::compute);
    // FSDP of an 8B model on 64 H100: per-layer gathers hidden behind the layers
    const transformer l8 = model_by_name("llama3-8b");
    cluster c8 = presets::dgx_h100;
    c8.nodes = 8;
    plan f{.tp = 1, .pp = 1, .dp = 64, .micro_batch = 1, .global_batch = 128, .seq = 8192};
    apply_framework(f, framework::fsdp);
    const auto fs = predict_step(l8, c8, f);
    CHECK(fs.dp.exposed < 0.25 * fs.dp.total);
    CHECK(fs.bottleneck == step_bottleneck::compute);
    f.overlap.zero = false;
    const auto fs_off = predict_step(l8, c8, f);
    CHECK(fs_off.dp.exposed == fs_off.dp.total);
}

TEST_CASE("scale skips node counts that cannot hold the plan and lists them") {
    const transformer m = model_by_name("llama3-8b");
    cluster c = presets::dgx_h100;
    c.nodes = 1;
    const plan base{.tp = 8, .pp = 1, .dp = 1, .micro_batch = 1, .global_batch = 8, .seq = 8192};
    std::vector<scale_skip> skipped;
    // strong scaling with a global batch of 8: 16 nodes means dp 16, which cannot divide 8
    const std::vector<int> nodes{1, 2, 16};
    const auto pts = scale_sweep(m, c, base, nodes, scaling_mode::strong, {}, &skipped);
    REQUIRE(pts.size() == 2);
    REQUIRE(skipped.size() == 1);
    CHECK(skipped[0].nodes == 16);
    CHECK_THAT(skipped[0].reason, Catch::Matchers::Contains("global_batch"));
    // without the list the sweep still refuses
    CHECK_THROWS_AS(scale_sweep(m, c, base, nodes, scaling_mode::strong), input_error);
}

TEST_CASE("compute memo: models that differ only in vocabulary, MTP modules or GEMM efficiency are told apart") {
    // The step predictor takes a layer's and the output layer's times from a per-thread memo
    // (predict/compute.hpp layer_and_output_cached). Interleaving shapes that share every layer
    // field but one must return what the uncached functions give, each time.
    const accelerator acc = accelerator_by_name("h100-sxm");
    transformer base = model_by_name("llama3-8b");
    transformer big_vocab = base;
    big_vocab.vocab = 2 * base.vocab;
    transformer with_mtp = base;
    with_mtp.mtp_layers = 1;
    const plan p{.tp = 2, .pp = 1, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192};
    compute_params c = compute_params_for(acc, p.precision);
    compute_params slower = c;
    slower.gemm_efficiency *= 0.5;
    slower.finish();
    for (int round = 0; round < 3; ++round) {
        for (const transformer* m : {&base, &big_vocab, &with_mtp}) {
            for (const compute_params* cp : {&c, &slower}) {
                const layer_and_output got = layer_and_output_cached(*m, p, *cp);
                CHECK(in_seconds(got.output) == in_seconds(output_layer_time(*m, p, *cp) + mtp_time(*m, p, *cp)));
                CHECK(in_seconds(got.layer.forward()) == in_seconds(layer_compute_time(*m, p, *cp).forward()));
            }
        }
    }
    // the logits GEMM (T x h)(h x V/t) dominates the output layer: twice the vocabulary, about
    // twice the time (the cross-entropy's bytes also scale with V); an MTP module adds a layer
    // and a second output layer
    const double out = in_seconds(layer_and_output_cached(base, p, c).output);
    CHECK(in_seconds(layer_and_output_cached(big_vocab, p, c).output) / out == Approx(2.0).epsilon(0.05));
    CHECK(in_seconds(layer_and_output_cached(with_mtp, p, c).output) > 2.0 * out);
    // half the GEMM efficiency: the GEMM-bound output layer takes longer (not the memo's old value)
    CHECK(in_seconds(layer_and_output_cached(base, p, slower).output) > 1.5 * out);
}

TEST_CASE("recompute modules: the backward repeats each recomputed module's forward, memory drops") {
    const auto& m = models::gpt_oss_120b;
    cluster c = presets::dgx_h100;
    c.nodes = 8;
    plan p{.tp = 1, .pp = 4, .dp = 16, .ep = 8, .micro_batch = 4, .global_batch = 512, .seq = 4096};
    p.etp = 1;
    const auto base = predict_step(m, c, p);
    p.recompute_modules = recompute_layernorm | recompute_moe_act;
    const auto rec = predict_step(m, c, p);
    CHECK(rec.memory.activations < base.memory.activations);
    CHECK(rec.compute > base.compute);
    // the added time is the two norms' and the experts' activation forward: memory-bound kernels,
    // at most a few percent of the step (their bytes against the layer's GEMMs)
    CHECK(in_seconds(rec.compute) < 1.05 * in_seconds(base.compute));
    // full recompute already repeats every forward: the modules add nothing on top
    p.recompute_mode = recompute::full;
    const auto full = predict_step(m, c, p);
    p.recompute_modules = 0;
    CHECK(in_seconds(predict_step(m, c, p).compute) == Approx(in_seconds(full.compute)));
    // an out-of-range bitmask is an error naming the field
    p.recompute_modules = 1u << 10;
    CHECK_THROWS_WITH(predict_step(m, c, p), Catch::Contains("plan.recompute_modules"));
}

TEST_CASE("TP overlap as Transformer Engine's userbuffers run it: the forward's reduce-scatters leave their last chunk") {
    // Llama 3 70B on one DGX H100, TP 8 with sequence parallelism, 8K tokens: the layers' GEMMs
    // outlast the TP collectives, so what waits is the rule alone. Ring-exchange all-gathers and
    // the backward's bulk reduce-scatters hide; the forward's two reduce-scatters per layer (of the
    // four, forward and backward) leave one chunk: of 4 in TE's default `pipeline` method (BF16), of
    // t in the ring exchange of the FP8 configurations (transformer_engine/pytorch/module/base.py
    // initialize_ub; Megatron-Bridge training/comm_overlap.py). The reduce-scatters and gathers
    // move the same bytes in BF16, so they take half the TP time; in FP8 the gathers move 1-byte
    // GEMM inputs (half the reduce-scatters' bytes), so the reduce-scatters take two thirds of it.
    const transformer m = model_by_name("llama3-70b");
    cluster c = presets::dgx_h100;
    plan p{.tp = 8, .pp = 1, .dp = 1, .micro_batch = 1, .global_batch = 8, .seq = 8192};
    apply_framework(p, framework::megatron_core);
    p.sequence_parallel = true;
    p.recompute_mode = recompute::none;
    const auto bf16 = predict_step(m, c, p);
    CHECK(bf16.tp.exposed.value() / bf16.tp.total.value() == Approx(0.5 * 0.5 / 4.0).epsilon(0.15));
    plan q = p;
    q.precision = dtype::fp8;
    const auto fp8 = predict_step(m, c, q);
    CHECK(fp8.tp.exposed.value() / fp8.tp.total.value() == Approx(0.5 * (2.0 / 3.0) / 8.0).epsilon(0.15));
    // full recompute repeats the forward's collectives: 2 + 2 of 6 reduce-scatters per layer wait
    plan f = p;
    f.recompute_mode = recompute::full;
    const auto full = predict_step(m, c, f);
    CHECK(full.tp.exposed.value() / full.tp.total.value() == Approx((4.0 / 6.0) * 0.5 / 4.0).epsilon(0.15));
    // without the overlap every TP collective waits
    plan n = p;
    n.overlap.tp = false;
    const auto none = predict_step(m, c, n);
    CHECK(none.tp.exposed == none.tp.total);
}
