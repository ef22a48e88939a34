#pragma once
// Fixtures shared by the tests that hold the step model against published runs typed into a runs
// CSV (tests/data/published/): the file's runs, and one line per run for the failure messages.

#include <sstream>
#include <string>
#include <vector>

#include <commscale/calibrate/accuracy.hpp>
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

}  // namespace published_test
