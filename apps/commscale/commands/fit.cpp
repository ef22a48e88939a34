// `commscale fit LOG... [--op OP] [topology] [--json] [--out FILE] [--svg FILE]`: fits the
// collective model's realistic-mode parameters to measured sweeps (nccl-tests / rccl-tests text
// logs, nccl-tests JSON, probe output; `-` reads stdin) and reports the calibration
// (docs/CLI.md "Calibration and planning"; the fit is include/commscale/calibrate/calibrate.hpp).
// Logs holding several collectives on the same ranks (without --op) are fitted jointly
// (calibrate_collectives): one parameter set for all; "op" is the first, "ops" lists them all.
//
// Topology: from --cluster / the topology flags when any is given; otherwise inferred from the log:
// the preset whose accelerator matches the GPU model of the device lines (A100 -> dgx-a100,
// H100 -> dgx-h100, H200 -> hgx-h200, B200 -> dgx-b200, MI300X -> mi300x-roce; anything else or
// no device lines -> the default preset dgx-a100), with its node count set to the log's distinct
// hosts and, if the log's ranks per node exceed the preset's GPUs, its GPUs per node raised to them.
// The measured group is the log's ranks on consecutive GPUs, ranks / nodes per node.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <commscale/calibrate/calibrate.hpp>
#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/io/file.hpp>

#include <fmt/format.h>

#include "../cli.hpp"
#include "../options.hpp"
#include "../svg.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace fit_command {

using namespace commscale;

/// What `fit`'s own options and the topology flags give.
struct fit_request {
    cli::topology_request topology;
    std::optional<collective_op> op;  ///< the collective to fit where a log holds several
    std::optional<std::string> out, svg;
};

std::vector<cli::bound_option<fit_request>> options() {
    using r = fit_request;
    return cli::topology_bound<r>(&r::topology) +
           std::vector<cli::bound_option<r>>{
               cli::opt::custom<r>("op", "the collective of the log (default: the one the log names)",
                              [](r& x, const std::string& v) { x.op = parse<collective_op>(v, "--op"); }),
               cli::opt::text<r>("out", &r::out, "write the calibrated cluster JSON (readable by --cluster) to FILE"),
               cli::opt::text<r>("svg", &r::svg, "write measured and fitted busbw vs size to FILE"),
           };
}

std::string read_input(const std::string& path) {
    if (path == "-") return io::read_stream(std::cin, "standard input", "log");
    return io::read_file(path, "log");
}

// Four significant digits (parameters span 1e-1 to 1e6 in their units).
std::string significant(double v) {
    return fmt::format("{:.4g}", v);
}

struct fit_input {
    measurement_set set;                 // the first collective read
    std::vector<measurement_set> others;  // further collectives, fitted jointly with it
    std::string source;
};

// All rows of the logs, one set per collective (the first one read first), all on the same rank
// count (else an input_error naming the file). Several collectives are fitted jointly.
fit_input read_logs(const std::vector<std::string>& files, std::optional<collective_op> op) {
    fit_input in;
    bool have = false;
    for (const auto& f : files) {
        const std::string text = read_input(f);
        const auto sets = parse_measurements(text, f == "-" ? "stdin" : f, op);
        for (const auto& s : sets) {
            if (op && s.op != *op) continue;
            if (!have) {
                in.set = s;
                in.source = f;
                have = true;
                continue;
            }
            if (s.ranks != in.set.ranks)
                throw input_error(f, std::to_string(s.ranks) + " ranks after " + std::to_string(in.set.ranks) + " in " + in.source,
                                  "logs measured on the same ranks");
            measurement_set* same = s.op == in.set.op ? &in.set : nullptr;
            for (auto& o : in.others)
                if (o.op == s.op) same = &o;
            if (same) same->rows.insert(same->rows.end(), s.rows.begin(), s.rows.end());
            else in.others.push_back(s);
        }
    }
    if (!have)
        throw input_error("LOG", op ? "no " + std::string(to_string(*op)) + " table" : std::string("no table"),
                          "an nccl-tests / rccl-tests log, nccl-tests JSON or probe output with rows");
    return in;
}

std::string svg_plot(const collective_calibration& f, const std::vector<fit_point>& pts) {
    using cli::svg::axis;
    double lo = in_bytes(pts.front().bytes), hi = lo, top = 1.0, emax = 5.0;
    auto measured = [&](const fit_point& p) { return f.bytes_factor * in_bytes(p.bytes) / in_us(p.time) * 1e-3; };
    auto fitted = [&](double size) {
        const double tt = in_seconds(predict_time(f, bytes(size)));
        return tt > 0 ? f.bytes_factor * size / tt / 1e9 : 0.0;
    };
    std::vector<std::pair<double, double>> meas, err;
    std::vector<std::string> tips;
    for (const auto& p : pts) {
        const double size = in_bytes(p.bytes);
        lo = std::min(lo, size);
        hi = std::max(hi, size);
        top = std::max(top, measured(p));
        const double e = 100.0 * (fitted(size) - measured(p)) / measured(p);
        meas.emplace_back(size, measured(p));
        err.emplace_back(size, e);
        tips.push_back(cli::svg::bytes_text(size) + ": measured " + cli::num(measured(p), 2) + " GB/s, fitted " +
                       cli::num(fitted(size), 2) + " GB/s (" + cli::num(e, 1) + "%)");
        emax = std::max(emax, std::abs(e));
    }
    top = std::max(top, in_GBps(f.peak_busbw)) * 1.05;
    const std::string title = std::string(to_string(f.op)) + " on " + std::to_string(f.group.ranks) + " ranks: measured and fitted busbw";
    cli::svg::chart upper(820, 480, title, axis{lo, hi, "message size (bytes, log2 scale)", true}, axis{0, top, "busbw (GB/s)"});
    std::vector<std::pair<double, double>> curve;
    const double xl = std::log2(std::max(lo, 1.0)), xh = std::log2(std::max(hi, 2.0 * std::max(lo, 1.0)));
    for (int i = 0; i <= 200; ++i) {
        const double size = std::exp2(xl + (xh - xl) * i / 200.0);
        curve.emplace_back(size, fitted(size));
    }
    upper.line(curve, "#1f77b4", "fitted model");
    upper.points(meas, tips, "#d62728", "measured");
    cli::svg::chart lower(820, 260, "fit error per size", axis{lo, hi, "message size (bytes, log2 scale)", true},
                          axis{-emax * 1.1, emax * 1.1, "error (%)"});
    lower.hline(0);
    lower.line(err, "#d62728", "", 1.0, true);
    lower.points(err, tips, "#d62728", "(fitted - measured) / measured");
    return cli::svg::document({&upper, &lower}, title);
}

cli::registrar reg{cli::bound_command<fit_request>(
    "fit",
    "fit the collective model to nccl-tests/rccl-tests logs and write a calibrated cluster",
    "usage: commscale fit LOG... [--op OP] [topology] [--json] [--out FILE] [--svg FILE]\n"
    "LOG: nccl-tests/rccl-tests text or JSON, or probe output (- reads stdin); the model fitted as docs/calibration.md says.\n"
    "--json: {op, ops, ranks, nodes, rows, cluster, latency_us, bandwidth_GBps, efficiency, median_rel_error, r2, fitted, ...}",
    options(),
    [](const fit_request& req, const cli::args& a, std::ostream& out) {
        const fit_input in = read_logs(a.positional, req.op);
        const measurement_set& m = in.set;
        const int ranks = m.ranks;
        if (ranks < 2)
            throw input_error("LOG", std::to_string(ranks) + " ranks", "a log of at least 2 ranks (device lines or busbw/algbw)");
        // the system: the user's, or the log's (calibrate/measurements.hpp cluster_for_log)
        const cluster c = (req.topology.cluster || req.topology.overrides()) ? cli::resolve_cluster(req.topology) : cluster_for_log(m);
        const placement g = placement_for_log(c, m);
        std::vector<fit_point> pts;
        for (const auto& r : m.rows)
            if (usable(r)) pts.push_back({r.bytes, r.time});
        std::vector<calibration_sweep> sweeps{{g, m.op, pts}};
        for (const auto& o : in.others) {
            calibration_sweep sw{g, o.op, {}};
            for (const auto& r : o.rows)
                if (usable(r)) sw.rows.push_back({r.bytes, r.time});
            sweeps.push_back(std::move(sw));
        }
        const auto f = sweeps.size() == 1 ? calibrate_collective(c, g, m.op, pts) : calibrate_collectives(c, sweeps);
        std::string op_names(to_string(m.op));
        nlohmann::json ops = nlohmann::json::array({std::string(to_string(m.op))});
        for (const auto& o : in.others) {
            op_names += " + " + std::string(to_string(o.op));
            ops.push_back(std::string(to_string(o.op)));
        }
        const std::vector<fit_point> sorted = [&] {
            auto v = pts;
            std::sort(v.begin(), v.end(), [](const fit_point& x, const fit_point& y) { return x.bytes < y.bytes; });
            return v;
        }();
        // Check every output path before writing any, so an error never leaves one file behind.
        if (req.svg) io::require_writable(*req.svg, "--svg");
        if (req.out) io::require_writable(*req.out, "--out");
        if (req.svg) io::write_file_atomic(*req.svg, svg_plot(f, sorted), "--svg");
        if (req.out) io::write_file_atomic(*req.out, io::cluster_to_json(f.calibrated).dump(2) + "\n", "--out");
        const std::string_view cls = to_string(f.fitted_class);
        nlohmann::json fitted = nlohmann::json::object();
        for (const auto& p : f.parameters)
            if (p.fitted) fitted[p.name] = {{"value", p.value}, {"uncertainty", p.uncertainty}};
        nlohmann::json j{{"op", std::string(to_string(m.op))},
                         {"ops", ops},
                         {"ranks", ranks},
                         {"nodes", g.nodes()},
                         {"rows", f.rows},
                         {"cluster", std::string(c.name)},
                         {"latency_us", in_us(f.latency)},
                         {"bandwidth_GBps", in_GBps(f.bandwidth)},
                         {"peak_busbw_GBps", in_GBps(f.peak_busbw)},
                         {"peak_busbw_sigma_GBps", in_GBps(f.peak_busbw_sigma)},
                         {"efficiency", f.fitted.efficiency},
                         {"efficiency_sigma", f.efficiency_sigma},
                         {"median_rel_error", f.median_rel_error},
                         {"max_rel_error", f.max_rel_error},
                         {"cv_median_rel_error", f.cv_median_rel_error ? nlohmann::json(*f.cv_median_rel_error) : nlohmann::json(nullptr)},
                         {"r2", f.r2},
                         {"converged", f.converged},
                         {"latency_sigma_us", in_us(f.latency_sigma)},
                         {"fitted", fitted},
                         {"kept", f.kept_names()},
                         {"step_latencies_tied", f.step_latencies_tied},
                         {"fitted_class", std::string(cls)},
                         {"warnings", f.warnings},
                         {"calibration", io::comm_params_to_json(f.calibrated.comm)}};
        if (a.flag("json")) {
            cli::print_json(out, j);
            return 0;
        }
        out << op_names << " on " << ranks << " ranks / " << g.nodes() << " node(s) of " << c.name << ", " << f.rows
            << " rows (" << in.source << ")\n"
            << "latency          " << cli::num(in_us(f.latency), 2)
            << (f.latency_sigma.value() > 0 ? " +- " + cli::num(in_us(f.latency_sigma), 2) : std::string(" (kept at the prior)"))
            << " us\n"
            << "bandwidth        " << cli::num(in_GBps(f.bandwidth), 1) << " GB/s per direction (efficiency "
            << cli::num(f.fitted.efficiency, 3) << " of the " << cls << " link)\n"
            << "peak busbw       " << cli::num(in_GBps(f.peak_busbw), 1)
            << (f.efficiency_sigma == 0.0 ? std::string(" GB/s (efficiency kept at the prior)")
                : std::isfinite(in_GBps(f.peak_busbw_sigma)) ? " +- " + cli::num(in_GBps(f.peak_busbw_sigma), 1) + " GB/s"
                                                               : std::string(" GB/s (uncertainty not bounded by these rows)"))
            << "\n"
            << "error            median " << cli::num(100 * f.median_rel_error, 1) << "%, max "
            << cli::num(100 * f.max_rel_error, 1) << "%, cross-validated median "
            << (f.cv_median_rel_error ? cli::num(100 * *f.cv_median_rel_error, 1) + "%" : std::string("n/a")) << ", R2 "
            << cli::num(f.r2, 4) << "\n";
        out << "fitted" << (f.step_latencies_tied ? " (step latencies as one factor on their priors)" : "") << ":\n";
        for (const auto& p : f.parameters)
            if (p.fitted)
                out << "  " << p.name << std::string(p.name.size() < 24 ? 24 - p.name.size() : 1, ' ') << significant(p.value)
                    << " +- " << significant(p.uncertainty) << "  (prior " << significant(p.prior) << ", posterior/prior sd "
                    << cli::num(p.prior_ratio, 2) << ")\n";
        const auto kept = f.kept_names();
        out << "kept at the prior:";
        if (kept.empty()) out << " none";
        for (const auto& k : kept) out << " " << k;
        out << "\n";
        for (const auto& w : f.warnings) out << "warning: " << w << "\n";
        return 0;
    },
    1, -1)};

}  // namespace fit_command
}  // namespace
