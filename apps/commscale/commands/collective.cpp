// `commscale collective --op OP --bytes SIZE [topology] [--algo ALGO] [--efficiency ideal|default]`:
// one collective's predicted time, algbw/busbw (nccl-tests conventions) and bottleneck
// (docs/CLI.md "Collectives"; the model is include/commscale/collective/model.hpp).
#include <string>
#include <vector>

#include <commscale/collective/model.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/units/format.hpp>

#include "../cli.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace collective_command {

std::vector<cli::option_spec> options() {
    auto o = cli::topology_options();
    auto more = cli::collective_options_spec();
    o.insert(o.end(), more.begin(), more.end());
    o.push_back({"gpus", true, "GPUs instead of --nodes (nodes = GPUs / GPUs per node)"});
    o.push_back({"bytes", true, "the buffer size, nccl-tests convention (e.g. 1GiB, 8GB, 4194304)"});
    return o;
}

cli::registrar reg{cli::command{
    "collective",
    "predict one collective (time, algbw, busbw, bottleneck) on a cluster",
    "usage: commscale collective --op OP --bytes SIZE [topology] [--algo ALGO] [--efficiency ideal|default]\n"
    "                            [--ranks N] [--ranks-per-node R] [--json]\n"
    "  --op          all_reduce reduce_scatter all_gather broadcast reduce all_to_all send_recv\n"
    "  --bytes       the full buffer as nccl-tests counts it (all_gather/reduce_scatter: total over ranks)\n"
    "  --algo        auto (default: the fastest of the algorithms NCCL implements for the operation,\n"
    "                as NCCL would pick), fastest (the fastest of all below), or one of: ring tree\n"
    "                double_binary_tree parameter_server parameter_server_sharded direct\n"
    "                halving_doubling hierarchical nvls pat (NCCL's PAT: all_gather / reduce_scatter,\n"
    "                one rank per node)\n"
    "  --efficiency  default (realistic protocol/efficiency model) or ideal (closed forms on datasheet peaks)\n"
    "  --ranks N     ranks in the group (default: every GPU of the cluster), placed on consecutive GPUs\n"
    "  --ranks-per-node R  ranks on each node (default: min(N, GPUs per node)); where the NVLink domain\n"
    "                spans nodes (gb200-nvl72), ranks on each domain, and nodes in the result count domains\n"
    "topology: --cluster NAME|FILE, or --nodes N --gpus-per-node G --intra LINK [--intra-fabric switch|mesh|pcie]\n"
    "          [--inter LINK] [--nics-per-node K] [--accelerator NAME] [--oversubscription R];\n"
    "          flags override the preset's fields; default preset dgx-a100. --gpus N instead of --nodes:\n"
    "          nodes = N / GPUs per node (an N the node size does not divide, or both flags, is an error).\n"
    "--json: {op, algorithm, ranks, nodes, bytes, time_us, algbw_GBps, busbw_GBps, latency_us, transfer_us, bottleneck}",
    options(),
    [](const cli::args& a, std::ostream& out) {
        const cli::collective_prediction x = cli::predict_collective_of(a);
        const commscale::cluster& c = x.cluster;
        const cli::collective_request& req = x.request;
        const commscale::collective_result& r = x.result;
        const nlohmann::json j = commscale::io::collective_result_to_json(r);
        if (a.flag("json")) {
            cli::print_json(out, j);
            return 0;
        }
        out << to_string(r.op) << " of " << commscale::to_string(r.bytes) << " ("
            << cli::num(commscale::in_bytes(r.bytes), 0) << " B) on " << r.ranks << " ranks / " << r.nodes
            << " node(s) of " << c.name << ", algorithm " << to_string(r.algo)
            << (req.options.mode == commscale::efficiency_mode::ideal ? " (ideal)" : "") << "\n"
            << "time        " << cli::num(commscale::in_us(r.time), 3) << " us  (latency "
            << cli::num(commscale::in_us(r.latency), 3) << " us + transfer " << cli::num(commscale::in_us(r.transfer), 3)
            << " us)\n"
            << "algbw       " << cli::num(commscale::in_GBps(r.algbw), 3) << " GB/s\n"
            << "busbw       " << cli::num(commscale::in_GBps(r.busbw), 3) << " GB/s\n"
            << "bottleneck  " << j["bottleneck"].get<std::string>() << "\n";
        return 0;
    },
    0, 0}};

}  // namespace collective_command
}  // namespace
