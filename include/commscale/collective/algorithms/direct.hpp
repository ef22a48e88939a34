#pragma once
/// @file collective/algorithms/direct.hpp
/// @brief The one-shot exchange with every peer: every operation; NCCL's for all_to_all and
/// send_recv (its grouped send/recv).

#include "descriptor.hpp"

namespace commscale::detail {

/// direct: one-shot; all_reduce reads (n-1) S; reduce_scatter / all_gather / all_to_all
/// (n-1)/n S; broadcast / reduce (n-1) S at the root. The transfers to the n-1 peers share the
/// wire concurrently, but each is a message of its own: n-1 step latencies (same for the
/// parameter servers: one message per worker and direction).
template <>
struct descriptor<algorithm::direct> : descriptor_defaults<algorithm::direct> {
    static constexpr pruning prune = pruning::peer;

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op) { return true; }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op op) {
        return op == collective_op::all_to_all || op == collective_op::send_recv;
    }

    /// The step counts of `build` (send_recv: one message).
    [[nodiscard]] static constexpr latency_steps steps(const group_path& p, collective_op op) {
        if (op == collective_op::send_recv) return {1, 1};
        return {p.r - 1, p.n - p.r};
    }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        using o = collective_op;
        const int n = k.n, r = k.r;
        const double nd = k.nd, rd = k.rd;
        phase& ph = pl.add();
        switch (op) {
            case o::all_reduce:
                k.set_intra(ph, (rd - 1.0) * s, k.intra_group, r - 1);
                k.set_net(ph, rd * (nd - rd) * s, k.node_net, n - r, k.p.sharing);
                break;
            case o::reduce_scatter:
            case o::all_gather:
            case o::all_to_all:
                k.set_intra(ph, (rd - 1.0) * k.p.inv_n * s, k.intra_group, r - 1);
                k.set_net(ph, rd * (nd - rd) * k.p.inv_n * s, k.node_net, n - r, k.p.sharing);
                break;
            case o::broadcast:
            case o::reduce:
                k.set_intra(ph, (rd - 1.0) * s, k.intra_group, r - 1);
                k.set_net(ph, (nd - rd) * s, k.own_net, n - r, 1);
                break;
            case o::send_recv:
                k.set_intra(ph, s, k.intra_peer, 1);
                k.set_net(ph, s, k.own_net, 1, 1);
                break;
        }
    }
};

}  // namespace commscale::detail
