// NCCL's PAT (Parallel Aggregated Trees, NCCL 2.23+) for all-gather and reduce-scatter with one
// GPU per node: ceil(log2 n) latency steps where the ring takes n - 1, and the ring's bandwidth
// term ((n-1)/n S through each GPU's NIC). Expected values are the closed forms on the published
// HDR port latency (0.6 us, ml-engineering-networking) and the 200 Gb/s line rate.
#include <commscale/collective/model.hpp>
#include <commscale/hardware/clusters.hpp>

#include "catch_shim.hpp"

using namespace commscale;

namespace {
/// 8 DGX A100 nodes (8 x 200 Gb/s HDR per node, port latency 0.6 us), one rank per node.
cluster eight_nodes() {
    cluster c = cluster_by_name("dgx-a100");
    c.nodes = 8;
    return c;
}
constexpr placement one_per_node{.ranks = 8, .ranks_per_node = 1, .stride = 1};
collective_options ideal_options(algorithm a) { return {a, efficiency_mode::ideal}; }
}  // namespace

TEST_CASE("PAT: names and where it applies (all_gather and reduce_scatter, one rank per node)") {
    CHECK(to_string(algorithm::pat) == "pat");
    CHECK(parse<algorithm>("pat", "algo") == algorithm::pat);
    const cluster c = eight_nodes();
    CHECK(algorithm_applies(c, one_per_node, collective_op::all_gather, algorithm::pat));
    CHECK(algorithm_applies(c, one_per_node, collective_op::reduce_scatter, algorithm::pat));
    CHECK_FALSE(algorithm_applies(c, one_per_node, collective_op::all_reduce, algorithm::pat));
    CHECK_FALSE(algorithm_applies(c, one_per_node, collective_op::broadcast, algorithm::pat));
    const placement two_per_node{.ranks = 16, .ranks_per_node = 2, .stride = 1};
    CHECK_FALSE(algorithm_applies(c, two_per_node, collective_op::all_gather, algorithm::pat));
    CHECK_FALSE(algorithm_applies(c, placement{.ranks = 8, .ranks_per_node = 8, .stride = 1}, collective_op::all_gather,
                                  algorithm::pat));
    CHECK(detail::nccl_implements(collective_op::all_gather, algorithm::pat));
    CHECK(detail::nccl_implements(collective_op::reduce_scatter, algorithm::pat));
    CHECK_FALSE(detail::nccl_implements(collective_op::all_reduce, algorithm::pat));
    CHECK_THROWS_WITH(predict_collective(c, two_per_node, collective_op::all_gather, bytes(1e6), ideal_options(algorithm::pat)),
                      Catch::Matchers::Contains("algo") && Catch::Matchers::Contains("pat"));
}

TEST_CASE("PAT: a small all_gather on 8 nodes x 1 GPU takes log2(8) = 3 latency steps where the ring takes 7") {
    const cluster c = eight_nodes();
    for (collective_op op : {collective_op::all_gather, collective_op::reduce_scatter}) {
        const auto ring = predict_collective(c, one_per_node, op, bytes(64.0), ideal_options(algorithm::ring));
        const auto pat = predict_collective(c, one_per_node, op, bytes(64.0), ideal_options(algorithm::pat));
        CHECK(in_us(ring.latency) == Approx(7 * 0.6));
        CHECK(in_us(pat.latency) == Approx(3 * 0.6));
        // 64 B: the bandwidth term is negligible, the times are in the ratio of the steps
        CHECK(in_seconds(ring.time) / in_seconds(pat.time) == Approx(7.0 / 3.0).epsilon(0.01));
        // the automatic choice among NCCL's algorithms takes PAT here
        const auto best = predict_collective(c, one_per_node, op, bytes(64.0), ideal_options(algorithm::automatic));
        CHECK(best.algo == algorithm::pat);
    }
    // 64 nodes: 6 steps against 63
    cluster big = c;
    big.nodes = 64;
    const placement p64{.ranks = 64, .ranks_per_node = 1, .stride = 1};
    const auto ring = predict_collective(big, p64, collective_op::all_gather, bytes(64.0), ideal_options(algorithm::ring));
    const auto pat = predict_collective(big, p64, collective_op::all_gather, bytes(64.0), ideal_options(algorithm::pat));
    CHECK(in_us(pat.latency) == Approx(6 * 0.6));
    CHECK(in_seconds(ring.time) / in_seconds(pat.time) == Approx(63.0 / 6.0).epsilon(0.01));
}

TEST_CASE("PAT: at large sizes its bandwidth term equals the ring's") {
    const cluster c = eight_nodes();
    const data_size s = bytes(1.0 * gibi);
    const auto ring = predict_collective(c, one_per_node, collective_op::all_gather, s, ideal_options(algorithm::ring));
    const auto pat = predict_collective(c, one_per_node, collective_op::all_gather, s, ideal_options(algorithm::pat));
    // (n-1)/n S through one 200 Gb/s (25 GB/s) HDR port
    CHECK(in_seconds(pat.transfer) == Approx(7.0 / 8.0 * in_bytes(s) / 25e9).epsilon(1e-12));
    CHECK(in_seconds(pat.transfer) == Approx(in_seconds(ring.transfer)).epsilon(1e-12));
    CHECK(in_GBps(pat.busbw) == Approx(25.0).epsilon(0.001));
    CHECK(pat.bottleneck == bottleneck_kind::nic);
    // realistic mode: NCCL's tuner rates PAT at 3/4 of the ring's bus bandwidth (Simple protocol
    // only), so the automatic choice keeps the ring for large messages
    const auto ring_r = predict_collective(c, one_per_node, collective_op::all_gather, s, {algorithm::ring});
    const auto pat_r = predict_collective(c, one_per_node, collective_op::all_gather, s, {algorithm::pat});
    CHECK(pat_r.proto == protocol::simple);
    CHECK(in_seconds(pat_r.transfer) ==
          Approx(in_seconds(ring_r.transfer) / detail::nccl_pat_bandwidth_factor).epsilon(0.02));
    CHECK(predict_collective(c, one_per_node, collective_op::all_gather, s).algo == algorithm::ring);
}
