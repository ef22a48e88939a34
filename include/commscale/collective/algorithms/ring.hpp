#pragma once
/// @file collective/algorithms/ring.hpp
/// @brief The ring: every operation but send_recv; NCCL's for all_reduce, reduce_scatter,
/// all_gather, broadcast and reduce.

#include "descriptor.hpp"

namespace commscale::detail {

/// ring (Patarasuk & Yuan 2009; NCCL): all_reduce 2(n-1)/n S in 2(n-1) steps; reduce_scatter /
/// all_gather (n-1)/n S in n-1 steps; broadcast / reduce pipelined chain S in n-1 steps;
/// all_to_all S(n-1)/2 (each 1/n travels 1..n-1 hops). Inter-node: the node's NICs carry one
/// rank's traffic, split among the GPUs sharing each NIC (each local GPU is a ring boundary for
/// some channels and the NIC's capacity is divided among them).
template <>
struct descriptor<algorithm::ring> : descriptor_defaults<algorithm::ring> {

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        return op != collective_op::send_recv;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op op) {
        using o = collective_op;
        return op == o::all_reduce || op == o::reduce_scatter || op == o::all_gather || op == o::broadcast ||
               op == o::reduce;
    }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        using o = collective_op;
        const int n = k.n, N = k.N;
        phase& ph = pl.add();
        double w = 0;
        int steps = 0, net_steps = 0;
        switch (op) {
            case o::all_reduce: w = 2.0 * k.frac_n * s; steps = 2 * (n - 1); net_steps = 2 * (N - 1); break;
            case o::reduce_scatter:
            case o::all_gather: w = k.frac_n * s; steps = n - 1; net_steps = N - 1; break;
            case o::broadcast:
            case o::reduce: w = s; steps = n - 1; net_steps = N - 1; break;
            case o::all_to_all: w = s * (k.nd - 1.0) * 0.5; steps = n - 1; net_steps = N - 1; break;
            case o::send_recv: w = s; steps = 1; net_steps = k.multi ? 1 : 0; break;
        }
        // NCCL's split of ring steps: the inter-node ones, the rest inside nodes.
        k.set_intra(ph, w, k.intra_group, steps - (k.multi ? net_steps : 0));
        // Each channel's ring enters and leaves a node once: the node's NICs carry w per
        // direction whatever the GPUs per NIC (p4d: 8 GPUs on 4 EFA NICs reach ~85% of the
        // node's 400 Gb/s, ml-engineering-networking). Without GPUDirect RDMA the GPUs that
        // share a NIC feed it one at a time through host bounce buffers: the NIC is divided
        // among them (Baskerville: 2 x 2 ring 3.7x slower than 4 x 1, impact-of-gpu-networking-part2).
        k.set_net(ph, w, k.p.host_staged ? k.node_net * k.sharing : k.node_net, net_steps, k.p.sharing);
    }
};

}  // namespace commscale::detail
