// Context parallelism's ring-attention merges (detail::cp_ring_merge), worked by hand from
// Transformer Engine's AttnFuncWithCPAndKVP2P (transformer_engine/pytorch/attention/
// dot_product_attention/context_parallel.py, v2.9; 16-bit attention, sbhd layout, causal):
// * forward: `torch.cat((k.view(-1), v.view(-1)))` into the first send buffer, then after the c
//   steps one fused kernel per step over the output: `flash_attn_fwd_out_correction_init` for step
//   0 (read 2 B, write 2 per element), `flash_attn_fwd_out_correction` (`out.add_`: read 2 + 2,
//   write 2) for each later step, over the whole output on the ranks whose step i is full (rank >= i)
//   and `flash_attn_fwd_second_half_out_correction` over half of it on the others;
// * backward: `p2p_comm_buffers[0][0].copy_(kv)`, then per step `dq.copy_`/`dq.add_` over the
//   queries and `dk`/`dv` `copy_`/`add_` over the keys and values (4 or 6 B per element).
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/predict/compute.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace {
// one layer of `m` with context parallelism `cp` over `seq` tokens, and the same T = seq / cp
// tokens on one GPU without it: every term but the attention core and the merges is the same
struct cp_pair {
    layer_time with, without;
};
cp_pair cp_layers(const transformer& m, int tp, int cp, int seq, const compute_params& c) {
    layer_shape with{};
    with.tp = tp;
    with.cp = cp;
    with.micro_batch = 1;
    with.seq = seq;
    with.sequence_parallel = tp > 1;
    layer_shape without = with;
    without.cp = 1;
    without.seq = seq / cp;
    return {layer_compute_time(m, with, c), layer_compute_time(m, without, c)};
}
}  // namespace

TEST_CASE("context parallelism: the ring attention's merges, Llama 3 8B at CP 2 worked from Transformer Engine") {
    // Llama 3 8B (32 heads of 128, 8 K/V heads), 8,192 tokens, CP 2, TP 1: T = 4,096 tokens per
    // GPU, o = 4,096 output values per token, K/V 2 x 1,024.
    const transformer& m = models::llama3_8b;
    const compute_params c = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    const auto [with, without] = cp_layers(m, 1, 2, 8192, c);
    const double T = 4096, o = 4096, kv = 2048;
    // forward: K/V concatenated (read + write 2 B), step 0 scaled (4 B), step 1 added (6 B) over the
    // whole output on rank 1 and over its second half on rank 0: 0.75 x 6 B on average
    const double fwd_bytes = T * (4.0 * kv + o * (4.0 + 0.75 * 6.0));
    CHECK(fwd_bytes == 176160768.0);
    // backward: K/V copied into the ring buffer (4 B), and two steps of dQ and dK/dV accumulated
    // (rank 0: copy then add, rank 1: add then copy for dQ; 5 B a mean per step)
    const double bwd_bytes = T * (4.0 * kv + 2.0 * 5.0 * (o + kv));
    const double rate = c.memory_bandwidth.value() * c.memory_efficiency;
    CHECK_THAT(in_seconds(with.elementwise_fwd - without.elementwise_fwd), WithinRel(fwd_bytes / rate, 1e-9));
    CHECK_THAT(in_seconds(with.elementwise_bwd - without.elementwise_bwd), WithinRel(bwd_bytes / rate, 1e-9));
    // kernels: forward one more attention call, two output merges, one log-sum-exp merge and the
    // concatenation (5); backward one more attention call, six accumulations and the copy (8)
    CHECK_THAT(in_seconds(with.overhead_fwd - without.overhead_fwd), WithinRel(5.0 * c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(with.overhead_bwd - without.overhead_bwd), WithinRel(8.0 * c.kernel_overhead_s, 1e-9));
    // the GEMMs do not change
    CHECK(in_seconds(with.gemm_fwd) == in_seconds(without.gemm_fwd));
    // small beside the layer: the merges are under 5% of the forward at 8K tokens on H100
    CHECK(in_seconds(with.elementwise_fwd - without.elementwise_fwd) < 0.05 * in_seconds(with.forward()));
}

TEST_CASE("context parallelism: the merges grow with the ring and shrink with TP") {
    const transformer& m = models::llama3_70b;  // 64 heads of 128, 8 K/V heads
    const compute_params c = compute_params_for(accelerator_by_name("b200"), dtype::bf16);
    const double rate = c.memory_bandwidth.value() * c.memory_efficiency;
    // CP 8, TP 4, 65,536 tokens: T = 8,192, o = 8,192 / 4 = 2,048, K/V 2 x 1,024 / 4 = 512; later
    // step i is full on 8 - i of the 8 ranks and half on the rest: sum over i = 1..7 of
    // (8 - i + i / 2) / 8 = 5.25 steps of 6 B
    const auto [with, without] = cp_layers(m, 4, 8, 65536, c);
    const double T = 8192, o = 2048, kv = 512;
    const double fwd_bytes = T * (4.0 * kv + o * (4.0 + 5.25 * 6.0));
    const double bwd_bytes = T * (4.0 * kv + 8.0 * 5.0 * (o + kv));
    CHECK_THAT(in_seconds(with.elementwise_fwd - without.elementwise_fwd), WithinRel(fwd_bytes / rate, 1e-9));
    CHECK_THAT(in_seconds(with.elementwise_bwd - without.elementwise_bwd), WithinRel(bwd_bytes / rate, 1e-9));
    // forward 3c - 1 = 23 kernels, backward 4c = 32
    CHECK_THAT(in_seconds(with.overhead_fwd - without.overhead_fwd), WithinRel(23.0 * c.kernel_overhead_s, 1e-9));
    CHECK_THAT(in_seconds(with.overhead_bwd - without.overhead_bwd), WithinRel(32.0 * c.kernel_overhead_s, 1e-9));
}

TEST_CASE("context parallelism: no merges without CP or without the fused ring kernel") {
    const transformer& m = models::llama3_8b;
    const compute_params c = compute_params_for(accelerator_by_name("h100-sxm"), dtype::bf16);
    layer_shape one{};
    one.micro_batch = 1;
    one.seq = 4096;
    const auto d = detail::cp_ring_merge(m, one);
    CHECK(d.bytes_fwd == 0.0);
    CHECK(d.kernels_bwd == 0.0);
    // the unfused kernel (Megatron-LM before --use-flash-attn) had no ring attention of this kind
    layer_shape unfused = one;
    unfused.cp = 2;
    unfused.seq = 8192;
    unfused.attention = attention_kernel::unfused;
    CHECK(detail::cp_ring_merge(m, unfused).bytes_fwd == 0.0);
    CHECK(in_seconds(layer_compute_time(m, unfused, c).elementwise_fwd) > 0.0);
}
