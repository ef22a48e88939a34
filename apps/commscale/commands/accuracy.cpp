// `commscale accuracy RUNS.csv [--cluster NAME|FILE | topology] [--json] [--svg FILE]`: predicts
// every run of a runs CSV with the documented model, no fitting (include/commscale/calibrate/
// accuracy.hpp), and prints predicted against measured tokens/s per GPU per run, and per family
// the median errors of the model and of the 40%-MFU rule of thumb.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <commscale/calibrate/accuracy.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/training_runs.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../svg.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace accuracy_command {

using namespace commscale;

/// What `accuracy`'s own options and the topology flags give.
struct accuracy_request {
    cli::topology_request topology;
    std::optional<std::string> svg;
};

std::vector<cli::bound_option<accuracy_request>> options() {
    using r = accuracy_request;
    return cli::topology_bound<r>(&r::topology) +
           std::vector<cli::bound_option<r>>{
               cli::opt::text<r>("svg", &r::svg, "write predicted against measured tokens/s per GPU (log-log) to FILE"),
           };
}

std::string pct(double v) { return cli::num(100 * v, 1) + "%"; }

// Tokens/s per GPU for the table: whole tokens from 100 on, else 3 significant digits.
std::string tokens(double v) { return v >= 100 ? std::to_string(std::llround(v)) : cli::num(v, 3); }

// Predicted (y) against measured (x) tokens/s per GPU, log-log, with y = x and +-25% lines; one
// colour per family; the rule of thumb as hollow grey marks.
std::string svg_plot(const accuracy_report& rep) {
    double lo = 1e300, hi = 0;
    for (const auto& r : rep.runs) {
        if (!r.expressible) continue;
        for (double v : {r.measured_tokens_per_s_per_gpu, r.predicted_tokens_per_s_per_gpu, r.rule_tokens_per_s_per_gpu})
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    }
    if (!(hi > 0)) lo = 1, hi = 10;
    const double l10 = std::floor(std::log10(lo)), h10 = std::ceil(std::log10(hi));
    const double W = 840, H = 600, l = 80, r = 340, t = 40, b = 60;
    auto X = [&](double v) { return l + (W - l - r) * (std::log10(v) - l10) / (h10 - l10); };
    auto Y = [&](double v) { return H - b - (H - t - b) * (std::log10(v) - l10) / (h10 - l10); };
    static const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    std::string s = cli::svg::open(W, H);
    s += cli::svg::text((l + W - r) / 2, 22, "accuracy: predicted vs measured tokens/s per GPU", "middle", 14);
    s += cli::svg::line(l, H - b, W - r, H - b);
    s += cli::svg::line(l, t, l, H - b);
    for (double e = l10; e <= h10; e += 1) {
        const double v = std::pow(10.0, e);
        s += cli::svg::line(X(v), H - b, X(v), H - b + 5);
        s += cli::svg::text(X(v), H - b + 18, cli::num(v, 6), "middle", 11);
        s += cli::svg::line(l - 5, Y(v), l, Y(v));
        s += cli::svg::text(l - 8, Y(v) + 4, cli::num(v, 6), "end", 11);
    }
    s += cli::svg::text((l + W - r) / 2, H - 18, "measured tokens/s per GPU", "middle");
    s += "<text x=\"18\" y=\"" + cli::svg::n((t + H - b) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " +
         cli::svg::n((t + H - b) / 2) + ")\">predicted tokens/s per GPU</text>\n";
    const double a = std::pow(10.0, l10), z = std::pow(10.0, h10);
    s += cli::svg::line(X(a), Y(a), X(z), Y(z), "#888");
    s += cli::svg::line(X(a), Y(1.25 * a), X(z / 1.25), Y(z), "#ddd");
    s += cli::svg::line(X(a), Y(a / 1.25), X(z), Y(z / 1.25), "#ddd");
    for (std::size_t fi = 0; fi < rep.families.size(); ++fi) {
        const auto& fam = rep.families[fi];
        const char* colour = colours[fi % std::size(colours)];
        for (const auto& run : rep.runs) {
            if (!run.expressible || run.family != fam.name) continue;
            const double x = X(run.measured_tokens_per_s_per_gpu);
            s += "<rect x=\"" + cli::svg::n(x - 3) + "\" y=\"" + cli::svg::n(Y(run.rule_tokens_per_s_per_gpu) - 3) +
                 "\" width=\"6\" height=\"6\" fill=\"none\" stroke=\"#aaa\"/>\n";
            s += cli::svg::rect(x - 4, Y(run.predicted_tokens_per_s_per_gpu) - 4, 8, 8, colour,
                                run.label + ": measured " + cli::num(run.measured_tokens_per_s_per_gpu, 5) + ", predicted " +
                                    cli::num(run.predicted_tokens_per_s_per_gpu, 5) + " (" + pct(run.rel_error) + ")");
        }
        const double ly = t + 14 + 18.0 * static_cast<double>(fi);
        s += cli::svg::rect(W - r + 12, ly - 8, 8, 8, colour);
        s += cli::svg::text(W - r + 26, ly, fam.name + " (" + pct(fam.median_abs_error) + ")", "start", 10);
    }
    const double ly = t + 14 + 18.0 * static_cast<double>(rep.families.size());
    s += "<rect x=\"" + cli::svg::n(W - r + 12) + "\" y=\"" + cli::svg::n(ly - 8) +
         "\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"#aaa\"/>\n";
    s += cli::svg::text(W - r + 26, ly, "40%-MFU rule of thumb", "start", 10);
    s += cli::svg::text(W - r + 12, ly + 18, "lines: y = x and +-25%; legend: median |error|", "start", 10);
    s += cli::svg::close();
    return s;
}

nlohmann::json run_json(const accuracy_run& r) {
    nlohmann::json j = {{"label", r.label},
                        {"family", r.family},
                        {"model", r.model},
                        {"cluster", r.system},
                        {"accelerator", r.accelerator},
                        {"dtype", r.dtype},
                        {"gpus", r.gpus},
                        {"source", r.source},
                        {"source_location", r.source_location},
                        {"measured_tokens_per_s_per_gpu", r.measured_tokens_per_s_per_gpu},
                        {"expressible", r.expressible},
                        {"reason", r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason)}};
    if (!r.expressible) return j;
    j["predicted_tokens_per_s_per_gpu"] = r.predicted_tokens_per_s_per_gpu;
    j["rel_error"] = r.rel_error;
    j["rule_of_thumb_tokens_per_s_per_gpu"] = r.rule_tokens_per_s_per_gpu;
    j["rule_of_thumb_rel_error"] = r.rule_rel_error;
    j["bottleneck"] = r.bottleneck;
    j["measured_step_s"] = r.measured_step_s;
    j["predicted_step_s"] = r.step_s;
    j["compute_s"] = r.compute_s;
    j["bubble_s"] = r.bubble_s;
    j["exposed_comm_s"] = r.exposed_comm_s;
    j["attention_share"] = r.attention_share;
    j["mfu"] = r.mfu;
    j["memory_per_gpu_GiB"] = r.memory_per_gpu_GiB;
    j["memory_capacity_GiB"] = r.memory_capacity_GiB;
    j["fits_in_memory"] = r.fits_in_memory;
    return j;
}

nlohmann::json family_json(const accuracy_family& f) {
    return {{"family", f.name},
            {"runs", f.runs},
            {"not_expressible", f.not_expressible},
            {"not_fitting_in_memory", f.not_fitting},
            {"median_abs_error", f.median_abs_error},
            {"median_error", f.median_error},
            {"rule_of_thumb_median_abs_error", f.rule_median_abs_error},
            {"rule_of_thumb_median_error", f.rule_median_error}};
}

cli::registrar reg{cli::bound_command<accuracy_request>(
    "accuracy",
    "predict every run of a runs CSV with the default constants: per run and per family, model vs measured vs 40%-MFU rule",
    "usage: commscale accuracy RUNS.csv [--cluster NAME|FILE | topology] [--json] [--svg FILE]\n"
    "Error = predicted / measured tokens/s per GPU - 1, per run and per family, beside the 40%-MFU rule (docs/accuracy.md).\n"
    "--json: {runs: [{label, family, model, measured_tokens_per_s_per_gpu, predicted_tokens_per_s_per_gpu, rel_error, ...}],\n"
    "         families: [{family, runs, median_abs_error, median_error, ...}], overall: {...}}",
    options(),
    [](const accuracy_request& req, const cli::args& a, std::ostream& out) {
        const auto runs = io::load_training_runs(a.positional.at(0), "RUNS.csv");
        const cluster base = cli::resolve_cluster(req.topology);
        const accuracy_report rep = accuracy(runs, base);
        if (const auto& file = req.svg) {
            io::require_writable(*file, "--svg");
            io::write_file_atomic(*file, svg_plot(rep), "--svg");
        }
        if (a.flag("json")) {
            nlohmann::json jr = nlohmann::json::array(), jf = nlohmann::json::array();
            for (const auto& r : rep.runs) jr.push_back(run_json(r));
            for (const auto& f : rep.families) jf.push_back(family_json(f));
            cli::print_json(out, {{"runs", jr}, {"families", jf}, {"overall", family_json(rep.overall)}});
            return 0;
        }
        out << rep.runs.size() << " run(s); error = predicted / measured tokens/s per GPU - 1\n\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& r : rep.runs) {
            if (!r.expressible) continue;
            rows.push_back({r.label, r.family, tokens(r.measured_tokens_per_s_per_gpu),
                            tokens(r.predicted_tokens_per_s_per_gpu), pct(r.rel_error), tokens(r.rule_tokens_per_s_per_gpu),
                            pct(r.rule_rel_error), r.bottleneck,
                            // the memory model's per-GPU total of the run's plan against the GPU's capacity
                            cli::num(r.memory_per_gpu_GiB, 1) + " of " + cli::num(r.memory_capacity_GiB, 0),
                            r.fits_in_memory ? "yes" : "no"});
        }
        if (!rows.empty())
            cli::print_table(out,
                             {"run", "family", "measured", "predicted", "err", "40% MFU", "err", "bottleneck", "memory GiB", "fits"},
                             rows);
        out << "\n";
        std::vector<std::vector<std::string>> frows;
        for (const auto& f : rep.families)
            frows.push_back({f.name, std::to_string(f.runs), std::to_string(f.not_expressible),
                             f.runs ? pct(f.median_abs_error) : std::string("n/a"),
                             f.runs ? pct(f.median_error) : std::string("n/a"),
                             f.runs ? pct(f.rule_median_abs_error) : std::string("n/a"),
                             f.runs ? pct(f.rule_median_error) : std::string("n/a")});
        const auto& o = rep.overall;
        frows.push_back({"all", std::to_string(o.runs), std::to_string(o.not_expressible),
                         o.runs ? pct(o.median_abs_error) : std::string("n/a"), o.runs ? pct(o.median_error) : std::string("n/a"),
                         o.runs ? pct(o.rule_median_abs_error) : std::string("n/a"),
                         o.runs ? pct(o.rule_median_error) : std::string("n/a")});
        cli::print_table(out, {"family", "runs", "not expr.", "median |err|", "median err", "rule |err|", "rule err"}, frows);
        bool any = false;
        for (const auto& r : rep.runs) {
            if (r.expressible) continue;
            if (!any) out << "\nnot expressible (not in the medians):\n";
            any = true;
            out << "  " << r.label << ": " << r.reason << "\n";
        }
        return 0;
    },
    1, 1)};

}  // namespace accuracy_command
}  // namespace
