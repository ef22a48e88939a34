#pragma once
/// @file collective/algorithms/nvls.hpp
/// @brief In-switch reduction: NVLS on NVSwitch, SHARP in InfiniBand switches. all_reduce with
/// either; reduce_scatter / all_gather inside one node with NVLS. NCCL's (NVLS, CollNet) for
/// all_reduce, reduce_scatter, all_gather.

#include "descriptor.hpp"

namespace commscale::detail {

/// nvls (NVLink SHARP, NVIDIA Hopper whitepaper): the switch reduces; per GPU port
/// (r+1)/r S for all_reduce (S out for the reduce, S/r back; S/r out, S back for the multicast);
/// S for reduce_scatter / all_gather. Multi-node: SHARP all-reduce moves S per node, otherwise a
/// ring of 2(N-1)/N S among nodes.
template <>
struct descriptor<algorithm::nvls> : descriptor_defaults<algorithm::nvls> {

    /// Needs in-switch reduction (node.in_switch_reduction, >= 2 ranks per node) or, for
    /// all_reduce across nodes, in-network reduction (cluster.in_network_reduction).
    [[nodiscard]] static constexpr bool applies(const cluster& c, int r, int nodes, collective_op op) {
        using o = collective_op;
        const bool in_switch = c.node.in_switch_reduction && r > 1;
        if (op == o::all_reduce) return in_switch || (nodes > 1 && c.in_network_reduction);
        return (op == o::reduce_scatter || op == o::all_gather) && in_switch && nodes == 1;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op op) {
        using o = collective_op;
        return op == o::all_reduce || op == o::reduce_scatter || op == o::all_gather;
    }

    /// What `applies` needs, for every operation.
    [[nodiscard]] static std::string inapplicable_expected(collective_op) {
        return "an algorithm this cluster supports: nvls needs in-switch reduction "
               "(node.in_switch_reduction, >= 2 ranks per node) or in-network reduction "
               "(cluster.in_network_reduction) for all_reduce";
    }

    /// The network's switches (SHARP) when only they reduce (a group across nodes whose nodes
    /// cannot reduce in their scale-up switches), the NVSwitch otherwise.
    [[nodiscard]] static constexpr std::string_view switch_reduction_link(const cluster& c, int nodes) {
        return nodes > 1 && c.in_network_reduction && !c.node.in_switch_reduction ? c.node.inter.name
                                                                                  : c.node.intra.name;
    }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        const int N = k.N, r = k.r;
        const double rd = k.rd;
        phase& ph = pl.add();
        const bool in_switch = k.c.node.in_switch_reduction && r > 1;
        if (op == collective_op::all_reduce) {
            if (in_switch) {
                k.set_intra(ph, (rd + 1.0) * k.p.inv_r * s, k.intra_group, 2);
                ph.intra_switch = true;
            } else {
                k.set_intra(ph, 2.0 * k.frac_r * s, k.intra_group, 2 * (r - 1));
            }
            if (k.c.in_network_reduction) {
                k.set_net(ph, s, k.node_net, 2, 1);
                ph.net_switch = true;
            } else {
                k.set_net(ph, 2.0 * k.frac_N * s, k.node_net, 2 * (N - 1), 1);
            }
        } else {
            k.set_intra(ph, s, k.intra_group, 1);
            ph.intra_switch = true;
        }
    }
};

}  // namespace commscale::detail
