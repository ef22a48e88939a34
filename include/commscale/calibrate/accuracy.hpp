#pragma once
/// @file calibrate/accuracy.hpp
/// @brief The accuracy report (`commscale accuracy`): predicts every run of a runs CSV
/// (io/training_runs.hpp) with the documented model and no fitting, and sets the prediction beside
/// the measurement and beside a planner's rule of thumb, per run and per family of runs.
///
/// Quantity compared: training tokens per second per GPU, free of FLOP-counting conventions
/// (predicted = global batch x sequence / (predicted step x GPUs); measured = the run's
/// `tokens_per_s_per_gpu`, else derived from `step_s`, else from `tflops_per_gpu` and the library's
/// model FLOPs). Error = predicted / measured - 1 (positive: predicted too fast).
///
/// Rule of thumb: 40% of the precision's dense peak, in model FLOPs: tokens/s per GPU =
/// 0.4 x peak(dtype) / model_flops_per_token(model, seq) (workload/flops.hpp: 6 x active parameters
/// plus the attention scores per token, the library's own count).
///
/// Families: the run's `family` column, else "<source or framework> / <accelerator> / <dtype>".
/// A run the predictor rejects (or one marked `not_expressible` in the file) is reported with the
/// reason and left out of the medians; a run that does not fit in memory under the memory model is
/// predicted, counted, and flagged (its publisher ran it: the memory model is what is wrong).

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../hardware/accelerators.hpp"
#include "../io/training_runs.hpp"
#include "../predict/step.hpp"
#include "../workload/flops.hpp"
#include "errors.hpp"

namespace commscale {

/// @brief The rule of thumb's fraction of the dense peak (model FLOPs utilization).
inline constexpr double rule_of_thumb_mfu = 0.4;

/// @brief The rule of thumb's tokens/s per GPU for `m` at sequence `seq` in `precision` on `acc`:
/// rule_of_thumb_mfu x the precision's dense peak / model_flops_per_token.
[[nodiscard]] inline double rule_of_thumb_tokens_per_s_per_gpu(const transformer& m, const accelerator& acc, dtype precision,
                                                               double seq) {
    const double peak = in_tflops(peak_for(acc, precision, "dtype")) * 1e12;
    return rule_of_thumb_mfu * peak / in_flops(model_flops_per_token(m, seq));
}

/// @brief One run of the report.
struct accuracy_run {
    std::string label;        ///< "runs.csv:3 (llama3-8b, 8 GPUs)"
    std::string family;
    std::string model;        ///< the model cell as written
    std::string system;       ///< cluster name
    std::string accelerator;
    std::string dtype;
    std::string source, source_location;
    long long gpus = 0;
    double measured_tokens_per_s_per_gpu = 0;
    bool expressible = true;
    std::string reason;       ///< why not expressible, or why flagged (memory)
    // the rest only when expressible
    double predicted_tokens_per_s_per_gpu = 0;
    double rel_error = 0;                      ///< predicted / measured - 1
    double rule_tokens_per_s_per_gpu = 0;      ///< the 40%-MFU rule of thumb
    double rule_rel_error = 0;
    std::string bottleneck;
    double step_s = 0, measured_step_s = 0;
    double compute_s = 0, bubble_s = 0, exposed_comm_s = 0;
    double attention_share = 0;                ///< attention / layer compute (forward + backward)
    double mfu = 0;
    double memory_per_gpu_GiB = 0, memory_capacity_GiB = 0;
    bool fits_in_memory = true;
};

/// @brief Medians of one family.
struct accuracy_family {
    std::string name;
    int runs = 0;            ///< expressible runs (in the medians)
    int not_expressible = 0;
    int not_fitting = 0;     ///< expressible runs the memory model says do not fit
    double median_abs_error = 0, median_error = 0;            ///< the model
    double rule_median_abs_error = 0, rule_median_error = 0;  ///< the rule of thumb
};

/// @brief The whole report.
struct accuracy_report {
    std::vector<accuracy_run> runs;
    std::vector<accuracy_family> families;  ///< in order of first appearance
    accuracy_family overall;                ///< every expressible run
};

namespace detail {

[[nodiscard]] inline accuracy_family summarize_family(std::string name, const std::vector<const accuracy_run*>& rs) {
    accuracy_family f;
    f.name = std::move(name);
    std::vector<double> a, s, ra, rsig;
    for (const auto* r : rs) {
        if (!r->expressible) {
            ++f.not_expressible;
            continue;
        }
        ++f.runs;
        if (!r->fits_in_memory) ++f.not_fitting;
        a.push_back(std::fabs(r->rel_error));
        s.push_back(r->rel_error);
        ra.push_back(std::fabs(r->rule_rel_error));
        rsig.push_back(r->rule_rel_error);
    }
    if (!a.empty()) {
        f.median_abs_error = median(a);
        f.median_error = median(s);
        f.rule_median_abs_error = median(ra);
        f.rule_median_error = median(rsig);
    }
    return f;
}

}  // namespace detail

/// @brief Predicts every run with the documented model (no fitting). `default_system` is the
/// cluster of runs without a `cluster` column. Never throws for a run the predictor rejects: the
/// run is reported not expressible with the predictor's message.
[[nodiscard]] inline accuracy_report accuracy(const std::vector<training_run>& runs, const cluster& default_system,
                                              const step_options& o = {}) {
    accuracy_report out;
    for (const auto& r : runs) {
        accuracy_run a;
        a.label = r.label;
        a.model = r.model_name.empty() ? std::string(r.model.name) : r.model_name;
        a.source = r.source;
        a.source_location = r.source_location;
        a.gpus = r.gpus;
        const cluster& sys = r.system ? *r.system : default_system;
        a.system = r.cluster_name.empty() ? std::string(sys.name) : r.cluster_name;
        a.accelerator = std::string(sys.node.accelerator);
        a.dtype = std::string(to_string(r.p.precision));
        const double tokens = static_cast<double>(r.p.global_batch) * r.p.seq;
        if (!r.not_expressible.empty()) {
            a.expressible = false;
            a.reason = r.not_expressible;
            // the measurement as published, where the file gives it in tokens or seconds
            if (r.tokens_per_s_per_gpu) a.measured_tokens_per_s_per_gpu = *r.tokens_per_s_per_gpu;
            else if (r.step_s) a.measured_tokens_per_s_per_gpu = tokens / (*r.step_s * static_cast<double>(r.gpus));
        } else {
            const double measured_step = detail::measured_step(r);
            a.measured_tokens_per_s_per_gpu = detail::measured_tokens_per_s_per_gpu(r);
            const accuracy_run identified = a;  // what a run the predictor rejects reports
            a.measured_step_s = measured_step;
            try {
                const cluster c = detail::cluster_for_run(default_system, r);
                const accelerator acc = accelerator_by_name(c.node.accelerator, "cluster.accelerator");
                const step_breakdown s = predict_step(r.model, c, acc, r.p, o);
                const double step = in_seconds(s.step);
                if (!(step > 0) || !std::isfinite(step))
                    throw input_error("predicted step", std::to_string(step), "a positive, finite time");
                a.step_s = step;
                a.predicted_tokens_per_s_per_gpu = tokens / (step * static_cast<double>(r.gpus));
                a.rel_error = a.predicted_tokens_per_s_per_gpu / a.measured_tokens_per_s_per_gpu - 1.0;
                a.rule_tokens_per_s_per_gpu = rule_of_thumb_tokens_per_s_per_gpu(r.model, acc, r.p.precision, r.p.seq);
                a.rule_rel_error = a.rule_tokens_per_s_per_gpu / a.measured_tokens_per_s_per_gpu - 1.0;
                a.bottleneck = std::string(to_string(s.bottleneck));
                a.compute_s = in_seconds(s.compute);
                a.bubble_s = in_seconds(s.bubble);
                a.exposed_comm_s = in_seconds(s.exposed_comm);
                const double lt = in_seconds(s.layer.forward() + s.layer.backward());
                a.attention_share = lt > 0 ? in_seconds(s.layer.attention_fwd + s.layer.attention_bwd) / lt : 0.0;
                a.mfu = s.mfu;
                a.memory_per_gpu_GiB = in_bytes(s.memory.total()) / gibi;
                a.memory_capacity_GiB = in_bytes(s.memory_capacity) / gibi;
                a.fits_in_memory = s.fits_in_memory;
                if (!s.fits_in_memory)
                    a.reason = "does not fit in memory under the model: " + std::to_string(std::lround(a.memory_per_gpu_GiB)) +
                               " GiB of " + std::to_string(std::lround(a.memory_capacity_GiB)) + " GiB";
            } catch (const input_error& e) {
                a = identified;
                a.expressible = false;
                a.reason = std::string(e.what());
            }
        }
        a.family = !r.family.empty() ? r.family
                                     : (!r.source.empty() ? r.source : std::string(to_string(r.p.stack))) + " / " +
                                           a.accelerator + " / " + a.dtype;
        out.runs.push_back(std::move(a));
    }
    std::vector<std::string> order;
    std::map<std::string, std::vector<const accuracy_run*>> by;
    std::vector<const accuracy_run*> all;
    for (const auto& a : out.runs) {
        if (!by.count(a.family)) order.push_back(a.family);
        by[a.family].push_back(&a);
        all.push_back(&a);
    }
    for (const auto& name : order) out.families.push_back(detail::summarize_family(name, by[name]));
    out.overall = detail::summarize_family("all", all);
    return out;
}

}  // namespace commscale
