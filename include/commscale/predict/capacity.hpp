#pragma once
/// @file predict/capacity.hpp
/// @brief Capacity planning: how many GPUs train a model in a given time, how long a given number
/// of GPUs takes, and the GPU-hours either way. The model is the one of gpu-fabrics-for-genai
/// (Tables 1-3) and will-it-scale-to-n-gpus: every GPU sustains utilization x peak FLOP/s, so
///   GPUs needed  N = ceil(F / (peak x utilization x T))
///   time         T = F / (N x peak x utilization)
///   GPU-hours      = N x T / 3600 s
/// where F is the training FLOPs (given, or ~6PD / 8PD, workload/flops.hpp). Communication,
/// bubbles and failures are inside "utilization" here.
///
/// Model-driven capacity (`plan_capacity`, below the guessed-utilization functions) asks the
/// planner instead: at each candidate GPU count the fastest plan's predicted step gives the
/// failure-free time, steps x step; failures, checkpoints and restarts then stretch it to the
/// expected wall time of Daly's model (`expected_goodput`), and the answer is the smallest
/// candidate count whose wall time meets the deadline (or the wall time on a given count).

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../parallel/plan.hpp"
#include "../units.hpp"
#include "step.hpp"

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

// ---------------------------------------------------------------- goodput: failures and checkpoints

/// @brief The Llama 3 reliability snapshot (Dubey et al. 2024, "The Llama 3 Herd of Models",
/// Sec. 3.3.4 and Table 5): 466 job interruptions in 54 days of pre-training on 16,384 H100
/// GPUs, 47 planned and 419 unexpected.
inline constexpr double llama3_unexpected_interruptions = 419, llama3_interruptions = 466;
inline constexpr double llama3_snapshot_days = 54, llama3_snapshot_gpus = 16384;

/// @brief Default mean time between unexpected job interruptions per GPU: the Llama 3 snapshot's
/// 54 days x 16,384 GPUs / 419 = 1.82e8 s (50,677 GPU-hours, 5.8 years). A job on N GPUs is
/// interrupted every MTBF / N on average (failures independent and exponential): 16,384 GPUs,
/// every 3.09 h, as Meta reports ("one failure every three hours").
inline constexpr duration default_gpu_mtbf =
    seconds(llama3_snapshot_days * 86400.0 * llama3_snapshot_gpus / llama3_unexpected_interruptions);

/// @brief Default restart time (detect, reschedule, reload the checkpoint, warm up): 10 minutes.
/// The Llama 3 snapshot bounds it: above 90% effective training time over 54 days with 466
/// interruptions is at most 0.1 x 54 d / 466 = 1,001 s lost per interruption, restart and re-done
/// work together; 600 s leaves the rest for half a Young interval of re-done work at 16,384 GPUs
/// (tests/unit/predict/plan_capacity.cpp checks that the defaults give Llama 3 405B above 90%).
inline constexpr duration default_restart_time = seconds(600.0);

/// @brief Bytes a checkpoint holds per parameter: bf16 weights (2) plus the fp32 master weights,
/// Adam momentum and variance (12) of mixed-precision Adam (Rajbhandari et al. 2020, ZeRO,
/// Sec. 3.1: "K = 12"); the gradients are not saved.
inline constexpr double checkpoint_bytes_per_parameter = 14.0;

/// @brief Default rate checkpoints are written at: 2 TB/s, the sustained throughput of the
/// Tectonic file system behind Llama 3's training (Dubey et al. 2024, Sec. 3.3.1 "Storage": 240 PB
/// on 7,500 servers, 2 TB/s sustained, 7 TB/s peak).
inline constexpr byte_rate default_checkpoint_write_rate = bytes_per_second(2e12);

/// @brief Default checkpoint time of a model of `parameters` parameters (all of them, experts
/// included): parameters x checkpoint_bytes_per_parameter / default_checkpoint_write_rate
/// (Llama 3 405B: 5.67 TB in 2.8 s).
[[nodiscard]] constexpr duration default_checkpoint_time(double parameters) {
    return bytes(parameters * checkpoint_bytes_per_parameter) / default_checkpoint_write_rate;
}

/// @brief Young's optimum checkpoint interval, sqrt(2 delta M): the compute time between two
/// checkpoints that minimizes the time lost to checkpoints (delta / tau of it) and to re-done work
/// (tau / 2M) to first order (J. W. Young 1974, "A first order approximation to the optimum
/// checkpoint interval", Communications of the ACM 17(9), 530-531). delta: the checkpoint time,
/// M: the job's mean time between interruptions; infinite when M is (no failures, no checkpoints).
[[nodiscard]] inline duration young_checkpoint_interval(duration checkpoint_time, duration job_mtbf) {
    const double d = in_seconds(checkpoint_time), m = in_seconds(job_mtbf);
    if (std::isinf(m)) return seconds(std::numeric_limits<double>::infinity());
    return seconds(std::sqrt(2.0 * d * m));
}

/// @brief What a training job loses to interruptions: the job's mean time between them (M,
/// infinite for none), the time one checkpoint stops training (delta), the time from an
/// interruption to training again (R), and the compute time between checkpoints (tau; default
/// young_checkpoint_interval).
struct failure_model {
    duration job_mtbf = seconds(std::numeric_limits<double>::infinity());
    duration checkpoint_time = seconds(0.0);
    duration restart_time = seconds(0.0);
    std::optional<duration> checkpoint_interval{};
};

/// @brief The expected wall time of a job and what it lost (expected_goodput).
struct goodput {
    duration failure_free{};        ///< T_s: the work without checkpoints or failures
    duration wall{};                ///< T_w: expected wall time with checkpoints, failures and restarts
    duration job_mtbf{};            ///< M (infinite: no failures)
    duration checkpoint_interval{}; ///< tau used (infinite: no checkpoints)
    duration checkpoint_time{};     ///< delta
    duration restart_time{};        ///< R
    double lost_fraction = 0;       ///< 1 - T_s / T_w: the share of the wall time that is not progress
    double expected_interruptions = 0;  ///< T_w / M
};

/// @brief Accepted ranges of a failure model: MTBF above 0 (infinite allowed), checkpoint and
/// restart times in [0, 1e7 s] (116 days), an interval in (0, 1e9 s].
inline constexpr double goodput_max_time = 1e7, goodput_max_interval = 1e9;  ///< seconds

/// @brief Expected wall time of `failure_free` seconds of training under `f`, from Daly's
/// complete model (J. T. Daly 2006, "A higher order estimate of the optimum checkpoint interval
/// for restart dumps", Future Generation Computer Systems 22(3), 303-312): interruptions
/// exponential at rate 1/M, also during checkpoints and restarts; each segment of tau compute plus
/// delta checkpoint is retried, after R of restart, until it completes:
///   T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau.
/// As M -> infinity, T_w -> T_s (1 + delta / tau), and with the default (Young) interval tau is
/// infinite there, so T_w = T_s. With delta = 0 and no interval given, tau -> 0:
/// T_w = e^(R/M) T_s. To first order in tau/M and R/M the lost fraction is delta/tau + tau/(2M) +
/// R/M, sqrt(2 delta / M) + R/M at Young's interval (Young 1974). Throws input_error for inputs
/// outside the accepted ranges, or a wall time that is not a finite number (an interval far
/// beyond the MTBF).
[[nodiscard]] inline goodput expected_goodput(duration failure_free, const failure_model& f) {
    const double ts = in_seconds(failure_free), m = in_seconds(f.job_mtbf), d = in_seconds(f.checkpoint_time),
                 rr = in_seconds(f.restart_time);
    if (!(ts >= 0) || !std::isfinite(ts))
        throw input_error("failure_free", commscale::detail::number_text(ts) + " s", "a finite time >= 0");
    if (!(m > 0)) throw input_error("job_mtbf", commscale::detail::number_text(m) + " s", "a time > 0 (infinite: no failures)");
    if (!(d >= 0) || d > goodput_max_time)
        throw input_error("checkpoint_time", commscale::detail::number_text(d) + " s", "a time in [0, 1e7] s");
    if (!(rr >= 0) || rr > goodput_max_time)
        throw input_error("restart_time", commscale::detail::number_text(rr) + " s", "a time in [0, 1e7] s");
    double tau = in_seconds(young_checkpoint_interval(f.checkpoint_time, f.job_mtbf));
    if (f.checkpoint_interval) {
        tau = in_seconds(*f.checkpoint_interval);
        if (!(tau > 0) || tau > goodput_max_interval)
            throw input_error("checkpoint_interval", commscale::detail::number_text(tau) + " s", "a time in (0, 1e9] s");
    }
    goodput g;
    g.failure_free = failure_free;
    g.job_mtbf = f.job_mtbf;
    g.checkpoint_interval = seconds(tau);
    g.checkpoint_time = f.checkpoint_time;
    g.restart_time = f.restart_time;
    double wall = ts;
    if (std::isinf(m)) {
        if (std::isfinite(tau)) wall = ts * (1.0 + d / tau);  // checkpoints, never a failure
    } else if (tau == 0) {
        wall = ts * std::exp(rr / m);  // free checkpoints taken continuously: only restarts cost
    } else {
        // expm1 keeps the precision of e^x - 1 for the small x of a long MTBF
        wall = m * std::exp(rr / m) * std::expm1((tau + d) / m) * ts / tau;
    }
    if (!std::isfinite(wall) || wall > 1e300)
        throw input_error("checkpoint_interval", commscale::detail::number_text(tau) + " s with MTBF " +
                                                     commscale::detail::number_text(m) + " s",
                          "an interval and MTBF whose expected wall time is finite");
    g.wall = seconds(wall);
    g.lost_fraction = wall > 0 ? 1.0 - ts / wall : 0.0;
    g.expected_interruptions = std::isinf(m) ? 0.0 : wall / m;
    return g;
}

// ---------------------------------------------------------------- model-driven capacity

/// @brief What `plan_capacity` minimizes among the counts that meet a deadline: the GPU count
/// (time: the smallest count, the question "how many GPUs") or the cost (GPU-hours x price).
enum class capacity_rank { time, cost };

/// @brief The largest GPU count `plan_capacity` searches by default: 2^17 = 131,072, above the
/// largest clusters built so far (about 100,000 GPUs in one cluster, e.g. xAI's Colossus, 2024);
/// `model_capacity_request::max_gpus` raises it.
inline constexpr long long default_capacity_max_gpus = 1LL << 17;

/// @brief A capacity question answered from the model (plan_capacity).
struct model_capacity_request {
    double tokens = 0;                  ///< training tokens, [1, 1e18]
    double tokens_per_step = 0;         ///< global batch x sequence length, >= 1
    /// Model FLOPs of one step and the per-GPU dense peak of the plans' precision: a count whose
    /// time at 100% MFU, steps x flops / (N x peak), misses the deadline is skipped unevaluated
    /// (the step model never passes the peak). 0: evaluate every count.
    flop_count model_flops_per_step = flops(0.0);
    flop_rate peak = flops_per_second(0.0);
    std::optional<duration> deadline{};  ///< GPUs needed to train by it (one minute to 1,000 years), or
    long long gpus = 0;                  ///< > 0: the time on this many GPUs instead
    int granule = 8;            ///< counts are multiples: the node's GPUs, or an NVLink domain spanning nodes
    int gpus_per_node = 8;      ///< for per-node MTBF and node counts; divides granule
    long long max_gpus = default_capacity_max_gpus;  ///< the largest count searched
    duration mtbf = default_gpu_mtbf;  ///< mean time between interruptions per GPU (or per node); infinite: none
    bool mtbf_per_node = false;        ///< `mtbf` is per node instead of per GPU
    duration checkpoint_time = seconds(0.0);         ///< delta (default_checkpoint_time(parameters) is the CLI's)
    duration restart_time = default_restart_time;    ///< R
    std::optional<duration> checkpoint_interval{};   ///< tau (default: young_checkpoint_interval at each count)
    double price_per_gpu_hour = 0;      ///< 0: no cost
    capacity_rank rank_by = capacity_rank::time;
    bool curve = true;  ///< also evaluate the counts x 1/2, 2 and 4 of the answer, for the scaling curve
};

/// @brief One GPU count: its fastest plan, the time with and without failures, GPU-hours, cost.
struct capacity_point {
    long long gpus = 0;
    bool feasible = false;       ///< a plan fits in memory at this count
    plan p{};                    ///< the fastest plan (when feasible)
    step_breakdown r{};          ///< its predicted step
    double steps = 0;            ///< optimizer steps: ceil(tokens / tokens_per_step)
    goodput time{};              ///< failure_free = steps x step; wall = with checkpoints and failures
    double gpu_hours = 0;        ///< gpus x wall / 3600 s
    double cost = 0;             ///< gpu_hours x price (0 without a price)
    bool meets_deadline = false;
};

/// @brief The answer of plan_capacity and the curve behind it.
struct model_capacity_result {
    bool met = false;          ///< a count meets the deadline (gpus mode: the count has a plan)
    capacity_point answer{};   ///< deadline: the count chosen (else the fastest evaluated); gpus: that count
    std::vector<capacity_point> curve;  ///< every evaluated count, ascending
    long long evaluated = 0;   ///< counts the planner ran at
    long long skipped = 0;     ///< counts skipped because even 100% MFU misses the deadline
};

/// @brief The candidate multipliers of the granule, ascending: k = 1..16, then the k with at most
/// four significant binary digits (18, 20, ..., 30, 32, 36, ...): eight counts per doubling, each
/// at most 12.5% above the one before. Returns the one after `k`.
[[nodiscard]] constexpr long long next_capacity_multiple(long long k) {
    if (k < 16) return k + 1;
    const int shift = static_cast<int>(std::bit_width(static_cast<unsigned long long>(k))) - 4;
    return k + (1LL << shift);
}

/// @brief True for the multipliers next_capacity_multiple visits (k >= 1).
[[nodiscard]] constexpr bool is_capacity_multiple(long long k) {
    if (k < 1) return false;
    if (k <= 16) return true;
    const int shift = static_cast<int>(std::bit_width(static_cast<unsigned long long>(k))) - 4;
    return k % (1LL << shift) == 0;
}

namespace detail {
inline void check_model_capacity(const model_capacity_request& r) {
    using commscale::detail::number_text;
    if (!(r.tokens >= 1) || r.tokens > 1e18) throw input_error("tokens", number_text(r.tokens), "a token count in [1, 1e18]");
    if (!(r.tokens_per_step >= 1) || r.tokens_per_step > 1e18)
        throw input_error("tokens_per_step", number_text(r.tokens_per_step), "global batch x sequence in [1, 1e18] tokens");
    const double f = in_flops(r.model_flops_per_step), pk = r.peak.value();
    if (!(f >= 0) || f > capacity_max_flops) throw input_error("model_flops_per_step", number_text(f), "a FLOP count in [0, 1e30]");
    if (f > 0 && (!(pk >= capacity_min_peak) || pk > capacity_max_peak))
        throw input_error("peak", number_text(pk) + " FLOP/s", "a per-GPU peak from 1 GFLOP/s to 1 EFLOP/s");
    if (r.deadline.has_value() == (r.gpus > 0))
        throw input_error("deadline", r.deadline ? number_text(in_seconds(*r.deadline)) + " s with gpus " + std::to_string(r.gpus) : "nothing",
                          "either a deadline or a GPU count");
    if (r.deadline) check_capacity_time(*r.deadline);
    require_int_range("gpus_per_node", r.gpus_per_node, 1, cluster_limits::gpus_per_node);
    require_int_range("granule", r.granule, 1, cluster_limits::scale_up_domain);
    if (r.granule % r.gpus_per_node != 0)
        throw input_error("granule", std::to_string(r.granule),
                          "a multiple of gpus_per_node (" + std::to_string(r.gpus_per_node) + ")");
    const long long most = static_cast<long long>(cluster_limits::nodes) * r.gpus_per_node;
    if (r.max_gpus < r.granule || r.max_gpus > most)
        throw input_error("max_gpus", std::to_string(r.max_gpus),
                          "a count in [" + std::to_string(r.granule) + ", " + std::to_string(most) + "]");
    if (r.gpus > 0 && (r.gpus % r.gpus_per_node != 0 || r.gpus > most))
        throw input_error("gpus", std::to_string(r.gpus),
                          "a multiple of the " + std::to_string(r.gpus_per_node) + " GPUs per node, at most " + std::to_string(most));
    if (!(in_seconds(r.mtbf) > 0)) throw input_error("mtbf", number_text(in_seconds(r.mtbf)) + " s", "a time > 0 (infinite: no failures)");
    // the failure model's own ranges (expected_goodput), checked before any count is planned
    (void)expected_goodput(seconds(0.0), {.job_mtbf = r.mtbf,
                                          .checkpoint_time = r.checkpoint_time,
                                          .restart_time = r.restart_time,
                                          .checkpoint_interval = r.checkpoint_interval});
    if (!(r.price_per_gpu_hour >= 0) || r.price_per_gpu_hour > 1e6)
        throw input_error("price_per_gpu_hour", number_text(r.price_per_gpu_hour), "a price in [0, 1e6] per GPU-hour");
}
}  // namespace detail

/// @brief Answers a capacity question from the model. `best_at(gpus)` returns the fastest plan
/// that fits on `gpus` GPUs as a `std::optional` of a type with members `p` (plan) and `r`
/// (step_breakdown), e.g. search/planner.hpp's `best_plan_at`; nullopt when none fits.
///
/// At a count N: steps = ceil(tokens / tokens_per_step), failure-free time = steps x step, the
/// job's MTBF = mtbf / N (per GPU) or mtbf / (N / gpus_per_node) (per node), the wall time
/// expected_goodput's, GPU-hours = N x wall / 3600 s, cost = GPU-hours x price.
///
/// Deadline: the counts are granule x k for the k of next_capacity_multiple, ascending up to
/// max_gpus; a count whose 100%-MFU time misses the deadline is skipped (`skipped`), the others
/// are evaluated until the first whose wall time meets it: that count is the smallest candidate
/// that meets the deadline (exact: nothing below it was skipped that could meet it), so the answer
/// never grows as the deadline loosens. With rank_by cost the candidates up to twice it are also
/// evaluated and the one with the lowest cost that meets the deadline is the answer (ties: fewer
/// GPUs). When no count up to max_gpus meets it, `met` is false and `answer` is the evaluated
/// count with the shortest wall time (gpus 0 if none had a plan).
/// GPU count: that count is evaluated (`met`: it has a plan).
/// With `curve`, the counts x 1/2, 2 and 4 of the answer that are multiples of the granule (within
/// [granule, max_gpus]) are evaluated too. Throws input_error for a bad request.
template <class BestAt>
[[nodiscard]] model_capacity_result plan_capacity(const model_capacity_request& r, BestAt&& best_at) {
    detail::check_model_capacity(r);
    // whole optimizer steps; the quotient shrunk by 1e-15 (relative) so that an exact one is not
    // pushed to the next integer by a last-bit rounding error
    const double steps = std::ceil(r.tokens / r.tokens_per_step * (1.0 - 1e-15));
    const double d = r.deadline ? in_seconds(*r.deadline) : 0.0;
    model_capacity_result out;
    std::vector<capacity_point> points;
    auto find = [&](long long n) -> const capacity_point* {
        for (const auto& x : points)
            if (x.gpus == n) return &x;
        return nullptr;
    };
    auto evaluate = [&](long long n) -> const capacity_point& {
        if (const capacity_point* seen = find(n)) return *seen;
        capacity_point pt;
        pt.gpus = n;
        pt.steps = steps;
        if (auto best = best_at(n)) {
            pt.feasible = true;
            pt.p = best->p;
            pt.r = best->r;
            const double units = r.mtbf_per_node ? static_cast<double>(n / r.gpus_per_node) : static_cast<double>(n);
            failure_model f{.job_mtbf = r.mtbf / units,
                            .checkpoint_time = r.checkpoint_time,
                            .restart_time = r.restart_time,
                            .checkpoint_interval = r.checkpoint_interval};
            pt.time = expected_goodput(steps * pt.r.step, f);
            pt.gpu_hours = static_cast<double>(n) * in_seconds(pt.time.wall) / 3600.0;
            pt.cost = pt.gpu_hours * r.price_per_gpu_hour;
            pt.meets_deadline = r.deadline.has_value() && in_seconds(pt.time.wall) <= d;
        }
        ++out.evaluated;
        points.push_back(pt);
        return points.back();
    };
    const bool bound = in_flops(r.model_flops_per_step) > 0;
    // the time at 100% MFU: no plan of the step model is faster (its efficiencies never pass 1)
    auto ideal_time = [&](long long n) {
        return steps * in_flops(r.model_flops_per_step) / (static_cast<double>(n) * r.peak.value());
    };

    long long chosen = 0;
    if (r.gpus > 0) {
        const capacity_point& pt = evaluate(r.gpus);
        out.met = pt.feasible;
        chosen = r.gpus;
    } else {
        for (long long k = 1; k <= r.max_gpus / r.granule; k = next_capacity_multiple(k)) {
            const long long n = k * r.granule;
            if (bound && ideal_time(n) > d) {
                ++out.skipped;
                continue;
            }
            if (evaluate(n).meets_deadline) {
                chosen = n;
                break;
            }
        }
        out.met = chosen > 0;
        if (out.met && r.rank_by == capacity_rank::cost) {
            const long long first = chosen;
            for (long long k = next_capacity_multiple(first / r.granule); k * r.granule <= std::min(2 * first, r.max_gpus);
                 k = next_capacity_multiple(k)) {
                const capacity_point& pt = evaluate(k * r.granule);
                const capacity_point* best = find(chosen);
                if (pt.meets_deadline && pt.gpu_hours < best->gpu_hours) chosen = pt.gpus;
            }
        }
        if (!out.met) {
            // the fastest evaluated count, for the message that no count meets the deadline
            double fastest = std::numeric_limits<double>::infinity();
            for (const auto& x : points)
                if (x.feasible && in_seconds(x.time.wall) < fastest) {
                    fastest = in_seconds(x.time.wall);
                    chosen = x.gpus;
                }
        }
    }
    if (r.curve && chosen > 0) {
        for (const double f : {0.5, 2.0, 4.0}) {
            const double n = static_cast<double>(chosen) * f;
            if (n < r.granule || n > static_cast<double>(r.max_gpus) || std::fmod(n, r.granule) != 0) continue;
            (void)evaluate(static_cast<long long>(n));
        }
    }
    if (chosen > 0) out.answer = *find(chosen);
    out.curve = std::move(points);
    std::sort(out.curve.begin(), out.curve.end(), [](const capacity_point& a, const capacity_point& b) { return a.gpus < b.gpus; });
    return out;
}

}  // namespace commscale
