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
#include "../options.hpp"
#include "../model.hpp"
#include "../step_args.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace plan_command {

using namespace commscale;

/// What `plan`'s options give: the topology flags (--scale-up-domain too, which also bounds TP) and
/// --model as given (topology.hpp, model.hpp), and its own.
struct plan_request {
    /// the search as the options set it: defaults of the command for the Pareto factor and the CP tokens
    search_request search = [] {
        search_request s;
        s.min_cp_tokens = default_min_cp_tokens;
        s.pareto_max_slowdown = default_pareto_max_slowdown;
        return s;
    }();
    cli::topology_request topology;
    std::optional<cli::given<transformer>> model;
    std::optional<long long> gpus;
    std::optional<int> global_batch, seq, threads;
    framework stack = framework::megatron_core;
    std::optional<dtype> precision;
    std::optional<moe_token_dispatcher> dispatcher;
    std::optional<fp8_recipe> fp8;
    bool fp8_param_gather = false, no_fp8_param_gather = false;
    bool gradient_accumulation_fusion = false, no_gradient_accumulation_fusion = false;
    bool first_last_layers_bf16 = false;
    std::optional<int> bf16_layers_at_start, bf16_layers_at_end;
    std::optional<int> gradient_bytes;
    std::optional<double> compute_efficiency;
    std::optional<efficiency_mode> efficiency;
    std::optional<std::string> out;
};

/// --pareto-factor X: 0 (the whole front) or a factor in [1, 1e6].
void read_pareto_factor(plan_request& r, const std::string& v) {
    const double x = parse_number(v, "--pareto-factor");
    if (!(x == 0 || (x >= 1 && x <= 1e6)))
        throw input_error("--pareto-factor", "'" + v + "'", "0 (the whole front) or a factor in [1, 1e6]");
    r.search.pareto_max_slowdown = x;
}

// ---------------------------------------------------------------- text output

// The recompute column: "full block N" for full recompute of N layers per model chunk, "full
// uniform N" for one checkpoint per N layers, "none, offload N" for N layers' activations
// offloaded to the host (keys present only when set)
std::string recompute_text(const nlohmann::json& p) {
    std::string t = p["recompute"].get<std::string>();
    if (p.contains("recompute_method")) t += " " + p["recompute_method"].get<std::string>();
    if (p.contains("recompute_num_layers")) t += " " + std::to_string(p["recompute_num_layers"].get<int>());
    if (p.contains("cpu_offloading_num_layers")) t += ", offload " + std::to_string(p["cpu_offloading_num_layers"].get<int>());
    return t;
}

/// Megatron-Core's --decoder-first/last-pipeline-num-layers of a plan object where given (its
/// `first_stage_layers` / `last_stage_layers`), as the table shows them after the schedule: F n, L n.
std::string uneven_stages_text(const nlohmann::json& p) {
    std::string s;
    if (p.contains("first_stage_layers")) s += " F" + std::to_string(p["first_stage_layers"].get<int>());
    if (p.contains("last_stage_layers")) s += " L" + std::to_string(p["last_stage_layers"].get<int>());
    return s;
}

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
        sched += uneven_stages_text(p);
        rows.push_back({std::to_string(rank++), std::to_string(p["tp"].get<int>()), std::to_string(p["pp"].get<int>()),
                        std::to_string(p["dp"].get<int>()), std::to_string(p["cp"].get<int>()),
                        // expert TP only where it is not tp (planned_to_json's rule)
                        std::to_string(p["ep"].get<int>()) + (p.contains("etp") ? " etp " + std::to_string(p["etp"].get<int>()) : ""),
                        std::to_string(p["micro_batch"].get<int>()),
                        std::to_string(p["zero"].get<int>()), recompute_text(p), sched,
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

int emit(const std::optional<std::string>& out_file, const cli::args& a, std::ostream& out, const nlohmann::json& j) {
    if (out_file) io::write_file_atomic(*out_file, j.dump(2) + "\n", "--out");
    if (a.flag("json")) cli::print_json(out, j);
    else print_text(out, j);
    return 0;
}

std::vector<cli::bound_option<plan_request>> plan_options() {
    using r = plan_request;
    using namespace cli::opt;
    using cli::bound_option;
    using cli::model_option;
    auto search = [](auto member) { return [member](r& x) -> auto& { return x.search.*member; }; };
    return cli::topology_bound<r>(&r::topology) +
           std::vector<bound_option<r>>{
               model_option<r>(&r::model),
               integer<r>("gpus", &r::gpus, 1, search_limits::gpus, "GPUs to plan for (the node count is GPUs / GPUs per node)"),
               integer<r>("global-batch", &r::global_batch, 1, plan_limits::global_batch, "sequences per optimizer step"),
               integer<r>("seq", &r::seq, 1, plan_limits::seq, "sequence length in tokens (default min(2048, model context))"),
               integer<r>("top", search(&search_request::top_k), 1, search_limits::top_k, "plans to return (default 10)"),
               integer<r>("threads", &r::threads, 1, search_limits::threads, "worker threads (default: the machine's cores)"),
               custom<r>("shard", "i/N: search only shard i (0-based) of N; merge with plan-merge",
                         [](r& x, const std::string& v) { std::tie(x.search.shard, x.search.shards) = io::parse_shard(v, "--shard"); }),
               choice<moe_token_dispatcher, r>("moe-token-dispatcher", &r::dispatcher,
                                                "{}: the MoE dispatcher of every plan (default: the framework's, hybridep for "
                                                "megatron-core)"),
               integer<r>("max-micro-batch", search(&search_request::max_micro_batch), 1, search_limits::max_micro_batch,
                          "largest micro-batch tried (default: any)"),
               integer<r>("max-virtual-stages", search(&search_request::max_virtual_stages), 1, plan_limits::virtual_stages,
                          "largest V of the interleaved schedule (default: any)"),
               integer<r>("max-cp", search(&search_request::max_cp), 1, search_limits::max_cp,
                          "largest context-parallel degree (default: any)"),
               integer<r>("min-cp-tokens", search(&search_request::min_cp_tokens), 0, plan_limits::seq,
                          "fewest tokens per context-parallel rank (seq / cp) tried with cp >= 2 (default 4096; 0: any)"),
               custom<r>("pareto-factor", "Pareto front: plans within this factor of the best step time (default 2; 0: all)",
                         read_pareto_factor),
               flag<r>("no-sequence-parallel", search(&search_request::try_sequence_parallel), "do not try sequence parallelism",
                       false),
               flag<r>("no-zero-bubble", search(&search_request::try_zero_bubble),
                       "do not try the zb-h1, zb-v and dualpipe schedules", false),
               flag<r>("no-pipeline-split", search(&search_request::try_pipeline_split),
                       "do not try counting the embedding/loss as pipeline layers (Megatron-Core's "
                       "--account-for-embedding/loss-in-pipeline-split)",
                       false),
               flag<r>("no-block-recompute", search(&search_request::try_block_recompute),
                       "do not try full recompute by block of the fewest layers that fits (Megatron-Core's "
                       "--recompute-method block --recompute-num-layers N)",
                       false),
               flag<r>("no-cpu-offloading", search(&search_request::try_cpu_offloading),
                       "do not try activation CPU offloading of the fewest layers that fits (Megatron-Core's "
                       "--cpu-offloading-num-layers N)",
                       false),
               choice<dtype, r>("dtype", &r::precision, "{} (default bf16; the accelerator must have a peak for it)"),
               choice<fp8_recipe, r>("fp8-recipe", &r::fp8,
                                     "{}: FP8's scaling in every plan, with --dtype fp8 (Megatron-Core's flag; "
                                     "default the framework's: tensorwise under megatron-core, else delayed)"),
               flag<r>("fp8-param-gather", &r::fp8_param_gather,
                       "keep the layers' weights in FP8/MXFP8 in every plan (Megatron-Core's flag, as step's; default "
                       "the framework's: on under megatron-core)"),
               flag<r>("no-fp8-param-gather", &r::no_fp8_param_gather, "keep 16-bit weights beside FP8/MXFP8 GEMMs"),
               flag<r>("gradient-accumulation-fusion", &r::gradient_accumulation_fusion,
                       "the weight-gradient GEMMs accumulate into the gradient buffer in every plan (Megatron's fusion, as "
                       "step's; default the stack's: off under megatron-core at ZeRO 3, as NVIDIA's recipes run "
                       "Megatron-FSDP, on otherwise)"),
               flag<r>("no-gradient-accumulation-fusion", &r::no_gradient_accumulation_fusion,
                       "copy each micro-batch's gradients into the buffer in every plan (Megatron-LM's flag)"),
               flag<r>("first-last-layers-bf16", &r::first_last_layers_bf16,
                       "keep the first and last layers of every plan in BF16 under an FP8/FP4 dtype (Megatron-Core's flag, "
                       "as step's); plans with more per-end layers than layers / pp are not tried"),
               integer<r>("num-layers-at-start-in-bf16", &r::bf16_layers_at_start, 0, plan_limits::stage_layers,
                          "with --first-last-layers-bf16: BF16 layers at the start (Megatron-Core's flag; default 1)"),
               integer<r>("num-layers-at-end-in-bf16", &r::bf16_layers_at_end, 0, plan_limits::stage_layers,
                          "with --first-last-layers-bf16: BF16 layers at the end (Megatron-Core's flag; default 1)"),
               choice<framework, r>("framework", &r::stack, "{} (default megatron-core)"),
               integer<r>("gradient-bytes", &r::gradient_bytes, 1, 4,
                          "bytes per reduced gradient element in every plan: 2 or 4 (default: the framework's; "
                          "as step's flag)"),
               number<r>("compute-efficiency", &r::compute_efficiency, 1e-6, 1.0,
                         "achievable fraction of peak, overriding the default"),
               choice<efficiency_mode, r>("efficiency", &r::efficiency, "collective model: {}"),
               text<r>("out", &r::out, "also write the JSON result to FILE (atomically)"),
           };
}

cli::registrar reg_plan{cli::bound_command<plan_request>(
    "plan",
    "search every TP/PP/DP/CP/EP/micro-batch/ZeRO/recompute/schedule plan, ranked by step time",
    "usage: commscale plan [--model NAME|FILE] [--cluster NAME|FILE | topology flags] --gpus N --global-batch B\n"
    "Predicts every valid plan and lists the fastest that fit in memory and the Pareto front (docs/planning.md).\n"
    "JSON: {evaluated, feasible, search_s, plans: [{tp, pp, dp, cp, ep, micro_batch, zero, recompute, schedule,\n"
    "      virtual_stages, sequence_parallel, step_s, mfu, memory_per_gpu_GiB, ...}], pareto, candidates, shard, ...}",
    plan_options(),
    [](const plan_request& req, const cli::args& a, std::ostream& out) {
        const transformer m = cli::resolve_model(req.model);
        if (!req.gpus) throw input_error("--gpus", "nothing (missing)", "the number of GPUs to plan for");
        const long long gpus = *req.gpus;
        const cluster given = cli::resolve_cluster(req.topology, true);  // --scale-up-domain below the node: a TP limit only
        const cluster c = cluster_for_gpus(given, gpus, "--gpus");
        if (req.topology.nodes && given.nodes != c.nodes)
            throw input_error("--gpus", std::to_string(gpus),
                              "--nodes x GPUs per node (" + std::to_string(static_cast<long long>(given.nodes) * given.node.gpus) +
                                  "), or drop --nodes");
        const accelerator acc = accelerator_by_name(c.node.accelerator, "cluster.accelerator");

        search_request r = req.search;
        if (!req.global_batch) throw input_error("--global-batch", "nothing (missing)", "sequences per optimizer step");
        r.global_batch = *req.global_batch;
        r.seq = req.seq.value_or(m.max_seq > 0 ? std::min(2048, m.max_seq) : 2048);
        r.threads = req.threads.value_or(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
        // resolve_cluster reads it too, in the cluster's limits
        r.scale_up_domain = req.topology.scale_up_domain ? static_cast<int>(cli::reads::integer(req.topology.scale_up_domain->value, "--scale-up-domain", 1,
                                                                                                search_limits::scale_up_domain))
                                                         : 0;
        if (r.scale_up_domain > 0 && r.scale_up_domain % c.node.gpus != 0 && c.node.gpus % r.scale_up_domain != 0)
            throw input_error("--scale-up-domain", std::to_string(r.scale_up_domain),
                              "a divisor or a multiple of the " + std::to_string(c.node.gpus) +
                                  " GPUs per node (a part of a node, or whole nodes such as an NVL72 rack)");
        apply_framework(r.base, req.stack);
        if (req.precision) r.base.precision = *req.precision;
        (void)peak_for(acc, r.base.precision, "--dtype");
        if (req.dispatcher) r.base.dispatcher = *req.dispatcher;
        if (req.fp8) {
            if (*req.fp8 != fp8_recipe::delayed && r.base.precision != dtype::fp8)
                throw input_error("--fp8-recipe", std::string(to_string(*req.fp8)) + " with --dtype " + std::string(to_string(r.base.precision)),
                                  "--dtype fp8 (per-tensor or 128-block scaling), or delayed");
            r.base.fp8_scaling = *req.fp8;
        } else {
            r.base.fp8_scaling = stack_fp8_recipe(r.base);
        }
        if (req.fp8_param_gather && req.no_fp8_param_gather)
            throw input_error("--fp8-param-gather", "given with --no-fp8-param-gather", "one of the two");
        if (req.fp8_param_gather) r.base.fp8_param_gather = true;
        if (req.no_fp8_param_gather) r.base.fp8_param_gather = false;
        cli::set_gradient_accumulation_fusion(r.base, req.gradient_accumulation_fusion, req.no_gradient_accumulation_fusion);
        if ((req.bf16_layers_at_start || req.bf16_layers_at_end) && !req.first_last_layers_bf16)
            throw input_error(req.bf16_layers_at_start ? "--num-layers-at-start-in-bf16" : "--num-layers-at-end-in-bf16",
                              std::to_string(req.bf16_layers_at_start ? *req.bf16_layers_at_start : *req.bf16_layers_at_end),
                              "--first-last-layers-bf16 with it (Megatron-Core reads the counts only with that flag)");
        if (req.first_last_layers_bf16) {
            r.base.first_last_layers_bf16 = true;
            r.base.bf16_layers_at_start = req.bf16_layers_at_start.value_or(1);
            r.base.bf16_layers_at_end = req.bf16_layers_at_end.value_or(1);
            // the dtype and recipe rules of every plan, named by the flag (validate_bf16_layers)
            plan one = r.base;
            one.pp = 1;
            try {
                detail::validate_bf16_layers(one, m.layers);
            } catch (const input_error& e) {
                throw input_error("--first-last-layers-bf16", e.value(), e.expected());
            }
        }
        if (req.gradient_bytes) set_gradient_bytes(r.base, cli::gradient_bytes_flag(*req.gradient_bytes));
        if (req.compute_efficiency) r.base.compute_efficiency = *req.compute_efficiency;
        r.options = step_options{};
        if (req.efficiency) r.options.mode = *req.efficiency;

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
        return emit(req.out, a, out, j);
    })};

// ---------------------------------------------------------------- plan-merge

/// What `plan-merge`'s options give.
struct merge_request {
    std::optional<std::string> out;
};

cli::registrar reg_merge{cli::bound_command<merge_request>(
    "plan-merge",
    "merge the JSON outputs of `plan --shard i/N` jobs into one ranking",
    "usage: commscale plan-merge FILE... [--json] [--out FILE]\n"
    "FILE: the --json output (or --out file) of `commscale plan --shard i/N` for every i in 0..N-1, each\n"
    "exactly once, all of the same search (model, cluster, GPUs, batch, seq, top, space). `-` reads stdin.\n"
    "Prints the result of the unsharded search: plans (top K by step time, then plan key), the Pareto\n"
    "front of the union, and evaluated/feasible/candidates summed; search_s is the sum over shards,\n"
    "search_s_max the slowest shard.",
    {cli::opt::text<merge_request>("out", &merge_request::out, "also write the merged JSON to FILE (atomically)")},
    [](const merge_request& r, const cli::args& a, std::ostream& out) {
        // every file read and checked first, then the shard-set checks and the merge (io/result_json.hpp)
        const search_report merged = io::merge_search_reports(io::read_search_documents(a.positional, std::cin), a.positional);
        const nlohmann::json j = io::search_report_to_json(merged);
        return emit(r.out, a, out, j);
    },
    1, -1)};

}  // namespace plan_command
}  // namespace
