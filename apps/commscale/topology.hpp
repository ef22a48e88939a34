#pragma once
// Shared flags of the commands that need a cluster and of those that run collectives.
// The topology flags of every command that needs a cluster (docs/CLI.md "Topology flags"):
//   --cluster NAME|FILE   a preset (commscale clusters), a cluster JSON file or inline cluster JSON
//   --nodes N --gpus-per-node G --intra LINK --intra-fabric switch|mesh|pcie --inter LINK
//   --nics-per-node K --accelerator NAME --oversubscription R --scale-up-domain G
// Explicit flags override the preset's (or file's) fields. With no --cluster the base is the
// default preset `commscale::default_cluster_name` (dgx-a100: the 8 x A100 NVLink3 node whose
// nccl-tests all-reduce table ml-engineering-networking publishes).

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <commscale/collective/model.hpp>
#include <commscale/error.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/hardware/links.hpp>
#include <commscale/hardware/topology.hpp>
#include <commscale/io/cluster_json.hpp>

#include "cli.hpp"

namespace cli {

/// A cluster from a preset name, a cluster JSON file or inline cluster JSON; errors name `field`
/// (and `field.<key>` for a bad key of inline JSON). A preset name is a preset even where a file
/// of that name exists.
/// A cluster already parsed from its inline JSON text (the Python module's cluster handles): while
/// set on this thread, load_cluster_value returns `value` for exactly `text` instead of parsing it.
struct parsed_cluster {
    std::string_view text;
    const commscale::cluster* value = nullptr;
};

/// This thread's parsed cluster (none by default).
inline parsed_cluster& parsed_cluster_slot() {
    thread_local parsed_cluster slot;
    return slot;
}

[[nodiscard]] inline commscale::cluster load_cluster_value(const std::string& v, const std::string& field) {
    if (const parsed_cluster& p = parsed_cluster_slot(); p.value != nullptr && v == p.text) return *p.value;
    if (auto preset = commscale::find_cluster(v)) return *preset;  // no file-system look-up for presets
    if (is_inline_json(v)) return commscale::io::cluster_from_json(commscale::io::parse_json(v, field), field);
    if (looks_like_file(v)) return commscale::io::load_cluster_file(v, field);
    return commscale::cluster_by_name(v, field);
}

/// Parses an --intra-fabric value.
[[nodiscard]] inline commscale::intra_fabric parse_fabric(const std::string& v, const std::string& field) {
    return commscale::parse<commscale::intra_fabric>(v, field);
}

/// The cluster a command line's --cluster gives (`a.has("cluster")`): its text read by
/// load_cluster_value. Other sources of option values (the Python module's rows, which hold parsed
/// clusters) overload it; the templates below find the overload by argument-dependent lookup.
[[nodiscard]] inline commscale::cluster given_cluster(const args& a, const std::string& field) {
    return load_cluster_value(*a.get("cluster"), field);
}

/// True if any topology flag is present (so the cluster is not exactly a preset). `Source` here and
/// below is `args` or anything with its has/get/flag/integer/number members (the Python rows).
template <class Source>
[[nodiscard]] bool has_topology_override(const Source& a) {
    for (const char* f : {"nodes", "gpus-per-node", "intra", "intra-fabric", "inter", "nics-per-node", "accelerator",
                          "oversubscription"})
        if (a.has(f)) return true;
    return false;
}

/// The cluster the topology flags describe: --cluster (preset or file) or the default preset,
/// then each explicit flag overrides its field. Derived fields follow an overridden link:
/// - --intra without --intra-fabric: a PCIe link implies `pcie`, an xGMI or Gaudi link `mesh`,
///   an NVLink keeps the base's fabric (switch for a custom cluster);
/// - in-switch reduction (NVLS) is kept only if the intra link and fabric are unchanged, and
///   otherwise holds for NVLink 4/5 behind a switch (third-generation NVSwitch and later);
/// - without --cluster, --intra and no --accelerator: the accelerator is the first catalog entry
///   whose scale-up link is --intra (nvlink4 -> h100-sxm), else the default preset's.
/// The result is validated (`commscale::validate`); errors name the flag.
/// --scale-up-domain G (GPUs sharing one NVLink fabric): G = GPUs per node cuts the domain to the
/// node, a multiple spans nodes on a switched fabric (e.g. 72 for an NVL72 rack of 4-GPU trays).
/// A G below the node's GPUs is an error, except where `sub_node_domain` (plan: a limit on TP
/// only) leaves the cluster as it is.
template <class Source>
[[nodiscard]] commscale::cluster resolve_cluster(const Source& a, bool sub_node_domain = false) {
    using namespace commscale;
    const bool given = a.has("cluster");
    cluster c{};
    if (given) {
        c = given_cluster(a, "--cluster");
    } else {
        c = cluster_by_name(default_cluster_name, "--cluster");
    }
    const bool custom = has_topology_override(a);
    if (custom) c.name = detail::intern(given ? std::string(c.name) + "+flags" : std::string("custom"));

    if (a.has("nodes")) c.nodes = static_cast<int>(a.integer("nodes", c.nodes, 1, cluster_limits::nodes));
    if (a.has("gpus-per-node")) c.node.gpus = static_cast<int>(a.integer("gpus-per-node", c.node.gpus, 1, cluster_limits::gpus_per_node));

    const bool intra_changed = a.has("intra") || a.has("intra-fabric");
    if (auto v = a.get("intra")) {
        c.node.intra = link_by_name(*v, "--intra");
        if (!a.has("intra-fabric")) {
            switch (c.node.intra.family) {
                case link_family::pcie: c.node.fabric = intra_fabric::pcie; break;
                case link_family::xgmi:
                case link_family::gaudi: c.node.fabric = intra_fabric::mesh; break;
                default:
                    if (!given) c.node.fabric = intra_fabric::switched;
                    else if (c.node.fabric == intra_fabric::pcie) c.node.fabric = intra_fabric::switched;
                    break;
            }
        }
        if (!given && !a.has("accelerator")) {
            for (const auto& acc : all_accelerators()) {
                if (acc.scale_up_link == c.node.intra.name) {
                    c.node.accelerator = acc.name;
                    break;
                }
            }
        }
    }
    if (auto v = a.get("intra-fabric")) c.node.fabric = parse_fabric(*v, "--intra-fabric");
    if (intra_changed) {
        // NVLS where the link's NVLink generation has it (hardware/links.hpp nvlink_switch_reduces)
        c.node.in_switch_reduction = c.node.fabric == intra_fabric::switched && nvlink_switch_reduces(c.node.intra);
    }
    if (auto v = a.get("inter")) c.node.inter = link_by_name(*v, "--inter");
    if (a.has("nics-per-node")) c.node.nics = static_cast<int>(a.integer("nics-per-node", c.node.nics, 0, cluster_limits::nics_per_node));
    if (auto v = a.get("accelerator")) c.node.accelerator = accelerator_by_name(*v, "--accelerator").name;
    if (a.has("oversubscription"))
        c.oversubscription = require_range("--oversubscription", a.number("oversubscription", 1.0), 1.0, 1000.0);

    if (a.has("scale-up-domain")) {
        const long long g = a.integer("scale-up-domain", 0, 1, cluster_limits::scale_up_domain);
        if (g >= c.node.gpus || !sub_node_domain) {
            const int domain = g == c.node.gpus ? 0 : static_cast<int>(g);
            if (domain != (c.domain_spans_nodes() ? c.scale_up_domain : 0)) {
                c.scale_up_domain = domain;
                if (!custom) c.name = detail::intern(given ? std::string(c.name) + "+flags" : std::string("custom"));
            }
        }
    }

    try {
        validate(c, "cluster");
    } catch (const input_error& e) {
        // Name the flag when the offending field came from one.
        const std::string& f = e.field();
        auto ends_with = [&](std::string_view suffix) { return f.size() >= suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0; };
        if (ends_with(".scale_up_domain") && a.has("scale-up-domain"))
            throw input_error("--scale-up-domain", e.value(), e.expected());
        auto flag_for = [&](std::string_view suffix, const char* flag) { return f.size() >= suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0 && a.has(flag); };
        if (flag_for(".inter.nics_per_node", "nics-per-node")) throw input_error("--nics-per-node", e.value(), e.expected());
        if (flag_for(".inter.link", "inter")) throw input_error("--inter", e.value(), e.expected());
        if (f.size() >= 11 && f.compare(f.size() - 11, 11, ".inter.link") == 0 && a.has("nodes"))
            throw input_error("--nodes", std::to_string(c.nodes) + " (cluster '" + std::string(c.name) + "' has no inter-node link)",
                              "1, or an --inter LINK");
        throw;
    }
    return c;
}

/// The node count a --gpus N stands for on a cluster of `gpus_per_node`-GPU nodes (step, scale,
/// collective, sweep): N / gpus_per_node; an input_error naming --gpus, N and the node size when
/// the node size does not divide N.
[[nodiscard]] inline int nodes_for_gpus(long long n, int gpus_per_node, std::string_view cluster_name) {
    if (gpus_per_node < 1 || n % gpus_per_node != 0)
        throw commscale::input_error("--gpus", std::to_string(n),
                                     "a multiple of the " + std::to_string(gpus_per_node) + " GPUs per node of cluster '" +
                                         std::string(cluster_name) + "'");
    return static_cast<int>(n / gpus_per_node);
}

/// resolve_cluster, with --gpus N as an alternative to --nodes (nodes = N / GPUs per node); both
/// given is an error.
template <class Source>
[[nodiscard]] commscale::cluster resolve_cluster_gpus(const Source& a) {
    using namespace commscale;
    if (!a.has("gpus")) return resolve_cluster(a);
    const long long n = a.integer("gpus", 0, 1, cluster_limits::gpus);
    if (a.has("nodes"))
        throw input_error("--gpus", std::to_string(n) + " together with --nodes " + a.get("nodes").value_or(""),
                          "either --gpus N or --nodes N, not both");
    cluster c = resolve_cluster(a);
    c.nodes = nodes_for_gpus(n, c.node.gpus, c.name);
    if (c.nodes > cluster_limits::nodes)
        throw input_error("--gpus", std::to_string(n),
                          "at most " + std::to_string(cluster_limits::nodes) + " nodes' worth of GPUs");
    validate(c, "cluster");
    return c;
}

/// Options of the commands that run collectives (collective, sweep): --op, --algo, --efficiency,
/// --ranks, --ranks-per-node.
inline std::vector<option_spec> collective_options_spec() {
    std::string ops;  // every operation's spelling (collective/types.hpp), space-separated
    for (const std::string_view name : commscale::names_of<commscale::collective_op>()) ops += (ops.empty() ? "" : " ") + std::string(name);
    return {
        {"op", true, ops},
        {"algo", true, "fastest, " + commscale::name_list<commscale::algorithm>()},
        {"efficiency", true, "default (realistic) or ideal (closed forms on datasheet peaks)"},
        {"ranks", true, "ranks in the group (default: every GPU of the cluster)"},
        {"ranks-per-node", true, "ranks on each node, or on each NVLink domain where it spans nodes (default: min(ranks, GPUs per node or domain))"},
    };
}

/// A parsed collective request: the operation, the group's placement and the model options.
struct collective_request {
    commscale::collective_op op{};
    commscale::placement group{};
    commscale::collective_options options{};
};

/// Reads --op (required), --algo (default auto), --efficiency (default|realistic|ideal; default
/// default), and the group: --ranks (default all GPUs of `c`) and --ranks-per-node (default
/// min(ranks, GPUs per node)), consecutive GPUs; the group must fit on the cluster's nodes.
/// `default_op` (e.g. the collective of a measured log) stands in for a missing --op.
template <class Source>
[[nodiscard]] collective_request read_collective_request(const Source& a, const commscale::cluster& c,
                                                        std::optional<commscale::collective_op> default_op = std::nullopt) {
    using namespace commscale;
    collective_request r;
    if (default_op && !a.get("op")) r.op = *default_op;
    else r.op = parse<collective_op>(a.require("op", "an operation: all_reduce reduce_scatter all_gather broadcast reduce all_to_all send_recv"), "--op");
    if (auto v = a.get("algo")) {
        // "fastest": the automatic choice among every algorithm of the library, not only NCCL's
        if (*v == "fastest") r.options.candidates = algorithm_set::any;
        else r.options.algo = parse<algorithm>(*v, "--algo");
    }
    if (auto v = a.get("efficiency")) r.options.mode = parse<efficiency_mode>(*v, "--efficiency");
    const long long total = static_cast<long long>(c.nodes) * c.node.gpus;
    const int ranks = static_cast<int>(a.integer("ranks", total, 1, total));
    // on an NVLink domain spanning nodes (NVL72) the group is placed per domain (comm_view)
    const cluster v = comm_view(c);
    const int per_node = static_cast<int>(a.integer("ranks-per-node", std::min(ranks, v.node.gpus), 1, v.node.gpus));
    r.group = placement{.ranks = ranks, .ranks_per_node = std::min(per_node, ranks), .stride = 1};
    if (r.group.nodes() > v.nodes)
        throw input_error("--ranks", std::to_string(ranks) + " at " + std::to_string(per_node) + " per node (" +
                                         std::to_string(r.group.nodes()) + " nodes)",
                          "a group that fits on the cluster's " + std::to_string(v.nodes) +
                              (c.domain_spans_nodes() ? " NVLink domain(s)" : " node(s)"));
    return r;
}

/// One collective as the `collective` command predicts it from its options (docs/CLI.md
/// "Collectives"): the cluster, the request, the prediction; its JSON is
/// io::collective_result_to_json(result).
struct collective_prediction {
    commscale::cluster cluster{};
    collective_request request{};
    commscale::collective_result result{};
};

/// The `collective` command's prediction on cluster `c` (what resolve_cluster_gpus gives for `a`):
/// --op, --algo, --efficiency, the group, and --bytes (required, at least 1 byte).
template <class Source>
[[nodiscard]] collective_prediction predict_collective_on(const Source& a, const commscale::cluster& c) {
    using namespace commscale;
    collective_prediction x;
    x.cluster = c;
    x.request = read_collective_request(a, x.cluster);
    if (!a.has("bytes")) throw input_error("--bytes", "nothing (missing)", "a size such as 1GiB");
    const data_size size = a.size("bytes", bytes(0.0));
    if (!(in_bytes(size) >= 1.0))
        throw input_error("--bytes", detail::number_text(in_bytes(size)), "a size of at least 1 byte");
    x.result = predict_collective(x.cluster, x.request.group, x.request.op, size, x.request.options);
    return x;
}

/// The `collective` command's prediction from its options. predict_collective_on takes the cluster
/// resolve_cluster_gpus gives for `a` (the Python module's batches resolve it once where no row
/// changes it).
template <class Source>
[[nodiscard]] collective_prediction predict_collective_of(const Source& a) {
    return predict_collective_on(a, resolve_cluster_gpus(a));
}

/// The numbers of `collective --json` (io::collective_result_to_json) as columns.
inline constexpr auto collective_number_columns = [] {
    using namespace commscale;
    using c = number_column<collective_prediction>;
    using x_t = const collective_prediction&;
    constexpr column_type real = column_type::real, integer = column_type::integer;
    return std::array{
        c{"ranks", integer, [](x_t x) { return static_cast<double>(x.result.ranks); }},
        c{"nodes", integer, [](x_t x) { return static_cast<double>(x.result.nodes); }},
        c{"bytes", integer, [](x_t x) { return static_cast<double>(std::llround(in_bytes(x.result.bytes))); }},
        c{"time_us", real, [](x_t x) { return in_us(x.result.time); }},
        c{"algbw_GBps", real, [](x_t x) { return in_GBps(x.result.algbw); }},
        c{"busbw_GBps", real, [](x_t x) { return in_GBps(x.result.busbw); }},
        c{"latency_us", real, [](x_t x) { return in_us(x.result.latency); }},
        c{"transfer_us", real, [](x_t x) { return in_us(x.result.transfer); }},
    };
}();

/// The texts of `collective --json` as columns.
inline constexpr auto collective_label_columns = [] {
    using namespace commscale;
    using c = label_column<collective_prediction, std::string>;
    using x_t = const collective_prediction&;
    return std::array{
        c{"op", [](x_t x) { return std::string(to_string(x.result.op)); }},
        c{"algorithm", [](x_t x) { return std::string(to_string(x.result.algo)); }},
        c{"bottleneck", [](x_t x) { return describe_bottleneck(x.result); }},
    };
}();

}  // namespace cli
