// The compute model's constants fitted to the calibration set (calibrate/compute_fit.hpp, issue 24):
// the fit re-derives the checked-in defaults (predict/compute.hpp fitted_compute_constants) from
// data/calibration/published_runs.csv and fails when they drift; its cross-validated errors meet
// the target (dense runs, leave one model out, at most 10% median) and beat the 40%-MFU
// rule of thumb; and fit-step, given four runs of one stack at one sequence length, predicts that
// stack's other runs of the set (other sizes, sequence lengths, GPU counts) within 8% median.
#include "catch_shim.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <commscale/calibrate/compute_fit.hpp>
#include <commscale/calibrate/fit_step.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/training_runs.hpp>

using namespace commscale;

namespace {

const std::string calibration_set = std::string(COMMSCALE_DATA_DIR) + "/calibration/published_runs.csv";

const compute_fit_family& family_named(const compute_fit_result& f, const std::string& name) {
    for (const auto& fam : f.families)
        if (fam.name == name) return fam;
    FAIL("no family " << name);
    return f.families.front();
}

}  // namespace

TEST_CASE("compute_fit on the calibration set re-derives fitted_compute_constants") {
    const auto runs = io::load_training_runs(calibration_set);
    REQUIRE(runs.size() == 118);
    compute_fit_options opt;
    opt.cross_validate = false;
    const compute_fit_result f = compute_fit(runs, presets::dgx_a100, opt);
    CHECK(f.dense.runs == 101);  // the dense stage's runs
    CHECK(f.moe.runs == 17);     // the MoE stage's
    CHECK(f.skipped.empty());
    compute_constants checked_in = fitted_compute_constants;
    REQUIRE(f.parameters.size() == compute_fit_parameter_names.size());
    for (std::size_t j = 0; j < f.parameters.size(); ++j) {
        const auto& p = f.parameters[j];
        const double in_header = detail::compute_constant(checked_in, j);
        INFO(p.name << ": fitted " << p.value << " +- " << p.uncertainty << ", predict/compute.hpp holds " << in_header
                    << " (refit: commscale fit-compute data/calibration/published_runs.csv, and update "
                       "fitted_compute_constants)");
        CHECK(p.value == Approx(in_header).epsilon(0.002));
        CHECK(p.uncertainty > 0.0);
        CHECK(p.uncertainty < p.value);
    }
    // docs/accuracy.md's table of the constants shows each fitted value +- 1 sigma (tools/regen_docs.py
    // writes that column): it holds this fit's values to the digits it prints
    const std::string doc = io::read_file(std::string(COMMSCALE_TEST_DATA_DIR) + "/../../docs/accuracy.md");
    for (const auto& p : f.parameters) {
        const std::string head = "| `" + p.name + "` |";
        const auto row = doc.find("\n" + head);
        INFO("docs/accuracy.md, the constants' table, row " << p.name << " (rerun tools/regen_docs.py)");
        REQUIRE(row != std::string::npos);
        const auto end = doc.find('\n', row + 1);
        const std::string line = doc.substr(row + 1, end - row - 1);
        const auto cell = line.rfind("| ", line.size() - 3);
        const std::string text = line.substr(cell + 2, line.size() - cell - 4);  // "V +- U" or "V +- U us"
        const auto pm = text.find(" +- ");
        REQUIRE(pm != std::string::npos);
        const std::string v = text.substr(0, pm), u = text.substr(pm + 4, text.find(' ', pm + 4) - pm - 4);
        const double scale = p.name.ends_with("_s") ? 1e6 : 1.0;  // the overheads in microseconds
        const auto dot = v.find('.');
        const double half_digit = 0.5 * std::pow(10.0, -(dot == std::string::npos ? 0.0 : static_cast<double>(v.size() - dot - 1)));
        INFO("the table shows " << text << ", the fit gives " << p.value * scale << " +- " << p.uncertainty * scale);
        CHECK(std::abs(std::stod(v) - p.value * scale) <= half_digit + 0.002 * p.value * scale);
        CHECK(std::abs(std::stod(u) - p.uncertainty * scale) <= half_digit + 0.1 * p.uncertainty * scale);
    }
    // the third stage: the one accelerator of the set without a GEMM measurement, GB300, whose
    // catalog efficiency is this fit's (hardware/accelerators.hpp; tools/regen_docs.py --constants)
    REQUIRE(f.accelerator_efficiencies.size() == 1);
    const auto& g = f.accelerator_efficiencies.front();
    CHECK(g.name == "gb300");
    CHECK(g.prior == default_compute_efficiency);
    INFO("gb300: fitted " << g.value << " +- " << g.uncertainty << ", the catalog holds " << gb300.compute_efficiency);
    CHECK(g.value == Approx(gb300.compute_efficiency).epsilon(0.002));
    CHECK(gb300.compute_efficiency_basis == efficiency_basis::fitted);
    CHECK(g.uncertainty > 0.0);
    CHECK(g.uncertainty < 0.1);
    // GB300's 1,400 W keeps it above GB200's measured 0.729 and the 0.8 default: the same plans
    // ran 1.19-1.22x as fast on it (docs/accuracy.md)
    CHECK(g.value > gb200.compute_efficiency);
    CHECK(g.value > default_compute_efficiency);
}

TEST_CASE("compute_fit: an accelerator without a measurement is fitted on its runs, and held out at the default") {
    // the calibration set's runs on GB300 and GB200 (8 each)
    const auto all = io::load_training_runs(calibration_set);
    std::vector<training_run> runs, gb200_only;
    for (const auto& r : all) {
        if (r.family.find("GB300") != std::string::npos) runs.push_back(r);
        if (r.family.find("GB200") != std::string::npos) {
            runs.push_back(r);
            gb200_only.push_back(r);
        }
    }
    REQUIRE(runs.size() == 16);
    const compute_fit_result f = compute_fit(runs, presets::dgx_a100);
    REQUIRE(f.accelerator_efficiencies.size() == 1);
    CHECK(f.accelerator_efficiencies.front().name == "gb300");
    // a measured part is never refitted: the GB200 runs alone give no accelerator stage
    compute_fit_options no_cv;
    no_cv.cross_validate = false;
    const compute_fit_result g = compute_fit(gb200_only, presets::dgx_a100, no_cv);
    CHECK(g.accelerator_efficiencies.empty());
    // leaving GB300 out is the fit on GB200's runs alone, and a GB300 run is then predicted at the
    // default efficiency: the same tokens/s as predict_step with those constants and 0.8
    step_options o;
    o.constants = g.constants;
    accelerator at_default = gb300;
    at_default.compute_efficiency = default_compute_efficiency;
    int checked = 0;
    for (std::size_t i = 0; i < f.runs.size(); ++i) {
        const auto& r = f.runs[i];
        INFO(r.label);
        if (r.accelerator != "gb300") continue;
        const training_run& run = runs[i];  // no run was skipped: f.runs follows `runs`
        REQUIRE(run.label == r.label);
        const cluster c = detail::cluster_for_run(presets::dgx_a100, run);
        const double step = in_seconds(predict_step(run.model, c, at_default, run.p, o).step);
        const double tokens = static_cast<double>(run.p.global_batch) * run.p.seq / (step * static_cast<double>(run.gpus));
        CHECK(r.leave_accelerator_out == Approx(tokens).epsilon(1e-6));
        CHECK(r.in_sample != Approx(r.leave_accelerator_out).epsilon(1e-3));  // in sample it moved
        ++checked;
    }
    CHECK(checked == 8);
}

TEST_CASE("compute_fit: cross-validated errors on the calibration set beat the 40%-MFU rule of thumb") {
    const auto runs = io::load_training_runs(calibration_set);
    const compute_fit_result f = compute_fit(runs, presets::dgx_a100);
    const auto& d = f.dense;
    INFO("dense runs: kernel figures " << d.prior << ", in sample " << d.in_sample << ", leave one model out "
                                       << d.leave_model_out << ", leave one accelerator out " << d.leave_accelerator_out
                                       << ", 40%-MFU rule " << d.rule);
    REQUIRE(d.runs == 101);
    // the target: leave-one-model-out median error at most 10% on dense runs
    CHECK(d.leave_model_out <= 0.10);
    CHECK(d.leave_accelerator_out <= 0.12);
    CHECK(d.in_sample <= d.leave_model_out + 0.01);
    // the rule of thumb on the same runs (18.1% median; docs/accuracy.md), and the kernel-level
    // figures alone, are both further off than the fit's held-out predictions
    CHECK(d.leave_model_out < 0.5 * d.rule);
    CHECK(d.leave_model_out < d.prior);
    // the two large families, each predicted better than by the rule when its model is left out
    for (const char* name : {"NeMo 24.07 / H100 / fp8", "llm-foundry FSDP / A100-40GB / bf16"}) {
        const auto& fam = family_named(f, name);
        INFO(name << ": leave one model out " << fam.leave_model_out << ", rule " << fam.rule);
        CHECK(fam.leave_model_out < fam.rule);
    }
    // MoE runs (the second stage: moe_launch_overhead_s on top of the dense constants): the issue's
    // target is 15% leaving each model out; the fit reaches 7.9% (6.5% leaving each accelerator out,
    // 5.5% in sample), far ahead of the rule of thumb (103%). The kernel figures alone do about as
    // well (5.6%): the stage's one constant stays near its kernel figure (32 against 33 us), and the
    // dense constants it inherits are fitted to dense runs. The median of these 17 runs falls in a
    // gap of their errors (3.5% to 7.6% leaving each model out), where a shift of two runs by 2% moves
    // it by 2 points: the held-out median may be 3 points above the kernel figures', and the mean
    // absolute log error, which has no such gap, not worse than theirs by a point (0.103 and 0.100)
    const auto& moe = f.moe;
    INFO("MoE runs: kernel figures " << moe.prior << ", in sample " << moe.in_sample << ", leave one model out "
                                     << moe.leave_model_out << ", leave one accelerator out " << moe.leave_accelerator_out
                                     << ", 40%-MFU rule " << moe.rule);
    CHECK(moe.leave_model_out <= 0.10);
    CHECK(moe.leave_accelerator_out <= 0.10);
    CHECK(moe.leave_model_out < 0.25 * moe.rule);
    CHECK(moe.leave_model_out < moe.prior + 0.03);
    double held_out = 0, kernel = 0;
    int n = 0;
    for (const auto& r : f.runs) {
        if (!r.moe) continue;
        held_out += std::fabs(std::log(r.leave_model_out / r.measured));
        kernel += std::fabs(std::log(r.prior / r.measured));
        ++n;
    }
    REQUIRE(n == moe.runs);
    INFO("MoE mean |log error|: leave one model out " << held_out / n << ", kernel figures " << kernel / n);
    CHECK(held_out / n < kernel / n + 0.01);
    // every run has its held-out predictions
    for (const auto& r : f.runs) {
        INFO(r.label);
        CHECK(r.leave_model_out > 0);
        CHECK(r.leave_accelerator_out > 0);
        CHECK(std::isfinite(r.in_sample));
    }
}

TEST_CASE("fit-step on four llm-foundry runs at 2048 tokens predicts the stack's other 74 runs within 8%") {
    const auto all = io::load_training_runs(calibration_set);
    std::vector<training_run> fit_runs, others;
    for (const auto& r : all) {
        if (r.family != "llm-foundry FSDP / A100-40GB / bf16") continue;
        const bool chosen = r.gpus == 8 && r.p.seq == 2048 &&
                            (r.model_name == "mpt-1b" || r.model_name == "mpt-3b" || r.model_name == "mpt-7b" ||
                             r.model_name == "mpt-13b");
        (chosen ? fit_runs : others).push_back(r);
    }
    REQUIRE(fit_runs.size() == 4);
    REQUIRE(others.size() == 74);
    auto held_out = [&](const step_fit& f, const step_options& o) {
        std::vector<double> e;
        for (const auto& r : others) {
            cluster c = detail::cluster_for_run(presets::dgx_a100, r);
            c.compute = f.calibration;
            const double predicted = in_seconds(predict_step(r.model, c, r.p, o).step);
            e.push_back(std::fabs(predicted / detail::measured_step(r) - 1.0));
        }
        return median(e);
    };
    // from the fitted defaults (whose fit saw these runs among 101)
    const step_fit f = fit_step(fit_runs, presets::dgx_a100);
    const double from_fitted = held_out(f, {});
    // from the kernel-level figures alone, which saw no run: the transfer is fit-step's own
    step_options kernel;
    kernel.constants = kernel_constants;
    const step_fit g = fit_step(fit_runs, presets::dgx_a100, kernel);
    const double from_kernel = held_out(g, kernel);
    INFO("held-out median |error|: " << from_fitted << " from the fitted defaults (kernel scale "
                                     << f.calibration.kernel_efficiency << "), " << from_kernel
                                     << " from the kernel figures (kernel scale " << g.calibration.kernel_efficiency
                                     << ", attention " << g.calibration.attention_efficiency << ")");
    CHECK(from_fitted <= 0.08);
    CHECK(from_kernel <= 0.10);  // 7.6% when written
}

TEST_CASE("compute_fit and compute_constants: bad input names the field, the value and what is accepted") {
    // the defaults pass their own checks (predict_step skips validating them)
    CHECK_NOTHROW(validate(fitted_compute_constants, "fitted_compute_constants"));
    CHECK_NOTHROW(validate(kernel_constants, "kernel_constants"));
    CHECK_THROWS_WITH(compute_fit({}, presets::dgx_a100),
                      Catch::Contains("runs") && Catch::Contains("at least one run the predictor accepts"));
    compute_constants k = fitted_compute_constants;
    k.attention_efficiency = 1.5;
    CHECK_THROWS_WITH(validate(k, "constants"), Catch::Contains("constants.attention_efficiency") &&
                                                   Catch::Contains("1.5") && Catch::Contains("(0, 1]"));
    k = fitted_compute_constants;
    k.kernel_overhead_s = std::nan("");
    CHECK_THROWS_WITH(validate(k, "constants"), Catch::Contains("constants.kernel_overhead_s") && Catch::Contains("seconds"));
    step_options o;
    o.constants.memory_efficiency = 0.0;
    CHECK_THROWS_WITH(predict_step(model_by_name("llama3-8b"), presets::dgx_h100,
                                   plan{.tp = 1, .pp = 1, .dp = 8, .micro_batch = 1, .global_batch = 8, .seq = 4096}, o),
                      Catch::Contains("step_options.constants.memory_efficiency"));
}

TEST_CASE("fit-step recovers a per-kernel-overhead scale where the runs' overhead shares differ") {
    // The estimator on runs whose times it generates: the calibration set's Megatron-Bridge 25.11
    // runs on B200 and H100, dense and MoE (Qwen3 30B-A3B's 16 local experts of 768 at micro-batch
    // 1-2 spend a large share of their layer time in per-kernel overheads, Llama 3.1 405B almost
    // none), "measured" as the model predicts them with the overheads 3x the defaults (a host that
    // launches slower) and the kernels 0.9x. fit-step must find kernel_overhead apart from
    // kernel_efficiency, near the values that made the times.
    const auto all = io::load_training_runs(calibration_set);
    std::vector<training_run> runs;
    for (const auto& r : all)
        if (r.family.rfind("Megatron-Bridge 25.11 / B200", 0) == 0 || r.family.rfind("Megatron-Bridge 25.11 / H100", 0) == 0)
            runs.push_back(r);
    REQUIRE(runs.size() == 12);
    std::vector<double> share;
    for (auto& r : runs) {
        cluster c = detail::cluster_for_run(presets::dgx_a100, r);
        const auto s = predict_step(r.model, c, r.p);
        share.push_back(in_seconds(s.layer.overhead_fwd + s.layer.overhead_bwd) / in_seconds(s.layer.forward() + s.layer.backward()));
        c.compute.kernel_overhead = 3.0;
        c.compute.kernel_efficiency = 0.9;
        r.step_s = in_seconds(predict_step(r.model, c, r.p).step);
        r.tflops_per_gpu.reset();
        r.tokens_per_s_per_gpu.reset();
    }
    const auto [lo, hi] = std::minmax_element(share.begin(), share.end());
    INFO("overhead share of the layer time from " << *lo << " to " << *hi);
    CHECK(*hi - *lo >= step_fit_overhead_spread);
    const step_fit f = fit_step(runs, presets::dgx_a100);
    INFO("kernel_efficiency " << f.calibration.kernel_efficiency << ", kernel_overhead " << f.calibration.kernel_overhead);
    const auto fitted = [&](const std::string& name) {
        return std::any_of(f.fitted.begin(), f.fitted.end(), [&](const fitted_scale& x) { return x.name == name; });
    };
    REQUIRE(fitted("kernel_overhead"));
    CHECK(f.calibration.kernel_overhead == Approx(3.0).epsilon(0.15));
    CHECK(f.calibration.kernel_efficiency == Approx(0.9).epsilon(0.05));
    CHECK(f.median_rel_error < 0.01);
}
