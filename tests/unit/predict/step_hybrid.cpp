// The step predictor on hybrid Mamba-Transformer models: the Mamba-2 SSD scan priced as its own
// kernel (compute_constants::ssd_scan_efficiency), the layer a mean over the pattern, Mamba's CP
// all-to-alls exposed, Nemotron 3's MoE layers with expert parallelism, memory that fits, and
// Qwen3-Next's Gated DeltaNet rule.
#include "catch_shim.hpp"

#include <algorithm>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
cluster dgx_h100(int nodes) {
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = nodes;
    return c;
}
}  // namespace

TEST_CASE("Nemotron-H 8B on one DGX H100: the scan is priced by its FLOPs at its own efficiency") {
    const auto& m = models::nemotron_h_8b;
    const cluster c = dgx_h100(1);
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    const auto r = predict_step(m, c, acc, p);
    // 24 of the 52 layers run the scan: per Mamba layer, (8192 tokens x SSD FLOPs without the conv1d)
    // over 2 TP ranks at 0.1 of the bf16 peak, or its traffic (conv output, dt, z in; gated output
    // and out_x out) at the memory-bound rate, whichever is longer
    const compute_params cp = compute_params_for(acc, dtype::bf16);
    const double flops = 8192.0 * (6'651'904.0 - 2.0 * 4 * 10240) / 2;
    const double traffic = 2.0 * 8192 * (10240 + 128 + 3 * 8192) / 2;
    const double fwd = std::max(flops / (cp.bf16_peak.value() * 0.1), traffic * cp.inv_memory_rate);
    CHECK(kernel_constants.ssd_scan_efficiency == 0.1);
    CHECK(in_seconds(r.layer.scan_fwd) == Approx(24.0 / 52 * fwd).epsilon(1e-9));
    // the backward: twice the products plus the recomputed C B^T, chunk states and their passing
    const double recomputed = 8192.0 * (2.0 * 128 * 8 * 128 + 2.0 * 128 * 8192 + 2.0 * 128 * 8192 / 128) / 2;
    CHECK(in_seconds(r.layer.scan_bwd) ==
          Approx(24.0 / 52 * std::max((2 * flops + recomputed) / (cp.bf16_peak.value() * 0.1), 2 * traffic * cp.inv_memory_rate))
              .epsilon(1e-9));
    // a compute-bound step that fits: 8.1B parameters, 2-byte weights and bf16 gradients (the
    // megatron-core profile's; Megatron-Bridge r0.2.0 scripts/performance/configs/nemotronh/
    // nemotronh_llm_pretrain.py sets ddp.grad_reduce_in_fp32 = False) split by TP 2, 12 bytes of
    // optimizer state over DP 4 (Megatron-Core's distributed optimizer)
    CHECK(r.fits_in_memory);
    CHECK(r.bottleneck == step_bottleneck::compute);
    const double params = 8'100'852'736.0;
    CHECK(in_bytes(r.memory.state.weights) == Approx(2 * params / 2).epsilon(1e-6));
    CHECK(in_bytes(r.memory.state.gradients) == Approx(2 * params / 2).epsilon(1e-6));
    CHECK(in_bytes(r.memory.state.optimizer) == Approx(12 * params / 2 / 4).epsilon(1e-6));
    CHECK(in_bytes(r.memory.activations) > 10e9);
    CHECK(in_bytes(r.memory.total()) < 80e9);
    // MFU in the band Megatron-Core reaches on H100 in bf16 for dense models of this size
    CHECK(r.mfu > 0.3);
    CHECK(r.mfu < 0.7);
    // the scan is a small share of the layer (~3% of its FLOPs, at a tenth of the GEMM rate)
    const double layer = in_seconds(r.layer.forward() + r.layer.backward());
    CHECK(in_seconds(r.layer.scan_fwd + r.layer.scan_bwd) / layer > 0.02);
    CHECK(in_seconds(r.layer.scan_fwd + r.layer.scan_bwd) / layer < 0.2);
}

TEST_CASE("the scan's efficiency is a named constant: a faster kernel shortens the scan alone") {
    const auto& m = models::nemotron_h_8b;
    const cluster c = dgx_h100(1);
    plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    step_options faster;
    faster.constants.ssd_scan_efficiency = 0.2;  // the fused kernel of vLLM PR 27299 reaches ~1.8x
    const auto a = predict_step(m, c, p), b = predict_step(m, c, p, faster);
    CHECK(in_seconds(b.layer.scan_fwd) == Approx(in_seconds(a.layer.scan_fwd) / 2));  // FLOP-bound at 0.1 and 0.2
    CHECK(in_seconds(b.layer.gemm_fwd) == in_seconds(a.layer.gemm_fwd));
    CHECK(b.step < a.step);
    step_options bad;
    bad.constants.ssd_scan_efficiency = 1.5;
    CHECK_THROWS_AS(predict_step(m, c, p, bad), input_error);
    // a transformer has no scan
    CHECK(in_seconds(predict_step(models::llama3_8b, c, p).layer.scan_fwd) == 0.0);
}

TEST_CASE("Mamba's CP all-to-alls stay exposed, the attention layers' ring hides under attention") {
    const auto& m = models::nemotron_h_8b;
    const cluster c = dgx_h100(1);
    plan p{.tp = 2, .dp = 2, .cp = 2, .micro_batch = 1, .global_batch = 16, .seq = 16384, .sequence_parallel = true};
    const auto r = predict_step(m, c, p);
    const auto t = plan_traffic(m, p, c.domain_gpus());
    REQUIRE(!t.cp_mamba.empty());
    const double a2a = t.cp_mamba.count * in_seconds(predict_collective_time(c, t.cp_mamba.group, collective_op::all_to_all, t.cp_mamba.bytes));
    CHECK(in_seconds(r.cp.total) > a2a);  // + the ring of the 4 attention layers
    CHECK(in_seconds(r.cp.exposed) >= a2a * (1 - 1e-9));
    CHECK(r.cp.exposed <= r.cp.total);
}

TEST_CASE("Nemotron 3 Nano with expert parallelism: MoE layers are 23 of 52, step prices it") {
    const auto& m = models::nemotron3_nano;
    const cluster c = dgx_h100(2);
    // (tp 1 needs 82.6 GiB per GPU: the 3712-wide shared expert and 6 x 1856 routed widths per token)
    plan p{.tp = 2, .dp = 8, .ep = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192, .sequence_parallel = true};
    const auto r = predict_step(m, c, p);
    const auto t = plan_traffic(m, p, c.domain_gpus());
    // dispatch + combine, forward and backward, on the 23 MoE layers of each of 8 micro-batches
    CHECK(t.ep.count == Approx(8.0 * 23 * 4));
    CHECK(r.step.value() > 0.0);
    CHECK(r.fits_in_memory);
    CHECK(in_seconds(r.ep.total) > 0.0);
    CHECK(in_seconds(r.layer.scan_fwd) > 0.0);
    // the MFU of a model with 3.6B active parameters and 131072-token logits: well below the dense one
    CHECK(r.mfu > 0.05);
    CHECK(r.mfu < 0.6);
    // a fixed efficiency replaces the compute model: FLOPs of the mean layer at that fraction of peak
    plan q = p;
    q.compute_efficiency = 0.4;
    const auto s = predict_step(m, c, q);
    CHECK(in_seconds(s.layer.scan_fwd) == 0.0);
    CHECK(s.step.value() > 0.0);
}

TEST_CASE("Nemotron 3 Super: LatentMoE dispatches and computes in the latent width") {
    const auto& m = models::nemotron3_super;
    // Megatron-LM's GB200 release configuration of Nemotron 3 Super
    // (tests/functional_tests/test_cases/nemotron/nemotron3_super_release_gb200/model_config.yaml at
    // d98e8a64dd): TP 2, EP 64, ETP 1, SP, micro-batch 1, 8192 tokens, MXFP8, the distributed
    // optimizer with fp32 moments and main parameters, bf16 gradient reduction, the flex dispatcher
    // over HybridEP; on the smallest system it runs on, 64 GPUs of one NVL72 rack
    cluster c = cluster_by_name("gb200-nvl72");
    c.nodes = 64 / c.node.gpus;
    plan p{.tp = 2, .dp = 32, .ep = 64, .micro_batch = 1, .global_batch = 512, .seq = 8192, .zero = 1,
           .sequence_parallel = true, .precision = dtype::mxfp8};
    p.etp = 1;
    p.gradient_bytes = 2.0;
    p.dispatcher = moe_token_dispatcher::hybridep;
    const auto r = predict_step(m, c, p);
    // it ran, so it fits (without the latent width the routed experts are 4x as many parameters)
    CHECK(r.fits_in_memory);
    CHECK(r.step.value() > 0.0);
    // the all-to-all dispatcher sends k = 22 copies of each of a TP rank's tokens, 1024 wide in 16
    // bits (Megatron-Core token_dispatcher.py: hidden_dim = moe_latent_size or hidden_size)
    plan a = p;
    a.dispatcher = moe_token_dispatcher::alltoall;
    const auto t = plan_traffic(m, a, c.domain_gpus());
    CHECK(in_bytes(t.ep.bytes) == Approx(22.0 * 8192 * 1024 * 2 / 2).epsilon(1e-12));
    // 40 MoE layers of 88, dispatch + combine forward and backward, 16 micro-batches
    CHECK(t.ep.count == Approx(16.0 * 40 * 4));
    // the latent width makes the MoE layers' GEMMs cheaper than the same experts over h = 4096:
    // more than half of the step's compute goes away
    transformer wide = m;
    wide.moe_latent = 0;
    const auto w = predict_step(wide, c, p);
    CHECK(in_seconds(w.layer.gemm_fwd) > 2.0 * in_seconds(r.layer.gemm_fwd));
}

TEST_CASE("Qwen3-Next: the Gated DeltaNet rule priced by its FLOPs, linear in the sequence where attention is not") {
    const auto& m = models::qwen3_next_80b_a3b;
    cluster c = cluster_by_name("dgx-b200");
    c.nodes = 8;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    // Megatron-Bridge's Qwen3-Next pre-training layout (src/megatron/bridge/recipes/qwen/qwen3_next.py
    // at v0.4.2: TP 1, PP 4, EP 8, 4,096 tokens) on 64 B200
    plan p{.tp = 1, .pp = 4, .dp = 16, .ep = 8, .micro_batch = 1, .global_batch = 512, .seq = 4096};
    const auto r = predict_step(m, c, acc, p);
    // 36 of the 96 blocks run the chunked delta rule: per G block, 4096 tokens x its FLOPs without
    // the conv1d at 0.1 of the bf16 peak (the SSD scan's rate), or its traffic (q, k, v, the gates,
    // the output, and each 64-token chunk's 32 fp32 states of 128 x 128), whichever is longer
    const compute_params cp = compute_params_for(acc, dtype::bf16);
    const double rule = gdn_forward_flops_per_token(m) - 2.0 * 4 * 8192;
    const double flops = 4096.0 * rule;
    const double traffic = 4096.0 * (2.0 * (8192 + 64 + 4096) + 4.0 * 32 * 128 * 128 / 64);
    const double fwd = std::max(flops / (cp.bf16_peak.value() * 0.1), traffic * cp.inv_memory_rate);
    CHECK(in_seconds(r.layer.scan_fwd) == Approx(36.0 / 96 * fwd).epsilon(1e-9));
    // the backward: twice the products plus the recomputed W, U and states (2 C (dk + dv) + 4 dk dv per head)
    const double recomputed = 4096.0 * 32 * (2.0 * 64 * 256 + 4.0 * 128 * 128);
    CHECK(in_seconds(r.layer.scan_bwd) ==
          Approx(36.0 / 96 * std::max((2 * flops + recomputed) / (cp.bf16_peak.value() * 0.1), 2 * traffic * cp.inv_memory_rate))
              .epsilon(1e-9));
    CHECK(r.fits_in_memory);
    CHECK(r.mfu > 0.0);
    // eight times the sequence: the rule's time per token stays, the attention core's grows with
    // the keys each query sees (12 attention blocks, causal)
    plan q = p;
    q.seq = 32768;
    q.global_batch = 64;
    const auto l = predict_step(m, c, acc, q).layer;
    const double scan_32k = in_seconds(l.scan_fwd + l.scan_bwd) / 32768;
    const double scan_4k = in_seconds(r.layer.scan_fwd + r.layer.scan_bwd) / 4096;
    CHECK(scan_32k == Approx(scan_4k).epsilon(1e-9));
    const double att_growth = (in_seconds(l.attention_fwd + l.attention_bwd) / 32768) /
                              (in_seconds(r.layer.attention_fwd + r.layer.attention_bwd) / 4096);
    CHECK(att_growth > 6.0);
    CHECK(att_growth < 9.0);
}
