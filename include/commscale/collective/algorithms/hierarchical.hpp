#pragma once
/// @file collective/algorithms/hierarchical.hpp
/// @brief Hierarchical all_reduce: intra-node reduce-scatter, inter-node all-reduce per local
/// rank, intra-node all-gather. all_reduce only; not NCCL's.

#include "descriptor.hpp"

namespace commscale::detail {

/// hierarchical: intra reduce-scatter (r-1)/r S, inter all-reduce 2(N-1)/N S/r per GPU over its
/// NIC share, intra all-gather (r-1)/r S.
template <>
struct descriptor<algorithm::hierarchical> : descriptor_defaults<algorithm::hierarchical> {

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        return op == collective_op::all_reduce;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op) { return false; }

    static void build(const plan_inputs& k, collective_op, double s, phase_plan& pl) {
        const int N = k.N, r = k.r;
        phase& a1 = pl.add();
        k.set_intra(a1, 2.0 * k.frac_r * s, k.intra_group, 2 * (r - 1));
        phase& a2 = pl.add();
        // Each GPU's 1/r of the buffer crosses its 1/r share of the node's NICs: the r
        // factors cancel; the bytes are 2(N-1)/N S / r per GPU.
        k.set_net(a2, 2.0 * k.frac_N * s * k.p.inv_r, k.node_net * k.rd, 2 * (N - 1), k.p.sharing);
    }
};

}  // namespace commscale::detail
