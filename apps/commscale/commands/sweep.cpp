// `commscale sweep --op OP --min SIZE --max SIZE [--factor 2] [topology] [--algo] [--efficiency]
// [--measured LOG] [--json] [--svg FILE]`: a predicted nccl-tests-style table (size, time, algbw,
// busbw, algorithm) over message sizes; --svg draws busbw vs size (log2 x axis) as a standalone
// SVG. --measured compares with a measured log: its sizes (unless --min/--max are given), its
// collective (unless --op) and its rank count (unless --ranks), the measured busbw and the error
// per size in the table, the JSON and the plot.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/collective/model.hpp>
#include <commscale/io/file.hpp>
#include <commscale/units/format.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../svg.hpp"
#include "../topology.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace sweep_command {

/// At most this many sizes per sweep (a factor-2 sweep from 1 B to 1 PB has 51).
constexpr long long max_rows = 4096;

struct row {
    double bytes;
    commscale::collective_result r;
};

/// Measured busbw at a size, when the sweep is compared with a log.
struct measured_point {
    double bytes, busbw_GBps, time_us;
};

/// Median of |x|.
double median_abs(std::vector<double> v) {
    for (double& x : v) x = std::abs(x);
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0;
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// A standalone SVG (opens in a browser): busbw (GB/s) against message size on a log2 axis; with
/// measurements, the measured points over the predicted curve and a second panel with the error
/// per size ((predicted - measured) / measured, %).
std::string render_svg(const std::vector<row>& rows, const std::vector<measured_point>& measured,
                       const std::vector<double>& errors_pct, const std::string& title) {
    using cli::svg::axis;
    double ymax = 0;
    for (const auto& r : rows) ymax = std::max(ymax, commscale::in_GBps(r.r.busbw));
    for (const auto& m : measured) ymax = std::max(ymax, m.busbw_GBps);
    if (!(ymax > 0)) ymax = 1;
    double lo = rows.front().bytes, hi = rows.back().bytes;
    for (const auto& m : measured) {
        lo = std::min(lo, m.bytes);
        hi = std::max(hi, m.bytes);
    }
    cli::svg::chart top(820, 480, title, axis{lo, hi, "message size (bytes, log2 scale)", true}, axis{0, ymax * 1.05, "busbw (GB/s)"});
    std::vector<std::pair<double, double>> curve;
    std::vector<std::string> tips;
    for (const auto& r : rows) {
        curve.emplace_back(r.bytes, commscale::in_GBps(r.r.busbw));
        tips.push_back(cli::svg::bytes_text(r.bytes) + ": " + cli::num(commscale::in_GBps(r.r.busbw), 2) + " GB/s (" +
                       std::string(to_string(r.r.algo)) + ")");
    }
    top.line(curve, "#1f77b4", measured.empty() ? "" : "predicted");
    if (measured.empty()) {
        top.points(curve, tips, "#1f77b4", "", 5);
        return cli::svg::document({&top}, title);
    }
    std::vector<std::pair<double, double>> pts, err;
    std::vector<std::string> mtips, etips;
    double emax = 5;
    for (std::size_t i = 0; i < measured.size(); ++i) {
        pts.emplace_back(measured[i].bytes, measured[i].busbw_GBps);
        mtips.push_back(cli::svg::bytes_text(measured[i].bytes) + ": measured " + cli::num(measured[i].busbw_GBps, 2) +
                        " GB/s, error " + cli::num(errors_pct[i], 1) + "%");
        err.emplace_back(measured[i].bytes, errors_pct[i]);
        etips.push_back(mtips.back());
        emax = std::max(emax, std::abs(errors_pct[i]));
    }
    top.points(pts, mtips, "#d62728", "measured");
    cli::svg::chart bottom(820, 260, "error per size, median |error| " + cli::num(median_abs(errors_pct), 1) + "%",
                           axis{lo, hi, "message size (bytes, log2 scale)", true}, axis{-emax * 1.1, emax * 1.1, "error (%)"});
    bottom.hline(0);
    bottom.line(err, "#d62728", "", 1.0, true);
    bottom.points(err, etips, "#d62728", "(predicted - measured) / measured");
    return cli::svg::document({&top, &bottom}, title);
}

/// What `sweep`'s options give: the topology flags, --gpus and the collective's options as for
/// `collective` (topology.hpp), and its own.
struct sweep_request {
    cli::topology_request topology;
    cli::collective_args collective;
    std::optional<commscale::data_size> min, max;
    std::optional<double> factor;
    std::optional<std::string> svg, measured;
};

std::vector<cli::bound_option<sweep_request>> options() {
    using r = sweep_request;
    return cli::topology_bound<r>(&r::topology) + cli::collective_bound<r>([](r& x) -> cli::collective_args& { return x.collective; }) +
           std::vector<cli::bound_option<r>>{
               cli::gpus_option<r>([](r& x) -> cli::topology_request& { return x.topology; }),
               cli::opt::size<r>("min", &r::min, "smallest size (e.g. 8B, 1KiB)"),
               cli::opt::size<r>("max", &r::max, "largest size (e.g. 8GiB)"),
               cli::opt::custom<r>("factor", "size multiplier between rows, > 1 (default 2)",
                              [](r& x, const std::string& v) { x.factor = commscale::parse_number(v, "--factor"); }),
               cli::opt::text<r>("svg", &r::svg, "write busbw vs size as an SVG file"),
               cli::opt::text<r>("measured", &r::measured, "a measured log (nccl-tests, rccl-tests, JSON, probe) to compare with"),
           };
}

cli::registrar reg{cli::bound_command<sweep_request>(
    "sweep",
    "predicted nccl-tests-style table of a collective over message sizes (--svg plots busbw)",
    "usage: commscale sweep --op OP --min SIZE --max SIZE [--factor 2] [topology] [--algo ALGO]\n"
    "Sizes min, min*f, min*f^2, ... <= max, or with --measured LOG the log's sizes, collective and ranks and its error.\n"
    "--json: {rows: [{bytes, time_us, algbw_GBps, busbw_GBps, algorithm[, measured_busbw_GBps, measured_time_us, error_pct]}], ...}",
    options(),
    [](const sweep_request& sw, const cli::args& a, std::ostream& out) {
        using namespace commscale;
        const cluster c = cli::resolve_cluster_gpus(sw.topology);
        // The measured log, when given: its collective, ranks and sizes stand in for missing flags.
        std::optional<measurement_set> log;
        if (const auto& path = sw.measured) {
            if (path->empty()) throw input_error("--measured", "an empty path", "a measured log file (or - for stdin)");
            std::optional<collective_op> want;
            if (sw.collective.op) want = **sw.collective.op;
            for (auto& set : read_measurements(*path, want, "--measured"))
                if (!want || set.op == *want) {
                    log = std::move(set);
                    break;
                }
            if (!log)
                throw input_error("--measured", *path + " has no " + std::string(to_string(*want)) + " table",
                                  "a log with a table of the --op collective");
        }
        cli::collective_request req = cli::read_collective_request(sw.collective, c, log ? std::optional(log->op) : std::nullopt);
        if (log && log->ranks > 0 && !sw.collective.ranks) {
            const long long total = static_cast<long long>(c.nodes) * c.node.gpus;
            if (log->ranks > total)
                throw input_error("--measured", std::to_string(log->ranks) + " ranks in the log",
                                  "a log of at most the cluster's " + std::to_string(total) + " GPUs (" + std::to_string(c.nodes) +
                                      " nodes of " + std::to_string(c.node.gpus) + "; set --nodes)");
            // per node, or per NVLink domain where it spans nodes (an NVL72 log's trays fill racks in order)
            const cluster v = comm_view(c);
            int per_node = std::min(log->ranks, v.node.gpus);
            if (!c.domain_spans_nodes() && log->nodes > 0 && log->ranks % log->nodes == 0)
                per_node = std::min(per_node, log->ranks / log->nodes);
            if (sw.collective.ranks_per_node) per_node = std::min(req.group.ranks_per_node, log->ranks);
            req.group = placement{.ranks = log->ranks, .ranks_per_node = per_node, .stride = 1};
            if (req.group.nodes() > v.nodes)
                throw input_error("--measured", std::to_string(log->ranks) + " ranks at " + std::to_string(per_node) + " per node",
                                  "a group that fits on the cluster's " + std::to_string(c.nodes) + " node(s) (set --nodes)");
        }
        std::vector<double> sizes;
        if (log && !sw.min && !sw.max) {
            for (const auto& r : log->rows)
                if (in_bytes(r.bytes) >= 1) sizes.push_back(in_bytes(r.bytes));
            std::sort(sizes.begin(), sizes.end());
            sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
            if (sizes.empty()) throw input_error("--measured", "no row of at least 1 byte", "a log with measured sizes");
        } else {
            if (!sw.min) throw input_error("--min", "nothing (missing)", "a size such as 8B");
            if (!sw.max) throw input_error("--max", "nothing (missing)", "a size such as 8GiB");
            const double lo = in_bytes(*sw.min);
            const double hi = in_bytes(*sw.max);
            if (!(lo >= 1.0)) throw input_error("--min", detail::number_text(lo) + " B", "a size of at least 1 byte");
            if (!(hi >= lo))
                throw input_error("--max", detail::number_text(hi) + " B", "a size >= --min (" + detail::number_text(lo) + " B)");
            const double factor = sw.factor.value_or(2.0);
            if (!(factor > 1.0) || !std::isfinite(factor))
                throw input_error("--factor", detail::number_text(factor), "a number > 1 (e.g. 2)");
            const double count = std::floor(std::log(hi / lo) / std::log(factor) + 1e-9) + 1.0;
            if (!(count <= static_cast<double>(max_rows)))
                throw input_error("--factor", detail::number_text(factor) + " (" + detail::number_text(count) + " sizes from " +
                                                  detail::number_text(lo) + " to " + detail::number_text(hi) + " B)",
                                  "at most " + std::to_string(max_rows) + " sizes: a larger factor or a narrower range");
            double prev = -1;
            const auto n = static_cast<long long>(count);
            for (long long i = 0; i < n; ++i) {
                double b = std::round(lo * std::pow(factor, static_cast<double>(i)));
                b = std::min(std::max(b, lo), hi);
                if (b <= prev) continue;  // rounding to whole bytes can repeat a size with small factors
                prev = b;
                sizes.push_back(b);
            }
        }
        const std::optional<std::string>& svg_path = sw.svg;
        if (svg_path && svg_path->empty()) throw input_error("--svg", "an empty path", "a file path");

        std::vector<row> rows;
        for (double b : sizes) rows.push_back({b, predict_collective(c, req.group, req.op, bytes(b), req.options)});
        // Measured points (the log's rows) and the error of the prediction at each of them.
        std::vector<measured_point> measured;
        std::vector<double> errors;
        if (log) {
            for (const auto& m : log->rows) {
                const double busbw = in_GBps(m.busbw);
                if (!(in_bytes(m.bytes) >= 1) || !(busbw > 0)) continue;
                const auto p = predict_collective(c, req.group, req.op, m.bytes, req.options);
                measured.push_back({in_bytes(m.bytes), busbw, in_us(m.time)});
                errors.push_back(100.0 * (in_GBps(p.busbw) - busbw) / busbw);
            }
            std::vector<std::size_t> order(measured.size());
            for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return measured[x].bytes < measured[y].bytes; });
            std::vector<measured_point> m2;
            std::vector<double> e2;
            for (auto i : order) {
                m2.push_back(measured[i]);
                e2.push_back(errors[i]);
            }
            measured = std::move(m2);
            errors = std::move(e2);
        }
        // The measurement at a row's size (first one), for the table and JSON.
        auto at = [&](double b) -> std::optional<std::size_t> {
            for (std::size_t i = 0; i < measured.size(); ++i)
                if (measured[i].bytes == b) return i;
            return std::nullopt;
        };

        if (a.flag("json")) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& r : rows) {
                nlohmann::json j = {{"bytes", static_cast<long long>(r.bytes)},
                                    {"time_us", in_us(r.r.time)},
                                    {"algbw_GBps", in_GBps(r.r.algbw)},
                                    {"busbw_GBps", in_GBps(r.r.busbw)},
                                    {"algorithm", std::string(to_string(r.r.algo))}};
                if (auto i = at(r.bytes)) {
                    j["measured_busbw_GBps"] = measured[*i].busbw_GBps;
                    j["measured_time_us"] = measured[*i].time_us;
                    j["error_pct"] = errors[*i];
                }
                list.push_back(std::move(j));
            }
            nlohmann::json doc = {{"rows", list}};
            if (log) doc["median_abs_error_pct"] = median_abs(errors);
            cli::print_json(out, doc);
        } else {
            out << "# " << to_string(req.op) << " on " << req.group.ranks << " ranks / " << req.group.nodes() << " node(s) of "
                << c.name << (req.options.mode == efficiency_mode::ideal ? " (ideal)" : "") << "\n";
            std::vector<std::vector<std::string>> table;
            for (const auto& r : rows) {
                table.push_back({cli::num(r.bytes, 0), cli::num(in_us(r.r.time), 2), cli::num(in_GBps(r.r.algbw), 2),
                                 cli::num(in_GBps(r.r.busbw), 2), std::string(to_string(r.r.algo))});
                if (log) {
                    const auto i = at(r.bytes);
                    table.back().push_back(i ? cli::num(measured[*i].busbw_GBps, 2) : "-");
                    table.back().push_back(i ? cli::num(errors[*i], 1) : "-");
                }
            }
            std::vector<std::string> head = {"size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm"};
            if (log) {
                head.push_back("measured(GB/s)");
                head.push_back("error(%)");
            }
            cli::print_table(out, head, table);
            if (log)
                out << "# median |error| " << cli::num(median_abs(errors), 1) << "% over " << measured.size()
                    << " measured sizes (error = (predicted - measured) / measured busbw)\n";
        }
        if (svg_path) {
            const std::string title = std::string(to_string(req.op)) + " busbw, " + std::to_string(req.group.ranks) +
                                      " ranks on " + std::string(c.name) +
                                      (req.options.mode == efficiency_mode::ideal ? " (ideal)" : " (predicted)");
            io::write_file_atomic(*svg_path, render_svg(rows, measured, errors, title), "--svg");
        }
        return 0;
    },
    0, 0)};

}  // namespace sweep_command
}  // namespace
