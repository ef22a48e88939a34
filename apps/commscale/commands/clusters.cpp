// `commscale clusters` and `commscale cluster NAME|FILE [--nodes N]`: the cluster presets
// (include/commscale/hardware/clusters.hpp, data/clusters/*.json).
// `cluster NAME --json` prints the cluster JSON that `--cluster FILE` reads back.
#include <string>
#include <vector>

#include <commscale/units/format.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace clusters_command {

using commscale::cluster;

std::string link_summary(const commscale::link& l) {
    if (l.name.empty()) return "-";
    return std::string(l.name) + " (" + cli::num(commscale::in_GBps(l.per_direction), 1) + " GB/s)";
}

/// Derived figures printed with a cluster (per direction throughout).
nlohmann::json derived(const cluster& c) {
    return {{"total_gpus", c.total_gpus()},
            {"intra_per_gpu_GBps", commscale::in_GBps(c.node.intra.per_direction)},
            {"nic_GBps", commscale::in_GBps(c.node.inter.per_direction)},
            {"gpus_per_nic", c.node.gpus_per_nic()},
            {"node_injection_Gbps", commscale::in_Gbps(c.node.node_injection())}};
}

cli::registrar reg_list{cli::command{
    "clusters",
    "list the cluster presets (dgx-a100, dgx-h100, aws-p5, baskerville, ...)",
    "usage: commscale clusters [--json]\n"
    "Lists the cluster presets. Product presets (servers, cloud instances) describe one node; use\n"
    "--nodes N with any command to scale them. The rack-scale presets (gb200-nvl72, gb300-nvl72) are one\n"
    "rack: 18 nodes (compute trays of 4 GPUs) in one 72-GPU NVLink domain (scale_up_domain).\n"
    "--json: {clusters: [cluster JSON, ...]}.",
    {},
    [](const cli::args& a, std::ostream& out) {
        if (a.flag("json")) {
            nlohmann::json list = nlohmann::json::array();
            for (const cluster& c : commscale::all_clusters()) list.push_back(commscale::io::cluster_to_json(c));
            cli::print_json(out, {{"clusters", list}});
            return 0;
        }
        std::vector<std::vector<std::string>> rows;
        for (const cluster& c : commscale::all_clusters()) {
            rows.push_back({std::string(c.name), std::to_string(c.nodes), std::to_string(c.node.gpus),
                            std::string(c.node.accelerator), std::string(c.node.intra.name),
                            std::string(to_string(c.node.fabric)),
                            std::to_string(c.node.nics) + " x " + std::string(c.node.inter.name),
                            cli::num(commscale::in_Gbps(c.node.node_injection()), 0)});
        }
        cli::print_table(out, {"name", "nodes", "gpus/node", "accelerator", "intra", "fabric", "nics", "Gbps/node"}, rows);
        return 0;
    },
    0, 0}};

/// What `cluster`'s options give: the topology flags but --cluster (its NAME|FILE), and --gpus, read
/// after the cluster and after the check that --nodes is not given too, whose error quotes both.
struct cluster_request {
    cli::topology_request topology;
    std::optional<cli::given<long long>> gpus;
};

std::vector<cli::bound_option<cluster_request>> cluster_options() {
    std::vector<cli::option_spec> topology;
    for (auto& t : cli::topology_options())
        if (t.name != "cluster") topology.push_back(std::move(t));
    return cli::topology_bound<cluster_request>([](cluster_request& r) -> cli::topology_request& { return r.topology; }, topology) +
           std::vector<cli::bound_option<cluster_request>>{cli::opt::given<cluster_request>(
               "gpus", &cluster_request::gpus,
               [](const cli::given_value& v, const std::string& flag) {
                   return cli::reads::integer(v, flag, 1, commscale::cluster_limits::gpus);
               },
               "total GPUs (nodes = N / GPUs per node)")};
}

cli::registrar reg_one{cli::bound_command<cluster_request>(
    "cluster",
    "show one cluster preset or cluster JSON file (--nodes N overrides the node count)",
    "usage: commscale cluster NAME|FILE [--nodes N | --gpus N] [topology flags] [--json]\n"
    "NAME: a preset (commscale clusters), FILE a cluster JSON file (schema in CLI.md) or the JSON inline; flags override its fields.\n"
    "--json: the cluster JSON (which --cluster FILE accepts) plus a \"derived\" object.",
    cluster_options(),
    [](const cluster_request& req, const cli::args& a, std::ostream& out) {
        // NAME|FILE stands for --cluster; --nodes/--gpus alone keep the preset's name.
        cli::topology_request t = req.topology;
        t.cluster = cli::given<cluster>{cli::given_value::of_text(a.positional[0]), &cli::topology_detail::topology_readers().cluster};
        t.nodes.reset();
        cluster c = t.overrides() ? cli::resolve_cluster(t) : cli::load_cluster_value(a.positional[0], "cluster");
        if (req.gpus) {
            if (req.topology.nodes)
                throw commscale::input_error("--gpus", req.gpus->value.spelled() + " together with --nodes " + req.topology.nodes->value.spelled(),
                                             "either --gpus N or --nodes N, not both");
            c.nodes = cli::nodes_for_gpus(**req.gpus, c.node.gpus, c.name);
        }
        if (req.topology.nodes) c.nodes = static_cast<int>(**req.topology.nodes);
        commscale::validate(c, "cluster");
        if (a.flag("json")) {
            nlohmann::json j = commscale::io::cluster_to_json(c);
            j["derived"] = derived(c);
            cli::print_json(out, j);
            return 0;
        }
        out << "name              " << c.name << "\n"
            << "nodes             " << c.nodes << " x " << c.node.gpus << " GPUs = " << c.total_gpus() << " GPUs\n";
        if (c.domain_spans_nodes())
            out << "NVLink domain     " << c.scale_up_domain << " GPUs (" << c.scale_up_domain / c.node.gpus
                << " nodes) on one switched fabric\n";
        out
            << "accelerator       " << (c.node.accelerator.empty() ? "-" : std::string(c.node.accelerator)) << "\n"
            << "intra-node        " << link_summary(c.node.intra) << " per GPU per direction, fabric "
            << to_string(c.node.fabric) << (c.node.in_switch_reduction ? ", in-switch reduction" : "")
            << "\n"
            << "inter-node        " << c.node.nics << " x " << link_summary(c.node.inter) << " = "
            << cli::num(commscale::in_Gbps(c.node.node_injection()), 0) << " Gbps per node, "
            << c.node.gpus_per_nic() << " GPU(s) per NIC" << (c.node.gpudirect_rdma ? ", GPUDirect RDMA" : "") << "\n"
            << "fabric            oversubscription " << cli::num(c.oversubscription, 2) << ":1, " << c.nodes_per_leaf
            << " nodes per leaf" << (c.rail_optimized ? ", rail-optimized" : "")
            << (c.in_network_reduction ? ", in-network reduction" : "") << "\n"
            << "source            " << (c.source.empty() ? "-" : std::string(c.source)) << "\n";
        return 0;
    },
    1, 1)};

}  // namespace clusters_command
}  // namespace
