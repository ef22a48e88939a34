#pragma once
/// @file calibrate/errors.hpp
/// @brief Summaries of relative errors (median, max), without Eigen: shared by the fits
/// (fit.hpp, calibrate.hpp, fit_step.hpp) and the accuracy report (accuracy.hpp).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "../error.hpp"

namespace commscale {

/// @brief Median of the values (the mean of the two middle ones for an even count). Throws
/// input_error on an empty set.
[[nodiscard]] inline double median(std::vector<double> v) {
    if (v.empty()) throw input_error("median", "no values", "at least one value");
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    const double hi = *mid;
    if (v.size() % 2 == 1) return hi;
    const double lo = *std::max_element(v.begin(), mid);
    return 0.5 * (lo + hi);
}

/// @brief Relative errors |predicted - measured| / measured, element by element (dimensionless).
/// Throws input_error if the sizes differ or a measured value is not finite and > 0.
[[nodiscard]] inline std::vector<double> relative_errors(std::span<const double> measured,
                                                         std::span<const double> predicted) {
    if (measured.size() != predicted.size())
        throw input_error("relative_errors", std::to_string(predicted.size()) + " predictions",
                          std::to_string(measured.size()) + " (one per measurement)");
    std::vector<double> e(measured.size());
    for (std::size_t i = 0; i < measured.size(); ++i) {
        require_positive("measured[" + std::to_string(i) + "]", measured[i]);
        if (!std::isfinite(predicted[i]))
            throw input_error("predicted[" + std::to_string(i) + "]", detail::number_text(predicted[i]), "a finite number");
        e[i] = std::fabs(predicted[i] - measured[i]) / measured[i];
    }
    return e;
}

/// @brief Median and maximum of a set of relative errors.
struct error_summary {
    double median = 0.0;
    double max = 0.0;
};

/// @brief Median and max of `relative_errors(measured, predicted)`.
[[nodiscard]] inline error_summary summarize_errors(std::span<const double> measured, std::span<const double> predicted) {
    const auto e = relative_errors(measured, predicted);
    if (e.empty()) throw input_error("errors", "no rows", "at least one row");
    return {median(e), *std::max_element(e.begin(), e.end())};
}

}  // namespace commscale
