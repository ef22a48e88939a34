// DDP on one node vs four (ml-engineering-networking, "Single node training" and "Multiple node
// training"): a 2B-parameter model with fp32 gradients (8 GB) all-reduced every iteration, against
// 0.42 s of compute per iteration (65.536 TFLOP per GPU at 50% of 312 TFLOPS).
// The document's arithmetic and commscale's model side by side:
// * one node of 8 A100: the document says 16 GB / 300 GB/s = 0.053 s (and 0.027 s = 8 GB / 300 in
//   its summary table); the ring model moves 2(n-1)/n x 8 GB = 14 GB per GPU: 0.047 s ideal;
// * four nodes with one 200 Gbps link each: 16 GB = 128 Gb / 200 Gbps = 0.64 s (document); with
//   400 Gbps, 0.32 s. Only the second fits under the 0.42 s of compute.
#include <cstdio>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/clusters.hpp>

int main() {
    using namespace commscale;
    using namespace commscale::literals;

    constexpr data_size gradients = 8_GB;  // 2e9 parameters x 4 bytes (fp32)
    // 2B params x 4 (2 fwd + 2 bwd with recompute) x 2 FLOP x seqlen 2048 x batch 16 / 8 GPUs.
    constexpr flop_count per_gpu_work = flops(2e9 * 4 * 2 * 2048 * 16 / 8);
    constexpr flop_rate achieved = 0.5 * 312_TFLOPS;  // A100 bf16 dense peak at 50% MFU
    const double compute_s = in_seconds(per_gpu_work / achieved);
    std::printf("compute per iteration: %.3f TFLOP per GPU at %.0f TFLOPS = %.2f s\n\n",
                in_flops(per_gpu_work) / 1e12, in_tflops(achieved), compute_s);

    struct setup {
        const char* name;
        int nodes;
        int nics;
        commscale::link nic;
        double document_s;
    };
    const setup setups[] = {
        {"1 node  x 8 A100 (NVLink3)", 1, 8, infiniband<ib_rate::hdr, 4>, 16.0 / 300.0},
        {"4 nodes x 8 A100, 1 x 200 Gbps per node", 4, 1, infiniband<ib_rate::hdr, 4>, 128.0 / 200.0},
        {"4 nodes x 8 A100, 1 x 400 Gbps per node", 4, 1, infiniband<ib_rate::ndr, 4>, 128.0 / 400.0},
        {"4 nodes x 8 A100, 8 x 200 Gbps (real DGX A100)", 4, 8, infiniband<ib_rate::hdr, 4>, 0.0},
    };
    std::printf("%-48s %10s %10s %10s %10s  %s\n", "setup", "doc (s)", "ideal (s)", "model (s)", "bound?", "bottleneck");
    for (const setup& s : setups) {
        cluster c = presets::dgx_a100;
        c.nodes = s.nodes;
        c.node.nics = s.nics;
        c.node.inter = s.nic;
        const placement group{.ranks = c.total_gpus(), .ranks_per_node = c.node.gpus, .stride = 1};
        const auto ideal = predict_collective(c, group, collective_op::all_reduce, gradients,
                                              {.algo = algorithm::automatic, .mode = efficiency_mode::ideal});
        const auto real = predict_collective(c, group, collective_op::all_reduce, gradients);
        const double t = in_seconds(real.time);
        char doc[32] = "-";
        if (s.document_s > 0) std::snprintf(doc, sizeof doc, "%.3f", s.document_s);
        std::printf("%-48s %10s %10.3f %10.3f %10s  %s\n", s.name, doc, in_seconds(ideal.time), t,
                    t > compute_s ? "comms" : "compute", describe_bottleneck(real).c_str());
    }
    std::printf("\nThe ring formula for one node: 8 GB x 2(8-1)/8 / 300 GB/s = %.4f s "
                "(the document rounds the factor 1.75 up to 2: 0.053 s).\n",
                in_seconds(1.75 * gradients / 300_GBps));
    return 0;
}
