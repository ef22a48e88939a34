// Calibrates the collective model to a measured nccl-tests sweep and shows how well the calibrated
// description reproduces it: `example_calibrate_from_log [LOG]` (default: the 8 x A100 all-reduce
// table in data/measurements/, run from the repository root). The topology is the dgx-a100 preset
// with the log's node count; `commscale fit` does the same with topology inference and JSON output.
#include <commscale/calibrate/calibrate.hpp>
#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/file.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace commscale;
    const std::string path = argc > 1 ? argv[1] : "data/measurements/dgx_a100_8gpu_allreduce_ml_engineering.log";
    try {
        const auto sets = parse_measurements(io::read_file(path), path);
        if (sets.empty()) throw input_error("LOG", path, "a log with a results table");
        const measurement_set& m = sets.front();
        cluster c = presets::dgx_a100;
        c.nodes = std::max(1, m.nodes);
        const placement g{.ranks = m.ranks, .ranks_per_node = std::min(m.ranks, c.node.gpus), .stride = 1};
        std::vector<fit_point> pts;
        for (const auto& r : m.rows)
            if (usable(r)) pts.push_back({r.bytes, r.time});
        const collective_calibration f = calibrate_collective(c, g, m.op, pts);

        const link_class_params& k = f.fitted;
        std::printf("%s, %d ranks on %d node(s), %d rows from %s\n", std::string(to_string(m.op)).c_str(), m.ranks,
                    g.nodes(), f.rows, path.c_str());
        std::printf("efficiency %.3f +- %.3f, peak busbw %.1f +- %.1f GB/s, half size %.0f KiB, exponent %.2f\n",
                    k.efficiency, f.efficiency_sigma, in_GBps(f.peak_busbw), in_GBps(f.peak_busbw_sigma),
                    in_bytes(k.half_size) / 1024.0, k.exponent);
        std::printf("step latency LL %.2f, LL128 %.2f, Simple %.2f us; LL / LL128 payload %.2f / %.2f\n",
                    in_us(k.step_latency[0]), in_us(k.step_latency[1]), in_us(k.step_latency[2]),
                    f.calibrated.comm.protocol_bandwidth[0], f.calibrated.comm.protocol_bandwidth[1]);
        std::printf("fit error: median %.1f%%, max %.1f%%, cross-validated median %s, R2 %.4f\n\n",
                    100 * f.median_rel_error, 100 * f.max_rel_error,
                    f.cv_median_rel_error ? (std::to_string(100 * *f.cv_median_rel_error).substr(0, 4) + "%").c_str() : "n/a",
                    f.r2);
        std::printf("%14s %12s %12s %8s %10s\n", "size (B)", "measured us", "predicted us", "error", "protocol");
        std::sort(pts.begin(), pts.end(), [](const fit_point& a, const fit_point& b) { return a.bytes < b.bytes; });
        for (const auto& p : pts) {
            const auto r = predict_collective(f.calibrated, f.group, f.op, p.bytes, f.model);
            std::printf("%14.0f %12.2f %12.2f %+7.1f%% %10s\n", in_bytes(p.bytes), in_us(p.time), in_us(r.time),
                        100 * (in_us(r.time) / in_us(p.time) - 1.0), std::string(to_string(r.proto)).c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    return 0;
}
