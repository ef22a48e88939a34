#pragma once
/// @file calibrate/fit.hpp
/// @brief Least-squares machinery on Eigen, independent of networks: weighted linear least squares
/// with parameter covariance and R², a Levenberg-Marquardt solver for nonlinear models (numerical
/// Jacobian, covariance from JᵀJ); the summaries of relative errors (median, max) are in errors.hpp.
///
/// Conventions. Residuals are *weighted*: a fit minimises Σ (wᵢ rᵢ)², so relative-error fitting of
/// times uses wᵢ = 1 / t_measured,i (an 8-byte row and a 16-GiB row then count alike). Parameter
/// covariance is σ² (AᵀA)⁻¹ with A the weighted design matrix (or Jacobian) and σ² = RSS / (n - p),
/// the textbook estimate for least squares (e.g. Seber & Wild, Nonlinear Regression, 1989, §2.1;
/// NIST/SEMATECH e-Handbook of Statistical Methods §4.4.4). Marquardt's damping with diagonal
/// scaling follows D. W. Marquardt, "An Algorithm for Least-Squares Estimation of Nonlinear
/// Parameters", SIAM J. Appl. Math. 11(2), 1963.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "../error.hpp"
#include "errors.hpp"

namespace commscale {

/// @brief Result of a weighted linear least-squares fit y ≈ X b.
struct linear_fit {
    Eigen::VectorXd coefficients;    ///< b, in the units of the columns of X
    Eigen::MatrixXd covariance;      ///< σ² (AᵀA)⁻¹ with A = diag(w) X
    Eigen::VectorXd std_errors;      ///< sqrt of the covariance diagonal
    double residual_variance = 0.0;  ///< σ² = Σ (wᵢ rᵢ)² / (n - p)
    double r2 = 0.0;                 ///< weighted coefficient of determination, 1 - RSS_w / TSS_w
    int rows = 0;                    ///< n
    int dof = 0;                     ///< n - p
};

/// @brief Result of a nonlinear least-squares fit (Levenberg-Marquardt).
struct nonlinear_fit {
    Eigen::VectorXd parameters;      ///< the minimiser
    Eigen::MatrixXd covariance;      ///< σ² (JᵀJ)⁺ at the minimiser (pseudo-inverse if rank-deficient)
    Eigen::VectorXd std_errors;      ///< sqrt of the covariance diagonal; +inf for a parameter the data do not determine
    double cost = 0.0;               ///< Σ rᵢ² at the minimiser (the residual sum of squares)
    double residual_variance = 0.0;  ///< σ² = cost / (m - n), or 0 when m == n
    int iterations = 0;
    int evaluations = 0;             ///< residual-vector evaluations, Jacobian columns included
    bool converged = false;          ///< a tolerance was met before max_iterations
    bool identifiable = true;        ///< JᵀJ has full rank: every parameter is determined by the data
};

/// @brief Stopping rules and damping of `fit_levenberg_marquardt`.
struct lm_options {
    int max_iterations = 200;
    double cost_tolerance = 1e-12;       ///< stop when the relative decrease of the cost is below this
    double step_tolerance = 1e-10;       ///< stop when |Δx| < step_tolerance (|x| + step_tolerance)
    double gradient_tolerance = 1e-14;   ///< stop when max |Jᵀr| is below this
    double initial_damping = 1e-3;       ///< λ₀ of Marquardt (1963)
    double difference_step = 1e-6;       ///< relative step of the central-difference Jacobian
    /// Floor of |x| in that step, h = difference_step x max(|x|, difference_floor): parameters in log
    /// space pass 1 so that one near 0 (log 1) is not differenced with a step of 1e-14.
    double difference_floor = 1e-8;
    /// The residuals are already divided by their standard deviations (e.g. a MAP fit whose
    /// residual vector holds the data's z-scores and the prior's): the covariance is then (JᵀJ)⁺,
    /// the inverse Hessian of ½ Σ rᵢ², with no σ² = cost / (m - n) factor.
    bool known_variance = false;
};

namespace detail {

/// Pseudo-inverse of a symmetric positive semi-definite matrix, computed on its diagonally
/// scaled form D⁻¹MD⁻¹ (D = sqrt(diag M)) so that parameters of very different magnitude do not
/// look rank-deficient; scaled eigenvalues below `rel_tol` x the largest count as zero and clear
/// `full_rank`. A zero diagonal entry (a parameter that affects nothing) also clears it.
/// `undetermined`, when given, is set per parameter: true when its axis has a component of more
/// than 1e-6 (squared) in the dropped (null) space, i.e. the data do not fix that parameter.
inline Eigen::MatrixXd psd_pseudo_inverse(const Eigen::MatrixXd& m, bool& full_rank, double rel_tol = 1e-12,
                                          std::vector<bool>* undetermined = nullptr) {
    const Eigen::Index n = m.rows();
    Eigen::VectorXd d(n);
    full_rank = n > 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        d(i) = m(i, i) > 0.0 ? 1.0 / std::sqrt(m(i, i)) : 0.0;
        if (!(m(i, i) > 0.0)) full_rank = false;
    }
    const Eigen::MatrixXd scaled = d.asDiagonal() * m * d.asDiagonal();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(scaled);
    const Eigen::VectorXd ev = es.eigenvalues();
    const double top = ev.size() ? std::max(ev.maxCoeff(), 0.0) : 0.0;
    Eigen::VectorXd inv = Eigen::VectorXd::Zero(ev.size());
    if (!(top > 0.0)) full_rank = false;
    if (undetermined) undetermined->assign(static_cast<std::size_t>(n), false);
    for (Eigen::Index i = 0; i < ev.size(); ++i) {
        if (ev(i) > rel_tol * top) {
            inv(i) = 1.0 / ev(i);
            continue;
        }
        full_rank = false;
        if (undetermined)
            for (Eigen::Index j = 0; j < n; ++j)
                if (es.eigenvectors()(j, i) * es.eigenvectors()(j, i) > 1e-6) (*undetermined)[static_cast<std::size_t>(j)] = true;
    }
    if (undetermined)
        for (Eigen::Index j = 0; j < n; ++j)
            if (!(m(j, j) > 0.0)) (*undetermined)[static_cast<std::size_t>(j)] = true;
    return d.asDiagonal() * (es.eigenvectors() * inv.asDiagonal() * es.eigenvectors().transpose()) * d.asDiagonal();
}

inline Eigen::VectorXd sqrt_diagonal(const Eigen::MatrixXd& m) {
    Eigen::VectorXd s(m.rows());
    for (Eigen::Index i = 0; i < m.rows(); ++i) s(i) = std::sqrt(std::max(m(i, i), 0.0));
    return s;
}

}  // namespace detail

/// @brief Weighted linear least squares: the b minimising Σ (wᵢ (yᵢ - xᵢ·b))², with covariance
/// σ² (AᵀA)⁻¹ (A = diag(w) X, σ² = RSS / (n - p)) and weighted R² = 1 - RSS_w / TSS_w, TSS_w taken
/// about the w²-weighted mean of y. Solved by column-pivoting Householder QR on the column-scaled
/// system, so columns of very different magnitude (seconds and bytes) stay well conditioned.
/// Throws input_error if the shapes disagree, a value is not finite, a weight is not > 0, there are
/// not more rows than coefficients, or the columns are linearly dependent (e.g. every row has the
/// same message size).
[[nodiscard]] inline linear_fit fit_weighted_linear(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                    const Eigen::VectorXd& w) {
    const Eigen::Index n = x.rows(), p = x.cols();
    if (y.size() != n || w.size() != n)
        throw input_error("fit", std::to_string(y.size()) + " values and " + std::to_string(w.size()) + " weights",
                          std::to_string(n) + " of each (one per row)");
    if (p < 1) throw input_error("fit", "no coefficients", "at least one coefficient");
    if (n <= p)
        throw input_error("fit.rows", std::to_string(n),
                          "more rows than fitted coefficients (" + std::to_string(p) + ")");
    if (!x.allFinite() || !y.allFinite()) throw input_error("fit", "a non-finite value", "finite numbers");
    for (Eigen::Index i = 0; i < n; ++i)
        if (!(w(i) > 0.0) || !std::isfinite(w(i)))
            throw input_error("fit.weights[" + std::to_string(i) + "]", detail::number_text(w(i)), "a finite number > 0");

    Eigen::MatrixXd a = w.asDiagonal() * x;
    const Eigen::VectorXd b = w.cwiseProduct(y);
    Eigen::VectorXd scale = a.colwise().norm().transpose();
    for (Eigen::Index j = 0; j < p; ++j)
        if (!(scale(j) > 0.0)) throw input_error("fit.design", "a column of zeros", "every coefficient to affect some row");
    a = a * scale.cwiseInverse().asDiagonal();
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
    qr.setThreshold(1e-10);
    if (qr.rank() < p)
        throw input_error("fit.design", "rank " + std::to_string(qr.rank()) + " of " + std::to_string(p),
                          "linearly independent columns (rows that differ in the fitted variables)");
    const Eigen::VectorXd scaled_coef = qr.solve(b);

    linear_fit f;
    f.rows = static_cast<int>(n);
    f.dof = static_cast<int>(n - p);
    f.coefficients = scaled_coef.cwiseQuotient(scale);
    const Eigen::VectorXd r = b - a * scaled_coef;
    const double rss = r.squaredNorm();
    f.residual_variance = rss / static_cast<double>(n - p);
    bool full = true;
    const Eigen::MatrixXd inv = detail::psd_pseudo_inverse(a.transpose() * a, full);
    f.covariance = f.residual_variance * (scale.cwiseInverse().asDiagonal() * inv * scale.cwiseInverse().asDiagonal());
    f.std_errors = detail::sqrt_diagonal(f.covariance);
    const Eigen::VectorXd w2 = w.cwiseProduct(w);
    const double mean = w2.dot(y) / w2.sum();
    const double tss = (w.cwiseProduct(y.array().matrix() - Eigen::VectorXd::Constant(n, mean))).squaredNorm();
    f.r2 = tss > 0.0 ? 1.0 - rss / tss : (rss == 0.0 ? 1.0 : 0.0);
    return f;
}

/// @brief Levenberg-Marquardt minimisation of Σ rᵢ(x)² (Marquardt 1963, with diagonal scaling
/// of JᵀJ). `residuals(x, r)` fills the m residuals for parameters x (resize not needed: r has
/// size m on entry); a non-finite residual marks x as infeasible and the step is rejected. The
/// Jacobian is computed by central differences with relative step `difference_step`. Returns the
/// minimiser with covariance σ² (JᵀJ)⁺, σ² = cost / (m - n). Throws input_error if m < n, x0 has a
/// non-finite entry or the residuals at x0 are not finite.
template <class Residuals>
[[nodiscard]] nonlinear_fit fit_levenberg_marquardt(Residuals&& residuals, Eigen::VectorXd x0, Eigen::Index m,
                                                    const lm_options& opt = {}) {
    const Eigen::Index n = x0.size();
    if (n < 1) throw input_error("fit.parameters", "none", "at least one parameter");
    if (m < n)
        throw input_error("fit.rows", std::to_string(m), "at least as many rows as parameters (" + std::to_string(n) + ")");
    if (!x0.allFinite()) throw input_error("fit.start", "a non-finite starting value", "finite numbers");

    nonlinear_fit out;
    Eigen::VectorXd r(m), r_try(m), r_plus(m), r_minus(m);
    auto eval = [&](const Eigen::VectorXd& x, Eigen::VectorXd& res) {
        res.setZero();
        residuals(x, res);
        ++out.evaluations;
        return res.allFinite();
    };
    if (!eval(x0, r)) throw input_error("fit.start", "non-finite residuals at the starting point", "a feasible start");

    Eigen::VectorXd x = x0;
    double cost = r.squaredNorm();
    double lambda = opt.initial_damping;
    Eigen::MatrixXd jac(m, n);

    auto jacobian = [&](const Eigen::VectorXd& at) {
        for (Eigen::Index j = 0; j < n; ++j) {
            const double h = opt.difference_step * std::max(std::fabs(at(j)), opt.difference_floor);
            Eigen::VectorXd xp = at, xm = at;
            xp(j) += h;
            xm(j) -= h;
            const bool okp = eval(xp, r_plus), okm = eval(xm, r_minus);
            if (okp && okm) jac.col(j) = (r_plus - r_minus) / (2.0 * h);
            else if (okp) jac.col(j) = (r_plus - r) / h;
            else if (okm) jac.col(j) = (r - r_minus) / h;
            else jac.col(j).setZero();
        }
    };

    for (out.iterations = 0; out.iterations < opt.max_iterations; ++out.iterations) {
        jacobian(x);
        const Eigen::VectorXd g = jac.transpose() * r;
        if (g.cwiseAbs().maxCoeff() < opt.gradient_tolerance) {
            out.converged = true;
            break;
        }
        const Eigen::MatrixXd h = jac.transpose() * jac;
        Eigen::VectorXd diag = h.diagonal();
        const double floor = std::max(diag.maxCoeff(), 1e-300) * 1e-12;
        for (Eigen::Index j = 0; j < n; ++j) diag(j) = std::max(diag(j), floor);
        bool accepted = false, small_step = false;
        double new_cost = cost;
        Eigen::VectorXd x_try;
        for (int attempt = 0; attempt < 40; ++attempt) {
            Eigen::MatrixXd damped = h;
            damped.diagonal() += lambda * diag;
            const Eigen::VectorXd dx = damped.ldlt().solve(-g);
            if (!dx.allFinite()) {
                lambda *= 10.0;
                continue;
            }
            x_try = x + dx;
            small_step = dx.norm() < opt.step_tolerance * (x.norm() + opt.step_tolerance);
            if (eval(x_try, r_try)) {
                new_cost = r_try.squaredNorm();
                if (new_cost < cost) {
                    accepted = true;
                    break;
                }
            }
            if (small_step) break;
            lambda *= 10.0;
        }
        if (!accepted) {
            out.converged = small_step || cost == 0.0;
            break;
        }
        const double decrease = (cost - new_cost) / std::max(cost, std::numeric_limits<double>::min());
        x = x_try;
        r = r_try;
        cost = new_cost;
        lambda = std::max(lambda / 10.0, 1e-15);
        if (decrease < opt.cost_tolerance || small_step || cost == 0.0) {
            out.converged = true;
            ++out.iterations;
            break;
        }
    }

    jacobian(x);
    out.parameters = x;
    out.cost = cost;
    out.residual_variance = opt.known_variance ? 1.0 : m > n ? cost / static_cast<double>(m - n) : 0.0;
    bool full = true;
    std::vector<bool> undetermined;
    out.covariance = out.residual_variance * detail::psd_pseudo_inverse(jac.transpose() * jac, full, 1e-12, &undetermined);
    out.identifiable = full;
    out.std_errors = detail::sqrt_diagonal(out.covariance);
    // A parameter the data do not fix has no finite uncertainty (the pseudo-inverse would report 0).
    for (Eigen::Index j = 0; j < n; ++j)
        if (undetermined[static_cast<std::size_t>(j)] && out.residual_variance > 0.0)
            out.std_errors(j) = std::numeric_limits<double>::infinity();
    return out;
}

}  // namespace commscale
