// Prints the cost of one collective prediction in nanoseconds, per algorithm and mode.
// Usage: bench_collective [iterations]   (build with optimisation: -DCMAKE_BUILD_TYPE=Release)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <time.h>

#include <commscale/collective/model.hpp>

using namespace commscale;

namespace {

commscale::link make(std::string_view name, link_family f, link_kind k, byte_rate bw, std::optional<duration> lat) {
    return commscale::link{.name = name, .family = f, .kind = k, .rdma = k == link_kind::scale_out,
                           .per_direction = bw, .lanes = 1, .links = 1, .per_lane = bw,
                           .encoding = line_encoding::none, .latency = lat, .source = "benchmark"};
}

// A DGX H100-like pod of 32 nodes: NVLink 4 on NVSwitch with NVLS, 8 x 400 Gbps NICs per node.
cluster pod() {
    cluster c;
    c.name = "bench-pod";
    c.nodes = 32;
    c.node.gpus = 8;
    c.node.intra = make("nvlink4", link_family::nvlink, link_kind::scale_up, 450.0_GBps, std::nullopt);
    c.node.fabric = intra_fabric::switched;
    c.node.in_switch_reduction = true;
    c.node.inter = make("ib-ndr-4x", link_family::infiniband, link_kind::scale_out, 400.0_Gbps, std::nullopt);
    c.node.nics = 8;
    c.nodes_per_leaf = 16;
    c.oversubscription = 2.0;
    return c;
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double run(const cluster& c, const placement& g, collective_op op, collective_options opt, long iterations) {
    double sink = 0;
    // Thread CPU time, not wall time: on a shared machine the wait for a core is not our cost.
    const double start = cpu_seconds();
    for (long i = 0; i < iterations; ++i) {
        // Vary the size so that nothing is hoisted out of the loop: 1 KiB .. 1 GiB.
        const data_size s = bytes(static_cast<double>(1024L << (i % 21)));
        sink += predict_collective(c, g, op, s, opt).time.value();
    }
    const double stop = cpu_seconds();
    if (sink < 0) std::puts("");  // keep the result observable
    return (stop - start) * 1e9 / static_cast<double>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
    const long iterations = argc > 1 ? std::atol(argv[1]) : 400'000;
    if (iterations <= 0) {
        std::fprintf(stderr, "iterations: expected a positive integer, got %s\n", argv[1]);
        return 2;
    }
    const cluster c = pod();
    const placement g{256, 8, 1};
    std::printf("ns per predict_collective (all_reduce, 256 ranks on 32 nodes, best of 5 x %ld calls)\n", iterations);
    for (const auto mode : {efficiency_mode::ideal, efficiency_mode::realistic}) {
        for (int a = 0; a < algorithm_count; ++a) {
            const auto algo = static_cast<algorithm>(a);
            if (!algorithm_applies(c, g, collective_op::all_reduce, algo)) continue;
            // Best of five runs: the machine may be shared, the minimum is the cost of the code.
            double ns = run(c, g, collective_op::all_reduce, {algo, mode}, iterations);
            for (int rep = 1; rep < 5; ++rep) ns = std::min(ns, run(c, g, collective_op::all_reduce, {algo, mode}, iterations));
            std::printf("  %-10s %-26s %8.1f ns\n", mode == efficiency_mode::ideal ? "ideal" : "realistic",
                        algorithm_name(algo).data(), ns);
        }
    }
    return 0;
}
