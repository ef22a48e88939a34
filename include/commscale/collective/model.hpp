#pragma once
/// @file collective/model.hpp
/// @brief The collective cost model: `predict_collective(cluster, placement, op, bytes, options)`
/// gives the time of one collective on a group of ranks placed on a cluster, with the algorithm,
/// the latency/transfer split, nccl-tests algbw/busbw and the resource that limited it.
///
/// Every algorithm is a closed-form alpha-beta cost evaluated on the path each of its steps uses:
/// the GPU's scale-up port (whole complement on a switch; only the links to the group's peers on a
/// mesh), the NIC (its per-direction bandwidth, split among the group's GPUs that drive it at
/// once), and the spine (NIC bandwidth divided by the oversubscription once the group spans more
/// nodes than one leaf holds). An algorithm is a sequence of at most three phases; inside a phase the intra-node
/// and inter-node parts are pipelined (time = max), phases run one after another (times add).
///
/// Each algorithm is a descriptor in its own header of collective/algorithms/ (where it applies,
/// whether NCCL implements it, Simple-only or not, its phases, its latency steps for the pruning
/// bound, its place in the automatic choice); this file is the one evaluator: the path, the
/// per-prediction rates, the time of a plan, the bottleneck and the automatic choice, which
/// dispatches to the descriptors at compile time.
///
/// `efficiency_mode::ideal`: latency = steps x published link latency (0 where unpublished),
/// transfer = bytes / datasheet peak. `efficiency_mode::realistic`: the NCCL-like protocol layer of
/// hardware/comm_params.hpp (`cluster::comm`): per protocol a base latency plus per-step latencies
/// of the link class, bandwidth derated by the class efficiency, the protocol's payload fraction
/// and a size-saturation curve; the fastest protocol is kept.
///
/// `bytes` follows nccl-tests: the whole buffer (for all_gather / reduce_scatter the total across
/// ranks; for all_to_all the buffer each rank sends, 1/n of it to each peer).
///
/// GPUDirect RDMA (`node_spec::gpudirect_rdma`): with it, a ring's inter-node traffic spreads
/// over the node's NICs whatever the GPUs per NIC; without it (host-staged, e.g. a NIC on a CPU
/// root port away from the GPUs) the GPUs sharing a NIC divide it.
///
/// Not modelled (stated so that nobody relies on it): the throughput lost to host staging itself
/// (no published constant; Baskerville's 4 x 1 ring reaches 54% of its HDR port), cross-rail
/// traffic (NCCL's PXN keeps inter-node traffic on rails; `cluster::rail_optimized` changes only
/// how many nodes one leaf serves, see cluster::nodes_under_one_leaf), congestion between concurrent collectives, and compute of the
/// reduction itself.
///
/// Formulas and their sources, in one place: docs/model.md#collectives.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "../error.hpp"
#include "../hardware/comm_params.hpp"
#include "../hardware/topology.hpp"
#include "../units.hpp"
#include "algorithms/descriptor.hpp"
#include "algorithms/direct.hpp"
#include "algorithms/double_binary_tree.hpp"
#include "algorithms/halving_doubling.hpp"
#include "algorithms/hierarchical.hpp"
#include "algorithms/nvls.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/parameter_server_sharded.hpp"
#include "algorithms/pat.hpp"
#include "algorithms/ring.hpp"
#include "algorithms/tree.hpp"
#include "types.hpp"

namespace commscale {

/// @brief Options of one prediction.
struct collective_options {
    algorithm algo = algorithm::automatic;
    efficiency_mode mode = efficiency_mode::realistic;
    algorithm_set candidates = algorithm_set::nccl;  ///< what `automatic` chooses among
};

/// @brief One predicted collective. `time = latency + transfer`.
struct collective_result {
    collective_op op;
    algorithm algo;                      ///< the algorithm used (the one chosen when `automatic`)
    int ranks;
    int nodes;
    data_size bytes;                     ///< nccl-tests buffer size
    duration time;
    duration latency;                    ///< fixed part (steps x latencies)
    duration transfer;                   ///< bandwidth part
    byte_rate algbw;                     ///< bytes / time (nccl-tests)
    byte_rate busbw;                     ///< algbw x busbw_factor (nccl-tests)
    bottleneck_kind bottleneck;
    std::string_view bottleneck_link;    ///< catalog name of the limiting link ("" if none)
    int sharing;                         ///< GPUs of the group sharing that link (NIC), 1 otherwise
    protocol proto = protocol::simple;   ///< realistic mode: the protocol kept (Simple in ideal mode)
};

// ---------------------------------------------------------------- names and nccl-tests conventions

/// @brief nccl-tests algorithm bandwidth: bytes / time (B/s). 0 when `t` is not positive (a
/// one-rank or empty collective takes no time; the library never returns inf).
[[nodiscard]] inline byte_rate algbw(data_size bytes, duration t) {
    if (!(t.value() > 0.0)) return bytes_per_second(0.0);
    return bytes / t;
}

/// @brief nccl-tests bus bandwidth: algbw(bytes, t) x busbw_factor(op, n) (B/s).
[[nodiscard]] inline byte_rate busbw(collective_op op, int n, data_size bytes, duration t) {
    return busbw_factor(op, n) * algbw(bytes, t);
}

// ---------------------------------------------------------------- the path of a group

namespace detail {

/// Ranks of a placement that share one NIC: GPUs o, o+s, o+2s, ... (stride s) on NICs of
/// `per_nic` consecutive GPUs.
[[nodiscard]] constexpr int group_sharing(int r, int stride, int per_nic) {
    if (stride >= per_nic) return 1;
    return std::min(r, (per_nic + stride - 1) / stride);
}

/// 1/x for a positive bandwidth, +inf for zero (a part that never carries bytes keeps w = 0).
[[nodiscard]] inline double per_byte(double bandwidth) {
    return bandwidth > 0.0 ? 1.0 / bandwidth : std::numeric_limits<double>::infinity();
}

/// The link classes and published latencies of every path of `c` (its node's intra and inter
/// links; a PCIe fabric is the PCIe class whatever its link).
inline void set_path_links(const cluster& c, group_path& p) {
    p.ci = c.node.fabric == intra_fabric::pcie ? link_class::pci : class_of(c.node.intra);
    p.cn = class_of(c.node.inter);
    p.alpha_intra = c.node.intra.latency ? c.node.intra.latency->value() : 0.0;
    p.alpha_net = c.node.inter.latency ? c.node.inter.latency->value() : 0.0;
}

/// The path of a validated placement spanning `nodes` nodes (g.nodes()).
[[nodiscard]] inline group_path make_path(const cluster& c, const placement& g, int nodes) {
    group_path p;
    p.n = g.ranks;
    p.nodes = nodes;
    p.r = std::min(g.ranks_per_node, g.ranks);
    // 1/n, 1/N, 1/r from one division (exact enough: a few ulps).
    const double nd_ = p.n, Nd_ = p.nodes, rd_ = p.r;
    const double inv_all = 1.0 / (nd_ * Nd_ * rd_);
    p.inv_n = Nd_ * rd_ * inv_all;
    p.inv_nodes = nd_ * rd_ * inv_all;
    p.inv_r = nd_ * Nd_ * inv_all;
    const node_spec& nd = c.node;
    const double complement = nd.intra.per_direction.value();
    switch (nd.fabric) {
        case intra_fabric::switched:
            // NVSwitch: every GPU reaches every peer at its full complement.
            p.s_intra_group = p.s_intra_peer = per_byte(complement);
            break;
        case intra_fabric::mesh: {
            // Point-to-point: 1/(G-1) of the complement per peer; multi-channel algorithms use the
            // links to all r-1 peers of the group at once.
            const double peers = nd.gpus > 1 ? static_cast<double>(nd.gpus - 1) : 1.0;
            p.s_intra_peer = peers * per_byte(complement);
            p.s_intra_group = peers * per_byte(p.r > 1 ? complement * static_cast<double>(p.r - 1) : complement);
            break;
        }
        case intra_fabric::pcie:
            // Each GPU's PCIe link (through PCIe switches; staged through host memory without
            // peer-to-peer, which keeps each byte once per direction on each GPU's link).
            p.s_intra_group = p.s_intra_peer = per_byte(complement);
            break;
    }
    set_path_links(c, p);
    p.host_staged = !nd.gpudirect_rdma;
    // Integer divisions only where they can change the result (one NIC per GPU, consecutive
    // ranks: no division at all).
    const int per_nic = nd.nics >= nd.gpus ? 1 : nd.gpus_per_nic();
    p.sharing = per_nic == 1 ? 1 : group_sharing(p.r, std::max(1, g.stride), per_nic);
    p.nics_per_gpu = nd.nics > nd.gpus ? nd.nics / nd.gpus : 1;
    const int gpus_on_nics = p.sharing == 1 ? p.r : (p.r + p.sharing - 1) / p.sharing;
    p.nics_used = std::max(1, std::min(std::max(1, nd.nics), gpus_on_nics * p.nics_per_gpu));
    p.spine = p.nodes > c.nodes_under_one_leaf() ? c.oversubscription : 1.0;
    // One division each, independent of each other (the latency chain of a prediction is short).
    const double nic = nd.inter.per_direction.value();  // one NIC, before the spine
    p.s_node_net = per_byte(nic * static_cast<double>(p.nics_used)) * p.spine;
    p.s_own_net = per_byte(nic * static_cast<double>(p.nics_per_gpu)) * p.spine;
    return p;
}

// The algorithms: one descriptor each in collective/algorithms/ (descriptor.hpp says what a
// descriptor holds); what follows dispatches to them.

/// `f.template operator()<a>()` for an algorithm `a` known only at run time (not automatic): the
/// descriptors' algorithms tried in enumerator order (the compiler makes it a switch).
template <class R, class F, std::size_t... I>
[[nodiscard]] constexpr R dispatch_algorithm(algorithm a, F& f, std::index_sequence<I...>) {
    R out{};
    (void)(((a == static_cast<algorithm>(I + 1)) && ((out = f.template operator()<static_cast<algorithm>(I + 1)>()), true)) ||
           ...);
    return out;
}
template <class R, class F>
[[nodiscard]] constexpr R dispatch_algorithm(algorithm a, F&& f) {
    return dispatch_algorithm<R>(a, f, std::make_index_sequence<static_cast<std::size_t>(algorithm_count - 1)>{});
}

/// The candidates of the automatic choice in the order they are tried, most often fastest first so
/// that the bounds prune the rest (each one's `automatic_candidate(op)` says for which operations).
/// The pipelined binary tree is never a candidate: the double binary tree dominates it.
inline constexpr std::array automatic_candidates{
    algorithm::ring,   algorithm::nvls,   algorithm::pat,    algorithm::double_binary_tree, algorithm::hierarchical,
    algorithm::halving_doubling, algorithm::direct, algorithm::parameter_server, algorithm::parameter_server_sharded};
/// The algorithms that are never a candidate of the automatic choice.
inline constexpr std::array never_automatic{algorithm::tree};

/// Every algorithm is a candidate once or in never_automatic (a new algorithm must take a place).
[[nodiscard]] consteval bool automatic_candidates_complete() {
    for (int a = 1; a < algorithm_count; ++a) {
        int seen = 0;
        for (const algorithm c : automatic_candidates) seen += static_cast<int>(c) == a ? 1 : 0;
        for (const algorithm c : never_automatic) seen += static_cast<int>(c) == a ? 1 : 0;
        if (seen != 1) return false;
    }
    return true;
}
static_assert(automatic_candidates_complete(),
              "each algorithm is in automatic_candidates or never_automatic, once (collective/model.hpp)");

/// The algorithms whose descriptors derate the network bandwidth (`net_bandwidth_factor` below
/// 1), in enumerator order: the rate context keeps one network rate for each (`ik_net_derated`),
/// and a plan of one of them points at it (`plan::net_derate`).
template <std::size_t... I>
[[nodiscard]] consteval auto net_derated_algorithms_of(std::index_sequence<I...>) {
    constexpr std::array<double, sizeof...(I)> factor{
        descriptor<static_cast<algorithm>(I + 1)>::net_bandwidth_factor...};
    constexpr int count = ((factor[I] != 1.0 ? 1 : 0) + ...);
    std::array<algorithm, static_cast<std::size_t>(count)> out{};
    std::size_t k = 0;
    for (std::size_t i = 0; i < factor.size(); ++i) {
        if (factor[i] == 1.0) continue;
        if (!(factor[i] > 0.0 && factor[i] < 1.0)) throw "net_bandwidth_factor: a fraction in (0, 1]";
        out[k++] = static_cast<algorithm>(i + 1);
    }
    return out;
}
inline constexpr auto net_derated_algorithms =
    net_derated_algorithms_of(std::make_index_sequence<static_cast<std::size_t>(algorithm_count - 1)>{});

/// The index of `a` in net_derated_algorithms, -1 when its network parts are not derated.
template <algorithm a>
[[nodiscard]] consteval int net_derate_index() {
    for (std::size_t i = 0; i < net_derated_algorithms.size(); ++i)
        if (net_derated_algorithms[i] == a) return static_cast<int>(i);
    return -1;
}

/// Every descriptor derives from the defaults of its own algorithm, so that its name is the
/// algorithm's spelling in `algorithm_spellings` (types.hpp).
template <std::size_t... I>
[[nodiscard]] consteval bool descriptor_names_agree(std::index_sequence<I...>) {
    return ((descriptor<static_cast<algorithm>(I + 1)>::id == static_cast<algorithm>(I + 1) &&
             descriptor<static_cast<algorithm>(I + 1)>::name == algorithm_spellings[I + 1].name) &&
            ...);
}
static_assert(descriptor_names_agree(std::make_index_sequence<static_cast<std::size_t>(algorithm_count - 1)>{}),
              "a descriptor derives from the defaults of another algorithm (descriptor_defaults<a>), or its "
              "name differs from its spelling in algorithm_spellings");

/// Whether `a` is defined for `op` on a group with `r` ranks per node over `nodes` nodes.
[[nodiscard]] constexpr bool applies_to(const cluster& c, int r, int nodes, collective_op op, algorithm a) {
    if (a == algorithm::automatic) return true;
    return dispatch_algorithm<bool>(a, [&]<algorithm A>() { return descriptor<A>::applies(c, r, nodes, op); });
}

/// Whether NCCL implements `a` for `op` (see algorithm_set).
[[nodiscard]] constexpr bool nccl_implements(collective_op op, algorithm a) {
    if (a == algorithm::automatic) return false;
    return dispatch_algorithm<bool>(a, [&]<algorithm A>() { return descriptor<A>::nccl_implements(op); });
}

/// What a request for `a` (not automatic) where it does not apply for `op` is told it needs.
[[nodiscard]] inline std::string inapplicable_expected(algorithm a, collective_op op) {
    return dispatch_algorithm<std::string>(a, [&]<algorithm A>() { return descriptor<A>::inapplicable_expected(op); });
}

/// The input_error for `a` requested where it does not apply: out of line and cold, so that the
/// message code stays out of predict_collective's hot path.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_inapplicable(algorithm a, collective_op op) {
    throw input_error("algo", std::string(to_string(a)), inapplicable_expected(a, op));
}

/// The catalog name of the link whose reduction limited a plan of `a` (not automatic) over
/// `nodes` nodes (bottleneck_kind::switch_reduction). Out of line: rare, and kept out of
/// predict_collective's body.
[[nodiscard, gnu::noinline]] inline std::string_view switch_reduction_link(const cluster& c, int nodes, algorithm a) {
    return dispatch_algorithm<std::string_view>(
        a, [&]<algorithm A>() { return descriptor<A>::switch_reduction_link(c, nodes); });
}

/// Whether `a` is defined for `op` on this cluster and group (automatic excluded).
[[nodiscard]] constexpr bool applies(const cluster& c, const placement& g, collective_op op, algorithm a) {
    return applies_to(c, std::min(g.ranks_per_node, g.ranks), g.nodes(), op, a);
}

/// The phases of algorithm `a` for `op` on path `p`, for a buffer of `s` bytes (nccl-tests size):
/// its descriptor's `build` (formulas in its header). For an algorithm known at compile time (the
/// automatic choice instantiates one per candidate, so each is inlined with only its own formulas).
template <algorithm a>
inline void build_plan_for(const plan_inputs& in, collective_op op, double s, phase_plan& pl) {
    pl.count = 0;
    pl.simple_only = descriptor<a>::simple_only;
    pl.net_derate = net_derate_index<a>();
    descriptor<a>::build(in, op, s, pl);
}
template <algorithm a>
inline void build_plan_for(const cluster& c, const group_path& p, collective_op op, double s, phase_plan& pl) {
    build_plan_for<a>(plan_inputs(c, p), op, s, pl);
}

/// The phases of algorithm `a` (`automatic`: ring) into `pl`.
inline void build_plan(const cluster& c, const group_path& p, collective_op op, algorithm a, double s, phase_plan& pl) {
    if (a == algorithm::automatic) a = algorithm::ring;
    (void)dispatch_algorithm<bool>(a, [&]<algorithm A>() {
        build_plan_for<A>(c, p, op, s, pl);
        return true;
    });
}

/// 1 / saturation(s / n) = 1 + (half_size x n / s)^exponent: the factor by which a link class's
/// time per byte exceeds its large-message one when each of n ranks holds s / n bytes.
[[nodiscard]] inline double saturation_excess(const link_class_params& k, double s, double n) {
    const double h = k.half_size.value();
    if (!(h > 0.0)) return 1.0;
    if (!(s > 0.0)) return std::numeric_limits<double>::infinity();
    const double x = h * n / s;
    return 1.0 + (k.exponent == 0.5 ? std::sqrt(x) : k.exponent == 1.0 ? x : std::pow(x, k.exponent));
}

/// Per-prediction constants of the cost layer (everything that does not depend on the algorithm),
/// as multipliers so that a candidate costs no division. Ideal mode: one "protocol" with the
/// published link latencies and datasheet peaks.
/// The arrays are filled by make_context for the first `protocols` entries (inv_cap only when
/// `capped`); they have no initializers so that a prediction does not zero them first.
struct rate_context {
    int protocols = 1;
    std::array<double, protocol_count> base, step_intra, step_net;
    std::array<double, protocol_count> inv_fraction;  ///< 1 / protocol payload fraction
    std::array<double, protocol_count> inv_cap;       ///< s/B of the channel cap (0: none)
    double ik_intra = 1.0, ik_net = 1.0;  ///< 1 / (efficiency x saturation) per part
    double nvls = 1.0, sharp = 1.0;       ///< in-switch, in-network reduction efficiency
    double ik_intra_switch = 1.0, ik_net_switch = 1.0;  ///< ik_* / nvls, ik_* / sharp
    /// ik_net / net_bandwidth_factor of each of net_derated_algorithms (realistic mode; ideal
    /// mode: ik_net, the peak).
    std::array<double, net_derated_algorithms.size()> ik_net_derated;
    double min_inv_fraction = 1.0;        ///< smallest inv_fraction (lower bound of any protocol)
    double min_base = 0, min_step_intra = 0, min_step_net = 0;  ///< smallest latencies over protocols
    bool capped = false;
};

/// The part of a realistic-mode rate_context that depends on the cluster alone (its link classes,
/// latencies, protocols, channels and efficiencies; not on the group or the size): computed once
/// per cluster by the step predictor's pricer (predict_step), per call otherwise. `x` holds every
/// field but the saturation-dependent products (ik_*), which finish_context sets.
struct rate_base {
    rate_context x;
    const link_class_params* ki = nullptr;
    const link_class_params* kn = nullptr;
    bool same_curve = true;  ///< both classes on one saturation curve (computed once then)
    double inv_ei = 1, inv_en = 1, inv_eiv = 1, inv_ens = 1;  ///< 1 / efficiency (x in-switch, in-network)
    /// inv_en / net_bandwidth_factor of each of net_derated_algorithms (a product per collective,
    /// not a division)
    std::array<double, net_derated_algorithms.size()> inv_en_derated{};
};

/// rate_base of `c` for paths of `p`'s link classes and latencies (every path of one cluster has
/// the same: the node's intra and inter links, make_path).
[[nodiscard]] inline rate_base make_rate_base(const cluster& c, const group_path& p) {
    rate_base b;
    rate_context& x = b.x;
    const comm_params& cp = c.comm;
    const link_class_params& ki = cp.of(p.ci);
    const link_class_params& kn = cp.of(p.cn);
    b.ki = &ki;
    b.kn = &kn;
    x.protocols = static_cast<int>(protocol_count);
    b.same_curve = kn.half_size == ki.half_size && kn.exponent == ki.exponent;
    x.nvls = cp.nvls_efficiency;
    x.sharp = cp.sharp_efficiency;
    b.inv_ei = 1.0 / ki.efficiency;
    b.inv_en = kn.efficiency == ki.efficiency ? b.inv_ei : 1.0 / kn.efficiency;
    b.inv_eiv = c.node.in_switch_reduction ? 1.0 / (ki.efficiency * cp.nvls_efficiency) : b.inv_ei;
    b.inv_ens = c.in_network_reduction ? 1.0 / (kn.efficiency * cp.sharp_efficiency) : b.inv_en;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((b.inv_en_derated[I] = b.inv_en / descriptor<net_derated_algorithms[I]>::net_bandwidth_factor), ...);
    }(std::make_index_sequence<net_derated_algorithms.size()>{});
    for (std::size_t q = 0; q < protocol_count; ++q) {
        x.base[q] = cp.base_latency[q].value();
        // A protocol step is never faster than the port's published latency.
        x.step_intra[q] = std::max(ki.step_latency[q].value(), p.alpha_intra);
        x.step_net[q] = std::max(kn.step_latency[q].value(), p.alpha_net);
        x.inv_fraction[q] = 1.0 / cp.protocol_bandwidth[q];
        x.inv_cap[q] = 0.0;
        if (cp.channels > 0 && cp.channel_bandwidth[q].value() > 0) {
            x.inv_cap[q] = 1.0 / (static_cast<double>(cp.channels) * cp.channel_bandwidth[q].value());
            x.capped = true;
        }
    }
    x.min_inv_fraction = std::min({x.inv_fraction[0], x.inv_fraction[1], x.inv_fraction[2]});
    x.min_base = std::min({x.base[0], x.base[1], x.base[2]});
    x.min_step_intra = std::min({x.step_intra[0], x.step_intra[1], x.step_intra[2]});
    x.min_step_net = std::min({x.step_net[0], x.step_net[1], x.step_net[2]});
    return b;
}

/// Sets the saturation-dependent products of `x` (ik_*), whose other fields are `b.x`'s, for a
/// path of `n` ranks moving `s` bytes: finish_context without the copy. It reads none of `b.x`,
/// so `x` may be `b.x` itself (the step predictor's pricer updates its rate_base's in place).
inline void set_saturation(rate_context& x, const rate_base& b, const group_path& p, double s) {
    // Saturation depends on each rank's share of the buffer s / n, not on the protocol or
    // algorithm. The two classes often carry the same curve (the defaults do): computed once then.
    const double nd = static_cast<double>(p.n);
    const double gi = saturation_excess(*b.ki, s, nd);
    const double gn = b.same_curve ? gi : saturation_excess(*b.kn, s, nd);
    x.ik_intra = gi * b.inv_ei;
    x.ik_net = gn * b.inv_en;
    x.ik_intra_switch = gi * b.inv_eiv;
    x.ik_net_switch = gn * b.inv_ens;
    for (std::size_t i = 0; i < net_derated_algorithms.size(); ++i) x.ik_net_derated[i] = gn * b.inv_en_derated[i];
}

/// The realistic-mode rate_context of a path of `n` ranks moving `s` bytes, from its cluster's
/// rate_base: the saturation of each link class (which depends on each rank's share s / n) times
/// the inverse efficiencies.
[[nodiscard]] inline rate_context finish_context(const rate_base& b, const group_path& p, double s) {
    rate_context x = b.x;
    set_saturation(x, b, p, s);
    return x;
}

/// The rate context of a path moving `s` bytes: ideal mode the published latencies and peaks;
/// realistic mode finish_context(make_rate_base(c, p), p, s).
[[nodiscard]] inline rate_context make_context(const cluster& c, const group_path& p, double s, efficiency_mode mode) {
    if (mode == efficiency_mode::ideal) {
        rate_context x;
        x.base[0] = 0.0;
        x.inv_fraction[0] = 1.0;
        x.inv_cap[0] = 0.0;
        x.step_intra[0] = x.min_step_intra = p.alpha_intra;
        x.step_net[0] = x.min_step_net = p.alpha_net;
        x.ik_net_derated.fill(x.ik_net);
        return x;
    }
    return finish_context(make_rate_base(c, p), p, s);
}

/// Time of a plan under a context: latency, transfer and the protocol kept.
struct evaluation {
    double latency = 0, transfer = 0;
    protocol proto = protocol::simple;
    [[nodiscard]] double time() const { return latency + transfer; }
};

/// Seconds per byte of one phase's parts at the effective bandwidth, protocol fraction excluded:
/// 1 / (peak x efficiency x saturation [x in-switch efficiency]).
[[nodiscard]] inline double intra_cost(const rate_context& x, const phase& ph) {
    return ph.c_intra * (ph.intra_switch ? x.ik_intra_switch : x.ik_intra);
}
[[nodiscard]] inline double net_cost(const rate_context& x, const phase_plan& pl, const phase& ph) {
    return ph.c_net * (ph.net_switch          ? x.ik_net_switch
                       : pl.net_derate >= 0 ? x.ik_net_derated[static_cast<std::size_t>(pl.net_derate)]
                                            : x.ik_net);
}

/// The protocol-independent part of a plan: its transfer time at full protocol payload, and its
/// steps on each link class.
struct plan_shape {
    double t0 = 0;
    double steps_intra = 0, steps_net = 0;
};

[[nodiscard]] inline plan_shape shape_of(const rate_context& x, const phase_plan& pl) {
    plan_shape sh;
    for (int i = 0; i < pl.count; ++i) {
        const phase& ph = pl.ph[static_cast<std::size_t>(i)];
        sh.steps_intra += ph.steps_intra;
        sh.steps_net += ph.steps_net;
        // An unused part has w = 0 and c = 0 (phase_plan::add); a used one a finite c: no branch.
        const double ti = ph.w_intra * intra_cost(x, ph);
        const double tn = ph.w_net * net_cost(x, pl, ph);
        sh.t0 += std::max(ti, tn);
    }
    return sh;
}

/// The latency of a plan of shape `sh` under protocol `q`: base + steps x step latency per class.
[[nodiscard]] inline double protocol_latency(const rate_context& x, const plan_shape& sh, std::size_t q) {
    return x.base[q] + sh.steps_intra * x.step_intra[q] + sh.steps_net * x.step_net[q];
}

/// Per protocol: protocol_latency + transfer / payload fraction (with the per-channel cap where
/// one is set); keeps the fastest protocol.
[[nodiscard]] inline evaluation evaluate(const rate_context& x, const phase_plan& pl, const plan_shape& sh) {
    evaluation best;
    double best_time = -1;
    // a Simple-only plan (descriptor simple_only) in realistic mode: the Simple protocol alone
    const std::size_t first = pl.simple_only && x.protocols > 1 ? static_cast<std::size_t>(protocol::simple) : 0;
    for (std::size_t q = first; q < static_cast<std::size_t>(x.protocols); ++q) {
        const double lat = protocol_latency(x, sh, q);
        double tr = sh.t0 * x.inv_fraction[q];
        if (x.capped && x.inv_cap[q] > 0) {  // per-channel cap: re-evaluate the parts with it
            tr = 0;
            for (int i = 0; i < pl.count; ++i) {
                const phase& ph = pl.ph[static_cast<std::size_t>(i)];
                const double ci = std::max(intra_cost(x, ph) * x.inv_fraction[q], x.inv_cap[q]);
                const double cn = std::max(net_cost(x, pl, ph) * x.inv_fraction[q], x.inv_cap[q]);
                tr += std::max(ph.w_intra > 0 ? ph.w_intra * ci : 0.0, ph.w_net > 0 ? ph.w_net * cn : 0.0);
            }
        }
        if (best_time < 0 || lat + tr < best_time) {
            best_time = lat + tr;
            best.latency = lat;
            best.transfer = tr;
            best.proto = x.protocols == 1 ? protocol::simple : static_cast<protocol>(q);
        }
    }
    return best;
}

/// evaluate(x, pl, sh).time() without the split, branch-free when no channel cap is set.
[[nodiscard]] inline double plan_time(const rate_context& x, const phase_plan& pl, const plan_shape& sh) {
    if (x.capped) return evaluate(x, pl, sh).time();
    double t = std::numeric_limits<double>::infinity();
    const std::size_t first = pl.simple_only && x.protocols > 1 ? static_cast<std::size_t>(protocol::simple) : 0;
    for (std::size_t q = first; q < static_cast<std::size_t>(x.protocols); ++q) {
        // evaluate's latency + transfer, in the same order (so the times agree to the bit)
        const double tq = protocol_latency(x, sh, q) + sh.t0 * x.inv_fraction[q];
        t = tq < t ? tq : t;
    }
    return t;
}

[[nodiscard]] inline evaluation evaluate(const rate_context& x, const phase_plan& pl) {
    return evaluate(x, pl, shape_of(x, pl));
}

/// What limited a plan: the part with the largest share of the transfer time, or the latency.
struct verdict {
    bottleneck_kind kind = bottleneck_kind::none;
    int sharing = 1;
};

[[nodiscard]] inline verdict classify(const rate_context& x, const phase_plan& pl, const evaluation& e) {
    verdict v;
    double worst = 0;
    for (int i = 0; i < pl.count; ++i) {
        const phase& ph = pl.ph[static_cast<std::size_t>(i)];
        const double ti = ph.w_intra > 0 ? ph.w_intra * intra_cost(x, ph) : 0.0;
        const double tn = ph.w_net > 0 ? ph.w_net * net_cost(x, pl, ph) : 0.0;
        if (ti > worst) {
            worst = ti;
            v.kind = ph.intra_switch ? bottleneck_kind::switch_reduction : bottleneck_kind::intra_link;
            v.sharing = 1;
        }
        if (tn > worst) {
            worst = tn;
            v.kind = ph.net_switch ? bottleneck_kind::switch_reduction : ph.net_kind;
            v.sharing = ph.net_sharing;
        }
    }
    if (e.latency > e.transfer) v.kind = bottleneck_kind::latency;
    return v;
}

/// A lower bound of the latency of a one-message-per-peer algorithm (`pruning::peer`: direct and
/// the parameter servers): its descriptor's step counts, at the smallest per-step latencies over
/// protocols. Never above `evaluate(...).time()` for the same algorithm.
template <algorithm a>
[[nodiscard]] inline double step_bound(const rate_context& x, const group_path& p, collective_op op) {
    static_assert(descriptor<a>::prune == pruning::peer);
    const latency_steps st = descriptor<a>::steps(p, op);
    int si = st.intra, sn = st.net;
    if (p.r < 2) si = 0;
    if (p.nodes < 2) sn = 0;
    return x.min_base + static_cast<double>(si) * x.min_step_intra + static_cast<double>(sn) * x.min_step_net;
}

/// A lower bound of the transfer time shared by direct and the parameter servers (every op but
/// send_recv): each moves at least (r-1)/n S through a GPU's scale-up port and, across nodes,
/// r(n-r)/n S through the node's NICs (direct: (r-1) S and r(n-r) S or (n-r) S at one NIC; the
/// server: (n-r) S at its NIC or r S per worker node; the sharded server r(n-r)/n S per phase),
/// at the smallest protocol penalty. Scaled by (1 - 1e-9) so that rounding can never lift it
/// above the time evaluate() gives.
[[nodiscard]] inline double peer_transfer_bound(const rate_context& x, const group_path& p, double s) {
    const double rd = p.r, nd = p.n;
    const double ti = p.r > 1 ? (rd - 1.0) * p.inv_n * s * p.s_intra_group * x.ik_intra : 0.0;
    const double tn = p.nodes > 1 ? rd * (nd - rd) * p.inv_n * s * p.s_node_net * x.ik_net : 0.0;
    return std::max(ti, tn) * x.min_inv_fraction * (1.0 - 1e-9);
}

/// check_inputs' error for placement `field` of value `v`, built out of line (as fail's), with
/// the text `expected()` returns.
template <class Expected>
[[noreturn, gnu::cold, gnu::noinline]] void fail_placement(const char* field, long long v, const Expected& expected) {
    throw input_error(std::string("placement.") + field, std::to_string(v), expected());
}

/// A collective's size: finite, in [0, 1e18] bytes (input_error naming `bytes` otherwise). The
/// error is built out of line, so that the check inlines into the step predictor's pricer.
inline void check_bytes(data_size bytes) {
    const double b = bytes.value();
    if (!(b >= 0 && b <= 1e18)) [[unlikely]]  // NaN fails both; infinities the range
        fail([b] { return input_error("bytes", detail::number_text(b), "a finite size in [0, 1e18] bytes"); });
}

/// Validation without allocation on the success path, its errors built out of line (fail,
/// fail_placement); kept out of line itself, which measured 2% faster in the step predictor's
/// pricer than inlined (docs/model.md). Returns the number of nodes the placement spans.
[[nodiscard, gnu::noinline]] inline int check_inputs(const cluster& c, const placement& g, data_size bytes) {
    if (g.ranks < 1 || g.ranks > cluster_limits::group_ranks)
        detail::fail_placement("ranks", g.ranks,
                               [&] { return "an integer in [1, " + std::to_string(cluster_limits::group_ranks) + "]"; });
    if (g.ranks_per_node < 1 || g.ranks_per_node > c.node.gpus)
        detail::fail_placement("ranks_per_node", g.ranks_per_node,
                               [&] { return "an integer in [1, " + std::to_string(c.node.gpus) + "] (GPUs per node)"; });
    if (g.stride < 1 || static_cast<long long>(g.stride) * (std::min(g.ranks_per_node, g.ranks) - 1) >= c.node.gpus)
        detail::fail_placement("stride", g.stride, [&] {
            return "an integer >= 1 with stride x (ranks_per_node - 1) < " + std::to_string(c.node.gpus) + " (GPUs per node)";
        });
    const int nodes = g.nodes();
    if (nodes > c.nodes)
        detail::fail_placement("ranks", g.ranks, [&] {
            return "at most " + std::to_string(static_cast<long long>(c.nodes) * g.ranks_per_node) + " ranks (" +
                   std::to_string(c.nodes) + " nodes x " + std::to_string(g.ranks_per_node) + " per node)";
        });
    check_bytes(bytes);
    const double bi = c.node.intra.per_direction.value();
    if (std::min(g.ranks_per_node, g.ranks) > 1 && (!std::isfinite(bi) || !(bi > 0)))
        detail::fail([&] {
            return input_error("cluster.intra.link", detail::number_text(bi / giga) + " GB/s",
                               "a scale-up link with positive bandwidth");
        });
    const double bn = c.node.inter.per_direction.value();
    if (nodes > 1) {
        if (!std::isfinite(bn) || !(bn > 0))
            detail::fail([&] {
                return input_error("cluster.inter.link", detail::number_text(bn / giga) + " GB/s",
                                   "a scale-out link with positive bandwidth");
            });
        if (c.node.nics < 1)
            detail::fail([&] {
                return input_error("cluster.inter.nics_per_node", std::to_string(c.node.nics),
                                   "at least 1 NIC per node when the group spans nodes");
            });
        if (!(c.oversubscription >= 1.0) || !std::isfinite(c.oversubscription))
            detail::fail([&] {
                return input_error("cluster.inter.oversubscription", detail::number_text(c.oversubscription),
                                   "a ratio >= 1 (1 = non-blocking, 7 = 7:1)");
            });
    }
    return nodes;
}

}  // namespace detail

/// @brief Whether algorithm `a` is defined for `op` on this cluster and group (`automatic` always
/// is). tree / double_binary_tree / parameter_server: all_reduce, broadcast, reduce;
/// halving_doubling / parameter_server_sharded: all_reduce, reduce_scatter, all_gather;
/// hierarchical: all_reduce; nvls: needs in-switch (node) or in-network (cluster) reduction;
/// pat: all_gather / reduce_scatter with one rank per node on several nodes;
/// ring: all but send_recv; direct: all.
[[nodiscard]] constexpr bool algorithm_applies(const cluster& c, const placement& g, collective_op op,
                                               algorithm a) {
    return detail::applies(c, g, op, a);
}

/// @brief The operation whose time `op` shares in every algorithm of this model, on every cluster
/// and group: all_gather costs what reduce_scatter of the same buffer costs (each moves (n-1)/n S
/// in the same steps over the same links in ring, PAT, direct, halving-doubling, the sharded
/// parameter server and NVLS; the reduction's arithmetic is not priced), so both map to
/// reduce_scatter; every other operation is its own. The step predictor's pricer reuses a time
/// across such a pair (Megatron's DP stream reduce-scatters gradients and all-gathers the same
/// bytes of parameters); tests/unit/collective/collective_time.cpp holds the two equal to the bit
/// for every algorithm, and fails first if an algorithm ever prices them apart.
[[nodiscard]] constexpr collective_op cost_twin(collective_op op) {
    return op == collective_op::all_gather ? collective_op::reduce_scatter : op;
}

namespace detail {
/// The automatic choice among the candidates of `opt` (opt.algo == automatic): every candidate's
/// time without its latency/transfer split (branch-free), the fastest kept; `best_plan` is left
/// holding scratch. Returns the algorithm and its time in seconds.
[[nodiscard]] inline std::pair<algorithm, double> choose_algorithm(const cluster& c, const group_path& p, const rate_context& x,
                                                                  collective_op op, double s, const collective_options& opt,
                                                                  phase_plan& best_plan) {
    algorithm chosen = opt.algo;
    // Every candidate's time without its latency/transfer split (branch-free), the fastest
    // kept; its plan is rebuilt once at the end for the split and the bottleneck.
    double best_time = std::numeric_limits<double>::infinity();
    double peer_bound = -1;  // computed when first needed
    const plan_inputs in(c, p);  // shared by the candidates' plans
    auto consider = [&]<algorithm a>() {
        using D = descriptor<a>;
        // Dominated candidates (same steps, never fewer bytes; the single tree is none):
        // for one-to-all / all-to-one the parameter server by direct; for reduce_scatter /
        // all_gather the sharded server is the direct exchange itself.
        if (!D::automatic_candidate(op)) return;
        if (opt.candidates == algorithm_set::nccl && !D::nccl_implements(op)) return;
        if (!D::applies(c, p.r, p.nodes, op)) return;
        if constexpr (D::prune == pruning::peer) {
            // Pruning before the plan: the one-message-per-peer algorithms pay O(n) step
            // latencies and O(n) bytes per node; once their bound exceeds the best time they
            // cannot win.
            if (op != collective_op::send_recv) {
                if (peer_bound < 0) peer_bound = peer_transfer_bound(x, p, s);
                if (step_bound<a>(x, p, op) + peer_bound > best_time) return;
            }
        } else if constexpr (D::prune == pruning::derated_bandwidth) {
            // It moves at least the bytes of peer_transfer_bound through each node's NICs, at
            // its derated network rate (ik_net_derated >= ik_net).
            constexpr int derate = net_derate_index<a>();
            static_assert(derate >= 0, "pruning::derated_bandwidth needs a net_bandwidth_factor below 1");
            if (peer_bound < 0) peer_bound = peer_transfer_bound(x, p, s);
            if (peer_bound * (x.ik_net_derated[static_cast<std::size_t>(derate)] / x.ik_net) > best_time) return;
        }
        build_plan_for<a>(in, op, s, best_plan);
        const double t = plan_time(x, best_plan, shape_of(x, best_plan));
        // Ties keep the algorithm listed first in `algorithm` (as a scan in that order would).
        const bool better = t < best_time || (t == best_time && a < chosen);
        chosen = better ? a : chosen;
        best_time = better ? t : best_time;
    };
    // In the order of automatic_candidates.
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (consider.template operator()<automatic_candidates[I]>(), ...);
    }(std::make_index_sequence<automatic_candidates.size()>{});
    return {chosen, best_time};
}
}  // namespace detail

/// @brief Predicted time of one collective `op` on `bytes` (nccl-tests size) over the ranks `g`
/// of cluster `c`. Closed forms per algorithm in collective/algorithms/; ideal or realistic costs per
/// `opt.mode` (see file comment). `automatic` keeps the fastest applicable algorithm among
/// `opt.candidates` (default: those NCCL implements for `op`; see algorithm_set) (ties: the
/// first in `algorithm` order); it skips, without building their plans, the one-message-per-peer
/// algorithms whose exact lower bound (step latencies plus the bytes every one of them moves)
/// already exceeds the best time, and works out the latency/transfer split and the bottleneck
/// for the winner only. One rank or zero bytes cost zero. On a cluster whose NVLink domain spans
/// nodes (`cluster::scale_up_domain`, e.g. an NVL72 rack of 4-GPU trays) the group is placed on
/// `comm_view(c)`: `g.ranks_per_node` counts ranks per NVLink domain, every rank of a domain
/// reaches the others over NVLink (NVLS inside it), and a group spanning domains crosses the
/// NICs. Allocation-free; throws input_error
/// for an invalid placement, size, or an algorithm that does not apply (naming why).
[[nodiscard]] inline collective_result predict_collective(const cluster& c, const placement& g, collective_op op,
                                                          data_size bytes, const collective_options& opt = {}) {
    // An NVLink domain spanning nodes (NVL72): one node of the model per domain (comm_view).
    if (c.domain_spans_nodes()) return predict_collective(comm_view(c), g, op, bytes, opt);
    const int nodes = detail::check_inputs(c, g, bytes);
    if (opt.algo != algorithm::automatic && !detail::applies(c, g, op, opt.algo))
        detail::throw_inapplicable(opt.algo, op);
    const double s = bytes.value();
    if (g.ranks <= 1 || s <= 0) {
        const algorithm a = opt.algo != algorithm::automatic ? opt.algo
                            : op == collective_op::send_recv ? algorithm::direct
                                                             : algorithm::ring;
        return collective_result{.op = op, .algo = a, .ranks = g.ranks, .nodes = nodes, .bytes = bytes,
                                 .time = seconds(0), .latency = seconds(0), .transfer = seconds(0),
                                 .algbw = bytes_per_second(0), .busbw = bytes_per_second(0),
                                 .bottleneck = bottleneck_kind::none, .bottleneck_link = {}, .sharing = 1,
                                 .proto = protocol::simple};
    }

    const detail::group_path p = detail::make_path(c, g, nodes);
    const detail::rate_context x = detail::make_context(c, p, s, opt.mode);
    detail::phase_plan best_plan;
    algorithm chosen = opt.algo;
    if (opt.algo == algorithm::automatic) chosen = detail::choose_algorithm(c, p, x, op, s, opt, best_plan).first;
    detail::build_plan(c, p, op, chosen, s, best_plan);
    const detail::evaluation best = detail::evaluate(x, best_plan);
    if (!std::isfinite(best.time()) || best.latency < 0 || best.transfer < 0)
        throw input_error("cluster.calibration", detail::number_text(best.time()) + " s predicted",
                          "finite, non-negative comm_params (latencies >= 0, efficiencies and fractions > 0)");
    const detail::verdict v = detail::classify(x, best_plan, best);
    std::string_view limiting;
    switch (v.kind) {
        case bottleneck_kind::intra_link: limiting = c.node.intra.name; break;
        case bottleneck_kind::nic:
        case bottleneck_kind::spine:
        case bottleneck_kind::server_nic: limiting = c.node.inter.name; break;
        case bottleneck_kind::switch_reduction: limiting = detail::switch_reduction_link(c, p.nodes, chosen); break;
        default: break;
    }
    // Built once, every field set (no zeroing of the result first).
    const duration t = seconds(best.time());
    const byte_rate alg = algbw(bytes, t);
    const double share = (static_cast<double>(p.n) - 1.0) * p.inv_n;  // (n-1)/n, by the 1/n at hand
    return collective_result{.op = op, .algo = chosen, .ranks = g.ranks, .nodes = p.nodes, .bytes = bytes,
                             .time = t, .latency = seconds(best.latency), .transfer = seconds(best.transfer),
                             .algbw = alg, .busbw = detail::busbw_factor_of_share(op, share) * alg,
                             .bottleneck = v.kind, .bottleneck_link = limiting, .sharing = v.sharing,
                             .proto = best.proto};
}

namespace detail {
/// The automatic choice's time of a checked collective of `bytes` > 0 over path `p` under
/// context `x`: the fastest candidate's plan_time; a time that is not finite and non-negative is
/// rethrown as predict_collective's error.
[[nodiscard]] inline duration automatic_time(const cluster& c, const group_path& p, const rate_context& x, const placement& g,
                                             collective_op op, data_size bytes, const collective_options& opt) {
    phase_plan scratch;
    const double t = choose_algorithm(c, p, x, op, bytes.value(), opt, scratch).second;
    if (!(t >= 0) || !std::isfinite(t)) return predict_collective(c, g, op, bytes, opt).time;  // throws its error
    return seconds(t);
}
}  // namespace detail

/// @brief predict_collective(c, g, op, bytes, opt).time alone, without building the result's
/// latency/transfer split, protocol and bottleneck: what the step predictor prices with. Same
/// checks and errors, the same time to the bit (the fastest candidate's plan_time is the time
/// evaluate gives its rebuilt plan).
[[nodiscard]] inline duration predict_collective_time(const cluster& c, const placement& g, collective_op op,
                                                      data_size bytes, const collective_options& opt = {}) {
    if (opt.algo != algorithm::automatic) return predict_collective(c, g, op, bytes, opt).time;
    if (c.domain_spans_nodes()) return predict_collective_time(comm_view(c), g, op, bytes, opt);
    const int nodes = detail::check_inputs(c, g, bytes);
    const double s = bytes.value();
    if (g.ranks <= 1 || s <= 0) return seconds(0);
    const detail::group_path p = detail::make_path(c, g, nodes);
    return detail::automatic_time(c, p, detail::make_context(c, p, s, opt.mode), g, op, bytes, opt);
}

namespace detail {
/// rate_base of a cluster whose scale-up domain is its node (comm_view's), from the path every
/// group of it shares the link classes and latencies of.
[[nodiscard]] inline rate_base make_rate_base(const cluster& c) {
    group_path p;  // what make_rate_base reads of a path: its links (make_path's other fields unset)
    set_path_links(c, p);
    return make_rate_base(c, p);
}

/// collective_time_on_base once the placement `g` and `bytes` were checked (check_inputs, or
/// check_bytes for a placement checked before) and its path built: the time over path `p`.
[[nodiscard]] inline duration collective_time_on_path(const cluster& c, const rate_base& base, const group_path& p,
                                                     const placement& g, collective_op op, data_size bytes,
                                                     const collective_options& opt) {
    const double s = bytes.value();
    if (g.ranks <= 1 || s <= 0) return seconds(0);
    return automatic_time(c, p, finish_context(base, p, s), g, op, bytes, opt);
}

/// predict_collective_time in realistic mode with the automatic choice, on a cluster whose domain
/// is its node, with `base` = make_rate_base(c) computed once: the same checks and the same time
/// to the bit (make_context is finish_context of the same base).
[[nodiscard]] inline duration collective_time_on_base(const cluster& c, const rate_base& base, const placement& g, collective_op op,
                                                     data_size bytes, const collective_options& opt) {
    const int nodes = check_inputs(c, g, bytes);
    return collective_time_on_path(c, base, make_path(c, g, nodes), g, op, bytes, opt);
}
}  // namespace detail

/// @brief The limiting resource in words, e.g. "inter-node NIC ib-hdr-4x shared by 2 GPUs",
/// "intra-node link nvlink3", "spine (oversubscribed) behind NIC ib-ndr-4x",
/// "parameter-server NIC ib-ndr-4x (fan-in)", "latency (message too small to fill the links)",
/// "in-switch reduction on nvlink4", "none (single rank or empty buffer)".
[[nodiscard]] inline std::string describe_bottleneck(const collective_result& r) {
    const std::string link(r.bottleneck_link);
    switch (r.bottleneck) {
        case bottleneck_kind::none: return "none (single rank or empty buffer)";
        case bottleneck_kind::latency: return "latency (message too small to fill the links)";
        case bottleneck_kind::intra_link: return "intra-node link " + link;
        case bottleneck_kind::nic: {
            std::string s = "inter-node NIC " + link;
            if (r.sharing > 1) s += " shared by " + std::to_string(r.sharing) + " GPUs";
            return s;
        }
        case bottleneck_kind::spine: {
            std::string s = "spine (oversubscribed) behind NIC " + link;
            if (r.sharing > 1) s += " shared by " + std::to_string(r.sharing) + " GPUs";
            return s;
        }
        case bottleneck_kind::server_nic: return "parameter-server NIC " + link + " (fan-in from every worker)";
        case bottleneck_kind::switch_reduction: return "in-switch reduction on " + link;
    }
    return "unknown";
}

}  // namespace commscale
