// Least-squares machinery (calibrate/fit.hpp) against independently published or hand-derived values.
#include "catch_shim.hpp"

#include <array>
#include <cmath>

#include <commscale/calibrate/fit.hpp>

using namespace commscale;

namespace {

// NIST StRD nonlinear regression dataset Misra1a (Misra, D., NIST 1978, dental research
// monomolecular adsorption study; https://www.itl.nist.gov/div898/strd/nls/data/misra1a.shtml),
// model y = b1 (1 - exp(-b2 x)), "lower difficulty".
constexpr std::array<double, 14> misra_y{10.07, 14.73, 17.94, 23.93, 29.61, 35.18, 40.02,
                                         44.82, 50.76, 55.05, 61.01, 66.40, 75.47, 81.78};
constexpr std::array<double, 14> misra_x{77.6,  114.9, 141.1, 190.8, 239.9, 289.0, 332.8,
                                         378.4, 434.8, 477.3, 536.8, 593.1, 689.1, 760.0};
// Certified values (NIST): estimates, their standard deviations, residual sum of squares.
constexpr double misra_b1 = 2.3894212918E+02, misra_b1_sd = 2.7070075241E+00;
constexpr double misra_b2 = 5.5015643181E-04, misra_b2_sd = 7.2668688436E-06;
constexpr double misra_rss = 1.2455138894E-01;

nonlinear_fit fit_misra(double b1, double b2) {
    auto res = [](const Eigen::VectorXd& b, Eigen::VectorXd& r) {
        for (std::size_t i = 0; i < misra_x.size(); ++i)
            r(static_cast<Eigen::Index>(i)) = misra_y[i] - b(0) * (1.0 - std::exp(-b(1) * misra_x[i]));
    };
    Eigen::VectorXd x0(2);
    x0 << b1, b2;
    return fit_levenberg_marquardt(res, x0, static_cast<Eigen::Index>(misra_x.size()));
}

}  // namespace

TEST_CASE("Levenberg-Marquardt reproduces the NIST certified Misra1a fit from both NIST starts") {
    // NIST start 1 (far) and start 2 (near). Tolerances: NIST certifies 11 digits; a
    // central-difference Jacobian gives ~1e-7 relative on the estimates and ~1e-5 on the SDs.
    for (auto start : {std::array<double, 2>{500.0, 1e-4}, std::array<double, 2>{250.0, 5e-4}}) {
        const auto f = fit_misra(start[0], start[1]);
        REQUIRE(f.converged);
        REQUIRE(f.identifiable);
        CHECK_THAT(f.parameters(0), Catch::Matchers::WithinRel(misra_b1, 1e-6));
        CHECK_THAT(f.parameters(1), Catch::Matchers::WithinRel(misra_b2, 1e-6));
        CHECK_THAT(f.cost, Catch::Matchers::WithinRel(misra_rss, 1e-8));
        CHECK_THAT(f.std_errors(0), Catch::Matchers::WithinRel(misra_b1_sd, 1e-4));
        CHECK_THAT(f.std_errors(1), Catch::Matchers::WithinRel(misra_b2_sd, 1e-4));
        // NIST: residual standard deviation 1.0187876330E-01 with 12 degrees of freedom.
        CHECK_THAT(std::sqrt(f.residual_variance), Catch::Matchers::WithinRel(1.0187876330E-01, 1e-8));
    }
}

TEST_CASE("weighted linear least squares matches the textbook simple-regression formulas") {
    // y = a + b x through (0,1), (1,3), (2,2): x̄ = 1, ȳ = 2, Sxy = 1, Sxx = 2 -> b = 0.5, a = 1.5;
    // residuals -0.5, 1, -0.5 -> RSS 1.5, σ² = RSS / (n - 2) = 1.5; Var(b) = σ²/Sxx = 0.75;
    // Var(a) = σ² (1/n + x̄²/Sxx) = 1.25; TSS = 2 -> R² = 0.25 (e.g. Montgomery & Runger, §11.3).
    Eigen::MatrixXd x(3, 2);
    x << 1, 0, 1, 1, 1, 2;
    Eigen::VectorXd y(3);
    y << 1, 3, 2;
    const auto f = fit_weighted_linear(x, y, Eigen::VectorXd::Ones(3));
    CHECK(f.coefficients(0) == Approx(1.5).epsilon(1e-12));
    CHECK(f.coefficients(1) == Approx(0.5).epsilon(1e-12));
    CHECK(f.residual_variance == Approx(1.5).epsilon(1e-12));
    CHECK(f.covariance(1, 1) == Approx(0.75).epsilon(1e-12));
    CHECK(f.covariance(0, 0) == Approx(1.25).epsilon(1e-12));
    CHECK(f.r2 == Approx(0.25).epsilon(1e-12));
    CHECK(f.dof == 1);

    // Uniform weights do not change the estimates or their covariance (σ² absorbs the scale).
    const auto g = fit_weighted_linear(x, y, Eigen::VectorXd::Constant(3, 7.0));
    CHECK(g.coefficients(1) == Approx(0.5).epsilon(1e-12));
    CHECK(g.covariance(1, 1) == Approx(0.75).epsilon(1e-12));
}

TEST_CASE("relative weighting recovers exact constants over eight decades of scale") {
    // t = alpha + beta S, alpha = 20e-6 s, beta = 1 / 200e9 s/B, S from 8 B to 16 GiB: noiseless,
    // so the fit must return the constants to rounding error and R² = 1.
    const double alpha = 20e-6, beta = 1.0 / 200e9;
    Eigen::MatrixXd x(32, 2);
    Eigen::VectorXd y(32), w(32);
    for (int i = 0; i < 32; ++i) {
        const double s = std::ldexp(8.0, i);
        x(i, 0) = 1.0;
        x(i, 1) = s;
        y(i) = alpha + beta * s;
        w(i) = 1.0 / y(i);
    }
    const auto f = fit_weighted_linear(x, y, w);
    CHECK_THAT(f.coefficients(0), Catch::Matchers::WithinRel(alpha, 1e-9));
    CHECK_THAT(f.coefficients(1), Catch::Matchers::WithinRel(beta, 1e-9));
    CHECK(f.r2 == Approx(1.0).margin(1e-12));
}

TEST_CASE("bad fitting input is an input_error, never NaN") {
    Eigen::MatrixXd x(3, 2);
    x << 1, 5, 1, 5, 1, 5;  // every row the same size: slope and intercept are not separable
    Eigen::VectorXd y(3);
    y << 1, 2, 3;
    CHECK_THROWS_AS(fit_weighted_linear(x, y, Eigen::VectorXd::Ones(3)), input_error);
    Eigen::MatrixXd x2(2, 2);
    x2 << 1, 1, 1, 2;
    CHECK_THROWS_AS(fit_weighted_linear(x2, y.head(2), Eigen::VectorXd::Ones(2)), input_error);  // no dof
    Eigen::MatrixXd x3(3, 2);
    x3 << 1, 1, 1, 2, 1, 3;
    Eigen::VectorXd w(3);
    w << 1, 0, 1;
    CHECK_THROWS_AS(fit_weighted_linear(x3, y, w), input_error);  // zero weight
    y(1) = std::nan("");
    CHECK_THROWS_AS(fit_weighted_linear(x3, y, Eigen::VectorXd::Ones(3)), input_error);

    CHECK_THROWS_AS(median({}), input_error);
    const std::array<double, 2> measured{1.0, 0.0}, predicted{1.0, 1.0};
    CHECK_THROWS_AS(relative_errors(measured, predicted), input_error);
}

TEST_CASE("median and relative-error summary") {
    CHECK(median({3.0, 1.0, 2.0}) == 2.0);
    CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);
    const std::array<double, 3> measured{100.0, 200.0, 400.0}, predicted{110.0, 190.0, 400.0};
    const auto s = summarize_errors(measured, predicted);
    CHECK(s.median == Approx(0.05));  // errors 0.10, 0.05, 0.00
    CHECK(s.max == Approx(0.10));
}

TEST_CASE("a parameter the data do not determine reports an infinite uncertainty, not 0") {
    // r_i = x0 - y_i: x0 is the mean of y (σ² = var / n), x1 affects nothing.
    const std::array<double, 4> y{1.0, 2.0, 3.0, 4.0};
    auto res = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) {
        for (Eigen::Index i = 0; i < 4; ++i) r(i) = x(0) - y[static_cast<std::size_t>(i)];
    };
    Eigen::VectorXd x0(2);
    x0 << 0.0, 5.0;
    const auto f = fit_levenberg_marquardt(res, x0, 4);
    CHECK(f.parameters(0) == Approx(2.5).epsilon(1e-8));
    CHECK_FALSE(f.identifiable);
    CHECK(std::isinf(f.std_errors(1)));
    // RSS = 5, σ² = RSS / (m - n) = 5 / 2, Var(x0) = σ² / 4 (JᵀJ = 4 for x0).
    CHECK(f.std_errors(0) == Approx(std::sqrt(2.5 / 4.0)).epsilon(1e-6));
}
