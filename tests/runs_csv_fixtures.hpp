#pragma once
// Fixture shared by the runs-CSV tests: the input_error that parsing a runs-CSV text throws.

#include <string>
#include <utility>

#include <commscale/io/training_runs.hpp>

namespace runs_test {

/// The input_error (field, message) that parsing runs-CSV `text` as "runs.csv" throws; empty if none.
inline std::pair<std::string, std::string> runs_csv_error(const std::string& text) {
    try {
        (void)commscale::io::parse_training_runs(text, "runs.csv");
    } catch (const commscale::input_error& e) {
        return {e.field(), e.what()};
    }
    return {};
}

}  // namespace runs_test
