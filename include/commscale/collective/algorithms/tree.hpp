#pragma once
/// @file collective/algorithms/tree.hpp
/// @brief The pipelined binary tree: all_reduce, broadcast, reduce. Never a candidate of the
/// automatic choice (the double binary tree, same steps and never more bytes, dominates it).
/// The phases of both trees are `tree_phases` here.

#include "descriptor.hpp"

namespace commscale::detail {

/// tree / double_binary_tree (NCCL: intra-node chain + inter-node binary tree; Sanders,
/// Speck & Traeff 2009 for the double tree), pipelined reduce up + broadcast down: chain
/// port 2S (S for r = 2); node NICs S for N = 2, else 3S (single tree: two children + parent)
/// or 2S (double tree: each node interior in one tree only).
template <bool dbl>
inline void tree_phases(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
    const int N = k.N, r = k.r;
    phase& ph = pl.add();
    const int lg = ceil_log2(N);
    if (op == collective_op::all_reduce) {
        const double chain = r >= 3 ? 2.0 : 1.0;
        const double up = N <= 1 ? 0.0 : N == 2 ? 1.0 : (dbl ? 2.0 : (N == 3 ? 2.0 : 3.0));
        k.set_intra(ph, chain * s, k.intra_group, 2 * (r - 1));
        k.set_net(ph, up * s, k.node_net, 2 * lg, 1);
    } else {  // broadcast, reduce: one direction of the above
        const double up = N <= 1 ? 0.0 : N == 2 ? 1.0 : (dbl ? 1.0 : 2.0);
        k.set_intra(ph, s, k.intra_group, r - 1);
        k.set_net(ph, up * s, k.node_net, lg, 1);
    }
}

/// Whether a tree is defined for `op`: all_reduce, broadcast, reduce.
[[nodiscard]] constexpr bool tree_applies(collective_op op) {
    using o = collective_op;
    return op == o::all_reduce || op == o::reduce || op == o::broadcast;
}

template <>
struct descriptor<algorithm::tree> : descriptor_defaults<algorithm::tree> {

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        return tree_applies(op);
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op) { return false; }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        tree_phases<false>(k, op, s, pl);
    }
};

}  // namespace commscale::detail
