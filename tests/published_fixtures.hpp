#pragma once
// Fixtures shared by the tests that hold the step model against published runs typed into a runs
// CSV (tests/data/published/): the file's runs, one line per run for the failure messages, and the
// checks every run of a table of published runs passes. Include after catch_shim.hpp.

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <commscale/calibrate/accuracy.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/training_runs.hpp>

namespace published_test {

/// The runs of tests/data/published/`file`.
inline std::vector<commscale::training_run> runs_of(const std::string& file) {
    return commscale::io::load_training_runs(std::string(COMMSCALE_TEST_DATA_DIR) + "/published/" + file);
}

/// "label: predicted P, published M (E%; rule of thumb R%)", for INFO.
inline std::string describe(const commscale::accuracy_run& r) {
    std::ostringstream s;
    s << r.label << ": predicted " << r.predicted_tokens_per_s_per_gpu << ", published " << r.measured_tokens_per_s_per_gpu
      << " (" << 100 * r.rel_error << "%; rule of thumb " << 100 * r.rule_rel_error << "%)";
    return s.str();
}

/// The accuracy report of tests/data/published/`file`, which holds `expected_runs` runs, each
/// naming its cluster, every run checked: expressible, fitting in memory (its publisher ran it),
/// compute-bound, and within `bound` of its published tokens/s per GPU.
inline commscale::accuracy_report checked_report(const std::string& file, std::size_t expected_runs, double bound) {
    const auto runs = runs_of(file);
    REQUIRE(runs.size() == expected_runs);
    const commscale::accuracy_report report = commscale::accuracy(runs, commscale::presets::dgx_h100);
    REQUIRE(report.runs.size() == runs.size());
    for (const auto& r : report.runs) {
        INFO(describe(r));
        REQUIRE(r.expressible);
        CHECK(r.fits_in_memory);
        CHECK(r.bottleneck == "compute");
        CHECK(std::fabs(r.rel_error) <= bound);
    }
    return report;
}

/// The table's median |error| within `aim` (the aims: 10% dense Hopper, 12% Blackwell)
/// and below the 40%-MFU rule of thumb's.
inline void check_median_beats_rule(const commscale::accuracy_report& report, double aim) {
    INFO("median |error| " << 100 * report.overall.median_abs_error << "% (rule of thumb "
                           << 100 * report.overall.rule_median_abs_error << "%)");
    CHECK(report.overall.median_abs_error <= aim);
    CHECK(report.overall.median_abs_error < report.overall.rule_median_abs_error);
}

}  // namespace published_test
