// `commscale capacity`: GPUs needed to train in a given time, or the time a given number of GPUs
// takes, and the GPU-hours (CLI.md "Training step"; gpu-fabrics-for-genai Tables 1-3).
#include <cmath>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/predict/capacity.hpp>
#include <commscale/workload/flops.hpp>

#include "../cli.hpp"
#include "../model.hpp"

namespace {

using namespace commscale;

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
        return parse_work(*a.get("flops"), "--flops");
    }
    double params = 0;
    if (a.has("params")) {
        if (a.has("model")) throw input_error("--model", "'" + *a.get("model") + "' together with --params", "one of them");
        params = require_positive("--params", parse_number(*a.get("params"), "--params"));
    } else if (a.has("model")) {
        params = active_parameters(cli::resolve_model(a));  // FLOPs follow the active parameters (MoE)
    } else {
        throw input_error("--flops", "nothing (missing)", "--flops Z, or --params P (or --model NAME) with --tokens D");
    }
    const double tokens = require_positive("--tokens", parse_number(a.require("tokens", "a token count, e.g. 300e9"), "--tokens"));
    double k = 6;
    if (auto v = a.get("flops-per-param-token")) {
        k = parse_number(*v, "--flops-per-param-token");
        if (k != 6 && k != 8) throw input_error("--flops-per-param-token", "'" + *v + "'", "6 (no recompute) or 8 (full recompute)");
    }
    const flop_count f = approx_training_flops(params, tokens, k);
    if (!(in_flops(f) <= capacity_max_flops))
        throw input_error(a.has("params") ? "--params x --tokens" : "--tokens",
                          commscale::detail::number_text(params) + " x " + commscale::detail::number_text(tokens) + " x " +
                              commscale::detail::number_text(k) + " FLOPs",
                          "a training run of at most 1e30 FLOPs");
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
        const double g = static_cast<double>(a.integer("gpus", 0, 1, 1'000'000'000));
        plan = plan_for_gpus(f, p, u, g);
    } else {
        const double n = parse_number(*a.get(mode), "--" + mode);
        const duration deadline = n * (mode == "weeks" ? one_week : one_day);
        if (!(in_seconds(deadline) >= capacity_min_time) || in_seconds(deadline) > capacity_max_time)
            throw input_error("--" + mode, "'" + *a.get(mode) + "'", "a training time from one minute to 1,000 years");
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
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", in_flops(plan.total_flops));
    out << "total FLOPs   " << buf << " (" << cli::num(in_flops(plan.total_flops) / zetta, 3) << " ZFLOP)\n"
        << "per GPU       " << cli::num(in_tflops(p), 1) << " TFLOPS peak x " << cli::num(u, 3) << " = "
        << cli::num(in_tflops(sustained_rate(p, u)), 1) << " TFLOPS sustained\n"
        << "GPUs          " << cli::num(plan.gpus, 0) << (mode == "gpus" ? "\n" : " (needed)\n")
        << "time          " << cli::num(in_seconds(plan.time) / 86400.0, 2) << " days ("
        << cli::num(in_seconds(plan.time) / in_seconds(one_week), 2) << " weeks)\n"
        << "GPU-hours     " << cli::num(plan.gpu_hours, 0) << "\n";
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
    "  --peak-tflops T per-GPU peak in TFLOPS, or --accelerator NAME with --dtype fp32|tf32|bf16|fp16|fp8\n"
    "                  (default bf16; the catalog's dense peak)\n"
    "  --utilization U sustained fraction of the peak, in (0, 1]\n"
    "GPUs needed = ceil(F / (peak x U x T)); time = F / (N x peak x U); GPU-hours = N x time.\n"
    "JSON: {total_flops, gpus_needed, time_s, gpu_hours, peak_tflops, utilization}",
    {{"flops", true, "total training FLOPs (420ZFLOP or 4.2e23)"},
     {"params", true, "parameter count, e.g. 175e9"},
     {"tokens", true, "training tokens, e.g. 300e9"},
     {"flops-per-param-token", true, "6 (default) or 8 (full recompute)"},
     cli::model_option(),
     {"peak-tflops", true, "per-GPU peak TFLOPS"},
     {"accelerator", true, "accelerator name (commscale accelerators)"},
     {"dtype", true, "fp32, tf32, bf16 (default), fp16 or fp8"},
     {"utilization", true, "fraction of peak sustained, in (0, 1]"},
     {"weeks", true, "training time in weeks"},
     {"days", true, "training time in days"},
     {"gpus", true, "number of GPUs"}},
    run,
    0, 0}};

}  // namespace
