// predict_collective_time (the step predictor's pricer) returns exactly predict_collective's time:
// every preset cluster, every collective, placements inside and across nodes, sizes from 1 B to
// 64 GiB, both efficiency modes and both candidate sets, compared to the bit; and the same errors.
// The same for detail::collective_time_on_base, predict_step's pricer (the cluster's rate_base
// computed once per prediction).
#include "catch_shim.hpp"

#include <commscale/collective/model.hpp>
#include <commscale/hardware/clusters.hpp>

#include <cmath>

using namespace commscale;

TEST_CASE("predict_collective_time equals predict_collective(...).time to the bit") {
    long long compared = 0;
    for (const auto& preset : cluster_presets) {
        cluster c = preset;
        // placements count ranks per NVLink domain (the node, or an NVL72 rack): 4 domains at least
        c.nodes = std::max(c.nodes, 4 * (c.domain_spans_nodes() ? c.scale_up_domain / c.node.gpus : 1));
        const cluster v = comm_view(c);
        const detail::rate_base base = detail::make_rate_base(v);  // once per cluster, as predict_step does
        const int g = v.node.gpus;
        const placement groups[] = {{g, g, 1}, {2 * g, g, 1}, {4, 1, g}, {4 * g, g, 1}, {2, 2, 1}};
        for (const auto& pl : groups) {
            if (pl.ranks_per_node > g || pl.nodes() > v.nodes) continue;
            for (collective_op op : {collective_op::all_reduce, collective_op::all_gather, collective_op::reduce_scatter,
                                     collective_op::broadcast, collective_op::reduce, collective_op::all_to_all,
                                     collective_op::send_recv})
                for (double s = 1; s <= 64.0 * (1ull << 30); s *= 7.3)
                    for (auto mode : {efficiency_mode::realistic, efficiency_mode::ideal})
                        for (auto set : {algorithm_set::nccl, algorithm_set::any}) {
                            const collective_options o{algorithm::automatic, mode, set};
                            const double full = in_seconds(predict_collective(c, pl, op, bytes(s), o).time);
                            const double fast = in_seconds(predict_collective_time(c, pl, op, bytes(s), o));
                            INFO(c.name << " " << to_string(op) << " " << pl.ranks << " ranks, " << s << " B");
                            REQUIRE(fast == full);
                            if (mode == efficiency_mode::realistic) {
                                // the step predictor's pricer: the cluster's rate_base computed once
                                REQUIRE(in_seconds(detail::collective_time_on_base(v, base, pl, op, bytes(s), o)) == full);
                            }
                            ++compared;
                        }
        }
    }
    CHECK(compared > 5000);
    // Errors are predict_collective's.
    const cluster a100 = cluster_by_name("dgx-a100");
    CHECK_THROWS_AS(predict_collective_time(a100, placement{16, 8, 1}, collective_op::all_reduce, bytes(1e6)), input_error);
    CHECK_THROWS_AS(predict_collective_time(a100, placement{8, 8, 1}, collective_op::all_reduce, bytes(-1.0)), input_error);
    const detail::rate_base base = detail::make_rate_base(a100);
    const collective_options o{};
    CHECK_THROWS_AS(detail::collective_time_on_base(a100, base, placement{16, 8, 1}, collective_op::all_reduce, bytes(1e6), o),
                    input_error);
    CHECK_THROWS_AS(detail::collective_time_on_base(a100, base, placement{8, 8, 1}, collective_op::all_reduce, bytes(-1.0), o),
                    input_error);
}

TEST_CASE("cost_twin: all_gather costs what reduce_scatter of the same buffer costs, in every algorithm, to the bit") {
    // The step predictor's pricer reuses a reduce-scatter's time for the all-gather of the same
    // bytes on the same group (detail::based_collective_pricer). If an algorithm ever prices the
    // two apart (a reduction cost, an in-switch reduction for one of them), this fails first, and
    // cost_twin must map all_gather to itself.
    STATIC_REQUIRE(cost_twin(collective_op::all_gather) == collective_op::reduce_scatter);
    STATIC_REQUIRE(cost_twin(collective_op::all_reduce) == collective_op::all_reduce);
    STATIC_REQUIRE(cost_twin(collective_op::all_to_all) == collective_op::all_to_all);
    long long compared = 0;
    for (const auto& preset : cluster_presets) {
        for (bool reductions : {false, true}) {  // the preset, and with NVLS and SHARP both on
            cluster c = preset;
            c.nodes = std::max(c.nodes, 4 * (c.domain_spans_nodes() ? c.scale_up_domain / c.node.gpus : 1));
            if (reductions) {
                if (c.node.fabric != intra_fabric::switched) continue;
                c.node.in_switch_reduction = true;
                c.in_network_reduction = true;
            }
            const cluster v = comm_view(c);
            const int g = v.node.gpus;
            const placement groups[] = {{g, g, 1}, {2 * g, g, 1}, {4, 1, g}, {4 * g, g, 1}, {2, 2, 1}};
            for (const auto& pl : groups) {
                if (pl.ranks_per_node > g || pl.nodes() > v.nodes) continue;
                for (int ai = 0; ai < algorithm_count; ++ai) {  // automatic (0) and every algorithm
                    const auto a = static_cast<algorithm>(ai);
                    if (a != algorithm::automatic && !algorithm_applies(v, pl, collective_op::reduce_scatter, a))
                        continue;
                    for (double s = 1; s <= 64.0 * (1ull << 30); s *= 7.3)
                        for (auto mode : {efficiency_mode::realistic, efficiency_mode::ideal}) {
                            const collective_options o{a, mode, algorithm_set::any};
                            INFO(c.name << " " << to_string(a) << " " << pl.ranks << " ranks, " << s << " B");
                            REQUIRE(in_seconds(predict_collective(c, pl, collective_op::all_gather, bytes(s), o).time) ==
                                    in_seconds(predict_collective(c, pl, collective_op::reduce_scatter, bytes(s), o).time));
                            ++compared;
                        }
                }
            }
        }
    }
    CHECK(compared > 2000);
}
