#pragma once
/// @file hardware/topology.hpp
/// @brief Nodes and clusters: how GPUs connect inside a node (switch, mesh, PCIe), which NICs they
/// share, and how nodes connect (scale-out link, oversubscription, rails). Validation throws
/// `input_error` with the field path.

#include <array>
#include <string>
#include <string_view>

#include "../detail/names.hpp"
#include "../error.hpp"
#include "../units/parse.hpp"
#include "comm_params.hpp"
#include "link.hpp"
#include "links.hpp"

namespace commscale {

/// @brief How GPUs inside a node reach each other.
enum class intra_fabric {
    switched,  ///< NVSwitch-style: every GPU reaches every other at its full scale-up bandwidth
    mesh,      ///< point-to-point links between each pair (xGMI, 4-GPU HGX A100): one peer gets 1/(G-1) of the complement
    pcie,      ///< through PCIe switches / host bridge
};

/// @brief CLI/JSON spellings of the intra-node fabrics: `to_string`, `parse<intra_fabric>`.
inline constexpr std::array<name_entry<intra_fabric>, 3> intra_fabric_spellings{{
    {intra_fabric::switched, "switch"},
    {intra_fabric::mesh, "mesh"},
    {intra_fabric::pcie, "pcie"},
}};
static_assert(detail::in_enum_order(intra_fabric_spellings));
[[nodiscard]] constexpr const auto& name_table(intra_fabric) { return intra_fabric_spellings; }

/// @brief Largest cluster sizes validate, the JSON reader and the CLI accept. Generous bounds far
/// beyond any built cluster (the largest published training clusters have ~1e5 GPUs, ~1e4 nodes;
/// the densest nodes 72 GPUs in one NVL72 rack): beyond them a size is a typo, and the products
/// the predictor forms (nodes x GPUs per node, ranks x bytes) stay far inside `int` and finite.
struct cluster_limits {
    /// Nodes in a cluster (`cluster.nodes`, `inter.nodes_per_leaf`, `--nodes`): 1e6, 100x the largest built.
    static constexpr int nodes = 1'000'000;
    /// GPUs in one NVLink domain (`scale_up_domain`): whole nodes, so no more than `nodes` of one GPU.
    static constexpr int scale_up_domain = nodes;
    /// GPUs per node (`gpus_per_node`): 1024, 14x an NVL72 rack counted as one node.
    static constexpr int gpus_per_node = 1024;
    /// NICs per node (`inter.nics_per_node`): as many as GPUs per node.
    static constexpr int nics_per_node = gpus_per_node;
    /// Leaf-to-spine oversubscription (`inter.oversubscription`): 1000:1, far beyond any fabric
    /// built (7:1 is a steep one).
    static constexpr double oversubscription = 1000.0;
    /// A GPU count (the CLI's `--gpus`): 1e9, about `nodes` x `gpus_per_node`.
    static constexpr long long gpus = 1'000'000'000;
    /// Ranks of one collective group (`placement::ranks`): 1e8, a group spanning 100 GPUs of
    /// every one of `nodes` nodes; the collective model's byte and step counts stay finite.
    static constexpr int group_ranks = 100'000'000;
};

/// @brief One node (server): its GPUs, the scale-up fabric among them, and its NICs.
struct node_spec {
    int gpus = 8;                              ///< GPUs per node
    std::string_view accelerator;              ///< accelerator catalog name
    link intra{};                              ///< scale-up link, one GPU's full complement
    intra_fabric fabric = intra_fabric::switched;
    /// The switches of the scale-up fabric reduce in the switch (NVLS): by default where the
    /// fabric is switched and the link's NVLink generation has it (links.hpp
    /// nvlink_switch_reduces: NVLink4 and later), so a preset or a user's node states it only to
    /// override the hardware.
    bool in_switch_reduction = fabric == intra_fabric::switched && nvlink_switch_reduces(intra);
    bool pcie_p2p = true;                      ///< PCIe peer-to-peer between GPUs (fabric == pcie)
    link inter{};                              ///< one NIC (scale-out port)
    int nics = 8;                              ///< NICs per node; GPUs share them evenly (gpus / nics per NIC)
    bool gpudirect_rdma = true;                ///< NIC reads/writes GPU memory directly

    /// @brief GPUs attached to each NIC (at least 1); a node without NICs (one node alone, where
    /// validate allows it) counts all its GPUs on one, so no caller divides by zero.
    [[nodiscard]] constexpr int gpus_per_nic() const {
        if (nics <= 0) return gpus > 1 ? gpus : 1;
        return nics >= gpus ? 1 : (gpus + nics - 1) / nics;
    }
    /// @brief Per-direction scale-out bandwidth of the whole node (all NICs).
    [[nodiscard]] constexpr byte_rate node_injection() const { return static_cast<double>(nics) * inter.per_direction; }
};

/// @brief Training-run calibration of the compute model (`commscale fit-step`,
/// calibrate/fit_step.hpp): scales on the documented efficiencies of predict/compute.hpp
/// (the accelerator's GEMM efficiency, FlashAttention's curve, the memory-bound fraction of HBM
/// bandwidth). 1 = uncalibrated, the documented figures as they are.
struct compute_calibration {
    /// Ranges of the scales (the cluster JSON's `compute_calibration` and fit-step's bounds):
    /// a kernel or attention rate 0.05-1.5x the documented one, the overlap slow-down 0-5x, the
    /// per-kernel overhead 0-20x.
    static constexpr double min_efficiency = 0.05, max_efficiency = 1.5;
    static constexpr double max_overlap_slowdown = 5.0, max_kernel_overhead = 20.0;

    double kernel_efficiency = 1.0;     ///< GEMM, attention and memory-bound kernels alike
    double attention_efficiency = 1.0;  ///< the attention core, on top of kernel_efficiency
    double overlap_slowdown = 1.0;      ///< scale on overlap_compute_slowdown (compute lost beside overlapped comm)
    /// scale on the per-kernel overheads (compute_constants::kernel_overhead_s and
    /// moe_launch_overhead_s): below 1 where a stack hides launches (CUDA graphs), above where its
    /// host is slower
    double kernel_overhead = 1.0;

    [[nodiscard]] constexpr bool is_default() const {
        return kernel_efficiency == 1.0 && attention_efficiency == 1.0 && overlap_slowdown == 1.0 && kernel_overhead == 1.0;
    }
};

/// @brief A cluster of identical nodes on one scale-out fabric.
struct cluster {
    std::string_view name;
    int nodes = 1;
    node_spec node{};
    /// GPUs that share one scale-up (NVLink) fabric. 0, or `node.gpus`, is the node itself; a
    /// multiple of `node.gpus` spans several nodes (compute trays) behind switches, as in an
    /// NVL72 rack (72 GPUs in 18 trays of 4, NVLink switch trays). Only a switched fabric spans
    /// nodes. The collective model and the step placement see such a cluster through
    /// `comm_view` (one "node" per domain).
    int scale_up_domain = 0;
    double oversubscription = 1.0;   ///< leaf-to-spine oversubscription (7.0 means 7:1), >= 1
    /// Leaf downlinks in nodes: a rail-optimized leaf takes NIC i of `nodes_per_leaf` nodes; a
    /// top-of-rack leaf (not rail-optimized) with the same ports takes every NIC of
    /// nodes_per_leaf / NICs-per-node nodes. A group spanning more nodes than one leaf serves
    /// crosses the spine (and its oversubscription).
    int nodes_per_leaf = 32;
    bool rail_optimized = true;      ///< NIC i of every node on rail (leaf) i (vs all NICs of a node on one ToR leaf)
    bool in_network_reduction = false;  ///< SHARP-capable switches (InfiniBand)
    std::string_view source;
    comm_params comm{};              ///< realistic-mode collective parameters (calibration replaces them)
    compute_calibration compute{};   ///< compute-model scales from training runs (fit-step)

    [[nodiscard]] constexpr int total_gpus() const { return nodes * node.gpus; }

    /// @brief Whether the scale-up domain spans several nodes (scale_up_domain > node.gpus).
    [[nodiscard]] constexpr bool domain_spans_nodes() const { return scale_up_domain > node.gpus; }

    /// @brief GPUs one NVLink fabric connects, as communication sees them: `scale_up_domain`
    /// when it spans nodes (never more than the cluster's GPUs: a cluster smaller than one
    /// domain is one partial domain), else the node's GPUs.
    [[nodiscard]] constexpr int domain_gpus() const {
        if (!domain_spans_nodes()) return node.gpus;
        const long long all = static_cast<long long>(nodes) * node.gpus;
        return all < scale_up_domain ? static_cast<int>(all) : scale_up_domain;
    }

    /// Nodes one leaf switch serves: `nodes_per_leaf` when rail-optimized, else
    /// nodes_per_leaf / NICs per node (at least 1).
    [[nodiscard]] constexpr int nodes_under_one_leaf() const {
        if (rail_optimized || node.nics <= 1) return nodes_per_leaf;
        return nodes_per_leaf / node.nics > 1 ? nodes_per_leaf / node.nics : 1;
    }
};

/// @brief The largest cluster a rail-only network (no spine) can connect: rail k is one switch
/// holding NIC k of every node, so a switch of `switch_ports` ports takes `switch_ports` nodes of
/// `rails` GPUs (one NIC per GPU). gpu-fabrics-for-genai (after Wang et al. 2023, "How to Build
/// Low-cost Networks for Large Language Models"): 128-port 400G switches x 8 rails = 1,024 GPUs;
/// beyond that a spine is needed. Throws input_error for counts < 1.
[[nodiscard]] constexpr long long rail_only_max_gpus(int switch_ports, int rails) {
    if (switch_ports < 1)
        throw input_error("switch_ports", std::to_string(switch_ports), "an integer >= 1");
    if (rails < 1) throw input_error("rails", std::to_string(rails), "an integer >= 1");
    return static_cast<long long>(switch_ports) * rails;
}

/// @brief The cluster as communication sees it: one node per scale-up domain. Where the domain
/// is the node (`scale_up_domain` 0 or `node.gpus`) this is `c` itself. Otherwise a node of the
/// view is one domain: `domain_gpus()` GPUs on the same scale-up link and switched fabric (with
/// its in-switch reduction), the NICs of its nodes (`node.nics` x nodes per domain, so GPUs per
/// NIC is unchanged), ceil(nodes / nodes per domain) nodes, and `nodes_per_leaf` counted in
/// domains (at least 1). A last domain the nodes do not fill (a partial rack) is priced like a
/// full one: the collective model prices the fullest node of a group. `placement`s on such a
/// cluster count ranks per domain (`ranks_per_node` = ranks in one NVLink domain), which is what
/// `predict_collective` and `group_placement` (via `domain_gpus()`) use.
[[nodiscard]] constexpr cluster comm_view(const cluster& c) {
    if (!c.domain_spans_nodes() || c.node.gpus < 1) return c;
    cluster v = c;
    const int per_domain = c.scale_up_domain / c.node.gpus;  // nodes (trays) per domain
    const int trays = c.nodes < per_domain ? c.nodes : per_domain;
    v.node.gpus = trays * c.node.gpus;
    v.node.nics = trays * c.node.nics;
    v.nodes = (c.nodes + per_domain - 1) / per_domain;
    v.nodes_per_leaf = c.nodes_per_leaf / per_domain > 1 ? c.nodes_per_leaf / per_domain : 1;
    v.scale_up_domain = 0;
    return v;
}

/// @brief Throws input_error (field path under `where`) if the cluster is not usable.
inline void validate(const cluster& c, std::string_view where = "cluster") {
    // the field's name, built only when throwing (validate runs on every prediction)
    const auto w = [where](const char* suffix) { return std::string(where) + suffix; };
    if (c.nodes < 1 || c.nodes > cluster_limits::nodes)
        detail::fail([&] {
            return input_error(w(".nodes"), std::to_string(c.nodes),
                               "an integer in [1, " + std::to_string(cluster_limits::nodes) + "]");
        });
    if (c.node.gpus < 1 || c.node.gpus > cluster_limits::gpus_per_node)
        detail::fail([&] {
            return input_error(w(".gpus_per_node"), std::to_string(c.node.gpus),
                               "an integer in [1, " + std::to_string(cluster_limits::gpus_per_node) + "]");
        });
    if (c.scale_up_domain != 0 && c.scale_up_domain != c.node.gpus) {
        const bool multiple = c.scale_up_domain > c.node.gpus && c.scale_up_domain % c.node.gpus == 0 &&
                              c.scale_up_domain <= cluster_limits::scale_up_domain;
        if (!multiple)
            detail::fail([&] {
                return input_error(w(".scale_up_domain"), std::to_string(c.scale_up_domain),
                                   "0 (the node) or a multiple of gpus_per_node (" + std::to_string(c.node.gpus) +
                                       ") up to " + std::to_string(cluster_limits::scale_up_domain) +
                                       ": GPUs sharing one NVLink fabric, whole nodes");
            });
        if (c.node.fabric != intra_fabric::switched)
            detail::fail([&] {
                return input_error(w(".scale_up_domain"), std::to_string(c.scale_up_domain),
                                   "0 or " + std::to_string(c.node.gpus) + " (the node) with a " +
                                       std::string(to_string(c.node.fabric)) +
                                       " fabric: only a switched scale-up fabric (NVLink switch) spans nodes");
            });
    }
    if (c.node.nics < 0 || c.node.nics > cluster_limits::nics_per_node)
        detail::fail([&] {
            return input_error(w(".inter.nics_per_node"), std::to_string(c.node.nics),
                               "an integer in [0, " + std::to_string(cluster_limits::nics_per_node) + "]");
        });
    if (c.nodes > 1 && c.node.nics < 1)
        detail::fail([&] {
            return input_error(w(".inter.nics_per_node"), "0", "at least 1 NIC per node when nodes > 1");
        });
    if (!(c.oversubscription >= 1.0) || c.oversubscription > cluster_limits::oversubscription)
        detail::fail([&] {
            return input_error(w(".inter.oversubscription"), detail::number_text(c.oversubscription),
                               "a ratio in [1, 1000] (1 = non-blocking, 7 = 7:1)");
        });
    if (c.nodes_per_leaf < 1)
        detail::fail([&] {
            return input_error(w(".inter.nodes_per_leaf"), std::to_string(c.nodes_per_leaf), "an integer >= 1");
        });
    auto check_link = [&](const link& l, const char* suffix) {
        const double b = l.per_direction.value();
        if (!(b >= min_hardware_rate) || !std::isfinite(b) || b > 1e16)
            detail::fail([&] {
                return input_error(w(suffix), detail::number_text(in_GBps(l.per_direction)) + " GB/s",
                                   "a link of 0.001 GB/s (1 MB/s) to 1e7 GB/s per direction");
            });
        if (l.latency && (!(l.latency->value() >= 0) || l.latency->value() > 1.0))
            detail::fail([&] {
                return input_error(w(suffix), detail::number_text(in_us(*l.latency)) + " us latency", "a latency in [0, 1 s]");
            });
    };
    check_link(c.node.intra, ".intra.link");
    if (c.nodes > 1) check_link(c.node.inter, ".inter.link");
    // compute calibration: a scale within a factor of 20 below and 1.5 above the documented
    // efficiencies (the predictor caps every efficiency at 1)
    if (!(c.compute.kernel_efficiency >= 0.05) || !(c.compute.kernel_efficiency <= 1.5))
        detail::fail([&] {
            return input_error(w(".compute_calibration.kernel_efficiency"), detail::number_text(c.compute.kernel_efficiency),
                               "a scale in [0.05, 1.5] (1 = uncalibrated)");
        });
    if (!(c.compute.attention_efficiency >= 0.05) || !(c.compute.attention_efficiency <= 1.5))
        detail::fail([&] {
            return input_error(w(".compute_calibration.attention_efficiency"),
                               detail::number_text(c.compute.attention_efficiency), "a scale in [0.05, 1.5] (1 = uncalibrated)");
        });
    // the overlapped-communication slowdown: from none to 5x the documented 12% of the hidden time
    if (!(c.compute.overlap_slowdown >= 0.0) || !(c.compute.overlap_slowdown <= 5.0))
        detail::fail([&] {
            return input_error(w(".compute_calibration.overlap_slowdown"), detail::number_text(c.compute.overlap_slowdown),
                               "a scale in [0, 5] (1 = uncalibrated)");
        });
    // the per-kernel overheads: from none (every launch hidden) to 20x the fitted defaults
    if (!(c.compute.kernel_overhead >= 0.0) || !(c.compute.kernel_overhead <= 20.0))
        detail::fail([&] {
            return input_error(w(".compute_calibration.kernel_overhead"), detail::number_text(c.compute.kernel_overhead),
                               "a scale in [0, 20] (1 = uncalibrated)");
        });
}

}  // namespace commscale
