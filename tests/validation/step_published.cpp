// Predicted per-GPU throughput against published end-to-end training runs on DGX A100 clusters
// (8 x A100 80GB, NVLink3, 8 x HDR 200 Gb/s InfiniBand per node: NVIDIA Selene, the machine of
// all runs below), with the library's default compute efficiency and the collective model in
// realistic mode. Nothing here is fitted to one run: the same defaults serve every row.
//
// Sources (GPT shape: ffn = 4h, vocabulary 51200, sequence 2048, micro-batch 1, 1F1B schedule
// unless stated):
// * Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
//   Megatron-LM" (SC'21), Table 1 (weak scaling, full activation recompute; the TFLOP/s count
//   the recompute, i.e. hardware FLOPs 96 B s l h^2 (1 + s/6h + V/16lh)), and Sec. 5.1's
//   GPT-3 175B estimate (1024 GPUs, batch 1536, 140 TFLOP/s per GPU).
// * Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
//   Table 5: selective recompute + sequence parallelism, HFU 43.7% (22B), 52.8% (175B), 57.0%
//   (530B), 57.0% (1T) of 312 TFLOPS; data parallelism 1, global batch = GPUs.
// * Smith et al. 2022, "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B", Sec. 2.4:
//   126 TFLOP/s per GPU on 2240 A100 (t = 8, p = 35, batch 1920), DeepSpeed's pipeline engine.
//
// Achieved errors (hardware TFLOP/s per GPU, predicted vs published), recorded when written,
// with the shape-aware compute model (predict/compute.hpp) and the stack profiles
// (megatron-lm for the Megatron-LM runs, megatron-deepspeed for MT-NLG):
//   N21 18.4B -11.8%, 39.1B +0.1%, 76.1B +8.0%, 145.6B +6.1%, 310B +8.8%, 530B +9.7%, 1T +12.8%,
//   GPT-3 1024 GPUs +12.6%; K22 22B -4.9%, 175B +0.9%, 530B +4.8%, 1T +6.2%; MT-NLG +39.7%.
// With the compute constants fitted to the calibration set (issue 24; predict/compute.hpp
// fitted_compute_constants: GEMMs at 0.84 of the MAMF figure, per-kernel overhead), which hold
// none of these runs:
//   N21 18.4B -22.6%, 39.1B -12.6%, 76.1B -5.9%, 145.6B -8.3%, 310B -6.3%, 530B -6.0%, 1T -3.6%,
//   GPT-3 1024 GPUs -2.6%; K22 22B -17.6%, 175B -13.3%, 530B -10.5%, 1T -9.4%; MT-NLG +19.8%.
// Mean absolute error over the 12 Megatron-LM runs: 9.9%. With the unfused attention's softmax
// and dropout at the bytes their kernels move (11 per score backward, not twice the forward's 9):
//   N21 18.4B -21.6%, 39.1B -11.6%, 76.1B -4.9%, 145.6B -7.4%, 310B -5.6%, 530B -5.4%, 1T -3.1%,
//   GPT-3 1024 GPUs -1.7%; K22 22B -15.6%, 175B -12.1%, 530B -9.7%, 1T -8.8%; MT-NLG +20.5%;
// mean absolute error 9.0%. The model is now slow on them rather
// than fast, most at the smallest widths under TP 8 (h 6144: every GEMM is 1/8 of it wide and
// the TP all-reduces, not overlapped in 2021's Megatron-LM, are 22% of the predicted step):
// 18.4B and 22B carry a 25% tolerance for that reason, the mean 12%.
// MT-NLG is the same 530B shape that Megatron-LM alone ran at 163 TFLOP/s on 2520 GPUs
// (Narayanan Table 1): the 126 vs 163 gap is DeepSpeed's pipeline engine, whose scheduling
// overheads the model does not describe; it is kept with a wide tolerance as an honest outlier.
#include "catch_shim.hpp"

#include <cmath>

#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>

using namespace commscale;

namespace {

struct published_run {
    const char* name;
    int layers, hidden, heads;
    int tp, pp, gpus, global_batch;
    double tflops;  // published, per GPU, counting recompute
    recompute rec;
    bool sequence_parallel;
    double tolerance;
    framework stack = framework::megatron_lm;
};

// clang-format off
constexpr published_run runs[] = {
    {"Narayanan 2021 T1 18.4B",   40,  6144,  48, 8,  1,  256, 1024, 135.0, recompute::full, false, 0.25},
    {"Narayanan 2021 T1 39.1B",   48,  8192,  64, 8,  2,  512, 1536, 138.0, recompute::full, false, 0.15},
    {"Narayanan 2021 T1 76.1B",   60, 10240,  80, 8,  4, 1024, 1792, 140.0, recompute::full, false, 0.15},
    {"Narayanan 2021 T1 145.6B",  80, 12288,  96, 8,  8, 1536, 2304, 148.0, recompute::full, false, 0.15},
    {"Narayanan 2021 T1 310.1B",  96, 16384, 128, 8, 16, 1920, 2160, 155.0, recompute::full, false, 0.15},
    {"Narayanan 2021 T1 529.6B", 105, 20480, 128, 8, 35, 2520, 2520, 163.0, recompute::full, false, 0.15},
    {"Narayanan 2021 T1 1008B",  128, 25600, 160, 8, 64, 3072, 3072, 163.0, recompute::full, false, 0.15},
    {"Narayanan 2021 GPT-3 175B",  96, 12288,  96, 8,  8, 1024, 1536, 140.0, recompute::full, false, 0.15},
    {"Korthikanti 2022 T5 22B",    48,  6144,  64, 8,  1,    8,    4, 0.437 * 312, recompute::selective, true, 0.25},
    {"Korthikanti 2022 T5 175B",   96, 12288,  96, 8,  8,   64,   64, 0.528 * 312, recompute::selective, true, 0.15},
    {"Korthikanti 2022 T5 530B",  105, 20480, 128, 8, 35,  280,  280, 0.570 * 312, recompute::selective, true, 0.15},
    {"Korthikanti 2022 T5 1T",    128, 25600, 160, 8, 64,  512,  512, 0.570 * 312, recompute::selective, true, 0.15},
    {"Smith 2022 MT-NLG 530B",    105, 20480, 128, 8, 35, 2240, 1920, 126.0, recompute::full, false, 0.45, framework::megatron_deepspeed},
};
// clang-format on

}  // namespace

TEST_CASE("per-GPU TFLOP/s of published Megatron-LM runs within tolerance, default efficiency") {
    double sum_abs = 0;
    int megatron = 0;
    for (const auto& r : runs) {
        const transformer m{.name = r.name, .layers = r.layers, .hidden = r.hidden, .heads = r.heads,
                            .kv_heads = r.heads, .ffn = 4 * r.hidden, .vocab = 51200, .max_seq = 2048,
                            .source = r.name};
        cluster c = presets::dgx_a100;
        c.nodes = r.gpus / 8;
        plan p{.tp = r.tp, .pp = r.pp, .dp = r.gpus / (r.tp * r.pp), .micro_batch = 1,
               .global_batch = r.global_batch, .seq = 2048};
        apply_framework(p, r.stack);
        p.recompute_mode = r.rec;
        p.sequence_parallel = r.sequence_parallel;
        const auto s = predict_step(m, c, p);
        const double predicted = in_tflops(s.hardware_flops_per_gpu);
        const double err = predicted / r.tflops - 1.0;
        INFO(r.name << ": predicted " << predicted << " TFLOP/s, published " << r.tflops << " (" << 100 * err << "%)");
        CHECK(std::fabs(err) <= r.tolerance);
        CHECK(s.fits_in_memory);  // these runs trained: the memory model must agree
        if (r.stack == framework::megatron_lm) {
            sum_abs += std::fabs(err);
            ++megatron;
        }
    }
    const double mean = sum_abs / megatron;
    INFO("mean absolute error over Megatron-LM runs: " << 100 * mean << "%");
    CHECK(mean <= 0.12);
}

TEST_CASE("published runs: the model's MFU/HFU relation and verdicts are consistent") {
    // Korthikanti et al. 2022 Table 5: selective recompute costs a few percent of extra FLOPs
    // (HFU/MFU 52.8/51.4 = 1.027 for 175B); the workload model counts only the attention core's
    // matmuls (4 b s^2 h per layer, +0.9% at s = 2048, h = 12288), so the ratio lies in (1, 1.03].
    const transformer m{.name = "gpt-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96,
                        .ffn = 4 * 12288, .vocab = 51200, .max_seq = 2048, .source = "Korthikanti 2022"};
    cluster c = presets::dgx_a100;
    c.nodes = 8;
    plan p{.tp = 8, .pp = 8, .dp = 1, .micro_batch = 1, .global_batch = 64, .seq = 2048};
    p.recompute_mode = recompute::selective;
    p.sequence_parallel = true;
    const auto s = predict_step(m, c, p);
    CHECK(s.hfu / s.mfu > 1.0);
    CHECK(s.hfu / s.mfu <= 52.8 / 51.4);
    // full recompute: ~ 4/3 (96 vs 72 B s l h^2, Narayanan eq. 3)
    p.recompute_mode = recompute::full;
    p.sequence_parallel = false;
    const auto f = predict_step(m, c, p);
    CHECK(f.hfu / f.mfu == Approx(4.0 / 3.0).epsilon(0.02));
    CHECK(f.bottleneck == step_bottleneck::compute);
}
