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
#include <functional>
#include <limits>
#include <stdexcept>
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
#include "options.hpp"

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

/// --cluster's reader: a cluster parsed before (the Python module's rows) or the text read by
/// load_cluster_value.
[[nodiscard]] inline commscale::cluster read_cluster(const given_value& v, const std::string& field) {
    return reads::parsed_or<commscale::cluster>(v, field, &load_cluster_value);
}

/// What the topology flags give: each value as given with its reader, read where resolve_cluster's
/// order reads it (so a line with several errors reports the one that order finds first).
struct topology_request {
    std::optional<given<commscale::cluster>> cluster;
    std::optional<given<long long>> nodes, gpus_per_node;
    std::optional<given<commscale::link>> intra;
    std::optional<given<commscale::intra_fabric>> intra_fabric;
    std::optional<given<commscale::link>> inter;
    std::optional<given<long long>> nics_per_node;
    std::optional<given<std::string_view>> accelerator;
    std::optional<given<double>> oversubscription;
    std::optional<given<long long>> scale_up_domain;
    /// --gpus where it gives the node count (step, collective, sweep: gpus_option; read by
    /// resolve_cluster_gpus)
    std::optional<given<long long>> gpus;

    /// True if any topology flag but --cluster and --scale-up-domain is given (so the cluster is
    /// not exactly a preset).
    [[nodiscard]] bool overrides() const {
        return nodes || gpus_per_node || intra || intra_fabric || inter || nics_per_node || accelerator || oversubscription;
    }
};

namespace topology_detail {
/// The readers of the topology flags, one of each for every request (requests point to them).
struct readers {
    std::function<commscale::cluster(const given_value&)> cluster = [](const given_value& v) { return read_cluster(v, "--cluster"); };
    std::function<long long(const given_value&)> nodes = [](const given_value& v) {
        return reads::integer(v, "--nodes", 1, commscale::cluster_limits::nodes);
    };
    std::function<long long(const given_value&)> gpus_per_node = [](const given_value& v) {
        return reads::integer(v, "--gpus-per-node", 1, commscale::cluster_limits::gpus_per_node);
    };
    std::function<commscale::link(const given_value&)> intra = [](const given_value& v) {
        return commscale::link_by_name(v.spelled(), "--intra");
    };
    std::function<commscale::intra_fabric(const given_value&)> intra_fabric = [](const given_value& v) {
        return reads::choice<commscale::intra_fabric>(v, "--intra-fabric");
    };
    std::function<commscale::link(const given_value&)> inter = [](const given_value& v) {
        return commscale::link_by_name(v.spelled(), "--inter");
    };
    std::function<long long(const given_value&)> nics_per_node = [](const given_value& v) {
        return reads::integer(v, "--nics-per-node", 0, commscale::cluster_limits::nics_per_node);
    };
    std::function<std::string_view(const given_value&)> accelerator = [](const given_value& v) {
        return commscale::accelerator_by_name(v.spelled(), "--accelerator").name;
    };
    std::function<double(const given_value&)> oversubscription = [](const given_value& v) {
        return commscale::require_range("--oversubscription", reads::number(v, "--oversubscription"), 1.0, commscale::cluster_limits::oversubscription);
    };
    std::function<long long(const given_value&)> scale_up_domain = [](const given_value& v) {
        return reads::integer(v, "--scale-up-domain", 1, commscale::cluster_limits::scale_up_domain);
    };
    std::function<long long(const given_value&)> gpus = [](const given_value& v) {
        return reads::integer(v, "--gpus", 1, commscale::cluster_limits::gpus);
    };
};
[[nodiscard]] inline const readers& topology_readers() {
    static const readers r;
    return r;
}
/// Binds option `spec` to the field `field(request)` with the reader `read`.
template <class T, class R, class Field>
[[nodiscard]] bound_option<R> bind(option_spec spec, Field field, const std::function<T(const given_value&)>& read) {
    auto take = [field, read = &read](R& r, const given_value& v) { field(r) = given<T>{v, read}; };
    return {std::move(spec), [take](R& r, const std::string& v) { take(r, given_value::of_text(v)); }, take};
}
}  // namespace topology_detail

/// The topology flags of `specs` (topology_options(), or some of them with a help of the command's
/// own) bound to the topology_request that `topology(request)` gives.
template <class R, class Topology>
[[nodiscard]] std::vector<bound_option<R>> topology_bound(Topology topology, const std::vector<option_spec>& specs) {
    using topology_detail::bind;
    const topology_detail::readers& x = topology_detail::topology_readers();
    std::vector<bound_option<R>> out;
    for (const option_spec& s : specs) {
        const std::string& n = s.name;
        if (n == "cluster") out.push_back(bind<commscale::cluster, R>(s, [topology](R& r) -> auto& { return topology(r).cluster; }, x.cluster));
        else if (n == "nodes") out.push_back(bind<long long, R>(s, [topology](R& r) -> auto& { return topology(r).nodes; }, x.nodes));
        else if (n == "gpus-per-node")
            out.push_back(bind<long long, R>(s, [topology](R& r) -> auto& { return topology(r).gpus_per_node; }, x.gpus_per_node));
        else if (n == "intra") out.push_back(bind<commscale::link, R>(s, [topology](R& r) -> auto& { return topology(r).intra; }, x.intra));
        else if (n == "intra-fabric")
            out.push_back(bind<commscale::intra_fabric, R>(s, [topology](R& r) -> auto& { return topology(r).intra_fabric; }, x.intra_fabric));
        else if (n == "inter") out.push_back(bind<commscale::link, R>(s, [topology](R& r) -> auto& { return topology(r).inter; }, x.inter));
        else if (n == "nics-per-node")
            out.push_back(bind<long long, R>(s, [topology](R& r) -> auto& { return topology(r).nics_per_node; }, x.nics_per_node));
        else if (n == "accelerator")
            out.push_back(bind<std::string_view, R>(s, [topology](R& r) -> auto& { return topology(r).accelerator; }, x.accelerator));
        else if (n == "oversubscription")
            out.push_back(bind<double, R>(s, [topology](R& r) -> auto& { return topology(r).oversubscription; }, x.oversubscription));
        else if (n == "scale-up-domain")
            out.push_back(bind<long long, R>(s, [topology](R& r) -> auto& { return topology(r).scale_up_domain; }, x.scale_up_domain));
        else throw std::logic_error("not a topology flag: " + n);
    }
    return out;
}

/// --gpus N where it gives the node count (nodes = N / GPUs per node), bound to the
/// topology_request that `topology(request)` gives.
template <class R, class Topology>
[[nodiscard]] bound_option<R> gpus_option(Topology topology, std::string help = "GPUs instead of --nodes (nodes = GPUs / GPUs per node)") {
    return topology_detail::bind<long long, R>({"gpus", true, std::move(help)}, [topology](R& r) -> auto& { return topology(r).gpus; },
                                               topology_detail::topology_readers().gpus);
}

/// Every topology flag bound to the topology_request `R::*topology` of a command's request.
template <class R>
[[nodiscard]] std::vector<bound_option<R>> topology_bound(topology_request R::*topology) {
    return topology_bound<R>([topology](R& r) -> topology_request& { return r.*topology; }, topology_options());
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
[[nodiscard]] inline commscale::cluster resolve_cluster(const topology_request& t, bool sub_node_domain = false) {
    using namespace commscale;
    const bool given = t.cluster.has_value();
    cluster c{};
    if (given) {
        c = **t.cluster;
    } else {
        c = cluster_by_name(default_cluster_name, "--cluster");
    }
    const bool custom = t.overrides();
    if (custom) c.name = detail::intern(given ? std::string(c.name) + "+flags" : std::string("custom"));

    if (t.nodes) c.nodes = static_cast<int>(**t.nodes);
    if (t.gpus_per_node) c.node.gpus = static_cast<int>(**t.gpus_per_node);

    const bool intra_changed = t.intra || t.intra_fabric;
    if (t.intra) {
        c.node.intra = **t.intra;
        if (!t.intra_fabric) {
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
        if (!given && !t.accelerator) {
            for (const auto& acc : all_accelerators()) {
                if (acc.scale_up_link == c.node.intra.name) {
                    c.node.accelerator = acc.name;
                    break;
                }
            }
        }
    }
    if (t.intra_fabric) c.node.fabric = **t.intra_fabric;
    if (intra_changed) {
        // NVLS where the link's NVLink generation has it (hardware/links.hpp nvlink_switch_reduces)
        c.node.in_switch_reduction = c.node.fabric == intra_fabric::switched && nvlink_switch_reduces(c.node.intra);
    }
    if (t.inter) c.node.inter = **t.inter;
    if (t.nics_per_node) c.node.nics = static_cast<int>(**t.nics_per_node);
    if (t.accelerator) c.node.accelerator = **t.accelerator;
    if (t.oversubscription) c.oversubscription = **t.oversubscription;

    if (t.scale_up_domain) {
        const long long g = **t.scale_up_domain;
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
        if (ends_with(".scale_up_domain") && t.scale_up_domain)
            throw input_error("--scale-up-domain", e.value(), e.expected());
        if (ends_with(".inter.nics_per_node") && t.nics_per_node) throw input_error("--nics-per-node", e.value(), e.expected());
        if (ends_with(".inter.link") && t.inter) throw input_error("--inter", e.value(), e.expected());
        if (ends_with(".inter.link") && t.nodes)
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
[[nodiscard]] inline commscale::cluster resolve_cluster_gpus(const topology_request& t) {
    using namespace commscale;
    if (!t.gpus) return resolve_cluster(t);
    const long long n = **t.gpus;
    if (t.nodes)
        throw input_error("--gpus", std::to_string(n) + " together with --nodes " + t.nodes->value.spelled(),
                          "either --gpus N or --nodes N, not both");
    cluster c = resolve_cluster(t);
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

/// What the options of the commands that run collectives give (collective_options_spec, and
/// --bytes of `collective`): each value as given with its reader, read where
/// read_collective_request's order reads it. --ranks and --ranks-per-node are read in the
/// cluster's bounds (their `value`).
struct collective_args {
    std::optional<given<commscale::collective_op>> op;
    std::optional<given<std::optional<commscale::algorithm>>> algo;  ///< nullopt: "fastest"
    std::optional<given<commscale::efficiency_mode>> efficiency;
    std::optional<given<long long>> ranks, ranks_per_node;
    std::optional<given<commscale::data_size>> bytes;
};

namespace topology_detail {
/// The readers of the collective's options, one of each for every request.
struct collective_readers {
    std::function<commscale::collective_op(const given_value&)> op = [](const given_value& v) {
        return reads::choice<commscale::collective_op>(v, "--op");
    };
    std::function<std::optional<commscale::algorithm>(const given_value&)> algo =
        [](const given_value& v) -> std::optional<commscale::algorithm> {
        const std::string text = v.spelled();
        // "fastest": the automatic choice among every algorithm of the library, not only NCCL's
        if (text == "fastest") return std::nullopt;
        return commscale::parse<commscale::algorithm>(text, "--algo");
    };
    std::function<commscale::efficiency_mode(const given_value&)> efficiency = [](const given_value& v) {
        return reads::choice<commscale::efficiency_mode>(v, "--efficiency");
    };
    /// --ranks and --ranks-per-node: read by the command in the cluster's bounds, not by this reader
    std::function<long long(const given_value&)> count = [](const given_value& v) {
        return reads::integer(v, "--ranks", 1, std::numeric_limits<long long>::max());
    };
    std::function<commscale::data_size(const given_value&)> bytes = [](const given_value& v) { return reads::size(v, "--bytes"); };
};
[[nodiscard]] inline const collective_readers& collective_option_readers() {
    static const collective_readers r;
    return r;
}
}  // namespace topology_detail

/// The collective's options (collective_options_spec) bound to the collective_args that
/// `args_of(request)` gives.
template <class R, class Args>
[[nodiscard]] std::vector<bound_option<R>> collective_bound(Args args_of) {
    using topology_detail::bind;
    const topology_detail::collective_readers& x = topology_detail::collective_option_readers();
    std::vector<bound_option<R>> out;
    for (const option_spec& s : collective_options_spec()) {
        const std::string& n = s.name;
        if (n == "op") out.push_back(bind<commscale::collective_op, R>(s, [args_of](R& r) -> auto& { return args_of(r).op; }, x.op));
        else if (n == "algo")
            out.push_back(bind<std::optional<commscale::algorithm>, R>(s, [args_of](R& r) -> auto& { return args_of(r).algo; }, x.algo));
        else if (n == "efficiency")
            out.push_back(bind<commscale::efficiency_mode, R>(s, [args_of](R& r) -> auto& { return args_of(r).efficiency; }, x.efficiency));
        else if (n == "ranks") out.push_back(bind<long long, R>(s, [args_of](R& r) -> auto& { return args_of(r).ranks; }, x.count));
        else if (n == "ranks-per-node")
            out.push_back(bind<long long, R>(s, [args_of](R& r) -> auto& { return args_of(r).ranks_per_node; }, x.count));
        else throw std::logic_error("not a collective option: " + n);
    }
    return out;
}

/// --bytes (`collective`'s buffer size) bound to the collective_args that `args_of(request)` gives.
template <class R, class Args>
[[nodiscard]] bound_option<R> bytes_option(Args args_of) {
    return topology_detail::bind<commscale::data_size, R>(
        {"bytes", true, "the buffer size, nccl-tests convention (e.g. 1GiB, 8GB, 4194304)"},
        [args_of](R& r) -> auto& { return args_of(r).bytes; }, topology_detail::collective_option_readers().bytes);
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
[[nodiscard]] inline collective_request read_collective_request(const collective_args& a, const commscale::cluster& c,
                                                               std::optional<commscale::collective_op> default_op = std::nullopt) {
    using namespace commscale;
    collective_request r;
    if (default_op && !a.op) r.op = *default_op;
    else if (!a.op) throw input_error("--op", "nothing (missing)", "an operation: all_reduce reduce_scatter all_gather broadcast reduce all_to_all send_recv");
    else r.op = **a.op;
    if (a.algo) {
        if (const std::optional<algorithm> algo = **a.algo) r.options.algo = *algo;
        else r.options.candidates = algorithm_set::any;
    }
    if (a.efficiency) r.options.mode = **a.efficiency;
    const long long total = static_cast<long long>(c.nodes) * c.node.gpus;
    const int ranks = static_cast<int>(a.ranks ? reads::integer(a.ranks->value, "--ranks", 1, total) : total);
    // on an NVLink domain spanning nodes (NVL72) the group is placed per domain (comm_view)
    const cluster v = comm_view(c);
    const int per_node = static_cast<int>(a.ranks_per_node ? reads::integer(a.ranks_per_node->value, "--ranks-per-node", 1, v.node.gpus)
                                                           : std::min(ranks, v.node.gpus));
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

/// The `collective` command's prediction on cluster `c` (what resolve_cluster_gpus gives for its
/// topology): --op, --algo, --efficiency, the group, and --bytes (required, at least 1 byte).
[[nodiscard]] inline collective_prediction predict_collective_on(const collective_args& a, const commscale::cluster& c) {
    using namespace commscale;
    collective_prediction x;
    x.cluster = c;
    x.request = read_collective_request(a, x.cluster);
    if (!a.bytes) throw input_error("--bytes", "nothing (missing)", "a size such as 1GiB");
    const data_size size = **a.bytes;
    if (!(in_bytes(size) >= 1.0))
        throw input_error("--bytes", detail::number_text(in_bytes(size)), "a size of at least 1 byte");
    x.result = predict_collective(x.cluster, x.request.group, x.request.op, size, x.request.options);
    return x;
}

/// What the options of `collective` give: the topology flags, --gpus and the collective's options.
struct collective_command_request {
    topology_request topology;
    collective_args collective;
};

/// The options of `collective`, in the order of its help: the topology flags, the collective's
/// options, --gpus, --bytes. Built once: requests point to their readers.
[[nodiscard]] inline const std::vector<bound_option<collective_command_request>>& collective_command_options() {
    using r = collective_command_request;
    static const auto options = [] {
        const auto topology = [](r& x) -> topology_request& { return x.topology; };
        const auto collective = [](r& x) -> collective_args& { return x.collective; };
        std::vector<bound_option<r>> o = topology_bound<r>(topology, topology_options()) + collective_bound<r>(collective);
        o.push_back(gpus_option<r>(topology));
        o.push_back(bytes_option<r>(collective));
        return o;
    }();
    return options;
}

/// The `collective` command's prediction from its options. predict_collective_on takes the cluster
/// resolve_cluster_gpus gives for its topology (the Python module's batches resolve it once where
/// no row changes it).
[[nodiscard]] inline collective_prediction predict_collective_of(const collective_command_request& r) {
    return predict_collective_on(r.collective, resolve_cluster_gpus(r.topology));
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
