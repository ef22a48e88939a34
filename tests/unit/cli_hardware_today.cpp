// Today's hardware from the command line: --gpus instead of --nodes, the block-scaled --dtype
// values, the missing-precision error and a step on a GB200 NVL72 rack (CLI.md exit codes and
// one-line errors naming the option).
#include "cli_runner.hpp"

#include <string>

#include <nlohmann/json.hpp>

using namespace cli_test;

namespace {
const std::string llama70b_nvl72 =
    "step --cluster gb200-nvl72 --model llama3-70b --tp 8 --sequence-parallel --micro-batch 1 --global-batch 144 "
    "--seq 8192 --json";
}  // namespace

TEST_CASE("gpus flag: the node count is GPUs over GPUs per node") {
    const auto by_gpus = run_json(llama70b_nvl72 + " --gpus 144");
    const auto by_nodes = run_json(llama70b_nvl72 + " --nodes 2");
    CHECK(by_gpus["nodes"].get<int>() == 2);
    CHECK(by_gpus["step_s"].get<double>() == Approx(by_nodes["step_s"].get<double>()));
    const auto coll = run_json("collective --cluster dgx-h100 --gpus 32 --op all_reduce --bytes 1GiB --json");
    CHECK(coll["nodes"].get<int>() == 4);
    CHECK(coll["ranks"].get<int>() == 32);
}

TEST_CASE("gpus flag: an N the node size does not divide, or both flags, is an error") {
    require_invalid("step --cluster gb200-nvl72 --model llama3-70b --tp 8 --gpus 100", "--gpus");
    const auto r = run("step --cluster gb200-nvl72 --model llama3-70b --tp 8 --gpus 100");
    CHECK(r.err.find("100") != std::string::npos);
    CHECK(r.err.find("72 GPUs per node") != std::string::npos);
    require_invalid("step --cluster dgx-h100 --model llama3-8b --gpus 16 --nodes 2", "--gpus");
    require_invalid("collective --cluster dgx-h100 --gpus 12 --op all_reduce --bytes 1GiB", "--gpus");
    require_invalid("sweep --cluster dgx-h100 --gpus 16 --nodes 2 --op all_reduce --min 1KiB --max 1MiB", "--gpus");
    require_invalid("scale --cluster dgx-h100 --model llama3-8b --gpus 8,12", "--gpus");
}

TEST_CASE("scale --gpus lists GPU counts") {
    const auto j = run_json("scale --cluster dgx-h100 --model llama3-8b --gpus 8,16,32 --json");
    REQUIRE(j["rows"].size() == 3);
    CHECK(j["rows"][0]["nodes"].get<int>() == 1);
    CHECK(j["rows"][2]["nodes"].get<int>() == 4);
    CHECK(j["rows"][2]["gpus"].get<int>() == 32);
}

TEST_CASE("dtype flag: mxfp8 and nvfp4 run on Blackwell and raise the GEMM rate over bf16") {
    const auto bf16 = run_json(llama70b_nvl72 + " --gpus 72 --dtype bf16");
    const auto mx = run_json(llama70b_nvl72 + " --gpus 72 --dtype mxfp8");
    const auto nv = run_json(llama70b_nvl72 + " --gpus 72 --dtype nvfp4");
    CHECK(mx["compute_s"].get<double>() < bf16["compute_s"].get<double>());
    CHECK(nv["compute_s"].get<double>() < mx["compute_s"].get<double>());
    CHECK(mx["plan"]["dtype"].get<std::string>() == "mxfp8");
}

TEST_CASE("dtype flag: a precision the accelerator lacks is an error naming what it supports") {
    require_invalid("step --cluster mi355x-roce --model llama3-8b --dtype nvfp4", "--dtype");
    const auto r = run("step --cluster mi355x-roce --model llama3-8b --dtype nvfp4");
    CHECK(r.err.find("mi355x supports: fp32, bf16, fp16, fp8, mxfp8, fp4") != std::string::npos);
    CHECK(r.err.find("nvfp4") != std::string::npos);
    require_invalid("step --cluster dgx-h100 --model llama3-8b --dtype mxfp8", "--dtype");
    require_invalid("scale --cluster dgx-h100 --model llama3-8b --nodes 1,2 --dtype nvfp4", "--dtype");
    require_invalid("step --cluster dgx-h100 --model llama3-8b --dtype fp6", "--dtype");
}

TEST_CASE("gb200-nvl72: Llama 3 70B TP8 on two racks gives a verdict") {
    const auto j = run_json(llama70b_nvl72 + " --gpus 144 --dtype mxfp8");
    CHECK(j["mfu"].get<double>() > 0.1);
    CHECK(j["mfu"].get<double>() < 0.9);
    CHECK(j["fits_in_memory"].get<bool>());
    CHECK(j["cluster"].get<std::string>().rfind("gb200-nvl72", 0) == 0);
}
