// `commscale capacity`: GPUs needed to train in a given time, or the time a given number of GPUs
// takes, and the GPU-hours (CLI.md "Training step"; gpu-fabrics-for-genai Tables 1-3).
#include <cmath>
#include <string>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/topology.hpp>
#include <commscale/predict/capacity.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/transformer.hpp>

#include <fmt/format.h>

#include "../cli.hpp"
#include "../model.hpp"

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

/// Exactly one of `names` must be present; returns it.
std::string exactly_one(const cli::args& a, std::initializer_list<const char*> names, const std::string& expected) {
    std::string found;
    for (const char* n : names) {
        if (!a.has(n)) continue;
        if (!found.empty())
            throw input_error("--" + std::string(n), "'" + *a.get(n) + "' together with --" + found, expected);
        found = n;
    }
    if (found.empty()) throw input_error("--" + std::string(*names.begin()), "nothing (missing)", expected);
    return found;
}

flop_count total_flops(const cli::args& a) {
    if (a.has("flops")) {
        for (const char* other : {"params", "tokens", "model", "flops-per-param-token"})
            if (a.has(other))
                throw input_error("--" + std::string(other), "'" + a.get(other).value_or("") + "' together with --flops",
                                  "either --flops, or --params/--model with --tokens");
        const flop_count f = parse_work(*a.get("flops"), "--flops");
        if (!(in_flops(f) >= capacity_min_flops))
            throw input_error("--flops", "'" + *a.get("flops") + "'", "a FLOP count from 1 to 1e30 (1e-30 to 1e9 ZFLOP)");
        return f;
    }
    double params = 0;
    if (a.has("params")) {
        if (a.has("model")) throw input_error("--model", "'" + *a.get("model") + "' together with --params", "one of them");
        params = parse_number(*a.get("params"), "--params");
        if (!(params >= 1 && params <= max_model_parameters))
            throw input_error("--params", "'" + *a.get("params") + "'", "a parameter count from 1 to 1e15");
    } else if (a.has("model")) {
        params = active_parameters(cli::resolve_model(a));  // FLOPs follow the active parameters (MoE)
    } else {
        throw input_error("--flops", "nothing (missing)", "--flops Z, or --params P (or --model NAME) with --tokens D");
    }
    const double tokens = parse_number(a.require("tokens", "a token count, e.g. 300e9"), "--tokens");
    if (!(tokens >= 1 && tokens <= max_tokens))
        throw input_error("--tokens", "'" + *a.get("tokens") + "'", "a token count from 1 to 1e18");
    double k = 6;
    if (auto v = a.get("flops-per-param-token")) {
        k = parse_number(*v, "--flops-per-param-token");
        if (k != 6 && k != 8) throw input_error("--flops-per-param-token", "'" + *v + "'", "6 (no recompute) or 8 (full recompute)");
    }
    const flop_count f = approx_training_flops(params, tokens, k);
    if (!(in_flops(f) <= capacity_max_flops))
        throw input_error(a.has("params") ? "--params x --tokens" : "--model x --tokens",
                          commscale::detail::number_text(params) + " x " + commscale::detail::number_text(tokens) + " x " +
                              commscale::detail::number_text(k) + " FLOPs",
                          "a training run of at most 1e30 FLOPs");
    if (!(in_flops(f) >= capacity_min_flops))
        throw input_error(a.has("params") ? "--params x --tokens" : "--model x --tokens",
                          commscale::detail::number_text(params) + " x " + commscale::detail::number_text(tokens) + " x " +
                              commscale::detail::number_text(k) + " FLOPs",
                          "a training run of at least 1 FLOP");
    return f;
}

flop_rate peak(const cli::args& a) {
    const auto which = exactly_one(a, {"peak-tflops", "accelerator"}, "--peak-tflops T or --accelerator NAME");
    if (which == "peak-tflops") {
        if (a.has("dtype")) throw input_error("--dtype", "'" + *a.get("dtype") + "' with --peak-tflops", "--dtype only with --accelerator");
        const double t = parse_number(*a.get("peak-tflops"), "--peak-tflops");
        if (!(t * tera >= capacity_min_peak) || t * tera > capacity_max_peak)
            throw input_error("--peak-tflops", "'" + *a.get("peak-tflops") + "'", "a per-GPU peak from 0.001 to 1e6 TFLOPS");
        return flops_per_second(t * tera);
    }
    const auto acc = accelerator_by_name(*a.get("accelerator"), "--accelerator");
    const dtype d = precision_from_name(a.get("dtype").value_or("bf16"), "--dtype");
    return peak_for(acc, d, "--dtype");
}

int run(const cli::args& a, std::ostream& out) {
    const flop_count f = total_flops(a);
    const flop_rate p = peak(a);
    const double u = parse_number(a.require("utilization", "a fraction in (0, 1], e.g. 0.4"), "--utilization");
    if (!(u >= capacity_min_utilization && u <= 1))
        throw input_error("--utilization", "'" + *a.get("utilization") + "'", "a fraction in [0.0001, 1]");
    const auto mode = exactly_one(a, {"weeks", "days", "gpus"}, "one of --weeks W, --days N, --gpus N");
    capacity_plan plan;
    if (mode == "gpus") {
        const double g = static_cast<double>(a.integer("gpus", 0, 1, cluster_limits::gpus));
        plan = plan_for_gpus(f, p, u, g);
    } else {
        const double n = parse_number(*a.get(mode), "--" + mode);
        const duration deadline = n * (mode == "weeks" ? one_week : one_day);
        if (!(in_seconds(deadline) >= capacity_min_time) || in_seconds(deadline) > capacity_max_time)
            throw input_error("--" + mode, "'" + *a.get(mode) + "'", "a training time from one minute to 1,000 years");
        const double needed = gpus_needed(f, p, u, deadline);
        if (!(needed <= capacity_max_gpus)) {
            // the options the GPU count comes from: work / (peak x utilization x deadline)
            const std::string work = a.has("flops") ? "--flops" : a.has("params") ? "--params x --tokens" : "--model x --tokens";
            const std::string rate = a.has("peak-tflops") ? "--peak-tflops" : "--accelerator";
            throw input_error(work + " / (" + rate + " x --utilization x --" + mode + ")",
                              sig(needed) + " GPUs needed (" + sig(in_flops(f)) + " FLOPs / (" + sig(in_tflops(p)) +
                                  " TFLOPS x " + sig(u) + " x " + sig(in_seconds(deadline)) + " s))",
                              "a plan of at most 1e12 GPUs (more time, a faster GPU or less work)");
        }
        plan = plan_for_time(f, p, u, deadline);
    }
    if (a.flag("json")) {
        cli::print_json(out, {{"total_flops", in_flops(plan.total_flops)},
                              {"gpus_needed", static_cast<long long>(plan.gpus)},
                              {"time_s", in_seconds(plan.time)},
                              {"gpu_hours", plan.gpu_hours},
                              {"peak_tflops", in_tflops(p)},
                              {"utilization", u}});
        return 0;
    }
    out << "total FLOPs   " << sig(in_flops(plan.total_flops)) << " (" << readable(in_flops(plan.total_flops) / zetta, 3) << " ZFLOP)\n"
        << "per GPU       " << readable(in_tflops(p), 1) << " TFLOPS peak x " << readable(u, 3) << " = "
        << readable(in_tflops(sustained_rate(p, u)), 1) << " TFLOPS sustained\n"
        << "GPUs          " << cli::num(plan.gpus, 0) << (mode == "gpus" ? "\n" : " (needed)\n")
        << "time          " << readable(in_seconds(plan.time) / 86400.0, 2) << " days ("
        << readable(in_seconds(plan.time) / in_seconds(one_week), 2) << " weeks)\n"
        << "GPU-hours     " << readable(plan.gpu_hours, 0) << "\n";
    return 0;
}

cli::registrar reg{cli::command{
    "capacity",
    "GPUs needed to train in a given time, or time on N GPUs, and GPU-hours",
    "usage: commscale capacity (--flops Z | --params P --tokens D [--flops-per-param-token 6|8]\n"
    "                          | --model NAME|FILE --tokens D [--flops-per-param-token 6|8])\n"
    "                          (--peak-tflops T | --accelerator NAME [--dtype bf16])\n"
    "                          --utilization U (--weeks W | --days N | --gpus N) [--json]\n"
    "  --flops Z       total training FLOPs: a number or with a unit (420ZFLOP, 4.2e23)\n"
    "  --params P      parameters (175e9); with --model, the model's active parameters\n"
    "  --tokens D      training tokens; FLOPs = k x P x D with k = 6, or 8 with full recompute\n"
    "  --peak-tflops T per-GPU peak in TFLOPS, or --accelerator NAME with --dtype fp32|tf32|bf16|fp16|fp8|mxfp8|nvfp4|fp4\n"
    "                  (default bf16; the catalog's dense peak)\n"
    "  --utilization U sustained fraction of the peak, in [0.0001, 1]\n"
    "Accepted: work 1 to 1e30 FLOPs (params 1 to 1e15, tokens 1 to 1e18), peak 0.001 to 1e6 TFLOPS,\n"
    "a deadline from one minute to 1,000 years, at most 1e12 GPUs given or needed.\n"
    "GPUs needed = ceil(F / (peak x U x T)); time = F / (N x peak x U); GPU-hours = N x time.\n"
    "JSON: {total_flops, gpus_needed, time_s, gpu_hours, peak_tflops, utilization}",
    {{"flops", true, "total training FLOPs (420ZFLOP or 4.2e23)"},
     {"params", true, "parameter count, e.g. 175e9"},
     {"tokens", true, "training tokens, e.g. 300e9"},
     {"flops-per-param-token", true, "6 (default) or 8 (full recompute)"},
     cli::model_option(),
     {"peak-tflops", true, "per-GPU peak TFLOPS"},
     {"accelerator", true, "accelerator name (commscale accelerators)"},
     {"dtype", true, "fp32, tf32, bf16 (default), fp16, fp8, mxfp8, nvfp4 or fp4"},
     {"utilization", true, "fraction of peak sustained, in (0, 1]"},
     {"weeks", true, "training time in weeks"},
     {"days", true, "training time in days"},
     {"gpus", true, "number of GPUs"}},
    run,
    0, 0}};

}  // namespace capacity_command
}  // namespace
