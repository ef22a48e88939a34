#pragma once
/// @file collective/algorithms/parameter_server.hpp
/// @brief One parameter server (rank 0): every worker pushes (and for all_reduce pulls) through
/// the server's link. all_reduce, broadcast, reduce; not NCCL's.

#include "descriptor.hpp"

namespace commscale::detail {

/// parameter_server: the server (rank 0) receives (n-1) S through its own port and NIC. One
/// message per worker and direction: n-1 step latencies per direction (as direct).
template <>
struct descriptor<algorithm::parameter_server> : descriptor_defaults<algorithm::parameter_server> {
    static constexpr pruning prune = pruning::peer;

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        using o = collective_op;
        return op == o::all_reduce || op == o::reduce || op == o::broadcast;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op) { return false; }

    /// For one-to-all / all-to-one the direct exchange dominates it (same steps, never fewer bytes).
    [[nodiscard]] static constexpr bool automatic_candidate(collective_op op) {
        return op == collective_op::all_reduce;
    }

    /// The step counts of `build`.
    [[nodiscard]] static constexpr latency_steps steps(const group_path& p, collective_op op) {
        const int dirs = op == collective_op::all_reduce ? 2 : 1;
        return {dirs * (p.r - 1), dirs * (p.n - p.r)};
    }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        const int n = k.n, r = k.r;
        const double nd = k.nd, rd = k.rd;
        phase& ph = pl.add();
        // One message per worker and direction (push, and pull for all_reduce).
        const int dirs = op == collective_op::all_reduce ? 2 : 1;
        k.set_intra(ph, (rd - 1.0) * s, k.intra_group, dirs * (r - 1));
        if (k.multi) {
            // Server NIC fan-in (n - r remote workers) vs a worker node pushing r buffers.
            const double t_server = (nd - rd) * s * k.own_net, t_workers = rd * s * k.node_net;
            if (t_server >= t_workers) {
                k.set_net(ph, (nd - rd) * s, k.own_net, dirs * (n - r), 1);
                ph.net_kind = bottleneck_kind::server_nic;
            } else {
                k.set_net(ph, rd * s, k.node_net, dirs * (n - r), k.p.sharing);
            }
        }
    }
};

}  // namespace commscale::detail
