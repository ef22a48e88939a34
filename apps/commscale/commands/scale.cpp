// `commscale scale [step options] --nodes 1,2,4,8 [--strong] [--json] [--svg FILE]`: the training
// step predicted at several node counts with the same TP/PP/CP layout, data parallelism growing
// with the cluster, and the scaling efficiency (per-GPU throughput relative to the first count).
// "Will it scale to N GPUs?" (will-it-scale-to-n-gpus). docs/CLI.md "Training step".
#include <algorithm>
#include <cmath>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include <commscale/io/file.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/predict/scale.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../step_args.hpp"
#include "../svg.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace scale_command {

using namespace commscale;

std::vector<int> parse_counts(const std::string& text, const std::string& flag, const std::string& what,
                              const std::string& example, long long max) {
    std::vector<int> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) throw input_error(flag, "'" + text + "'", "comma-separated " + what + " counts, e.g. " + example);
        out.push_back(static_cast<int>(cli::args::parse_int(flag, item, 1, max)));
        for (std::size_t i = 0; i + 1 < out.size(); ++i)
            if (out[i] == out.back())
                throw input_error(flag, "'" + text + "' (" + item + " twice)", "distinct " + what + " counts, e.g. " + example);
        if (out.size() > 256) throw input_error(flag, "more than 256 counts", "at most 256 " + what + " counts");
    }
    if (out.empty()) throw input_error(flag, "'" + text + "'", "comma-separated " + what + " counts, e.g. " + example);
    return out;
}

std::vector<int> parse_nodes(const std::string& text) { return parse_counts(text, "--nodes", "node", "1,2,4,8", cluster_limits::nodes); }
std::vector<int> parse_gpu_counts(const std::string& text) {
    return parse_counts(text, "--gpus", "GPU", "8,16,32,64", cluster_limits::gpus);
}

std::string render_svg(const std::vector<scale_point>& pts, const std::string& title) {
    const double W = 760, H = 420, L = 70, R = 70, T = 50, B = 70;
    const double pw = W - L - R, ph = H - T - B;
    double ymax = 0;
    for (const auto& p : pts) ymax = std::max(ymax, in_seconds(p.step.step));
    if (ymax <= 0) ymax = 1;
    // Round step-time ticks (1, 2, 5 x 10^k); the top of the axis is the first tick above the data.
    const double ystep = cli::svg::nice_step(ymax, 5);
    ymax = std::ceil(ymax / ystep - 1e-9) * ystep;
    std::string s = cli::svg::open(W, H);
    s += cli::svg::text(W / 2, 24, title, "middle", 14);
    s += cli::svg::line(L, T + ph, L + pw, T + ph);
    s += cli::svg::line(L, T, L, T + ph);
    s += cli::svg::line(L + pw, T, L + pw, T + ph);
    const double ym = T + ph / 2;
    s += "<text x=\"20\" y=\"" + cli::svg::n(ym) + "\" text-anchor=\"middle\" transform=\"rotate(-90 20 " + cli::svg::n(ym) +
         ")\">step time (s)</text>\n";
    s += "<text x=\"" + cli::svg::n(W - 16) + "\" y=\"" + cli::svg::n(ym) + "\" text-anchor=\"middle\" transform=\"rotate(90 " +
         cli::svg::n(W - 16) + " " + cli::svg::n(ym) + ")\">scaling efficiency</text>\n";
    for (double v = 0; v <= ymax + ystep * 1e-6; v += ystep) {
        const double y = T + ph - ph * v / ymax;
        s += cli::svg::line(L - 4, y, L, y) + cli::svg::text(L - 6, y + 4, cli::svg::tick_text(v, ystep), "end", 10);
    }
    for (int i = 0; i <= 4; ++i) {
        const double y = T + ph - ph * i / 4.0;
        s += cli::svg::line(L + pw, y, L + pw + 4, y) + cli::svg::text(L + pw + 6, y + 4, cli::num(i * 25.0, 0) + "%", "start", 10);
    }
    struct part { const char* name; const char* color; };
    const part parts[] = {{"compute", "#4c78a8"}, {"bubble", "#bab0ac"}, {"TP", "#f58518"}, {"CP", "#eeca3b"},
                          {"EP", "#b279a2"},      {"PP", "#54a24b"},     {"DP", "#e45756"}};
    const double slot = pw / static_cast<double>(pts.size());
    const double bw = slot * 0.6;
    std::vector<std::pair<double, double>> eff;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const auto& r = pts[i].step;
        const double vals[] = {in_seconds(r.compute), in_seconds(r.bubble), in_seconds(r.tp.exposed), in_seconds(r.cp.exposed),
                               in_seconds(r.ep.exposed), in_seconds(r.pp.exposed), in_seconds(r.dp.exposed)};
        const double x = L + slot * static_cast<double>(i) + (slot - bw) / 2;
        double y = T + ph;
        for (std::size_t k = 0; k < 7; ++k) {
            const double h = ph * vals[k] / ymax;
            if (h > 0) s += cli::svg::rect(x, y - h, bw, h, parts[k].color, std::string(parts[k].name) + ": " + cli::num(vals[k], 4) + " s");
            y -= h;
        }
        s += cli::svg::text(x + bw / 2, T + ph + 16, std::to_string(pts[i].nodes), "middle", 11);
        eff.emplace_back(x + bw / 2, T + ph - ph * std::clamp(pts[i].efficiency, 0.0, 1.0));
    }
    s += cli::svg::polyline(eff, "#222", 2.0);
    s += cli::svg::text(L + pw / 2, T + ph + 34, "nodes", "middle");
    double lx = L;
    for (const auto& p : parts) {
        s += cli::svg::rect(lx, H - 22, 10, 10, p.color);
        s += cli::svg::text(lx + 14, H - 13, p.name, "start", 11);
        lx += 80;
    }
    s += cli::svg::line(lx, H - 17, lx + 20, H - 17, "#222", 2.0);
    s += cli::svg::text(lx + 24, H - 13, "scaling efficiency", "start", 11);
    s += cli::svg::close();
    return s;
}

cli::registrar reg{cli::bound_command<cli::step_request>(
    "scale",
    "will it scale? the training step and scaling efficiency at several node counts",
    "usage: commscale scale [step options] --nodes 1,2,4,8 | --gpus 8,16,32,64 [--strong] [--json] [--svg FILE]\n"
    "--gpus: GPU counts instead of node counts, each a multiple of the GPUs per node.\n"
    "Step options as in `commscale step --help`; the plan's TP/PP/CP layout is kept, dp grows with\n"
    "the cluster. Weak scaling (default) keeps the batch per data-parallel replica (the global\n"
    "batch given is the one at the first node count that holds the plan); --strong keeps the global\n"
    "batch. Node counts that cannot hold the plan are skipped and listed (JSON: skipped [{nodes, reason}]).\n"
    "Scaling efficiency = per-GPU tokens/s relative to the first node count.\n"
    "JSON: {model, cluster, mode, rows: [{nodes, gpus, dp, global_batch, efficiency, speedup, <step keys>}]}",
    cli::step_options(true),
    [](const cli::step_request& request, const cli::args& a, std::ostream& out) {
        cluster c = cli::step_cluster(request, true);
        // --nodes and --gpus are lists here, read from their text
        const auto& gpus = request.topology.gpus;
        const auto& nodes = request.topology.nodes;
        if (gpus && nodes)
            throw input_error("--gpus", gpus->value.spelled() + " together with --nodes " + nodes->value.spelled(),
                              "either --gpus N,... or --nodes N,..., not both");
        std::vector<int> counts;
        if (gpus) {
            for (int n : parse_gpu_counts(gpus->value.spelled())) counts.push_back(cli::nodes_for_gpus(n, c.node.gpus, c.name));
        } else {
            counts = parse_nodes(nodes ? nodes->value.spelled() : cli::is_demo(request) ? "8,16,32,64" : "1,2,4,8");
        }
        const transformer m = cli::step_model(request);
        // The plan is written for the first node count that can hold its layout (TP x PP x CP
        // dividing the GPUs, the batch dividing, ...); smaller counts are skipped and listed.
        std::vector<scale_skip> skipped;
        std::optional<plan> first;
        std::optional<input_error> first_error;
        while (!counts.empty()) {
            c.nodes = counts.front();
            try {
                first = cli::step_plan(request, cli::is_demo(request), m, static_cast<long long>(c.nodes) * c.node.gpus);
                break;
            } catch (const input_error& e) {
                if (!first_error) first_error = e;
                skipped.push_back({counts.front(), e.what()});
                counts.erase(counts.begin());
            }
        }
        if (!first) throw *first_error;  // no node count holds the plan: the first count's reason
        const plan& p = *first;
        cli::check_precision(c, p);
        const step_options o = cli::step_opts(request);
        const scaling_mode mode = request.strong ? scaling_mode::strong : scaling_mode::weak;
        const auto pts = scale_sweep(m, c, p, counts, mode, o, &skipped);
        const std::string title = std::string(m.name) + " on " + std::string(c.name) + " (" + std::string(c.node.accelerator) +
                                  "), " + (mode == scaling_mode::weak ? "weak" : "strong") + " scaling";
        if (request.svg) io::write_file_atomic(*request.svg, render_svg(pts, title), "--svg");
        if (a.flag("json")) {
            nlohmann::json rows = nlohmann::json::array();
            for (const auto& sp : pts) {
                nlohmann::json j = io::step_breakdown_to_json(sp.step);
                j["nodes"] = sp.nodes;
                j["gpus"] = sp.gpus;
                j["dp"] = sp.used.dp;
                j["global_batch"] = sp.used.global_batch;
                j["efficiency"] = sp.efficiency;
                j["speedup"] = sp.speedup;
                rows.push_back(j);
            }
            nlohmann::json skip = nlohmann::json::array();
            for (const auto& k : skipped) skip.push_back({{"nodes", k.nodes}, {"reason", k.reason}});
            cli::print_json(out, {{"model", std::string(m.name)}, {"cluster", std::string(c.name)},
                                  {"mode", mode == scaling_mode::weak ? "weak" : "strong"}, {"plan", io::plan_to_json(p, m)},
                                  {"rows", rows}, {"skipped", skip}});
            return 0;
        }
        out << title << "\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& sp : pts) {
            const auto& r = sp.step;
            rows.push_back({std::to_string(sp.nodes), std::to_string(sp.gpus), std::to_string(sp.used.dp),
                            std::to_string(sp.used.global_batch), cli::secs(r.step), cli::secs(r.compute),
                            cli::secs(r.bubble), cli::secs(r.tp.exposed), cli::secs(r.pp.exposed), cli::secs(r.dp.exposed),
                            cli::num(100 * r.mfu, 1) + "%", cli::num(r.tokens_per_s, 0), cli::num(100 * sp.efficiency, 1) + "%",
                            std::string(to_string(r.bottleneck))});  // text: the exact kind
        }
        cli::print_table(out, {"nodes", "GPUs", "dp", "batch", "step", "compute", "bubble", "TP exp", "PP exp", "DP exp",
                               "MFU", "tokens/s", "efficiency", "bottleneck"},
                         rows);
        for (const auto& k : skipped) out << "skipped " << k.nodes << " node(s): " << k.reason << "\n";
        return 0;
    })};

}  // namespace scale_command
}  // namespace
