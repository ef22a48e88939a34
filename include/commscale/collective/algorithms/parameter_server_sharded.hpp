#pragma once
/// @file collective/algorithms/parameter_server_sharded.hpp
/// @brief Sharded parameter servers: every rank serves 1/n of the buffer (push to the owners,
/// pull back). all_reduce, reduce_scatter, all_gather; not NCCL's.

#include "descriptor.hpp"

namespace commscale::detail {

/// parameter_server_sharded: every rank owns S/n: push then pull, (n-1)/n S each. One message
/// per peer and phase: n-1 step latencies per phase (as direct).
template <>
struct descriptor<algorithm::parameter_server_sharded> : descriptor_defaults<algorithm::parameter_server_sharded> {
    static constexpr pruning prune = pruning::peer;

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        using o = collective_op;
        return op == o::all_reduce || op == o::reduce_scatter || op == o::all_gather;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op) { return false; }

    /// For reduce_scatter / all_gather the sharded server is the direct exchange itself.
    [[nodiscard]] static constexpr bool automatic_candidate(collective_op op) {
        return op == collective_op::all_reduce;
    }

    /// The step counts of `build`.
    [[nodiscard]] static constexpr latency_steps steps(const group_path& p, collective_op op) {
        const int phases = op == collective_op::all_reduce ? 2 : 1;
        return {phases * (p.r - 1), phases * (p.n - p.r)};
    }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        const int n = k.n, r = k.r;
        const double nd = k.nd, rd = k.rd;
        const int phases = op == collective_op::all_reduce ? 2 : 1;
        for (int i = 0; i < phases; ++i) {
            phase& ph = pl.add();
            k.set_intra(ph, (rd - 1.0) * k.p.inv_n * s, k.intra_group, r - 1);
            k.set_net(ph, rd * (nd - rd) * k.p.inv_n * s, k.node_net, n - r, k.p.sharing);
        }
    }
};

}  // namespace commscale::detail
