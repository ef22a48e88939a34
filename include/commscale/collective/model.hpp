#pragma once
/// @file collective/model.hpp
/// @brief The collective cost model: `predict_collective(cluster, placement, op, bytes, options)`
/// gives the time of one collective on a group of ranks placed on a cluster, with the algorithm,
/// the latency/transfer split, nccl-tests algbw/busbw and the resource that limited it.
///
/// Every algorithm is a closed-form alpha-beta cost evaluated on the path each of its steps uses:
/// the GPU's scale-up port (whole complement on a switch; only the links to the group's peers on a
/// mesh), the NIC (its per-direction bandwidth split among the group's GPUs that drive it), and the
/// spine (NIC bandwidth divided by the oversubscription once the group spans more nodes than one
/// leaf holds). An algorithm is a sequence of at most three phases; inside a phase the intra-node
/// and inter-node parts are pipelined (time = max), phases run one after another (times add).
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
/// Not modelled (stated so that nobody relies on it): PCIe locality between GPUs and NICs (a
/// GPU far from its NIC staging through host memory; `node_spec::gpudirect_rdma` is not used),
/// cross-rail traffic (`cluster::rail_optimized`: NCCL's PXN keeps inter-node traffic on rails,
/// so rails change nothing here), congestion between concurrent collectives, and compute of the
/// reduction itself.

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../hardware/comm_params.hpp"
#include "../hardware/topology.hpp"
#include "../units.hpp"
#include "types.hpp"

namespace commscale {

/// @brief Options of one prediction.
struct collective_options {
    algorithm algo = algorithm::automatic;
    efficiency_mode mode = efficiency_mode::realistic;
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

inline constexpr std::array<std::string_view, 7> op_names{
    "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all", "send_recv"};
inline constexpr std::array<std::string_view, algorithm_count> algorithm_names{
    "auto", "ring", "tree", "double_binary_tree", "parameter_server", "direct", "halving_doubling",
    "hierarchical", "nvls", "parameter_server_sharded"};

/// @brief CLI/JSON spelling of an operation: "all_reduce", ..., "send_recv" (nccl-tests naming).
[[nodiscard]] constexpr std::string_view op_name(collective_op op) {
    return op_names[static_cast<std::size_t>(op)];
}

/// @brief CLI/JSON spelling of an algorithm: "auto", "ring", "tree", ...
[[nodiscard]] constexpr std::string_view algorithm_name(algorithm a) {
    return algorithm_names[static_cast<std::size_t>(a)];
}

/// @brief Parses an operation name (also accepts '-' for '_'); throws input_error with suggestions.
[[nodiscard]] inline collective_op parse_op(std::string_view s, std::string_view field = "op") {
    std::string t(s);
    std::replace(t.begin(), t.end(), '-', '_');
    for (std::size_t i = 0; i < op_names.size(); ++i)
        if (t == op_names[i]) return static_cast<collective_op>(i);
    throw unknown_name(std::string(field), s, op_names);
}

/// @brief Parses an algorithm name ("auto" or "automatic" for the automatic choice; '-' for '_');
/// throws input_error with suggestions.
[[nodiscard]] inline algorithm parse_algorithm(std::string_view s, std::string_view field = "algo") {
    std::string t(s);
    std::replace(t.begin(), t.end(), '-', '_');
    if (t == "automatic") return algorithm::automatic;
    for (std::size_t i = 0; i < algorithm_names.size(); ++i)
        if (t == algorithm_names[i]) return static_cast<algorithm>(i);
    throw unknown_name(std::string(field), s, algorithm_names);
}

/// @brief nccl-tests bus-bandwidth factor (nccl-tests doc/PERFORMANCE.md): all_reduce 2(n-1)/n;
/// reduce_scatter, all_gather, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
/// busbw = algbw x factor is the per-rank link traffic rate of a ring, comparable across n.
[[nodiscard]] constexpr double busbw_factor(collective_op op, int n) {
    if (n < 1) return 0.0;
    const double nd = static_cast<double>(n);
    switch (op) {
        case collective_op::all_reduce: return 2.0 * (nd - 1.0) / nd;
        case collective_op::reduce_scatter:
        case collective_op::all_gather:
        case collective_op::all_to_all: return (nd - 1.0) / nd;
        case collective_op::broadcast:
        case collective_op::reduce:
        case collective_op::send_recv: return 1.0;
    }
    return 1.0;
}

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

/// The physical path a group of ranks uses: bandwidths per direction, sharing, latency classes.
struct group_path {
    int n = 1;               ///< ranks
    int nodes = 1;           ///< nodes spanned
    int r = 1;               ///< ranks per node (the fullest node)
    int sharing = 1;         ///< group GPUs attached to one NIC
    int nics_used = 1;       ///< NICs of one node the group's GPUs attach to
    int nics_per_gpu = 1;    ///< NICs each GPU owns when a node has more NICs than GPUs
    double spine = 1.0;      ///< oversubscription applied to NIC bandwidth (1 inside one leaf)
    double intra_group = 0;  ///< B/s: one GPU to the rest of the group (all usable scale-up links)
    double intra_peer = 0;   ///< B/s: one GPU to one peer
    double nic = 0;          ///< B/s: one NIC after the spine factor
    link_class ci = link_class::nvlink, cn = link_class::net;
    double alpha_intra = 0, alpha_net = 0;  ///< s: published link latencies (ideal mode)
};

/// Ranks of a placement that share one NIC: GPUs o, o+s, o+2s, ... (stride s) on NICs of
/// `per_nic` consecutive GPUs.
[[nodiscard]] constexpr int group_sharing(int r, int stride, int per_nic) {
    if (stride >= per_nic) return 1;
    return std::min(r, (per_nic + stride - 1) / stride);
}

[[nodiscard]] inline group_path make_path(const cluster& c, const placement& g) {
    group_path p;
    p.n = g.ranks;
    p.nodes = g.nodes();
    p.r = std::min(g.ranks_per_node, g.ranks);
    const node_spec& nd = c.node;
    const double complement = nd.intra.per_direction.value();
    switch (nd.fabric) {
        case intra_fabric::switched:
            // NVSwitch: every GPU reaches every peer at its full complement.
            p.intra_group = p.intra_peer = complement;
            p.ci = class_of(nd.intra);
            break;
        case intra_fabric::mesh: {
            // Point-to-point: 1/(G-1) of the complement per peer; multi-channel algorithms use the
            // links to all r-1 peers of the group at once.
            const double peers = nd.gpus > 1 ? static_cast<double>(nd.gpus - 1) : 1.0;
            p.intra_peer = complement / peers;
            p.intra_group = p.r > 1 ? complement * static_cast<double>(p.r - 1) / peers : complement;
            p.ci = class_of(nd.intra);
            break;
        }
        case intra_fabric::pcie:
            // Each GPU's PCIe link (through PCIe switches; staged through host memory without
            // peer-to-peer, which keeps each byte once per direction on each GPU's link).
            p.intra_group = p.intra_peer = complement;
            p.ci = link_class::pci;
            break;
    }
    p.cn = class_of(nd.inter);
    const int per_nic = nd.gpus_per_nic();
    p.sharing = group_sharing(p.r, std::max(1, g.stride), per_nic);
    p.nics_per_gpu = nd.nics > nd.gpus ? nd.nics / nd.gpus : 1;
    p.nics_used = std::max(1, std::min(std::max(1, nd.nics), (p.r + p.sharing - 1) / p.sharing * p.nics_per_gpu));
    p.spine = p.nodes > c.nodes_per_leaf ? c.oversubscription : 1.0;
    p.nic = nd.inter.per_direction.value() / p.spine;
    p.alpha_intra = nd.intra.latency ? nd.intra.latency->value() : 0.0;
    p.alpha_net = nd.inter.latency ? nd.inter.latency->value() : 0.0;
    return p;
}

/// One phase of an algorithm: intra-node and inter-node parts pipelined, in bytes per direction on
/// the busiest port of each kind and the bandwidth that port gives.
struct phase {
    double w_intra = 0, b_intra = 1;  ///< bytes, B/s
    double w_net = 0, b_net = 1;      ///< bytes, B/s
    int steps_intra = 0, steps_net = 0;
    bool intra_switch = false;        ///< intra part reduced in the switch (NVLS)
    bool net_switch = false;          ///< net part reduced in the network (SHARP)
    bottleneck_kind net_kind = bottleneck_kind::nic;
    int net_sharing = 1;
};

/// An algorithm on a path: up to three phases run one after another.
struct plan {
    std::array<phase, 3> ph{};
    int count = 0;
    phase& add() { return ph[static_cast<std::size_t>(count++)]; }
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

/// Whether `a` is defined for `op` on this cluster and group (automatic excluded).
[[nodiscard]] constexpr bool applies(const cluster& c, const placement& g, collective_op op, algorithm a) {
    using o = collective_op;
    const bool reduce_like = op == o::all_reduce || op == o::reduce || op == o::broadcast;
    switch (a) {
        case algorithm::automatic: return true;
        case algorithm::ring: return op != o::send_recv;
        case algorithm::tree:
        case algorithm::double_binary_tree: return reduce_like;
        case algorithm::parameter_server: return reduce_like;
        case algorithm::parameter_server_sharded:
            return op == o::all_reduce || op == o::reduce_scatter || op == o::all_gather;
        case algorithm::direct: return true;
        case algorithm::halving_doubling:
            return op == o::all_reduce || op == o::reduce_scatter || op == o::all_gather;
        case algorithm::hierarchical: return op == o::all_reduce;
        case algorithm::nvls: {
            const bool in_switch = c.node.in_switch_reduction && std::min(g.ranks_per_node, g.ranks) > 1;
            if (op == o::all_reduce) return in_switch || (g.nodes() > 1 && c.in_network_reduction);
            return (op == o::reduce_scatter || op == o::all_gather) && in_switch && g.nodes() == 1;
        }
    }
    return false;
}

/// The phases of algorithm `a` for `op` on path `p`, for a buffer of `s` bytes (nccl-tests size).
/// Formulas (bytes per direction on the busiest port; n ranks, N nodes, r per node):
/// * ring (Patarasuk & Yuan 2009; NCCL): all_reduce 2(n-1)/n S in 2(n-1) steps; reduce_scatter /
///   all_gather (n-1)/n S in n-1 steps; broadcast / reduce pipelined chain S in n-1 steps;
///   all_to_all S(n-1)/2 (each 1/n travels 1..n-1 hops). Inter-node: the node's NICs carry one
///   rank's traffic, split among the GPUs sharing each NIC (each local GPU is a ring boundary for
///   some channels and the NIC's capacity is divided among them).
/// * tree / double_binary_tree (NCCL: intra-node chain + inter-node binary tree; Sanders,
///   Speck & Traeff 2009 for the double tree), pipelined reduce up + broadcast down: chain
///   port 2S (S for r = 2); node NICs S for N = 2, else 3S (single tree: two children + parent)
///   or 2S (double tree: each node interior in one tree only).
/// * parameter_server: the server (rank 0) receives (n-1) S through its own port and NIC.
///   parameter_server_sharded: every rank owns S/n: push then pull, (n-1)/n S each.
/// * direct: one-shot; all_reduce reads (n-1) S; reduce_scatter / all_gather / all_to_all
///   (n-1)/n S; broadcast / reduce (n-1) S at the root. The transfers to the n-1 peers share the
///   wire concurrently, but each is a message of its own: n-1 step latencies (same for the
///   parameter servers: one message per worker and direction).
/// * halving_doubling (Thakur, Rabenseifner & Gropp 2005): log2 p exchanges with S/2, S/4, ...
///   nearest peers first (inside the node), a fold/unfold of S when n is not a power of two.
/// * hierarchical: intra reduce-scatter (r-1)/r S, inter all-reduce 2(N-1)/N S/r per GPU over its
///   NIC share, intra all-gather (r-1)/r S.
/// * nvls (NVLink SHARP, NVIDIA Hopper whitepaper): the switch reduces; per GPU port
///   (r+1)/r S for all_reduce (S out for the reduce, S/r back; S/r out, S back for the multicast);
///   S for reduce_scatter / all_gather. Multi-node: SHARP all-reduce moves S per node, otherwise a
///   ring of 2(N-1)/N S among nodes.
[[nodiscard]] inline plan make_plan(const cluster& c, const group_path& p, collective_op op, algorithm a,
                                    double s) {
    using o = collective_op;
    plan pl;
    const int n = p.n, N = p.nodes, r = p.r;
    const double nd = n, Nd = N, rd = r;
    const bool multi = N > 1;
    const double node_net = static_cast<double>(p.nics_used) * p.nic;  // a node's NICs used by the group
    const double own_net = p.nic * static_cast<double>(p.nics_per_gpu);  // one GPU's NIC(s), unshared
    const double gpu_net = own_net / static_cast<double>(p.sharing);     // one GPU's share of its NIC
    const bottleneck_kind nk = p.spine > 1.0 ? bottleneck_kind::spine : bottleneck_kind::nic;
    auto set_net = [&](phase& ph, double w, double b, int steps, int sharing) {
        if (!multi) return;
        ph.w_net = w;
        ph.b_net = b;
        ph.steps_net = steps;
        ph.net_kind = nk;
        ph.net_sharing = sharing;
    };
    auto set_intra = [&](phase& ph, double w, double b, int steps) {
        if (r < 2) return;
        ph.w_intra = w;
        ph.b_intra = b;
        ph.steps_intra = steps;
    };
    switch (a) {
        case algorithm::automatic:
        case algorithm::ring: {
            phase& ph = pl.add();
            double w = 0;
            int steps = 0, net_steps = 0;
            switch (op) {
                case o::all_reduce: w = 2.0 * (nd - 1.0) / nd * s; steps = 2 * (n - 1); net_steps = 2 * (N - 1); break;
                case o::reduce_scatter:
                case o::all_gather: w = (nd - 1.0) / nd * s; steps = n - 1; net_steps = N - 1; break;
                case o::broadcast:
                case o::reduce: w = s; steps = n - 1; net_steps = N - 1; break;
                case o::all_to_all: w = s * (nd - 1.0) / 2.0; steps = n - 1; net_steps = N - 1; break;
                case o::send_recv: w = s; steps = 1; net_steps = multi ? 1 : 0; break;
            }
            // NCCL's split of ring steps: the inter-node ones, the rest inside nodes.
            set_intra(ph, w, p.intra_group, steps - (multi ? net_steps : 0));
            set_net(ph, w, node_net / static_cast<double>(p.sharing), net_steps, p.sharing);
            break;
        }
        case algorithm::tree:
        case algorithm::double_binary_tree: {
            phase& ph = pl.add();
            const bool dbl = a == algorithm::double_binary_tree;
            const int lg = ceil_log2(N);
            if (op == o::all_reduce) {
                const double chain = r >= 3 ? 2.0 : 1.0;
                const double up = N <= 1 ? 0.0 : N == 2 ? 1.0 : (dbl ? 2.0 : (N == 3 ? 2.0 : 3.0));
                set_intra(ph, chain * s, p.intra_group, 2 * (r - 1));
                set_net(ph, up * s, node_net, 2 * lg, 1);
            } else {  // broadcast, reduce: one direction of the above
                const double up = N <= 1 ? 0.0 : N == 2 ? 1.0 : (dbl ? 1.0 : 2.0);
                set_intra(ph, s, p.intra_group, r - 1);
                set_net(ph, up * s, node_net, lg, 1);
            }
            break;
        }
        case algorithm::parameter_server: {
            phase& ph = pl.add();
            // One message per worker and direction (push, and pull for all_reduce).
            const int dirs = op == o::all_reduce ? 2 : 1;
            set_intra(ph, (rd - 1.0) * s, p.intra_group, dirs * (r - 1));
            if (multi) {
                // Server NIC fan-in (n - r remote workers) vs a worker node pushing r buffers.
                const double t_server = (nd - rd) * s / own_net, t_workers = rd * s / node_net;
                if (t_server >= t_workers) {
                    set_net(ph, (nd - rd) * s, own_net, dirs * (n - r), 1);
                    ph.net_kind = bottleneck_kind::server_nic;
                } else {
                    set_net(ph, rd * s, node_net, dirs * (n - r), p.sharing);
                }
            }
            break;
        }
        case algorithm::parameter_server_sharded: {
            const int phases = op == o::all_reduce ? 2 : 1;
            for (int i = 0; i < phases; ++i) {
                phase& ph = pl.add();
                set_intra(ph, (rd - 1.0) / nd * s, p.intra_group, r - 1);
                set_net(ph, rd * (nd - rd) / nd * s, node_net, n - r, p.sharing);
            }
            break;
        }
        case algorithm::direct: {
            phase& ph = pl.add();
            switch (op) {
                case o::all_reduce:
                    set_intra(ph, (rd - 1.0) * s, p.intra_group, r - 1);
                    set_net(ph, rd * (nd - rd) * s, node_net, n - r, p.sharing);
                    break;
                case o::reduce_scatter:
                case o::all_gather:
                case o::all_to_all:
                    set_intra(ph, (rd - 1.0) / nd * s, p.intra_group, r - 1);
                    set_net(ph, rd * (nd - rd) / nd * s, node_net, n - r, p.sharing);
                    break;
                case o::broadcast:
                case o::reduce:
                    set_intra(ph, (rd - 1.0) * s, p.intra_group, r - 1);
                    set_net(ph, (nd - rd) * s, own_net, n - r, 1);
                    break;
                case o::send_recv:
                    set_intra(ph, s, p.intra_peer, 1);
                    set_net(ph, s, own_net, 1, 1);
                    break;
            }
            break;
        }
        case algorithm::halving_doubling: {
            const int reps = op == o::all_reduce ? 2 : 1;  // reduce-scatter then all-gather
            const int lgp = floor_log2(n);
            const int pw = 1 << lgp;
            double wi = 0, wn = 0;
            int si = 0, sn = 0;
            for (int k = 0; k < lgp; ++k) {
                const double w = s / static_cast<double>(2 << k);
                if ((1 << k) < r) { wi += w; ++si; } else { wn += w; ++sn; }
            }
            phase& a1 = pl.add();
            set_intra(a1, reps * wi, p.intra_peer, reps * si);
            if (sn > 0) {
                phase& a2 = pl.add();
                set_net(a2, reps * wn, gpu_net, reps * sn, p.sharing);
            }
            if (pw != n) {  // fold the extra ranks in (and out again for all_reduce)
                phase& a3 = pl.add();
                if (r >= 2) set_intra(a3, reps * s, p.intra_peer, reps);
                else set_net(a3, reps * s, own_net, reps, 1);
            }
            break;
        }
        case algorithm::hierarchical: {
            phase& a1 = pl.add();
            set_intra(a1, 2.0 * (rd - 1.0) / rd * s, p.intra_group, 2 * (r - 1));
            phase& a2 = pl.add();
            set_net(a2, 2.0 * (Nd - 1.0) / Nd * s / rd, node_net / rd, 2 * (N - 1), p.sharing);
            break;
        }
        case algorithm::nvls: {
            phase& ph = pl.add();
            const bool in_switch = c.node.in_switch_reduction && r > 1;
            if (op == o::all_reduce) {
                if (in_switch) {
                    set_intra(ph, (rd + 1.0) / rd * s, p.intra_group, 2);
                    ph.intra_switch = true;
                } else {
                    set_intra(ph, 2.0 * (rd - 1.0) / rd * s, p.intra_group, 2 * (r - 1));
                }
                if (c.in_network_reduction) {
                    set_net(ph, s, node_net, 2, 1);
                    ph.net_switch = true;
                } else {
                    set_net(ph, 2.0 * (Nd - 1.0) / Nd * s, node_net, 2 * (N - 1), 1);
                }
            } else {
                set_intra(ph, s, p.intra_group, 1);
                ph.intra_switch = true;
            }
            break;
        }
    }
    return pl;
}

/// Saturation of a link class at `m` bytes per rank: 1 / (1 + (half_size / m)^exponent).
[[nodiscard]] inline double saturation(const link_class_params& k, double m) {
    const double h = k.half_size.value();
    if (!(h > 0.0)) return 1.0;
    if (!(m > 0.0)) return 0.0;
    const double x = h / m;
    double y;
    if (k.exponent == 0.5) y = std::sqrt(x);
    else if (k.exponent == 1.0) y = x;
    else y = std::pow(x, k.exponent);
    return 1.0 / (1.0 + y);
}

/// Per-prediction constants of the cost layer (everything that does not depend on the algorithm).
/// Ideal mode: one "protocol" with the published link latencies and datasheet peaks.
struct rate_context {
    int protocols = 1;
    std::array<double, protocol_count> base{}, step_intra{}, step_net{}, fraction{1.0, 1.0, 1.0}, cap{};
    double k_intra = 1.0, k_net = 1.0;  ///< bandwidth multipliers: efficiency x saturation
    double nvls = 1.0, sharp = 1.0;     ///< in-switch / in-network reduction efficiencies
    bool capped = false;
};

[[nodiscard]] inline rate_context make_context(const cluster& c, const group_path& p, double s, efficiency_mode mode) {
    rate_context x;
    if (mode == efficiency_mode::ideal) {
        x.step_intra[0] = p.alpha_intra;
        x.step_net[0] = p.alpha_net;
        return x;
    }
    const comm_params& cp = c.comm;
    const link_class_params& ki = cp.of(p.ci);
    const link_class_params& kn = cp.of(p.cn);
    x.protocols = static_cast<int>(protocol_count);
    // Saturation depends on each rank's share of the buffer, not on the protocol or algorithm.
    const double share = s / static_cast<double>(p.n);
    x.k_intra = ki.efficiency * saturation(ki, share);
    x.k_net = kn.efficiency * saturation(kn, share);
    x.nvls = cp.nvls_efficiency;
    x.sharp = cp.sharp_efficiency;
    for (std::size_t q = 0; q < protocol_count; ++q) {
        x.base[q] = cp.base_latency[q].value();
        // A protocol step is never faster than the port's published latency.
        x.step_intra[q] = std::max(ki.step_latency[q].value(), p.alpha_intra);
        x.step_net[q] = std::max(kn.step_latency[q].value(), p.alpha_net);
        x.fraction[q] = cp.protocol_bandwidth[q];
        if (cp.channels > 0 && cp.channel_bandwidth[q].value() > 0) {
            x.cap[q] = static_cast<double>(cp.channels) * cp.channel_bandwidth[q].value();
            x.capped = true;
        }
    }
    return x;
}

/// Time of a plan under a context: latency, transfer and the protocol kept.
struct evaluation {
    double latency = 0, transfer = 0;
    protocol proto = protocol::simple;
    [[nodiscard]] double time() const { return latency + transfer; }
};

/// Effective bandwidths of one phase's parts (B/s), protocol fraction excluded.
[[nodiscard]] inline double intra_rate(const rate_context& x, const phase& ph) {
    return ph.b_intra * x.k_intra * (ph.intra_switch ? x.nvls : 1.0);
}
[[nodiscard]] inline double net_rate(const rate_context& x, const phase& ph) {
    return ph.b_net * x.k_net * (ph.net_switch ? x.sharp : 1.0);
}

[[nodiscard]] inline evaluation evaluate(const rate_context& x, const plan& pl) {
    double steps_i = 0, steps_n = 0, t0 = 0;
    for (int i = 0; i < pl.count; ++i) {
        const phase& ph = pl.ph[static_cast<std::size_t>(i)];
        steps_i += ph.steps_intra;
        steps_n += ph.steps_net;
        const double ti = ph.w_intra > 0 ? ph.w_intra / intra_rate(x, ph) : 0.0;
        const double tn = ph.w_net > 0 ? ph.w_net / net_rate(x, ph) : 0.0;
        t0 += std::max(ti, tn);
    }
    evaluation best;
    double best_time = -1;
    for (std::size_t q = 0; q < static_cast<std::size_t>(x.protocols); ++q) {
        const double lat = x.base[q] + steps_i * x.step_intra[q] + steps_n * x.step_net[q];
        double tr = t0 / x.fraction[q];
        if (x.capped && x.cap[q] > 0) {  // per-channel cap: re-evaluate the parts with it
            tr = 0;
            for (int i = 0; i < pl.count; ++i) {
                const phase& ph = pl.ph[static_cast<std::size_t>(i)];
                const double bi = std::min(intra_rate(x, ph) * x.fraction[q], x.cap[q]);
                const double bn = std::min(net_rate(x, ph) * x.fraction[q], x.cap[q]);
                tr += std::max(ph.w_intra > 0 ? ph.w_intra / bi : 0.0, ph.w_net > 0 ? ph.w_net / bn : 0.0);
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

/// What limited a plan: the part with the largest share of the transfer time, or the latency.
struct verdict {
    bottleneck_kind kind = bottleneck_kind::none;
    int sharing = 1;
};

[[nodiscard]] inline verdict classify(const rate_context& x, const plan& pl, const evaluation& e) {
    verdict v;
    double worst = 0;
    for (int i = 0; i < pl.count; ++i) {
        const phase& ph = pl.ph[static_cast<std::size_t>(i)];
        const double ti = ph.w_intra > 0 ? ph.w_intra / intra_rate(x, ph) : 0.0;
        const double tn = ph.w_net > 0 ? ph.w_net / net_rate(x, ph) : 0.0;
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

[[noreturn]] inline void bad_placement(const char* field, long long v, const std::string& expected) {
    throw input_error(std::string("placement.") + field, std::to_string(v), expected);
}

/// Validation without allocation on the success path.
inline void check_inputs(const cluster& c, const placement& g, data_size bytes) {
    if (g.ranks < 1 || g.ranks > 100'000'000) bad_placement("ranks", g.ranks, "an integer in [1, 100000000]");
    if (g.ranks_per_node < 1 || g.ranks_per_node > c.node.gpus)
        bad_placement("ranks_per_node", g.ranks_per_node,
                      "an integer in [1, " + std::to_string(c.node.gpus) + "] (GPUs per node)");
    if (g.stride < 1 || static_cast<long long>(g.stride) * (std::min(g.ranks_per_node, g.ranks) - 1) >= c.node.gpus)
        bad_placement("stride", g.stride,
                      "an integer >= 1 with stride x (ranks_per_node - 1) < " + std::to_string(c.node.gpus) +
                          " (GPUs per node)");
    if (g.nodes() > c.nodes)
        bad_placement("ranks", g.ranks,
                      "at most " + std::to_string(static_cast<long long>(c.nodes) * g.ranks_per_node) +
                          " ranks (" + std::to_string(c.nodes) + " nodes x " + std::to_string(g.ranks_per_node) +
                          " per node)");
    const double b = bytes.value();
    if (!std::isfinite(b) || b < 0 || b > 1e18)
        throw input_error("bytes", detail::number_text(b), "a finite size in [0, 1e18] bytes");
    const double bi = c.node.intra.per_direction.value();
    if (std::min(g.ranks_per_node, g.ranks) > 1 && (!std::isfinite(bi) || !(bi > 0)))
        throw input_error("cluster.intra.link", detail::number_text(bi / giga) + " GB/s",
                          "a scale-up link with positive bandwidth");
    const double bn = c.node.inter.per_direction.value();
    if (g.nodes() > 1) {
        if (!std::isfinite(bn) || !(bn > 0))
            throw input_error("cluster.inter.link", detail::number_text(bn / giga) + " GB/s",
                              "a scale-out link with positive bandwidth");
        if (c.node.nics < 1)
            throw input_error("cluster.inter.nics_per_node", std::to_string(c.node.nics),
                              "at least 1 NIC per node when the group spans nodes");
        if (!(c.oversubscription >= 1.0) || !std::isfinite(c.oversubscription))
            throw input_error("cluster.inter.oversubscription", detail::number_text(c.oversubscription),
                              "a ratio >= 1 (1 = non-blocking, 7 = 7:1)");
    }
}

}  // namespace detail

/// @brief Whether algorithm `a` is defined for `op` on this cluster and group (`automatic` always
/// is). tree / double_binary_tree / parameter_server: all_reduce, broadcast, reduce;
/// halving_doubling / parameter_server_sharded: all_reduce, reduce_scatter, all_gather;
/// hierarchical: all_reduce; nvls: needs in-switch (node) or in-network (cluster) reduction;
/// ring: all but send_recv; direct: all.
[[nodiscard]] constexpr bool algorithm_applies(const cluster& c, const placement& g, collective_op op,
                                               algorithm a) {
    return detail::applies(c, g, op, a);
}

/// @brief Predicted time of one collective `op` on `bytes` (nccl-tests size) over the ranks `g`
/// of cluster `c`. Closed forms per algorithm in detail::make_plan; ideal or realistic costs per
/// `opt.mode` (see file comment). `automatic` evaluates every applicable algorithm and keeps the
/// fastest. One rank or zero bytes cost zero. Allocation-free; throws input_error for an invalid
/// placement, size, or an algorithm that does not apply (naming why).
[[nodiscard]] inline collective_result predict_collective(const cluster& c, const placement& g, collective_op op,
                                                          data_size bytes, const collective_options& opt = {}) {
    detail::check_inputs(c, g, bytes);
    if (opt.algo != algorithm::automatic && !detail::applies(c, g, op, opt.algo)) {
        const bool nvls = opt.algo == algorithm::nvls;
        throw input_error("algo", std::string(algorithm_name(opt.algo)),
                          nvls ? "an algorithm this cluster supports: nvls needs in-switch reduction "
                                 "(node.in_switch_reduction, >= 2 ranks per node) or in-network reduction "
                                 "(cluster.in_network_reduction) for all_reduce"
                               : "an algorithm defined for " + std::string(op_name(op)) +
                                     " (see algorithm_applies)");
    }
    collective_result res{.op = op, .algo = opt.algo, .ranks = g.ranks, .nodes = g.nodes(), .bytes = bytes,
                          .time = seconds(0), .latency = seconds(0), .transfer = seconds(0),
                          .algbw = bytes_per_second(0), .busbw = bytes_per_second(0),
                          .bottleneck = bottleneck_kind::none, .bottleneck_link = {}, .sharing = 1};
    if (res.algo == algorithm::automatic)
        res.algo = op == collective_op::send_recv ? algorithm::direct : algorithm::ring;
    const double s = bytes.value();
    if (g.ranks <= 1 || s <= 0) return res;

    const detail::group_path p = detail::make_path(c, g);
    const detail::rate_context x = detail::make_context(c, p, s, opt.mode);
    detail::plan best_plan;
    detail::evaluation best;
    if (opt.algo == algorithm::automatic) {
        double best_time = -1;
        for (int i = 1; i < algorithm_count; ++i) {
            const auto a = static_cast<algorithm>(i);
            if (!detail::applies(c, g, op, a)) continue;
            // Dominated candidates (same steps, never fewer bytes): the single tree by the double
            // tree; for one-to-all / all-to-one the parameter server by direct; for reduce_scatter /
            // all_gather the sharded server is the direct exchange itself.
            if (a == algorithm::tree) continue;
            if (a == algorithm::parameter_server && op != collective_op::all_reduce) continue;
            if (a == algorithm::parameter_server_sharded && op != collective_op::all_reduce) continue;
            const detail::plan pl = detail::make_plan(c, p, op, a, s);
            const detail::evaluation e = detail::evaluate(x, pl);
            if (best_time < 0 || e.time() < best_time) {
                best = e;
                best_plan = pl;
                best_time = e.time();
                res.algo = a;
            }
        }
    } else {
        best_plan = detail::make_plan(c, p, op, opt.algo, s);
        best = detail::evaluate(x, best_plan);
    }
    if (!std::isfinite(best.time()) || best.latency < 0 || best.transfer < 0)
        throw input_error("cluster.calibration", detail::number_text(best.time()) + " s predicted",
                          "finite, non-negative comm_params (latencies >= 0, efficiencies and fractions > 0)");
    const detail::verdict v = detail::classify(x, best_plan, best);
    res.latency = seconds(best.latency);
    res.transfer = seconds(best.transfer);
    res.time = seconds(best.time());
    res.algbw = algbw(bytes, res.time);
    res.busbw = busbw(op, g.ranks, bytes, res.time);
    res.bottleneck = v.kind;
    res.sharing = v.sharing;
    res.proto = best.proto;
    switch (v.kind) {
        case bottleneck_kind::intra_link: res.bottleneck_link = c.node.intra.name; break;
        case bottleneck_kind::nic:
        case bottleneck_kind::spine:
        case bottleneck_kind::server_nic: res.bottleneck_link = c.node.inter.name; break;
        case bottleneck_kind::switch_reduction:
            res.bottleneck_link = p.nodes > 1 && c.in_network_reduction && !c.node.in_switch_reduction
                                      ? c.node.inter.name
                                      : c.node.intra.name;
            break;
        default: break;
    }
    return res;
}

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
