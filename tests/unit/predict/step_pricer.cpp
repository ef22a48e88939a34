// predict_step prices its collectives through detail::based_collective_pricer (the cluster's
// rate_base computed once per prediction): every figure of the breakdown is the one the plain
// collective pricer gives, to the bit, on a node cluster and on an NVL72 rack (comm_view), its
// reuse of a reduce-scatter's time for the all-gather of the same bytes included.
#include "catch_shim.hpp"

#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

TEST_CASE("predict_step: the once-per-prediction rate base prices as the collective model does, to the bit") {
    struct setup {
        const char* model;
        const char* cluster;
        int nodes;
        plan p;
    };
    plan dense{.tp = 8, .pp = 4, .dp = 8, .micro_batch = 1, .global_batch = 512, .seq = 4096};
    dense.sequence_parallel = true;
    plan moe{.tp = 1, .pp = 4, .dp = 64, .ep = 64, .micro_batch = 1, .global_batch = 4096, .seq = 4096};
    moe.etp = 1;
    plan zero3{.tp = 1, .pp = 1, .dp = 64, .micro_batch = 2, .global_batch = 512, .seq = 2048, .zero = 3};
    const setup cases[] = {{"llama3-70b", "dgx-h100", 32, dense}, {"deepseek-v3", "gb200-nvl72", 4, moe},
                           {"llama3-8b", "dgx-a100", 8, zero3}};
    for (const auto& k : cases) {
        const transformer m = model_by_name(k.model);
        cluster c = cluster_by_name(k.cluster);
        c.nodes = k.cluster == std::string_view("gb200-nvl72") ? 256 / c.node.gpus : k.nodes;
        const accelerator acc = accelerator_by_name(c.node.accelerator);
        const cluster view = comm_view(c);
        const step_breakdown fast = predict_step(m, c, acc, k.p);
        const step_breakdown plain = predict_step_with(m, c, acc, k.p, collective_pricer{&view, {}});
        INFO(k.model << " on " << k.cluster);
        CHECK(in_seconds(fast.step) == in_seconds(plain.step));
        CHECK(in_seconds(fast.tp.total) == in_seconds(plain.tp.total));
        CHECK(in_seconds(fast.dp.total) == in_seconds(plain.dp.total));
        // the DP stream's all-gathers reuse its reduce-scatters' times (cost_twin)
        CHECK(in_seconds(fast.dp.exposed) == in_seconds(plain.dp.exposed));
        CHECK(in_seconds(fast.ep.total) == in_seconds(plain.ep.total));
        CHECK(in_seconds(fast.pp.total) == in_seconds(plain.pp.total));
        // the communication is priced (not a test of zeros)
        CHECK(in_seconds(fast.dp.total + fast.tp.total + fast.ep.total) > 0.0);
    }
}
