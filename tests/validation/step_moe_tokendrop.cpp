// The MoE step model with token dropping against Megatron-Bridge's 25.09 performance table: NVIDIA-
// NeMo/Megatron-Bridge docs/performance-summary.md at tag v0.2.0 (section "25.09 NeMo Container",
// also in the later docs/performance-summary-archive.md), DGX-GB200, DGX-B200 and DGX-H100, FP8
// (the first value of each cell; the parenthesised one is another quantization granularity),
// sequence 4,096. A test, never fitting data: the calibration set (data/calibration) holds the
// 25.11 release, whose MoE runs are dropless.
//
// "tokendrop" runs Megatron-Bridge's apply_moe_token_drop (src/megatron/bridge/training/utils/
// moe_token_drop.py): capacity factor 1.0 with moe_pad_expert_input_to_capacity, Megatron-Core's
// drop_and_pad, whose shapes are static and whose dispatcher does not synchronize with the host
// (token_dispatcher.py: `if not self.drop_and_pad` around the device-to-host copy). The model then
// charges the forward's expert kernels at compute_constants::kernel_overhead_s instead of
// launching them one by one after the synchronization (detail::set_kernel_overheads). The
// table does not state the dispatcher (the capacity factor needs `alltoall`), recompute or CUDA
// graphs: none are assumed.
//
// Recorded (predicted / measured - 1), with the tokens dispatched in 16 bits as Megatron-Core
// sends them and the recipes' pipeline layouts (below): Qwen3-30B-A3B GB200 +8.7%, B200 -18.8%,
// H100 +0.8%; Qwen3-235B-A22B GB200 -6.3%, B200 +3.0%, H100 -15.2%; DeepSeek-V3 GB200 +0.8%, B200
// +26.8%; median |error| 7.5%. Predicted dropless instead: median 5.6%. DeepSeek-V3 on B200 was at
// -9.6% with the even split, whose last stage held 3 layers, the MTP module and the loss against the
// recipe's 1 layer: its heaviest stage then hid that the model's token-drop step is too fast there
// (the table's 25.11 dropless MXFP8 run of the same plan, 2,139 tokens/s per GPU, is 6% slower than
// this 2,265; the model's dropless MXFP8 prediction 24% slower). When this file was written, with the dispatch counted at the FP8 GEMMs'
// 1 byte, the same runs were at +5.2%, -35.1%, -1.8%, +1.2%, -6.4%, +13.4%, +7.1%, -17.5% (median
// 6.8%; dropless 11.6%). The real difference is larger than the model's on B200 and H100: the table's
// 25.11 dropless Qwen3-30B runs are about half as fast (9,299 against 18,066 tokens/s per GPU on
// B200, 5,275 against 10,494 on H100), the model's dropless predictions 0.8-0.9 of its dropping
// ones; the backward's expert kernels are charged in full either way.
#include "catch_shim.hpp"

#include <cmath>
#include <vector>

#include <commscale/calibrate/errors.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

TEST_CASE("validation: Megatron-Bridge 25.09 token-drop MoE runs (drop and pad, no host synchronization)", "[validation][step]") {
    struct row {
        const char* name;
        const transformer* model;
        const cluster* system;
        int gpus, tp, pp, vp, ep, micro_batch, global_batch;
        double tokens_per_s_per_gpu;  // published
    };
    const row rows[] = {
        {"Qwen3-30B-A3B GB200", &models::qwen3_30b_a3b, &presets::gb200_nvl72, 8, 1, 1, 1, 8, 4, 512, 22775},
        {"Qwen3-30B-A3B B200", &models::qwen3_30b_a3b, &presets::dgx_b200, 8, 1, 1, 1, 8, 1, 512, 18066},
        {"Qwen3-30B-A3B H100", &models::qwen3_30b_a3b, &presets::dgx_h100, 16, 1, 2, 24, 8, 2, 512, 10494},
        {"Qwen3-235B-A22B GB200", &models::qwen3_235b_a22b, &presets::gb200_nvl72, 64, 2, 1, 1, 64, 1, 1024, 4452},
        {"Qwen3-235B-A22B B200", &models::qwen3_235b_a22b, &presets::dgx_b200, 64, 1, 8, 2, 8, 1, 1024, 4104},
        {"Qwen3-235B-A22B H100", &models::qwen3_235b_a22b, &presets::dgx_h100, 256, 2, 8, 4, 32, 1, 2048, 1204},
        {"DeepSeek-V3 GB200", &models::deepseek_v3, &presets::gb200_nvl72, 256, 1, 4, 4, 64, 1, 2048, 3454},
        {"DeepSeek-V3 B200", &models::deepseek_v3, &presets::dgx_b200, 256, 1, 16, 1, 8, 1, 2048, 2265},
    };
    std::vector<double> dropped, dropless;
    for (const row& r : rows) {
        cluster c = *r.system;
        c.nodes = r.gpus / c.node.gpus;
        plan p{.tp = r.tp, .pp = r.pp, .dp = r.gpus / (r.tp * r.pp), .ep = r.ep, .etp = 1, .micro_batch = r.micro_batch,
               .global_batch = r.global_batch, .seq = 4096};
        apply_framework(p, framework::megatron_core);
        p.precision = dtype::fp8;
        p.sequence_parallel = r.tp > 1;
        p.gradient_bytes = 2;  // Megatron-Bridge's performance scripts: grad_reduce_in_fp32 False
        p.dispatcher = moe_token_dispatcher::alltoall;
        if (r.vp > 1) {
            p.schedule = pipeline_schedule::interleaved;
            p.virtual_stages = r.vp;
        }
        // the release's recipes (Megatron-Bridge v0.1.0rc4): Qwen3 235B-A22B counts the embedding and
        // the loss as pipeline layers (recipes/qwen/qwen3_235b_a22b.py; 94 + 2 layers over 16 and 32
        // virtual stages); DeepSeek-V3 on PP 16 lays out [embedding + 4 layers], 14 x [4 layers],
        // [1 layer + MTP + loss] (recipes/deepseek/deepseek_v3.py map_pp_vp_to_layout[(16, 1)]), the
        // last stage's 1 layer; its (4, 4) layout on GB200 interleaves the same slots, which the even
        // split approximates (the heaviest stage holds 16 layers either way)
        if (r.model == &models::qwen3_235b_a22b && r.pp > 1) {
            p.account_for_embedding_in_pipeline_split = true;
            p.account_for_loss_in_pipeline_split = true;
        }
        if (r.model == &models::deepseek_v3 && r.pp == 16 && r.vp == 1) p.last_stage_layers = 1;
        const auto without_drop = predict_step(*r.model, c, p);
        p.capacity_factor = 1.0;
        p.pad_to_capacity = true;
        const auto s = predict_step(*r.model, c, p);
        const double predicted = s.tokens_per_s / r.gpus;
        const double err = predicted / r.tokens_per_s_per_gpu - 1.0;
        INFO(r.name << ": predicted " << predicted << " tokens/s per GPU, published " << r.tokens_per_s_per_gpu << " ("
                    << 100 * err << "%)");
        CHECK(s.fits_in_memory);
        CHECK(std::fabs(err) <= 0.40);
        // without the host synchronization the step is never slower than the dropless one
        CHECK(s.tokens_per_s >= without_drop.tokens_per_s);
        dropped.push_back(std::fabs(err));
        dropless.push_back(std::fabs(without_drop.tokens_per_s / r.gpus / r.tokens_per_s_per_gpu - 1.0));
    }
    INFO("median |error| " << 100 * median(dropped) << "%, dropless " << 100 * median(dropless) << "%");
    CHECK(median(dropped) <= 0.10);
    CHECK(median(dropless) <= 0.10);
}
