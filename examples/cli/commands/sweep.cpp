// `commscale sweep --op OP --min SIZE --max SIZE [--factor 2] [topology] [--algo] [--efficiency]
// [--json] [--svg FILE]`: a predicted nccl-tests-style table (size, time, algbw, busbw, algorithm)
// over message sizes; --svg draws busbw vs size (log2 x axis) as a standalone SVG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <commscale/collective/model.hpp>
#include <commscale/io/file.hpp>
#include <commscale/units/format.hpp>

#include "../cli.hpp"
#include "../svg.hpp"
#include "../topology.hpp"

namespace {

/// At most this many sizes per sweep (a factor-2 sweep from 1 B to 1 PB has 51).
constexpr long long max_rows = 4096;

struct row {
    double bytes;
    commscale::collective_result r;
};

/// Size label for an axis tick: powers of 1024 shown as B, KiB, MiB, GiB, TiB.
std::string size_label(double b) {
    static constexpr const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    while (i < 5 && b >= 1024.0) {
        b /= 1024.0;
        ++i;
    }
    return cli::num(b, b < 10 ? 2 : 0) + names[i];
}

/// A "nice" step (1, 2, 5 x 10^k) giving about `target` intervals over [0, hi].
double nice_step(double hi, int target) {
    const double raw = hi / target;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10.0 * mag;
}

/// A standalone SVG (opens in a browser): busbw (GB/s) against message size on a log2 axis.
std::string render_svg(const std::vector<row>& rows, const std::string& title) {
    constexpr double W = 800, H = 480, left = 80, right = 30, top = 50, bottom = 70;
    const double pw = W - left - right, ph = H - top - bottom;
    double x0 = std::log2(rows.front().bytes), x1 = std::log2(rows.back().bytes);
    if (x1 - x0 < 1e-9) {
        x0 -= 1;
        x1 += 1;
    }
    double ymax = 0;
    for (const auto& r : rows) ymax = std::max(ymax, commscale::in_GBps(r.r.busbw));
    if (!(ymax > 0)) ymax = 1;
    const double ystep = nice_step(ymax * 1.05, 6);
    const double ytop = std::ceil(ymax * 1.05 / ystep) * ystep;
    auto px = [&](double bytes) { return left + (std::log2(bytes) - x0) / (x1 - x0) * pw; };
    auto py = [&](double gbps) { return top + ph - gbps / ytop * ph; };
    auto f = [](double v) { return cli::num(v, 2); };

    std::string s;
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + f(W) + "\" height=\"" + f(H) + "\" viewBox=\"0 0 " +
         f(W) + " " + f(H) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s += "<title>" + cli::svg::escape(title) + "</title>\n";
    s += "<rect x=\"0\" y=\"0\" width=\"" + f(W) + "\" height=\"" + f(H) + "\" fill=\"white\"/>\n";
    s += "<text x=\"" + f(W / 2) + "\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">" + cli::svg::escape(title) + "</text>\n";
    // Y grid and labels.
    for (double y = 0; y <= ytop + ystep * 1e-9; y += ystep) {
        s += "<line x1=\"" + f(left) + "\" y1=\"" + f(py(y)) + "\" x2=\"" + f(left + pw) + "\" y2=\"" + f(py(y)) +
             "\" stroke=\"#dddddd\"/>\n";
        s += "<text x=\"" + f(left - 8) + "\" y=\"" + f(py(y) + 4) + "\" text-anchor=\"end\">" + cli::num(y, 2) + "</text>\n";
    }
    // X ticks at powers of two, thinned to at most ~12 labels.
    const int first = static_cast<int>(std::ceil(x0 - 1e-9)), last = static_cast<int>(std::floor(x1 + 1e-9));
    const int every = std::max(1, (last - first) / 12 + 1);
    for (int e = first; e <= last; ++e) {
        if ((e - first) % every != 0) continue;
        const double x = px(std::exp2(e));
        s += "<line x1=\"" + f(x) + "\" y1=\"" + f(top) + "\" x2=\"" + f(x) + "\" y2=\"" + f(top + ph) +
             "\" stroke=\"#eeeeee\"/>\n";
        s += "<text x=\"" + f(x) + "\" y=\"" + f(top + ph + 18) + "\" text-anchor=\"middle\">" +
             size_label(std::exp2(e)) + "</text>\n";
    }
    // Axes and labels.
    s += "<line x1=\"" + f(left) + "\" y1=\"" + f(top + ph) + "\" x2=\"" + f(left + pw) + "\" y2=\"" + f(top + ph) +
         "\" stroke=\"black\"/>\n";
    s += "<line x1=\"" + f(left) + "\" y1=\"" + f(top) + "\" x2=\"" + f(left) + "\" y2=\"" + f(top + ph) +
         "\" stroke=\"black\"/>\n";
    s += "<text x=\"" + f(left + pw / 2) + "\" y=\"" + f(H - 20) +
         "\" text-anchor=\"middle\">message size (bytes, log2 scale)</text>\n";
    s += "<text x=\"20\" y=\"" + f(top + ph / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 20 " +
         f(top + ph / 2) + ")\">busbw (GB/s)</text>\n";
    // The curve.
    s += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i) s += ' ';
        s += f(px(rows[i].bytes)) + "," + f(py(commscale::in_GBps(rows[i].r.busbw)));
    }
    s += "\"/>\n";
    for (const auto& r : rows) {
        s += "<circle cx=\"" + f(px(r.bytes)) + "\" cy=\"" + f(py(commscale::in_GBps(r.r.busbw))) +
             "\" r=\"3\" fill=\"#1f77b4\"><title>" + size_label(r.bytes) + ": " +
             cli::num(commscale::in_GBps(r.r.busbw), 2) + " GB/s (" +
             cli::svg::escape(commscale::algorithm_name(r.r.algo)) + ")</title></circle>\n";
    }
    s += "</svg>\n";
    return s;
}

std::vector<cli::option_spec> options() {
    auto o = cli::topology_options();
    auto more = cli::collective_options_spec();
    o.insert(o.end(), more.begin(), more.end());
    o.push_back({"gpus", true, "GPUs instead of --nodes (nodes = GPUs / GPUs per node)"});
    o.push_back({"min", true, "smallest size (e.g. 8B, 1KiB)"});
    o.push_back({"max", true, "largest size (e.g. 8GiB)"});
    o.push_back({"factor", true, "size multiplier between rows, > 1 (default 2)"});
    o.push_back({"svg", true, "write busbw vs size as an SVG file"});
    return o;
}

cli::registrar reg{cli::command{
    "sweep",
    "predicted nccl-tests-style table of a collective over message sizes (--svg plots busbw)",
    "usage: commscale sweep --op OP --min SIZE --max SIZE [--factor 2] [topology] [--algo ALGO]\n"
    "                       [--efficiency ideal|default] [--ranks N] [--ranks-per-node R] [--json] [--svg FILE]\n"
    "  sizes min, min*f, min*f^2, ... <= max (rounded to whole bytes; at most 4096 rows)\n"
    "  options and topology flags as for `commscale collective` (--gpus N instead of --nodes too)\n"
    "--json: {rows: [{bytes, time_us, algbw_GBps, busbw_GBps, algorithm}]}\n"
    "--svg FILE: busbw vs size with a log2 size axis, a standalone SVG (written atomically)",
    options(),
    [](const cli::args& a, std::ostream& out) {
        using namespace commscale;
        const cluster c = cli::resolve_cluster_gpus(a);
        const cli::collective_request req = cli::read_collective_request(a, c);
        const double lo = in_bytes(parse_size(a.require("min", "a size such as 8B"), "--min"));
        const double hi = in_bytes(parse_size(a.require("max", "a size such as 8GiB"), "--max"));
        if (!(lo >= 1.0)) throw input_error("--min", detail::number_text(lo) + " B", "a size of at least 1 byte");
        if (!(hi >= lo))
            throw input_error("--max", detail::number_text(hi) + " B", "a size >= --min (" + detail::number_text(lo) + " B)");
        const double factor = a.number("factor", 2.0);
        if (!(factor > 1.0) || !std::isfinite(factor))
            throw input_error("--factor", detail::number_text(factor), "a number > 1 (e.g. 2)");
        const double count = std::floor(std::log(hi / lo) / std::log(factor) + 1e-9) + 1.0;
        if (!(count <= static_cast<double>(max_rows)))
            throw input_error("--factor", detail::number_text(factor) + " (" + detail::number_text(count) + " sizes from " +
                                              detail::number_text(lo) + " to " + detail::number_text(hi) + " B)",
                              "at most " + std::to_string(max_rows) + " sizes: a larger factor or a narrower range");
        std::optional<std::string> svg_path = a.get("svg");
        if (svg_path && svg_path->empty()) throw input_error("--svg", "an empty path", "a file path");

        std::vector<row> rows;
        double prev = -1;
        const auto n = static_cast<long long>(count);
        for (long long i = 0; i < n; ++i) {
            double b = std::round(lo * std::pow(factor, static_cast<double>(i)));
            b = std::min(std::max(b, lo), hi);
            if (b <= prev) continue;  // rounding to whole bytes can repeat a size with small factors
            prev = b;
            rows.push_back({b, predict_collective(c, req.group, req.op, bytes(b), req.options)});
        }

        if (a.flag("json")) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& r : rows)
                list.push_back({{"bytes", static_cast<long long>(r.bytes)},
                                {"time_us", in_us(r.r.time)},
                                {"algbw_GBps", in_GBps(r.r.algbw)},
                                {"busbw_GBps", in_GBps(r.r.busbw)},
                                {"algorithm", std::string(algorithm_name(r.r.algo))}});
            cli::print_json(out, {{"rows", list}});
        } else {
            out << "# " << op_name(req.op) << " on " << req.group.ranks << " ranks / " << req.group.nodes() << " node(s) of "
                << c.name << (req.options.mode == efficiency_mode::ideal ? " (ideal)" : "") << "\n";
            std::vector<std::vector<std::string>> table;
            for (const auto& r : rows)
                table.push_back({cli::num(r.bytes, 0), cli::num(in_us(r.r.time), 2), cli::num(in_GBps(r.r.algbw), 2),
                                 cli::num(in_GBps(r.r.busbw), 2), std::string(algorithm_name(r.r.algo))});
            cli::print_table(out, {"size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm"}, table);
        }
        if (svg_path) {
            const std::string title = std::string(op_name(req.op)) + " busbw, " + std::to_string(req.group.ranks) +
                                      " ranks on " + std::string(c.name) +
                                      (req.options.mode == efficiency_mode::ideal ? " (ideal)" : " (predicted)");
            io::write_file_atomic(*svg_path, render_svg(rows, title), "--svg");
        }
        return 0;
    },
    0, 0}};

}  // namespace
