// `commscale plan [--model] [--cluster|topology] --gpus N --global-batch B [--seq S] [--top K]
// [--threads T] [--shard i/N] [--json] [--out FILE]`: every valid TP x PP x DP x CP x EP x
// micro-batch x ZeRO x recompute x schedule x sequence-parallel plan, ranked by predicted step
// time (search/planner.hpp; docs/CLI.md "Calibration and planning").
// `commscale plan-merge FILE... [--top K] [--json] [--out FILE]`: combines the JSON outputs of
// `plan --shard 0/N` ... `plan --shard N-1/N` into the ranking of the unsharded search: each file
// read and checked by io::search_report_from_json, the results merged by the library's
// merge_results, the document written by io::search_report_to_json (io/result_json.hpp).
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/json_reader.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/search/planner.hpp>

#include "../cli.hpp"
#include "../model.hpp"
#include "../step_args.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace plan_command {

using namespace commscale;

/// --pareto-factor X: 0 (the whole front) or a factor in [1, 1e6]; default_pareto_max_slowdown if absent.
double pareto_factor(const cli::args& a) {
    const double x = a.number("pareto-factor", default_pareto_max_slowdown);
    if (!(x == 0 || (x >= 1 && x <= 1e6)))
        throw input_error("--pareto-factor", "'" + *a.get("pareto-factor") + "'", "0 (the whole front) or a factor in [1, 1e6]");
    return x;
}

/// "i/N" with 0 <= i < N (io::parse_shard).
std::pair<int, int> parse_shard(const std::string& v, const std::string& field = "--shard") {
    return io::parse_shard(v, field);
}

// ---------------------------------------------------------------- text output

void print_text(std::ostream& out, const nlohmann::json& j) {
    out << j["model"].get<std::string>() << " on " << j["gpus"].get<long long>() << " x "
        << j["accelerator"].get<std::string>() << " (" << j["nodes"].get<long long>() << " x "
        << j["cluster"].get<std::string>() << "), global batch " << j["global_batch"].get<long long>() << " x "
        << j["seq"].get<long long>() << " tokens";
    if (j["shard"].get<std::string>() != "0/1") out << ", shard " << j["shard"].get<std::string>();
    out << "\n" << j["evaluated"].get<long long>() << " plans evaluated, " << j["feasible"].get<long long>()
        << " fit in memory, in " << cli::num(j["search_s"].get<double>(), 4) << " s\n\n";
    if (j["plans"].empty()) {
        out << "no plan: " << j.value("note", std::string("none found")) << "\n";
        return;
    }
    std::vector<std::vector<std::string>> rows;
    int rank = 1;
    for (const auto& p : j["plans"]) {
        std::string sched = p["schedule"].get<std::string>();
        if (p["virtual_stages"].get<int>() > 1) sched += " x" + std::to_string(p["virtual_stages"].get<int>());
        // Megatron-Core's embedding/loss pipeline-split flags (keys present only when set): +E, +L
        if (p.value("account_for_embedding_in_pipeline_split", false)) sched += " +E";
        if (p.value("account_for_loss_in_pipeline_split", false)) sched += " +L";
        rows.push_back({std::to_string(rank++), std::to_string(p["tp"].get<int>()), std::to_string(p["pp"].get<int>()),
                        std::to_string(p["dp"].get<int>()), std::to_string(p["cp"].get<int>()),
                        // expert TP only where it is not tp (planned_to_json's rule)
                        std::to_string(p["ep"].get<int>()) + (p.contains("etp") ? " etp " + std::to_string(p["etp"].get<int>()) : ""),
                        std::to_string(p["micro_batch"].get<int>()),
                        std::to_string(p["zero"].get<int>()), p["recompute"].get<std::string>(), sched,
                        p["sequence_parallel"].get<bool>() ? "yes" : "no", cli::num(p["step_s"].get<double>(), 3),
                        cli::num(100 * p["mfu"].get<double>(), 1), cli::num(p["memory_per_gpu_GiB"].get<double>(), 1),
                        p["bottleneck"].get<std::string>()});
    }
    cli::print_table(out,
                     {"#", "tp", "pp", "dp", "cp", "ep", "mb", "zero", "recompute", "schedule", "sp", "step s", "MFU %",
                      "mem GiB", "bottleneck"},
                     rows);
    out << "\nPareto front (step time vs memory headroom";
    const double factor = j["space"].value("pareto_max_slowdown", 0.0);
    if (factor > 0) out << ", within " << cli::num(factor, 3) << " x the best step";
    out << "): " << j["pareto"].size() << " plans";
    if (!j["pareto"].empty()) {
        const auto& last = j["pareto"].back();
        out << ", from " << cli::num(j["pareto"].front()["step_s"].get<double>(), 3) << " s at "
            << cli::num(j["pareto"].front()["memory_per_gpu_GiB"].get<double>(), 1) << " GiB to "
            << cli::num(last["step_s"].get<double>(), 3) << " s at " << cli::num(last["memory_per_gpu_GiB"].get<double>(), 1)
            << " GiB";
    }
    out << " (--json lists them)\n";
}

int emit(const cli::args& a, std::ostream& out, const nlohmann::json& j) {
    if (auto path = a.get("out")) io::write_file_atomic(*path, j.dump(2) + "\n", "--out");
    if (a.flag("json")) cli::print_json(out, j);
    else print_text(out, j);
    return 0;
}

std::vector<cli::option_spec> plan_options() {
    std::vector<cli::option_spec> o = cli::topology_options();
    o.push_back(cli::model_option());
    o.push_back({"gpus", true, "GPUs to plan for (the node count is GPUs / GPUs per node)"});
    o.push_back({"global-batch", true, "sequences per optimizer step"});
    o.push_back({"seq", true, "sequence length in tokens (default min(2048, model context))"});
    o.push_back({"top", true, "plans to return (default 10)"});
    o.push_back({"threads", true, "worker threads (default: the machine's cores)"});
    o.push_back({"shard", true, "i/N: search only shard i (0-based) of N; merge with plan-merge"});
    o.push_back({"max-micro-batch", true, "largest micro-batch tried (default: any)"});
    o.push_back({"max-virtual-stages", true, "largest V of the interleaved schedule (default: any)"});
    o.push_back({"max-cp", true, "largest context-parallel degree (default: any)"});
    o.push_back({"min-cp-tokens", true,
                 "fewest tokens per context-parallel rank (seq / cp) tried with cp >= 2 (default 4096; 0: any)"});
    o.push_back({"pareto-factor", true, "Pareto front: plans within this factor of the best step time (default 2; 0: all)"});
    o.push_back({"no-sequence-parallel", false, "do not try sequence parallelism"});
    o.push_back({"no-zero-bubble", false, "do not try the zb-h1, zb-v and dualpipe schedules"});
    o.push_back({"no-pipeline-split", false,
                 "do not try counting the embedding/loss as pipeline layers (Megatron-Core's "
                 "--account-for-embedding/loss-in-pipeline-split)"});
    o.push_back({"dtype", true, "fp32|tf32|bf16|fp16|fp8|mxfp8|nvfp4|fp4 (default bf16; the accelerator must have a peak for it)"});
    o.push_back({"framework", true, "megatron-core|megatron-lm|megatron-deepspeed|deepspeed|fsdp (default megatron-core)"});
    o.push_back({"compute-efficiency", true, "achievable fraction of peak, overriding the default"});
    o.push_back({"efficiency", true, "collective model: ideal|default"});
    o.push_back({"out", true, "also write the JSON result to FILE (atomically)"});
    return o;
}

cli::registrar reg_plan{cli::command{
    "plan",
    "search every TP/PP/DP/CP/EP/micro-batch/ZeRO/recompute/schedule plan, ranked by step time",
    "usage: commscale plan [--model NAME|FILE] [--cluster NAME|FILE | topology flags] --gpus N --global-batch B\n"
    "                      [--seq S] [--top K] [--threads T] [--shard i/N] [--scale-up-domain G]\n"
    "                      [--max-micro-batch b] [--max-virtual-stages V] [--max-cp C] [--min-cp-tokens T]\n"
    "                      [--pareto-factor X] [--no-sequence-parallel] [--no-zero-bubble] [--no-pipeline-split]\n"
    "                      [--dtype bf16] [--framework NAME] [--compute-efficiency X] [--efficiency ideal|default]\n"
    "                      [--json] [--out FILE]\n"
    "Enumerates every valid plan (divisibility of heads, layers x V, batch, experts, sequence; TP inside\n"
    "the scale-up domain: the cluster's NVLink domain, or --scale-up-domain G, where a G below the node's\n"
    "GPUs limits TP only and a multiple of them makes the domain span nodes), predicts each with the step model, and lists the fastest that fit in memory,\n"
    "best first; ties by tp, pp, dp, cp, ep, micro_batch, zero, recompute, schedule, V, sp ascending.\n"
    "Where pp x V does not divide the layers but divides layers + 1 or + 2, 1f1b and interleaved are also\n"
    "tried with the loss and/or embedding counted as pipeline layers (Megatron-Core's\n"
    "--account-for-*-in-pipeline-split; schedule shown with +E / +L; --no-pipeline-split skips them).\n"
    "Context parallelism keeps at least --min-cp-tokens (default 4096, the fewest of any published run with\n"
    "CP) of the sequence on each CP rank; the Pareto front keeps plans within --pareto-factor (default 2) x\n"
    "the best step time. For MoE models expert TP (--etp) is searched over tp and its divisors, EP over\n"
    "tp x cp x dp / etp (shown as `ep etp E` where etp is not tp; plan JSON key `etp`, absent when it is tp).\n"
    "--shard i/N searches one of N disjoint parts (0 <= i < N), for N independent jobs (Slurm job array:\n"
    "--shard $SLURM_ARRAY_TASK_ID/N; Kubernetes indexed job: --shard $JOB_COMPLETION_INDEX/N) each\n"
    "with --json --out shard-i.json; `commscale plan-merge shard-*.json` gives the unsharded ranking.\n"
    "JSON: {evaluated, feasible, search_s, plans: [{tp, pp, dp, cp, ep, micro_batch, zero, recompute,\n"
    "schedule, virtual_stages, sequence_parallel, step_s, mfu, memory_per_gpu_GiB, memory_headroom_GiB,\n"
    "bottleneck, breakdown}], pareto: [...], candidates, rejected, shard, ...}.",
    plan_options(),
    [](const cli::args& a, std::ostream& out) {
        const transformer m = cli::resolve_model(a);
        if (!a.has("gpus")) throw input_error("--gpus", "nothing (missing)", "the number of GPUs to plan for");
        const long long gpus = a.integer("gpus", 0, 1, search_limits::gpus);
        const cluster given = cli::resolve_cluster(a, true);  // --scale-up-domain below the node: a TP limit only
        const cluster c = cluster_for_gpus(given, gpus, "--gpus");
        if (a.has("nodes") && given.nodes != c.nodes)
            throw input_error("--gpus", std::to_string(gpus),
                              "--nodes x GPUs per node (" + std::to_string(static_cast<long long>(given.nodes) * given.node.gpus) +
                                  "), or drop --nodes");
        const accelerator acc = accelerator_by_name(c.node.accelerator, "cluster.accelerator");

        search_request r;
        if (!a.has("global-batch")) throw input_error("--global-batch", "nothing (missing)", "sequences per optimizer step");
        r.global_batch = static_cast<int>(a.integer("global-batch", 0, 1, plan_limits::global_batch));
        r.seq = static_cast<int>(a.integer("seq", m.max_seq > 0 ? std::min(2048, m.max_seq) : 2048, 1, plan_limits::seq));
        r.top_k = static_cast<int>(a.integer("top", 10, 1, search_limits::top_k));
        const long long hw = std::max(1u, std::thread::hardware_concurrency());
        r.threads = static_cast<int>(a.integer("threads", hw, 1, search_limits::threads));
        if (auto v = a.get("shard")) std::tie(r.shard, r.shards) = parse_shard(*v);
        r.scale_up_domain = static_cast<int>(a.integer("scale-up-domain", 0, 1, search_limits::scale_up_domain));
        if (r.scale_up_domain > 0 && r.scale_up_domain % c.node.gpus != 0 && c.node.gpus % r.scale_up_domain != 0)
            throw input_error("--scale-up-domain", std::to_string(r.scale_up_domain),
                              "a divisor or a multiple of the " + std::to_string(c.node.gpus) +
                                  " GPUs per node (a part of a node, or whole nodes such as an NVL72 rack)");
        r.max_micro_batch = static_cast<int>(a.integer("max-micro-batch", 0, 1, search_limits::max_micro_batch));
        r.max_virtual_stages = static_cast<int>(a.integer("max-virtual-stages", 0, 1, plan_limits::virtual_stages));
        r.max_cp = static_cast<int>(a.integer("max-cp", 0, 1, search_limits::max_cp));
        r.min_cp_tokens = static_cast<int>(a.integer("min-cp-tokens", default_min_cp_tokens, 0, plan_limits::seq));
        r.pareto_max_slowdown = pareto_factor(a);
        r.try_sequence_parallel = !a.flag("no-sequence-parallel");
        r.try_zero_bubble = !a.flag("no-zero-bubble");
        r.try_pipeline_split = !a.flag("no-pipeline-split");
        apply_framework(r.base, parse<framework>(a.get("framework").value_or("megatron-core"), "--framework"));
        if (auto v = a.get("dtype")) r.base.precision = parse<dtype>(*v, "--dtype");
        (void)peak_for(acc, r.base.precision, "--dtype");
        if (a.has("compute-efficiency"))
            r.base.compute_efficiency = require_range("--compute-efficiency", a.number("compute-efficiency", 0.5), 1e-6, 1.0);
        r.options = cli::step_opts(a);

        search_result res = search_plans(m, c, acc, r);

        search_report rep;
        rep.model = std::string(m.name);
        rep.cluster = std::string(c.name);
        rep.accelerator = std::string(c.node.accelerator);
        rep.nodes = c.nodes;
        rep.gpus = gpus;
        rep.request = r;
        rep.request.scale_up_domain = r.scale_up_domain > 0 ? r.scale_up_domain : c.domain_gpus();
        rep.note = empty_reason(m, c, r, res);
        rep.result = std::move(res);
        const nlohmann::json j = io::search_report_to_json(rep);
        return emit(a, out, j);
    },
    0, 0}};

// ---------------------------------------------------------------- plan-merge

cli::registrar reg_merge{cli::command{
    "plan-merge",
    "merge the JSON outputs of `plan --shard i/N` jobs into one ranking",
    "usage: commscale plan-merge FILE... [--json] [--out FILE]\n"
    "FILE: the --json output (or --out file) of `commscale plan --shard i/N` for every i in 0..N-1, each\n"
    "exactly once, all of the same search (model, cluster, GPUs, batch, seq, top, space). `-` reads stdin.\n"
    "Prints the result of the unsharded search: plans (top K by step time, then plan key), the Pareto\n"
    "front of the union, and evaluated/feasible/candidates summed; search_s is the sum over shards,\n"
    "search_s_max the slowest shard.",
    {{"out", true, "also write the merged JSON to FILE (atomically)"}},
    [](const cli::args& a, std::ostream& out) {
        std::vector<nlohmann::json> docs;
        for (const auto& path : a.positional) {
            const std::string text = path == "-" ? io::read_stream(std::cin, "standard input", "FILE")
                                                 : io::read_file(path, "FILE");
            docs.push_back(io::parse_json(text, path));
            if (!docs.back().is_object()) throw input_error(path, io::json_type_name(docs.back()), "a `plan --json` object");
        }
        // the shard-set checks and the merge: io/result_json.hpp merge_search_reports
        const search_report merged = io::merge_search_reports(docs, a.positional);
        const nlohmann::json j = io::search_report_to_json(merged);
        return emit(a, out, j);
    },
    1, -1}};

}  // namespace plan_command
}  // namespace
