// Tests for include/commscale/calibrate/measurements.hpp.
#include "catch_shim.hpp"

#include <cmath>
#include <limits>

#include <commscale/calibrate/measurements.hpp>

using namespace commscale;

TEST_CASE("the published busbw columns follow collective/model.hpp busbw_factor") {
    // ml-engineering-networking, 8 x A100, 16 GiB all_reduce: algbw 134.22, busbw 234.89 GB/s.
    CHECK_THAT(134.22 * busbw_factor(collective_op::all_reduce, 8), Catch::Matchers::WithinRel(234.89, 1e-4));
    // oracle-quickstart/oci-hpc-oke README, 2 x 8 A100, 8 GiB all_reduce: algbw 126.90, busbw 237.94.
    CHECK_THAT(126.90 * busbw_factor(collective_op::all_reduce, 16), Catch::Matchers::WithinRel(237.94, 1e-4));
}

TEST_CASE("op names: CLI spelling, nccl-tests binaries, NCCL API spelling") {
    STATIC_REQUIRE(op_from_name("all_reduce") == collective_op::all_reduce);
    STATIC_REQUIRE(op_from_name("./build/all_reduce_perf") == collective_op::all_reduce);
    STATIC_REQUIRE(op_from_name("/opt/nccl-tests/build/alltoall_perf") == collective_op::all_to_all);
    STATIC_REQUIRE(op_from_name("AllGather") == collective_op::all_gather);
    STATIC_REQUIRE(op_from_name("reduce-scatter") == collective_op::reduce_scatter);
    STATIC_REQUIRE(op_from_name("sendrecv_perf") == collective_op::send_recv);
    STATIC_REQUIRE(op_from_name("send_recv") == collective_op::send_recv);
    STATIC_REQUIRE(op_from_name("broadcast_perf") == collective_op::broadcast);
    STATIC_REQUIRE(op_from_name("reduce_perf") == collective_op::reduce);
    STATIC_REQUIRE(op_from_name("all_to_all") == collective_op::all_to_all);
    // nccl-tests binaries commscale does not model, and junk.
    STATIC_REQUIRE(!op_from_name("gather_perf"));
    STATIC_REQUIRE(!op_from_name("hypercube_perf"));
    STATIC_REQUIRE(!op_from_name("alltoallv_perf"));
    STATIC_REQUIRE(!op_from_name(""));
    STATIC_REQUIRE(!op_from_name("a_name_much_longer_than_thirty_two_characters_perf"));
    for (auto op : {collective_op::all_reduce, collective_op::reduce_scatter, collective_op::all_gather, collective_op::broadcast,
                    collective_op::reduce, collective_op::all_to_all, collective_op::send_recv}) {
        CHECK(op_from_name(to_string(op)) == op);
        CHECK(op_from_name(nccl_tests_binary(op)) == op);
    }
}

TEST_CASE("row accessors convert the nccl-tests columns to quantities") {
    // ml-engineering-networking 16 GiB row: 17179869184 B in 127997 us -> algbw 134.22 GB/s.
    const measured_row r{.bytes = bytes(17179869184.0), .count = 4294967296.0, .time = time_as_read{127997}, .algbw = from_GBps(134.22), .busbw = from_GBps(234.89)};
    CHECK(in_bytes(message_size(r)) == 17179869184.0);
    CHECK_THAT(in_seconds(measured_time(r)), Catch::Matchers::WithinRel(0.127997, 1e-12));
    const byte_rate algbw = message_size(r) / measured_time(r);
    CHECK_THAT(in_GBps(algbw), Catch::Matchers::WithinRel(134.22, 5e-4));  // 2 printed decimals
    CHECK_THAT(in_GBps(measured_busbw(r)), Catch::Matchers::WithinRel(234.89, 1e-12));
    CHECK_THAT(in_GBps(measured_algbw(r)), Catch::Matchers::WithinRel(134.22, 1e-12));
}

TEST_CASE("usable rejects NaN, infinite, negative values and zero time") {
    const measured_row good{.bytes = bytes(8), .count = 2, .time = time_as_read{36.47}, .algbw = from_GBps(0), .busbw = from_GBps(0)};
    CHECK(usable(good));
    auto bad = good;
    bad.time = time_as_read{std::numeric_limits<double>::quiet_NaN()};
    CHECK_FALSE(usable(bad));
    bad = good;
    bad.time = time_as_read{0};
    CHECK_FALSE(usable(bad));
    bad = good;
    bad.busbw = from_GBps(-1);
    CHECK_FALSE(usable(bad));
    bad = good;
    bad.inplace_time = time_as_read{std::numeric_limits<double>::infinity()};
    CHECK_FALSE(usable(bad));
    bad = good;
    bad.nccl_predicted = from_us(-3);
    CHECK_FALSE(usable(bad));
}

TEST_CASE("sets compare by value") {
    measurement_set a{.op = collective_op::all_gather, .tool = "nccl-tests", .ranks = 8, .nodes = 1};
    a.rows.push_back({.bytes = bytes(1024), .count = 32, .time = time_as_read{10}, .algbw = from_GBps(0.1), .busbw = from_GBps(0.09)});
    auto b = a;
    CHECK(a == b);
    b.rows[0].inplace_time = time_as_read{10.5};
    CHECK_FALSE(a == b);
}

TEST_CASE("cluster_for_log: the preset of the log's GPU model with the log's nodes, and its group") {
    // 16 ranks on 2 hosts of H100s: dgx-h100 with 2 nodes, 8 ranks per node
    measurement_set m;
    m.ranks = 16;
    m.nodes = 2;
    m.gpu = "NVIDIA H100 80GB HBM3";
    const cluster h = cluster_for_log(m);
    CHECK(h.name == "dgx-h100");
    CHECK(h.nodes == 2);
    const placement g = placement_for_log(h, m);
    CHECK(g.ranks == 16);
    CHECK(g.ranks_per_node == 8);
    // 16 ranks on one host of an unknown GPU: the default preset, its node widened to 16 GPUs
    m.nodes = 1;
    m.gpu = "";
    const cluster wide = cluster_for_log(m);
    CHECK(wide.name == "dgx-a100");
    CHECK(wide.node.gpus == 16);
    // 8 GB200 ranks on 2 trays: an NVL72 domain spanning trays, the ranks in one domain
    m.ranks = 8;
    m.nodes = 2;
    m.gpu = "NVIDIA GB200";
    const cluster nvl = cluster_for_log(m);
    CHECK(nvl.domain_spans_nodes());
    CHECK(placement_for_log(nvl, m).ranks_per_node == 8);
}
