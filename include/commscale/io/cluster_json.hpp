#pragma once
/// @file io/cluster_json.hpp
/// @brief Cluster descriptions in JSON (schema in CLI.md "Topology flags"), read with field-path
/// errors and written back so that `cluster_from_json(cluster_to_json(c))` reproduces `c`:
/// ```json
/// {"name": "my-pod", "nodes": 4, "gpus_per_node": 8, "accelerator": "h100-sxm",
///  "scale_up_domain": 0 (optional: GPUs on one NVLink fabric across nodes, e.g. 72 for NVL72),
///  "intra": {"link": "nvlink4", "fabric": "switch", "in_switch_reduction": true, "pcie_p2p": true},
///  "inter": {"link": "ib-ndr-4x", "nics_per_node": 8, "oversubscription": 1.0, "nodes_per_leaf": 32,
///            "rail_optimized": true, "in_network_reduction": false, "gpudirect_rdma": true},
///  "source": "where the figures come from", "calibration": {...comm_params fields, optional...},
///  "compute_calibration": {"kernel_efficiency": 0.8, "attention_efficiency": 1.0, "overlap_slowdown": 1.0}
///                         (optional, fit-step; overlap_slowdown and kernel_overhead omitted when 1)}
/// ```
/// Links are catalog names (`commscale links`) or link objects (io/hardware_json.hpp). Keys
/// beyond CLI.md's minimal example are optional, with the defaults documented at each field.
/// Unknown keys are rejected with "did you mean".

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "../detail/intern.hpp"
#include "../error.hpp"
#include "../hardware/accelerators.hpp"
#include "../hardware/comm_params.hpp"
#include "../hardware/links.hpp"
#include "../hardware/topology.hpp"
#include "file.hpp"
#include "hardware_json.hpp"
#include "json_reader.hpp"

namespace commscale {

namespace io {

namespace detail {
/// True if `l` is exactly the catalog link of the same name (so JSON can spell it by name).
[[nodiscard]] inline bool is_catalog_link(const link& l) {
    const auto c = find_link(l.name);
    if (!c) return false;
    return c->family == l.family && c->kind == l.kind && c->rdma == l.rdma && c->per_direction == l.per_direction &&
           c->lanes == l.lanes && c->links == l.links && c->per_lane == l.per_lane && c->encoding == l.encoding &&
           c->latency == l.latency && c->source == l.source;
}
/// A link written as its catalog name when it is one, else as a link object.
[[nodiscard]] inline nlohmann::json link_json(const link& l) {
    if (is_catalog_link(l)) return std::string(l.name);
    return nlohmann::json(l);  // the link object of io/hardware_json.hpp
}

/// A JSON array of exactly `N` finite numbers in [lo, hi], errors naming `field[i]`.
template <std::size_t N>
[[nodiscard]] std::array<double, N> number_array(const json_reader& r, const std::string& key, double lo, double hi) {
    const nlohmann::json& a = r.array(key);
    if (a.size() != N)
        throw input_error(r.field(key), "an array of " + std::to_string(a.size()),
                          "an array of " + std::to_string(N) + " numbers (LL, LL128, Simple)");
    std::array<double, N> out{};
    for (std::size_t i = 0; i < N; ++i) {
        const std::string f = r.field(key) + "[" + std::to_string(i) + "]";
        const nlohmann::json& v = a[i];
        if (!v.is_number()) throw input_error(f, json_type_name(v), "a number");
        out[i] = require_range(f, v.get<double>(), lo, hi);
    }
    return out;
}

/// Reads one link class's parameters over `p` (fields absent keep their value).
inline void read_link_class(const json_reader& r, link_class_params& p) {
    using lim = comm_params_limits;
    if (r.has("step_latency_us")) {
        const auto v = number_array<protocol_count>(r, "step_latency_us", 0.0, lim::latency_us);
        for (std::size_t i = 0; i < protocol_count; ++i) p.step_latency[i] = seconds(v[i] * 1e-6);
    }
    if (r.has("efficiency")) p.efficiency = r.number("efficiency", lim::min_efficiency, lim::max_efficiency);
    if (r.has("half_size")) p.half_size = r.size("half_size");
    if (r.has("exponent")) p.exponent = r.number("exponent", lim::min_exponent, lim::max_exponent);
    r.finish();
}

[[nodiscard]] inline nlohmann::json link_class_json(const link_class_params& p) {
    nlohmann::json lat = nlohmann::json::array();
    for (const duration& d : p.step_latency) lat.push_back(in_us(d));
    return {{"step_latency_us", lat}, {"efficiency", p.efficiency}, {"half_size", in_bytes(p.half_size)},
            {"exponent", p.exponent}};
}

[[nodiscard]] inline bool same(const link_class_params& a, const link_class_params& b) {
    return a.step_latency == b.step_latency && a.efficiency == b.efficiency && a.half_size == b.half_size &&
           a.exponent == b.exponent;
}
}  // namespace detail

/// @brief True if two parameter sets are identical field by field.
[[nodiscard]] inline bool same_comm_params(const comm_params& a, const comm_params& b) {
    return a.base_latency == b.base_latency && a.protocol_bandwidth == b.protocol_bandwidth &&
           detail::same(a.nvlink, b.nvlink) && detail::same(a.pci, b.pci) && detail::same(a.net, b.net) &&
           a.nvls_efficiency == b.nvls_efficiency && a.sharp_efficiency == b.sharp_efficiency &&
           a.channels == b.channels && a.channel_bandwidth == b.channel_bandwidth;
}

/// @brief The "calibration" object of a cluster JSON: every field of `comm_params`
/// (hardware/comm_params.hpp), times in microseconds, rates in GB/s, arrays indexed LL, LL128, Simple:
/// ```json
/// {"base_latency_us": [6.6, 14, 8.4], "protocol_bandwidth": [0.5, 0.9375, 1],
///  "nvlink": {"step_latency_us": [0.6, 1.9, 3.4], "efficiency": 0.8, "half_size": 393216, "exponent": 0.5},
///  "pci": {...}, "net": {...}, "nvls_efficiency": 0.85, "sharp_efficiency": 0.85,
///  "channels": 0, "channel_bandwidth_GBps": [0, 0, 0]}
/// ```
[[nodiscard]] inline nlohmann::json comm_params_to_json(const comm_params& p) {
    nlohmann::json base = nlohmann::json::array(), proto = nlohmann::json::array(), chan = nlohmann::json::array();
    for (const duration& d : p.base_latency) base.push_back(in_us(d));
    for (double f : p.protocol_bandwidth) proto.push_back(f);
    for (const byte_rate& b : p.channel_bandwidth) chan.push_back(in_GBps(b));
    return {{"base_latency_us", base},
            {"protocol_bandwidth", proto},
            {std::string(to_string(link_class::nvlink)), detail::link_class_json(p.nvlink)},
            {std::string(to_string(link_class::pci)), detail::link_class_json(p.pci)},
            {std::string(to_string(link_class::net)), detail::link_class_json(p.net)},
            {"nvls_efficiency", p.nvls_efficiency},
            {"sharp_efficiency", p.sharp_efficiency},
            {"channels", p.channels},
            {"channel_bandwidth_GBps", chan}};
}

/// @brief Reads a "calibration" object: fields given replace the defaults of `comm_params{}`
/// (so a partial object is a partial calibration); unknown keys are rejected. Errors name the
/// path, e.g. `cluster.calibration.net.efficiency`.
[[nodiscard]] inline comm_params comm_params_from_json(const nlohmann::json& j, const std::string& path) {
    using lim = comm_params_limits;
    const json_reader r(j, path);
    comm_params p{};
    if (r.has("base_latency_us")) {
        const auto v = detail::number_array<protocol_count>(r, "base_latency_us", 0.0, lim::latency_us);
        for (std::size_t i = 0; i < protocol_count; ++i) p.base_latency[i] = seconds(v[i] * 1e-6);
    }
    if (r.has("protocol_bandwidth")) {
        const auto v = detail::number_array<protocol_count>(r, "protocol_bandwidth", lim::min_protocol_bandwidth,
                                                              lim::max_protocol_bandwidth);
        for (std::size_t i = 0; i < protocol_count; ++i) p.protocol_bandwidth[i] = v[i];
    }
    if (const std::string key(to_string(link_class::nvlink)); r.has(key)) detail::read_link_class(r.object(key), p.nvlink);
    if (const std::string key(to_string(link_class::pci)); r.has(key)) detail::read_link_class(r.object(key), p.pci);
    if (const std::string key(to_string(link_class::net)); r.has(key)) detail::read_link_class(r.object(key), p.net);
    if (r.has("nvls_efficiency"))
        p.nvls_efficiency = r.number("nvls_efficiency", lim::min_reduction_efficiency, lim::max_reduction_efficiency);
    if (r.has("sharp_efficiency"))
        p.sharp_efficiency = r.number("sharp_efficiency", lim::min_reduction_efficiency, lim::max_reduction_efficiency);
    if (r.has("channels")) p.channels = r.int32("channels", 0, lim::channels);
    if (r.has("channel_bandwidth_GBps")) {
        const auto v = detail::number_array<protocol_count>(r, "channel_bandwidth_GBps", 0.0, lim::channel_bandwidth_GBps);
        for (std::size_t i = 0; i < protocol_count; ++i) {
            // 0 = uncapped; a cap must be a hardware rate (>= 1 MB/s), else every time overflows
            if (v[i] != 0)
                (void)require_hardware_rate(r.field("channel_bandwidth_GBps") + "[" + std::to_string(i) + "]", v[i] * giga,
                                            commscale::detail::number_text(v[i]) + " GB/s (0 means uncapped)");
            p.channel_bandwidth[i] = bytes_per_second(v[i] * giga);
        }
    }
    r.finish();
    return p;
}

/// @brief Reads a cluster from JSON. Every error is an input_error whose field is the path under
/// `path` (e.g. `cluster.inter.nics_per_node`). Defaults: name "custom", nodes 1; intra.fabric
/// "switch", intra.in_switch_reduction where the fabric is switched and the link's NVLink generation
/// reduces in the switch (NVLink4 and later; links.hpp nvlink_switch_reduces), intra.pcie_p2p true; inter absent = no scale-out
/// network (only valid with nodes = 1); scale_up_domain 0 (the node; a multiple of
/// gpus_per_node spans nodes, e.g. 72 for an NVL72 rack of 4-GPU trays); inter.nics_per_node = gpus_per_node (one NIC per GPU),
/// inter.oversubscription 1 (non-blocking), inter.nodes_per_leaf 32, inter.rail_optimized true,
/// inter.in_network_reduction false, inter.gpudirect_rdma true; calibration absent = the
/// documented defaults of `comm_params` (see `comm_params_from_json`). The result passes `validate`.
[[nodiscard]] inline cluster cluster_from_json(const nlohmann::json& j, const std::string& path = "cluster") {
    const json_reader r(j, path);
    cluster c{};
    c.name = commscale::detail::intern(r.string_or("name", "custom"));
    c.nodes = r.int32_or("nodes", 1, 1, cluster_limits::nodes);
    c.node.gpus = r.int32("gpus_per_node", 1, cluster_limits::gpus_per_node);
    // GPUs sharing one NVLink fabric (whole nodes; validate checks multiple and fabric)
    c.scale_up_domain = r.int32_or("scale_up_domain", 0, 0, cluster_limits::scale_up_domain);
    if (r.has("accelerator")) c.node.accelerator = accelerator_by_name(r.string("accelerator"), r.field("accelerator")).name;
    else c.node.accelerator = {};

    {
        const json_reader intra = r.object("intra");
        c.node.intra = link_from_json(intra.raw("link"), intra.field("link"));
        c.node.fabric = parse<intra_fabric>(intra.string_or("fabric", "switch"), intra.field("fabric"));
        // absent: from the link's NVLink generation and the fabric, as node_spec's default
        c.node.in_switch_reduction = intra.boolean_or(
            "in_switch_reduction", c.node.fabric == intra_fabric::switched && nvlink_switch_reduces(c.node.intra));
        c.node.pcie_p2p = intra.boolean_or("pcie_p2p", true);
        intra.finish();
    }
    if (r.has("inter")) {
        const json_reader inter = r.object("inter");
        c.node.inter = link_from_json(inter.raw("link"), inter.field("link"));
        c.node.nics = inter.int32_or("nics_per_node", c.node.gpus, 0, cluster_limits::nics_per_node);
        c.oversubscription = inter.number_or("oversubscription", 1.0, 1.0, cluster_limits::oversubscription);
        c.nodes_per_leaf = inter.int32_or("nodes_per_leaf", 32, 1, cluster_limits::nodes);
        c.rail_optimized = inter.boolean_or("rail_optimized", true);
        c.in_network_reduction = inter.boolean_or("in_network_reduction", false);
        c.node.gpudirect_rdma = inter.boolean_or("gpudirect_rdma", true);
        inter.finish();
    } else {
        c.node.inter = link{};
        c.node.nics = 0;
    }
    c.source = commscale::detail::intern(r.string_or("source", ""));
    // "derived": figures computed from the others that `commscale cluster --json` prints for
    // reading convenience (total GPUs, node injection, ...); output only, ignored on input so the
    // printed document can be fed back to --cluster.
    r.ignore({"derived"});
    if (r.has("calibration")) c.comm = comm_params_from_json(r.raw("calibration"), r.field("calibration"));
    if (r.has("compute_calibration")) {
        // written by `commscale fit-step --out`; "fitted_from" (what the fit used) is informational
        const json_reader cc = r.object("compute_calibration");
        using k = compute_calibration;
        c.compute.kernel_efficiency = cc.number_or("kernel_efficiency", 1.0, k::min_efficiency, k::max_efficiency);
        c.compute.attention_efficiency = cc.number_or("attention_efficiency", 1.0, k::min_efficiency, k::max_efficiency);
        c.compute.overlap_slowdown = cc.number_or("overlap_slowdown", 1.0, 0.0, k::max_overlap_slowdown);
        c.compute.kernel_overhead = cc.number_or("kernel_overhead", 1.0, 0.0, k::max_kernel_overhead);
        cc.ignore({"fitted_from"});
        cc.finish();
    }
    r.finish();
    validate(c, path);
    return c;
}

/// @brief True when a cluster has a scale-out part to write (`"inter"`): NICs, a named inter-node
/// link or a nonzero inter-node bandwidth. A single node without any of these has none.
[[nodiscard]] inline bool has_scale_out(const cluster& c) {
    return c.node.nics > 0 || !c.node.inter.name.empty() || c.node.inter.per_direction.value() > 0;
}

/// @brief The JSON form of a cluster (every field written; links by catalog name where they are
/// catalog links). `cluster_from_json(cluster_to_json(c))` equals `c`.
[[nodiscard]] inline nlohmann::json cluster_to_json(const cluster& c) {
    nlohmann::json j;
    j["name"] = std::string(c.name);
    j["nodes"] = c.nodes;
    j["gpus_per_node"] = c.node.gpus;
    if (c.domain_spans_nodes()) j["scale_up_domain"] = c.scale_up_domain;  // omitted: the node
    if (!c.node.accelerator.empty()) j["accelerator"] = std::string(c.node.accelerator);
    j["intra"] = {{"link", detail::link_json(c.node.intra)},
                  {"fabric", std::string(to_string(c.node.fabric))},
                  {"in_switch_reduction", c.node.in_switch_reduction},
                  {"pcie_p2p", c.node.pcie_p2p}};
    if (has_scale_out(c))
        j["inter"] = {{"link", detail::link_json(c.node.inter)},
                      {"nics_per_node", c.node.nics},
                      {"oversubscription", c.oversubscription},
                      {"nodes_per_leaf", c.nodes_per_leaf},
                      {"rail_optimized", c.rail_optimized},
                      {"in_network_reduction", c.in_network_reduction},
                      {"gpudirect_rdma", c.node.gpudirect_rdma}};
    if (!c.source.empty()) j["source"] = std::string(c.source);
    if (!same_comm_params(c.comm, comm_params{})) j["calibration"] = comm_params_to_json(c.comm);
    if (!c.compute.is_default()) {
        j["compute_calibration"] = {{"kernel_efficiency", c.compute.kernel_efficiency},
                                    {"attention_efficiency", c.compute.attention_efficiency}};
        if (c.compute.overlap_slowdown != 1.0) j["compute_calibration"]["overlap_slowdown"] = c.compute.overlap_slowdown;
        if (c.compute.kernel_overhead != 1.0) j["compute_calibration"]["kernel_overhead"] = c.compute.kernel_overhead;
    }
    return j;
}

/// @brief Reads a cluster JSON file. Errors name the file and the field path
/// (`pod.json: cluster.inter.link: expected a known name (did you mean ib-ndr-4x?), got 'ib-nrd-4x'`);
/// a missing or unreadable file is reported under `field` (e.g. "--cluster").
[[nodiscard]] inline cluster load_cluster_file(const std::string& file, std::string_view field = "cluster file") {
    const std::string text = read_file(file, field);
    const nlohmann::json j = parse_json(text, file);
    try {
        return cluster_from_json(j, "cluster");
    } catch (const input_error& e) {
        throw input_error(file + ": " + e.field(), e.value(), e.expected());
    }
}

}  // namespace io

/// @brief nlohmann/json hook: `nlohmann::json j = cluster;` writes `io::cluster_to_json`.
inline void to_json(nlohmann::json& j, const cluster& c) { j = io::cluster_to_json(c); }

}  // namespace commscale
