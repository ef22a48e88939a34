#pragma once
/// @file collective/types.hpp
/// @brief Vocabulary of the collective layer: operations, algorithms, the placement of a group of
/// ranks on a cluster, and what can limit a collective. The realistic-mode parameters are in
/// hardware/comm_params.hpp (`cluster::comm`); the model, its result type and the name
/// helpers in collective/model.hpp: `predict_collective(...)`.

#include <array>
#include <string_view>

#include "../detail/names.hpp"
#include "../hardware/topology.hpp"
#include "../units.hpp"

namespace commscale {

/// @brief Collective operations (nccl-tests naming).
enum class collective_op { all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv };

namespace detail {
/// busbw_factor(op, n) from the share (n-1)/n as the caller computes it (the collective model's
/// hot path multiplies by its 1/n instead of dividing): all_reduce 2x the share; reduce_scatter,
/// all_gather, all_to_all the share; broadcast, reduce, send_recv 1.
[[nodiscard]] constexpr double busbw_factor_of_share(collective_op op, double share) {
    switch (op) {
        case collective_op::all_reduce: return 2.0 * share;
        case collective_op::reduce_scatter:
        case collective_op::all_gather:
        case collective_op::all_to_all: return share;
        case collective_op::broadcast:
        case collective_op::reduce:
        case collective_op::send_recv: return 1.0;
    }
    return 1.0;
}
}  // namespace detail

/// @brief nccl-tests bus-bandwidth factor (nccl-tests doc/PERFORMANCE.md): all_reduce 2(n-1)/n;
/// reduce_scatter, all_gather, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
/// busbw = algbw x factor is the per-rank link traffic rate of a ring, comparable across n.
[[nodiscard]] constexpr double busbw_factor(collective_op op, int n) {
    if (n < 1) return 0.0;
    const double nd = static_cast<double>(n);
    return detail::busbw_factor_of_share(op, (nd - 1.0) / nd);
}

/// @brief CLI/JSON spellings of the operations (nccl-tests naming): `to_string`, `parse<collective_op>`.
inline constexpr std::array<name_entry<collective_op>, 7> collective_op_spellings{{
    {collective_op::all_reduce, "all_reduce"},
    {collective_op::reduce_scatter, "reduce_scatter"},
    {collective_op::all_gather, "all_gather"},
    {collective_op::broadcast, "broadcast"},
    {collective_op::reduce, "reduce"},
    {collective_op::all_to_all, "all_to_all"},
    {collective_op::send_recv, "send_recv"},
}};
static_assert(detail::in_enum_order(collective_op_spellings));
[[nodiscard]] constexpr const auto& name_table(collective_op) { return collective_op_spellings; }
/// @brief '-' for '_' ("all-reduce"), read but not suggested.
inline constexpr std::array<name_alias<collective_op>, 5> collective_op_aliases{{
    {collective_op::all_reduce, "all-reduce", false},
    {collective_op::reduce_scatter, "reduce-scatter", false},
    {collective_op::all_gather, "all-gather", false},
    {collective_op::all_to_all, "all-to-all", false},
    {collective_op::send_recv, "send-recv", false},
}};
[[nodiscard]] constexpr const auto& name_aliases(collective_op) { return collective_op_aliases; }

/// @brief Algorithms. `automatic` picks the fastest (as NCCL would) and reports which.
enum class algorithm {
    automatic,
    ring,
    tree,                ///< pipelined binary tree
    double_binary_tree,
    parameter_server,    ///< one server (rank 0): every worker pushes and pulls through its link
    direct,              ///< one-shot exchange with every peer
    halving_doubling,    ///< recursive halving-doubling (Rabenseifner)
    hierarchical,        ///< intra-node reduce-scatter, inter-node all-reduce per local rank, intra-node all-gather
    nvls,                ///< in-switch reduction (NVLS on NVSwitch; SHARP in InfiniBand switches)
    parameter_server_sharded,  ///< every rank serves 1/n of the buffer (push to owners, pull back)
    pat,                 ///< NCCL's Parallel Aggregated Trees (2.23+): all_gather / reduce_scatter, one GPU per node
};
/// @brief Number of `algorithm` values (automatic included), for iterating over them.
inline constexpr int algorithm_count = 11;

/// @brief CLI/JSON spellings of the algorithms: `to_string`, `parse<algorithm>`.
inline constexpr std::array<name_entry<algorithm>, algorithm_count> algorithm_spellings{{
    {algorithm::automatic, "auto"},
    {algorithm::ring, "ring"},
    {algorithm::tree, "tree"},
    {algorithm::double_binary_tree, "double_binary_tree"},
    {algorithm::parameter_server, "parameter_server"},
    {algorithm::direct, "direct"},
    {algorithm::halving_doubling, "halving_doubling"},
    {algorithm::hierarchical, "hierarchical"},
    {algorithm::nvls, "nvls"},
    {algorithm::parameter_server_sharded, "parameter_server_sharded"},
    {algorithm::pat, "pat"},
}};
static_assert(detail::in_enum_order(algorithm_spellings));
[[nodiscard]] constexpr const auto& name_table(algorithm) { return algorithm_spellings; }
/// @brief "automatic" for `auto`, and '-' for '_' ("double-binary-tree"), read but not suggested.
inline constexpr std::array<name_alias<algorithm>, 5> algorithm_aliases{{
    {algorithm::automatic, "automatic", false},
    {algorithm::double_binary_tree, "double-binary-tree", false},
    {algorithm::parameter_server, "parameter-server", false},
    {algorithm::halving_doubling, "halving-doubling", false},
    {algorithm::parameter_server_sharded, "parameter-server-sharded", false},
}};
[[nodiscard]] constexpr const auto& name_aliases(algorithm) { return algorithm_aliases; }

/// @brief The candidates of the automatic choice. `nccl` (the default): what NCCL (2.18-2.27)
/// implements for each operation, so `automatic` answers "what would NCCL take": all_reduce ring,
/// tree (NCCL's is the double binary tree of Sanders et al. 2009, NCCL 2.4) and NVLS/CollNet
/// (in-switch or in-network reduction, `nvls` here); reduce_scatter / all_gather ring, NVLS and
/// (one GPU per node, NCCL 2.23+) PAT;
/// broadcast / reduce ring; all_to_all and send_recv the direct exchange (NCCL's grouped
/// send/recv). `any`: every algorithm of this library that applies (halving-doubling, the
/// parameter servers, hierarchical and direct included), for "what is the fastest possible".
enum class algorithm_set { nccl, any };

/// @brief `ideal`: pure closed forms on datasheet peaks; `realistic`: protocol/size-dependent derating.
enum class efficiency_mode { ideal, realistic };

/// @brief Spellings of the efficiency modes: `ideal`, `realistic`.
inline constexpr std::array<name_entry<efficiency_mode>, 2> efficiency_mode_spellings{{
    {efficiency_mode::ideal, "ideal"},
    {efficiency_mode::realistic, "realistic"},
}};
static_assert(detail::in_enum_order(efficiency_mode_spellings));
[[nodiscard]] constexpr const auto& name_table(efficiency_mode) { return efficiency_mode_spellings; }
/// @brief `default` reads as `realistic` (the CLI's --efficiency default, and the word plan JSON
/// writes for it).
inline constexpr std::array<name_alias<efficiency_mode>, 1> efficiency_mode_aliases{{
    {efficiency_mode::realistic, "default", true},
}};
[[nodiscard]] constexpr const auto& name_aliases(efficiency_mode) { return efficiency_mode_aliases; }

/// @brief A group of ranks placed on a cluster: `ranks_per_node` ranks on each of
/// ceil(ranks / ranks_per_node) nodes. On a cluster whose NVLink domain spans nodes
/// (`cluster::scale_up_domain`, NVL72) a "node" here is one domain (`comm_view`): ranks per
/// NVLink domain, domains spanned. `stride` is the distance between the group's GPUs inside a
/// node (1 = consecutive local GPUs; TP x CP = 8 makes DP groups stride 8, i.e. one GPU per node).
struct placement {
    int ranks = 1;
    int ranks_per_node = 1;
    int stride = 1;

    [[nodiscard]] constexpr int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
    /// @brief The same group: every field equal.
    [[nodiscard]] constexpr bool operator==(const placement&) const = default;
};

/// @brief What limited a prediction.
enum class bottleneck_kind { none, intra_link, nic, spine, server_nic, latency, switch_reduction };

/// @brief JSON spellings of the bottleneck kinds (`limiting.kind` of a collective's JSON).
inline constexpr std::array<name_entry<bottleneck_kind>, 7> bottleneck_kind_spellings{{
    {bottleneck_kind::none, "none"},
    {bottleneck_kind::intra_link, "intra_link"},
    {bottleneck_kind::nic, "nic"},
    {bottleneck_kind::spine, "spine"},
    {bottleneck_kind::server_nic, "server_nic"},
    {bottleneck_kind::latency, "latency"},
    {bottleneck_kind::switch_reduction, "switch_reduction"},
}};
static_assert(detail::in_enum_order(bottleneck_kind_spellings));
[[nodiscard]] constexpr const auto& name_table(bottleneck_kind) { return bottleneck_kind_spellings; }

}  // namespace commscale
