#pragma once
/// @file predict/capacity.hpp
/// @brief Capacity planning: how many GPUs train a model in a given time, how long a given number
/// of GPUs takes, and the GPU-hours either way. The model is the one of gpu-fabrics-for-genai
/// (Tables 1-3) and will-it-scale-to-n-gpus: every GPU sustains utilization x peak FLOP/s, so
///   GPUs needed  N = ceil(F / (peak x utilization x T))
///   time         T = F / (N x peak x utilization)
///   GPU-hours      = N x T / 3600 s
/// where F is the training FLOPs (given, or ~6PD / 8PD, workload/flops.hpp). Communication,
/// bubbles and failures are inside "utilization" here; the step predictor models them.

#include <cmath>

#include "../error.hpp"
#include "../units.hpp"

namespace commscale {

/// @brief One week, 7 x 86400 s (the unit of gpu-fabrics-for-genai's "training time (in weeks)").
inline constexpr duration one_week = seconds(7.0 * 86400.0);
/// @brief One day, 86400 s.
inline constexpr duration one_day = seconds(86400.0);

/// @brief Sustained rate of one GPU: peak x utilization (FLOP/s).
[[nodiscard]] constexpr flop_rate sustained_rate(flop_rate peak, double utilization) { return utilization * peak; }

/// @brief GPUs needed to finish `total` FLOPs within `time`: ceil(F / (peak x utilization x T)).
/// gpu-fabrics-for-genai Table 1: 430 ZFLOP, 624 TFLOPS, 0.3, one week -> 3,798. The quotient is
/// shrunk by 1e-12 (relative) before rounding up so an exact result is not pushed to the next
/// integer by a last-bit floating-point error.
[[nodiscard]] inline double gpus_needed(flop_count total, flop_rate peak, double utilization, duration time) {
    const double n = total / (sustained_rate(peak, utilization) * time);
    return std::ceil(n * (1.0 - 1e-12));
}

/// @brief Time to train `total` FLOPs on `gpus` GPUs: F / (N x peak x utilization).
[[nodiscard]] constexpr duration time_to_train(flop_count total, flop_rate peak, double utilization, double gpus) {
    return total / (gpus * sustained_rate(peak, utilization));
}

/// @brief GPU-hours of the work itself: F / (peak x utilization) / 3600 s (independent of N).
[[nodiscard]] constexpr double gpu_hours(flop_count total, flop_rate peak, double utilization) {
    return in_seconds(total / sustained_rate(peak, utilization)) / 3600.0;
}

/// @brief Result of a capacity plan (CLI `capacity`: {total_flops, gpus_needed, time_s, gpu_hours}).
struct capacity_plan {
    flop_count total_flops{};
    double gpus = 0;        ///< GPUs used (given, or needed for the deadline, rounded up)
    duration time{};        ///< wall time on those GPUs (<= the deadline when one was given)
    double gpu_hours = 0;   ///< gpus x time / 3600 s
};

/// @brief Accepted ranges of capacity planning, so that every answer is a finite number:
/// total work from 1 FLOP to 1e30 FLOPs (about 3e4 times GPT-4's estimated 3.1e25 in
/// gpu-fabrics-for-genai); a per-GPU peak from 1 GFLOP/s to 1 EFLOP/s (a B200 is 2.25e15 dense
/// bf16, NVIDIA datasheet); utilization from 1e-4 to 1; a deadline from one minute to 1,000 years;
/// at most 1e12 GPUs, given or needed (about 1e5 times the largest clusters built, ~1e5 GPUs), so
/// a GPU count also fits a 64-bit integer in JSON.
inline constexpr double capacity_min_flops = 1.0, capacity_max_flops = 1e30;
inline constexpr double capacity_min_peak = 1e9, capacity_max_peak = 1e18;  ///< FLOP/s per GPU
inline constexpr double capacity_min_utilization = 1e-4;
inline constexpr double capacity_min_time = 60.0, capacity_max_time = 1000.0 * 365.25 * 86400.0;  ///< seconds
inline constexpr double capacity_max_gpus = 1e12;

namespace detail {
inline void check_capacity_inputs(flop_count total, flop_rate peak, double utilization) {
    const double f = in_flops(total), r = peak.value();
    if (!(f >= capacity_min_flops) || f > capacity_max_flops)
        throw input_error("total_flops", commscale::detail::number_text(f), "a FLOP count in [1, 1e30]");
    if (!(r >= capacity_min_peak) || r > capacity_max_peak)
        throw input_error("peak", commscale::detail::number_text(r) + " FLOP/s",
                          "a per-GPU peak from 1 GFLOP/s to 1 EFLOP/s (1e-3 to 1e6 TFLOPS)");
    if (!(utilization >= capacity_min_utilization) || utilization > 1)
        throw input_error("utilization", commscale::detail::number_text(utilization), "a fraction in [0.0001, 1]");
}
inline void check_capacity_time(duration time) {
    const double t = in_seconds(time);
    if (!(t >= capacity_min_time) || t > capacity_max_time)
        throw input_error("time", commscale::detail::number_text(t) + " s", "from one minute to 1,000 years");
}
/// The last guard: a plan whose figures are not finite (or whose GPU count is beyond
/// capacity_max_gpus) is an input_error naming the inputs it came from, never a returned NaN.
inline void check_capacity_plan(const capacity_plan& p, double peak, double utilization) {
    const auto inputs = [&] {
        return commscale::detail::number_text(in_flops(p.total_flops)) + " FLOPs / (" +
               commscale::detail::number_text(peak) + " FLOP/s x " + commscale::detail::number_text(utilization) + ")";
    };
    if (!(p.gpus <= capacity_max_gpus))
        throw input_error("total_flops, peak, utilization, time",
                          commscale::detail::number_text(p.gpus) + " GPUs needed (" + inputs() + " in " +
                              commscale::detail::number_text(in_seconds(p.time)) + " s)",
                          "a plan of at most 1e12 GPUs (more time, a faster GPU or less work)");
    if (!std::isfinite(p.gpus) || !std::isfinite(in_seconds(p.time)) || !std::isfinite(p.gpu_hours) ||
        !(in_seconds(p.time) >= 0) || !(p.gpu_hours >= 0))
        throw input_error("total_flops, peak, utilization", inputs() + " on " + commscale::detail::number_text(p.gpus) + " GPUs",
                          "inputs whose time and GPU-hours are finite numbers");
}
}  // namespace detail

/// @brief Plan for a deadline: GPUs needed (rounded up), the time they take, GPU-hours.
/// Throws input_error for inputs outside the capacity_* ranges above (non-positive, NaN, absurd),
/// and when the deadline would need more than capacity_max_gpus GPUs.
[[nodiscard]] inline capacity_plan plan_for_time(flop_count total, flop_rate peak, double utilization, duration time) {
    detail::check_capacity_inputs(total, peak, utilization);
    detail::check_capacity_time(time);
    capacity_plan p;
    p.total_flops = total;
    p.gpus = gpus_needed(total, peak, utilization, time);
    if (!(p.gpus <= capacity_max_gpus)) {
        p.time = time;  // the deadline, for the message
        detail::check_capacity_plan(p, peak.value(), utilization);
    }
    p.time = time_to_train(total, peak, utilization, p.gpus);
    p.gpu_hours = p.gpus * in_seconds(p.time) / 3600.0;
    detail::check_capacity_plan(p, peak.value(), utilization);
    return p;
}

/// @brief Plan for a GPU count: the time `gpus` GPUs take, GPU-hours. Throws input_error as
/// plan_for_time, and for gpus outside [1, capacity_max_gpus].
[[nodiscard]] inline capacity_plan plan_for_gpus(flop_count total, flop_rate peak, double utilization, double gpus) {
    detail::check_capacity_inputs(total, peak, utilization);
    if (!std::isfinite(gpus) || gpus < 1 || gpus > capacity_max_gpus)
        throw input_error("gpus", commscale::detail::number_text(gpus), "a number in [1, 1e12]");
    capacity_plan p;
    p.total_flops = total;
    p.gpus = gpus;
    p.time = time_to_train(total, peak, utilization, gpus);
    p.gpu_hours = gpus * in_seconds(p.time) / 3600.0;
    detail::check_capacity_plan(p, peak.value(), utilization);
    return p;
}

}  // namespace commscale
