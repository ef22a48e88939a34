#pragma once
/// @file calibrate/fit_step.hpp
/// @brief Training-run calibration of the step predictor (`commscale fit-step`): fits the compute
/// model's scales (`compute_calibration`: the kernel efficiency of GEMMs, attention and
/// memory-bound kernels together, and where the runs tell it apart, the attention efficiency) to
/// measured step times, so that what-ifs start from the user's own stack.
///
/// Model. For run i with measured step time yᵢ, the residual is rᵢ(θ) = ln(predictedᵢ(θ) / yᵢ) / σ,
/// θ = (ln kernel, ln attention, ln overlap, ln overhead), plus one prior row θⱼ / τ per fitted parameter: a log-normal prior
/// centred on the documented model (θ = 0) with τ = 0.4 (a factor 1.5 either way at one sigma), so
/// that one or two runs move the scale only as far as they justify and a short set never wanders
/// off (maximum a posteriori, Gaussian errors in log space; e.g. Gelman et al., Bayesian Data
/// Analysis, 3rd ed., Sec. 14.8). σ is the measurement noise of a step time: the rms of the
/// residuals with n - p degrees of freedom when the runs outnumber the parameters, never below 1%;
/// otherwise the documented default of 3% (the spread of step times across repeated runs and
/// neighbouring scales in NVIDIA's published recipe tables). Solved by Levenberg-Marquardt
/// (calibrate/fit.hpp); the uncertainty is the posterior covariance (JᵀJ)⁻¹ at the optimum,
/// reported on the parameter's own scale (value x the log-space sigma).
///
/// Identifiability. `kernel_efficiency` is fitted from one run on. `attention_efficiency` is fitted
/// only with three or more runs whose attention share of the compute time (from the uncalibrated
/// prediction) spans at least 0.1 (different sequence lengths or model widths); otherwise it is
/// kept at 1 and listed as kept. `overlap_slowdown` (the scale on the compute lost beside
/// overlapped communication, `overlap_compute_slowdown`) is fitted with three or more runs whose
/// share of that slowdown in the step spans at least 0.02 (runs that hide very different amounts of
/// communication: DP/ZeRO traffic at different scales, TP overlap on and off) and that determine it
/// better than the prior does (step_fit_identified); otherwise kept at 1. `kernel_overhead`
/// (the scale on the per-kernel overheads, compute_constants::kernel_overhead_s and
/// moe_launch_overhead_s: CUDA graphs hide launches, a slower host adds to them) likewise with
/// three or more runs whose overhead share of the layer time spans at least 0.05 (small and large
/// models, short and long sequences, MoE layers with many local experts) and that determine it.
/// With fewer runs or less spread these scales move every run alike and are not told apart from
/// the kernel efficiency.
///
/// Cross-validation: leave one run out, fit the others, predict it; the median relative error of
/// those predictions (absent with a single run).

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "../error.hpp"
#include "../hardware/accelerators.hpp"
#include "../hardware/topology.hpp"
#include "../io/training_runs.hpp"
#include "../predict/step.hpp"
#include "../workload/flops.hpp"
#include "fit.hpp"

namespace commscale {

/// @brief Prior width of each fitted scale, in natural-log units (see the file comment).
inline constexpr double step_fit_prior_sigma = 0.4;
/// @brief Measurement noise of a step time used when the runs do not estimate it (see the file comment).
inline constexpr double step_fit_default_noise = 0.03;
/// @brief Smallest spread of the runs' attention share for fitting attention_efficiency apart.
inline constexpr double step_fit_attention_spread = 0.1;
/// @brief Smallest spread of the runs' overlap-slowdown share of the step for fitting overlap_slowdown.
inline constexpr double step_fit_overlap_spread = 0.02;
/// @brief Smallest spread of the runs' per-kernel-overhead share of the layer time for fitting kernel_overhead.
inline constexpr double step_fit_overhead_spread = 0.05;
/// @brief overlap_slowdown and kernel_overhead are reported fitted only when their posterior log-σ is below this fraction
/// of the prior's (the runs carry at least as much information about it as the prior: 1/√2).
inline constexpr double step_fit_identified = 0.7071067811865476;

/// @brief One fitted scale with its one-sigma uncertainty.
struct fitted_scale {
    std::string name;
    double value = 1.0;
    double uncertainty = 0.0;
};

/// @brief Per-run outcome of a fit.
struct fitted_run {
    std::string label;
    duration measured_step{};
    duration predicted_before{};  ///< uncalibrated prediction
    duration predicted_after{};   ///< with the fitted calibration
    std::optional<duration> cv_predicted;  ///< predicted by a fit on the other runs
};

/// @brief Result of `fit_step`.
struct step_fit {
    compute_calibration calibration{};    ///< to put in a cluster (`cluster.compute`)
    std::vector<fitted_scale> fitted;     ///< fitted parameters, with uncertainty
    std::vector<std::string> kept;        ///< parameters left at their documented value
    std::vector<fitted_run> runs;
    double median_rel_error_before = 0;   ///< median |predicted / measured - 1|, uncalibrated
    double median_rel_error = 0;          ///< the same after the fit
    std::optional<double> cv_median_rel_error;  ///< leave-one-out (absent with one run)
    double noise = step_fit_default_noise;      ///< σ used (relative)
};

namespace detail {

struct prepared_run {
    const training_run* run;
    cluster c;
    accelerator acc;
    double measured;
};

/// The fitted scales: kernel, attention, overlap-slowdown and kernel overhead (in that order).
inline constexpr std::size_t step_fit_scales = 4;
inline constexpr std::array<std::string_view, step_fit_scales> step_fit_names{"kernel_efficiency", "attention_efficiency",
                                                                              "overlap_slowdown", "kernel_overhead"};
inline constexpr std::array<double, step_fit_scales> step_fit_lower{compute_calibration::min_efficiency,
                                                                    compute_calibration::min_efficiency, 0.0, 0.0};
inline constexpr std::array<double, step_fit_scales> step_fit_upper{
    compute_calibration::max_efficiency, compute_calibration::max_efficiency, compute_calibration::max_overlap_slowdown,
    compute_calibration::max_kernel_overhead};
using scale_vector = std::array<double, step_fit_scales>;

[[nodiscard]] inline double predict_with(const prepared_run& pr, const scale_vector& v, const step_options& o) {
    cluster c = pr.c;
    c.compute.kernel_efficiency = std::clamp(v[0], step_fit_lower[0], step_fit_upper[0]);
    c.compute.attention_efficiency = std::clamp(v[1], step_fit_lower[1], step_fit_upper[1]);
    c.compute.overlap_slowdown = std::clamp(v[2], step_fit_lower[2], step_fit_upper[2]);
    c.compute.kernel_overhead = std::clamp(v[3], step_fit_lower[3], step_fit_upper[3]);
    return in_seconds(predict_step(pr.run->model, c, pr.acc, pr.run->p, o).step);
}

struct fit_core {
    scale_vector value{1.0, 1.0, 1.0, 1.0}, sd{0.0, 0.0, 0.0, 0.0};
    double noise = step_fit_default_noise;
};

/// MAP fit of the log-scales on `subset`; `free[j]` selects scale j (the kernel's always).
[[nodiscard]] inline fit_core fit_scales(const std::vector<const prepared_run*>& subset,
                                         const std::array<bool, step_fit_scales>& free, const step_options& o) {
    std::vector<std::size_t> idx;  // scale of each fitted coordinate
    for (std::size_t j = 0; j < step_fit_scales; ++j)
        if (j == 0 || free[j]) idx.push_back(j);
    const auto n = static_cast<Eigen::Index>(idx.size());
    const auto m = static_cast<Eigen::Index>(subset.size());
    auto scales = [&](const Eigen::VectorXd& x) {
        scale_vector v{1.0, 1.0, 1.0, 1.0};
        for (Eigen::Index j = 0; j < n; ++j) v[idx[static_cast<std::size_t>(j)]] = std::exp(x(j));
        return v;
    };
    auto raw = [&](const Eigen::VectorXd& x, std::size_t i) {
        return std::log(predict_with(*subset[i], scales(x), o) / subset[i]->measured);
    };
    fit_core out;
    // noise: estimated from an unregularised pass when the runs outnumber the parameters
    double noise = step_fit_default_noise;
    auto solve = [&](double sigma) {
        auto residuals = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
            for (Eigen::Index i = 0; i < m; ++i) r(i) = raw(x, static_cast<std::size_t>(i)) / sigma;
            for (Eigen::Index j = 0; j < n; ++j) r(m + j) = x(j) / step_fit_prior_sigma;
        };
        lm_options opt;
        opt.difference_floor = 1.0;
        opt.difference_step = 1e-5;
        opt.max_iterations = 60;
        return fit_levenberg_marquardt(residuals, Eigen::VectorXd::Zero(n), m + n, opt);
    };
    nonlinear_fit f = solve(noise);
    if (m > n) {
        double rss = 0;
        for (Eigen::Index i = 0; i < m; ++i) {
            const double ri = raw(f.parameters, static_cast<std::size_t>(i));
            rss += ri * ri;
        }
        noise = std::max(0.01, std::sqrt(rss / static_cast<double>(m - n)));
        f = solve(noise);
    }
    out.noise = noise;
    const Eigen::VectorXd x = f.parameters;
    // posterior covariance (JᵀJ)⁻¹ of the whitened residuals, data and prior rows
    Eigen::MatrixXd J(m + n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
        const double h = 1e-4;
        Eigen::VectorXd xp = x, xm = x;
        xp(j) += h;
        xm(j) -= h;
        for (Eigen::Index i = 0; i < m; ++i)
            J(i, j) = (raw(xp, static_cast<std::size_t>(i)) - raw(xm, static_cast<std::size_t>(i))) / (2 * h) / noise;
        for (Eigen::Index k = 0; k < n; ++k) J(m + k, j) = (k == j) ? 1.0 / step_fit_prior_sigma : 0.0;
    }
    const Eigen::MatrixXd cov = (J.transpose() * J).inverse();
    const scale_vector v = scales(x);
    for (Eigen::Index j = 0; j < n; ++j) {
        const std::size_t q = idx[static_cast<std::size_t>(j)];
        out.value[q] = std::clamp(v[q], step_fit_lower[q], step_fit_upper[q]);
        out.sd[q] = out.value[q] * std::sqrt(std::max(0.0, cov(j, j)));
    }
    return out;
}

[[nodiscard]] inline double median_abs_rel(const std::vector<double>& pred, const std::vector<double>& meas) {
    std::vector<double> e;
    for (std::size_t i = 0; i < pred.size(); ++i) e.push_back(std::fabs(pred[i] / meas[i] - 1.0));
    return median(e);
}

}  // namespace detail

/// @brief Fits the compute calibration of `base` (its accelerator, network and any collective
/// calibration are kept) to measured training runs. Each run is predicted on `base` with as many
/// nodes as it used. Throws input_error for no runs, a run whose GPUs the node size does not
/// divide, or a run the predictor rejects (the error names the run).
[[nodiscard]] inline step_fit fit_step(const std::vector<training_run>& runs, const cluster& base,
                                       const step_options& o = {}) {
    if (runs.empty()) throw input_error("runs", "none", "at least one measured training run");
    std::vector<detail::prepared_run> prepared;
    prepared.reserve(runs.size());
    std::vector<double> attention_share, overlap_share, overhead_share;
    for (const auto& r : runs) {
        if (!r.not_expressible.empty()) continue;  // kept in the file, not expressible: not fitted
        detail::prepared_run pr{&r, detail::cluster_for_run(base, r), {}, detail::measured_step(r)};
        pr.c.compute = {};
        pr.acc = accelerator_by_name(pr.c.node.accelerator, "cluster.accelerator");
        step_breakdown s;
        try {
            s = predict_step(r.model, pr.c, pr.acc, r.p, o);
        } catch (const input_error& e) {
            throw input_error(r.label + ": " + e.field(), e.value(), e.expected());
        }
        const double lt = in_seconds(s.layer.forward() + s.layer.backward());
        attention_share.push_back(lt > 0 ? in_seconds(s.layer.attention_fwd + s.layer.attention_bwd) / lt : 0.0);
        overlap_share.push_back(in_seconds(s.step) > 0 ? in_seconds(s.overlap_slowdown) / in_seconds(s.step) : 0.0);
        overhead_share.push_back(lt > 0 ? in_seconds(s.layer.overhead_fwd + s.layer.overhead_bwd) / lt : 0.0);
        prepared.push_back(pr);
    }
    if (prepared.empty())
        throw input_error("runs", "none expressible (every row has a not_expressible reason)",
                          "at least one measured training run the predictor can express");
    auto spread = [](const std::vector<double>& v) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        return *hi - *lo;
    };
    std::array<bool, detail::step_fit_scales> free{
        true, prepared.size() >= 3 && spread(attention_share) >= step_fit_attention_spread,
        prepared.size() >= 3 && spread(overlap_share) >= step_fit_overlap_spread,
        prepared.size() >= 3 && spread(overhead_share) >= step_fit_overhead_spread};

    std::vector<const detail::prepared_run*> all;
    for (const auto& pr : prepared) all.push_back(&pr);
    detail::fit_core core = detail::fit_scales(all, free, o);
    // overlap_slowdown and kernel_overhead only where the runs, not the prior, determine them
    // (posterior log-σ under step_fit_identified x the prior's): each is a few percent of a
    // step at most on most runs
    bool dropped = false;
    for (std::size_t j : {std::size_t{2}, std::size_t{3}})
        if (free[j] && core.sd[j] > step_fit_identified * step_fit_prior_sigma * core.value[j]) {
            free[j] = false;
            dropped = true;
        }
    if (dropped) core = detail::fit_scales(all, free, o);

    step_fit out;
    out.noise = core.noise;
    out.calibration.kernel_efficiency = core.value[0];
    out.calibration.attention_efficiency = core.value[1];
    out.calibration.overlap_slowdown = core.value[2];
    out.calibration.kernel_overhead = core.value[3];
    for (std::size_t j = 0; j < detail::step_fit_scales; ++j) {
        const std::string name(detail::step_fit_names[j]);
        if (free[j]) out.fitted.push_back({name, core.value[j], core.sd[j]});
        else out.kept.push_back(name);
    }

    std::vector<double> meas, before, after, cv_pred, cv_meas;
    for (std::size_t i = 0; i < prepared.size(); ++i) {
        const auto& pr = prepared[i];
        fitted_run fr;
        fr.label = pr.run->label;
        fr.measured_step = seconds(pr.measured);
        fr.predicted_before = seconds(detail::predict_with(pr, {1.0, 1.0, 1.0, 1.0}, o));
        fr.predicted_after = seconds(detail::predict_with(pr, core.value, o));
        if (prepared.size() >= 2) {
            std::vector<const detail::prepared_run*> others;
            for (std::size_t j = 0; j < prepared.size(); ++j)
                if (j != i) others.push_back(&prepared[j]);
            const std::array<bool, detail::step_fit_scales> loo_free{true, free[1] && others.size() >= 3,
                                                                     free[2] && others.size() >= 3,
                                                                     free[3] && others.size() >= 3};
            const detail::fit_core loo = detail::fit_scales(others, loo_free, o);
            fr.cv_predicted = seconds(detail::predict_with(pr, loo.value, o));
            cv_pred.push_back(in_seconds(*fr.cv_predicted));
            cv_meas.push_back(pr.measured);
        }
        meas.push_back(pr.measured);
        before.push_back(in_seconds(fr.predicted_before));
        after.push_back(in_seconds(fr.predicted_after));
        out.runs.push_back(fr);
    }
    out.median_rel_error_before = detail::median_abs_rel(before, meas);
    out.median_rel_error = detail::median_abs_rel(after, meas);
    if (!cv_pred.empty()) out.cv_median_rel_error = detail::median_abs_rel(cv_pred, cv_meas);
    return out;
}

}  // namespace commscale
