// `commscale plan [--model] [--cluster|topology] --gpus N --global-batch B [--seq S] [--top K]
// [--threads T] [--shard i/N] [--json] [--out FILE]`: every valid TP x PP x DP x CP x EP x
// micro-batch x ZeRO x recompute x schedule x sequence-parallel plan, ranked by predicted step
// time (search/planner.hpp; docs/CLI.md "Calibration and planning").
// `commscale plan-merge FILE... [--top K] [--json] [--out FILE]`: combines the JSON outputs of
// `plan --shard 0/N` ... `plan --shard N-1/N` into the ranking of the unsharded search.
#include <algorithm>
#include <array>
#include <iostream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/json_reader.hpp>
#include <commscale/search/planner.hpp>

#include "../cli.hpp"
#include "../model.hpp"
#include "../step_args.hpp"
#include "../topology.hpp"

namespace {

using namespace commscale;

/// "i/N" with 0 <= i < N.
std::pair<int, int> parse_shard(const std::string& v, const std::string& field = "--shard") {
    const auto slash = v.find('/');
    const char* expected = "i/N with 0 <= i < N, e.g. 3/16 (shards are numbered from 0, like Slurm array and "
                           "Kubernetes indexed-job indices)";
    if (slash == std::string::npos || slash == 0 || slash + 1 >= v.size()) throw input_error(field, "'" + v + "'", expected);
    auto digits = [](const std::string& s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    };
    const std::string i = v.substr(0, slash), n = v.substr(slash + 1);
    if (!digits(i) || !digits(n) || i.size() > 9 || n.size() > 9) throw input_error(field, "'" + v + "'", expected);
    const int ii = std::stoi(i), nn = std::stoi(n);
    if (nn < 1 || ii >= nn) throw input_error(field, "'" + v + "'", expected);
    return {ii, nn};
}

nlohmann::json planned_json(const planned& x) {
    const plan& p = x.p;
    const step_breakdown& r = x.r;
    const double mem = in_bytes(r.memory.total());
    return {{"tp", p.tp},
            {"pp", p.pp},
            {"dp", p.dp},
            {"cp", p.cp},
            {"ep", p.ep},
            {"micro_batch", p.micro_batch},
            {"zero", p.zero},
            {"recompute", std::string(recompute_name(p.recompute_mode))},
            {"schedule", std::string(schedule_name(p.schedule))},
            {"virtual_stages", p.chunks()},
            {"sequence_parallel", p.sequence_parallel},
            {"step_s", in_seconds(r.step)},
            {"mfu", r.mfu},
            {"memory_per_gpu_GiB", mem / gibi},
            {"memory_per_gpu_bytes", mem},
            {"memory_headroom_GiB", (in_bytes(r.memory_capacity) - mem) / gibi},
            {"bottleneck", std::string(cli::contract_bottleneck(r.bottleneck))},
            {"micro_batches", r.micro_batches},
            {"breakdown", cli::step_json(r)}};
}

// ---------------------------------------------------------------- ranking of JSON plans

/// The ranking key of a plan object (search/planner.hpp): step_s, then tp, pp, dp, cp, ep,
/// micro_batch, zero, recompute, schedule, virtual_stages, sequence_parallel.
struct json_key {
    double step = 0, memory = 0;
    std::array<int, 11> key{};
};

/// Checks a plan's `breakdown` (`where` = "FILE.plans[i].breakdown"): the keys cli::step_json
/// writes and no others, each of the type written there; times (`*_s`) in [0, 1e9] s, memory in
/// [0, 1e9] GiB and every other number finite, within +-1e18; null only for the
/// required_inter_node_* rates (written null when they do not apply).
void check_breakdown(const nlohmann::json& b, const std::string& where) {
    static const nlohmann::json shape = cli::step_json(step_breakdown{});
    const io::json_reader r(b, where);
    for (const auto& [key, t] : shape.items()) {
        if (!b.contains(key)) continue;
        const bool may_be_null = key.rfind("required_inter_node", 0) == 0;
        if (may_be_null && b.at(key).is_null()) {
            r.ignore({key.c_str()});
            continue;
        }
        const bool is_time = key.size() > 2 && key.compare(key.size() - 2, 2, "_s") == 0;
        if (t.is_object()) {
            const io::json_reader inner = r.object(key);
            for (const auto& [k2, t2] : t.items()) {
                (void)t2;
                if (b.at(key).contains(k2)) (void)inner.number(k2, 0.0, 1e9);
            }
            inner.finish();
        } else if (t.is_string()) {
            (void)r.string(key);
        } else if (t.is_boolean()) {
            (void)r.boolean(key);
        } else if (is_time) {
            (void)r.number(key, 0.0, 1e9);
        } else {
            (void)r.number(key, -1e18, 1e18);
        }
    }
    r.finish();
}

/// Reads and checks one plan object of a `plan --json` file (`where` = "FILE.plans[i]"): the keys
/// planned_json writes and no others, a step time in (0, 1e9] s, memory in [0, 1e18] B, and
/// tp x pp x dp x cp equal to the search's `gpus`.
json_key key_of(const nlohmann::json& j, const std::string& where, long long gpus) {
    if (!j.is_object()) throw input_error(where, io::json_type_name(j), "a plan object of `plan --json`");
    const io::json_reader r(j, where);
    json_key k;
    k.step = r.number("step_s", 1e-12, 1e9);
    k.memory = r.number("memory_per_gpu_bytes", 0.0, 1e18);
    const int big = 1 << 30;
    k.key = {r.int32("tp", 1, big), r.int32("pp", 1, big), r.int32("dp", 1, big), r.int32("cp", 1, big),
             r.int32("ep", 1, big), r.int32("micro_batch", 1, big), r.int32("zero", 0, 3),
             static_cast<int>(recompute_from_name(r.string("recompute"), r.field("recompute"))),
             static_cast<int>(parse_schedule(r.string("schedule"), r.field("schedule"))),
             r.int32("virtual_stages", 1, big), r.boolean("sequence_parallel") ? 1 : 0};
    const long long used = static_cast<long long>(k.key[0]) * k.key[1] * k.key[2] * k.key[3];
    if (used != gpus)
        throw input_error(where + ".tp", std::to_string(k.key[0]) + " (tp x pp x dp x cp = " + std::to_string(used) + ")",
                          "a plan whose tp x pp x dp x cp is the search's " + std::to_string(gpus) + " GPUs");
    (void)r.number("mfu", 0.0, 1.0);
    (void)r.number("memory_per_gpu_GiB", 0.0, 1e9);
    (void)r.number("memory_headroom_GiB", -1e9, 1e9);
    (void)r.string("bottleneck");
    (void)r.int32("micro_batches", 1, big);
    if (r.has("breakdown")) check_breakdown(r.raw("breakdown"), r.field("breakdown"));
    r.finish();
    return k;
}

/// Checks the search fields of one `plan --json` document (`r` over the file's object, errors
/// naming FILE.field): the types and ranges `plan` writes (gpus up to 2^30, top up to 2^20, ...),
/// the `space` object's keys, and the optional keys of a shard (threads, note) or of a merged
/// result (merged_shards, search_s_max). The caller reads the rest and calls r.finish().
void check_search(const io::json_reader& r) {
    (void)r.string("model"), (void)r.string("cluster"), (void)r.string("accelerator");
    const long long nodes = r.integer("nodes", 1, cluster_limits::nodes), gpus = r.integer("gpus", 1, search_limits::gpus);
    if (gpus % nodes != 0)
        throw input_error(r.field("gpus"), std::to_string(gpus), "a multiple of nodes (" + std::to_string(nodes) + ")");
    (void)r.integer("global_batch", 1, plan_limits::global_batch), (void)r.integer("seq", 1, plan_limits::seq), (void)r.integer("top", 1, search_limits::top_k);
    if (r.has("threads")) (void)r.integer("threads", 1, search_limits::threads);
    if (r.has("note")) (void)r.string("note");
    if (r.has("merged_shards")) (void)r.integer("merged_shards", 1, 1 << 30);
    if (r.has("search_s_max")) (void)r.number("search_s_max", 0.0, 1e9);
    const io::json_reader space = r.object("space");
    (void)space.integer("scale_up_domain", 1, search_limits::scale_up_domain);
    (void)space.integer("max_micro_batch", 0, search_limits::max_micro_batch), (void)space.integer("max_virtual_stages", 0, plan_limits::virtual_stages);
    (void)space.integer("max_cp", 0, search_limits::max_cp), (void)space.boolean("sequence_parallel");
    if (space.has("zero_bubble")) (void)space.boolean("zero_bubble");
    (void)precision_from_name(space.string("dtype"), space.field("dtype"));
    (void)parse_framework(space.string("framework"), space.field("framework"));
    if (space.has("compute_efficiency")) (void)space.number("compute_efficiency", 1e-6, 1.0);
    else space.ignore({"compute_efficiency"});  // null: the default
    const std::string eff = space.string("efficiency");
    if (eff != "ideal" && eff != "default") {
        constexpr std::array<std::string_view, 2> modes{"ideal", "default"};
        throw unknown_name(space.field("efficiency"), eff, modes);
    }
    space.finish();
}

bool key_before(const json_key& a, const json_key& b) {
    if (a.step != b.step) return a.step < b.step;
    return a.key < b.key;
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
        rows.push_back({std::to_string(rank++), std::to_string(p["tp"].get<int>()), std::to_string(p["pp"].get<int>()),
                        std::to_string(p["dp"].get<int>()), std::to_string(p["cp"].get<int>()),
                        std::to_string(p["ep"].get<int>()), std::to_string(p["micro_batch"].get<int>()),
                        std::to_string(p["zero"].get<int>()), p["recompute"].get<std::string>(), sched,
                        p["sequence_parallel"].get<bool>() ? "yes" : "no", cli::num(p["step_s"].get<double>(), 3),
                        cli::num(100 * p["mfu"].get<double>(), 1), cli::num(p["memory_per_gpu_GiB"].get<double>(), 1),
                        p["bottleneck"].get<std::string>()});
    }
    cli::print_table(out,
                     {"#", "tp", "pp", "dp", "cp", "ep", "mb", "zero", "recompute", "schedule", "sp", "step s", "MFU %",
                      "mem GiB", "bottleneck"},
                     rows);
    out << "\nPareto front (step time vs memory headroom): " << j["pareto"].size() << " plans";
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
    o.push_back({"no-sequence-parallel", false, "do not try sequence parallelism"});
    o.push_back({"no-zero-bubble", false, "do not try the zb-h1, zb-v and dualpipe schedules"});
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
    "                      [--max-micro-batch b] [--max-virtual-stages V] [--max-cp C] [--no-sequence-parallel]\n"
    "                      [--no-zero-bubble]\n"
    "                      [--dtype bf16] [--framework NAME] [--compute-efficiency X] [--efficiency ideal|default]\n"
    "                      [--json] [--out FILE]\n"
    "Enumerates every valid plan (divisibility of heads, layers x V, batch, experts, sequence; TP inside\n"
    "the scale-up domain: the cluster's NVLink domain, or --scale-up-domain G, where a G below the node's\n"
    "GPUs limits TP only and a multiple of them makes the domain span nodes), predicts each with the step model, and lists the fastest that fit in memory,\n"
    "best first; ties by tp, pp, dp, cp, ep, micro_batch, zero, recompute, schedule, V, sp ascending.\n"
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
        cluster c = cli::resolve_cluster(a, true);  // --scale-up-domain below the node: a TP limit only
        if (gpus % c.node.gpus != 0)
            throw input_error("--gpus", std::to_string(gpus),
                              "a multiple of the " + std::to_string(c.node.gpus) + " GPUs per node of '" + std::string(c.name) + "'");
        if (gpus / c.node.gpus > cluster_limits::nodes)
            throw input_error("--gpus", std::to_string(gpus), "at most " + std::to_string(cluster_limits::nodes) + " nodes");
        const int nodes = static_cast<int>(gpus / c.node.gpus);
        if (a.has("nodes") && c.nodes != nodes)
            throw input_error("--gpus", std::to_string(gpus),
                              "--nodes x GPUs per node (" + std::to_string(static_cast<long long>(c.nodes) * c.node.gpus) + "), or drop --nodes");
        c.nodes = nodes;
        validate(c, "cluster");
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
        r.try_sequence_parallel = !a.flag("no-sequence-parallel");
        r.try_zero_bubble = !a.flag("no-zero-bubble");
        apply_framework(r.base, parse_framework(a.get("framework").value_or("megatron-core"), "--framework"));
        if (auto v = a.get("dtype")) r.base.precision = precision_from_name(*v, "--dtype");
        (void)peak_for(acc, r.base.precision, "--dtype");
        if (a.has("compute-efficiency"))
            r.base.compute_efficiency = require_range("--compute-efficiency", a.number("compute-efficiency", 0.5), 1e-6, 1.0);
        r.options = cli::step_opts(a);

        const search_result res = search_plans(m, c, acc, r);

        nlohmann::json plans = nlohmann::json::array(), pareto = nlohmann::json::array();
        for (const auto& x : res.top) plans.push_back(planned_json(x));
        for (const auto& x : res.pareto) pareto.push_back(planned_json(x));
        nlohmann::json j{{"model", std::string(m.name)},
                         {"cluster", std::string(c.name)},
                         {"accelerator", std::string(c.node.accelerator)},
                         {"nodes", c.nodes},
                         {"gpus", gpus},
                         {"global_batch", r.global_batch},
                         {"seq", r.seq},
                         {"top", r.top_k},
                         {"space",
                          {{"scale_up_domain", r.scale_up_domain > 0 ? r.scale_up_domain : c.domain_gpus()},
                           {"max_micro_batch", r.max_micro_batch},
                           {"max_virtual_stages", r.max_virtual_stages},
                           {"max_cp", r.max_cp},
                           {"sequence_parallel", r.try_sequence_parallel},
                           {"zero_bubble", r.try_zero_bubble},
                           {"dtype", std::string(dtype_name(r.base.precision))},
                           {"framework", std::string(framework_name(r.base.stack))},
                           {"compute_efficiency", r.base.compute_efficiency ? nlohmann::json(*r.base.compute_efficiency) : nlohmann::json(nullptr)},
                           {"efficiency", r.options.mode == efficiency_mode::ideal ? "ideal" : "default"}}},
                         {"shard", std::to_string(r.shard) + "/" + std::to_string(r.shards)},
                         {"threads", r.threads},
                         {"candidates", res.candidates},
                         {"evaluated", res.evaluated},
                         {"feasible", res.feasible},
                         {"rejected", res.rejected},
                         {"search_s", res.search_s},
                         {"plans", plans},
                         {"pareto", pareto}};
        if (const std::string why = empty_reason(m, c, r, res); !why.empty()) j["note"] = why;
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
        const nlohmann::json& first = docs.front();
        const std::string& first_path = a.positional.front();
        int shards = 0;
        std::set<int> seen;
        nlohmann::json all_plans = nlohmann::json::array(), all_front = nlohmann::json::array();
        std::vector<json_key> plan_keys, front_keys;  // checked as read, with the file in the field
        long long candidates = 0, evaluated = 0, feasible = 0, rejected = 0;
        double search_s = 0, search_max = 0;
        for (std::size_t i = 0; i < docs.size(); ++i) {
            const auto& d = docs[i];
            const std::string& path = a.positional[i];
            const io::json_reader r(d, path);
            check_search(r);
            for (const char* k : {"model", "cluster", "accelerator", "nodes", "gpus", "global_batch", "seq", "top", "space"}) {
                if (!d.contains(k)) throw input_error(path + "." + k, "nothing (missing)", "a `plan --json` output");
                if (d[k] != first[k])
                    throw input_error(path + "." + k, d[k].dump(), first[k].dump() + " as in " + first_path + " (shards of one search)");
            }
            const auto [index, count] = parse_shard(r.string("shard"), path + ".shard");
            if (i == 0) shards = count;
            if (count != shards)
                throw input_error(path + ".shard", r.string("shard"), "i/" + std::to_string(shards) + " as in " + first_path);
            if (!seen.insert(index).second)
                throw input_error(path + ".shard", r.string("shard"), "each shard once (" + std::to_string(index) + " given twice)");
            candidates += r.integer("candidates", 0, 1LL << 60);
            evaluated += r.integer("evaluated", 0, 1LL << 60);
            feasible += r.integer("feasible", 0, 1LL << 60);
            rejected += r.integer_or("rejected", 0, 0, 1LL << 60);
            const double s = r.number("search_s", 0.0, 1e9);
            search_s += s;
            search_max = std::max(search_max, s);
            const long long doc_gpus = r.integer("gpus", 1, search_limits::gpus);
            for (const char* list : {"plans", "pareto"}) {
                const auto& arr = r.raw(list);
                if (!arr.is_array()) throw input_error(path + "." + list, io::json_type_name(arr), "an array of plans");
                const bool is_plans = std::string(list) == "plans";
                for (std::size_t n = 0; n < arr.size(); ++n) {
                    const json_key k = key_of(arr[n], path + "." + list + "[" + std::to_string(n) + "]", doc_gpus);
                    (is_plans ? all_plans : all_front).push_back(arr[n]);
                    (is_plans ? plan_keys : front_keys).push_back(k);
                }
            }
            r.finish();
        }
        if (static_cast<int>(seen.size()) != shards) {
            std::string missing;
            for (int i = 0; i < shards && missing.size() < 200; ++i)
                if (!seen.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(shards);
            throw input_error("plan-merge", std::to_string(seen.size()) + " of " + std::to_string(shards) + " shards",
                              "every shard; missing " + missing);
        }
        // rank: step_s, then the plan key (search/planner.hpp)
        auto sorted = [](const std::vector<json_key>& read) {
            std::vector<std::pair<json_key, std::size_t>> keys;
            for (std::size_t i = 0; i < read.size(); ++i) keys.emplace_back(read[i], i);
            std::sort(keys.begin(), keys.end(), [](const auto& x, const auto& y) { return key_before(x.first, y.first); });
            return keys;
        };
        const int top = first["top"].get<int>();
        nlohmann::json plans = nlohmann::json::array();
        for (const auto& [k, i] : sorted(plan_keys)) {
            if (static_cast<int>(plans.size()) >= top) break;
            plans.push_back(all_plans[i]);
        }
        const auto fk = sorted(front_keys);
        nlohmann::json pareto = nlohmann::json::array();
        for (const auto& [k, i] : fk) {
            bool dominated = false;
            for (const auto& other : fk) {
                const json_key& o = other.first;
                if (o.step <= k.step && o.memory <= k.memory && (o.step < k.step || o.memory < k.memory)) {
                    dominated = true;
                    break;
                }
            }
            if (!dominated) pareto.push_back(all_front[i]);
        }
        nlohmann::json j;
        for (const char* k : {"model", "cluster", "accelerator", "nodes", "gpus", "global_batch", "seq", "top", "space"})
            j[k] = first.contains(k) ? first[k] : nlohmann::json(nullptr);
        j["shard"] = "0/1";
        j["merged_shards"] = shards;
        j["candidates"] = candidates;
        j["evaluated"] = evaluated;
        j["feasible"] = feasible;
        j["rejected"] = rejected;
        j["search_s"] = search_s;
        j["search_s_max"] = search_max;
        j["plans"] = plans;
        j["pareto"] = pareto;
        if (plans.empty()) j["note"] = candidates == 0 ? "no valid plan shape in any shard" : "no plan fits in memory";
        return emit(a, out, j);
    },
    1, -1}};

}  // namespace
