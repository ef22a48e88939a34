// Tests of `commscale fit-compute`, run through the built binary: on the calibration set it prints
// the constants that predict/compute.hpp holds (the library's own fit is tested in fit_compute.cpp),
// its JSON keys and the leave-out errors, and errors for bad input that name the file and field.
#include "cli_runner.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <commscale/predict/compute.hpp>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace cli_test;

namespace {
const std::string fit_compute_runs_csv = std::string(COMMSCALE_DATA_DIR) + "/calibration/published_runs.csv";
}  // namespace

TEST_CASE("fit-compute on the calibration set: the checked-in constants, per-family leave-out errors") {
    const auto r = run("fit-compute \"" + fit_compute_runs_csv + "\" --json");
    REQUIRE(r.rc == 0);
    const json j = json::parse(r.out);
    for (const char* k : {"constants", "parameters", "noise", "moe_noise", "families", "all", "dense", "moe", "runs", "skipped"})
        CHECK(j.contains(k));
    const auto& k = commscale::fitted_compute_constants;
    CHECK(j["constants"]["gemm_shape_efficiency"].get<double>() == Approx(k.gemm_shape_efficiency).epsilon(0.002));
    CHECK(j["constants"]["attention_efficiency"].get<double>() == Approx(k.attention_efficiency).epsilon(0.002));
    CHECK(j["constants"]["te_attention_efficiency"].get<double>() == Approx(k.te_attention_efficiency).epsilon(0.002));
    CHECK(j["constants"]["memory_efficiency"].get<double>() == Approx(k.memory_efficiency).epsilon(0.002));
    CHECK(j["constants"]["kernel_overhead_s"].get<double>() == Approx(k.kernel_overhead_s).epsilon(0.002));
    CHECK(j["constants"]["moe_launch_overhead_s"].get<double>() == Approx(k.moe_launch_overhead_s).epsilon(0.002));
    CHECK(j["runs"].size() == 118);
    CHECK(j["dense"]["runs"].get<int>() == 101);
    CHECK(j["moe"]["runs"].get<int>() == 17);
    CHECK(j["dense"]["leave_one_model_out"].get<double>() <= 0.10);
    CHECK(j["dense"]["leave_one_model_out"].get<double>() < j["dense"]["rule_of_thumb"].get<double>());
    for (const auto& run : j["runs"]) {
        INFO(run["label"].get<std::string>());
        CHECK(run["leave_one_model_out"].is_number());
    }
    // text: the constants with their kernel figures, and the families
    const auto t = run("fit-compute \"" + fit_compute_runs_csv + "\" --no-cross-validation");
    REQUIRE(t.rc == 0);
    CHECK_THAT(t.out, Catch::Contains("fitted to 118 run(s): 101 dense") &&
                          Catch::Contains("te_attention_efficiency") && Catch::Contains("llm-foundry FSDP / A100-40GB / bf16"));
    const json nj = json::parse(run("fit-compute \"" + fit_compute_runs_csv + "\" --no-cross-validation --json").out);
    CHECK(nj["runs"][0]["leave_one_model_out"].is_null());
}

TEST_CASE("fit-compute errors name the file, the row and the field") {
    const fs::path bad = scratch() / "bad_fit_compute.csv";
    {
        std::ofstream f(bad);
        f << "model,gpus,tp,pp,micro_batch,global_batch,tokens_per_s_per_gpu\nllama3-8b,8,1,1,1,64,-5\n";
    }
    const auto r = run("fit-compute \"" + bad.string() + "\"");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains("bad_fit_compute.csv:2") && Catch::Contains("tokens_per_s_per_gpu"));
    const fs::path moe = scratch() / "moe_only.csv";
    {
        std::ofstream f(moe);
        f << "model,cluster,gpus,tp,pp,ep,micro_batch,global_batch,seq,tokens_per_s_per_gpu\n"
             "mixtral-8x7b,dgx-h100,64,1,1,8,1,256,4096,3000\n";
    }
    // MoE runs alone: the dense constants stay at their kernel figures, the MoE stage is fitted
    const auto m = run("fit-compute \"" + moe.string() + "\" --no-cross-validation --json");
    REQUIRE(m.rc == 0);
    const json mj = json::parse(m.out);
    CHECK(mj["constants"]["gemm_shape_efficiency"].get<double>() == Approx(commscale::kernel_constants.gemm_shape_efficiency));
    CHECK(mj["moe"]["runs"].get<int>() == 1);
    const fs::path none = scratch() / "nothing.csv";
    {
        std::ofstream f(none);
        f << "model,gpus,tp,pp,micro_batch,global_batch,tokens_per_s_per_gpu,not_expressible\n"
             "llama3-8b,8,1,1,1,64,1000,not modelled (example)\n";
    }
    const auto n = run("fit-compute \"" + none.string() + "\"");
    CHECK(n.rc == 2);
    CHECK_THAT(n.err, Catch::Contains("runs") && Catch::Contains("at least one run"));
    CHECK(run("fit-compute " + (scratch() / "missing.csv").string()).rc != 0);
}
