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
    // 1923 = 3 x 641: dp = 641 divides it; pp must be 1 (gcd(105, 5128) = 1)
    const auto k = run_json("plan --model mt-nlg-530b --cluster dgx-a100 --gpus 5128 --global-batch 1923 --top 3");
    REQUIRE(!k["plans"].empty());
    for (const auto& p : k["plans"]) {
        CHECK(p["pp"].get<int>() == 1);
        CHECK(p["dp"].get<int>() % 641 == 0);
    }
}
