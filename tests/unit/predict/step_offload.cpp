// Activation CPU offloading (Megatron-Core --cpu-offloading-num-layers): the host link each
// accelerator copies over, Transformer Engine's offload windows, and the plans Megatron-Core
// refuses.
#include "catch_shim.hpp"

#include <algorithm>
#include <string>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/hardware/links.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {
/// Llama 3 70B, Megatron-FSDP over 64 GPUs, micro-batch 2, 8K tokens, FP8: Megatron-Bridge r0.2.0's
/// GB200/GB300 recipe (scripts/performance/configs/llama3/workload_base_configs.py,
/// LLAMA3_70B_GB200_FP8_CS_BASE_CONFIG: use_megatron_fsdp, cpu_offloading_num_layers 40).
plan fsdp_70b(int offloaded) {
    plan p{.dp = 64, .micro_batch = 2, .global_batch = 256, .seq = 8192};
    apply_framework(p, framework::megatron_core);
    p.zero = 3;
    p.precision = dtype::fp8;
    p.gradient_bytes = 2;
    p.cpu_offloading_num_layers = offloaded;
    return p;
}
cluster with_gpus(cluster c, int gpus) {
    c.nodes = gpus / c.node.gpus;
    return c;
}
}  // namespace

TEST_CASE("host links: PCIe x16 on HGX and OAM parts, NVLink-C2C on Grace superchips") {
    // PCI-SIG base specifications: 16 lanes x 16 / 32 GT/s x 128/130 / 8 bits, one direction
    CHECK_THAT(in_GBps(a100_80gb_sxm.host_bandwidth), WithinRel(16 * 16.0 * 128 / 130 / 8, 1e-12));
    CHECK_THAT(in_GBps(h100_sxm.host_bandwidth), WithinRel(16 * 32.0 * 128 / 130 / 8, 1e-12));
    CHECK_THAT(h100_sxm.host_bandwidth.value(), WithinRel(pcie<5, 16>.per_direction.value(), 1e-12));
    CHECK_THAT(a100_40gb_sxm.host_bandwidth.value(), WithinRel(pcie<4, 16>.per_direction.value(), 1e-12));
    // the datasheets' both-direction figures: A100 "PCIe Gen4 64 GB/s", H100 "PCIe Gen5 128 GB/s"
    CHECK_THAT(2 * in_GBps(a100_80gb_sxm.host_bandwidth), WithinRel(64.0, 0.02));
    CHECK_THAT(2 * in_GBps(h100_sxm.host_bandwidth), WithinRel(128.0, 0.02));
    // GH200: NVLink-C2C 900 GB/s both directions to its one GPU; GB200/GB300: one Grace's 900 GB/s
    // for the superchip's two GPUs
    CHECK(in_GBps(gh200.host_bandwidth) == 900.0 / 2);
    CHECK(in_GBps(gb200.host_bandwidth) == 900.0 / 2 / 2);
    CHECK(gb300.host_bandwidth.value() == gb200.host_bandwidth.value());
    // an accelerator record that names none gets PCIe Gen5 x16
    CHECK_THAT(accelerator{}.host_bandwidth.value(), WithinRel(pcie<5, 16>.per_direction.value(), 1e-12));
}

TEST_CASE("activation offloading: Transformer Engine's windows, forward and backward, every micro-batch") {
    // Llama 3 70B offloading 60 of its 80 layers over PCIe Gen5 x16 (an H100 host), FSDP over 64
    // GPUs. AsyncDoubleBufferGroupOffloadHandler (transformer_engine/pytorch/cpu_offload.py, v2.9)
    // with 80 layers and 60 groups spreads the 20 layers left over across the first groups: window
    // map w_i = 2i + 1 for i < 20, then w_i = i + 20. Layer 0's copy starts after layer 0 and has
    // the forward of layer 1 to finish in, groups 1-19 two layers, groups 20-59 one; the backward
    // reloads in the same windows in reverse.
    const cluster c = with_gpus(presets::dgx_h100, 64);
    const transformer& m = models::llama3_70b;
    const plan p = fsdp_70b(60);
    const step_breakdown r = predict_step(m, c, p);
    // one layer's saved activations as the memory model counts them (FP8 GEMM inputs in 1 byte,
    // flash attention: no score tensor), over 63.0 GB/s
    const double saved = in_bytes(activation_bytes_per_layer(m, 8192, 2, 1, false, recompute::selective, 1.0));
    const double copy = saved / (16 * 32e9 * 128 / 130 / 8);
    const double f = in_seconds(r.layer.forward()), b = in_seconds(r.layer.backward());
    auto wait = [&](double span) { return std::max(0.0, copy - span * f) + std::max(0.0, copy - span * b); };
    const double micro_batches = 256.0 / (64 * 2);
    const double expected = micro_batches * (wait(1) + 19 * wait(2) + 40 * wait(1));
    INFO("copy " << copy * 1e3 << " ms, layer forward " << f * 1e3 << " ms, backward " << b * 1e3 << " ms");
    CHECK(copy > f);  // PCIe cannot hide a layer's activations behind one layer's forward
    CHECK_THAT(in_seconds(r.offload.exposed), WithinRel(expected, 1e-9));
    CHECK_THAT(in_seconds(r.offload.total), WithinRel(micro_batches * 2 * 60 * copy, 1e-9));
    // the step waits for it
    const step_breakdown none = predict_step(m, c, fsdp_70b(0));
    CHECK_THAT(in_seconds(r.step - none.step), WithinRel(expected, 1e-6));
    CHECK(in_seconds(none.offload.total) == 0.0);
    CHECK(in_seconds(none.offload.exposed) == 0.0);
    // over GB200's C2C (225 GB/s) the same plan waits a fraction of that
    const step_breakdown grace = predict_step(m, with_gpus(presets::gb200_nvl72, 64), p);
    CHECK(in_seconds(grace.offload.exposed) < 0.2 * in_seconds(r.offload.exposed));
}

TEST_CASE("activation offloading: the GB200 recipe's 40 layers hide behind compute over NVLink-C2C") {
    // Megatron-Bridge's performance guide: Grace systems "enhance offloading performance"; the
    // recipe offloads 40 layers (GB200) and 20 (GB300) of Llama 3 70B: over C2C (225 GB/s per GPU)
    // each copy fits its two-layer window, so only layer 0's one-layer window can wait
    for (const cluster* preset : {&presets::gb200_nvl72, &presets::gb300_nvl72}) {
        const bool is_gb300 = preset == &presets::gb300_nvl72;
        INFO(preset->name);
        const step_breakdown r = predict_step(models::llama3_70b, with_gpus(*preset, 64), fsdp_70b(is_gb300 ? 20 : 40));
        CHECK(r.fits_in_memory);
        CHECK(in_seconds(r.offload.total) > 0.15 * in_seconds(r.step));  // seconds of copies ...
        CHECK(in_seconds(r.offload.exposed) < 0.005 * in_seconds(r.step));  // ... that the step barely sees
        CHECK(r.bottleneck == step_bottleneck::compute);
    }
}

TEST_CASE("activation offloading: a plan Megatron-Core refuses is an input error") {
    const cluster c = with_gpus(presets::dgx_h100, 64);
    // pipeline parallelism (transformer_config.py: "Currently there is no support for Pipeline
    // parallelism with CPU offloading")
    plan p = fsdp_70b(10);
    p.zero = 1;
    p.pp = 2;
    p.dp = 32;
    CHECK_THROWS_WITH(predict_step(models::llama3_70b, c, p),
                      Contains("plan.cpu_offloading_num_layers") && Contains("pp 2") && Contains("pp = 1"));
    // activation recomputation ("CPU offloading does not work when activation recomputation is enabled")
    plan full = fsdp_70b(10);
    full.recompute_mode = recompute::full;
    CHECK_THROWS_WITH(predict_step(models::llama3_70b, c, full),
                      Contains("plan.cpu_offloading_num_layers") && Contains("recompute full"));
    plan modules = fsdp_70b(10);
    modules.recompute_modules = recompute_layernorm;
    CHECK_THROWS_WITH(predict_step(models::llama3_70b, c, modules),
                      Contains("plan.cpu_offloading_num_layers") && Contains("recompute modules"));
}

TEST_CASE("Megatron-FSDP: every micro-batch copies its gradients into the sharded bucket") {
    // NVIDIA's recipes run Megatron-FSDP without gradient-accumulation fusion (Megatron-Bridge
    // r0.2.0 llama3_llm_pretrain.py: gradient_accumulation_fusion = False), so the post-backward
    // hook copies each 16-bit param.grad into the bucket (megatron_fsdp.py main_grad.copy_): per
    // micro-batch a 2-byte read and a gradient_bytes write of every local parameter, at GB200's
    // 8 TB/s HBM (datasheet) times the fitted memory-bound efficiency
    const auto& m = models::llama3_70b;
    const cluster c = with_gpus(presets::gb200_nvl72, 64);
    plan p = fsdp_70b(0);
    const double rate = 8000e9 * fitted_compute_constants.memory_efficiency;
    const auto fsdp = predict_step(m, c, p);
    plan z1 = p;
    z1.zero = 1;
    const auto zero1 = predict_step(m, c, z1);
    CHECK_THAT(in_seconds(fsdp.stage_microbatch) - in_seconds(zero1.stage_microbatch),
               WithinRel(4.0 * total_parameters(m) / rate, 1e-5));  // the step counts the local parameters as the DP traffic does, within 1e-5 of total_parameters
    // 70.6B parameters: about 51 ms per micro-batch, 1-2% of its 3.6 s micro-batch
    CHECK(4.0 * total_parameters(m) / rate > 0.045);
    CHECK(4.0 * total_parameters(m) / rate < 0.055);
    // fp32 main gradients: a 4-byte write
    p.gradient_bytes = 4;
    z1.gradient_bytes = 4;
    CHECK_THAT(in_seconds(predict_step(m, c, p).stage_microbatch) - in_seconds(predict_step(m, c, z1).stage_microbatch),
               WithinRel(6.0 * total_parameters(m) / rate, 1e-5));
    // PyTorch FSDP's own stack is calibrated as it runs: no copy charged there
    plan torch_fsdp = p;
    torch_fsdp.stack = framework::fsdp;
    CHECK(in_seconds(detail::gradient_accumulation_copy(torch_fsdp, total_parameters(m), compute_params_for(accelerator_by_name("gb200", "acc"), dtype::fp8))) == 0.0);
}

TEST_CASE("gradient-accumulation fusion: Megatron's flag decides whether each micro-batch copies its gradients") {
    const auto& m = models::llama3_70b;
    const cluster c = with_gpus(presets::gb200_nvl72, 64);
    const double rate = 8000e9 * fitted_compute_constants.memory_efficiency;  // GB200 HBM3e, 8 TB/s (datasheet)
    const auto stage = [&](const plan& q) { return in_seconds(predict_step(m, c, q).stage_microbatch); };
    plan fsdp = fsdp_70b(0);  // megatron-core at ZeRO 3: unfused by default, as NVIDIA's recipes run it
    CHECK_FALSE(fsdp.fuses_gradient_accumulation());
    plan fused = fsdp;
    fused.gradient_accumulation_fusion = true;  // Megatron-LM's default: the GEMMs accumulate in place
    plan z1 = fsdp;
    z1.zero = 1;
    CHECK(z1.fuses_gradient_accumulation());
    CHECK(stage(fused) == stage(z1));
    CHECK_THAT(stage(fsdp) - stage(fused), WithinRel(4.0 * total_parameters(m) / rate, 1e-5));
    // unfused under DDP and the distributed optimizer: main_grad.add_(param.grad), a 2-byte read
    // of the new gradient and a read and a write of the 16-bit buffer (fp32: 4 and 4)
    plan z1_unfused = z1;
    z1_unfused.gradient_accumulation_fusion = false;
    CHECK_THAT(stage(z1_unfused) - stage(z1), WithinRel(6.0 * total_parameters(m) / rate, 1e-5));
    z1.gradient_bytes = z1_unfused.gradient_bytes = 4;
    CHECK_THAT(stage(z1_unfused) - stage(z1), WithinRel(10.0 * total_parameters(m) / rate, 1e-5));
    // megatron-lm keeps Megatron-LM's default at ZeRO 3 too: fused unless told otherwise
    plan lm = fsdp;
    lm.stack = framework::megatron_lm;
    CHECK(lm.fuses_gradient_accumulation());
    // apply_framework goes back to the stack's practice
    plan reset = fused;
    apply_framework(reset, framework::megatron_core);
    CHECK_FALSE(reset.gradient_accumulation_fusion.has_value());
    // the setting is Megatron's: refused for the other stacks, naming the field and the stack
    plan torch_fsdp = fsdp;
    apply_framework(torch_fsdp, framework::fsdp);
    torch_fsdp.zero = 3;
    torch_fsdp.gradient_accumulation_fusion = false;
    CHECK_THROWS_WITH(predict_step(m, c, torch_fsdp),
                      Contains("plan.gradient_accumulation_fusion") && Contains("false with framework fsdp") && Contains("megatron-core"));
}
