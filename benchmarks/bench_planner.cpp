// Planner speed: full plan evaluations per second per core, multi-core scaling, and the two
// target searches of the planner issue: GPT-3 175B on 1,024 A100 (128 DGX A100 nodes, global
// batch 1536 as in Brown et al. 2020 Table 2.1), the complete space, target < 1 s; MT-NLG 530B
// on 5,128 A100 (641 DGX A100 nodes) with global batches up to 2,520, target < 100 ms.
// Usage: bench_planner [max_threads]   (run from a Release build)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

namespace {
using namespace commscale;

search_result run(const transformer& m, const cluster& c, const accelerator& acc, int batch, int threads) {
    search_request r;
    r.global_batch = batch;
    r.seq = 2048;
    r.threads = threads;
    return search_plans(m, c, acc, r);
}

void report(const char* what, const search_result& res) {
    std::printf("%-48s %9lld shapes %10lld evaluated %9lld feasible  %8.3f s  %6.2f M plans/s",
                what, res.candidates, res.evaluated, res.feasible, res.search_s,
                static_cast<double>(res.evaluated) / res.search_s / 1e6);
    if (!res.top.empty()) {
        const auto& p = res.top.front().p;
        std::printf("  best tp%d pp%d dp%d cp%d b%d z%d %s %s V%d%s %.3f s", p.tp, p.pp, p.dp, p.cp, p.micro_batch, p.zero,
                    std::string(recompute_name(p.recompute_mode)).c_str(), std::string(schedule_name(p.schedule)).c_str(),
                    p.chunks(), p.sequence_parallel ? " sp" : "", in_seconds(res.top.front().r.step));
    }
    std::printf("\n");
}
}  // namespace

int main(int argc, char** argv) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int max_threads = argc > 1 ? std::atoi(argv[1]) : hw;
    const transformer gpt3 = model_by_name("gpt3-175b");
    const transformer mtnlg = model_by_name("mt-nlg-530b");
    cluster c = cluster_by_name("dgx-a100");
    const accelerator acc = accelerator_by_name(c.node.accelerator);

    c.nodes = 128;
    std::printf("GPT-3 175B, 1,024 A100 (128 x dgx-a100), global batch 1536, seq 2048\n");
    double one = 0;
    for (int t = 1; t <= max_threads; t *= 2) {
        const auto res = run(gpt3, c, acc, 1536, t);
        const double rate = static_cast<double>(res.evaluated) / res.search_s;
        if (t == 1) one = rate;
        char label[64];
        std::snprintf(label, sizeof label, "  %d thread(s): scaling x%.2f", t, rate / one);
        report(label, res);
        if (t * 2 > max_threads && t != max_threads) {
            const auto last = run(gpt3, c, acc, 1536, max_threads);
            std::snprintf(label, sizeof label, "  %d thread(s): scaling x%.2f", max_threads,
                          static_cast<double>(last.evaluated) / last.search_s / one);
            report(label, last);
        }
    }
    std::printf("  per core: %.2f M full plan evaluations/s (target >= 1 M)\n", one / 1e6);

    c.nodes = 641;
    std::printf("MT-NLG 530B, 5,128 A100 (641 x dgx-a100), seq 2048, %d threads\n", max_threads);
    // 5,128 = 2^3 x 641 and the 105 layers share no factor with it: pp = 1, and dp must be a
    // multiple of 641 that divides the batch. Every batch <= 2,520 is searched (one search each).
    double total = 0;
    long long evaluated = 0, with_plans = 0, valid_batches = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int b = 1; b <= 2520; ++b) {
        const auto res = run(mtnlg, c, acc, b, max_threads);
        total += res.search_s;
        evaluated += res.evaluated;
        if (res.candidates > 0) ++valid_batches;
        if (!res.top.empty()) {
            ++with_plans;
            char label[64];
            std::snprintf(label, sizeof label, "  global batch %d", b);
            report(label, res);
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  batches 1..2520: %lld with a valid shape, %lld with a plan that fits; %lld evaluations; "
                "search time %.4f s in all (wall %.4f s; target < 0.1 s)\n",
                valid_batches, with_plans, evaluated, total, wall);
    const auto b2520 = run(mtnlg, c, acc, 2520, max_threads);
    report("  global batch 2520", b2520);
    return 0;
}
