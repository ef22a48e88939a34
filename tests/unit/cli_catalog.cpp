// The catalog commands of the CLI (CLI.md "Catalog"): run the built binary and check its output
// and exit codes.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/links.hpp>

#include "catch_shim.hpp"

namespace {

struct run_result {
    int exit_code = -1;
    std::string out;  // stdout, or stdout + stderr when merged
};

/// Runs `commscale ARGS` through the shell; `merge_stderr` appends 2>&1.
run_result run_cli(const std::string& args, bool merge_stderr = false) {
    const std::string cmd = std::string("'") + COMMSCALE_CLI_PATH + "' " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
    run_result r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace

TEST_CASE("commscale link nvlink4 --json prints 450 GB/s per direction and 900 duplex") {
    const run_result r = run_cli("link nvlink4 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("name") == "nvlink4");
    CHECK(j.at("kind") == "scale_up");
    CHECK(j.at("per_direction_GBps").get<double>() == 450.0);
    CHECK(j.at("duplex_GBps").get<double>() == 900.0);
    CHECK(j.at("latency_us").is_null());
    CHECK(j.at("lanes").get<int>() == 2);
    CHECK(j.at("links").get<int>() == 18);
    CHECK(j.contains("source"));
}

TEST_CASE("commscale link ib-hdr-4x --json: 200 Gbps = 25 GB/s, latency 0.6 us") {
    const run_result r = run_cli("link ib-hdr-4x --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("per_direction_GBps").get<double>() == Approx(25.0));
    CHECK(j.at("latency_us").get<double>() == Approx(0.6));
}

TEST_CASE("an unknown link name exits 2 with one line suggesting the closest names") {
    const run_result r = run_cli("link nvlnk4", true);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Matchers::Contains("nvlink4") && Catch::Matchers::Contains("did you mean") &&
                          Catch::Matchers::Contains("nvlnk4"));
    CHECK(r.out.find('\n') == r.out.size() - 1);  // one line
    const run_result a = run_cli("accelerator h100 --json", true);
    CHECK(a.exit_code == 2);
    CHECK_THAT(a.out, Catch::Matchers::Contains("h100-sxm"));
    CHECK(run_cli("link").exit_code == 2);                 // missing NAME
    CHECK(run_cli("links --kind sideways").exit_code == 2);  // bad filter
}

TEST_CASE("commscale links --json lists the whole catalog; --kind filters it") {
    const run_result r = run_cli("links --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.at("links").size() == commscale::all_links().size());
    for (const auto& e : j.at("links")) {
        CHECK(e.contains("per_direction_GBps"));
        CHECK(e.at("duplex_GBps").get<double>() == Approx(2.0 * e.at("per_direction_GBps").get<double>()));
    }
    const auto up = nlohmann::json::parse(run_cli("links --kind scale_up --json").out);
    for (const auto& e : up.at("links")) CHECK(e.at("kind") == "scale_up");
    CHECK(up.at("links").size() < j.at("links").size());
    const run_result table = run_cli("links");
    CHECK(table.exit_code == 0);
    CHECK_THAT(table.out, Catch::Matchers::Contains("pcie5-x16") && Catch::Matchers::Contains("ib-gdr-8x"));
}

TEST_CASE("commscale accelerator h100-sxm --json and accelerators --json") {
    const run_result r = run_cli("accelerator h100-sxm --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("memory_GiB").get<double>() == 80.0);
    CHECK(j.at("memory_bandwidth_GBps").get<double>() == Approx(3350.0));
    CHECK(j.at("peak_tflops").at("bf16").get<double>() == Approx(989.5));
    CHECK(j.at("peak_tflops").at("fp8").get<double>() == Approx(1979.0));
    CHECK(j.at("scale_up_link") == "nvlink4");
    const auto v100 = nlohmann::json::parse(run_cli("accelerator v100-sxm2 --json").out);
    CHECK(v100.at("peak_tflops").at("bf16").is_null());
    const auto all = nlohmann::json::parse(run_cli("accelerators --json").out);
    CHECK(all.at("accelerators").size() == commscale::all_accelerators().size());
    const run_result table = run_cli("accelerators");
    CHECK(table.exit_code == 0);
    CHECK_THAT(table.out, Catch::Matchers::Contains("mi300x") && Catch::Matchers::Contains("1307.4"));
    CHECK(run_cli("accelerator gaudi2").exit_code == 0);
    CHECK(run_cli("link tcpxo --help").exit_code == 0);
}
