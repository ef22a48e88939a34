// Tests of `commscale fit`, run through the built binary (COMMSCALE_CLI_PATH): exit codes (0 / 2),
// the JSON keys of CLI.md, the published 8 x A100 all-reduce figures, --out readable back by
// --cluster, and no partial file on error.
#include "cli_runner.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace cli_test;

namespace {

const std::string a100_log = std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/ml_engineering_a100_allreduce.log";

}  // namespace

TEST_CASE("fit on the 8 x A100 all-reduce log: exit 0, CLI.md keys, published peak") {
    const auto r = run("fit \"" + a100_log + "\" --json");
    REQUIRE(r.rc == 0);
    const json j = json::parse(r.out);
    for (const char* k : {"op", "ranks", "nodes", "rows", "latency_us", "bandwidth_GBps", "peak_busbw_GBps", "efficiency",
                          "median_rel_error", "cv_median_rel_error", "r2"})
        CHECK(j.contains(k));
    CHECK(j["op"] == "all_reduce");
    CHECK(j["ranks"] == 8);
    CHECK(j["nodes"] == 1);
    CHECK(j["rows"] == 20);
    // Inferred topology: the A100 device lines select dgx-a100.
    CHECK(j["cluster"] == "dgx-a100");
    // Published peak busbw 234.89 GB/s at 16 GiB (ml-engineering-networking): within 2%.
    CHECK(std::abs(j["peak_busbw_GBps"].get<double>() / 234.9 - 1.0) < 0.02);
    // The 32 KiB row (43.83 us) is latency-bound: the latency floor is below it.
    CHECK(j["latency_us"].get<double>() <= 43.83);
    CHECK(j["cv_median_rel_error"].get<double>() <= 0.05);
}

TEST_CASE("fit reads stdin and agrees with the file") {
    const auto f = run("fit \"" + a100_log + "\" --json");
    const auto s = run("fit - --json", a100_log);
    REQUIRE(s.rc == 0);
    CHECK(json::parse(s.out)["peak_busbw_GBps"] == json::parse(f.out)["peak_busbw_GBps"]);
}

TEST_CASE("fit --out writes a cluster that --cluster reads and that reproduces the 1 GiB row") {
    const fs::path file = scratch() / "calibrated.json", svg = scratch() / "fit.svg";
    const auto r = run("fit \"" + a100_log + "\" --json --out \"" + file.string() + "\" --svg \"" + svg.string() + "\"");
    REQUIRE(r.rc == 0);
    REQUIRE(fs::exists(file));
    // The plot: measured squares over the fitted curve on a log2 size axis with every size labelled
    // (32 KiB .. 16 GiB in the published table), and the error panel under it.
    const std::string plot = slurp(svg);
    CHECK(plot.find("<svg") != std::string::npos);
    CHECK(plot.find("</svg>") != std::string::npos);
    for (const char* label : {">32KiB<", ">1MiB<", ">1GiB<", ">16GiB<", ">busbw (GB/s)<", ">fit error per size<", ">measured<"})
        CHECK(plot.find(label) != std::string::npos);
    CHECK(plot.find("<rect") != std::string::npos);  // measured rows
    CHECK(plot.find("nan") == std::string::npos);
    const auto c = run("collective --op all_reduce --bytes 1073741824 --cluster \"" + file.string() + "\" --json");
    REQUIRE(c.rc == 0);
    // The table's 1 GiB row: 8203.9 us (busbw 229.04 GB/s); the calibrated description within 5%.
    const double t = json::parse(c.out)["time_us"].get<double>();
    CHECK(std::abs(t / 8203.9 - 1.0) < 0.05);
    // Uncalibrated default preset for comparison is a different description: the file carries a calibration.
    CHECK(json::parse(slurp(file)).contains("calibration"));
}

TEST_CASE("fit: empty, garbage or missing input exits 2 with one stderr line and no output file") {
    const std::string data = COMMSCALE_TEST_DATA_DIR;
    const fs::path file = scratch() / "never.json";
    for (const std::string& args : {"fit \"" + data + "/nccl-tests/empty.log\"", "fit \"" + data + "/nccl-tests/garbage.bin\"",
                                   "fit \"" + data + "/nccl-tests/whitespace_only.log\"", std::string("fit -"),
                                   std::string("fit /nonexistent/log.txt"), "fit \"" + a100_log + "\" --op all_gather"}) {
        const auto r = run(args + " --out \"" + file.string() + "\"");
        INFO(args << " -> " << r.err);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.err) == 1);
        CHECK(r.out.empty());
        CHECK_FALSE(fs::exists(file));
    }
    const auto none = run("fit");
    CHECK(none.rc == 2);
}

TEST_CASE("fit: one row, one size, bad values or an unknown --op exit 2 with one stderr line") {
    const std::string head =
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    auto row = [](const std::string& size, const std::string& time) {
        return "  " + size + "  256  float  sum  -1  " + time + "  0.05  0.08  0  " + time + "  0.05  0.08  0\n";
    };
    std::string same;
    for (int i = 0; i < 12; ++i) same += row("1024", "22.0");
    std::string nan_rows;
    for (int i = 0; i < 12; ++i) nan_rows += row(std::to_string(1024 << i), i % 2 ? "nan" : "-3.0");
    const std::vector<std::pair<std::string, std::string>> cases{
        {"one_row.log", head + row("1024", "22.0")}, {"same_size.log", head + same}, {"nan_rows.log", head + nan_rows}};
    for (const auto& [name, text] : cases) {
        const fs::path p = scratch() / name;
        std::ofstream(p) << text;
        const auto r = run("fit \"" + p.string() + "\" --json");
        INFO(name << " -> " << r.err);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.err) == 1);
        CHECK(r.out.find("nan") == std::string::npos);
    }
    const auto bad_op = run("fit \"" + a100_log + "\" --op allreduce_sum");
    INFO(bad_op.err);
    CHECK(bad_op.rc == 2);
    CHECK(bad_op.err.find("--op") != std::string::npos);
}

TEST_CASE("fit: an unwritable --out fails before --svg is written, leaving no file behind") {
    const fs::path svg = scratch() / "not-written.svg";
    fs::remove(svg);
    const auto r = run("fit \"" + a100_log + "\" --svg \"" + svg.string() + "\" --out /nonexistent-dir/calibrated.json");
    INFO(r.err);
    CHECK(r.rc == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find("--out") != std::string::npos);
    CHECK_FALSE(fs::exists(svg));
}

TEST_CASE("fit on a 4-row log: latency and efficiency fitted with uncertainties, the rest kept") {
    // Four rows of the 8 x A100 all-reduce log (32 KiB, 1 MiB, 32 MiB, 1 GiB), with its header and
    // device lines. A 4-row table used to be refused (8 parameters need 9 rows).
    std::string text, line;
    std::ifstream in(a100_log);
    int row = 0;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == '#') {
            text += line + "\n";
            continue;
        }
        if (line.find_first_not_of(' ') == std::string::npos) continue;
        if (row++ % 5 == 0) text += line + "\n";
    }
    const fs::path p = scratch() / "four_rows.log";
    std::ofstream(p) << text;
    const auto r = run("fit \"" + p.string() + "\" --json");
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const json j = json::parse(r.out);
    CHECK(j["rows"] == 4);
    REQUIRE(j.contains("fitted"));
    REQUIRE(j.contains("kept"));
    for (const char* k : {"efficiency", "step_latency_LL_us", "step_latency_LL128_us", "step_latency_Simple_us"}) {
        INFO(k);
        REQUIRE(j["fitted"].contains(k));
        CHECK(j["fitted"][k]["uncertainty"].get<double>() > 0.0);
    }
    CHECK(j["step_latencies_tied"] == true);
    for (const char* k : {"half_size_bytes", "exponent", "LL_fraction", "LL128_fraction"})
        CHECK(std::find(j["kept"].begin(), j["kept"].end(), json(k)) != j["kept"].end());
    // A fitted latency: the 32 KiB row takes 43.83 us, the preset's base latency is 6.6 us.
    CHECK(j["latency_us"].get<double>() > 20.0);
    CHECK(j["latency_us"].get<double>() <= 43.83);
    CHECK(j["latency_sigma_us"].get<double>() > 0.0);
    // Published peak busbw 234.9 GB/s (16 GiB, a row not given): within 10%.
    CHECK(std::abs(j["peak_busbw_GBps"].get<double>() / 234.9 - 1.0) < 0.10);
    // Leave-one-out over the 4 rows exists.
    CHECK(j["cv_median_rel_error"].is_number());
    // The text output lists fitted and kept parameters.
    const auto t = run("fit \"" + p.string() + "\"");
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("efficiency") != std::string::npos);
    CHECK(t.out.find("kept at the prior: half_size_bytes exponent LL_fraction LL128_fraction") != std::string::npos);
}

TEST_CASE("fit on a log of two collectives fits them jointly, --op picks one") {
    const std::string two = std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/two_collectives.log";
    const auto r = run("fit \"" + two + "\" --json");
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const json j = json::parse(r.out);
    CHECK(j["op"] == "all_reduce");
    REQUIRE(j["ops"].size() == 2);
    CHECK(j["ops"][1] == "all_gather");
    CHECK(j["ranks"] == 8);
    CHECK(j["rows"] == 12);  // 6 all_reduce + 6 all_gather rows
    CHECK(j["cv_median_rel_error"].is_null());  // no cross-validation of a joint fit
    CHECK(std::isfinite(j["median_rel_error"].get<double>()));
    const auto one = run("fit \"" + two + "\" --op all_gather --json");
    REQUIRE(one.rc == 0);
    const json k = json::parse(one.out);
    CHECK(k["ops"].size() == 1);
    CHECK(k["op"] == "all_gather");
    CHECK(k["rows"] == 6);
    const auto text = run("fit \"" + two + "\"");
    CHECK(text.out.rfind("all_reduce + all_gather on 8 ranks", 0) == 0);
}
