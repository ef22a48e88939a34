// The README's example: "will GPT-3 175B train well on 64 DGX A100 nodes, and what if the
// network were twice as fast?" Every number comes from the library's catalogs and models.
#include <commscale/commscale.hpp>

#include <cstdio>

int main() {
    using namespace commscale;
    const transformer model = model_by_name("gpt3-175b");
    cluster pod = presets::dgx_a100;   // 8 x A100-80GB, NVSwitch, 8 x HDR 200 Gb/s per node
    pod.nodes = 64;                    // 512 GPUs

    // The data-parallel gradient all-reduce, alone: 8 ranks (one per node), 2.7 GB each.
    const collective_result ar =
        predict_collective(pod, placement{.ranks = 64, .ranks_per_node = 1, .stride = 8},
                           collective_op::all_reduce, 2.7_GB);
    std::printf("DP all-reduce: %s, busbw %s (%s)\n", to_string(ar.time).c_str(),
                to_string(ar.busbw).c_str(), describe_bottleneck(ar).c_str());

    const plan p{.tp = 8, .pp = 8, .dp = 8, .micro_batch = 1, .global_batch = 1536, .seq = 2048,
                 .recompute_mode = recompute::full, .schedule = pipeline_schedule::interleaved,
                 .virtual_stages = 2, .sequence_parallel = true};
    for (const double nic_gbps : {200.0, 400.0}) {
        cluster c = pod;
        c.node.inter.per_direction = bytes_per_second(nic_gbps * 1e9 / 8.0);
        const step_breakdown s = predict_step(model, c, p);
        std::printf("%3.0f Gbps NICs: step %s, MFU %.1f%%, %.0f TFLOP/s per GPU, %s-bound, %.1f GiB/GPU\n",
                    nic_gbps, to_string(s.step).c_str(), 100 * s.mfu, in_tflops(s.model_flops_per_gpu),
                    std::string(to_string(s.bottleneck)).c_str(), in_bytes(s.memory.total()) / gibi);
    }
}
