// Parameter server vs ring all-reduce for ResNet-50 on 256 workers (distributed-training-lecture,
// "Try #1: parameter server"): 24.4M parameters ~ 97.5 MB of fp32 gradients, 3 iterations/s per
// V100 without communication, one 400 Gb/s (50 GB/s) RDMA NIC per worker.
// The lecture: a single server must absorb 256 x 3 x 97.5 MB/s, "73.1GB/s" (that figure divides by
// 1024: 74,880 MB/s is 74.9 GB/s in decimal units), more than its 50 GB/s NIC: the server is the
// bottleneck. A ring moves 2(P-1)/P x N per worker, independent of P, over every worker's NIC.
#include <cstdio>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/links.hpp>

int main() {
    using namespace commscale;
    using namespace commscale::literals;

    constexpr data_size gradients = 97.5_MB;  // 24.4e6 parameters x 4 bytes ~ 97.6 MB
    constexpr int workers = 256;
    constexpr double iterations_per_s = 3.0;  // V100, forward + backward, no communication

    const byte_rate required = static_cast<double>(workers) * iterations_per_s * gradients / 1_s;
    std::printf("parameter server ingress needed: %d x %.0f/s x %.1f MB = %.2f GB/s (%.1f GiB/s) vs a 400 Gb/s NIC = "
                "%.0f GB/s\n\n",
                workers, iterations_per_s, in_bytes(gradients) / 1e6, in_GBps(required), required.value() / gibi,
                in_GBps(400_Gbps));

    // 256 single-GPU workers, one 400 Gb/s RDMA NIC each, non-blocking fabric.
    cluster c{};
    c.name = "256 x V100, 400 Gb/s";
    c.nodes = workers;
    c.node.gpus = 1;
    c.node.accelerator = "v100-sxm2";
    c.node.intra = nvlink<2>;
    c.node.inter = infiniband<ib_rate::ndr, 4>;
    c.node.nics = 1;
    c.nodes_per_leaf = workers;
    const placement group{.ranks = workers, .ranks_per_node = 1, .stride = 1};

    std::printf("%-18s %12s %12s %14s  %s\n", "algorithm", "ideal (ms)", "model (ms)", "max iter/s", "bottleneck");
    for (algorithm a : {algorithm::parameter_server, algorithm::ring, algorithm::automatic}) {
        const auto ideal =
            predict_collective(c, group, collective_op::all_reduce, gradients, {.algo = a, .mode = efficiency_mode::ideal});
        const auto real = predict_collective(c, group, collective_op::all_reduce, gradients, {.algo = a});
        const double t = in_seconds(real.time);
        // Communication not overlapped with the 1/3 s of compute: iterations/s = 1 / (1/3 + t).
        std::printf("%-18s %12.1f %12.1f %14.2f  %s\n", std::string(to_string(real.algo)).c_str(),
                    in_seconds(ideal.time) * 1e3, t * 1e3, 1.0 / (1.0 / iterations_per_s + t),
                    describe_bottleneck(real).c_str());
    }
    std::printf("\nA single server receives and sends 256 x 97.5 MB per iteration; at 50 GB/s each way that is "
                "%.2f s, against 0.33 s of compute.\n",
                in_seconds(static_cast<double>(workers) * gradients / 400_Gbps));
    return 0;
}
