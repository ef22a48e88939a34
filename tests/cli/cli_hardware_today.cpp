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
    const auto by_nodes = run_json(llama70b_nvl72 + " --nodes 36");
    CHECK(by_gpus["nodes"].get<int>() == 36);  // 36 compute trays = 2 racks
    CHECK(by_gpus["step_s"].get<double>() == Approx(by_nodes["step_s"].get<double>()));
    const auto coll = run_json("collective --cluster dgx-h100 --gpus 32 --op all_reduce --bytes 1GiB --json");
    CHECK(coll["nodes"].get<int>() == 4);
    CHECK(coll["ranks"].get<int>() == 32);
}

TEST_CASE("gpus flag: an N the node size does not divide, or both flags, is an error") {
    require_invalid("step --cluster gb200-nvl72 --model llama3-70b --tp 8 --gpus 102", "--gpus");
    const auto r = run("step --cluster gb200-nvl72 --model llama3-70b --tp 8 --gpus 102");
    CHECK(r.err.find("102") != std::string::npos);
    CHECK(r.err.find("4 GPUs per node") != std::string::npos);
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

TEST_CASE("gb200-nvl72: --gpus 100 is a full rack and part of another (25 trays)") {
    const auto j = run_json("step --cluster gb200-nvl72 --model llama3-70b --tp 4 --sequence-parallel --micro-batch 1 "
                            "--global-batch 100 --seq 8192 --gpus 100 --json");
    CHECK(j["nodes"].get<int>() == 25);
    CHECK(j["step_s"].get<double>() > 0.0);
}

TEST_CASE("scale-up-domain flag: the NVL72 domain, cut to the tray with 4, a non-multiple is an error") {
    const std::string ag = "collective --cluster gb200-nvl72 --gpus 8 --op all_gather --bytes 1GiB --json";
    const auto rack = run_json(ag);
    CHECK(rack["nodes"].get<int>() == 1);  // one NVLink domain
    CHECK(rack["busbw_GBps"].get<double>() > 0.6 * 900.0);
    const auto tray = run_json(ag + " --scale-up-domain 4");
    CHECK(tray["nodes"].get<int>() == 2);  // two trays: the ring crosses their 4 x 400G NICs (200 GB/s)
    CHECK(tray["busbw_GBps"].get<double>() < 200.0);
    CHECK(tray["busbw_GBps"].get<double>() < 0.3 * rack["busbw_GBps"].get<double>());
    require_invalid(ag + " --scale-up-domain 6", "--scale-up-domain");
    require_invalid("collective --cluster mi300x-roce --nodes 2 --op all_gather --bytes 1GiB --scale-up-domain 16",
                    "--scale-up-domain");
    const auto c = run_json("cluster gb200-nvl72 --json");
    CHECK(c["scale_up_domain"].get<int>() == 72);
    CHECK(c["gpus_per_node"].get<int>() == 4);
}

TEST_CASE("algo pat: NCCL's PAT on one GPU per node from the command line") {
    const auto j = run_json("collective --cluster dgx-a100 --nodes 8 --ranks 8 --ranks-per-node 1 --op all_gather "
                            "--bytes 64 --algo pat --efficiency ideal --json");
    CHECK(j["algorithm"].get<std::string>() == "pat");
    require_invalid("collective --cluster dgx-a100 --nodes 2 --op all_gather --bytes 64 --algo pat", "algo");
}

TEST_CASE("plan on gb200-nvl72: TP may span the rack's NVLink domain") {
    const std::string base = "plan --cluster gb200-nvl72 --model llama3-70b --gpus 144 --global-batch 144 --seq 8192 "
                             "--top 1 --threads 1 --json";
    const auto j = run_json(base);
    CHECK(j["space"]["scale_up_domain"].get<int>() == 72);
    const auto tray = run_json(base + " --scale-up-domain 4");
    CHECK(tray["space"]["scale_up_domain"].get<int>() == 4);
    CHECK(j["plans"][0]["step_s"].get<double>() <= tray["plans"][0]["step_s"].get<double>());
}
