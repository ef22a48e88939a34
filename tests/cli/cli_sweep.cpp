// Tests of `commscale sweep --measured LOG`: the prediction set beside a real nccl-tests table
// (ml-engineering's 8 x A100-SXM4-80GB all-reduce, tests/data/nccl-tests/ORIGIN.md), the error per
// size in text, JSON and SVG, and the plot's axes (every size labelled, nothing outside the page).
#include "cli_runner.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::json;
using namespace cli_test;

namespace {

const std::string sweep_a100_log = std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/ml_engineering_a100_allreduce.log";

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

TEST_CASE("sweep --measured: the log's sizes, collective and ranks, measured busbw and error per size in JSON") {
    const json j = run_json("sweep --measured \"" + sweep_a100_log + "\" --cluster dgx-a100 --json");
    const auto& rows = j["rows"];
    // The log sweeps 32 KiB .. 16 GiB by factors of 2: 20 sizes, each predicted and measured.
    REQUIRE(rows.size() == 20);
    CHECK(rows.front()["bytes"] == 32768);
    CHECK(rows.back()["bytes"] == 17179869184LL);
    // Measured values are the log's out-of-place busbw column (lines 17 and 36 of the log).
    CHECK(rows.front()["measured_busbw_GBps"].get<double>() == Approx(1.31));
    CHECK(rows.back()["measured_busbw_GBps"].get<double>() == Approx(234.89));
    CHECK(rows.back()["measured_time_us"].get<double>() == Approx(127997));
    std::vector<double> abs_err;
    for (const auto& r : rows) {
        const double p = r["busbw_GBps"].get<double>(), m = r["measured_busbw_GBps"].get<double>();
        CHECK(r["error_pct"].get<double>() == Approx(100.0 * (p - m) / m).epsilon(1e-9));
        abs_err.push_back(std::abs(r["error_pct"].get<double>()));
    }
    CHECK(j["median_abs_error_pct"].get<double>() == Approx(median(abs_err)).epsilon(1e-12));
    // Bandwidth-bound end: the datasheet NVLink3 model (300 GB/s x NCCL's ~0.8 ring efficiency on
    // A100, REFERENCE.md) against the measured 234.89 GB/s at 16 GiB: within 5%.
    CHECK(std::abs(rows.back()["error_pct"].get<double>()) < 5.0);
    // Without --measured no measurement keys appear.
    const json plain = run_json("sweep --op all_reduce --min 1MiB --max 4MiB --json");
    CHECK_FALSE(plain.contains("median_abs_error_pct"));
    CHECK_FALSE(plain["rows"][0].contains("error_pct"));
}

TEST_CASE("sweep --measured: text table with measured and error columns, --min/--max keep the sweep's sizes") {
    const run_result r = run("sweep --measured \"" + sweep_a100_log + "\" --cluster dgx-a100");
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("measured(GB/s)") != std::string::npos);
    CHECK(r.out.find("error(%)") != std::string::npos);
    CHECK(r.out.find("# median |error|") != std::string::npos);
    // A finer predicted sweep: sizes between the measured ones show "-" in the measured columns.
    const json j = run_json("sweep --measured \"" + sweep_a100_log + "\" --cluster dgx-a100 --min 1MiB --max 4MiB --factor 1.5 --json");
    int with = 0, without = 0;
    for (const auto& row : j["rows"]) (row.contains("error_pct") ? with : without)++;
    CHECK(with == 1);  // 1, 1.5, 2.25, 3.375 MiB: only 1 MiB is a size of the log
    CHECK(without > 0);
}

TEST_CASE("sweep --measured --svg: two panels, every power-of-two size labelled, text inside the page") {
    const auto svg = scratch() / "measured.svg";
    const run_result r = run("sweep --measured \"" + sweep_a100_log + "\" --cluster dgx-a100 --svg " + q(svg));
    REQUIRE(r.rc == 0);
    const std::string s = slurp(svg);
    std::string why;
    CHECK(well_formed_xml(s, why));
    INFO(why);
    for (const char* label : {"32KiB", "64KiB", "128KiB", "256KiB", "512KiB", "1MiB", "2MiB", "4MiB", "8MiB", "16MiB",
                              "32MiB", "64MiB", "128MiB", "256MiB", "512MiB", "1GiB", "2GiB", "4GiB", "8GiB", "16GiB"})
        CHECK(s.find(std::string(">") + label + "</text>") != std::string::npos);
    CHECK(s.find("busbw (GB/s)") != std::string::npos);
    CHECK(s.find("error (%)") != std::string::npos);
    CHECK(s.find("measured") != std::string::npos);
    // Page width from the root element; every text anchor lies inside it.
    const std::regex width_re("<svg[^>]* width=\"([0-9.]+)\"");
    std::smatch m;
    REQUIRE(std::regex_search(s, m, width_re));
    const double width = std::stod(m[1]);
    const std::regex text_x("<text x=\"([-0-9.]+)\"");
    int texts = 0;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), text_x); it != std::sregex_iterator(); ++it, ++texts) {
        const double x = std::stod((*it)[1]);
        CHECK(x >= 0.0);
        CHECK(x <= width);
    }
    CHECK(texts > 40);
    // Y tick labels are round numbers (multiples of 1, 2 or 5 x 10^k): no "233.88"-style ticks.
    CHECK(s.find(">250</text>") != std::string::npos);
}

TEST_CASE("sweep --measured: bad input names --measured") {
    require_invalid("sweep --measured /nonexistent/log.txt", "--measured");
    require_invalid("sweep --measured \"" + sweep_a100_log + "\" --op all_gather", "--measured");
    // The log's 8 ranks on one Baskerville node of 4 GPUs: more ranks than the cluster has.
    require_invalid("sweep --measured \"" + sweep_a100_log + "\" --cluster baskerville --nodes 1", "--measured");
}
