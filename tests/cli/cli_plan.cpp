// The `plan` and `plan-merge` commands, run as a user would (CLI.md "Calibration and planning":
// keys, exit codes, errors naming the option; sharded runs merged equal the unsharded run).
#include "cli_runner.hpp"

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

using namespace cli_test;

namespace {
// LLaMA 2 7B on 2 DGX A100 nodes, 32 sequences: a small space.
const std::string small = "plan --model llama2-7b --cluster dgx-a100 --gpus 16 --global-batch 32 --top 40";
}  // namespace

TEST_CASE("plan --json carries the CLI.md keys, best first, TP inside a node, all fitting") {
    const auto j = run_json(small + " --threads 2");
    for (const char* k : {"evaluated", "feasible", "search_s", "plans", "pareto"}) {
        INFO(k);
        CHECK(j.contains(k));
    }
    CHECK(j["evaluated"].get<long long>() >= j["feasible"].get<long long>());
    CHECK(j["feasible"].get<long long>() > 40);
    REQUIRE(j["plans"].size() == 40);
    double last = 0;
    for (const auto& p : j["plans"]) {
        for (const char* k : {"tp", "pp", "dp", "cp", "ep", "micro_batch", "zero", "recompute", "schedule", "virtual_stages",
                              "step_s", "mfu", "memory_per_gpu_GiB", "bottleneck"}) {
            INFO(k);
            CHECK(p.contains(k));
        }
        CHECK(p["step_s"].get<double>() >= last);
        last = p["step_s"].get<double>();
        CHECK(8 % p["tp"].get<int>() == 0);
        CHECK(p["tp"].get<int>() * p["pp"].get<int>() * p["dp"].get<int>() * p["cp"].get<int>() == 16);
        CHECK(p["memory_per_gpu_GiB"].get<double>() <= 80.0);  // a100-80gb-sxm: 80 GiB in the catalog
        CHECK(p["breakdown"]["fits_in_memory"].get<bool>());
        const std::string b = p["bottleneck"];
        CHECK((b == "compute" || b == "tp_comm" || b == "pp_comm" || b == "dp_comm" || b == "bubble"));
    }
}

TEST_CASE("plan: identical across thread counts") {
    const auto a = run_json(small + " --threads 1");
    const auto b = run_json(small + " --threads 3");
    CHECK(a["plans"] == b["plans"]);
    CHECK(a["pareto"] == b["pareto"]);
    CHECK(a["evaluated"] == b["evaluated"]);
}

TEST_CASE("plan --shard i/N then plan-merge equals the unsharded search") {
    const auto whole = run_json(small + " --threads 2");
    const auto dir = scratch();
    std::string files;
    for (int i = 0; i < 3; ++i) {
        const auto f = (dir / ("shard-" + std::to_string(i) + ".json")).string();
        const auto r = run(small + " --shard " + std::to_string(i) + "/3 --out " + f);
        INFO(r.err);
        REQUIRE(r.rc == 0);
        files += " " + f;
    }
    const auto merged = run_json("plan-merge" + files);
    CHECK(merged["plans"] == whole["plans"]);
    CHECK(merged["pareto"] == whole["pareto"]);
    CHECK(merged["evaluated"] == whole["evaluated"]);
    CHECK(merged["feasible"] == whole["feasible"]);
    CHECK(merged["candidates"] == whole["candidates"]);

    // a missing shard, a duplicated one, or shards of another search are input errors
    const auto f0 = (dir / "shard-0.json").string(), f1 = (dir / "shard-1.json").string();
    require_invalid("plan-merge " + f0 + " " + f1, "2/3");
    require_invalid("plan-merge " + f0 + " " + f0 + " " + f1, "shard");
    const auto other = (dir / "other.json").string();
    REQUIRE(run("plan --model llama2-7b --gpus 16 --global-batch 64 --top 40 --shard 2/3 --out " + other).rc == 0);
    require_invalid("plan-merge " + f0 + " " + f1 + " " + other, "global_batch");

    // tampered shard files: each error names the file and the JSON field
    const auto tampered = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
        auto j = nlohmann::json::parse(slurp(f0));
        edit(j);
        return write(name, j.dump()).string();
    };
    const auto f2 = (dir / "shard-2.json").string();
    auto merge_with = [&](const std::string& bad) { return "plan-merge " + bad + " " + f1 + " " + f2; };
    REQUIRE(!nlohmann::json::parse(slurp(f0))["plans"].empty());
    std::string t = tampered("unknown.json", [](nlohmann::json& j) { j["plans"][0]["sepp"] = 1; });
    require_invalid(merge_with(t), t + ".plans[0].sepp");
    t = tampered("tp3.json", [](nlohmann::json& j) { j["plans"][0]["tp"] = 3; });
    require_invalid(merge_with(t), t + ".plans[0].tp");
    t = tampered("huge_step.json", [](nlohmann::json& j) { j["plans"][0]["step_s"] = 1e300; });
    require_invalid(merge_with(t), t + ".plans[0].step_s");
    t = tampered("bad_shard.json", [](nlohmann::json& j) { j["shard"] = "7/3"; });
    require_invalid(merge_with(t), t + ".shard");
    // a document that is not a JSON object is named, before a later file is read
    // (io::read_search_documents)
    const auto array = write("array.json", "[1]").string();
    require_invalid(merge_with(array), array);
    CHECK_THAT(run(merge_with(array)).err, Catch::Matchers::Contains("expected a `plan --json` object, got an array"));
    require_invalid("plan-merge " + array + " /nonexistent/shard.json", array);
}

TEST_CASE("plan: invalid input exits 2 naming the option") {
    require_invalid("plan --model gpt3-175b --gpus 1020 --global-batch 1536", "--gpus");
    require_invalid("plan --model gpt3-175b --gpus 1024", "--global-batch");
    require_invalid("plan --model gpt3-175b --global-batch 1536", "--gpus");
    for (const char* bad : {"3/3", "x/2", "1", "-1/2", "1/0"})
        require_invalid(std::string("plan --gpus 8 --global-batch 8 --shard ") + bad, "--shard");
    require_invalid("plan --gpus 16 --nodes 4 --global-batch 8", "--gpus");
    require_invalid("plan-merge /nonexistent/shard.json", "/nonexistent/shard.json");
}

TEST_CASE("plan: MT-NLG 530B on 5,128 A100 with batch 2520 has no valid shape, and says why") {
    const auto j = run_json("plan --model mt-nlg-530b --cluster dgx-a100 --gpus 5128 --global-batch 2520");
    CHECK(j["plans"].empty());
    CHECK(j["candidates"].get<long long>() == 0);
    CHECK_THAT(j["note"].get<std::string>(), Catch::Matchers::Contains("105 layers"));
    // 1923 = 3 x 641: dp = 641 divides it; pp must be 1 (gcd(105, 5128) = 1), or 2 with the loss
    // or the embedding counted as a pipeline layer (105 + 1 = 2 x 53); without those, 1
    const std::string k_args = "plan --model mt-nlg-530b --cluster dgx-a100 --gpus 5128 --global-batch 1923 --top 3";
    const auto k = run_json(k_args);
    REQUIRE(!k["plans"].empty());
    for (const auto& p : k["plans"]) {
        const bool counted = p.value("account_for_loss_in_pipeline_split", false) ||
                             p.value("account_for_embedding_in_pipeline_split", false);
        CHECK((p["pp"].get<int>() == 1 || (p["pp"].get<int>() == 2 && counted)));
        CHECK(p["dp"].get<int>() % 641 == 0);
    }
    const auto plain = run_json(k_args + " --no-pipeline-split");
    REQUIRE(!plain["plans"].empty());
    for (const auto& p : plain["plans"]) CHECK(p["pp"].get<int>() == 1);
}

TEST_CASE("plan: searches Megatron-Core's embedding/loss layouts, --no-pipeline-split skips them") {
    // Llama 3.1 405B on 128 H100, PP 16 x V 8 only with both flags (126 + 2 = 128)
    const std::string base = "plan --model llama3-405b --cluster dgx-h100 --gpus 128 --global-batch 64 --seq 8192 "
                             "--max-micro-batch 1 --no-zero-bubble --no-sequence-parallel --max-virtual-stages 8 --top 100000";
    const auto with = run_json(base), without = run_json(base + " --no-pipeline-split");
    CHECK(with["space"]["pipeline_split"] == true);
    CHECK(without["space"]["pipeline_split"] == false);
    CHECK(with["candidates"].get<long long>() > without["candidates"].get<long long>());
    CHECK(with["rejected"] == 0);
    bool found = false;
    for (const auto& p : with["plans"])
        found = found || (p["pp"] == 16 && p["virtual_stages"] == 8 && p.value("account_for_embedding_in_pipeline_split", false) &&
                          p.value("account_for_loss_in_pipeline_split", false));
    CHECK(found);
    for (const auto& p : without["plans"]) CHECK_FALSE(p.contains("account_for_loss_in_pipeline_split"));
}

TEST_CASE("plan: tries full recompute by block of the fewest layers, --no-block-recompute skips it") {
    // Llama 3 70B in FP8 on 64 H100 at 8,192 tokens: some plans fit only with part of the layers
    // recomputed (tests/unit/search/planner.cpp checks the fewest N)
    const std::string base = "plan --model llama3-70b --cluster dgx-h100 --gpus 64 --global-batch 128 --seq 8192 "
                             "--dtype fp8 --max-virtual-stages 5 --top 200";
    const auto with = run_json(base), without = run_json(base + " --no-block-recompute");
    CHECK(with["space"]["block_recompute"] == true);
    CHECK(without["space"]["block_recompute"] == false);
    CHECK(with["evaluated"].get<long long>() > without["evaluated"].get<long long>());
    CHECK(with["plans"][0]["step_s"].get<double>() <= without["plans"][0]["step_s"].get<double>());
    int blocks = 0;
    for (const auto& p : with["plans"])
        if (p.value("recompute_method", std::string()) == "block") {
            ++blocks;
            CHECK(p["recompute"] == "full");
            CHECK(p["recompute_num_layers"].get<int>() >= 1);
        }
    CHECK(blocks > 0);
    for (const auto& p : without["plans"]) CHECK_FALSE(p.contains("recompute_method"));
    // the table names the method and N
    const auto text = run(base);
    REQUIRE(text.rc == 0);
    CHECK(text.out.find("full block ") != std::string::npos);
}

TEST_CASE("plan: tries activation CPU offloading of the fewest layers, --no-cpu-offloading skips it") {
    // Llama 3 70B in FP8 on 64 GB200 (Megatron-Bridge 25.11 runs it with Megatron-FSDP and 40
    // layers offloaded): the best plan offloads (tests/unit/search/planner.cpp checks the fewest N)
    const std::string base = "plan --model llama3-70b --cluster gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
                             "--dtype fp8 --fp8-recipe tensorwise --top 20";
    const auto with = run_json(base), without = run_json(base + " --no-cpu-offloading");
    CHECK(with["space"]["cpu_offloading"] == true);
    CHECK(without["space"]["cpu_offloading"] == false);
    REQUIRE(with["plans"][0].contains("cpu_offloading_num_layers"));
    CHECK(with["plans"][0]["pp"] == 1);
    CHECK(with["plans"][0]["recompute"] == "none");
    CHECK(with["plans"][0]["step_s"].get<double>() < without["plans"][0]["step_s"].get<double>());
    for (const auto& p : without["plans"]) CHECK_FALSE(p.contains("cpu_offloading_num_layers"));
    const auto text = run(base);
    REQUIRE(text.rc == 0);
    CHECK(text.out.find("none, offload ") != std::string::npos);
}

TEST_CASE("plan --gradient-bytes sets every plan's gradient precision, as step's flag") {
    // Megatron-Bridge 25.11's Llama 3 70B FP8 run on 64 GB200 reduces bf16 gradients
    // (grad_reduce_in_fp32 false): with the same setting the search finds that plan or a faster one
    const std::string run_args = "--model llama3-70b --cluster gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
                                 "--dtype fp8 --fp8-recipe tensorwise --gradient-bytes 2";
    const auto best = run_json("plan " + run_args + " --top 1");
    const auto published = run_json("step " + run_args + " --tp 1 --pp 1 --micro-batch 2 --zero 3 --cpu-offloading-num-layers 40");
    REQUIRE(best["plans"].size() == 1);
    CHECK(best["plans"][0]["step_s"].get<double>() <= published["step_s"].get<double>() * (1 + 1e-9));
    const auto wide = run_json("plan --model llama3-70b --cluster gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
                               "--dtype fp8 --fp8-recipe tensorwise --gradient-bytes 4 --top 1");
    CHECK(wide["plans"][0]["breakdown"]["dp_comm_s"].get<double>() > best["plans"][0]["breakdown"]["dp_comm_s"].get<double>());
    require_invalid("plan --model llama3-70b --cluster gb200-nvl72 --gpus 64 --global-batch 256 --gradient-bytes 3",
                    "--gradient-bytes");
}

TEST_CASE("plan --[no-]fp8-param-gather sets every plan's FP8 parameters, as step's flag") {
    // FP8 parameters only take memory away (a per-tensor FP8 weight is 1 byte on GB200, where
    // Transformer Engine keeps no transpose) and change no time, so the plans that fit without them
    // still fit with them: the best step time with them is at most the one without
    const std::string base = "plan --model llama3-70b --cluster gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
                             "--dtype fp8 --fp8-recipe tensorwise --top 5";
    const auto on = run_json(base), off = run_json(base + " --no-fp8-param-gather"),
               said = run_json(base + " --fp8-param-gather");
    REQUIRE(!on["plans"].empty());
    REQUIRE(!off["plans"].empty());
    CHECK(said["plans"] == on["plans"]);  // on is the megatron-core profile's
    CHECK(on["plans"][0]["step_s"].get<double>() <= off["plans"][0]["step_s"].get<double>());
    // a layout in both lists: the same time, and 1 byte less per layer parameter of its FSDP shard
    // (Llama 3 70B: 70.55e9 parameters less the two 128256 x 8192 tables, over 64 ranks)
    const auto key = [](const nlohmann::json& p) {
        nlohmann::json k = p;
        for (const char* x : {"breakdown", "memory_per_gpu_GiB", "memory_per_gpu_bytes", "memory_headroom_GiB"}) k.erase(x);
        return k;
    };
    int common = 0;
    for (const auto& a : on["plans"])
        for (const auto& b : off["plans"])
            if (key(a) == key(b) && a["zero"] == 3 && a["dp"] == 64) {
                ++common;
                const double layer_params = 70.55e9 - 2.0 * 128256.0 * 8192.0;
                CHECK(b["memory_per_gpu_bytes"].get<double>() - a["memory_per_gpu_bytes"].get<double>() ==
                      Approx(layer_params / 64.0).epsilon(0.01));
            }
    CHECK(common > 0);
    require_invalid(base + " --fp8-param-gather --no-fp8-param-gather", "--fp8-param-gather");
}
