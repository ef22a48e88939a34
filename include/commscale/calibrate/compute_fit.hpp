#pragma once
/// @file calibrate/compute_fit.hpp
/// @brief Fits the compute model's constants (predict/compute.hpp `compute_constants`) to a set of
/// published training runs, and cross-validates the fit (`commscale fit-compute`). Run on the
/// project's calibration set (data/calibration/published_runs.csv) it re-derives the checked-in
/// defaults `fitted_compute_constants`; run on a user's own runs it gives their stack's constants.
///
/// Model. For run i, zᵢ(θ) = ln(predicted tokens/s per GPU(θ) / measured) / σ under a Cauchy loss
/// (robust: a run whose recipe the model cannot describe weighs like a few runs), with θⱼ = ln(kⱼ /
/// priorⱼ) for each fitted constant kⱼ, plus one prior row θⱼ / τ (a log-normal prior centred on
/// the kernel-level figure of `kernel_constants`, τ = compute_fit_prior_sigma). Maximum a
/// posteriori by Levenberg-Marquardt (calibrate/fit.hpp) as in calibrate/fit_step.hpp; σ is the rms
/// of the first pass's log residuals from their median absolute deviation (never below 2%), so that the prior weighs against the data
/// as much as the data's own scatter says it should; the uncertainty is the posterior covariance
/// (JᵀJ)⁻¹ at the optimum, on the constant's own scale.
///
/// Stages. The six dense constants are fitted to the dense runs (fp8_backward_slowdown only
/// through the runs in FP8 or MXFP8 (MXFP8: its excess over the kernel figure), the others leave it at its kernel figure); then, with those held,
/// moe_launch_overhead_s (which only MoE layers use) to the MoE runs: the MoE layer's costs then
/// cannot bend the dense constants, and a set without MoE runs leaves it at its kernel figure (and
/// the reverse). grouped_gemm_efficiency stays at its kernel figure: on the calibration set's 17
/// MoE runs, fitting it beside the launch overhead moved it to 0.58 and predicted the held-out
/// models worse than the kernel figure did (leave one model out 26% against 18%), since the
/// runs' scatter (the same model 2.5x apart on two systems) is not a GEMM-rate effect. Runs that
/// are not expressible or that the predictor rejects are left out and listed.
///
/// Accelerators without a published GEMM measurement (accelerator::compute_efficiency_basis
/// `assumed`, or `fitted` by an earlier run of this fit): a third stage, with every constant above
/// held, fits each one's compute_efficiency, log-normal around default_compute_efficiency (τ as
/// above), to every run on it, dense and MoE. On the calibration set that is GB300 alone (no MAMF
/// figure is published; its 1,400 W budget against GB200's 1,200 W keeps higher clocks), whose 8
/// runs put it at 0.88 (hardware/accelerators.hpp `gb300`). A fit without runs on the accelerator
/// (leaving it out) predicts it at default_compute_efficiency. The first two stages, too, see such
/// an accelerator at the default, never at its checked-in fitted figure: the fit does not feed on
/// its own output.
///
/// Cross-validation. Leave one model out (every run of one model is predicted by a fit on the runs
/// of the other models) and leave one accelerator out (likewise per accelerator); the in-sample
/// errors beside them, and the 40%-MFU rule of thumb (calibrate/accuracy.hpp), per family.

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "../error.hpp"
#include "../hardware/accelerators.hpp"
#include "../io/training_runs.hpp"
#include "../predict/step.hpp"
#include "../workload/flops.hpp"
#include "accuracy.hpp"
#include "errors.hpp"
#include "fit.hpp"

namespace commscale {

/// @brief Prior width of each fitted constant, in natural-log units: a factor e^0.5 = 1.65 either way
/// at one sigma, wide enough for the data to move a kernel-level figure to what a whole stack runs
/// at, narrow enough that a constant the runs do not determine stays near its kernel figure.
inline constexpr double compute_fit_prior_sigma = 0.5;
/// @brief Floor of the per-run noise σ (log space) of compute_fit.
inline constexpr double compute_fit_min_noise = 0.02;

/// @brief One fitted constant.
struct compute_fit_parameter {
    std::string name;
    double prior = 0;        ///< kernel-level figure (kernel_constants)
    double value = 0;        ///< fitted
    double uncertainty = 0;  ///< one sigma, on the constant's own scale
};

/// @brief Predictions of one run under the fit.
struct compute_fit_run {
    std::string label, family, model, accelerator;
    bool moe = false;
    double measured = 0;         ///< tokens/s per GPU
    double prior = 0;            ///< predicted with kernel_constants
    double in_sample = 0;        ///< predicted with the fit on every fitting run
    double leave_model_out = 0;  ///< predicted by a fit without this run's model (0: not cross-validated)
    double leave_accelerator_out = 0;  ///< predicted by a fit without this run's accelerator (0: not cross-validated)
    double rule = 0;             ///< the 40%-MFU rule of thumb
};

/// @brief Median absolute errors of one family (or of every run of a kind).
struct compute_fit_family {
    std::string name;
    int runs = 0;
    double prior = 0, in_sample = 0, leave_model_out = 0, leave_accelerator_out = 0, rule = 0;
};

/// @brief Options of compute_fit.
struct compute_fit_options {
    bool cross_validate = true;      ///< leave-one-model-out and leave-one-accelerator-out fits
};

/// @brief The fit and its cross-validation.
struct compute_fit_result {
    compute_constants constants{};                 ///< fitted
    std::vector<compute_fit_parameter> parameters;  ///< in compute_fit_parameter_names order
    double noise = 0;                              ///< σ of a dense run's log residual at the optimum
    double moe_noise = 0;                          ///< the same for the MoE runs (0 without MoE runs)
    std::vector<compute_fit_run> runs;             ///< every predicted run
    std::vector<std::string> skipped;              ///< "label: reason" of runs left out
    std::vector<compute_fit_family> families;      ///< per family, in order of first appearance
    /// compute_efficiency of each accelerator of the runs without a published measurement (its
    /// basis not `measured`), by name in alphabetical order (prior default_compute_efficiency)
    std::vector<compute_fit_parameter> accelerator_efficiencies;
    compute_fit_family all, dense, moe;            ///< every run, every dense run, every MoE run
};

/// @brief The constants compute_fit fits, in the order of its parameter vector: the dense stage's
/// first (compute_fit_dense_parameters of them), then the MoE stage's.
inline constexpr std::array<std::string_view, 7> compute_fit_parameter_names{
    "gemm_shape_efficiency", "attention_efficiency",  "te_attention_efficiency", "memory_efficiency",
    "kernel_overhead_s",     "fp8_backward_slowdown", "moe_launch_overhead_s"};
/// @brief How many of compute_fit_parameter_names the dense stage fits.
inline constexpr std::size_t compute_fit_dense_parameters = 6;

namespace detail {

[[nodiscard]] inline double& compute_constant(compute_constants& k, std::size_t i) {
    switch (i) {
        case 0: return k.gemm_shape_efficiency;
        case 1: return k.attention_efficiency;
        case 2: return k.te_attention_efficiency;
        case 3: return k.memory_efficiency;
        case 4: return k.kernel_overhead_s;
        case 5: return k.fp8_backward_slowdown;
        default: return k.moe_launch_overhead_s;
    }
}

[[nodiscard]] inline compute_constants constants_at(const Eigen::VectorXd& theta) {
    compute_constants k = kernel_constants;
    for (std::size_t i = 0; i < compute_fit_parameter_names.size(); ++i)
        compute_constant(k, i) *= std::exp(theta[static_cast<Eigen::Index>(i)]);
    return k;
}

/// A run ready to predict: its cluster and accelerator resolved once.
struct compute_fit_case {
    const training_run* run = nullptr;
    cluster system{};
    accelerator acc{};
    double measured = 0;  ///< tokens/s per GPU
    std::string model, accel, family;
    bool moe = false;
    int fitted = -1;  ///< index of its accelerator among the fitted efficiencies (-1: its catalog figure)
};

/// The `i`-th fitted accelerator efficiency under θ: default_compute_efficiency x e^θ, its entry
/// after the constants'.
[[nodiscard]] inline double fitted_efficiency_at(const Eigen::VectorXd& theta, std::size_t i) {
    return default_compute_efficiency * std::exp(theta[static_cast<Eigen::Index>(compute_fit_parameter_names.size() + i)]);
}

/// The accelerator of case `c` under θ: its fitted efficiency where the fit fits it, its own
/// figure otherwise.
[[nodiscard]] inline accelerator accelerator_at(const compute_fit_case& c, const Eigen::VectorXd& theta) {
    accelerator a = c.acc;
    if (c.fitted >= 0) a.compute_efficiency = fitted_efficiency_at(theta, static_cast<std::size_t>(c.fitted));
    return a;
}

/// Predicted tokens/s per GPU of one case under θ, whose constants `k` = constants_at(θ) the
/// caller computed once for all its cases (NaN where the predictor rejects them or the
/// accelerator's efficiency leaves (0, 1]).
[[nodiscard]] inline double predicted_tokens(const compute_fit_case& c, const compute_constants& k, const Eigen::VectorXd& theta) {
    step_options o;
    o.constants = k;
    const accelerator a = accelerator_at(c, theta);
    if (!(a.compute_efficiency <= accelerator_limits::max_compute_efficiency)) return std::numeric_limits<double>::quiet_NaN();
    try {
        const step_breakdown s = predict_step(c.run->model, c.system, a, c.run->p, o);
        return static_cast<double>(c.run->p.global_batch) * c.run->p.seq / (in_seconds(s.step) * static_cast<double>(c.run->gpus));
    } catch (const input_error&) {
        return std::numeric_limits<double>::quiet_NaN();
    }
}

/// One stage's MAP fit: the parameters [first, last) of θ on the cases selected by `use`, the others
/// held at `theta`'s values; returns θ with the stage's parameters fitted (and its noise and the
/// stage's covariance through the out-parameters). Without a selected case θ is returned as given.
[[nodiscard]] inline Eigen::VectorXd fit_stage(const std::vector<compute_fit_case>& cases, const std::vector<bool>& use,
                                               Eigen::VectorXd theta, Eigen::Index first, Eigen::Index last,
                                               double* noise_out = nullptr, Eigen::MatrixXd* covariance = nullptr) {
    const Eigen::Index n = last - first;
    std::vector<const compute_fit_case*> sel;
    for (std::size_t i = 0; i < cases.size(); ++i)
        if (use[i]) sel.push_back(&cases[i]);
    const auto m = static_cast<Eigen::Index>(sel.size());
    if (m == 0) {
        if (covariance) *covariance = Eigen::MatrixXd::Identity(n, n) * (compute_fit_prior_sigma * compute_fit_prior_sigma);
        return theta;
    }
    auto full = [&](const Eigen::VectorXd& x) {
        Eigen::VectorXd t = theta;
        t.segment(first, n) = x;
        return t;
    };
    auto log_error = [&](const compute_fit_case& c, const compute_constants& k, const Eigen::VectorXd& t) {
        return std::log(predicted_tokens(c, k, t) / c.measured);
    };
    // Cauchy loss on the standardized log errors z (k = 2.385: 95% efficiency under Gaussian
    // errors; Holland & Welsch 1977), as residuals sign(z) sqrt(k^2 ln(1 + (z/k)^2)): a run the
    // model cannot describe (a recipe the table does not state) weighs like a few runs, not like
    // the square of its error
    constexpr double cauchy_k = 2.385;
    auto robust = [](double z) {
        const double rho = cauchy_k * cauchy_k * std::log1p((z / cauchy_k) * (z / cauchy_k));
        return std::copysign(std::sqrt(rho), z);
    };
    auto solve = [&](double sigma) {
        auto residuals = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
            const Eigen::VectorXd t = full(x);
            const compute_constants k = constants_at(t);
            const bool ok = in_range(k);
            for (Eigen::Index i = 0; i < m; ++i)
                r[i] = ok ? robust(log_error(*sel[static_cast<std::size_t>(i)], k, t) / sigma) : std::numeric_limits<double>::quiet_NaN();
            for (Eigen::Index j = 0; j < n; ++j) r[m + j] = x[j] / compute_fit_prior_sigma;
        };
        lm_options opt;
        opt.known_variance = true;
        opt.difference_floor = 1.0;
        opt.difference_step = 1e-4;
        opt.max_iterations = 100;
        opt.cost_tolerance = 1e-10;
        return fit_levenberg_marquardt(residuals, theta.segment(first, n), m + n, opt);
    };
    // first pass at 10%, then σ from its residuals' median absolute deviation (1.4826 x the median
    // |error|, the normal-consistent scale that outliers do not inflate), and the fit again
    nonlinear_fit f = solve(0.1);
    std::vector<double> abs_errors;
    const Eigen::VectorXd first_pass = full(f.parameters);
    const compute_constants first_k = constants_at(first_pass);
    for (const auto* c : sel) abs_errors.push_back(std::fabs(log_error(*c, first_k, first_pass)));
    const double sigma = std::max(compute_fit_min_noise, 1.4826 * median(abs_errors));
    f = solve(sigma);
    if (noise_out) *noise_out = sigma;
    if (covariance) *covariance = f.covariance;
    return full(f.parameters);
}

/// The three stages on the cases selected by `use`: the dense constants on its dense runs, the MoE
/// constants on its MoE runs, then each of the `accelerators` fitted efficiencies on every run on
/// that accelerator (its variance into `accelerator_var`). θ: the constants, then the efficiencies.
[[nodiscard]] inline Eigen::VectorXd fit_constants(const std::vector<compute_fit_case>& cases, const std::vector<bool>& use,
                                                   std::size_t accelerators, double* dense_noise = nullptr,
                                                   double* moe_noise = nullptr, Eigen::MatrixXd* dense_cov = nullptr,
                                                   Eigen::MatrixXd* moe_cov = nullptr,
                                                   std::vector<double>* accelerator_var = nullptr) {
    const auto all = static_cast<Eigen::Index>(compute_fit_parameter_names.size());
    const auto d = static_cast<Eigen::Index>(compute_fit_dense_parameters);
    std::vector<bool> dense(use.size()), moe(use.size());
    for (std::size_t i = 0; i < use.size(); ++i) {
        dense[i] = use[i] && !cases[i].moe;
        moe[i] = use[i] && cases[i].moe;
    }
    Eigen::VectorXd theta = fit_stage(cases, dense, Eigen::VectorXd::Zero(all + static_cast<Eigen::Index>(accelerators)), 0, d,
                                      dense_noise, dense_cov);
    theta = fit_stage(cases, moe, theta, d, all, moe_noise, moe_cov);
    if (accelerator_var) accelerator_var->assign(accelerators, 0.0);
    for (std::size_t a = 0; a < accelerators; ++a) {
        std::vector<bool> on(use.size());
        for (std::size_t i = 0; i < use.size(); ++i) on[i] = use[i] && cases[i].fitted == static_cast<int>(a);
        const Eigen::Index j = all + static_cast<Eigen::Index>(a);
        Eigen::MatrixXd cov;
        theta = fit_stage(cases, on, theta, j, j + 1, nullptr, &cov);
        if (accelerator_var) (*accelerator_var)[a] = cov(0, 0);
    }
    return theta;
}

[[nodiscard]] inline compute_fit_family summarize_compute_fit(std::string name, const std::vector<const compute_fit_run*>& rs) {
    compute_fit_family f;
    f.name = std::move(name);
    f.runs = static_cast<int>(rs.size());
    if (rs.empty()) return f;
    auto med = [&](double compute_fit_run::*field) {
        std::vector<double> e;
        for (const auto* r : rs)
            if (r->*field > 0) e.push_back(std::fabs(r->*field / r->measured - 1.0));
        return e.empty() ? 0.0 : median(e);
    };
    f.prior = med(&compute_fit_run::prior);
    f.in_sample = med(&compute_fit_run::in_sample);
    f.leave_model_out = med(&compute_fit_run::leave_model_out);
    f.leave_accelerator_out = med(&compute_fit_run::leave_accelerator_out);
    f.rule = med(&compute_fit_run::rule);
    return f;
}

}  // namespace detail

/// @brief Fits compute_constants to `runs` (see the file comment). `default_system` is the cluster
/// of runs without a `cluster` column. Throws input_error when no run can be fitted.
[[nodiscard]] inline compute_fit_result compute_fit(const std::vector<training_run>& runs, const cluster& default_system,
                                                    const compute_fit_options& opt = {}) {
    compute_fit_result out;
    std::vector<detail::compute_fit_case> cases;
    for (const auto& r : runs) {
        if (!r.not_expressible.empty()) {
            out.skipped.push_back(r.label + ": " + r.not_expressible);
            continue;
        }
        detail::compute_fit_case c;
        c.run = &r;
        try {
            c.system = detail::cluster_for_run(default_system, r);
            c.acc = accelerator_by_name(c.system.node.accelerator, "cluster.accelerator");
            c.measured = detail::measured_tokens_per_s_per_gpu(r);
            (void)predict_step(r.model, c.system, c.acc, r.p);  // rejects what the predictor rejects
        } catch (const input_error& e) {
            out.skipped.push_back(r.label + ": " + e.what());
            continue;
        }
        c.model = r.model_name.empty() ? std::string(r.model.name) : r.model_name;
        c.accel = std::string(c.acc.name);
        c.moe = r.model.experts > 1;
        c.family = !r.family.empty() ? r.family : std::string(c.accel) + " / " + std::string(to_string(r.p.precision));
        cases.push_back(std::move(c));
    }
    const std::vector<bool> use(cases.size(), true);
    if (cases.empty())
        throw input_error("runs", std::to_string(runs.size()) + " run(s), none predicted",
                          "at least one run the predictor accepts, with a measurement");
    // the accelerators without a measured efficiency, alphabetically
    std::set<std::string> unmeasured;
    for (const auto& c : cases)
        if (c.acc.compute_efficiency_basis != efficiency_basis::measured) unmeasured.insert(c.accel);
    const std::vector<std::string> fitted_accelerators(unmeasured.begin(), unmeasured.end());
    for (auto& c : cases)
        if (unmeasured.count(c.accel))
            c.fitted = static_cast<int>(std::find(fitted_accelerators.begin(), fitted_accelerators.end(), c.accel) -
                                        fitted_accelerators.begin());
    const std::size_t n_acc = fitted_accelerators.size();
    Eigen::MatrixXd dense_cov, moe_cov;
    std::vector<double> acc_var;
    const Eigen::VectorXd theta =
        detail::fit_constants(cases, use, n_acc, &out.noise, &out.moe_noise, &dense_cov, &moe_cov, &acc_var);
    out.constants = detail::constants_at(theta);
    for (std::size_t j = 0; j < compute_fit_parameter_names.size(); ++j) {
        compute_fit_parameter p;
        p.name = std::string(compute_fit_parameter_names[j]);
        compute_constants prior = kernel_constants;
        p.prior = detail::compute_constant(prior, j);
        p.value = detail::compute_constant(out.constants, j);
        const bool dense_stage = j < compute_fit_dense_parameters;
        const auto jj = static_cast<Eigen::Index>(dense_stage ? j : j - compute_fit_dense_parameters);
        const Eigen::MatrixXd& cov = dense_stage ? dense_cov : moe_cov;
        p.uncertainty = p.value * std::sqrt(std::max(0.0, cov(jj, jj)));
        out.parameters.push_back(std::move(p));
    }
    for (std::size_t a = 0; a < n_acc; ++a) {
        compute_fit_parameter p;
        p.name = fitted_accelerators[a];
        p.prior = default_compute_efficiency;
        p.value = detail::fitted_efficiency_at(theta, a);
        p.uncertainty = p.value * std::sqrt(std::max(0.0, acc_var[a]));
        out.accelerator_efficiencies.push_back(std::move(p));
    }
    const Eigen::VectorXd prior = Eigen::VectorXd::Zero(theta.size());  // the kernel figures, efficiencies at the default
    // predictions
    out.runs.resize(cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        auto& r = out.runs[i];
        r.label = c.run->label;
        r.family = c.family;
        r.model = c.model;
        r.accelerator = c.accel;
        r.moe = c.moe;
        r.measured = c.measured;
        r.prior = detail::predicted_tokens(c, kernel_constants, prior);
        r.in_sample = detail::predicted_tokens(c, out.constants, theta);
        r.rule = rule_of_thumb_tokens_per_s_per_gpu(c.run->model, c.acc, c.run->p.precision, c.run->p.seq);
    }
    if (opt.cross_validate) {
        auto leave_out = [&](auto key, double compute_fit_run::*field) {
            std::set<std::string> groups;
            for (std::size_t i = 0; i < cases.size(); ++i)
                if (use[i]) groups.insert(key(cases[i]));
            for (const auto& g : groups) {
                std::vector<bool> train = use;
                for (std::size_t i = 0; i < cases.size(); ++i)
                    if (key(cases[i]) == g) train[i] = false;
                const Eigen::VectorXd t = detail::fit_constants(cases, train, n_acc);
                const compute_constants k = detail::constants_at(t);
                for (std::size_t i = 0; i < cases.size(); ++i)
                    if (use[i] && key(cases[i]) == g) out.runs[i].*field = detail::predicted_tokens(cases[i], k, t);
            }
        };
        leave_out([](const detail::compute_fit_case& c) { return c.model; }, &compute_fit_run::leave_model_out);
        leave_out([](const detail::compute_fit_case& c) { return c.accel; }, &compute_fit_run::leave_accelerator_out);
    }
    std::vector<std::string> order;
    std::map<std::string, std::vector<const compute_fit_run*>> by;
    std::vector<const compute_fit_run*> every, dense, moe;
    for (const auto& r : out.runs) {
        if (!by.count(r.family)) order.push_back(r.family);
        by[r.family].push_back(&r);
        every.push_back(&r);
        (r.moe ? moe : dense).push_back(&r);
    }
    for (const auto& name : order) out.families.push_back(detail::summarize_compute_fit(name, by[name]));
    out.all = detail::summarize_compute_fit("all", every);
    out.dense = detail::summarize_compute_fit("dense", dense);
    out.moe = detail::summarize_compute_fit("MoE", moe);
    return out;
}

}  // namespace commscale
