// Tests of `commscale accuracy`, run through the built binary: a small runs file made here (the
// measurement read back exactly, families, the 40%-MFU rule of thumb computed independently, runs
// that cannot be expressed reported with the reason), the calibration set in
// data/calibration/published_runs.csv against rows typed from the source table, the SVG, and
// errors for bad input that name the field, the value and what is accepted.
#include "cli_runner.hpp"

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace cli_test;

namespace {
const std::string calibration_csv = std::string(COMMSCALE_DATA_DIR) + "/calibration/published_runs.csv";

const char* small_runs =
    "# two families, one run the library cannot express, one it rejects\n"
    "name,family,model,cluster,gpus,tp,pp,micro_batch,global_batch,seq,dtype,tokens_per_s_per_gpu,source,not_expressible\n"
    "a,A100 bf16,gpt3-175b,dgx-a100,1024,8,8,1,1536,2048,bf16,1234.5,paper X,\n"
    "b,A100 bf16,gpt3-175b,dgx-a100,512,8,8,1,1536,2048,bf16,1300,paper X,\n"
    "c,H100 fp8,llama3-8b,dgx-h100,8,1,1,1,128,8192,fp8,12036,table Y,\n"
    "d,H100 fp8,llama3-70b,dgx-h100,64,1,1,1,128,8192,fp8,1500,table Y,expert TP folding (example)\n"
    "e,H100 fp8,llama3-8b,dgx-h100,24,3,1,1,128,8192,fp8,1000,table Y,\n";

// The row of `runs` whose label contains `name`.
json row(const json& runs, const std::string& name) {
    for (const auto& r : runs)
        if (r["label"].get<std::string>().find(name) != std::string::npos) return r;
    FAIL("no run labelled " << name);
    return {};
}
}  // namespace

TEST_CASE("accuracy on a small runs file: measured read back, families, rule of thumb, not expressible") {
    // run e is one the predictor rejects: tp 3 does not divide Llama 3 8B's 32 heads
    const fs::path f = write("acc_small.csv", small_runs);
    const json j = run_json("accuracy " + q(f));
    REQUIRE(j["runs"].size() == 5);
    // the measurement is read back exactly as written
    CHECK(row(j["runs"], "(a,")["measured_tokens_per_s_per_gpu"].get<double>() == 1234.5);
    CHECK(row(j["runs"], "(c,")["measured_tokens_per_s_per_gpu"].get<double>() == 12036.0);
    CHECK(row(j["runs"], "(a,")["source"] == "paper X");
    // the rule of thumb, computed here: GPT-3 175B is GPT-shaped (kv = h, ffn = 4h, no gating), so
    // its model FLOPs per token are 72 l h^2 (1 + s/6h + V/(12 l h)) (Narayanan et al. 2021, eq. 3);
    // 0.4 x A100's dense bf16 peak of 312 TFLOP/s
    const double l = 96, h = 12288, s = 2048, V = 50257;
    const double per_token = 72.0 * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
    const double rule = 0.4 * 312e12 / per_token;
    const json a = row(j["runs"], "(a,");
    CHECK_THAT(a["rule_of_thumb_tokens_per_s_per_gpu"].get<double>(), Catch::Matchers::WithinRel(rule, 1e-6));
    CHECK_THAT(a["rule_of_thumb_rel_error"].get<double>(), Catch::Matchers::WithinRel(rule / 1234.5 - 1.0, 1e-6));
    // predicted vs measured, consistent with the predicted step
    const double pred = a["predicted_tokens_per_s_per_gpu"].get<double>();
    CHECK_THAT(pred, Catch::Matchers::WithinRel(1536.0 * 2048.0 / (a["predicted_step_s"].get<double>() * 1024.0), 1e-9));
    CHECK_THAT(a["rel_error"].get<double>(), Catch::Matchers::WithinRel(pred / 1234.5 - 1.0, 1e-9));
    CHECK(a["bottleneck"].is_string());
    // not expressible: the file's reason; rejected by the predictor: its message; neither in the medians
    const json d = row(j["runs"], "(d,");
    CHECK_FALSE(d["expressible"].get<bool>());
    CHECK(d["reason"] == "expert TP folding (example)");
    CHECK(d["measured_tokens_per_s_per_gpu"].get<double>() == 1500.0);
    const json e = row(j["runs"], "(e,");
    CHECK_FALSE(e["expressible"].get<bool>());
    CHECK_THAT(e["reason"].get<std::string>(), Catch::Contains("tp"));
    // families in order of appearance, with the medians of their expressible runs
    REQUIRE(j["families"].size() == 2);
    const json fa = j["families"][0], fh = j["families"][1];
    CHECK(fa["family"] == "A100 bf16");
    CHECK(fa["runs"] == 2);
    CHECK(fh["family"] == "H100 fp8");
    CHECK(fh["runs"] == 1);
    CHECK(fh["not_expressible"] == 2);
    const double ea = std::fabs(a["rel_error"].get<double>()), eb = std::fabs(row(j["runs"], "(b,")["rel_error"].get<double>());
    CHECK_THAT(fa["median_abs_error"].get<double>(), Catch::Matchers::WithinRel(0.5 * (ea + eb), 1e-9));
    CHECK_THAT(fh["median_abs_error"].get<double>(),
               Catch::Matchers::WithinRel(std::fabs(row(j["runs"], "(c,")["rel_error"].get<double>()), 1e-9));
    CHECK(j["overall"]["runs"] == 3);
    CHECK(j["overall"]["not_expressible"] == 2);
    // the text form lists the families and the runs left out, with their reasons
    const auto t = run("accuracy " + q(f));
    REQUIRE(t.rc == 0);
    CHECK_THAT(t.out, Catch::Contains("A100 bf16") && Catch::Contains("not expressible") &&
                          Catch::Contains("expert TP folding (example)") && Catch::Contains("40% MFU") &&
                          Catch::Contains("memory GiB"));
}

TEST_CASE("accuracy without a family column groups by source, accelerator and precision") {
    const fs::path f = write("acc_nofamily.csv",
                             "model,gpus,tp,pp,micro_batch,global_batch,seq,dtype,step_s,source\n"
                             "llama3-8b,8,1,1,1,128,8192,bf16,12.91,NeMo\n"
                             "llama3-8b,8,1,1,1,128,8192,fp8,10.0,NeMo\n");
    const json j = run_json("accuracy " + q(f) + " --cluster dgx-h100");
    REQUIRE(j["families"].size() == 2);
    CHECK(j["families"][0]["family"] == "NeMo / h100-sxm / bf16");
    CHECK(j["families"][1]["family"] == "NeMo / h100-sxm / fp8");
    // from step_s: 128 x 8192 tokens / (12.91 s x 8 GPUs)
    CHECK_THAT(j["runs"][0]["measured_tokens_per_s_per_gpu"].get<double>(),
               Catch::Matchers::WithinRel(128.0 * 8192.0 / (12.91 * 8.0), 1e-12));
}

TEST_CASE("accuracy on the calibration set: every run reported, measurements as published") {
    const fs::path svg = scratch() / "accuracy.svg";
    const json j = run_json("accuracy \"" + calibration_csv + "\" --svg " + q(svg));
    REQUIRE(j["runs"].size() == 118);
    // rows typed from ../shared/calibration/published_runs.csv (tokens/s per GPU as published)
    CHECK(row(j["runs"], "GPT3-5B H100 64 GPUs FP8")["measured_tokens_per_s_per_gpu"].get<double>() == 22521.0);
    CHECK(row(j["runs"], "LLAMA3.1_405B GB300 256 GPUs FP8-CS")["measured_tokens_per_s_per_gpu"].get<double>() == 999.0);
    CHECK(row(j["runs"], "Qwen3_235B_a22B GB300 256 GPUs BF16")["measured_tokens_per_s_per_gpu"].get<double>() == 6131.0);
    const json mpt70 = row(j["runs"], "MPT-70b A100-40GB 128 GPUs bf16 seq 2048");
    CHECK(mpt70["measured_tokens_per_s_per_gpu"].get<double>() == 376.0);
    CHECK(mpt70["source_location"].get<std::string>().find("llm-foundry") != std::string::npos);
    CHECK(mpt70["cluster"] == "clusters/a100-40gb-roce-1600.json");
    CHECK(mpt70["accelerator"] == "a100-40gb-sxm");
    // every run has a family and a source; expressible runs have finite predictions
    int expressible = 0;
    for (const auto& r : j["runs"]) {
        CHECK_FALSE(r["family"].get<std::string>().empty());
        CHECK_FALSE(r["source"].get<std::string>().empty());
        if (!r["expressible"].get<bool>()) {
            CHECK_FALSE(r["reason"].get<std::string>().empty());
            continue;
        }
        ++expressible;
        CHECK(std::isfinite(r["rel_error"].get<double>()));
        CHECK(r["predicted_tokens_per_s_per_gpu"].get<double>() > 0);
    }
    CHECK(expressible >= 100);
    int in_families = 0;
    for (const auto& f : j["families"]) in_families += f["runs"].get<int>() + f["not_expressible"].get<int>();
    CHECK(in_families == 118);
    const std::string s = slurp(svg);
    std::string why;
    CHECK(well_formed_xml(s, why));
    CHECK_THAT(s, Catch::Contains("measured tokens/s per GPU") && Catch::Contains("40%-MFU rule of thumb"));

    // the text report lists each run's memory per GPU under the memory model against the GPU's
    // capacity (issue 24, part 5): Llama 3 70B on GB200 (186 GiB: the GB200 NVL72 product page's
    // 13.4 TB of HBM3e over 72 GPUs) at the JSON's figure, and fitting
    const auto t = run("accuracy \"" + calibration_csv + "\"");
    REQUIRE(t.rc == 0);
    const json gb200 = row(j["runs"], "LLAMA3_70B GB200 64 GPUs FP8-CS");
    const double gib = gb200["memory_per_gpu_GiB"].get<double>();
    CHECK(gib > 100.0);  // 80 layers' activations at micro-batch 2 and 8K, 40 of them offloaded
    CHECK(gib < 186.0);
    const std::size_t at = t.out.find("(LLAMA3_70B GB200 64 GPUs FP8-CS");
    REQUIRE(at != std::string::npos);
    const std::string line = t.out.substr(at, t.out.find('\n', at) - at);
    CHECK_THAT(line, Catch::EndsWith("yes"));
    const std::size_t of = line.find(" of 186 ");
    REQUIRE(of != std::string::npos);
    const std::size_t start = line.rfind(' ', of - 1) + 1;
    CHECK(std::stod(line.substr(start, of - start)) == Approx(gib).margin(0.051));
}

TEST_CASE("accuracy: bad input names the field, the value and what is accepted") {
    const fs::path missing = write("acc_missing.csv", "model,gpus,tp,pp,micro_batch,tokens_per_s_per_gpu\nllama3-8b,8,1,1,1,100\n");
    require_invalid("accuracy " + q(missing), "no column global_batch");
    const fs::path negative =
        write("acc_negative.csv", "model,gpus,tp,pp,micro_batch,global_batch,tokens_per_s_per_gpu\nllama3-8b,8,1,1,1,128,-5\n");
    require_invalid("accuracy " + q(negative), "column tokens_per_s_per_gpu");
    const auto rn = run("accuracy " + q(negative));
    CHECK_THAT(rn.err, Catch::Contains("'-5'") && Catch::Contains("a positive number"));
    const fs::path unknown =
        write("acc_unknown.csv", "model,gpus,tp,pp,micro_batch,global_batch,tokens_per_s_per_gpu\nllama9-8b,8,1,1,1,128,100\n");
    require_invalid("accuracy " + q(unknown), "column model");
    const auto ru = run("accuracy " + q(unknown));
    CHECK_THAT(ru.err, Catch::Contains("llama9-8b") && Catch::Contains("llama3-8b"));
    const fs::path bad_cluster = write("acc_cluster.csv",
                                       "model,cluster,gpus,tp,pp,micro_batch,global_batch,tokens_per_s_per_gpu\n"
                                       "llama3-8b,dgx-h900,8,1,1,1,128,100\n");
    require_invalid("accuracy " + q(bad_cluster), "column cluster");
    const fs::path bad_state = write("acc_state.csv",
                                     "model,gpus,tp,pp,micro_batch,global_batch,optimizer_state_bytes,tokens_per_s_per_gpu\n"
                                     "llama3-8b,8,1,1,1,128,x,100\n");
    require_invalid("accuracy " + q(bad_state), "column optimizer_state_bytes");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --gpus 8 --micro-batch 1 --global-batch 128 "
                    "--optimizer-state-bytes 40",
                    "--optimizer-state-bytes");
    const json echoed = run_json("step --model llama3-8b --cluster dgx-h100 --gpus 8 --micro-batch 1 --global-batch 128 "
                                 "--optimizer-state-bytes 4 --json");
    CHECK(echoed["plan"]["optimizer_state_bytes"] == 4);
    const fs::path bad_column = write("acc_column.csv", "model,gpus,tp,pp,micro_batch,global_batch,tokens_per_gpu\n");
    require_invalid("accuracy " + q(bad_column), "tokens_per_gpu");
    require_invalid("accuracy \"" + (scratch() / "nope.csv").string() + "\"", "nope.csv");
}

TEST_CASE("accuracy: published runs the memory model now admits (issue 24, part 5)") {
    // Every calibration run was run by its publisher. These fit with their recipes' settings:
    // Llama 3 70B on GB200/GB300 offloads 40/20 layers' activations (cpu_offloading_num_layers,
    // Megatron-Bridge r0.2.0 workload_base_configs.py) and, in FP8, Transformer Engine keeps the
    // GEMM inputs in 1 byte; Llama 3.1 405B on B200 fits with the FP8 inputs alone.
    const json j = run_json("accuracy \"" + calibration_csv + "\"");
    for (const char* name : {"LLAMA3_70B GB200 64 GPUs FP8-CS", "LLAMA3_70B GB300 64 GPUs FP8-CS",
                             "LLAMA3.1_405B B200 128 GPUs FP8-CS"}) {
        INFO(name);
        const json r = row(j["runs"], name);
        CHECK(r["fits_in_memory"] == true);
        CHECK(r["memory_per_gpu_GiB"].get<double>() <= r["memory_capacity_GiB"].get<double>());
    }
    // the offloaded layers count: Llama 3 70B on GB200 without them is 40 layers over capacity
    const std::string gb200 =
        "step --model llama3-70b --cluster gb200-nvl72 --gpus 64 --micro-batch 2 --global-batch 256 --seq 8192 "
        "--dtype fp8 --zero 3";
    const json with = run_json(gb200 + " --cpu-offloading-num-layers 40");
    const json without = run_json(gb200);
    CHECK(with["fits_in_memory"] == true);
    CHECK(without["fits_in_memory"] == false);
    CHECK(with["plan"]["cpu_offloading_num_layers"] == 40);
    CHECK_FALSE(without["plan"].contains("cpu_offloading_num_layers"));
    // 40 of 80 layers: the layers' part of the activations halves
    const double a_with = with["memory_breakdown_GiB"]["activations"].get<double>();
    const double a_without = without["memory_breakdown_GiB"]["activations"].get<double>();
    CHECK(a_with < 0.55 * a_without);
    CHECK(a_with > 0.45 * a_without);
    // Megatron-Core refuses num_layers >= the model's layers; the error names field, value, range
    require_invalid(gb200 + " --cpu-offloading-num-layers 80", "cpu_offloading_num_layers");
    require_invalid(gb200 + " --cpu-offloading-num-layers -1", "--cpu-offloading-num-layers");
    // the host copies and the waits for them are keys of their own (over C2C the recipe's copies
    // hide: tests/unit/predict/step_offload.cpp); Megatron-Core refuses offloading with PP
    CHECK(with["offload_s"].get<double>() > 0.0);
    CHECK(with["offload_exposed_s"].get<double>() < with["offload_s"].get<double>());
    CHECK(without["offload_s"].get<double>() == 0.0);
    require_invalid("step --model llama3-70b --cluster gb200-nvl72 --gpus 64 --micro-batch 2 --global-batch 256 "
                    "--seq 8192 --dtype fp8 --cpu-offloading-num-layers 10 --pp 2",
                    "cpu_offloading_num_layers");
}

TEST_CASE("step: full recompute by method, Megatron-Core's --recompute-method and --recompute-num-layers") {
    // Megatron-Bridge r0.2.0's Llama 3 8B H100 FP8 recipe: recompute_num_layers=5, which its
    // set_recompute_overrides turns into granularity full, method block
    const std::string base =
        "step --model llama3-8b --cluster dgx-h100 --gpus 8 --micro-batch 1 --global-batch 128 --seq 8192 --dtype fp8 "
        "--gradient-bytes 2";
    const json none = run_json(base);
    const json full = run_json(base + " --recompute full");
    const json block = run_json(base + " --recompute full --recompute-method block --recompute-num-layers 5");
    CHECK(block["plan"]["recompute_method"] == "block");
    CHECK(block["plan"]["recompute_num_layers"] == 5);
    CHECK_FALSE(full["plan"].contains("recompute_method"));
    CHECK_FALSE(full["plan"].contains("recompute_num_layers"));
    // 5 of the 32 layers recomputed: between none and full, 5/32 of the way in compute
    const double c0 = none["compute_s"].get<double>(), c1 = full["compute_s"].get<double>(), cb = block["compute_s"].get<double>();
    CHECK_THAT(cb - c0, Catch::Matchers::WithinRel(5.0 / 32.0 * (c1 - c0), 1e-6));
    CHECK(block["memory_per_gpu_GiB"].get<double>() < none["memory_per_gpu_GiB"].get<double>());
    CHECK(block["memory_per_gpu_GiB"].get<double>() > full["memory_per_gpu_GiB"].get<double>());
    // Megatron-Core's rules, as input errors naming the field
    require_invalid(base + " --recompute selective --recompute-num-layers 5", "recompute_num_layers");
    require_invalid(base + " --recompute full --recompute-method block", "recompute_num_layers");
    require_invalid(base + " --recompute full --recompute-method blocks", "--recompute-method");
    require_invalid(base + " --recompute full --recompute-num-layers -2", "--recompute-num-layers");
}

TEST_CASE("step: --fp8-recipe and --overlap-moe-expert-parallel-comm, Megatron-Core's flags") {
    const std::string qwen =
        "step --model qwen3-235b-a22b --cluster dgx-h100 --gpus 256 --tp 2 --pp 8 --ep 32 --etp 1 --virtual-stages 4 "
        "--schedule interleaved --sequence-parallel --micro-batch 1 --global-batch 2048 --seq 4096 --dtype fp8 "
        "--gradient-bytes 2 --moe-token-dispatcher alltoall";
    const json delayed = run_json(qwen + " --fp8-recipe delayed");
    const json current = run_json(qwen + " --fp8-recipe tensorwise");
    const json overlapped = run_json(qwen + " --fp8-recipe tensorwise --overlap-moe-expert-parallel-comm");
    CHECK(delayed["plan"]["fp8_recipe"] == "delayed");
    CHECK(current["plan"]["fp8_recipe"] == "tensorwise");
    // unsaid, megatron-core's FP8 is current scaling, as NVIDIA's recipes run per-tensor FP8 (their
    // tables' "FP8-CS"; framework.hpp); the other stacks' profiles keep Transformer Engine's delayed
    const json unsaid = run_json(qwen);
    CHECK(unsaid["plan"]["fp8_recipe"] == "tensorwise");
    CHECK(unsaid["step_s"].get<double>() == current["step_s"].get<double>());
    CHECK(run_json(qwen + " --framework megatron-lm")["plan"]["fp8_recipe"] == "delayed");
    CHECK_FALSE(current["plan"].contains("overlap_moe_expert_parallel_comm"));
    CHECK(overlapped["plan"]["overlap_moe_expert_parallel_comm"] == true);
    // current scaling's per-expert amax and scale launches: more compute, never less
    CHECK(current["compute_s"].get<double>() > delayed["compute_s"].get<double>());
    // the paired chunks' all-to-alls run under compute: the same traffic, less of it exposed (not
    // all of it: these bf16 all-to-alls over the NICs outlast the compute they pair with)
    CHECK(overlapped["ep_comm_s"].get<double>() == Approx(current["ep_comm_s"].get<double>()));
    CHECK(overlapped["ep_comm_exposed_s"].get<double>() < 0.5 * current["ep_comm_exposed_s"].get<double>());
    // a bf16 plan has no FP8 recipe key; the flags' rules are input errors naming the field
    CHECK_FALSE(run_json("step --model llama3-8b --cluster dgx-h100 --gpus 8")["plan"].contains("fp8_recipe"));
    require_invalid("step --model llama3-8b --cluster dgx-h100 --gpus 8 --fp8-recipe tensorwise", "fp8_recipe");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --gpus 8 --dtype fp8 --fp8-recipe current", "--fp8-recipe");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --gpus 8 --overlap-moe-expert-parallel-comm",
                    "overlap_moe_expert_parallel_comm");
    // plan: every plan in the recipe; the best tensorwise plan is no faster than the best delayed one
    const std::string plan8b = "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 128 --seq 8192 --dtype fp8 --top 1";
    const json best_delayed = run_json(plan8b + " --fp8-recipe delayed");
    const json best_current = run_json(plan8b + " --fp8-recipe tensorwise");
    CHECK(best_current["plans"][0]["step_s"].get<double>() > best_delayed["plans"][0]["step_s"].get<double>());
    CHECK(run_json(plan8b)["plans"][0]["step_s"].get<double>() == best_current["plans"][0]["step_s"].get<double>());
    require_invalid("plan --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 128 --fp8-recipe tensorwise",
                    "--fp8-recipe");
    // block scaling (Megatron-Bridge's "FP8-SC"): the plan key, the recipe's own quantization and
    // split-accumulated forward GEMMs (slower than delayed scaling), and the same dtype rule
    const json block = run_json(qwen + " --fp8-recipe blockwise");
    CHECK(block["plan"]["fp8_recipe"] == "blockwise");
    CHECK(block["compute_s"].get<double>() > delayed["compute_s"].get<double>());
    CHECK(block["ep_comm_s"].get<double>() == Approx(delayed["ep_comm_s"].get<double>()));
    require_invalid("step --model llama3-8b --cluster dgx-h100 --gpus 8 --fp8-recipe blockwise", "fp8_recipe");
    CHECK(run_json(plan8b + " --fp8-recipe blockwise")["plans"][0]["step_s"].get<double>() >
          best_delayed["plans"][0]["step_s"].get<double>());
}

TEST_CASE("step: --first-last-layers-bf16 with Megatron-Core's counts, and the plan keys") {
    const std::string base = "step --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 8192 --global-batch 64 --dtype mxfp8";
    const json plain = run_json(base);
    const json mixed = run_json(base + " --first-last-layers-bf16");
    const json more = run_json(base + " --first-last-layers-bf16 --num-layers-at-start-in-bf16 2 --num-layers-at-end-in-bf16 4");
    CHECK_FALSE(plain["plan"].contains("first_last_layers_bf16"));
    CHECK(mixed["plan"]["first_last_layers_bf16"] == true);
    CHECK(mixed["plan"]["num_layers_at_start_in_bf16"] == 1);  // Megatron-Core's defaults
    CHECK(mixed["plan"]["num_layers_at_end_in_bf16"] == 1);
    CHECK(more["plan"]["num_layers_at_end_in_bf16"] == 4);
    // BF16 layers are slower than MXFP8 ones: 6 of them cost 3 times what 2 cost, on the one stage
    const double two = mixed["compute_s"].get<double>() - plain["compute_s"].get<double>();
    const double six = more["compute_s"].get<double>() - plain["compute_s"].get<double>();
    CHECK(two > 0.0);
    CHECK(six == Approx(3.0 * two).epsilon(1e-6));
    // the counts without the flag, a count beyond a stage's layers, delayed FP8 scaling: errors naming them
    require_invalid(base + " --num-layers-at-end-in-bf16 2", "--num-layers-at-end-in-bf16");
    require_invalid(base + " --first-last-layers-bf16 --num-layers-at-start-in-bf16 40", "num_layers_at_start_in_bf16");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --gpus 8 --dtype fp8 --fp8-recipe delayed --first-last-layers-bf16",
                    "first_last_layers_bf16");
    // megatron-core's FP8 (current scaling when unsaid) keeps them
    CHECK(run_json("step --model llama3-8b --cluster dgx-h100 --gpus 8 --dtype fp8 --first-last-layers-bf16")["plan"]
              ["first_last_layers_bf16"] == true);
    // plan: every plan with them; 14 layers at the end of a 32-layer model leave pp <= 2 (32 / pp >= 14)
    const std::string plan8b = "plan --model llama3-8b --cluster dgx-b200 --gpus 16 --global-batch 128 --seq 8192 --dtype mxfp8 --top 40";
    const json best_plain = run_json(plan8b);
    const json best_mixed = run_json(plan8b + " --first-last-layers-bf16 --num-layers-at-start-in-bf16 0 --num-layers-at-end-in-bf16 14");
    REQUIRE(best_mixed["plans"].size() > 0);
    for (const auto& x : best_mixed["plans"]) CHECK(x["pp"].get<int>() <= 2);
    CHECK(best_mixed["plans"][0]["step_s"].get<double>() > best_plain["plans"][0]["step_s"].get<double>());
    require_invalid(plan8b + " --num-layers-at-end-in-bf16 2", "--num-layers-at-end-in-bf16");
    require_invalid("plan --model llama3-8b --cluster dgx-b200 --gpus 16 --global-batch 128 --first-last-layers-bf16",
                    "--first-last-layers-bf16");  // a BF16 dtype keeps nothing apart
}

TEST_CASE("model: GPT-OSS's YaRN attention factor, read from its config.json, and what it costs") {
    // HF openai/gpt-oss-120b rope_scaling: yarn, factor 32, no mscale: 0.1 ln 32 + 1
    const json j = run_json("model " + std::string(COMMSCALE_DATA_DIR) + "/models/gpt-oss-120b.json --json");
    REQUIRE(j.contains("rope_attention_factor"));
    CHECK(j["rope_attention_factor"].get<double>() == Approx(0.1 * std::log(32.0) + 1.0).epsilon(1e-12));
    CHECK_FALSE(run_json("model llama3-8b --json").contains("rope_attention_factor"));
    const run_result r = run("model gpt-oss-120b");
    CHECK(r.out.find("YaRN attention factor 1.347") != std::string::npos);
    // the unfused RoPE makes every GPT-OSS step slower than the same model with the fused kernel
    const std::string step = "step --model gpt-oss-120b --cluster gb200-nvl72 --gpus 64 --ep 64 --micro-batch 1 "
                             "--global-batch 1280 --seq 8192 --json";
    json fused_model = run_json("model gpt-oss-120b --json");
    fused_model.erase("rope_attention_factor");
    const auto path = write("gpt_oss_fused_rope.json", fused_model.dump());
    const double unfused_s = run_json(step)["step_s"].get<double>();
    std::string fused_step = step;
    fused_step.replace(fused_step.find("gpt-oss-120b"), std::string("gpt-oss-120b").size(), path.string());
    CHECK(run_json(fused_step)["step_s"].get<double>() < unfused_s);
}
