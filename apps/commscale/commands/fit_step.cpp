// `commscale fit-step RUNS.csv [--cluster NAME|FILE | topology] [--out FILE] [--json] [--svg FILE]`:
// fits the step predictor's compute calibration to measured training runs
// (include/commscale/calibrate/fit_step.hpp; the CSV columns are io/training_runs.hpp's) and
// writes a cluster JSON whose `compute_calibration` every step/scale/plan --cluster FILE applies.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <commscale/calibrate/fit_step.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/training_runs.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../svg.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace fit_step_command {

using namespace commscale;

/// What `fit-step`'s own options and the topology flags give.
struct fit_step_request {
    cli::topology_request topology;
    std::optional<std::string> out, svg;
};

std::vector<cli::bound_option<fit_step_request>> options() {
    using r = fit_step_request;
    return cli::topology_bound<r>(&r::topology) +
           std::vector<cli::bound_option<r>>{
               cli::opt::text<r>("out", &r::out, "write the calibrated cluster JSON (readable by --cluster) to FILE"),
               cli::opt::text<r>("svg", &r::svg, "write measured vs predicted step time per run to FILE"),
           };
}

// Round tick values covering [lo, hi]: 1, 2 or 5 x 10^k steps, about 5 of them.
std::vector<double> ticks(double lo, double hi) {
    const double span = hi - lo;
    const double raw = span / 5.0;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double f : {1.0, 2.0, 5.0, 10.0})
        if (f * mag >= raw) {
            step = f * mag;
            break;
        }
    std::vector<double> t;
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) t.push_back(v);
    return t;
}

// Measured (x) vs predicted (y) step time per run, before (grey) and after (blue) the fit, with
// the y = x line and +-10% bands.
std::string svg_plot(const step_fit& f) {
    double hi = 0;
    for (const auto& r : f.runs) hi = std::max({hi, in_seconds(r.measured_step), in_seconds(r.predicted_before), in_seconds(r.predicted_after)});
    hi *= 1.1;
    const double W = 560, H = 480, l = 70, r = 20, t = 40, b = 60;
    auto X = [&](double v) { return l + (W - l - r) * v / hi; };
    auto Y = [&](double v) { return H - b - (H - t - b) * v / hi; };
    std::string s = cli::svg::open(W, H);
    s += cli::svg::text(W / 2, 22, "fit-step: predicted vs measured step time", "middle", 14);
    s += cli::svg::line(l, H - b, W - r, H - b);
    s += cli::svg::line(l, t, l, H - b);
    for (double v : ticks(0, hi)) {
        s += cli::svg::line(X(v), H - b, X(v), H - b + 5);
        s += cli::svg::text(X(v), H - b + 18, cli::num(v, 3), "middle", 11);
        s += cli::svg::line(l - 5, Y(v), l, Y(v));
        s += cli::svg::text(l - 8, Y(v) + 4, cli::num(v, 3), "end", 11);
    }
    s += cli::svg::text((l + W - r) / 2, H - 18, "measured step time (s)", "middle");
    s += "<text x=\"18\" y=\"" + cli::svg::n((t + H - b) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " +
         cli::svg::n((t + H - b) / 2) + ")\">predicted step time (s)</text>\n";
    s += cli::svg::line(X(0), Y(0), X(hi), Y(hi), "#888");
    s += cli::svg::line(X(0), Y(0), X(hi / 1.1), Y(hi), "#ddd");  // +10%, ending at the top of the plot
    s += cli::svg::line(X(0), Y(0), X(hi), Y(0.9 * hi), "#ddd");
    for (const auto& run : f.runs) {
        s += cli::svg::rect(X(in_seconds(run.measured_step)) - 3, Y(in_seconds(run.predicted_before)) - 3, 6, 6, "#bbbbbb",
                            run.label + ": before " + cli::num(in_seconds(run.predicted_before), 4) + " s");
        s += cli::svg::rect(X(in_seconds(run.measured_step)) - 4, Y(in_seconds(run.predicted_after)) - 4, 8, 8, "#1f77b4",
                            run.label + ": measured " + cli::num(in_seconds(run.measured_step), 4) + " s, predicted " +
                                cli::num(in_seconds(run.predicted_after), 4) + " s");
    }
    s += cli::svg::rect(l + 10, t + 6, 8, 8, "#1f77b4");
    s += cli::svg::text(l + 24, t + 14, "calibrated");
    s += cli::svg::rect(l + 10, t + 22, 8, 8, "#bbbbbb");
    s += cli::svg::text(l + 24, t + 30, "uncalibrated; lines: y = x and +-10%");
    s += cli::svg::close();
    return s;
}

/// The cluster the calibration is for, and the clusters the fitted runs were predicted on.
struct calibration_target {
    cluster base;                           ///< the cluster JSON that --out writes, with the fitted calibration
    std::vector<std::string> run_clusters;  ///< the runs' clusters (each named once, in file order)
    /// @brief run_clusters as the text and the error show them: "a, b".
    [[nodiscard]] std::string run_cluster_list() const {
        std::string names;
        for (const auto& n : run_clusters) names += (names.empty() ? "" : ", ") + n;
        return names;
    }
};

/// The topology flags' cluster when any is given; otherwise the one cluster every expressible run
/// names in its `cluster` column (a run without one is predicted on the default cluster, which
/// then counts as one of them); otherwise, where the runs name several, the default, and `--out`
/// asks for --cluster rather than write a cluster file the runs do not describe.
calibration_target target_of(const fit_step_request& req, const std::vector<training_run>& runs) {
    const cli::topology_request& t = req.topology;
    calibration_target out{cli::resolve_cluster(t), {}};
    const bool given = t.cluster || t.overrides() || t.scale_up_domain;
    const cluster* own = nullptr;
    for (const auto& r : runs) {
        if (!r.not_expressible.empty()) continue;
        const std::string name = r.system ? std::string(r.system->name) : std::string(out.base.name);
        if (std::find(out.run_clusters.begin(), out.run_clusters.end(), name) == out.run_clusters.end())
            out.run_clusters.push_back(name);
        if (r.system && !own) own = &*r.system;
    }
    if (given) return out;
    if (out.run_clusters.size() == 1 && own) {
        out.base = *own;
    } else if (out.run_clusters.size() > 1 && req.out) {
        throw input_error("--out", *req.out + " without --cluster, for runs on " + out.run_cluster_list(),
                          "--cluster NAME|FILE (or the topology flags) naming the cluster the calibration is written for");
    }
    return out;
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt_json(const std::optional<duration>& v) { return v ? nlohmann::json(in_seconds(*v)) : nlohmann::json(nullptr); }

cli::registrar reg{cli::bound_command<fit_step_request>(
    "fit-step",
    "fit the step predictor's compute efficiency to measured training runs (CSV)",
    "usage: commscale fit-step RUNS.csv [--cluster NAME|FILE | topology] [--out FILE] [--json] [--svg FILE]\n"
    "RUNS.csv: one measured run per row (io/training_runs.hpp); the constants fitted as docs/calibration.md says.\n"
    "--json: {runs: [{label, measured_step_s, predicted_before_s, predicted_step_s, ...}], fitted, kept, median_rel_error, ...}",
    options(),
    [](const fit_step_request& req, const cli::args& a, std::ostream& out) {
        const auto runs = io::load_training_runs(a.positional.at(0), "RUNS.csv");
        const calibration_target target = target_of(req, runs);
        const cluster& base = target.base;
        const step_fit f = fit_step(runs, base);
        cluster calibrated = base;
        calibrated.compute = f.calibration;
        // check every output path before writing any
        if (req.svg) io::require_writable(*req.svg, "--svg");
        if (req.out) io::require_writable(*req.out, "--out");
        if (req.svg) io::write_file_atomic(*req.svg, svg_plot(f), "--svg");
        if (const auto& file = req.out) {
            nlohmann::json j = io::cluster_to_json(calibrated);
            j["compute_calibration"] = {{"kernel_efficiency", f.calibration.kernel_efficiency},
                                        {"attention_efficiency", f.calibration.attention_efficiency},
                                        {"fitted_from", a.positional.at(0)}};
            if (f.calibration.overlap_slowdown != 1.0)
                j["compute_calibration"]["overlap_slowdown"] = f.calibration.overlap_slowdown;
            if (f.calibration.kernel_overhead != 1.0)
                j["compute_calibration"]["kernel_overhead"] = f.calibration.kernel_overhead;
            io::write_file_atomic(*file, j.dump(2) + "\n", "--out");
        }
        if (a.flag("json")) {
            nlohmann::json jr = nlohmann::json::array();
            for (const auto& r : f.runs)
                jr.push_back({{"label", r.label},
                              {"measured_step_s", in_seconds(r.measured_step)},
                              {"predicted_before_s", in_seconds(r.predicted_before)},
                              {"predicted_step_s", in_seconds(r.predicted_after)},
                              {"cv_predicted_step_s", opt_json(r.cv_predicted)}});
            nlohmann::json fitted = nlohmann::json::object();
            for (const auto& p : f.fitted) fitted[p.name] = {{"value", p.value}, {"uncertainty", p.uncertainty}};
            cli::print_json(out, {{"runs", jr},
                                  {"fitted", fitted},
                                  {"kept", f.kept},
                                  {"median_rel_error_before", f.median_rel_error_before},
                                  {"median_rel_error", f.median_rel_error},
                                  {"cv_median_rel_error", opt_json(f.cv_median_rel_error)},
                                  {"noise", f.noise},
                                  {"cluster", std::string(base.name)},
                                  {"run_clusters", target.run_clusters},
                                  {"compute_calibration",
                                   {{"kernel_efficiency", f.calibration.kernel_efficiency},
                                    {"attention_efficiency", f.calibration.attention_efficiency},
                                    {"overlap_slowdown", f.calibration.overlap_slowdown},
                                    {"kernel_overhead", f.calibration.kernel_overhead}}}});
            return 0;
        }
        out << f.runs.size() << " run(s) on ";
        if (target.run_clusters.size() == 1 && target.run_clusters.front() == base.name) {
            out << base.name << " (" << base.node.accelerator << ")\n\n";
        } else {
            out << target.run_cluster_list() << "; the calibration is for " << base.name << " (" << base.node.accelerator << ")\n\n";
        }
        std::vector<std::vector<std::string>> rows;
        for (const auto& r : f.runs)
            rows.push_back({r.label, cli::num(in_seconds(r.measured_step), 4), cli::num(in_seconds(r.predicted_before), 4),
                            cli::num(100 * (in_seconds(r.predicted_before) / in_seconds(r.measured_step) - 1), 1) + "%",
                            cli::num(in_seconds(r.predicted_after), 4),
                            cli::num(100 * (in_seconds(r.predicted_after) / in_seconds(r.measured_step) - 1), 1) + "%",
                            r.cv_predicted ? cli::num(100 * (in_seconds(*r.cv_predicted) / in_seconds(r.measured_step) - 1), 1) + "%"
                                             : std::string("n/a")});
        cli::print_table(out, {"run", "measured s", "before s", "err", "after s", "err", "cv err"}, rows);
        out << "\n";
        for (const auto& p : f.fitted)
            out << "fitted  " << p.name << " = " << cli::num(p.value, 3) << " +- " << cli::num(p.uncertainty, 3) << "\n";
        for (const auto& k : f.kept) out << "kept    " << k << " = 1 (not identifiable from these runs)\n";
        out << "median error " << cli::num(100 * f.median_rel_error_before, 1) << "% before, "
            << cli::num(100 * f.median_rel_error, 1) << "% after, cross-validated "
            << (f.cv_median_rel_error ? cli::num(100 * *f.cv_median_rel_error, 1) + "%" : std::string("n/a (one run)"))
            << "\n";
        if (const auto& file = req.out) out << "wrote " << *file << " (use it as --cluster " << *file << ")\n";
        return 0;
    },
    1, 1)};

}  // namespace fit_step_command
}  // namespace
