// The cost of one collective prediction (Google Benchmark), per algorithm and mode: all_reduce
// of 256 ranks on 32 nodes of a DGX H100-like pod, the buffer cycling over 1 KiB .. 1 GiB so that
// nothing is hoisted out of the loop.
// Usage: bench_collective [--benchmark_repetitions=5 ...]   (run from a Release build)
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>

#include <commscale/collective/model.hpp>

namespace {
using namespace commscale;

commscale::link make(std::string_view name, link_family f, link_kind k, byte_rate bw) {
    return commscale::link{.name = name, .family = f, .kind = k, .rdma = k == link_kind::scale_out,
                           .per_direction = bw, .lanes = 1, .links = 1, .per_lane = bw,
                           .encoding = line_encoding::none, .latency = std::nullopt, .source = "benchmark"};
}

// A DGX H100-like pod of 32 nodes: NVLink 4 on NVSwitch with NVLS, 8 x 400 Gbps NICs per node.
cluster pod() {
    cluster c;
    c.name = "bench-pod";
    c.nodes = 32;
    c.node.gpus = 8;
    c.node.intra = make("nvlink4", link_family::nvlink, link_kind::scale_up, 450.0_GBps);
    c.node.fabric = intra_fabric::switched;
    c.node.in_switch_reduction = true;
    c.node.inter = make("ib-ndr-4x", link_family::infiniband, link_kind::scale_out, 400.0_Gbps);
    c.node.nics = 8;
    c.nodes_per_leaf = 16;
    c.oversubscription = 2.0;
    return c;
}

// state.range(0): the algorithm, state.range(1): the efficiency mode
void predict_collective_all_reduce(benchmark::State& state) {
    const cluster c = pod();
    const placement g{256, 8, 1};
    const auto algo = static_cast<algorithm>(state.range(0));
    const auto mode = static_cast<efficiency_mode>(state.range(1));
    if (!algorithm_applies(c, g, collective_op::all_reduce, algo)) {
        state.SkipWithError("algorithm does not apply");
        return;
    }
    state.SetLabel(std::string(mode == efficiency_mode::ideal ? "ideal " : "realistic ") +
                   std::string(to_string(algo)));
    const collective_options opt{algo, mode};
    long i = 0;
    for (auto _ : state) {
        const data_size s = bytes(static_cast<double>(1024L << (i++ % 21)));
        benchmark::DoNotOptimize(predict_collective(c, g, collective_op::all_reduce, s, opt).time);
    }
    state.SetItemsProcessed(state.iterations());
}

void algorithms(benchmark::internal::Benchmark* b) {
    const cluster c = pod();
    const placement g{256, 8, 1};
    for (const auto mode : {efficiency_mode::ideal, efficiency_mode::realistic})
        for (int a = 0; a < algorithm_count; ++a)
            if (algorithm_applies(c, g, collective_op::all_reduce, static_cast<algorithm>(a)))
                b->Args({a, static_cast<long>(mode)});
}
BENCHMARK(predict_collective_all_reduce)->Apply(algorithms);

}  // namespace

BENCHMARK_MAIN();
