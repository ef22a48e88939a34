// Step predictions per second on one core: predict_step (collective model, realistic mode) over a
// rotating set of plans for GPT-3 175B on DGX A100 clusters. Prints predictions/s and ns each,
// and the same for the step model alone (collectives priced by a constant).
// Target: >= 1,000,000 predictions/s per core (under 1 us each).
#include <chrono>
#include <cstdio>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

int main(int argc, char** argv) {
    using namespace commscale;
    const long iterations = argc > 1 ? std::atol(argv[1]) : 200000;
    const transformer m = model_by_name("gpt3-175b");
    cluster c = cluster_by_name("dgx-a100");
    c.nodes = 128;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan plans[4];
    plans[0] = plan{.tp = 8, .pp = 8, .dp = 16, .micro_batch = 1, .global_batch = 1536};
    plans[1] = plan{.tp = 8, .pp = 16, .dp = 8, .micro_batch = 1, .global_batch = 1536};
    plans[2] = plan{.tp = 4, .pp = 16, .dp = 16, .micro_batch = 2, .global_batch = 1536, .zero = 1};
    plans[3] = plans[0];
    plans[3].schedule = pipeline_schedule::interleaved;
    plans[3].virtual_stages = 3;
    for (auto& p : plans) p.recompute_mode = recompute::full;
    double sink = 0;
    for (int i = 0; i < 1000; ++i) sink += in_seconds(predict_step(m, c, acc, plans[i & 3]).step);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) sink += in_seconds(predict_step(m, c, acc, plans[i & 3]).step);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("predict_step: %ld predictions in %.3f s: %.0f predictions/s per core, %.1f ns each (checksum %.3f)\n",
                iterations, s, static_cast<double>(iterations) / s, s / static_cast<double>(iterations) * 1e9, sink);
    // the step model alone, collectives priced by a constant (what the predictor adds on top of
    // the collective model's own cost)
    auto constant = [](const placement&, collective_op, data_size) { return seconds(1e-4); };
    const auto t1 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) sink += in_seconds(predict_step_with(m, c, acc, plans[i & 3], constant).step);
    const double s1 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    std::printf("step model alone (constant pricer): %.0f predictions/s per core, %.1f ns each (checksum %.3f)\n",
                static_cast<double>(iterations) / s1, s1 / static_cast<double>(iterations) * 1e9, sink);
    return 0;
}
