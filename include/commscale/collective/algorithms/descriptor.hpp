#pragma once
/// @file collective/algorithms/descriptor.hpp
/// @brief What every algorithm descriptor (one header each in collective/algorithms/) is made of,
/// and what its phases are written into: the path of a group (`group_path`, filled by
/// collective/model.hpp's make_path), a `phase` and a `phase_plan` of up to three of them, and the
/// per-path quantities the formulas share (`plan_inputs`). The one evaluator that prices plans,
/// prunes candidates and picks the fastest is collective/model.hpp.
///
/// A descriptor is a specialization `descriptor<algorithm::x>` deriving from
/// `descriptor_defaults<algorithm::x>`, which gives it
/// * `id` (its algorithm) and `name`: its CLI/JSON spelling, read from types.hpp's
///   `algorithm_spellings` (the one place the spellings are written; the name helpers read it
///   without the model; collective/model.hpp checks at compile time that every descriptor
///   derives from the defaults of its own algorithm);
///
/// and has
/// * `applies(cluster, r, nodes, op)`: whether it is defined for `op` on a group with `r` ranks
///   per node over `nodes` nodes;
/// * `nccl_implements(op)`: whether NCCL (2.18-2.27) implements it for `op` (algorithm_set::nccl);
/// * `simple_only`: only NCCL's Simple protocol implements it;
/// * `net_bandwidth_factor`: the fraction of the network bandwidth its network parts get in
///   realistic mode (a tuner's derating of the algorithm; 1: none);
/// * `automatic_candidate(op)`: false for the operations where another candidate dominates it (its
///   place in the automatic choice's scan is in collective/model.hpp `automatic_candidates`);
/// * `build(inputs, op, s, phase_plan)`: its phases for a buffer of `s` bytes (nccl-tests size);
/// * `prune` and, for `pruning::peer`, `steps(path, op)`: the latency step counts of its phases
///   (`latency_steps`) from which the evaluator's lower bound is made;
/// * `inapplicable_expected(op)`: what a request for it where it does not apply is told it needs
///   (the `expected` of the "algo" input_error);
/// * `switch_reduction_link(cluster, nodes)`: the catalog name of the link whose switches reduce
///   when that reduction limits it (bottleneck_kind::switch_reduction).
///
/// Formulas: bytes per direction on the busiest port; n ranks, N nodes, r per node.
///
/// Formulas and their sources, in one place: docs/model.md#collectives.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "../../hardware/topology.hpp"
#include "../types.hpp"

namespace commscale::detail {

/// The physical path a group of ranks uses: bandwidths per direction, sharing, latency classes.
/// Bandwidths are kept as their inverses (seconds per byte at the datasheet peak) so that the
/// per-algorithm costs are products, not divisions: the prediction divides only here.
struct group_path {
    int n = 1;               ///< ranks
    int nodes = 1;           ///< nodes spanned
    int r = 1;               ///< ranks per node (the fullest node)
    int sharing = 1;         ///< group GPUs attached to one NIC
    int nics_used = 1;       ///< NICs of one node the group's GPUs attach to
    int nics_per_gpu = 1;    ///< NICs each GPU owns when a node has more NICs than GPUs
    bool host_staged = false;  ///< no GPUDirect RDMA: NIC traffic goes through host bounce buffers
    double spine = 1.0;      ///< oversubscription applied to NIC bandwidth (1 inside one leaf)
    double inv_n = 1, inv_nodes = 1, inv_r = 1;  ///< 1/n, 1/N, 1/r
    double s_intra_group = 0;  ///< s/B: one GPU to the rest of the group (all usable scale-up links)
    double s_intra_peer = 0;   ///< s/B: one GPU to one peer
    double s_node_net = 0;     ///< s/B: the node's NICs used by the group (after the spine factor)
    double s_own_net = 0;      ///< s/B: one GPU's NIC(s), unshared
    link_class ci = link_class::nvlink, cn = link_class::net;
    double alpha_intra = 0, alpha_net = 0;  ///< s: published link latencies (ideal mode)
};

/// One phase of an algorithm: intra-node and inter-node parts pipelined, in bytes per direction on
/// the busiest port of each kind and the time per byte that port takes (the inverse bandwidth).
/// Trivial (no member initializers): a plan's unused phases are never touched, and `phase_plan::add`
/// value-initializes the one it hands out (all zero; `net_kind` and `net_sharing` are set with
/// the net part).
struct phase {
    double w_intra, c_intra;  ///< bytes, s/B at the datasheet peak
    double w_net, c_net;      ///< bytes, s/B at the datasheet peak
    int steps_intra, steps_net;
    bool intra_switch;        ///< intra part reduced in the switch (NVLS)
    bool net_switch;          ///< net part reduced in the network (SHARP)
    bottleneck_kind net_kind;
    int net_sharing;
};

/// An algorithm on a path: up to three phases run one after another. Only the first `count`
/// phases are meaningful (the others are left uninitialized on purpose: no zeroing per candidate).
struct phase_plan {
    std::array<phase, 3> ph;
    int count = 0;
    bool simple_only = false;  ///< only NCCL's Simple protocol implements it (PAT)
    /// -1, or the index of the algorithm's derated network rate in the evaluator's rate context
    /// (its descriptor's `net_bandwidth_factor` < 1): the rate of its network parts not reduced
    /// in the network. Set with `simple_only` by the evaluator, not by `build`.
    int net_derate = -1;
    phase& add() {
        phase& p = ph[static_cast<std::size_t>(count++)];
        p = phase{};
        return p;
    }
};

[[nodiscard]] constexpr int ceil_log2(int n) {
    int k = 0;
    while ((1 << k) < n) ++k;
    return k;
}

[[nodiscard]] constexpr int floor_log2(int n) {
    int k = 0;
    while ((2 << k) <= n) ++k;
    return k;
}

/// The per-path quantities the algorithms' formulas share, and the two ways a phase gets a part:
/// `set_intra` (only with two or more ranks per node) and `set_net` (only across nodes). Built
/// once per plan; what an algorithm does not use is never computed once inlined.
struct plan_inputs {
    const cluster& c;
    const group_path& p;
    int n, N, r;
    double nd, rd;
    bool multi;
    double sharing;
    double node_net;     ///< a node's NICs used by the group
    double own_net;      ///< one GPU's NIC(s), unshared
    double gpu_net;      ///< one GPU's share of its NIC
    double intra_group, intra_peer;
    double frac_n;       ///< (n-1)/n
    double frac_N;       ///< (N-1)/N
    double frac_r;       ///< (r-1)/r
    bottleneck_kind nk;

    plan_inputs(const cluster& c_, const group_path& p_)
        : c(c_), p(p_), n(p_.n), N(p_.nodes), r(p_.r), nd(n), rd(r), multi(N > 1),
          sharing(static_cast<double>(p_.sharing)), node_net(p_.s_node_net), own_net(p_.s_own_net),
          gpu_net(own_net * sharing), intra_group(p_.s_intra_group), intra_peer(p_.s_intra_peer),
          frac_n((nd - 1.0) * p_.inv_n), frac_N((static_cast<double>(N) - 1.0) * p_.inv_nodes),
          frac_r((rd - 1.0) * p_.inv_r), nk(p_.spine > 1.0 ? bottleneck_kind::spine : bottleneck_kind::nic) {}

    void set_net(phase& ph, double w, double c_net, int steps, int share) const {
        if (!multi) return;
        ph.w_net = w;
        ph.c_net = c_net;
        ph.steps_net = steps;
        ph.net_kind = nk;
        ph.net_sharing = share;
    }
    void set_intra(phase& ph, double w, double c_intra, int steps) const {
        if (r < 2) return;
        ph.w_intra = w;
        ph.c_intra = c_intra;
        ph.steps_intra = steps;
    }
};

/// How the automatic choice may skip a candidate without building its plan.
enum class pruning {
    none,
    /// One message per peer (direct, the parameter servers): the step latencies of
    /// `latency_steps` plus the bytes every such algorithm moves (every op but send_recv).
    peer,
    /// The bytes every algorithm moves through the NICs, at the derated bandwidth of an
    /// algorithm whose `net_bandwidth_factor` is below 1 (PAT).
    derated_bandwidth,
};

/// Latency steps of an algorithm on each link class, before the parts that carry nothing are
/// dropped (intra with fewer than two ranks per node, net on one node).
struct latency_steps {
    int intra = 0, net = 0;
};

/// The descriptor of an algorithm: one specialization per header of collective/algorithms/.
template <algorithm a>
struct descriptor;

/// What every descriptor of algorithm `a` inherits: its identity and name, and what it does not
/// state otherwise.
template <algorithm a>
struct descriptor_defaults {
    static constexpr algorithm id = a;
    /// The CLI/JSON spelling (`algorithm_spellings`).
    static constexpr std::string_view name = to_string(a);
    static constexpr bool simple_only = false;
    /// The network at its full (efficiency- and saturation-derated) bandwidth.
    static constexpr double net_bandwidth_factor = 1.0;
    static constexpr pruning prune = pruning::none;
    [[nodiscard]] static constexpr bool automatic_candidate(collective_op) { return true; }
    /// Defined for other operations only.
    [[nodiscard]] static std::string inapplicable_expected(collective_op op) {
        return "an algorithm defined for " + std::string(to_string(op)) + " (see algorithm_applies)";
    }
    /// The scale-up fabric's switches (NVSwitch).
    [[nodiscard]] static constexpr std::string_view switch_reduction_link(const cluster& c, int) {
        return c.node.intra.name;
    }
};

}  // namespace commscale::detail
