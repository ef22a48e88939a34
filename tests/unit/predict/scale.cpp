// Scaling sweeps (predict/scale.hpp): "will it scale to N GPUs?" (will-it-scale-to-n-gpus).
#include "catch_shim.hpp"

#include <vector>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/scale.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using namespace commscale::literals;

namespace {
auto free_network = [](const cluster&) {
    return [](const placement&, collective_op, data_size) { return seconds(0.0); };
};
}

TEST_CASE("with a free network, weak scaling is perfect and strong scaling divides the step") {
    const transformer m = model_by_name("llama2-7b");
    const cluster c = cluster_by_name("dgx-a100");  // 1 node
    const accelerator a = accelerator_by_name("a100-80gb-sxm");
    // ZeRO 0: the optimizer step does not shrink with more replicas (with ZeRO-1 it would, and
    // weak scaling would be slightly super-linear)
    const plan base{.tp = 1, .dp = 8, .micro_batch = 1, .global_batch = 64, .seq = 4096, .zero = 0};
    const std::vector<int> nodes{1, 2, 4, 8};
    const auto weak = scale_sweep_with(m, c, a, base, nodes, free_network, scaling_mode::weak);
    REQUIRE(weak.size() == 4);
    for (const auto& p : weak) {
        CHECK(p.efficiency == Approx(1.0).epsilon(1e-12));
        CHECK(p.used.global_batch == 8 * p.nodes * 8);
        CHECK(p.speedup == Approx(static_cast<double>(p.nodes)).epsilon(1e-12));
    }
    const auto strong = scale_sweep_with(m, c, a, base, nodes, free_network, scaling_mode::strong);
    // everything but the (unsharded, per-replica) optimizer step divides by the GPU count
    auto spread = [](const scale_point& x) { return in_seconds(x.step.step - x.step.optimizer); };
    CHECK(spread(strong[3]) == Approx(spread(strong[0]) / 8.0).epsilon(1e-9));
}

TEST_CASE("DDP across nodes on a thin network loses efficiency, a thick one keeps it") {
    // will-it-scale-to-n-gpus: with low inter-node bandwidth "multi-node training can end up
    // being slower than a single node". Plain DDP of a 1.3B-class model (gpt2-large 774M here).
    const transformer m = model_by_name("gpt2-large");
    cluster thin = cluster_by_name("dgx-a100");
    thin.node.inter.per_direction = 10_Gbps;
    thin.node.nics = 1;
    const plan base{.dp = 8, .micro_batch = 4, .global_batch = 32, .seq = 1024};
    const std::vector<int> nodes{1, 2, 4};
    const auto slow = scale_sweep(m, thin, base, nodes);
    CHECK(slow[0].efficiency == Approx(1.0));
    CHECK(slow[1].efficiency < 0.5);
    CHECK(slow[2].efficiency <= slow[1].efficiency);
    CHECK(slow[1].step.bottleneck == step_bottleneck::dp_comm);
    const auto fast = scale_sweep(m, cluster_by_name("dgx-a100"), base, nodes);
    CHECK(fast[2].efficiency > slow[2].efficiency);
    CHECK(fast[2].efficiency > 0.7);
}

TEST_CASE("scale sweep input errors name the field") {
    const transformer m = model_by_name("llama2-7b");
    const cluster c = cluster_by_name("dgx-a100");
    const plan base{.tp = 8, .dp = 1, .micro_batch = 1, .global_batch = 8};
    const std::vector<int> empty;
    CHECK_THROWS_WITH(scale_sweep(m, c, base, empty), Catch::Matchers::Contains("nodes"));
    const std::vector<int> zero{0};
    CHECK_THROWS_WITH(scale_sweep(m, c, base, zero), Catch::Matchers::Contains("nodes"));
}
