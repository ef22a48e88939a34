#pragma once
/// @file collective/algorithms/halving_doubling.hpp
/// @brief Recursive halving-doubling (Rabenseifner): all_reduce, reduce_scatter, all_gather;
/// not NCCL's.

#include "descriptor.hpp"

namespace commscale::detail {

/// halving_doubling (Thakur, Rabenseifner & Gropp 2005): log2 p exchanges with S/2, S/4, ...
/// nearest peers first (inside the node), a fold/unfold of S when n is not a power of two.
template <>
struct descriptor<algorithm::halving_doubling> : descriptor_defaults<algorithm::halving_doubling> {

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        using o = collective_op;
        return op == o::all_reduce || op == o::reduce_scatter || op == o::all_gather;
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op) { return false; }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        const int n = k.n, r = k.r;
        const int reps = op == collective_op::all_reduce ? 2 : 1;  // reduce-scatter then all-gather
        const int lgp = floor_log2(n);
        const int pw = 1 << lgp;
        // Exchange e moves S / 2^(e+1); those with 2^e < r (peers inside the node) stay on
        // the scale-up links, the rest cross NICs.
        double wi = 0, wn = 0, w = 0.5 * s;
        int si = 0, sn = 0;
        for (int e = 0; e < lgp; ++e, w *= 0.5) {
            if ((1 << e) < r) { wi += w; ++si; } else { wn += w; ++sn; }
        }
        phase& a1 = pl.add();
        k.set_intra(a1, reps * wi, k.intra_peer, reps * si);
        if (sn > 0) {
            phase& a2 = pl.add();
            k.set_net(a2, reps * wn, k.gpu_net, reps * sn, k.p.sharing);
        }
        if (pw != n) {  // fold the extra ranks in (and out again for all_reduce)
            phase& a3 = pl.add();
            if (r >= 2) k.set_intra(a3, reps * s, k.intra_peer, reps);
            else k.set_net(a3, reps * s, k.own_net, reps, 1);
        }
    }
};

}  // namespace commscale::detail
