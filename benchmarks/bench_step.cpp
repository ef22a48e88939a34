// Step predictions per second on one core (Google Benchmark): predict_step (collective model,
// realistic mode) over a rotating set of plans for GPT-3 175B on 128 DGX A100 nodes, and the same
// plans through the step model alone (collectives priced by a constant); and an MoE model
// (DeepSeek-V3 on 256 GB200 NVL72 GPUs, the calibration set's published layouts with EP all-to-alls
// and expert-TP 1) with every collective priced.
// Target: at most 600 ns per prediction with every collective priced (dense); docs/model.md
// records the measured figures.
// Usage: bench_step [--benchmark_repetitions=5 ...]   (run from a Release build)
#include <benchmark/benchmark.h>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

namespace {
using namespace commscale;

struct setup {
    transformer m = model_by_name("gpt3-175b");
    cluster c = [] {
        cluster x = cluster_by_name("dgx-a100");
        x.nodes = 128;
        return x;
    }();
    accelerator acc = accelerator_by_name(c.node.accelerator);
    plan plans[4];
    setup() {
        plans[0] = plan{.tp = 8, .pp = 8, .dp = 16, .micro_batch = 1, .global_batch = 1536};
        plans[1] = plan{.tp = 8, .pp = 16, .dp = 8, .micro_batch = 1, .global_batch = 1536};
        plans[2] = plan{.tp = 4, .pp = 16, .dp = 16, .micro_batch = 2, .global_batch = 1536, .zero = 1};
        plans[3] = plans[0];
        plans[3].schedule = pipeline_schedule::interleaved;
        plans[3].virtual_stages = 3;
        for (auto& p : plans) p.recompute_mode = recompute::full;
    }
};

void predict_step_every_collective_priced(benchmark::State& state) {
    const setup s;
    unsigned i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(predict_step(s.m, s.c, s.acc, s.plans[i++ & 3u]).step);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(predict_step_every_collective_priced);

void step_model_alone_constant_pricer(benchmark::State& state) {
    const setup s;
    auto constant = [](const placement&, collective_op, data_size) { return seconds(1e-4); };
    unsigned i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(predict_step_with(s.m, s.c, s.acc, s.plans[i++ & 3u], constant).step);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(step_model_alone_constant_pricer);

struct moe_setup {
    transformer m = model_by_name("deepseek-v3");
    cluster c = [] {
        cluster x = cluster_by_name("gb200-nvl72");
        x.nodes = 256 / x.node.gpus;
        return x;
    }();
    accelerator acc = accelerator_by_name(c.node.accelerator);
    plan plans[4];
    moe_setup() {
        plans[0] = plan{.tp = 1, .pp = 4, .dp = 64, .ep = 64, .micro_batch = 1, .global_batch = 4096, .seq = 4096};
        plans[0].etp = 1;
        plans[0].schedule = pipeline_schedule::interleaved;
        plans[0].virtual_stages = 4;
        plans[1] = plans[0];
        plans[1].ep = 32;
        plans[2] = plan{.tp = 2, .pp = 2, .dp = 64, .ep = 64, .micro_batch = 1, .global_batch = 4096, .seq = 4096};
        plans[2].etp = 1;
        plans[2].schedule = pipeline_schedule::dualpipe;
        plans[3] = plans[0];
        plans[3].precision = dtype::mxfp8;
    }
};

void predict_step_moe_every_collective_priced(benchmark::State& state) {
    const moe_setup s;
    unsigned i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(predict_step(s.m, s.c, s.acc, s.plans[i++ & 3u]).step);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(predict_step_moe_every_collective_priced);

}  // namespace

BENCHMARK_MAIN();
