#pragma once
/// @file collective/algorithms/pat.hpp
/// @brief NCCL's Parallel Aggregated Trees (2.23+): all_gather / reduce_scatter with one rank per
/// node on several nodes, Simple protocol only; NCCL's for both.

#include "descriptor.hpp"

namespace commscale::detail {

/// NCCL's tuner: PAT's bus bandwidth is 0.75 of the ring's on the same graph (NVIDIA/nccl
/// src/graph/tuning.cc, ncclTopoTuneModel, NCCL 2.23+), which makes the ring win for large
/// messages. Realistic mode only; the closed form (ideal mode) moves the ring's bytes at the peak.
inline constexpr double nccl_pat_bandwidth_factor = 0.75;

/// pat (Parallel Aggregated Trees, NCCL 2.23+; NVIDIA/nccl src/graph/tuning.cc and
/// src/device/prims_*: all_gather / reduce_scatter with one rank per node, Simple protocol):
/// the ring's (n-1)/n S through each GPU's NIC, in ceil(log2 n) latency steps instead of n-1
/// (the aggregated trees reach every rank in a logarithmic number of rounds). NCCL's tuner
/// derates PAT's bus bandwidth to 3/4 of the ring's (`nccl_pat_bandwidth_factor`, realistic
/// mode only) so that the ring wins for large messages, and adds a small per-rank latency
/// term that is not modelled here.
template <>
struct descriptor<algorithm::pat> : descriptor_defaults<algorithm::pat> {
    static constexpr bool simple_only = true;
    /// Its network parts at NCCL's derated bandwidth (`nccl_pat_bandwidth_factor`), in
    /// realistic mode.
    static constexpr double net_bandwidth_factor = nccl_pat_bandwidth_factor;
    /// PAT (one rank per node) moves the ring's (n-1)/n S through each node's NICs, as every
    /// algorithm must, at NCCL's derated bandwidth: large messages, where the ring wins, skip
    /// building its plan.
    static constexpr pruning prune = pruning::derated_bandwidth;

    [[nodiscard]] static constexpr bool applies(const cluster&, int r, int nodes, collective_op op) {
        // NCCL enables PAT only with one rank per node (ncclPatEnable: nRanks == nNodes)
        return (op == collective_op::reduce_scatter || op == collective_op::all_gather) && r == 1 && nodes > 1;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op op) {
        return op == collective_op::reduce_scatter || op == collective_op::all_gather;
    }

    static void build(const plan_inputs& k, collective_op, double s, phase_plan& pl) {
        phase& ph = pl.add();
        k.set_net(ph, k.frac_n * s, k.node_net, ceil_log2(k.n), k.p.sharing);
    }
};

}  // namespace commscale::detail
