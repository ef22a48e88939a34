// Training-run calibration (calibrate/fit_step.hpp, io/training_runs.hpp) on published runs: a
// fit on three or four runs of one stack must predict that stack's other runs (other model
// sizes, sequence lengths, GPU counts) within 8% (the target), and the before/after and
// cross-validated errors must say so. Sources of the runs: see step_published_stacks.cpp.
#include "catch_shim.hpp"
#include "runs_csv_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <string>
#include <vector>

#include <commscale/calibrate/fit_step.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/io/training_runs.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {

// llm-foundry MPT on A100 80GB (Composer FSDP), tokens/s/GPU from its benchmarking README
struct mpt_row {
    const char* name;
    int hidden, heads, layers, seq, gpus, micro_batch, accumulation;
    bool checkpointing;
    double tokens_per_gpu_s;
};
// clang-format off
constexpr mpt_row mpt_rows[] = {
    {"MPT-70B s2048 64 GPUs",  8192, 64, 80, 2048, 64, 8,  4,  true,  410},
    {"MPT-30B s2048 8 GPUs",   7168, 56, 48, 2048, 8,  3,  21, true,  916},
    {"MPT-13B s2048 8 GPUs",   5120, 40, 40, 2048, 8,  2,  3,  false, 2262},
    {"MPT-7B s2048 8 GPUs",    4096, 32, 32, 2048, 8,  6,  2,  false, 4641},
    {"MPT-7B s8192 8 GPUs",    4096, 32, 32, 8192, 8,  8,  2,  true,  3206},
    {"MPT-3B s2048 8 GPUs",    2560, 20, 32, 2048, 8,  10, 2,  false, 10811},
    {"MPT-1B s2048 8 GPUs",    2048, 16, 24, 2048, 8,  14, 4,  false, 20513},
    {"MPT-350M s2048 8 GPUs",  1024, 16, 24, 2048, 8,  32, 2,  false, 58782},
    {"MPT-125M s2048 8 GPUs",  768,  12, 12, 2048, 8,  40, 2,  false, 142830},
};
// clang-format on

training_run mpt_run(const mpt_row& r) {
    training_run t;
    t.label = r.name;
    t.model = transformer{.name = r.name, .layers = r.layers, .hidden = r.hidden, .heads = r.heads,
                          .kv_heads = r.heads, .ffn = 4 * r.hidden, .vocab = 50368, .max_seq = r.seq,
                          .tied_embeddings = true, .source = "llm-foundry mpt yamls", .alibi = true};
    t.gpus = r.gpus;
    t.p = plan{.tp = 1, .pp = 1, .dp = r.gpus, .micro_batch = r.micro_batch,
               .global_batch = r.micro_batch * r.accumulation * r.gpus, .seq = r.seq};
    apply_framework(t.p, framework::fsdp);
    t.p.recompute_mode = r.checkpointing ? recompute::full : recompute::none;
    t.step_s = static_cast<double>(t.p.global_batch) * r.seq / (r.tokens_per_gpu_s * r.gpus);
    return t;
}

// NeMo 24.09 Llama 3.1 on DGX H100, bf16 (dgxc-benchmarking): step seconds
struct nemo_row {
    const char* name;
    transformer m;
    int gpus, tp, pp, cp, vp, global_batch;
    double step_s;
};

training_run nemo_run(const nemo_row& r) {
    training_run t;
    t.label = r.name;
    t.model = r.m;
    t.gpus = r.gpus;
    t.p = plan{.tp = r.tp, .pp = r.pp, .dp = r.gpus / (r.tp * r.pp * r.cp), .cp = r.cp, .micro_batch = 1,
               .global_batch = r.global_batch, .seq = 8192};
    apply_framework(t.p, framework::megatron_core);
    t.p.sequence_parallel = r.tp > 1;
    if (r.vp > 1) {
        t.p.schedule = pipeline_schedule::interleaved;
        t.p.virtual_stages = r.vp;
    }
    t.step_s = r.step_s;
    return t;
}

double held_out_median(const step_fit& f, const std::vector<training_run>& others, cluster base) {
    base.compute = f.calibration;
    std::vector<double> e;
    for (const auto& r : others) {
        cluster c = base;
        c.nodes = static_cast<int>(r.gpus / c.node.gpus);
        const double pred = in_seconds(predict_step(r.model, c, r.p).step);
        INFO(r.label << ": predicted " << pred << " s, measured " << *r.step_s << " s");
        e.push_back(std::fabs(pred / *r.step_s - 1.0));
    }
    return median(e);
}

}  // namespace

TEST_CASE("fit-step on three llm-foundry FSDP runs predicts the other six within 8%") {
    // fit: one small, one mid-size, one large model (one with activation checkpointing)
    std::vector<training_run> fit_runs{mpt_run(mpt_rows[6]), mpt_run(mpt_rows[3]), mpt_run(mpt_rows[1])};
    std::vector<training_run> others;
    for (int i : {0, 2, 4, 5, 7, 8}) others.push_back(mpt_run(mpt_rows[i]));
    const step_fit f = fit_step(fit_runs, presets::dgx_a100);
    INFO("kernel_efficiency " << f.calibration.kernel_efficiency << ", before " << f.median_rel_error_before
                              << ", after " << f.median_rel_error);
    REQUIRE_FALSE(f.fitted.empty());
    CHECK(f.fitted[0].name == "kernel_efficiency");
    CHECK(f.fitted[0].uncertainty > 0.0);
    CHECK(f.fitted[0].uncertainty < 0.1 * f.fitted[0].value);
    // these A100 80GB runs are not in the calibration set (its llm-foundry runs are the A100 40GB
    // table): the defaults fitted to that set already predict them within 8%, and a fit on three
    // of them keeps it there, its kernel scale within the prior's one sigma (a factor e^0.4)
    CHECK(f.median_rel_error_before < 0.08);
    CHECK(f.median_rel_error < 0.08);
    REQUIRE(f.cv_median_rel_error);
    CHECK(*f.cv_median_rel_error < 0.10);
    CHECK(std::fabs(std::log(f.calibration.kernel_efficiency)) < 0.4);
    const double held = held_out_median(f, others, presets::dgx_a100);
    INFO("held-out median error " << held);
    CHECK(held <= 0.08);
}

TEST_CASE("fit-step on NeMo Llama 3.1 8B/70B/405B at small scale predicts the large scales within 8%") {
    const std::vector<training_run> fit_runs{
        nemo_run({"8B 8 GPUs", models::llama3_8b, 8, 1, 1, 2, 1, 128, 12.91}),
        nemo_run({"70B 64 GPUs", models::llama3_70b, 64, 4, 4, 2, 5, 128, 14.72}),
        nemo_run({"405B 576 GPUs", models::llama3_405b, 576, 8, 9, 2, 7, 252, 17.20})};
    const std::vector<training_run> others{
        nemo_run({"8B 128 GPUs", models::llama3_8b, 128, 1, 1, 2, 1, 2048, 13.10}),
        nemo_run({"70B 2048 GPUs", models::llama3_70b, 2048, 4, 4, 2, 5, 4096, 14.98}),
        nemo_run({"405B 2304 GPUs", models::llama3_405b, 2304, 8, 9, 2, 7, 1008, 17.62})};
    const step_fit f = fit_step(fit_runs, presets::dgx_h100);
    INFO("kernel_efficiency " << f.calibration.kernel_efficiency << ", before " << f.median_rel_error_before
                              << ", after " << f.median_rel_error);
    // NeMo 24.09 BF16 runs, not in the calibration set: the fitted defaults predict them within
    // 5% before any fit, and the fit keeps them there
    CHECK(f.median_rel_error_before < 0.05);
    CHECK(f.median_rel_error < 0.05);
    // the attention share of 8B (h 4096) and 405B (h 16384) at seq 8192 differ by more than 0.1:
    // both scales are fitted, each with an uncertainty. Their overlap-slowdown shares differ by
    // more than 0.02 too, but three runs pin it no better than its prior (0.99 +- 0.39): kept; and
    // the per-kernel overheads are a like share of these large layers' time: kept.
    REQUIRE(f.fitted.size() == 2);
    CHECK(f.fitted[1].name == "attention_efficiency");
    CHECK(f.kept == std::vector<std::string>{"overlap_slowdown", "kernel_overhead"});
    for (const auto& p : f.fitted) {
        INFO(p.name << " " << p.value << " +- " << p.uncertainty);
        CHECK(p.uncertainty > 0.0);
        CHECK(p.uncertainty < p.value);
    }
    const double held = held_out_median(f, others, presets::dgx_h100);
    INFO("held-out median error " << held);
    CHECK(held <= 0.08);
}

TEST_CASE("fit-step: one run fits the kernel efficiency under the prior, no cross-validation") {
    const std::vector<training_run> one{mpt_run(mpt_rows[3])};
    const step_fit f = fit_step(one, presets::dgx_a100);
    CHECK_FALSE(f.cv_median_rel_error);
    REQUIRE(f.fitted.size() == 1);
    // the prior (sigma 0.4 in log) against a 3% measurement: the fit moves nearly all the way
    CHECK(f.median_rel_error < 0.02);
    CHECK(f.median_rel_error < f.median_rel_error_before);
    for (double v : {f.calibration.kernel_efficiency, f.fitted[0].uncertainty}) CHECK(std::isfinite(v));
}

TEST_CASE("fit-step: the calibration travels in the cluster JSON and changes step predictions") {
    const std::vector<training_run> runs{mpt_run(mpt_rows[6]), mpt_run(mpt_rows[3]), mpt_run(mpt_rows[1])};
    const step_fit f = fit_step(runs, presets::dgx_a100);
    cluster c = presets::dgx_a100;
    c.compute = f.calibration;
    const cluster back = io::cluster_from_json(io::cluster_to_json(c));
    CHECK(back.compute.kernel_efficiency == Approx(f.calibration.kernel_efficiency));
    CHECK(back.compute.attention_efficiency == Approx(f.calibration.attention_efficiency));
    const training_run& r = runs[1];
    cluster plain = presets::dgx_a100;
    const double before = in_seconds(predict_step(r.model, plain, r.p).step);
    const double after = in_seconds(predict_step(r.model, back, r.p).step);
    // a kernel efficiency below 1 makes the step longer, above 1 shorter
    CHECK(after != Approx(before));
    CHECK((after > before) == (f.calibration.kernel_efficiency < 1.0));
    CHECK(std::fabs(after / *r.step_s - 1.0) < 0.08);
}

TEST_CASE("training-runs CSV: columns, defaults, relative model paths and errors naming row and column") {
    const std::string good =
        "# NeMo 24.09 Llama 3.1 8B on DGX H100 (dgxc-benchmarking)\n"
        "model,gpus,tp,pp,cp,micro_batch,global_batch,seq,dtype,framework,step_s,name\n"
        "llama3-8b,8,1,1,2,1,128,8192,bf16,megatron-core,12.91,8B\n"
        "\n"
        "llama3-8b,8,1,1,2,1,128,8192,fp8,megatron-core,9.67,\"8B, fp8\"\n";
    const auto runs = io::parse_training_runs(good, "runs.csv");
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].p.dp == 4);  // 8 / (tp pp cp)
    CHECK(runs[0].p.cp == 2);
    CHECK(runs[1].p.precision == dtype::fp8);
    CHECK(runs[1].label == "runs.csv:5 (8B, fp8, 8 GPUs)");
    CHECK(*runs[0].step_s == Approx(12.91));
    // tflops_per_gpu instead of step_s: converted with the model FLOPs
    const auto t = io::parse_training_runs("model,gpus,tp,pp,micro_batch,global_batch,tflops_per_gpu\n"
                                           "llama3-8b,8,1,1,1,64,400\n",
                                           "t.csv");
    REQUIRE(t.size() == 1);
    CHECK(t[0].tflops_per_gpu);
    // the error's message ("" when the text parses)
    auto err = [](const std::string& text) { return runs_test::runs_csv_error(text).second; };
    const std::string head = "model,gpus,tp,pp,micro_batch,global_batch,step_s\n";
    CHECK_THAT(err(head + "llama3-8b,8,x,1,1,64,1.0\n"), Catch::Contains("runs.csv:2: column tp") && Catch::Contains("'x'"));
    CHECK_THAT(err(head + "llama3-8b,8,1,1,1,64\n"), Catch::Contains("runs.csv:2") && Catch::Contains("truncated"));
    CHECK_THAT(err(head + "llama9-8b,8,1,1,1,64,1.0\n"), Catch::Contains("runs.csv:2: column model"));
    CHECK_THAT(err(head + "llama3-8b,8,1,1,1,64,-2\n"), Catch::Contains("column step_s") && Catch::Contains("positive"));
    CHECK_THAT(err(head + "llama3-8b,8,3,1,1,64,1.0\n"), Catch::Contains("tp x pp x cp"));
    CHECK_THAT(err("model,gpus,tp,pp,micro_batch,global_batch\nllama3-8b,8,1,1,1,64\n"),
               Catch::Contains("step_s or tflops_per_gpu"));
    CHECK_THAT(err("model,gpus,tpp,pp,micro_batch,global_batch,step_s\n"), Catch::Contains("'tpp'"));
    CHECK_THAT(err(head), Catch::Contains("no runs"));
    CHECK_THAT(err(""), Catch::Contains("empty"));
    CHECK_THAT(err(head + "llama3-8b,8,1,1,1,64,nan\n"), Catch::Contains("column step_s"));
    // sequence_parallel empty or absent: the framework's (megatron-core: on with TP >= 2, as
    // Megatron-Bridge's recipes set it; the other stacks off); explicit values kept
    const auto sp = io::parse_training_runs("model,gpus,tp,pp,micro_batch,global_batch,seq,framework,sequence_parallel,step_s\n"
                                            "llama3-70b,64,4,8,1,128,8192,megatron-core,,7.0\n"
                                            "llama3-70b,64,1,8,1,128,8192,megatron-core,,7.0\n"
                                            "llama3-70b,64,4,8,1,128,8192,megatron-lm,,7.0\n"
                                            "llama3-70b,64,4,8,1,128,8192,megatron-core,false,7.0\n"
                                            "llama3-70b,64,4,8,1,128,8190,megatron-core,,7.0\n",
                                            "sp.csv");
    REQUIRE(sp.size() == 5);
    CHECK(sp[0].p.sequence_parallel);
    CHECK_FALSE(sp[1].p.sequence_parallel);  // TP 1
    CHECK_FALSE(sp[2].p.sequence_parallel);  // Megatron-LM 2021-22's profile
    CHECK_FALSE(sp[3].p.sequence_parallel);  // as written
    CHECK_FALSE(sp[4].p.sequence_parallel);  // 8190 tokens do not split over 4 TP ranks
    CHECK(io::parse_training_runs(head + "llama3-70b,64,4,8,1,128,7.0\n", "h.csv")[0].p.sequence_parallel);
    // MoE runs: ep carved out of dp x cp, etp (absent or 0: tp)
    const auto moe = io::parse_training_runs("model,gpus,tp,pp,cp,ep,etp,micro_batch,global_batch,step_s\n"
                                             "mixtral-8x7b,16,2,1,2,8,1,1,64,1.0\n"
                                             "mixtral-8x7b,16,2,1,2,4,0,1,64,1.0\n",
                                             "moe.csv");
    REQUIRE(moe.size() == 2);
    CHECK(moe[0].p.ep == 8);
    CHECK(moe[0].p.etp == 1);
    CHECK(moe[1].p.expert_tp() == 2);
    CHECK_THAT(err("model,gpus,tp,pp,etp,micro_batch,global_batch,step_s\nmixtral-8x7b,8,1,1,-1,1,64,1.0\n"),
               Catch::Contains("column etp"));
    // full recompute by method (Megatron-Core's --recompute-method, --recompute-num-layers)
    const auto rec = io::parse_training_runs("model,gpus,tp,pp,micro_batch,global_batch,recompute,recompute_method,"
                                             "recompute_num_layers,step_s\n"
                                             "llama3-8b,8,1,1,1,128,full,block,5,9.0\n"
                                             "llama3-8b,8,1,1,1,128,full,,,9.0\n",
                                             "rec.csv");
    REQUIRE(rec.size() == 2);
    CHECK(rec[0].p.full_recompute_method == recompute_method::block);
    CHECK(rec[0].p.recompute_num_layers == 5);
    CHECK(rec[1].p.full_recompute_method == recompute_method::uniform);
    CHECK(rec[1].p.recompute_num_layers == 0);
    const std::string rec_head = "model,gpus,tp,pp,micro_batch,global_batch,recompute,recompute_method,recompute_num_layers,step_s\n";
    CHECK_THAT(err(rec_head + "llama3-8b,8,1,1,1,128,full,blocks,5,9.0\n"),
               Catch::Contains("column recompute_method") && Catch::Contains("'blocks'"));
    CHECK_THAT(err(rec_head + "llama3-8b,8,1,1,1,128,full,block,-5,9.0\n"), Catch::Contains("column recompute_num_layers"));
    // FP8's recipe and the MoE all-to-all overlap (Megatron-Core's --fp8-recipe,
    // --overlap-moe-expert-parallel-comm)
    const auto fp8 = io::parse_training_runs("model,gpus,tp,pp,ep,virtual_stages,micro_batch,global_batch,dtype,fp8_recipe,"
                                             "overlap_moe_expert_parallel_comm,step_s\n"
                                             "qwen3-30b-a3b,16,1,2,8,12,2,512,fp8,tensorwise,true,9.0\n"
                                             "llama3-8b,8,1,1,1,1,1,128,fp8,,,9.0\n"
                                             "llama3-8b,8,1,1,1,1,1,128,fp8,delayed,,9.0\n"
                                             "llama3-8b,8,1,1,1,1,1,128,bf16,,,9.0\n",
                                             "fp8.csv");
    REQUIRE(fp8.size() == 4);
    CHECK(fp8[0].p.fp8_scaling == fp8_recipe::tensorwise);
    CHECK(fp8[0].p.moe_a2a_overlap);
    // unsaid: megatron-core's per-tensor FP8 is current scaling (NVIDIA's recipes' "FP8-CS")
    CHECK(fp8[1].p.fp8_scaling == fp8_recipe::tensorwise);
    CHECK_FALSE(fp8[1].p.moe_a2a_overlap);
    CHECK(fp8[2].p.fp8_scaling == fp8_recipe::delayed);
    CHECK(fp8[3].p.fp8_scaling == fp8_recipe::delayed);  // no FP8, nothing to scale
    const auto fsdp = io::parse_training_runs("model,gpus,tp,pp,micro_batch,global_batch,dtype,framework,step_s\n"
                                              "llama3-8b,8,1,1,1,128,fp8,fsdp,9.0\n",
                                              "fsdp.csv");
    CHECK(fsdp[0].p.fp8_scaling == fp8_recipe::delayed);  // Transformer Engine's default recipe (Composer's amp_fp8)
    CHECK_THAT(err("model,gpus,tp,pp,micro_batch,global_batch,dtype,fp8_recipe,step_s\nllama3-8b,8,1,1,1,128,fp8,cs,9.0\n"),
               Catch::Contains("column fp8_recipe") && Catch::Contains("'cs'"));
    CHECK_THAT(err("model,gpus,tp,pp,micro_batch,global_batch,overlap_moe_expert_parallel_comm,step_s\n"
                   "llama3-8b,8,1,1,1,128,maybe,9.0\n"),
               Catch::Contains("column overlap_moe_expert_parallel_comm"));
    // Megatron-Core's --first-last-layers-bf16 and its counts (default 1 and 1)
    const auto bf16 = io::parse_training_runs("model,gpus,tp,pp,micro_batch,global_batch,dtype,first_last_layers_bf16,"
                                              "num_layers_at_start_in_bf16,num_layers_at_end_in_bf16,step_s\n"
                                              "llama3-8b,8,1,1,1,128,mxfp8,true,0,4,9.0\n"
                                              "llama3-8b,8,1,1,1,128,mxfp8,true,,,9.0\n"
                                              "llama3-8b,8,1,1,1,128,mxfp8,,,,9.0\n",
                                              "bf16.csv");
    REQUIRE(bf16.size() == 3);
    CHECK(bf16[0].p.first_last_layers_bf16);
    CHECK(bf16[0].p.bf16_layers_at_start == 0);
    CHECK(bf16[0].p.bf16_layers_at_end == 4);
    CHECK(bf16[1].p.bf16_layers_at_start == 1);
    CHECK(bf16[1].p.bf16_layers_at_end == 1);
    CHECK_FALSE(bf16[2].p.first_last_layers_bf16);
    CHECK_THAT(err("model,gpus,tp,pp,micro_batch,global_batch,dtype,first_last_layers_bf16,num_layers_at_end_in_bf16,step_s\n"
                   "llama3-8b,8,1,1,1,128,mxfp8,true,-2,9.0\n"),
               Catch::Contains("column num_layers_at_end_in_bf16"));
    // Megatron-Core's --decoder-first/last-pipeline-num-layers (plan::first/last_stage_layers): the
    // layout of Megatron-Bridge's DeepSeek-V3 recipe on PP 16, [embedding + 4 layers], 14 x [4 layers],
    // [1 layer + MTP + loss], is last_stage_layers 1 (the other 15 stages share 60 layers)
    const auto stages = io::parse_training_runs("model,gpus,tp,pp,ep,micro_batch,global_batch,seq,first_stage_layers,last_stage_layers,step_s\n"
                                                "deepseek-v3,256,1,16,8,1,2048,4096,,1,9.0\n"
                                                "deepseek-v3,256,1,16,8,1,2048,4096,,,9.0\n",
                                                "stages.csv");
    REQUIRE(stages.size() == 2);
    CHECK(stages[0].p.last_stage_layers == 1);
    CHECK(stages[0].p.first_stage_layers == 0);
    CHECK(stages[1].p.last_stage_layers == 0);
    CHECK(stage_layers(stages[0].p, 61, 0) == 4);
    CHECK(stage_layers(stages[0].p, 61, 15) == 1);
    CHECK(max_stage_layers(stages[0].p, 61) == 4);
    CHECK_THAT(err("model,gpus,tp,pp,micro_batch,global_batch,last_stage_layers,step_s\nllama3-8b,8,1,2,1,128,-1,9.0\n"),
               Catch::Contains("column last_stage_layers") && Catch::Contains("'-1'"));
}

TEST_CASE("fit-step: a run whose GPUs the node does not divide is an error naming the run") {
    std::vector<training_run> runs{mpt_run(mpt_rows[3])};
    runs[0].gpus = 12;
    runs[0].p.dp = 12;
    try {
        (void)fit_step(runs, presets::dgx_a100);
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("MPT-7B") && Catch::Contains("12"));
    }
}

TEST_CASE("fit_step: overlap_slowdown is fitted where the runs hide very different amounts of communication") {
    // Synthetic truth: the documented model with kernel_efficiency 0.85 and 1.6x the documented
    // compute slowdown beside overlapped communication (overlap_compute_slowdown, 12% of the
    // hidden time). FSDP (ZeRO-3 gathers and reduce-scatters every layer, every micro-batch) hides
    // far more communication per step on few large micro-batches over slow NICs than on many GPUs
    // of one node, so the slowdown's share of the step differs between the runs.
    cluster slow = presets::dgx_a100;  // 8 x 200 Gb/s HDR per node
    cluster truth = slow;
    truth.compute.kernel_efficiency = 0.85;
    truth.compute.overlap_slowdown = 1.6;
    const transformer m = model_by_name("llama2-7b");
    std::vector<training_run> runs;
    // overlap-slowdown shares of the step (documented model): 0.7%, 4.9%, 2.8%, 7.0%
    for (const auto& [gpus, mb, acc] : {std::tuple{32, 8, 1}, std::tuple{32, 1, 8}, std::tuple{64, 2, 1}, std::tuple{256, 1, 1}}) {
        training_run t;
        t.label = std::to_string(gpus) + " GPUs";
        t.model = m;
        t.gpus = gpus;
        t.p = plan{.tp = 1, .pp = 1, .dp = gpus, .micro_batch = mb, .global_batch = mb * acc * gpus, .seq = 4096};
        apply_framework(t.p, framework::fsdp);
        cluster c = truth;
        c.nodes = gpus / 8;
        t.step_s = in_seconds(predict_step(m, c, t.p).step);
        runs.push_back(t);
    }
    const step_fit f = fit_step(runs, slow);
    std::vector<std::string> names;
    for (const auto& p : f.fitted) names.push_back(p.name);
    INFO("fitted " << names.size() << ", kernel " << f.calibration.kernel_efficiency << ", overlap "
                   << f.calibration.overlap_slowdown);
    REQUIRE(std::find(names.begin(), names.end(), "overlap_slowdown") != names.end());
    // the prior (σ 0.4 in log, 1.6 is 1.2σ out) pulls toward 1; the rows dominate
    CHECK_THAT(f.calibration.overlap_slowdown, Catch::Matchers::WithinRel(1.6, 0.15));
    CHECK_THAT(f.calibration.kernel_efficiency, Catch::Matchers::WithinRel(0.85, 0.05));
    CHECK(f.median_rel_error < 0.01);
    CHECK(f.median_rel_error < f.median_rel_error_before / 5);
    for (const auto& p : f.fitted) CHECK(p.uncertainty > 0.0);
    // the cluster JSON carries it, and reading it back predicts the runs
    cluster back = io::cluster_from_json(io::cluster_to_json([&] {
        cluster c = slow;
        c.compute = f.calibration;
        return c;
    }()));
    CHECK(back.compute.overlap_slowdown == f.calibration.overlap_slowdown);
    // one node only: the share hardly moves, so it is kept
    std::vector<training_run> one_node(runs.begin(), runs.begin() + 1);
    const step_fit g = fit_step(one_node, slow);
    CHECK(std::find(g.kept.begin(), g.kept.end(), "overlap_slowdown") != g.kept.end());
}

TEST_CASE("training-runs CSV: an unknown column names itself and lists every column the parser reads") {
    auto header_error = [](const std::string& header) { return runs_test::runs_csv_error(header + "\n"); };
    const auto [field, message] = header_error("model,gpus,tp,pp,micro_batch,global_batch,step_s,tpp");
    CHECK(field == "runs.csv:1: header");
    REQUIRE_THAT(message, Catch::Matchers::Contains("'tpp'"));
    // The list, "columns a, b, ..., and step_s, tflops_per_gpu or tokens_per_s_per_gpu": each
    // column it names is one the parser accepts (a header of it and the required ones passes the
    // header's checks; with no rows the file is then refused for having no runs).
    const std::string lead = "columns ", tail = ", and step_s, tflops_per_gpu or tokens_per_s_per_gpu";
    const auto from = message.find(lead), to = message.find(tail);
    REQUIRE(from != std::string::npos);
    REQUIRE(to != std::string::npos);
    std::vector<std::string> listed;
    std::string rest = message.substr(from + lead.size(), to - from - lead.size()) + ", ";
    for (std::size_t at = 0, comma; (comma = rest.find(", ", at)) != std::string::npos; at = comma + 2)
        listed.push_back(rest.substr(at, comma - at));
    for (const char* c : {"model", "dp", "etp", "overlap_param_gather", "recompute_num_layers", "fp8_recipe"})
        CHECK(std::find(listed.begin(), listed.end(), c) != listed.end());
    for (const auto& c : listed) {
        INFO(c);
        CHECK(header_error("model,gpus,tp,pp,micro_batch,global_batch,step_s," + c).first == "runs.csv");
    }
    for (const char* measured : {"step_s", "tflops_per_gpu", "tokens_per_s_per_gpu"})
        CHECK(header_error(std::string("model,gpus,tp,pp,micro_batch,global_batch,") + measured).first == "runs.csv");
}
