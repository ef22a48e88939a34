// The `step` and `scale` commands, run as a user would (CLI.md "Training step": keys, exit
// codes, one-line errors naming the option, atomic SVG output).
#include "catch_shim.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
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
}  // namespace

TEST_CASE("step: the demo runs with no arguments and prints a verdict") {
    const auto r = run("step");
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK_THAT(r.out, Catch::Matchers::Contains("gpt3-175b"));
    CHECK_THAT(r.out, Catch::Matchers::Contains("verdict:"));
    CHECK_THAT(r.out, Catch::Matchers::Contains("MFU"));
}

TEST_CASE("step --json carries every CLI.md key with sane values") {
    const auto j = run_json("step");
    for (const char* k : {"step_s", "compute_s", "bubble_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "dp_comm_exposed_s",
                          "exposed_comm_s", "bottleneck", "mfu", "hfu", "tflops_per_gpu", "tokens_per_s",
                          "memory_per_gpu_GiB", "fits_in_memory", "required_inter_node_Gbps"}) {
        INFO(k);
        CHECK(j.contains(k));
    }
    const std::string b = j["bottleneck"];
    CHECK((b == "compute" || b == "tp_comm" || b == "pp_comm" || b == "dp_comm" || b == "bubble" || b == "memory"));
    CHECK(j["mfu"].get<double>() > 0.2);
    CHECK(j["mfu"].get<double>() < 0.7);
    CHECK(j["hfu"].get<double>() >= j["mfu"].get<double>());
    // step = compute + bubble + exposed communication
    CHECK(j["step_s"].get<double>() ==
          Approx(j["compute_s"].get<double>() + j["bubble_s"].get<double>() + j["exposed_comm_s"].get<double>()));
    // tokens/s = global batch x seq / step
    CHECK(j["tokens_per_s"].get<double>() == Approx(512.0 * 2048.0 / j["step_s"].get<double>()));
    CHECK(j["fits_in_memory"].get<bool>());
}

TEST_CASE("step: a plan that does not fit says memory") {
    const auto j = run_json("step --model llama2-70b --cluster dgx-a100 --tp 8 --global-batch 8");
    CHECK(j["bottleneck"] == "memory");
    CHECK_FALSE(j["fits_in_memory"].get<bool>());
}

TEST_CASE("step: invalid input exits 2 with one line naming the option") {
    auto r = run("step --model llama2-7b --cluster dgx-a100 --tp 3");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--tp"));
    r = run("step --model llama2-7b --cluster dgx-a100 --recompute some");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--recompute"));
    r = run("step --model llama2-7b --cluster dgx-a100 --schedule zigzag");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--schedule"));
    r = run("step --model llama2-7b --cluster dgx-a100 --global-batch 12 --micro-batch 1");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("global_batch"));
    r = run("step --model llama2-7b --cluster dgx-a100 --compute-efficiency 1.5");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--compute-efficiency"));
    r = run("step --model llama2-7b --cluster dgx-a100 --bucket 10Gbps");
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("--bucket"));
    r = run("step --model llama2-7b --cluster dgx-a100 --dtype fp8");  // A100 has no fp8 peak
    CHECK(r.rc == 2);
}

TEST_CASE("step --svg and scale --svg write standalone SVG files") {
    const auto dir = std::filesystem::temp_directory_path();
    const auto step_svg = (dir / "commscale_cli_step.svg").string();
    const auto scale_svg = (dir / "commscale_cli_scale.svg").string();
    std::filesystem::remove(step_svg);
    std::filesystem::remove(scale_svg);
    CHECK(run("step --svg " + step_svg).rc == 0);
    CHECK(run("scale --model gpt2-large --cluster dgx-a100 --micro-batch 4 --nodes 1,2,4 --svg " + scale_svg).rc == 0);
    for (const auto& f : {step_svg, scale_svg}) {
        std::ifstream in(f);
        const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        CHECK(s.rfind("<svg", 0) == 0);
        CHECK_THAT(s, Catch::Matchers::Contains("</svg>"));
        std::filesystem::remove(f);
    }
}

TEST_CASE("scale: rows per node count with efficiency, first row 1") {
    const auto j = run_json("scale --model gpt2-large --cluster dgx-a100 --micro-batch 4 --nodes 1,2,4,8");
    REQUIRE(j["rows"].size() == 4);
    CHECK(j["rows"][0]["efficiency"].get<double>() == Approx(1.0));
    CHECK(j["rows"][3]["nodes"] == 8);
    CHECK(j["rows"][3]["dp"] == 64);
    CHECK(j["rows"][3]["global_batch"] == 256);  // weak scaling: 4 per replica
    for (const auto& row : j["rows"]) {
        CHECK(row["efficiency"].get<double>() > 0);
        CHECK(row["efficiency"].get<double>() <= 1.0 + 1e-9);
    }
    const auto s = run_json("scale --model gpt2-large --cluster dgx-a100 --micro-batch 4 --global-batch 64 --nodes 1,2 --strong");
    CHECK(s["rows"][1]["global_batch"] == 64);
    const auto bad = run("scale --model gpt2-large --cluster dgx-a100 --nodes 1,,2");
    CHECK(bad.rc == 2);
    CHECK_THAT(bad.out, Catch::Matchers::Contains("--nodes"));
}
