// `commscale capacity`: GPUs needed to train in a given time, or the time a given number of GPUs
// takes, and the GPU-hours (CLI.md "Training step"). Two modes:
// * guessed utilization (--utilization U with --peak-tflops or --accelerator): every GPU sustains
//   U x peak (gpu-fabrics-for-genai Tables 1-3);
// * from the model (--cluster or topology flags, --model): the planner's fastest plan at each
//   candidate GPU count, its predicted step, and the time lost to failures (predict/capacity.hpp
//   plan_capacity).
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/topology.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/predict/capacity.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/transformer.hpp>

#include <fmt/format.h>

#include "../cli.hpp"
#include "../model.hpp"
#include "../options.hpp"
#include "../step_args.hpp"
#include "../svg.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace capacity_command {

using namespace commscale;

/// Accepted token counts: 1 to 1e18, about 1e5 times the ~1.5e13 tokens of the largest published
/// pretraining runs (Llama 3: 15T); parameters: 1 to max_model_parameters (1e15, as a model file).
constexpr double max_tokens = 1e18;

/// A number with 4 significant digits ("0.001", "312", "1.157e+20"): never rounded to 0.
std::string sig(double v) {
    return fmt::format("{:.4g}", v);
}

/// cli::num(v, digits) for 1 <= v < 1e12, sig(v) outside, so that 0.001 TFLOPS is not printed
/// as 0 and 1e20 days not as 21 digits.
std::string readable(double v, int digits) { return v >= 1 && v < 1e12 ? cli::num(v, digits) : sig(v); }

/// What capacity's own options give. Which options are present picks the mode (from_model) and the
/// checks of which go together come first and quote the options as given, so each value is read
/// where its mode reads it (cli::given), not before the command runs. Those checks read the
/// request's fields (named_option: the option's name and its text as given); --gpus and
/// --max-gpus are texts, their bounds the cluster's.
struct capacity_request {
    cli::topology_request topology;
    std::optional<cli::given<transformer>> model;
    std::optional<cli::given<flop_count>> flops;
    std::optional<cli::given<double>> params, tokens, flops_per_param_token, peak_tflops, utilization, weeks, days,
        price_per_gpu_hour, global_batch_tokens, compute_efficiency;
    std::optional<cli::given<long long>> global_batch, seq, min_cp_tokens, threads;
    std::optional<cli::given<dtype>> precision;
    std::optional<cli::given<framework>> stack;
    std::optional<cli::given<efficiency_mode>> efficiency;
    std::optional<cli::given<duration>> mtbf, checkpoint_time, restart_time, checkpoint_interval;
    std::optional<std::string> gpus, max_gpus, mtbf_per, rank_by, svg;
};

/// The text of an option as given, which errors quote.
template <class T>
std::string text(const cli::given<T>& v) {
    return v.value.spelled();
}

/// An option of the request: its name and its text as given (nullopt where it is not given).
struct named_option {
    const char* name;
    std::optional<std::string> text;
};
template <class T>
named_option option(const char* name, const std::optional<cli::given<T>>& v) {
    return {name, v ? std::optional<std::string>(text(*v)) : std::nullopt};
}
named_option option(const char* name, const std::optional<std::string>& v) { return {name, v}; }

/// Exactly one of `options` must be given; returns its name.
std::string exactly_one(std::initializer_list<named_option> options, const std::string& expected) {
    std::string found;
    for (const named_option& o : options) {
        if (!o.text) continue;
        if (!found.empty())
            throw input_error("--" + std::string(o.name), "'" + *o.text + "' together with --" + found, expected);
        found = o.name;
    }
    if (found.empty()) throw input_error("--" + std::string(options.begin()->name), "nothing (missing)", expected);
    return found;
}

flop_count total_flops(const capacity_request& in) {
    if (in.flops) {
        for (const named_option& other : {option("params", in.params), option("tokens", in.tokens), option("model", in.model),
                                          option("flops-per-param-token", in.flops_per_param_token)})
            if (other.text)
                throw input_error("--" + std::string(other.name), "'" + *other.text + "' together with --flops",
                                  "either --flops, or --params/--model with --tokens");
        const flop_count f = **in.flops;
        if (!(in_flops(f) >= capacity_min_flops))
            throw input_error("--flops", "'" + text(*in.flops) + "'", "a FLOP count from 1 to 1e30 (1e-30 to 1e9 ZFLOP)");
        return f;
    }
    double params = 0;
    if (in.params) {
        if (in.model) throw input_error("--model", "'" + in.model->value.spelled() + "' together with --params", "one of them");
        params = **in.params;
        if (!(params >= 1 && params <= max_model_parameters))
            throw input_error("--params", "'" + text(*in.params) + "'", "a parameter count from 1 to 1e15");
    } else if (in.model) {
        params = active_parameters(cli::resolve_model(in.model));  // FLOPs follow the active parameters (MoE)
    } else {
        throw input_error("--flops", "nothing (missing)", "--flops Z, or --params P (or --model NAME) with --tokens D");
    }
    if (!in.tokens) throw input_error("--tokens", "nothing (missing)", "a token count, e.g. 300e9 or 15T");
    const double tokens = **in.tokens;
    if (!(tokens >= 1 && tokens <= max_tokens))
        throw input_error("--tokens", "'" + text(*in.tokens) + "'", "a token count from 1 to 1e18");
    double k = 6;
    if (const auto& v = in.flops_per_param_token) {
        k = **v;
        if (k != 6 && k != 8) throw input_error("--flops-per-param-token", "'" + text(*v) + "'", "6 (no recompute) or 8 (full recompute)");
    }
    const flop_count f = approx_training_flops(params, tokens, k);
    if (!(in_flops(f) <= capacity_max_flops))
        throw input_error(in.params ? "--params x --tokens" : "--model x --tokens",
                          commscale::detail::number_text(params) + " x " + commscale::detail::number_text(tokens) + " x " +
                              commscale::detail::number_text(k) + " FLOPs",
                          "a training run of at most 1e30 FLOPs");
    if (!(in_flops(f) >= capacity_min_flops))
        throw input_error(in.params ? "--params x --tokens" : "--model x --tokens",
                          commscale::detail::number_text(params) + " x " + commscale::detail::number_text(tokens) + " x " +
                              commscale::detail::number_text(k) + " FLOPs",
                          "a training run of at least 1 FLOP");
    return f;
}

flop_rate peak(const capacity_request& in) {
    const auto which = exactly_one({option("peak-tflops", in.peak_tflops), option("accelerator", in.topology.accelerator)},
                                   "--peak-tflops T or --accelerator NAME");
    if (which == "peak-tflops") {
        if (in.precision) throw input_error("--dtype", "'" + text(*in.precision) + "' with --peak-tflops", "--dtype only with --accelerator");
        const double t = **in.peak_tflops;
        if (!(t * tera >= capacity_min_peak) || t * tera > capacity_max_peak)
            throw input_error("--peak-tflops", "'" + text(*in.peak_tflops) + "'", "a per-GPU peak from 0.001 to 1e6 TFLOPS");
        return flops_per_second(t * tera);
    }
    const auto acc = accelerator_by_name(text(*in.topology.accelerator), "--accelerator");
    const dtype d = in.precision ? **in.precision : dtype::bf16;
    return peak_for(acc, d, "--dtype");
}

/// The options only capacity from the model takes (the guessed-utilization mode refuses them).
std::vector<named_option> model_only_options(const capacity_request& in) {
    const cli::topology_request& t = in.topology;
    return {option("cluster", t.cluster), option("nodes", t.nodes), option("gpus-per-node", t.gpus_per_node),
            option("intra", t.intra), option("intra-fabric", t.intra_fabric), option("inter", t.inter),
            option("nics-per-node", t.nics_per_node), option("oversubscription", t.oversubscription),
            option("scale-up-domain", t.scale_up_domain), option("global-batch", in.global_batch),
            option("global-batch-tokens", in.global_batch_tokens), option("seq", in.seq), option("framework", in.stack),
            option("compute-efficiency", in.compute_efficiency), option("efficiency", in.efficiency), option("mtbf", in.mtbf),
            option("mtbf-per", in.mtbf_per), option("checkpoint-time", in.checkpoint_time),
            option("restart-time", in.restart_time), option("checkpoint-interval", in.checkpoint_interval),
            option("rank-by", in.rank_by), option("max-gpus", in.max_gpus), option("min-cp-tokens", in.min_cp_tokens),
            option("threads", in.threads), option("svg", in.svg)};
}

/// --price-per-gpu-hour P: a price in [0, 1e6] per GPU-hour (any currency); nullopt if absent.
std::optional<double> price_per_gpu_hour(const capacity_request& in) {
    const auto& v = in.price_per_gpu_hour;
    if (!v) return std::nullopt;
    const double x = **v;
    if (!(x <= 1e6)) throw input_error("--price-per-gpu-hour", "'" + text(*v) + "'", "a price in [0, 1e6] per GPU-hour");
    return x;
}

/// True when the question is one for the model: --cluster or a topology flag other than
/// --accelerator (which the guessed-utilization mode also takes), and neither --utilization nor
/// --peak-tflops.
bool from_model(const capacity_request& in) {
    if (in.utilization || in.peak_tflops) return false;
    const cli::topology_request& t = in.topology;
    return t.cluster || t.nodes || t.gpus_per_node || t.intra || t.intra_fabric || t.inter || t.nics_per_node ||
           t.oversubscription || t.scale_up_domain;
}

// ---------------------------------------------------------------- capacity from the model

/// Default global batch: 4M tokens (2^22 = 4,194,304): Llama 2's for every size (Touvron et al.
/// 2023, Sec. 2.2 and Table 1: "global batch-size of 4M tokens") and Llama 3 405B's first stage
/// (Dubey et al. 2024, Sec. 3.4.1: 4M tokens of 4,096-token sequences); as sequences,
/// 4,194,304 / seq (at least 1).
constexpr double default_batch_tokens = 4194304.0;
/// Default sequence length: min(4,096, the model's context), Llama 2's (Touvron et al. 2023,
/// Table 1) and Llama 3 405B's first stage.
constexpr int default_seq = 4096;

/// Days, hours or minutes, whichever reads best ("29.4 days", "7.5 h", "12 min", "3.2 s").
std::string span(double s) {
    if (!std::isfinite(s)) return "never";
    if (s >= 2 * 86400.0) return readable(s / 86400.0, 1) + " days";
    if (s >= 2 * 3600.0) return readable(s / 3600.0, 1) + " h";
    if (s >= 120.0) return readable(s / 60.0, 1) + " min";
    if (s >= 1.0) return readable(s, 1) + " s";
    return fmt::format("{:.2g} s", s);
}

/// A large count with a k, M, G suffix ("6.1M").
std::string count_text(double v) {
    if (v >= 1e12) return readable(v / 1e12, 2) + "T";
    if (v >= 1e9) return readable(v / 1e9, 2) + "G";
    if (v >= 1e6) return readable(v / 1e6, 2) + "M";
    if (v >= 1e4) return readable(v / 1e3, 1) + "k";
    return readable(v, 0);
}

/// "tp 8, pp 4, dp 96, cp 1, ep 1, micro-batch 1, ZeRO 1, recompute none, interleaved x5, SP"
/// ("recompute full block 5" for full recompute of 5 layers per model chunk, "recompute none,
/// offload 40" for 40 layers' activations offloaded to the host).
std::string plan_text(const plan& p) {
    std::string s = "tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp) + ", dp " + std::to_string(p.dp) +
                    ", cp " + std::to_string(p.cp) + ", ep " + std::to_string(p.ep) + ", micro-batch " +
                    std::to_string(p.micro_batch) + ", ZeRO " + std::to_string(p.zero) + ", recompute " +
                    std::string(to_string(p.recompute_mode));
    if (p.full_recompute_method != recompute_method::uniform) s += " " + std::string(to_string(p.full_recompute_method));
    if (p.recompute_num_layers != 0) s += " " + std::to_string(p.recompute_num_layers);
    if (p.cpu_offloading_num_layers > 0) s += ", offload " + std::to_string(p.cpu_offloading_num_layers);
    s += ", " + std::string(to_string(p.schedule));
    if (p.chunks() > 1) s += " x" + std::to_string(p.chunks());
    if (p.account_for_embedding_in_pipeline_split) s += " +E";
    if (p.account_for_loss_in_pipeline_split) s += " +L";
    // Megatron-Core's --decoder-first/last-pipeline-num-layers where given: F n, L n
    if (p.first_stage_layers > 0) s += " F" + std::to_string(p.first_stage_layers);
    if (p.last_stage_layers > 0) s += " L" + std::to_string(p.last_stage_layers);
    if (p.sequence_parallel) s += ", SP";
    return s;
}

/// Seconds in JSON: null where infinite (no failures, no checkpoints).
nlohmann::json seconds_json(duration t) {
    const double s = in_seconds(t);
    return std::isfinite(s) ? nlohmann::json(s) : nlohmann::json(nullptr);
}

nlohmann::json point_json(const capacity_point& x, int gpus_per_node, bool priced) {
    nlohmann::json j{{"gpus", x.gpus}, {"nodes", x.gpus / gpus_per_node}, {"feasible", x.feasible}};
    if (!x.feasible) return j;
    j["step_s"] = in_seconds(x.r.step);
    j["mfu"] = x.r.mfu;
    j["tokens_per_s"] = x.r.tokens_per_s;
    j["failure_free_time_s"] = in_seconds(x.time.failure_free);
    j["time_s"] = in_seconds(x.time.wall);
    j["lost_fraction"] = x.time.lost_fraction;
    j["gpu_hours"] = x.gpu_hours;
    if (priced) j["cost"] = x.cost;
    j["meets_deadline"] = x.meets_deadline;
    const plan& p = x.p;
    j["plan"] = {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"micro_batch", p.micro_batch},
                 {"zero", p.zero}, {"recompute", std::string(to_string(p.recompute_mode))},
                 {"schedule", std::string(to_string(p.schedule))}, {"virtual_stages", p.chunks()},
                 {"sequence_parallel", p.sequence_parallel}};
    if (p.account_for_embedding_in_pipeline_split) j["plan"]["account_for_embedding_in_pipeline_split"] = true;
    if (p.account_for_loss_in_pipeline_split) j["plan"]["account_for_loss_in_pipeline_split"] = true;
    // full recompute by block (the planner's fewest layers that fit): as plan --json writes it
    if (p.full_recompute_method != recompute_method::uniform || p.recompute_num_layers != 0)
        j["plan"]["recompute_method"] = std::string(to_string(p.full_recompute_method));
    if (p.recompute_num_layers != 0) j["plan"]["recompute_num_layers"] = p.recompute_num_layers;
    if (p.cpu_offloading_num_layers > 0) j["plan"]["cpu_offloading_num_layers"] = p.cpu_offloading_num_layers;
    return j;
}

/// The scaling curve: days to train (with failures, and failure-free) against GPUs on a log2 axis,
/// the deadline dashed, the answer marked.
std::string render_svg(const model_capacity_result& res, const std::optional<duration>& deadline, const std::string& title) {
    std::vector<std::pair<double, double>> wall, free;
    std::vector<std::string> tips;
    double lo = 1e300, hi = 0, top = 0;
    for (const auto& x : res.curve) {
        if (!x.feasible) continue;
        const double g = static_cast<double>(x.gpus), w = in_seconds(x.time.wall) / 86400.0,
                     f = in_seconds(x.time.failure_free) / 86400.0;
        wall.emplace_back(g, w);
        free.emplace_back(g, f);
        tips.push_back(std::to_string(x.gpus) + " GPUs: " + readable(w, 2) + " days (" + readable(f, 2) +
                       " failure-free), " + plan_text(x.p));
        lo = std::min(lo, g);
        hi = std::max(hi, g);
        top = std::max(top, w);
    }
    if (deadline) top = std::max(top, in_seconds(*deadline) / 86400.0);
    cli::svg::axis x{.lo = lo / 1.15, .hi = hi * 1.15, .title = "GPUs", .log2_count = true};
    cli::svg::axis y{.lo = 0, .hi = top * 1.05, .title = "days to train"};
    cli::svg::chart ch(760, 420, title, x, y);
    ch.line(free, "#9ecae9", "failure-free", 2.0);
    ch.line(wall, "#4c78a8", "with failures", 2.0);
    ch.points(wall, tips, "#4c78a8", "");
    if (deadline) {
        const double d = in_seconds(*deadline) / 86400.0;
        ch.line({{x.lo, d}, {x.hi, d}}, "#e45756", "deadline " + readable(d, 1) + " days", 1.5, true);
    }
    if (res.answer.feasible) {
        const std::pair<double, double> a{static_cast<double>(res.answer.gpus), in_seconds(res.answer.time.wall) / 86400.0};
        ch.points({a}, {std::to_string(res.answer.gpus) + " GPUs: the answer"}, "#e45756",
                  "answer: " + std::to_string(res.answer.gpus) + " GPUs", 10.0);
    }
    return cli::svg::document({&ch}, title);
}

int run_model(const capacity_request& in, const cli::args& a, std::ostream& out) {
    if (in.params)
        throw input_error("--params", "'" + text(*in.params) + "' with --cluster",
                          "--model NAME|FILE: capacity from the model needs the model's shape");
    if (in.flops_per_param_token)
        throw input_error("--flops-per-param-token", "'" + text(*in.flops_per_param_token) + "' with --cluster",
                          "--model NAME|FILE: capacity from the model needs the model's shape (it counts the FLOPs itself)");
    if (in.topology.nodes)
        throw input_error("--nodes", "'" + text(*in.topology.nodes) + "'", "--gpus N for the time on N GPUs (capacity searches the count)");
    if (!in.model)
        throw input_error("--model", "nothing (missing)", "a model preset or config.json: capacity from the model plans its shape");
    const transformer m = cli::resolve_model(in.model);
    cluster c = cli::resolve_cluster(in.topology, true);  // --scale-up-domain below the node: a TP limit only
    const accelerator acc = accelerator_by_name(c.node.accelerator, "cluster.accelerator");

    // the planner's request, as `plan` builds it
    search_request sr;
    const int ctx = m.max_seq > 0 ? m.max_seq : default_seq;
    sr.seq = static_cast<int>(in.seq ? **in.seq : std::min(default_seq, ctx));
    if (in.global_batch && in.global_batch_tokens)
        throw input_error("--global-batch", "'" + text(*in.global_batch) + "' together with --global-batch-tokens",
                          "one of them (sequences, or tokens)");
    if (in.global_batch) {
        sr.global_batch = static_cast<int>(**in.global_batch);
    } else {
        const double batch_tokens = in.global_batch_tokens ? **in.global_batch_tokens : default_batch_tokens;
        const double sequences = std::max(1.0, std::round(batch_tokens / sr.seq));
        if (!(batch_tokens >= 1) || sequences > plan_limits::global_batch)
            throw input_error("--global-batch-tokens", "'" + (in.global_batch_tokens ? text(*in.global_batch_tokens) : "") + "'",
                              "tokens per step from 1 to " + std::to_string(plan_limits::global_batch) + " sequences");
        sr.global_batch = static_cast<int>(sequences);
    }
    sr.threads = static_cast<int>(in.threads ? **in.threads : std::max(1u, std::thread::hardware_concurrency()));
    // resolve_cluster reads it too, in the cluster's limits
    sr.scale_up_domain = in.topology.scale_up_domain ? static_cast<int>(cli::reads::integer(in.topology.scale_up_domain->value, "--scale-up-domain", 1,
                                                                                             search_limits::scale_up_domain))
                                                     : 0;
    if (sr.scale_up_domain > 0 && sr.scale_up_domain % c.node.gpus != 0 && c.node.gpus % sr.scale_up_domain != 0)
        throw input_error("--scale-up-domain", std::to_string(sr.scale_up_domain),
                          "a divisor or a multiple of the " + std::to_string(c.node.gpus) + " GPUs per node");
    sr.min_cp_tokens = static_cast<int>(in.min_cp_tokens ? **in.min_cp_tokens : default_min_cp_tokens);
    apply_framework(sr.base, in.stack ? **in.stack : framework::megatron_core);
    if (in.precision) sr.base.precision = **in.precision;
    sr.base.fp8_scaling = stack_fp8_recipe(sr.base);
    const flop_rate peak_rate = peak_for(acc, sr.base.precision, "--dtype");
    if (in.compute_efficiency) sr.base.compute_efficiency = **in.compute_efficiency;
    sr.options = step_options{};
    if (in.efficiency) sr.options.mode = **in.efficiency;

    model_capacity_request q;
    q.tokens_per_step = static_cast<double>(sr.global_batch) * sr.seq;
    q.model_flops_per_step = model_flops(m, sr.seq, sr.global_batch);
    q.peak = peak_rate;
    if (in.tokens && in.flops)
        throw input_error("--flops", "'" + text(*in.flops) + "' together with --tokens", "either --tokens D or --flops F");
    if (in.flops) {
        // the model's own count: F / (model FLOPs per token at this sequence length)
        const double f = in_flops(**in.flops);
        q.tokens = f / in_flops(model_flops_per_token(m, sr.seq));
        if (!(q.tokens >= 1) || q.tokens > max_tokens)
            throw input_error("--flops", "'" + text(*in.flops) + "'",
                              "the FLOPs of 1 to 1e18 tokens of " + std::string(m.name) + " (" +
                                  sig(in_flops(model_flops_per_token(m, sr.seq))) + " FLOPs per token)");
    } else {
        if (!in.tokens) throw input_error("--tokens", "nothing (missing)", "a token count, e.g. 15T, or --flops F");
        q.tokens = **in.tokens;
        if (!(q.tokens >= 1 && q.tokens <= max_tokens))
            throw input_error("--tokens", "'" + text(*in.tokens) + "'", "a token count from 1 to 1e18");
    }
    const auto mode = exactly_one({option("weeks", in.weeks), option("days", in.days), option("gpus", in.gpus)},
                                  "one of --weeks W, --days N, --gpus N");
    q.granule = c.domain_spans_nodes() ? c.scale_up_domain : c.node.gpus;
    q.gpus_per_node = c.node.gpus;
    const long long most = static_cast<long long>(cluster_limits::nodes) * c.node.gpus;
    q.max_gpus = in.max_gpus ? cli::args::parse_int("--max-gpus", *in.max_gpus, q.granule, most)
                             : std::min(default_capacity_max_gpus, most);
    const cli::given<double>* time = mode == "weeks" ? &*in.weeks : mode == "days" ? &*in.days : nullptr;
    if (mode == "gpus") {
        q.gpus = cli::args::parse_int("--gpus", *in.gpus, 1, most);
        (void)cli::nodes_for_gpus(q.gpus, c.node.gpus, c.name);
    } else {
        q.deadline = **time * (mode == "weeks" ? one_week : one_day);
        if (!(in_seconds(*q.deadline) >= capacity_min_time) || in_seconds(*q.deadline) > capacity_max_time)
            throw input_error("--" + mode, "'" + text(*time) + "'", "a training time from one minute to 1,000 years");
    }
    // failures (defaults: predict/capacity.hpp, from the Llama 3 paper)
    const std::string per = in.mtbf_per.value_or("gpu");
    if (per != "gpu" && per != "node") throw input_error("--mtbf-per", "'" + per + "'", "gpu or node");
    q.mtbf_per_node = per == "node";
    if (const auto& v = in.mtbf) {
        q.mtbf = **v;  // inf, infinite or none: no failures
        if (!(in_seconds(q.mtbf) >= 60))
            throw input_error("--mtbf", "'" + text(*v) + "'", "a time of at least one minute (50677h, 2000d), or inf for no failures");
    } else if (q.mtbf_per_node) {
        throw input_error("--mtbf-per", "node without --mtbf", "an --mtbf T per node (the default MTBF is per GPU)");
    }
    q.checkpoint_time = in.checkpoint_time ? **in.checkpoint_time : default_checkpoint_time(total_parameters(m));
    if (in_seconds(q.checkpoint_time) > goodput_max_time)
        throw input_error("--checkpoint-time", "'" + (in.checkpoint_time ? text(*in.checkpoint_time) : "") + "'", "a time in [0, 1e7] s");
    if (const auto& v = in.restart_time) {
        q.restart_time = **v;
        if (in_seconds(q.restart_time) > goodput_max_time)
            throw input_error("--restart-time", "'" + text(*v) + "'", "a time in [0, 1e7] s");
    }
    if (const auto& v = in.checkpoint_interval) {
        q.checkpoint_interval = **v;
        if (!(in_seconds(*q.checkpoint_interval) > 0) || in_seconds(*q.checkpoint_interval) > goodput_max_interval)
            throw input_error("--checkpoint-interval", "'" + text(*v) + "'", "a time in (0, 1e9] s (default: Young's sqrt(2 x checkpoint x MTBF))");
    }
    const std::optional<double> price = price_per_gpu_hour(in);
    q.price_per_gpu_hour = price.value_or(0.0);
    const std::string rank = in.rank_by.value_or("time");
    if (rank != "time" && rank != "cost") throw input_error("--rank-by", "'" + rank + "'", "time or cost");
    q.rank_by = rank == "cost" ? capacity_rank::cost : capacity_rank::time;

    const auto t0 = std::chrono::steady_clock::now();
    const model_capacity_result res =
        plan_capacity(q, [&](long long gpus) { return best_plan_at(m, c, acc, sr, gpus); });
    const double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const std::string tokens_text = count_text(q.tokens);
    if (!res.met) {
        if (q.gpus > 0)
            throw input_error("--gpus", std::to_string(q.gpus),
                              "a count on which a plan of " + std::string(m.name) + " with global batch " +
                                  std::to_string(sr.global_batch) + " x " + std::to_string(sr.seq) +
                                  " fits in memory (no valid plan shape fits here)");
        const std::string best = res.answer.feasible
                                     ? "the fastest: " + span(in_seconds(res.answer.time.wall)) + " on " + std::to_string(res.answer.gpus) + " GPUs"
                                     : "no plan fits on any count evaluated";
        throw input_error("--" + mode, "'" + text(*time) + "' (" + best + ")",
                          "a deadline some count up to " + std::to_string(q.max_gpus) +
                              " GPUs meets (more time, fewer tokens, a larger --global-batch, or --max-gpus)");
    }
    const capacity_point& x = res.answer;
    const double steps = x.steps;
    const std::string title = std::string(m.name) + " on " + std::string(c.name) + ": " + tokens_text + " tokens" +
                              (q.deadline ? " in " + readable(in_seconds(*q.deadline) / 86400.0, 1) + " days" : "");
    if (in.svg) io::write_file_atomic(*in.svg, render_svg(res, q.deadline, title), "--svg");

    const goodput& g = x.time;
    if (a.flag("json")) {
        nlohmann::json j;
        j["mode"] = "model";
        j["model"] = std::string(m.name);
        j["cluster"] = std::string(c.name);
        j["accelerator"] = std::string(c.node.accelerator);
        j["dtype"] = std::string(to_string(sr.base.precision));
        j["tokens"] = q.tokens;
        j["global_batch"] = sr.global_batch;
        j["seq"] = sr.seq;
        j["tokens_per_step"] = q.tokens_per_step;
        j["steps"] = steps;
        j["total_flops"] = steps * in_flops(q.model_flops_per_step);
        if (q.deadline) j["deadline_s"] = in_seconds(*q.deadline);
        j["rank_by"] = rank;
        j["gpus_needed"] = x.gpus;
        j["gpus"] = x.gpus;
        j["nodes"] = x.gpus / c.node.gpus;
        j["time_s"] = in_seconds(g.wall);
        j["failure_free_time_s"] = in_seconds(g.failure_free);
        j["gpu_hours"] = x.gpu_hours;
        if (price) {
            j["price_per_gpu_hour"] = *price;
            j["cost"] = x.cost;
        }
        j["step_s"] = in_seconds(x.r.step);
        j["mfu"] = x.r.mfu;
        j["tokens_per_s"] = x.r.tokens_per_s;
        j["plan"] = io::planned_to_json(planned{x.p, x.r});
        j["goodput"] = {{"mtbf_s", seconds_json(q.mtbf)},
                        {"mtbf_per", per},
                        {"job_mtbf_s", seconds_json(g.job_mtbf)},
                        {"checkpoint_time_s", in_seconds(g.checkpoint_time)},
                        {"restart_time_s", in_seconds(g.restart_time)},
                        {"checkpoint_interval_s", seconds_json(g.checkpoint_interval)},
                        {"lost_fraction", g.lost_fraction},
                        {"lost_s", in_seconds(g.wall) - in_seconds(g.failure_free)},
                        {"expected_interruptions", g.expected_interruptions}};
        nlohmann::json curve = nlohmann::json::array();
        for (const auto& p : res.curve) curve.push_back(point_json(p, c.node.gpus, price.has_value()));
        j["curve"] = std::move(curve);
        j["search"] = {{"evaluated", res.evaluated}, {"skipped", res.skipped}, {"search_s", search_s},
                       {"granule", q.granule}, {"max_gpus", q.max_gpus}, {"min_cp_tokens", sr.min_cp_tokens}};
        cli::print_json(out, std::move(j));
        return 0;
    }
    out << m.name << " on " << c.name << " (" << c.node.gpus << " x " << c.node.accelerator << " per node), "
        << to_string(sr.base.precision) << ": " << tokens_text << " tokens, global batch " << sr.global_batch << " x "
        << sr.seq << " tokens, " << cli::num(steps, 0) << " steps\n";
    if (q.deadline)
        out << "GPUs needed   " << x.gpus << " (" << x.gpus / c.node.gpus << " nodes) to finish in "
            << readable(in_seconds(*q.deadline) / 86400.0, 2) << " days" << (rank == "cost" ? ", the cheapest that does" : "") << "\n";
    else
        out << "GPUs          " << x.gpus << " (" << x.gpus / c.node.gpus << " nodes)\n";
    out << "plan          " << plan_text(x.p) << "\n"
        << "step          " << cli::secs(x.r.step) << ", MFU " << cli::num(100 * x.r.mfu, 1) << "%, "
        << count_text(x.r.tokens_per_s) << " tokens/s\n"
        << "time          " << readable(in_seconds(g.wall) / 86400.0, 2) << " days with failures, "
        << readable(in_seconds(g.failure_free) / 86400.0, 2) << " days failure-free\n";
    if (std::isfinite(in_seconds(g.job_mtbf)))
        out << "failures      one every " << span(in_seconds(g.job_mtbf)) << " (MTBF " << readable(in_seconds(q.mtbf) / 3600.0, 0)
            << " h per " << (q.mtbf_per_node ? "node" : "GPU") << "); checkpoint " << span(in_seconds(g.checkpoint_time))
            << " every " << span(in_seconds(g.checkpoint_interval)) << ", restart " << span(in_seconds(g.restart_time))
            << ":\n              " << cli::num(100 * g.lost_fraction, 1) << "% of the time lost, "
            << cli::num(g.expected_interruptions, 0) << " interruptions expected\n";
    else
        out << "failures      none (--mtbf inf)\n";
    out << "GPU-hours     " << count_text(x.gpu_hours) << "\n";
    if (price) out << "cost          " << count_text(x.cost) << " at " << sig(*price) << " per GPU-hour\n";
    out << "\nscaling curve (" << res.evaluated << " counts planned";
    if (q.deadline) out << ", " << res.skipped << " smaller ones skipped: they miss the deadline even at 100% MFU";
    out << "; --svg plots it):\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : res.curve) {
        if (!p.feasible) {
            rows.push_back({std::to_string(p.gpus), "no plan fits", "", "", "", "", ""});
            continue;
        }
        rows.push_back({std::to_string(p.gpus), "tp " + std::to_string(p.p.tp) + " pp " + std::to_string(p.p.pp) + " dp " +
                                                    std::to_string(p.p.dp) + " cp " + std::to_string(p.p.cp),
                        cli::num(in_seconds(p.r.step), 3), cli::num(100 * p.r.mfu, 1),
                        readable(in_seconds(p.time.wall) / 86400.0, 1), cli::num(100 * p.time.lost_fraction, 1),
                        q.deadline ? (p.meets_deadline ? "yes" : "no") : ""});
    }
    cli::print_table(out, {"GPUs", "plan", "step s", "MFU %", "days", "lost %", q.deadline ? "meets" : ""}, rows);
    return 0;
}

int run_utilization(const capacity_request& in, const cli::args& a, std::ostream& out) {
    for (const named_option& only : model_only_options(in))
        if (only.text)
            throw input_error("--" + std::string(only.name), "'" + *only.text + "' with --utilization",
                              "--" + std::string(only.name) + " only in capacity from the model (--cluster NAME or topology flags, no --utilization)");
    const flop_count f = total_flops(in);
    const flop_rate p = peak(in);
    if (!in.utilization)
        throw input_error("--utilization", "nothing (missing)", "a fraction in (0, 1], e.g. 0.4 (or --cluster NAME to plan from the model)");
    const double u = **in.utilization;
    if (!(u >= capacity_min_utilization && u <= 1))
        throw input_error("--utilization", "'" + text(*in.utilization) + "'", "a fraction in [0.0001, 1]");
    const auto mode = exactly_one({option("weeks", in.weeks), option("days", in.days), option("gpus", in.gpus)},
                                  "one of --weeks W, --days N, --gpus N");
    capacity_plan plan;
    if (mode == "gpus") {
        const double g = static_cast<double>(cli::args::parse_int("--gpus", *in.gpus, 1, cluster_limits::gpus));
        plan = plan_for_gpus(f, p, u, g);
    } else {
        const cli::given<double>& time = mode == "weeks" ? *in.weeks : *in.days;
        const duration deadline = *time * (mode == "weeks" ? one_week : one_day);
        if (!(in_seconds(deadline) >= capacity_min_time) || in_seconds(deadline) > capacity_max_time)
            throw input_error("--" + mode, "'" + text(time) + "'", "a training time from one minute to 1,000 years");
        const double needed = gpus_needed(f, p, u, deadline);
        if (!(needed <= capacity_max_gpus)) {
            // the options the GPU count comes from: work / (peak x utilization x deadline)
            const std::string work = in.flops ? "--flops" : in.params ? "--params x --tokens" : "--model x --tokens";
            const std::string rate = in.peak_tflops ? "--peak-tflops" : "--accelerator";
            throw input_error(work + " / (" + rate + " x --utilization x --" + mode + ")",
                              sig(needed) + " GPUs needed (" + sig(in_flops(f)) + " FLOPs / (" + sig(in_tflops(p)) +
                                  " TFLOPS x " + sig(u) + " x " + sig(in_seconds(deadline)) + " s))",
                              "a plan of at most 1e12 GPUs (more time, a faster GPU or less work)");
        }
        plan = plan_for_time(f, p, u, deadline);
    }
    const std::optional<double> price = price_per_gpu_hour(in);
    if (a.flag("json")) {
        nlohmann::json j{{"total_flops", in_flops(plan.total_flops)},
                         {"gpus_needed", static_cast<long long>(plan.gpus)},
                         {"time_s", in_seconds(plan.time)},
                         {"gpu_hours", plan.gpu_hours},
                         {"peak_tflops", in_tflops(p)},
                         {"utilization", u}};
        if (price) {
            j["price_per_gpu_hour"] = *price;
            j["cost"] = plan.gpu_hours * *price;
        }
        cli::print_json(out, std::move(j));
        return 0;
    }
    out << "total FLOPs   " << sig(in_flops(plan.total_flops)) << " (" << readable(in_flops(plan.total_flops) / zetta, 3) << " ZFLOP)\n"
        << "per GPU       " << readable(in_tflops(p), 1) << " TFLOPS peak x " << readable(u, 3) << " = "
        << readable(in_tflops(sustained_rate(p, u)), 1) << " TFLOPS sustained\n"
        << "GPUs          " << cli::num(plan.gpus, 0) << (mode == "gpus" ? "\n" : " (needed)\n")
        << "time          " << readable(in_seconds(plan.time) / 86400.0, 2) << " days ("
        << readable(in_seconds(plan.time) / in_seconds(one_week), 2) << " weeks)\n"
        << "GPU-hours     " << readable(plan.gpu_hours, 0) << "\n";
    if (price) out << "cost          " << readable(plan.gpu_hours * *price, 0) << " at " << sig(*price) << " per GPU-hour\n";
    return 0;
}

int run(const capacity_request& in, const cli::args& a, std::ostream& out) {
    if (from_model(in)) return run_model(in, a, out);
    return run_utilization(in, a, out);
}

std::vector<cli::bound_option<capacity_request>> capacity_options() {
    using r = capacity_request;
    using cli::opt::given;
    using cli::opt::text;
    // the readers: cli::reads's readers of the value as given, or the library's parsers of its text,
    // and the option's name
    const auto number = &cli::reads::number;
    const auto of_text = [](auto parse) {
        return [parse](const cli::given_value& v, const std::string& flag) { return parse(v.spelled(), flag); };
    };
    const auto count = of_text(&parse_count);
    const auto time = of_text(&parse_time);
    const auto integer = [](long long lo, long long hi) {
        return [lo, hi](const cli::given_value& v, const std::string& flag) { return cli::reads::integer(v, flag, lo, hi); };
    };
    std::vector<cli::bound_option<r>> o = {
        given<r>("flops", &r::flops, of_text(&parse_flop_count), "total training FLOPs (420ZFLOP, 420Z or 4.2e23)"),
        given<r>("params", &r::params, count, "parameter count, e.g. 175e9 or 175B"),
        given<r>("tokens", &r::tokens, count, "training tokens, e.g. 300e9 or 15T"),
        given<r>("flops-per-param-token", &r::flops_per_param_token, number, "6 (default) or 8 (full recompute)"),
    };
    o = o + std::vector<cli::bound_option<r>>{
        cli::model_option<r>(&r::model),
        given<r>("peak-tflops", &r::peak_tflops, number, "per-GPU peak TFLOPS"),
        given<r>("dtype", &r::precision, &cli::reads::choice<dtype>, "fp32, tf32, bf16 (default), fp16, fp8, mxfp8, nvfp4 or fp4"),
        given<r>("utilization", &r::utilization, number, "fraction of peak sustained, in (0, 1]"),
        given<r>("weeks", &r::weeks, number, "training time in weeks"),
        given<r>("days", &r::days, number, "training time in days"),
        text<r>("gpus", &r::gpus, "number of GPUs"),
        given<r>("price-per-gpu-hour", &r::price_per_gpu_hour, number, "price of one GPU-hour: the answer carries the cost"),
        given<r>("global-batch", &r::global_batch, integer(1, plan_limits::global_batch),
                 "from the model: sequences per optimizer step"),
        given<r>("global-batch-tokens", &r::global_batch_tokens, count,
                 "from the model: tokens per optimizer step, e.g. 4M (default 4,194,304)"),
        given<r>("seq", &r::seq, integer(1, plan_limits::seq), "from the model: sequence length (default min(4096, model context))"),
        given<r>("framework", &r::stack, &cli::reads::choice<framework>,
                 "megatron-core|megatron-lm|megatron-deepspeed|deepspeed|fsdp (default megatron-core)"),
        given<r>("compute-efficiency", &r::compute_efficiency,
                 [](const cli::given_value& v, const std::string& flag) {
                     return require_range(flag, cli::reads::number(v, flag), 1e-6, 1.0);
                 },
                 "achievable fraction of peak, overriding the default"),
        given<r>("efficiency", &r::efficiency, &cli::reads::choice<efficiency_mode>, "collective model: ideal|default"),
        given<r>("mtbf", &r::mtbf,
                 [](const cli::given_value& v, const std::string& flag) {
                     const std::string t = v.spelled();
                     if (t == "inf" || t == "infinite" || t == "none") return seconds(std::numeric_limits<double>::infinity());
                     return parse_time(t, flag);
                 },
                 "mean time between interruptions per GPU (default 50677h, Llama 3) or per node; inf: none"),
        text<r>("mtbf-per", &r::mtbf_per, "gpu (default) or node: what --mtbf is per"),
        given<r>("checkpoint-time", &r::checkpoint_time, time,
                 "time one checkpoint stops training (default: 14 B/parameter at 2 TB/s)"),
        given<r>("restart-time", &r::restart_time, time, "time from an interruption to training again (default 10min)"),
        given<r>("checkpoint-interval", &r::checkpoint_interval, time,
                 "compute time between checkpoints (default: Young's sqrt(2 x checkpoint x job MTBF))"),
        text<r>("rank-by", &r::rank_by,
                "time (default: the fewest GPUs) or cost (the fewest GPU-hours) among counts meeting the deadline"),
        text<r>("max-gpus", &r::max_gpus, "largest GPU count searched (default 131072)"),
        given<r>("min-cp-tokens", &r::min_cp_tokens, integer(0, plan_limits::seq),
                 "fewest tokens per context-parallel rank tried with cp >= 2 (default 4096; 0: any)"),
        given<r>("threads", &r::threads, integer(1, search_limits::threads), "planner threads (default: the machine's cores)"),
        text<r>("svg", &r::svg, "write the scaling curve (time to train vs GPUs, the deadline marked) as an SVG file"),
    };
    std::vector<cli::option_spec> topology = cli::topology_options();
    for (auto& t : topology)
        if (t.name == "accelerator") t.help = "accelerator name (commscale accelerators): the peak with --utilization, else the cluster's";
    return o + cli::topology_bound<r>([](r& x) -> cli::topology_request& { return x.topology; }, topology);
}

cli::registrar reg{cli::bound_command<capacity_request>(
    "capacity",
    "GPUs needed to train in a given time, or time on N GPUs, and GPU-hours (from the model, or a guessed utilization)",
    "usage: commscale capacity --model M (--cluster C | topology flags) (--tokens D | --flops Z) (--days N | --weeks W | --gpus N)\n"
    "       commscale capacity --utilization U (--peak-tflops T | --accelerator A) (--flops Z | (--params P | --model M) --tokens D) (--days N | ...)\n"
    "From the model: the planner's fastest plan per count of whole nodes, time with failures (docs/CLI.md \"Training step\"); else F / (peak x U).\n"
    "JSON: {gpus_needed, time_s, gpu_hours[, cost], ...; from the model: plan, step_s, mfu, goodput: {...}, curve: [...], search: {...}}",
    capacity_options(),
    run)};

}  // namespace capacity_command
}  // namespace
