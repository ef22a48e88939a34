#pragma once
/// @file predict/requirements.hpp
/// @brief What the network must provide: the inter-node bytes the data-parallel reduction puts
/// on each node's NICs per step, and the bandwidth that moves them within a time window (the
/// backward pass that hides them, or the whole compute time in will-it-scale-to-n-gpus's rule).
///
/// will-it-scale-to-n-gpus states "IB >= N x P GB/s" (P in billions) from "communication time
/// per step <= compute time per step"; its compute estimate is 10x too large (6 x 10B x 4096 =
/// 2.4576e14 FLOPs, written 24.576e14), so the rule is 10x too lenient, and it moves the gradient
/// once instead of the 2 (n-1)/n of an all-reduce. These functions derive the requirement from
/// the traffic instead of hard-coding a rule.

#include <algorithm>
#include <limits>

#include "../collective/types.hpp"
#include "../parallel/traffic.hpp"
#include "../units.hpp"

namespace commscale {

/// @brief Inter-node bytes one node sends per step for the data-parallel reduction. A DP group
/// with r members per node spans n nodes; hierarchically (reduce inside the node, then across
/// nodes) each group moves 2 (n - 1)/n x S across the node boundary per node for an all-reduce
/// of S bytes (Patarasuk & Yuan 2009 ring bound), (n - 1)/n x S for a reduce-scatter or
/// all-gather; the node hosts G / r such groups. Zero if the group stays in one node.
[[nodiscard]] constexpr data_size dp_inter_node_bytes_per_node(const step_traffic& t, int gpus_per_node) {
    // the dense parameters' stream over DP x CP, and the routed experts' over expert-DP (if apart)
    auto stream = [gpus_per_node](const comm_call& main, const comm_call& gather, data_size shard_bytes, data_size z3_bytes) {
        const placement g = main.group;
        if (main.empty() || g.nodes() <= 1) return 0.0;
        const double n = g.nodes();
        const double groups = static_cast<double>(gpus_per_node) / std::max(1, g.ranks_per_node);
        const double shard = shard_bytes.value();
        double per_group = 0;
        if (main.op == collective_op::all_reduce) per_group = 2.0 * (n - 1.0) / n * shard;
        else {
            per_group = (n - 1.0) / n * shard;  // gradients reduce-scattered
            const double gathered = gather.count > 0 ? gather.bytes.value() * gather.count : 0.0;
            const double z3 = z3_bytes.value();
            per_group += (n - 1.0) / n * (gathered + z3);
        }
        return groups * per_group;
    };
    const double dense = stream(t.dp_main, t.dp_gather, t.dp_gradient_bytes, t.zero3_gather_bytes);
    if (t.dp_expert_main.empty()) return bytes(dense);
    return bytes(dense + stream(t.dp_expert_main, t.dp_expert_gather, t.dp_expert_gradient_bytes, t.zero3_expert_gather_bytes));
}

/// @brief Bandwidth needed to move `traffic` within `window`: traffic / window (bytes/s), i.e.
/// the rule "communication time <= compute time" of will-it-scale-to-n-gpus, derived instead of
/// hard-coded. Zero traffic needs zero; a non-positive window with traffic is infinite.
[[nodiscard]] constexpr byte_rate required_bandwidth(data_size traffic, duration window) {
    if (traffic.value() <= 0) return bytes_per_second(0.0);
    if (!(window.value() > 0)) return bytes_per_second(std::numeric_limits<double>::infinity());
    return traffic / window;
}

}  // namespace commscale
