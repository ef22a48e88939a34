#pragma once
/// @file collective/algorithms/double_binary_tree.hpp
/// @brief The double binary tree (Sanders, Speck & Traeff 2009; NCCL's "tree" since 2.4):
/// all_reduce, broadcast, reduce; NCCL's for all_reduce. Its phases: tree.hpp (`tree_phases`).

#include "descriptor.hpp"
#include "tree.hpp"

namespace commscale::detail {

template <>
struct descriptor<algorithm::double_binary_tree> : descriptor_defaults<algorithm::double_binary_tree> {

    [[nodiscard]] static constexpr bool applies(const cluster&, int, int, collective_op op) {
        return tree_applies(op);
    }

    [[nodiscard]] static constexpr bool nccl_implements(collective_op op) { return op == collective_op::all_reduce; }

    static void build(const plan_inputs& k, collective_op op, double s, phase_plan& pl) {
        tree_phases<true>(k, op, s, pl);
    }
};

}  // namespace commscale::detail
