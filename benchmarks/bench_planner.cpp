// Planner speed (Google Benchmark): full plan evaluations per second and multi-core scaling, and
// the two target searches of the planner: GPT-3 175B on 1,024 A100 (128 DGX A100 nodes, global
// batch 1536 as in Brown et al. 2020 Table 2.1), the complete space, target < 1 s; MT-NLG 530B
// on 5,128 A100 (641 DGX A100 nodes) with every global batch up to 2,520, target < 100 ms of
// search time in all. Counters: evaluated (plans), plans_per_s (full evaluations per second),
// search_s (the searches' own time); the label names the best plan found.
// Usage: bench_planner [--benchmark_filter=...]   (run from a Release build)
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>

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

std::string best_plan(const search_result& res) {
    if (res.top.empty()) return "no plan";
    const auto& p = res.top.front().p;
    char text[160];
    std::snprintf(text, sizeof text, "best tp%d pp%d dp%d cp%d b%d z%d %s %s V%d%s %.3f s", p.tp, p.pp, p.dp, p.cp,
                  p.micro_batch, p.zero, std::string(to_string(p.recompute_mode)).c_str(),
                  std::string(to_string(p.schedule)).c_str(), p.chunks(), p.sequence_parallel ? " sp" : "",
                  in_seconds(res.top.front().r.step));
    return text;
}

// GPT-3 175B on 128 x dgx-a100, the whole space; state.range(0) threads
void search_gpt3_1024_a100(benchmark::State& state) {
    const transformer m = model_by_name("gpt3-175b");
    cluster c = cluster_by_name("dgx-a100");
    c.nodes = 128;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    const int threads = static_cast<int>(state.range(0));
    search_result res;
    double search_s = 0, evaluated = 0;
    for (auto _ : state) {
        res = run(m, c, acc, 1536, threads);
        search_s += res.search_s;
        evaluated += static_cast<double>(res.evaluated);
    }
    state.counters["evaluated"] = static_cast<double>(res.evaluated);
    state.counters["plans_per_s"] = evaluated / search_s;
    state.counters["search_s"] = search_s / static_cast<double>(state.iterations());
    state.SetLabel(best_plan(res));
}

void thread_counts(benchmark::internal::Benchmark* b) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int t = 1; t <= hw; t *= 2) b->Arg(t);
    if ((hw & (hw - 1)) != 0) b->Arg(hw);
}
BENCHMARK(search_gpt3_1024_a100)->Apply(thread_counts)->Unit(benchmark::kMillisecond)->UseRealTime();

// MT-NLG 530B on 641 x dgx-a100: 5,128 = 2^3 x 641 and the 105 layers share no factor with it,
// so pp = 1 and dp must be a multiple of 641 that divides the batch. Every batch 1..2,520 is
// searched (one search each) on all cores.
void search_mtnlg_5128_a100_every_batch(benchmark::State& state) {
    const transformer m = model_by_name("mt-nlg-530b");
    cluster c = cluster_by_name("dgx-a100");
    c.nodes = 641;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    double search_s = 0, evaluated = 0, valid = 0, with_plans = 0;
    search_result last;
    for (auto _ : state) {
        search_s = evaluated = valid = with_plans = 0;
        for (int b = 1; b <= 2520; ++b) {
            const auto res = run(m, c, acc, b, threads);
            search_s += res.search_s;
            evaluated += static_cast<double>(res.evaluated);
            if (res.candidates > 0) ++valid;
            if (!res.top.empty()) ++with_plans;
            if (b == 2520) last = res;
        }
    }
    state.counters["batches_with_shape"] = valid;
    state.counters["batches_with_plan"] = with_plans;
    state.counters["evaluated"] = evaluated;
    state.counters["search_s"] = search_s;
    state.SetLabel("batch 2520: " + best_plan(last));
}
BENCHMARK(search_mtnlg_5128_a100_every_batch)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
