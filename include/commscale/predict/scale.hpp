#pragma once
/// @file predict/scale.hpp
/// @brief "Will it scale to N GPUs?" (will-it-scale-to-n-gpus): the step predicted at several
/// node counts with the same model-parallel layout (TP, PP, CP, EP, micro-batch), data
/// parallelism growing with the cluster, and the scaling efficiency
///   efficiency(n) = (tokens/s at n / GPUs at n) / (tokens/s at n0 / GPUs at n0),
/// the per-GPU throughput relative to the smallest node count n0 (1 = perfect linear scaling).
/// Weak scaling (default) keeps the batch per data-parallel replica, so the global batch grows
/// with dp, as DDP users do; strong scaling keeps the global batch fixed.

#include <span>
#include <string>
#include <vector>

#include "step.hpp"

namespace commscale {

/// @brief Weak scaling: global batch proportional to dp; strong: fixed global batch.
enum class scaling_mode { weak, strong };

/// @brief One node count of a sweep.
struct scale_point {
    int nodes = 0;
    int gpus = 0;
    plan used{};                 ///< the plan at this size (dp and global batch adjusted)
    step_breakdown step{};
    double efficiency = 0;       ///< per-GPU throughput relative to the first point
    double speedup = 0;          ///< tokens/s relative to the first point
};

/// @brief A node count a sweep skipped because the plan cannot run there, and why.
struct scale_skip {
    int nodes = 0;
    std::string reason;  ///< the input_error's text, e.g. "plan.global_batch: expected ..."
};

/// @brief The plan `base` (written for `base_nodes` nodes) resized to `nodes`: dp = GPUs /
/// (tp pp cp); weak scaling multiplies the global batch by dp / base dp (exactly, or throws
/// input_error naming "nodes" when the layout does not divide the new GPU count).
[[nodiscard]] inline plan resize_plan(const plan& base, int base_gpus, int gpus, scaling_mode mode) {
    const long long model_parallel = static_cast<long long>(base.tp) * base.pp * base.cp;
    if (gpus % model_parallel != 0)
        throw input_error("nodes", std::to_string(gpus) + " GPUs",
                          "a GPU count divisible by tp x pp x cp = " + std::to_string(model_parallel));
    plan p = base;
    p.dp = static_cast<int>(gpus / model_parallel);
    if (mode == scaling_mode::weak) {
        const long long base_dp = base_gpus / model_parallel;
        const long long per_replica = base.global_batch / (base_dp > 0 ? base_dp : 1);
        p.global_batch = static_cast<int>(per_replica * p.dp);
    }
    return p;
}

/// @brief Predicts `base` (a plan for `c.nodes` nodes) at every count in `node_counts` (each
/// >= 1); `price(cluster_at_n)` returns the pricer predict_step_with uses at that size. Throws input_error for an empty list, a count
/// < 1, or a size the plan cannot be resized to; with `skipped`, counts the plan cannot run at
/// (resize or validation errors) are listed there instead and the sweep goes on (an error only
/// when no count remains). Scaling efficiency in the file comment.
template <class Pricer>
[[nodiscard]] std::vector<scale_point> scale_sweep_with(const transformer& m, const cluster& c, const accelerator& acc,
                                                        const plan& base, std::span<const int> node_counts,
                                                        Pricer&& price, scaling_mode mode = scaling_mode::weak,
                                                        const step_options& o = {},
                                                        std::vector<scale_skip>* skipped = nullptr) {
    if (node_counts.empty()) throw input_error("nodes", "an empty list", "one or more node counts, e.g. 1,2,4,8");
    std::vector<scale_point> out;
    out.reserve(node_counts.size());
    const int base_gpus = c.nodes * c.node.gpus;
    for (int n : node_counts) {
        if (n < 1 || n > cluster_limits::nodes)
            throw input_error("nodes", std::to_string(n), "node counts in [1, " + std::to_string(cluster_limits::nodes) + "]");
        cluster cn = c;
        cn.nodes = n;
        scale_point sp;
        sp.nodes = n;
        sp.gpus = n * c.node.gpus;
        if (skipped) {
            try {
                sp.used = resize_plan(base, base_gpus, sp.gpus, mode);
                sp.step = predict_step_with(m, cn, acc, sp.used, price(cn), o);
            } catch (const input_error& e) {
                skipped->push_back({n, e.what()});
                continue;
            }
        } else {
            sp.used = resize_plan(base, base_gpus, sp.gpus, mode);
            sp.step = predict_step_with(m, cn, acc, sp.used, price(cn), o);
        }
        out.push_back(sp);
    }
    if (out.empty())
        throw input_error("nodes", "every count (" + std::to_string(node_counts.size()) + ")",
                          "at least one node count that can hold the plan; the first: " +
                              (skipped && !skipped->empty() ? skipped->front().reason : std::string("none")));
    const double first = out.front().step.tokens_per_s;
    const double first_per_gpu = first / out.front().gpus;
    for (auto& sp : out) {
        sp.speedup = sp.step.tokens_per_s / first;
        sp.efficiency = sp.step.tokens_per_s / sp.gpus / first_per_gpu;
    }
    return out;
}

/// @brief scale_sweep_with pricing every collective with the collective model (`o.mode`, `o.algo`).
[[nodiscard]] inline std::vector<scale_point> scale_sweep(const transformer& m, const cluster& c, const plan& base,
                                                          std::span<const int> node_counts,
                                                          scaling_mode mode = scaling_mode::weak,
                                                          const step_options& o = {},
                                                          std::vector<scale_skip>* skipped = nullptr) {
    const accelerator acc = accelerator_by_name(c.node.accelerator, "cluster.accelerator");
    auto make = [&o](const cluster& cn) {
        // priced on the communication view (one node per NVLink domain), converted once per size
        return [v = comm_view(cn), opt = collective_options{o.algo, o.mode, o.candidates}](const placement& g, collective_op op, data_size s) {
            return predict_collective(v, g, op, s, opt).time;
        };
    };
    return scale_sweep_with(m, c, acc, base, node_counts, make, mode, o, skipped);
}

}  // namespace commscale
