// 4 GPUs as 1 node x 4, 2 nodes x 2, or 4 nodes x 1 on Baskerville (one HDR 200 Gb/s NIC per node,
// shared by its GPUs): the all-reduce of GPT-2 Large's bf16 gradients (1.32 GiB) with NCCL's
// default choice, forced ring and forced tree, predicted by commscale next to the times measured in
// impact-of-gpu-networking-part2 (Tables 2 and 4-5). The model must reproduce the ordering:
// 1x4 far fastest; with ring, 2x2 slower than 4x1 (two GPUs share one NIC); on 2x2 tree beats ring;
// on 1x4 ring beats tree.
#include <cstdio>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/clusters.hpp>

int main() {
    using namespace commscale;
    using namespace commscale::literals;

    // GPT-2 Large, ~700M parameters in bf16 = 1.32 GiB of gradients (the document's "1.32 GB").
    constexpr data_size gradients = 1.32_GiB;

    struct layout {
        const char* name;
        int nodes, per_node;
        double measured_default_s, measured_ring_s, measured_tree_s;  // impact-of-gpu-networking-part2
    };
    constexpr layout layouts[] = {
        {"1 node x 4 GPUs", 1, 4, 0.009, 0.009, 0.013},
        {"2 nodes x 2 GPUs", 2, 2, 0.309, 0.584, 0.309},
        {"4 nodes x 1 GPU", 4, 1, 0.158, 0.158, 0.158},
    };
    constexpr algorithm algos[] = {algorithm::automatic, algorithm::ring, algorithm::tree};
    constexpr const char* algo_label[] = {"default", "ring", "tree"};

    std::printf("All-reduce of %.2f GiB (GPT-2 Large bf16 gradients) on Baskerville: 4 x A100 per node on an\n"
                "NVLink3 mesh, ONE HDR 200 Gb/s NIC per node (impact-of-gpu-networking-part2, Appendix A).\n\n",
                in_bytes(gradients) / gibi);
    std::printf("%-18s %-25s %12s %12s %16s  %s\n", "layout", "algo", "model (s)", "measured (s)", "model busbw GB/s",
                "bottleneck");
    double model[3][3] = {};
    for (int l = 0; l < 3; ++l) {
        cluster c = presets::baskerville;
        c.nodes = layouts[l].nodes;
        const placement group{.ranks = 4, .ranks_per_node = layouts[l].per_node, .stride = 1};
        const double measured[] = {layouts[l].measured_default_s, layouts[l].measured_ring_s,
                                   layouts[l].measured_tree_s};
        for (int a = 0; a < 3; ++a) {
            const collective_result r =
                predict_collective(c, group, collective_op::all_reduce, gradients, {.algo = algos[a]});
            model[l][a] = in_seconds(r.time);
            const std::string chosen = a == 0 ? std::string(algo_label[a]) + "=" + std::string(to_string(r.algo))
                                              : std::string(algo_label[a]);
            std::printf("%-18s %-25s %12.4f %12.3f %16.1f  %s\n", layouts[l].name, chosen.c_str(), model[l][a],
                        measured[a], in_GBps(r.busbw), describe_bottleneck(r).c_str());
        }
    }
    std::printf("\nOrdering checks (measured in the document -> model):\n");
    std::printf("  1x4 fastest with the default choice:  %s\n",
                model[0][0] < model[1][0] && model[0][0] < model[2][0] ? "yes" : "NO");
    std::printf("  ring: 2x2 slower than 4x1:             %s\n", model[1][1] > model[2][1] ? "yes" : "NO");
    std::printf("  2x2: tree faster than ring:            %s\n", model[1][2] < model[1][1] ? "yes" : "NO");
    std::printf("  1x4: ring faster than tree:            %s\n", model[0][1] < model[0][2] ? "yes" : "NO");
    return 0;
}
