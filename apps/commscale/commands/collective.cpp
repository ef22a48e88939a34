// `commscale collective --op OP --bytes SIZE [topology] [--algo ALGO] [--efficiency ideal|default]`:
// one collective's predicted time, algbw/busbw (nccl-tests conventions) and bottleneck
// (docs/CLI.md "Collectives"; the model is include/commscale/collective/model.hpp).
#include <string>
#include <vector>

#include <commscale/collective/model.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/units/format.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace collective_command {

cli::registrar reg{cli::bound_command<cli::collective_command_request>(
    "collective",
    "predict one collective (time, algbw, busbw, bottleneck) on a cluster",
    "usage: commscale collective --op OP --bytes SIZE [topology] [--algo ALGO] [--ranks N] [--ranks-per-node R] [--json]\n"
    "Predicts one collective on a group of consecutive GPUs (all by default); --bytes counts the buffer as nccl-tests does.\n"
    "--json: {op, algorithm, ranks, nodes, bytes, time_us, algbw_GBps, busbw_GBps, latency_us, transfer_us, bottleneck}",
    cli::collective_command_options(),
    [](const cli::collective_command_request& request, const cli::args& a, std::ostream& out) {
        const cli::collective_prediction x = cli::predict_collective_of(request);
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
    })};

}  // namespace collective_command
}  // namespace
