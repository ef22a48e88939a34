#pragma once
/// @file calibrate/calibrate.hpp
/// @brief Fitting a collective's measured sweep (nccl-tests rows) to the model's constants:
///
/// * the alpha-beta model t(S) = alpha + F·S / B_eff by weighted linear least squares with
///   relative-error weighting (wᵢ = 1 / t_measured,i), where F is the nccl-tests bus factor of the
///   operation (all-reduce 2(n-1)/n, all-gather/reduce-scatter/all-to-all (n-1)/n, others 1;
///   NVIDIA/nccl-tests doc/PERFORMANCE.md), so B_eff is a busbw-equivalent per-direction bandwidth;
/// * the realistic two-regime curve t(S) = min(t_small(S), t_large(S)) with
///   t_small = alpha_s + F·S / B_s (a low-latency protocol, NCCL's LL/LL128) and
///   t_large = alpha + F·S / (B_peak·η(S)), η(S) = 1 / (1 + (S_half / S)^k) (the bandwidth
///   protocol, whose pipeline fills gradually), fitted by Levenberg-Marquardt on relative
///   residuals with every parameter in log space (so all stay positive) and k in [0.5, 4].
///   NCCL itself picks, per size, the protocol of least predicted time (NVIDIA/nccl
///   src/graph/tuning.cc), hence the min. B_peak is the fitted peak busbw.
///
/// Both report parameter uncertainties (covariance, calibrate/fit.hpp), R², the median and max
/// relative error, and a cross-validated median error: fit on every other size (sorted), predict
/// the held-out rows, and the same with the halves swapped.
///
/// `calibrate_collective` fits the collective model itself (collective/model.hpp) by maximum a
/// posteriori estimation: a Gaussian prior on the cluster's values (log space for positive
/// scales, logit for fractions; widths `calibration_prior_width`), the parameters fitted chosen
/// by what the rows identify (2 rows suffice), uncertainties from the posterior covariance.

#include <algorithm>
#include <array>
#include <utility>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../collective/model.hpp"
#include "../collective/types.hpp"
#include "../error.hpp"
#include "../hardware/comm_params.hpp"
#include "../hardware/topology.hpp"
#include "../units.hpp"
#include "fit.hpp"

namespace commscale {

/// @brief One measured point: message size (nccl-tests "size") and time per operation, as read.
struct fit_point {
    data_size bytes{};
    time_as_read time{};
};

/// @brief The fitted alpha-beta model of one collective: t(S) = latency + bytes_factor·S / bandwidth.
struct alpha_beta_fit {
    duration latency{};              ///< alpha
    byte_rate bandwidth{};           ///< B_eff, busbw-equivalent, per direction
    duration latency_sigma{};        ///< one standard deviation of alpha
    byte_rate bandwidth_sigma{};     ///< one standard deviation of B_eff (delta method on 1/B_eff)
    bool latency_at_bound = false;   ///< the unconstrained alpha was negative; refitted with alpha = 0
    double bytes_factor = 1.0;       ///< F
    double r2 = 0.0;                 ///< weighted (relative) R²
    double median_rel_error = 0.0;   ///< median |t_fit - t| / t over the rows
    double max_rel_error = 0.0;
    std::optional<double> cv_median_rel_error;  ///< nullopt when a half has too few distinct sizes
    int rows = 0;
};

/// @brief The fitted realistic curve: t(S) = min(small_latency + F·S / small_bandwidth,
/// latency + F·S / (peak_busbw · η(S))), η(S) = 1 / (1 + (half_size / S)^exponent).
struct saturating_fit {
    duration small_latency{};        ///< alpha_s, low-latency protocol
    byte_rate small_bandwidth{};     ///< B_s, busbw-equivalent, low-latency protocol
    duration latency{};              ///< alpha of the bandwidth protocol
    byte_rate peak_busbw{};          ///< asymptotic bus bandwidth (S -> ∞)
    data_size half_size{};           ///< size at which η = 1/2
    double exponent = 1.0;           ///< k
    duration small_latency_sigma{};
    byte_rate small_bandwidth_sigma{};
    duration latency_sigma{};
    byte_rate peak_busbw_sigma{};
    data_size half_size_sigma{};
    double exponent_sigma = 0.0;
    double bytes_factor = 1.0;
    double r2 = 0.0;
    double median_rel_error = 0.0;
    double max_rel_error = 0.0;
    std::optional<double> cv_median_rel_error;
    int rows = 0;
    bool converged = false;
};

/// @brief Parameters the realistic fit estimates (its residuals need at least one more row).
inline constexpr std::size_t saturating_parameters = 6;

/// @brief Predicted time of an alpha-beta fit at `s`: latency + F·S / B_eff.
[[nodiscard]] inline duration predict_time(const alpha_beta_fit& f, data_size s) {
    return f.latency + f.bytes_factor * s / f.bandwidth;
}

/// @brief Fraction of the peak bus bandwidth reached at size `s`: η = 1 / (1 + (S_half / S)^k).
[[nodiscard]] inline double saturation(const saturating_fit& f, data_size s) {
    if (!(s.value() > 0)) return 0.0;
    return 1.0 / (1.0 + std::pow(f.half_size.value() / s.value(), f.exponent));
}

/// @brief Predicted time of a realistic fit at `s`: min(alpha_s + F·S / B_s, alpha + F·S / (B_peak η(S)));
/// the second transfer term is written F·(S + S_half^k S^(1-k)) / B_peak so that S = 0 gives the
/// latency, not 0/0.
[[nodiscard]] inline duration predict_time(const saturating_fit& f, data_size s) {
    const double sz = std::max(s.value(), 0.0);
    const double extra = sz > 0 ? std::pow(f.half_size.value(), f.exponent) * std::pow(sz, 1.0 - f.exponent) : 0.0;
    const duration large = f.latency + seconds(f.bytes_factor * (sz + extra) / f.peak_busbw.value());
    const duration small = f.small_latency + seconds(f.bytes_factor * sz / f.small_bandwidth.value());
    return small < large ? small : large;
}

namespace detail {

/// Validated copy of the points, sorted by size: at least `min_rows` rows, 2 distinct sizes, every size
/// finite and >= 0, every time finite and > 0. Errors name `field`.
inline std::vector<fit_point> checked_points(std::span<const fit_point> pts, std::string_view field,
                                            std::size_t min_rows = 3) {
    const std::string f(field);
    const std::string accepted =
        "at least " + std::to_string(min_rows) + " measured rows with at least 2 distinct message sizes";
    if (pts.empty()) throw input_error(f, "no rows", accepted);
    std::vector<fit_point> v(pts.begin(), pts.end());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const double size = in_bytes(v[i].bytes), time_us = in_us(v[i].time);
        if (!std::isfinite(size) || size < 0)
            throw input_error(f + "[" + std::to_string(i) + "].bytes", detail::number_text(size), "a size >= 0 bytes");
        if (!std::isfinite(time_us) || !(time_us > 0))
            throw input_error(f + "[" + std::to_string(i) + "].time_us", detail::number_text(time_us), "a time > 0 us");
    }
    std::stable_sort(v.begin(), v.end(), [](const fit_point& a, const fit_point& b) { return a.bytes < b.bytes; });
    if (v.size() < min_rows)
        throw input_error(f, std::to_string(v.size()) + (v.size() == 1 ? " row" : " rows"), accepted);
    if (v.front().bytes == v.back().bytes)
        throw input_error(f, "every row of size " + detail::number_text(in_bytes(v.front().bytes)) + " bytes",
                          "at least 2 distinct message sizes (a latency and a bandwidth cannot be separated from one size)");
    return v;
}

/// Alternate rows of a sorted set: half 0 = even positions, half 1 = odd positions.
inline std::vector<fit_point> half(const std::vector<fit_point>& v, std::size_t which) {
    std::vector<fit_point> h;
    for (std::size_t i = which; i < v.size(); i += 2) h.push_back(v[i]);
    return h;
}

inline bool enough_for_fit(const std::vector<fit_point>& v, std::size_t params) {
    if (v.size() < params + 1) return false;
    std::size_t distinct = 1;
    for (std::size_t i = 1; i < v.size(); ++i) distinct += v[i].bytes != v[i - 1].bytes ? 1u : 0u;
    return distinct >= params;
}

/// Cross-validated median relative error over held-out rows, each predicted by a fit that did not
/// see it (nullopt if no held-out prediction is possible).
template <class Fit, class Predict>
std::optional<double> leave_one_out(const std::vector<fit_point>& v, std::size_t params, Fit&& fit, Predict&& predict) {
    std::vector<double> errors;
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::vector<fit_point> train;
        train.reserve(v.size() - 1);
        for (std::size_t j = 0; j < v.size(); ++j)
            if (j != i) train.push_back(v[j]);
        if (!enough_for_fit(train, params)) return std::nullopt;
        try {
            const double t = predict(fit(train), v[i].bytes);
            if (!std::isfinite(t)) return std::nullopt;
            errors.push_back(std::fabs(t - in_us(v[i].time)) / in_us(v[i].time));
        } catch (const input_error&) {
            return std::nullopt;
        }
    }
    if (errors.empty()) return std::nullopt;
    return median(errors);
}

/// Cross-validated median relative error: fit on each half (every other size), predict the
/// other. A sweep too short for two halves (fewer than 2 x (params + 1) rows, e.g. nccl-tests -b
/// 1M -e 1G: 11 rows) is cross-validated leave-one-out instead: each row predicted by a fit on
/// all the others.
template <class Fit, class Predict>
std::optional<double> cross_validate(const std::vector<fit_point>& v, std::size_t params, Fit&& fit, Predict&& predict) {
    if (!enough_for_fit(half(v, 0), params) || !enough_for_fit(half(v, 1), params))
        return leave_one_out(v, params, fit, predict);
    std::vector<double> errors;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto train = half(v, k), test = half(v, 1 - k);
        if (!enough_for_fit(train, params) || test.empty()) return std::nullopt;
        try {
            const auto model = fit(train);
            for (const auto& p : test) {
                const double t = predict(model, p.bytes);
                if (!std::isfinite(t)) return std::nullopt;
                errors.push_back(std::fabs(t - in_us(p.time)) / in_us(p.time));
            }
        } catch (const input_error&) {
            return std::nullopt;
        }
    }
    return median(errors);
}

inline alpha_beta_fit fit_alpha_beta_sorted(const std::vector<fit_point>& v, double factor) {
    const auto n = static_cast<Eigen::Index>(v.size());
    Eigen::MatrixXd x(n, 2);
    Eigen::VectorXd y(n), w(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto& p = v[static_cast<std::size_t>(i)];
        x(i, 0) = 1.0;
        x(i, 1) = factor * in_bytes(p.bytes);
        y(i) = in_us(p.time) * 1e-6;  // the printed microseconds, in seconds
        w(i) = 1.0 / y(i);
    }
    alpha_beta_fit out;
    out.bytes_factor = factor;
    out.rows = static_cast<int>(n);
    auto lf = fit_weighted_linear(x, y, w);
    double alpha = lf.coefficients(0), inv_bw = lf.coefficients(1);
    double alpha_sd = lf.std_errors(0), inv_bw_sd = lf.std_errors(1);
    if (alpha < 0) {
        // Physical bound alpha >= 0: refit the one-parameter model t = F·S / B_eff.
        auto one = fit_weighted_linear(x.col(1), y, w);
        alpha = 0.0;
        alpha_sd = 0.0;
        inv_bw = one.coefficients(0);
        inv_bw_sd = one.std_errors(0);
        out.latency_at_bound = true;
        out.r2 = one.r2;
    } else {
        out.r2 = lf.r2;
    }
    if (!(inv_bw > 0))
        throw input_error("rows", "times that do not grow with message size",
                          "a sweep whose time increases with size (a positive bandwidth)");
    out.latency = seconds(alpha);
    out.latency_sigma = seconds(alpha_sd);
    out.bandwidth = bytes_per_second(1.0 / inv_bw);
    out.bandwidth_sigma = bytes_per_second(inv_bw_sd / (inv_bw * inv_bw));
    std::vector<double> meas, pred;
    for (const auto& p : v) {
        meas.push_back(in_us(p.time));
        pred.push_back(in_us(predict_time(out, p.bytes)));
    }
    const auto s = summarize_errors(meas, pred);
    out.median_rel_error = s.median;
    out.max_rel_error = s.max;
    return out;
}

}  // namespace detail

/// @brief Fits t(S) = alpha + F·S / B_eff to the points by weighted least squares with relative
/// weights wᵢ = 1 / tᵢ (minimises Σ ((t_fit,i - tᵢ) / tᵢ)²), F = `bytes_factor` (> 0). alpha is
/// bounded below by 0 (a negative estimate is refitted with alpha = 0 and flagged). Uncertainties
/// from σ² (XᵀWX)⁻¹; that of B_eff by the delta method, σ_B = σ_(1/B) B². Throws input_error for
/// fewer than 3 rows, a single distinct size, a non-positive time or a sweep whose time does not
/// grow with size.
[[nodiscard]] inline alpha_beta_fit fit_alpha_beta(std::span<const fit_point> points, double bytes_factor,
                                                   std::string_view field = "rows") {
    require_positive("bytes_factor", bytes_factor);
    const auto v = detail::checked_points(points, field);
    auto out = detail::fit_alpha_beta_sorted(v, bytes_factor);
    out.cv_median_rel_error = detail::cross_validate(
        v, 2, [&](const std::vector<fit_point>& t) { return detail::fit_alpha_beta_sorted(t, bytes_factor); },
        [](const alpha_beta_fit& m, data_size b) { return in_us(predict_time(m, b)); });
    return out;
}

namespace detail {

inline saturating_fit from_log_parameters(const Eigen::VectorXd& th, double factor) {
    saturating_fit m;
    m.small_latency = seconds(std::exp(th(0)));
    m.small_bandwidth = bytes_per_second(std::exp(th(1)));
    m.latency = seconds(std::exp(th(2)));
    m.peak_busbw = bytes_per_second(std::exp(th(3)));
    m.half_size = bytes(std::exp(th(4)));
    m.exponent = std::exp(th(5));
    m.bytes_factor = factor;
    return m;
}

inline saturating_fit fit_saturating_sorted(const std::vector<fit_point>& v, double factor, const lm_options& opt) {
    if (v.size() < saturating_parameters + 1)
        throw input_error("rows", std::to_string(v.size()) + " rows",
                          "at least 7 rows to fit the realistic curve (6 parameters)");
    // Start: the low-latency regime at the smallest row's time and a tenth of the alpha-beta
    // bandwidth; the bandwidth regime at the alpha-beta latency, the largest row's rate as peak,
    // S_half a hundredth of the largest size, k = 1.
    const auto ab = fit_alpha_beta_sorted(v, factor);
    const auto& last = v.back();
    const double t_min = in_us(v.front().time) * 1e-6;
    const double alpha0 = std::clamp(in_seconds(ab.latency), 1e-2 * t_min, 2.0 * t_min);
    const double bw0 = std::max(factor * in_bytes(last.bytes) / (in_us(last.time) * 1e-6), ab.bandwidth.value());
    Eigen::VectorXd x0(6);
    x0 << std::log(t_min), std::log(ab.bandwidth.value() / 10.0), std::log(alpha0), std::log(bw0),
        std::log(std::max(in_bytes(last.bytes) / 100.0, 1.0)), 0.0;
    const auto n = static_cast<Eigen::Index>(v.size());
    std::vector<double> t_us;  // the measured times, read once
    for (const auto& p : v) t_us.push_back(in_us(p.time));
    auto residuals = [&](const Eigen::VectorXd& th, Eigen::VectorXd& r) {
        const auto m = from_log_parameters(th, factor);
        // k outside [0.5, 4] makes the curve a step or a power law the data cannot pin down.
        if (m.exponent > 4.0 || m.exponent < 0.5) {
            r.setConstant(std::numeric_limits<double>::quiet_NaN());
            return;
        }
        for (Eigen::Index i = 0; i < n; ++i) {
            const auto j = static_cast<std::size_t>(i);
            r(i) = in_us(predict_time(m, v[j].bytes)) / t_us[j] - 1.0;
        }
    };
    const auto nl = fit_levenberg_marquardt(residuals, x0, n, opt);
    saturating_fit out = from_log_parameters(nl.parameters, factor);
    out.rows = static_cast<int>(n);
    out.converged = nl.converged;
    // Delta method from log space: σ_x = x σ_(log x).
    out.small_latency_sigma = out.small_latency * nl.std_errors(0);
    out.small_bandwidth_sigma = out.small_bandwidth * nl.std_errors(1);
    out.latency_sigma = out.latency * nl.std_errors(2);
    out.peak_busbw_sigma = out.peak_busbw * nl.std_errors(3);
    out.half_size_sigma = out.half_size * nl.std_errors(4);
    out.exponent_sigma = out.exponent * nl.std_errors(5);
    std::vector<double> meas, pred;
    double tss = 0.0;
    for (const auto& p : v) {
        meas.push_back(in_us(p.time));
        pred.push_back(in_us(predict_time(out, p.bytes)));
    }
    // Relative R²: 1 - Σ(rᵢ/tᵢ)² / Σ((tᵢ - t̄)/tᵢ)², t̄ the 1/t²-weighted mean (as fit_weighted_linear).
    double sw = 0.0, swy = 0.0;
    for (const auto& p : v) {
        sw += 1.0 / (in_us(p.time) * in_us(p.time));
        swy += 1.0 / in_us(p.time);
    }
    const double mean = swy / sw;
    for (const auto& p : v) tss += std::pow((in_us(p.time) - mean) / in_us(p.time), 2);
    out.r2 = tss > 0 ? 1.0 - nl.cost / tss : 1.0;
    const auto s = summarize_errors(meas, pred);
    out.median_rel_error = s.median;
    out.max_rel_error = s.max;
    return out;
}

}  // namespace detail

/// @brief Fits the realistic curve (see `saturating_fit`) by Levenberg-Marquardt on relative
/// residuals t_fit/t - 1, parameters in log space (positivity), k constrained to [0.5, 4].
/// Uncertainties from σ² (JᵀJ)⁺ in log space, mapped by the delta method. Needs at least 7 rows
/// (cross-validation: 7 in each half, else nullopt); otherwise errors as `fit_alpha_beta`.
[[nodiscard]] inline saturating_fit fit_saturating(std::span<const fit_point> points, double bytes_factor,
                                                   std::string_view field = "rows", const lm_options& opt = {}) {
    require_positive("bytes_factor", bytes_factor);
    const auto v = detail::checked_points(points, field);
    auto out = detail::fit_saturating_sorted(v, bytes_factor, opt);
    out.cv_median_rel_error = detail::cross_validate(
        v, saturating_parameters, [&](const std::vector<fit_point>& t) { return detail::fit_saturating_sorted(t, bytes_factor, opt); },
        [](const saturating_fit& m, data_size b) { return in_us(predict_time(m, b)); });
    return out;
}

/// @brief Per-direction peak of the link that bounds a collective over the whole cluster: the
/// scale-up link inside one node, else one GPU's share of its NIC (per_direction / gpus_per_nic).
[[nodiscard]] inline byte_rate bounding_link_peak(const cluster& c) {
    if (comm_view(c).nodes <= 1) return c.node.intra.per_direction;  // one NVLink domain (the node, or an NVL72 rack)
    return c.node.inter.per_direction / static_cast<double>(c.node.gpus_per_nic());
}

/// @brief The link class whose realistic-mode parameters a sweep over `g` calibrates: the scale-up
/// class (`class_of(intra)`, or `pci` on a PCIe fabric) when the group stays in one node, `net` when
/// it spans nodes (the NIC bounds it there).
[[nodiscard]] inline link_class calibrated_class(const cluster& c, const placement& g) {
    if (g.nodes() > 1) return class_of(c.node.inter);
    return c.node.fabric == intra_fabric::pcie ? link_class::pci : class_of(c.node.intra);
}

/// @brief Options of `calibrate_collective`: the model options the sweep is predicted with (the
/// calibrated description reproduces the fit under the same options) and the solver's.
struct calibration_options {
    collective_options model{};
    lm_options solver{};
    /// Also fit each half of the rows and predict the other (`cv_median_rel_error`); two more fits.
    bool cross_validate = true;
};

/// @brief One measured sweep for a joint calibration (`calibrate_collectives`): a collective over
/// a group of ranks and its rows.
struct calibration_sweep {
    placement group{};
    collective_op op = collective_op::all_reduce;
    std::vector<fit_point> rows;
};

/// @brief One parameter of a collective calibration: its value after the fit (in `unit`), its
/// posterior standard deviation (0 for a parameter kept at its prior), and the prior it was
/// regularised toward (centre, in `unit`, and one-σ width in the transformed space `space`).
struct calibrated_parameter {
    std::string name;         ///< "step_latency_LL_us", "efficiency", "half_size_bytes", ...
    double value = 0.0;
    double uncertainty = 0.0;  ///< one σ of the posterior (delta method from the transformed space)
    double prior = 0.0;        ///< the prior's centre: the input cluster's value
    double prior_width = 0.0;  ///< one σ of the prior in `space`
    std::string_view space;    ///< "log" or "logit"
    /// Posterior over prior σ in `space` (fitted parameters): near 0 the rows determine it, near 1
    /// the prior does (a direction the rows leave flat). 1 for a kept parameter.
    double prior_ratio = 1.0;
    bool fitted = false;       ///< false: kept at the prior (the rows do not identify it)
    /// |value - prior| in `space`, in prior widths: beyond calibration_far_from_prior the rows
    /// pulled the parameter far from the datasheet (a warning of the calibration).
    double prior_distance = 0.0;
};

/// @brief Prior widths beyond which a fitted parameter is reported in
/// `collective_calibration::warnings`: a Gaussian prior puts 1 in 1.7 million draws that far, so
/// the rows (or their units) contradict the datasheet rather than refine it.
inline constexpr double calibration_far_from_prior = 5.0;

/// @brief A collective's sweep fitted through the collective model itself: `calibrated` is the
/// input cluster with the realistic-mode parameters (`comm`) of one link class replaced, and
/// `predict_collective(calibrated, group, op, S, options.model)` is the fitted curve.
struct collective_calibration {
    cluster calibrated{};                    ///< the calibrated description
    placement group{};                       ///< the measured ranks
    collective_op op = collective_op::all_reduce;
    collective_options model{};              ///< the options the fit predicted with
    link_class fitted_class = link_class::nvlink;  ///< whose parameters were fitted
    link_class_params fitted{};              ///< = calibrated.comm.of(fitted_class)
    std::array<duration, protocol_count> step_latency_sigma{};  ///< one σ, LL / LL128 / Simple (0 if kept)
    double efficiency_sigma = 0.0;           ///< 0 if kept at the prior
    data_size half_size_sigma{};
    double exponent_sigma = 0.0;
    std::array<double, 2> protocol_fraction_sigma{};  ///< one σ of the LL / LL128 payload fractions
    /// Every calibrated parameter in the order of `calibration_parameter_names`, fitted or kept.
    std::vector<calibrated_parameter> parameters;
    /// Fitted parameters more than calibration_far_from_prior prior widths from the datasheet, in words.
    std::vector<std::string> warnings;
    /// The three step latencies were fitted as one common factor on their priors (a short sweep
    /// cannot separate the protocols); their uncertainties are then fully correlated.
    bool step_latencies_tied = false;
    duration latency{};                      ///< fixed (latency) part of the prediction at the smallest row
    duration latency_sigma{};                ///< its posterior σ (delta method; 0 if no latency was fitted)
    byte_rate bandwidth{};                   ///< efficiency x the bounding link's per-direction peak
    byte_rate peak_busbw{};                  ///< predicted busbw as S -> infinity (evaluated at 1e18 B)
    byte_rate peak_busbw_sigma{};            ///< delta method from the efficiency's σ
    double bytes_factor = 1.0;               ///< nccl-tests bus factor of op on group.ranks
    double r2 = 0.0;                         ///< relative R² (as saturating_fit)
    double median_rel_error = 0.0;           ///< median |t_fit - t| / t over the rows
    double max_rel_error = 0.0;
    double residual_sd = 0.0;                ///< σ of a relative residual the posterior used (calibration_residual_sd or estimated)
    /// Held-out median error: fit on every other size and predict the rest when each half has at
    /// least 9 distinct sizes, else leave-one-out (3 rows or more); nullopt below 3 rows or if
    /// options.cross_validate is false.
    std::optional<double> cv_median_rel_error;
    int rows = 0;
    bool converged = false;

    /// @brief Names of the parameters the rows determined.
    [[nodiscard]] std::vector<std::string> fitted_names() const {
        std::vector<std::string> v;
        for (const auto& p : parameters)
            if (p.fitted) v.push_back(p.name);
        return v;
    }
    /// @brief Names of the parameters kept at their prior.
    [[nodiscard]] std::vector<std::string> kept_names() const {
        std::vector<std::string> v;
        for (const auto& p : parameters)
            if (!p.fitted) v.push_back(p.name);
        return v;
    }
};

/// @brief Parameters `calibrate_collective` can estimate: the class's three per-step latencies, its
/// efficiency, saturation half size and exponent, and the payload fractions of LL and LL128.
inline constexpr std::size_t collective_calibration_parameters = 8;

/// @brief Names of those parameters (units in the suffix), in the order of θ.
inline constexpr std::array<std::string_view, collective_calibration_parameters> calibration_parameter_names{
    "step_latency_LL_us", "step_latency_LL128_us", "step_latency_Simple_us", "efficiency",
    "half_size_bytes",    "exponent",              "LL_fraction",            "LL128_fraction"};

/// @brief One-σ widths of the calibration prior, in θ's space (log for positive scales, logit for
/// fractions), centred on the input cluster's values (the datasheet / NCCL-constant defaults of
/// hardware/comm_params.hpp, or a previous calibration):
/// * step latencies, log, ln 4: NCCL's per-step constants (src/graph/tuning.cc) are per-generation
///   estimates; measured small-message times differ from them by factors of 2-4 (the 8 x A100
///   table's 32 KiB all-reduce takes 43.8 us, the constants give about 15 us);
/// * efficiency, logit, 1.0: around the default 0.8 this spans 0.6-0.92 at one σ, the range of
///   published large-message busbw / per-direction peak (ml-engineering-networking 0.78 on
///   A100, NVIDIA/nccl-tests #212 0.82 on H100, NIC figures 0.85-0.98);
/// * half size, log, ln 10: the saturation knee moves by an order of magnitude between fabrics
///   and NCCL versions (channel counts, chunk sizes);
/// * exponent, logit of (k - 0.25) / 3.75, 1.5: one σ spans k = 0.31-1.16 around the default 0.5;
/// * LL / LL128 payload fractions, logit, 2.0: wide, since measured low-latency bandwidth is far
///   below the wire fraction (NCCL runs few channels at small sizes): one σ spans 0.12-0.88
///   around LL's 0.5.
inline constexpr std::array<double, collective_calibration_parameters> calibration_prior_width{
    1.3862943611198906, 1.3862943611198906, 1.3862943611198906, 1.0, 2.302585092994046, 1.5, 2.0, 2.0};

/// @brief Prior correlation of a link class's three step latencies (LL, LL128, Simple) in log
/// space: each is the class's common factor times its own, both of σ = width / √2, so each keeps
/// the marginal width of `calibration_prior_width`. The protocols of a class run over the same
/// links, GPU clocks and kernel-launch path, so a system slower or faster than NCCL's
/// per-generation constants (src/graph/tuning.cc) is partly so for all three; a sweep whose
/// algorithm exercises only one protocol's latency at small sizes (NVLS all-reduce: Simple) then
/// carries half of that deviation to the others instead of leaving them at the constants. On the
/// synthetic systems of tests/unit/calibrate/calibrate_cross.cpp this takes all_gather / reduce_scatter from
/// a 4-node all-reduce fit from 12.3% to 3.4% (median), from a 2-node one from 6.3% to 0.8%; 0.75
/// does better there still but worsens the real 2 x 8 A100 large rows.
inline constexpr double calibration_latency_correlation = 0.5;

/// @brief Standard deviation of a relative residual t_model / t_measured - 1 assumed for the first
/// pass of the MAP fit (and kept when the rows leave fewer than 2 degrees of freedom): nccl-tests
/// repeats agree within 1-3% and the model's structural error on published tables is 3-5%.
/// With enough rows it is re-estimated from the residuals (clamped to [0.5%, 20%]) and the fit
/// repeated from the first pass's optimum.
inline constexpr double calibration_residual_sd = 0.05;

/// @brief Rows at or below this size are latency-bound enough to identify a latency; rows above it
/// identify the bandwidth (1 MiB: the A100 table's time is flat at ~100 us from 1 to 4 MiB).
inline constexpr double latency_size_limit = 1048576.0;

namespace detail {

/// Exponent bounds of the calibrated saturation curve: below 0.25 or above 4 the curve is a power
/// law or a step that a sweep of powers of two cannot pin down.
inline constexpr double min_exponent = 0.25, max_exponent = 4.0;

[[nodiscard]] inline link_class_params& class_params(comm_params& p, link_class c) {
    return c == link_class::nvlink ? p.nvlink : c == link_class::pci ? p.pci : p.net;
}

[[nodiscard]] inline double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }
[[nodiscard]] inline double logit(double p) { return std::log(p / (1.0 - p)); }

/// θ -> the fitted class's parameters: step latencies exp(θ0..2) s, efficiency logistic(θ3) (in
/// (0, 1), as the cluster JSON accepts), half size exp(θ4) B, exponent in (0.25, 4) by a logistic,
/// LL and LL128 payload fractions logistic(θ6), logistic(θ7) (comm_params-wide).
inline void apply_calibration_vector(const Eigen::VectorXd& th, comm_params& cp, link_class cls) {
    link_class_params& k = class_params(cp, cls);
    for (std::size_t q = 0; q < protocol_count; ++q) k.step_latency[q] = seconds(std::exp(th(static_cast<Eigen::Index>(q))));
    k.efficiency = logistic(th(3));
    k.half_size = bytes(std::exp(th(4)));
    k.exponent = min_exponent + (max_exponent - min_exponent) * logistic(th(5));
    cp.protocol_bandwidth[0] = logistic(th(6));
    cp.protocol_bandwidth[1] = logistic(th(7));
}

/// The cluster's values of class `cls` as θ (the prior's centre). Values outside the transforms'
/// domains (a latency of 0, an efficiency of 1) are clamped just inside.
inline Eigen::VectorXd calibration_vector(const comm_params& cp, link_class cls) {
    const link_class_params& k = cp.of(cls);
    Eigen::VectorXd th(static_cast<Eigen::Index>(collective_calibration_parameters));
    for (std::size_t q = 0; q < protocol_count; ++q)
        th(static_cast<Eigen::Index>(q)) = std::log(std::max(k.step_latency[q].value(), 1e-8));
    th(3) = logit(std::clamp(k.efficiency, 1e-3, 0.999));
    th(4) = std::log(std::max(k.half_size.value(), 1.0));
    th(5) = logit(std::clamp((k.exponent - min_exponent) / (max_exponent - min_exponent), 1e-3, 0.999));
    th(6) = logit(std::clamp(cp.protocol_bandwidth[0], 1e-3, 0.999));
    th(7) = logit(std::clamp(cp.protocol_bandwidth[1], 1e-3, 0.999));
    return th;
}

/// Which parameters a sweep can identify. Columns of `design` map the free vector φ onto θ:
/// θ = θ_prior + design·φ. `tied`: the step latencies move together (one column).
struct calibration_design {
    Eigen::MatrixXd design;
    std::vector<double> width;  ///< prior σ of each φ
    bool tied = false;
};

/// The candidate free parameters by what the rows span (see calibrate_collective), before the
/// Jacobian check.
inline calibration_design candidate_design(const std::vector<fit_point>& v) {
    std::size_t distinct = 1;
    for (std::size_t i = 1; i < v.size(); ++i) distinct += v[i].bytes != v[i - 1].bytes ? 1u : 0u;
    const auto np = static_cast<Eigen::Index>(collective_calibration_parameters);
    calibration_design d;
    if (distinct >= collective_calibration_parameters + 1) {
        // Every parameter, the three step latencies through a shared factor plus one each
        // (calibration_latency_correlation): a sweep whose algorithm exercises one protocol's
        // latency moves the class's others with it.
        d.design = Eigen::MatrixXd::Zero(np, np + 1);
        d.design.block(0, 0, 3, 1).setOnes();
        d.design.block(0, 1, np, np) = Eigen::MatrixXd::Identity(np, np);
        const double rho = calibration_latency_correlation;
        d.width.push_back(calibration_prior_width[0] * std::sqrt(rho));
        for (std::size_t i = 0; i < collective_calibration_parameters; ++i)
            d.width.push_back(i < protocol_count ? calibration_prior_width[i] * std::sqrt(1.0 - rho) : calibration_prior_width[i]);
        return d;
    }
    const bool small = in_bytes(v.front().bytes) <= latency_size_limit, large = in_bytes(v.back().bytes) > latency_size_limit;
    std::vector<Eigen::VectorXd> cols;
    auto unit = [&](Eigen::Index i) {
        Eigen::VectorXd e = Eigen::VectorXd::Zero(np);
        e(i) = 1.0;
        return e;
    };
    if (small) {
        Eigen::VectorXd e = Eigen::VectorXd::Zero(np);
        e.head(3).setOnes();
        cols.push_back(e);
        d.width.push_back(calibration_prior_width[0]);
        d.tied = true;
    }
    if (large) {
        cols.push_back(unit(3));
        d.width.push_back(calibration_prior_width[3]);
    }
    if (distinct >= 5) {
        for (Eigen::Index i : {Eigen::Index{4}, Eigen::Index{5}}) {
            cols.push_back(unit(i));
            d.width.push_back(calibration_prior_width[static_cast<std::size_t>(i)]);
        }
    }
    d.design.resize(np, static_cast<Eigen::Index>(cols.size()));
    for (std::size_t j = 0; j < cols.size(); ++j) d.design.col(static_cast<Eigen::Index>(j)) = cols[j];
    return d;
}

/// The measured times of every sweep's rows in microseconds as printed, one after the other.
[[nodiscard]] inline std::vector<double> measured_us(std::span<const calibration_sweep> sw) {
    std::vector<double> t;
    for (const auto& s : sw)
        for (const auto& p : s.rows) t.push_back(in_us(p.time));
    return t;
}

/// Relative residuals t_model / t - 1 of every sweep's rows at θ, one after the other (NaN where θ
/// overflows the model); `t_us` = measured_us(sw).
inline void calibration_residuals(cluster& work, link_class cls, std::span<const calibration_sweep> sw,
                                  std::span<const double> t_us, const Eigen::VectorXd& th, const collective_options& model,
                                  Eigen::VectorXd& r) {
    apply_calibration_vector(th, work.comm, cls);
    try {
        Eigen::Index i = 0;
        for (const auto& s : sw)
            for (const auto& p : s.rows) {
                r(i) = in_us(predict_collective(work, s.group, s.op, p.bytes, model).time) / t_us[static_cast<std::size_t>(i)] - 1.0;
                ++i;
            }
    } catch (const input_error&) {
        // θ overflowed (an infinite latency or size): infeasible, the solver rejects the step.
        r.setConstant(std::numeric_limits<double>::quiet_NaN());
    }
}

[[nodiscard]] inline Eigen::Index total_rows(std::span<const calibration_sweep> sw) {
    std::size_t n = 0;
    for (const auto& s : sw) n += s.rows.size();
    return static_cast<Eigen::Index>(n);
}

/// MAP fit of φ from `x0`: residuals (rᵢ / σ_n, φⱼ / wⱼ); covariance = the posterior's (JᵀJ)⁻¹.
inline nonlinear_fit calibrate_from(const cluster& c, link_class cls, std::span<const calibration_sweep> sw,
                                    const Eigen::VectorXd& prior,
                                    const calibration_design& d, const Eigen::VectorXd& x0, double sd,
                                    const calibration_options& opt) {
    const Eigen::Index m = total_rows(sw);
    const Eigen::Index k = d.design.cols();
    cluster work = c;
    Eigen::VectorXd rd(m);
    const std::vector<double> t_us = measured_us(sw);
    auto residuals = [&](const Eigen::VectorXd& phi, Eigen::VectorXd& r) {
        calibration_residuals(work, cls, sw, t_us, prior + d.design * phi, opt.model, rd);
        r.head(m) = rd / sd;
        for (Eigen::Index j = 0; j < k; ++j) r(m + j) = phi(j) / d.width[static_cast<std::size_t>(j)];
    };
    lm_options lm = opt.solver;
    lm.difference_floor = std::max(lm.difference_floor, 1.0);  // parameters are logs / logits
    lm.known_variance = true;
    return fit_levenberg_marquardt(residuals, x0, m + k, lm);
}

/// The joint fit of sweeps (validated, each sorted, the first non-empty); reported figures
/// (latency, group, op) are the first sweep's, errors over every row.
inline collective_calibration calibrate_sorted(const cluster& c, std::span<const calibration_sweep> sw,
                                               const calibration_options& opt) {
    const placement& g = sw.front().group;
    const collective_op op = sw.front().op;
    const std::vector<fit_point>& v = sw.front().rows;
    std::vector<fit_point> all;
    for (const auto& s : sw) all.insert(all.end(), s.rows.begin(), s.rows.end());
    std::stable_sort(all.begin(), all.end(), [](const fit_point& a, const fit_point& b) { return a.bytes < b.bytes; });
    if (v.empty() || all.size() < 2)
        throw input_error("rows", std::to_string(all.size()) + " rows", "at least 2 rows with 2 distinct message sizes");
    const link_class cls = calibrated_class(c, g);
    for (std::size_t i = 1; i < sw.size(); ++i)
        if (calibrated_class(c, sw[i].group) != cls)
            throw input_error("sweeps[" + std::to_string(i) + "]",
                              std::to_string(sw[i].group.ranks) + " ranks on " + std::to_string(sw[i].group.nodes()) + " node(s)",
                              "sweeps that calibrate the same link class as the first (all inside one node, or all across nodes)");
    const auto np = static_cast<Eigen::Index>(collective_calibration_parameters);
    const Eigen::VectorXd prior = calibration_vector(c.comm, cls);
    calibration_design d = candidate_design(all);
    const Eigen::Index m = total_rows(sw);
    const std::vector<double> t_us = measured_us(sw);
    // Identifiability from the Jacobian at the prior (short sweeps, fewer than 9 sizes): a
    // candidate whose data information Σ (∂rᵢ/∂φⱼ)² / σ_n² is below a tenth of its prior precision
    // 1 / wⱼ² is kept at the prior (the rows would move it by less than what the prior already
    // allows). Not on full sweeps: there the protocol minimum and the slower of two links (the
    // model's kinks) can make a parameter flat at the prior that the optimum depends on, and the
    // prior alone keeps a truly flat direction in place.
    if (d.design.cols() < np) {
        cluster work = c;
        Eigen::VectorXd rp(m), rm(m);
        std::vector<Eigen::Index> keep;
        for (Eigen::Index j = 0; j < d.design.cols(); ++j) {
            const double h = 1e-3;
            calibration_residuals(work, cls, sw, t_us, prior + h * d.design.col(j), opt.model, rp);
            calibration_residuals(work, cls, sw, t_us, prior - h * d.design.col(j), opt.model, rm);
            const double info = rp.allFinite() && rm.allFinite()
                                    ? ((rp - rm) / (2.0 * h)).squaredNorm() / (calibration_residual_sd * calibration_residual_sd)
                                    : 0.0;
            const double w = d.width[static_cast<std::size_t>(j)];
            if (info * w * w >= 0.1) keep.push_back(j);
        }
        if (static_cast<Eigen::Index>(keep.size()) < d.design.cols()) {
            calibration_design e;
            e.design.resize(np, static_cast<Eigen::Index>(keep.size()));
            for (std::size_t j = 0; j < keep.size(); ++j) {
                e.design.col(static_cast<Eigen::Index>(j)) = d.design.col(keep[j]);
                e.width.push_back(d.width[static_cast<std::size_t>(keep[j])]);
                if (d.tied && keep[j] == 0) e.tied = true;
            }
            d = std::move(e);
        }
    }
    const Eigen::Index k = d.design.cols();
    std::vector<bool> free(collective_calibration_parameters, false);
    for (Eigen::Index i = 0; i < np; ++i)
        for (Eigen::Index j = 0; j < k; ++j) free[static_cast<std::size_t>(i)] = free[static_cast<std::size_t>(i)] || d.design(i, j) != 0.0;

    nonlinear_fit best;
    bool have = false;
    if (k == 0) {
        best.parameters = Eigen::VectorXd::Zero(0);
        best.covariance = Eigen::MatrixXd::Zero(0, 0);
        best.std_errors = Eigen::VectorXd::Zero(0);
        best.converged = true;
        have = true;
    } else {
        // Starting points (θ, projected onto the free columns; the prior itself is the first).
        // Latencies: the prior scaled so that the model's time of the smallest row matches the
        // measurement. Efficiency: the largest row's busbw over the model's unsaturated peak
        // (efficiency 1), plus 5%. Shape (when free): half sizes {the class's, 64 KiB, 1/1000 and
        // 1/100 of the largest row's per-rank share} x exponents {0.5, 1, 2}; the lowest cost kept
        // (the protocol minimum makes the cost multimodal).
        cluster probe = c;
        link_class_params& kp = class_params(probe.comm, cls);
        const fit_point& first = v.front();
        const fit_point& last = v.back();
        const double t_first = in_us(predict_collective(probe, g, op, first.bytes, opt.model).time);
        const double scale = std::clamp(in_us(first.time) / std::max(t_first, 1e-3), 1e-3, 1e3);
        link_class_params ideal = kp;
        ideal.efficiency = 1.0;
        ideal.half_size = bytes(0.0);
        kp = ideal;
        const double t_ideal = in_us(predict_collective(probe, g, op, last.bytes, opt.model).time);
        const double eff0 = std::clamp(1.05 * t_ideal / in_us(last.time), 0.02, 0.98);
        const double share_last = in_bytes(last.bytes) / static_cast<double>(g.ranks);
        const std::array<double, 4> halves{c.comm.of(cls).half_size.value(), 64.0 * 1024.0, std::max(share_last / 1e3, 1.0),
                                           std::max(share_last / 1e2, 1.0)};
        std::vector<Eigen::VectorXd> starts{Eigen::VectorXd::Zero(k)};
        const bool shape_free = free[4] || free[5];
        std::vector<std::pair<double, double>> shapes;
        if (shape_free) {
            for (double h : halves)
                for (double e : {0.5, 1.0, 2.0}) shapes.emplace_back(h, e);
        } else {
            shapes.emplace_back(c.comm.of(cls).half_size.value(), c.comm.of(cls).exponent);
        }
        const auto projector = d.design.completeOrthogonalDecomposition();
        for (const auto& [h0, k0] : shapes) {
            Eigen::VectorXd x0 = prior;
            for (std::size_t q = 0; q < protocol_count; ++q)
                x0(static_cast<Eigen::Index>(q)) = std::log(std::max(c.comm.of(cls).step_latency[q].value(), 1e-8) * scale);
            x0(3) = logit(eff0);
            x0(4) = std::log(std::max(h0, 1.0));
            x0(5) = logit(std::clamp((k0 - min_exponent) / (max_exponent - min_exponent), 1e-3, 0.999));
            starts.push_back(projector.solve(x0 - prior));
        }
        for (const auto& x0 : starts) {
            try {
                auto nl = calibrate_from(c, cls, sw, prior, d, x0, calibration_residual_sd, opt);
                if (!have || nl.cost < best.cost) {
                    best = std::move(nl);
                    have = true;
                }
            } catch (const input_error&) {
                // an infeasible start: try the next
            }
        }
        if (!have)
            throw input_error("rows", std::to_string(all.size()) + " rows", "measurements the collective model can be fitted to");
    }
    // Second pass: the residual σ re-estimated from the rows when they leave 2 or more degrees of
    // freedom, and the fit repeated from the first optimum with it.
    double sd = calibration_residual_sd;
    {
        cluster work = c;
        Eigen::VectorXd rd(m);
        calibration_residuals(work, cls, sw, t_us, prior + d.design * best.parameters, opt.model, rd);
        if (k > 0 && m - k >= 2 && rd.allFinite()) {
            sd = std::clamp(std::sqrt(rd.squaredNorm() / static_cast<double>(m - k)), 0.005, 0.2);
            auto nl = calibrate_from(c, cls, sw, prior, d, best.parameters, sd, opt);
            best = std::move(nl);
        }
    }
    const Eigen::VectorXd theta = prior + d.design * best.parameters;
    const Eigen::MatrixXd cov = d.design * best.covariance * d.design.transpose();
    Eigen::VectorXd sdv(np);
    for (Eigen::Index i = 0; i < np; ++i) sdv(i) = std::sqrt(std::max(cov(i, i), 0.0));

    collective_calibration out;
    out.calibrated = c;
    apply_calibration_vector(theta, out.calibrated.comm, cls);
    // Kept parameters stay exactly the input's (the clamps of calibration_vector never leak).
    {
        link_class_params& o = class_params(out.calibrated.comm, cls);
        const link_class_params& in = c.comm.of(cls);
        for (std::size_t q = 0; q < protocol_count; ++q)
            if (!free[q]) o.step_latency[q] = in.step_latency[q];
        if (!free[3]) o.efficiency = in.efficiency;
        if (!free[4]) o.half_size = in.half_size;
        if (!free[5]) o.exponent = in.exponent;
        if (!free[6]) out.calibrated.comm.protocol_bandwidth[0] = c.comm.protocol_bandwidth[0];
        if (!free[7]) out.calibrated.comm.protocol_bandwidth[1] = c.comm.protocol_bandwidth[1];
    }
    out.group = g;
    out.op = op;
    out.model = opt.model;
    out.fitted_class = cls;
    out.fitted = out.calibrated.comm.of(cls);
    out.converged = best.converged;
    out.rows = static_cast<int>(all.size());
    out.bytes_factor = busbw_factor(op, g.ranks);
    out.step_latencies_tied = d.tied;
    out.residual_sd = sd;
    for (std::size_t q = 0; q < protocol_count; ++q)
        out.step_latency_sigma[q] = out.fitted.step_latency[q] * sdv(static_cast<Eigen::Index>(q));
    out.efficiency_sigma = out.fitted.efficiency * (1.0 - out.fitted.efficiency) * sdv(3);
    out.half_size_sigma = out.fitted.half_size * sdv(4);
    const double kk = (out.fitted.exponent - min_exponent) / (max_exponent - min_exponent);
    out.exponent_sigma = (max_exponent - min_exponent) * kk * (1.0 - kk) * sdv(5);
    for (std::size_t q = 0; q < 2; ++q) {
        const double f = out.calibrated.comm.protocol_bandwidth[q];
        out.protocol_fraction_sigma[q] = f * (1.0 - f) * sdv(static_cast<Eigen::Index>(6 + q));
    }
    {
        const link_class_params& in = c.comm.of(cls);
        const std::array<double, collective_calibration_parameters> values{
            in_us(out.fitted.step_latency[0]), in_us(out.fitted.step_latency[1]), in_us(out.fitted.step_latency[2]),
            out.fitted.efficiency, in_bytes(out.fitted.half_size), out.fitted.exponent,
            out.calibrated.comm.protocol_bandwidth[0], out.calibrated.comm.protocol_bandwidth[1]};
        const std::array<double, collective_calibration_parameters> sigmas{
            in_us(out.step_latency_sigma[0]), in_us(out.step_latency_sigma[1]), in_us(out.step_latency_sigma[2]),
            out.efficiency_sigma, in_bytes(out.half_size_sigma), out.exponent_sigma,
            out.protocol_fraction_sigma[0], out.protocol_fraction_sigma[1]};
        const std::array<double, collective_calibration_parameters> priors{
            in_us(in.step_latency[0]), in_us(in.step_latency[1]), in_us(in.step_latency[2]), in.efficiency,
            in_bytes(in.half_size), in.exponent, c.comm.protocol_bandwidth[0], c.comm.protocol_bandwidth[1]};
        // distance from the prior in the prior's own space (log, logit, or logit onto the exponent's range)
        auto transformed = [&](std::size_t i, double x) {
            if (i == 0 || i == 1 || i == 2 || i == 4) return std::log(std::max(x, 1e-300));
            const double u = i == 5 ? (x - min_exponent) / (max_exponent - min_exponent) : x;
            const double cl = std::clamp(u, 1e-12, 1.0 - 1e-12);
            return std::log(cl / (1.0 - cl));
        };
        for (std::size_t i = 0; i < collective_calibration_parameters; ++i) {
            const double dist = std::abs(transformed(i, values[i]) - transformed(i, priors[i])) / calibration_prior_width[i];
            if (free[i] && dist > calibration_far_from_prior)
                out.warnings.push_back(std::string(calibration_parameter_names[i]) + " = " + detail::number_text(values[i]) +
                                       " is " + detail::number_text(std::round(dist * 10.0) / 10.0) +
                                       " prior widths from the datasheet value " + detail::number_text(priors[i]) +
                                       ": check the log's units, or the hardware is far from its datasheet");
            out.parameters.push_back({.name = std::string(calibration_parameter_names[i]),
                                      .value = values[i],
                                      .uncertainty = free[i] ? sigmas[i] : 0.0,
                                      .prior = priors[i],
                                      .prior_width = calibration_prior_width[i],
                                      .space = (i == 0 || i == 1 || i == 2 || i == 4) ? "log" : "logit",
                                      .prior_ratio = free[i] ? sdv(static_cast<Eigen::Index>(i)) / calibration_prior_width[i] : 1.0,
                                      .fitted = free[i],
                                      .prior_distance = dist});
        }
    }
    const auto tiny = predict_collective(out.calibrated, g, op, v.front().bytes, opt.model);
    const auto huge = predict_collective(out.calibrated, g, op, bytes(1e18), opt.model);
    out.latency = tiny.latency;
    // σ of the latency by the delta method: its gradient in θ (central differences) against the
    // posterior covariance.
    if (k > 0) {
        cluster work = c;
        Eigen::VectorXd grad = Eigen::VectorXd::Zero(np);
        for (Eigen::Index i = 0; i < np; ++i) {
            if (!free[static_cast<std::size_t>(i)]) continue;
            const double h = 1e-4;
            Eigen::VectorXd tp = theta, tm = theta;
            tp(i) += h;
            tm(i) -= h;
            apply_calibration_vector(tp, work.comm, cls);
            const double lp = in_seconds(predict_collective(work, g, op, v.front().bytes, opt.model).latency);
            apply_calibration_vector(tm, work.comm, cls);
            const double lm = in_seconds(predict_collective(work, g, op, v.front().bytes, opt.model).latency);
            grad(i) = (lp - lm) / (2.0 * h);
        }
        out.latency_sigma = seconds(std::sqrt(std::max(grad.dot(cov * grad), 0.0)));
    }
    out.peak_busbw = huge.busbw;
    out.peak_busbw_sigma = out.peak_busbw * (out.efficiency_sigma / out.fitted.efficiency);
    const byte_rate link_peak = cls == link_class::net ? c.node.inter.per_direction / static_cast<double>(c.node.gpus_per_nic())
                                                       : c.node.intra.per_direction;
    out.bandwidth = out.fitted.efficiency * link_peak;
    std::vector<double> meas, pred;
    double sum_w = 0.0, sum_wy = 0.0, tss = 0.0, rss = 0.0;
    for (const auto& sweep : sw)
        for (const auto& p : sweep.rows) {
            meas.push_back(in_us(p.time));
            pred.push_back(in_us(predict_collective(out.calibrated, sweep.group, sweep.op, p.bytes, opt.model).time));
            rss += std::pow(pred.back() / in_us(p.time) - 1.0, 2);
            sum_w += 1.0 / (in_us(p.time) * in_us(p.time));
            sum_wy += 1.0 / in_us(p.time);
        }
    const double mean = sum_wy / sum_w;
    for (const auto& p : all) tss += std::pow((in_us(p.time) - mean) / in_us(p.time), 2);
    out.r2 = tss > 0 ? 1.0 - rss / tss : 1.0;
    const auto s = summarize_errors(meas, pred);
    out.median_rel_error = s.median;
    out.max_rel_error = s.max;
    // Never hand back a NaN or infinite figure: a fit whose own values are not finite is an
    // error naming the rows (an uncertainty the rows cannot bound is printed as such by the CLI).
    for (const double value : {in_us(out.latency), in_GBps(out.peak_busbw), in_GBps(out.bandwidth),
                               out.fitted.efficiency, out.median_rel_error, out.max_rel_error, out.r2})
        if (!std::isfinite(value))
            throw input_error("rows", std::to_string(v.size()) + " rows from " + detail::number_text(in_bytes(v.front().bytes)) +
                                          " to " + detail::number_text(in_bytes(v.back().bytes)) + " bytes (the fit is not finite)",
                              "measurements of one collective on the described topology, times in microseconds");
    // ... and never a calibration that the cluster JSON (io/cluster_json.hpp) would refuse to read
    // back: step latencies in [0, 1 s], efficiency and LL/LL128 fractions in [1e-6, 1], half size
    // in [0, 1e18 B], exponent in [1e-3, 8]. Rows that drive the fit there (every time equal,
    // times of minutes for bytes) do not describe a link.
    auto outside = [&](const char* what, double value, double lo, double hi) {
        if (!(value >= lo && value <= hi))
            throw input_error("rows", std::to_string(v.size()) + " rows from " + detail::number_text(in_bytes(v.front().bytes)) +
                                          " to " + detail::number_text(in_bytes(v.back().bytes)) + " bytes (the fit gives " + what +
                                          " " + detail::number_text(value) + ")",
                              "measurements whose fit is a usable calibration: " + std::string(what) + " in [" +
                                  detail::number_text(lo) + ", " + detail::number_text(hi) + "]");
    };
    using lim = comm_params_limits;
    for (const duration& lat : out.fitted.step_latency)
        outside("a step latency (s)", in_seconds(lat), 0.0, lim::latency_us / 1e6);
    outside("the efficiency", out.fitted.efficiency, lim::min_efficiency, lim::max_efficiency);
    outside("the half size (B)", in_bytes(out.fitted.half_size), 0.0, detail::absurd_limit(quantity_kind::size));
    outside("the exponent", out.fitted.exponent, lim::min_exponent, lim::max_exponent);
    for (const double f : out.calibrated.comm.protocol_bandwidth)
        outside("a protocol bandwidth fraction", f, lim::min_protocol_bandwidth, lim::max_protocol_bandwidth);
    return out;
}

inline collective_calibration calibrate_sorted(const cluster& c, const placement& g, collective_op op,
                                               const std::vector<fit_point>& v, const calibration_options& opt) {
    const std::array<calibration_sweep, 1> one{calibration_sweep{.group = g, .op = op, .rows = v}};
    return calibrate_sorted(c, one, opt);
}

}  // namespace detail

/// @brief Predicted time of the calibrated description at `s`:
/// predict_collective(calibrated, group, op, s, model).time.
[[nodiscard]] inline duration predict_time(const collective_calibration& f, data_size s) {
    return predict_collective(f.calibrated, f.group, f.op, s, f.model).time;
}

namespace detail {

/// Held-out median error of the calibration: fit on every other size and predict the rest when
/// each half holds at least 9 distinct sizes (the full parameter set), else leave-one-out (each
/// row predicted by a fit on the others; 3 rows or more). nullopt when neither is possible.
template <class Fit>
std::optional<double> cross_validate_calibration(const std::vector<fit_point>& v, Fit&& fit) {
    auto distinct = [](const std::vector<fit_point>& w) {
        std::size_t n = w.empty() ? 0 : 1;
        for (std::size_t i = 1; i < w.size(); ++i) n += w[i].bytes != w[i - 1].bytes ? 1u : 0u;
        return n;
    };
    std::vector<double> errors;
    auto predict_into = [&](const std::vector<fit_point>& train, const std::vector<fit_point>& test) {
        const auto model = fit(train);
        for (const auto& p : test) {
            const double t = in_us(predict_time(model, p.bytes));
            if (!std::isfinite(t)) return false;
            errors.push_back(std::fabs(t - in_us(p.time)) / in_us(p.time));
        }
        return true;
    };
    try {
        if (distinct(half(v, 0)) > collective_calibration_parameters && distinct(half(v, 1)) > collective_calibration_parameters) {
            for (std::size_t k = 0; k < 2; ++k)
                if (!predict_into(half(v, k), half(v, 1 - k))) return std::nullopt;
            return median(errors);
        }
        if (v.size() < 3) return std::nullopt;
        for (std::size_t i = 0; i < v.size(); ++i) {
            std::vector<fit_point> train;
            for (std::size_t j = 0; j < v.size(); ++j)
                if (j != i) train.push_back(v[j]);
            if (distinct(train) < 2) return std::nullopt;
            if (!predict_into(train, {v[i]})) return std::nullopt;
        }
    } catch (const input_error&) {
        return std::nullopt;
    }
    return median(errors);
}

}  // namespace detail

/// @brief Fits a measured sweep of `op` over the ranks `g` of cluster `c` through the collective
/// model (collective/model.hpp) by maximum a posteriori estimation: Levenberg-Marquardt on the
/// relative residuals (predict_collective(c', g, op, Sᵢ).time / tᵢ - 1) / σ_n together with the
/// prior's z-scores, where c' is `c` with the realistic-mode parameters of one link class
/// (`calibrated_class`: the scale-up class on one node, `net` across nodes) replaced by θ: its
/// per-step latencies of LL, LL128 and Simple (log space), its large-message efficiency (logit),
/// its saturation half size (log) and exponent (logit onto (0.25, 4)); and the LL / LL128 payload
/// fractions (logit). The prior is Gaussian in that space, centred on `c`'s values with the
/// widths `calibration_prior_width`, so a short or noisy sweep never wanders off the datasheet.
///
/// Which parameters are fitted follows what the rows can identify:
/// * 9 or more distinct sizes: all 8 (one more row than parameters, as an unregularised fit
///   needs; the prior then only guards the directions the rows leave flat);
/// * 5 to 8 distinct sizes: the three step latencies as one common factor (`step_latencies_tied`)
///   when a row is at or below 1 MiB (`latency_size_limit`), the efficiency when a row is above
///   it, and the saturation half size and exponent;
/// * 2 to 4 distinct sizes: the latency factor and the efficiency only (with the same conditions);
/// and of those candidates, any whose data information Σ (∂rᵢ/∂φ)² / σ_n² at the prior is below a
/// tenth of its prior precision (e.g. a latency when every row is a 4 GiB transfer) is kept at the
/// prior. Everything else (base latencies, Simple's fraction, the other classes, the algorithm
/// choice) stays as in `c`, so `calibrated` reproduces the fitted curve wherever a cluster goes.
/// σ_n is `calibration_residual_sd` (5%) in a first pass, then re-estimated from the residuals
/// when the rows leave 2 degrees of freedom. Uncertainties: the posterior covariance (JᵀJ)⁻¹ of
/// the whitened residuals (Gauss-Newton Hessian + prior precision), mapped by the delta method;
/// `parameters` lists every parameter, fitted or kept. Throws input_error for fewer than 2 rows,
/// one distinct size, a non-positive time, or a placement the cluster cannot hold.
[[nodiscard]] inline collective_calibration calibrate_collective(const cluster& c, const placement& g, collective_op op,
                                                                 std::span<const fit_point> points,
                                                                 const calibration_options& opt = {}) {
    const auto v = detail::checked_points(points, "rows", 2);
    (void)predict_collective(c, g, op, v.back().bytes, opt.model);  // validates the placement
    auto out = detail::calibrate_sorted(c, g, op, v, opt);
    if (!opt.cross_validate) return out;
    out.cv_median_rel_error = detail::cross_validate_calibration(
        v, [&](const std::vector<fit_point>& t) { return detail::calibrate_sorted(c, g, op, t, opt); });
    return out;
}

/// @brief Joint MAP calibration of several sweeps of the same system (e.g. all_reduce and
/// all_gather, or 2 and 4 nodes): one parameter set, the residuals of every row, otherwise as
/// `calibrate_collective` (which parameters are fitted follows the distinct sizes of all rows).
/// Sweeps of different collectives or scales separate what one sweep cannot: a per-step latency
/// (which grows with the algorithm's step count) from the saturation curve (which grows with the
/// bytes moved). Every sweep must calibrate the same link class as the first (all inside one
/// node, or all across nodes); the reported latency, group and op are the first sweep's, the
/// errors cover every row. No cross-validation. Throws input_error as `calibrate_collective`, or
/// for an empty list or sweeps of different classes.
[[nodiscard]] inline collective_calibration calibrate_collectives(const cluster& c, std::span<const calibration_sweep> sweeps,
                                                                  const calibration_options& opt = {}) {
    if (sweeps.empty()) throw input_error("sweeps", "none", "at least one measured sweep");
    std::vector<calibration_sweep> sw;
    for (std::size_t i = 0; i < sweeps.size(); ++i) {
        const std::string field = "sweeps[" + std::to_string(i) + "].rows";
        calibration_sweep s = sweeps[i];
        s.rows = detail::checked_points(sweeps[i].rows, field, 2);
        (void)predict_collective(c, s.group, s.op, s.rows.back().bytes, opt.model);  // validates the placement
        sw.push_back(std::move(s));
    }
    return detail::calibrate_sorted(c, sw, opt);
}

/// @brief The cluster calibrated to a fitted closed-form curve: the curve `f` is sampled at powers
/// of two from 8 B to 16 GiB and `calibrate_collective` fits the model to those samples over the
/// first `ranks` GPUs (placed on consecutive GPUs, whole nodes). Returns the calibrated description.
/// Throws input_error if the cluster cannot hold `ranks`.
[[nodiscard]] inline cluster calibrated_cluster(const cluster& c, collective_op op, int ranks, const saturating_fit& f) {
    if (ranks < 2 || ranks > c.total_gpus())
        throw input_error("ranks", std::to_string(ranks),
                          "between 2 and the cluster's GPU count (" + std::to_string(c.total_gpus()) + ")");
    // ranks per NVLink domain (the node unless the domain spans nodes: comm_view)
    const placement g{.ranks = ranks, .ranks_per_node = std::min(ranks, c.domain_gpus()), .stride = 1};
    std::vector<fit_point> pts;
    for (int i = 0; i <= 31; ++i) {
        const double s = std::ldexp(8.0, i);
        pts.push_back({bytes(s), time_as_read{in_us(predict_time(f, bytes(s)))}});
    }
    const auto v = detail::checked_points(pts, "rows");
    return detail::calibrate_sorted(c, g, op, v, {}).calibrated;
}

}  // namespace commscale
