// The `plan` and `plan-merge` commands, run as a user would (CLI.md "Calibration and planning":
// keys, exit codes, errors naming the option; sharded runs merged equal the unsharded run).
#include "catch_shim.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

namespace {
struct result {
    int rc;
    std::string out;  // stdout and stderr together
};

result run(const std::string& args) {
    const std::string cmd = std::string(COMMSCALE_CLI_PATH) + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

nlohmann::json run_json(const std::string& args) {
    const auto r = run(args + " --json");
    INFO(args << "\n" << r.out);
    REQUIRE(r.rc == 0);
    return nlohmann::json::parse(r.out);
}

std::filesystem::path temp_dir() {
    auto d = std::filesystem::temp_directory_path() / ("commscale_cli_plan_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
}

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
    const auto dir = temp_dir();
    std::string files;
    for (int i = 0; i < 3; ++i) {
        const auto f = (dir / ("shard-" + std::to_string(i) + ".json")).string();
        const auto r = run(small + " --shard " + std::to_string(i) + "/3 --out " + f);
        INFO(r.out);
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
    auto missing = run("plan-merge " + f0 + " " + f1);
    CHECK(missing.rc == 2);
    CHECK_THAT(missing.out, Catch::Matchers::Contains("2/3"));
    auto twice = run("plan-merge " + f0 + " " + f0 + " " + f1);
    CHECK(twice.rc == 2);
    CHECK_THAT(twice.out, Catch::Matchers::Contains("shard"));
    const auto other = (dir / "other.json").string();
    REQUIRE(run("plan --model llama2-7b --gpus 16 --global-batch 64 --top 40 --shard 2/3 --out " + other).rc == 0);
    auto mixed = run("plan-merge " + f0 + " " + f1 + " " + other);
    CHECK(mixed.rc == 2);
    CHECK_THAT(mixed.out, Catch::Matchers::Contains("global_batch"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("plan: invalid input exits 2 naming the option") {
    auto r = run("plan --model gpt3-175b --gpus 1020 --global-batch 1536");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--gpus"));
    r = run("plan --model gpt3-175b --gpus 1024");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--global-batch"));
    r = run("plan --model gpt3-175b --global-batch 1536");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--gpus"));
    for (const char* bad : {"3/3", "x/2", "1", "-1/2", "1/0"}) {
        r = run(std::string("plan --gpus 8 --global-batch 8 --shard ") + bad);
        INFO(bad);
        CHECK(r.rc == 2);
        CHECK_THAT(r.out, Catch::Matchers::Contains("--shard"));
    }
    r = run("plan --gpus 16 --nodes 4 --global-batch 8");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--gpus"));
    r = run("plan-merge /nonexistent/shard.json");
    CHECK(r.rc == 2);
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
