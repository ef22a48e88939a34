// One closed-form test per collective algorithm (collective/algorithms/*.hpp): in ideal mode a
// prediction is the algorithm's alpha-beta cost, T = (latency steps) x alpha + (bytes per
// direction on the busiest port) / B, with the published port latency and the datasheet rate.
// Each expected time below is that textbook formula, written out here from its source, not read
// from the library; the latency and bandwidth terms are checked apart so that a wrong step count
// cannot hide behind a bandwidth term.
//
// The network: InfiniBand HDR 4x, 200 Gb/s = 25 GB/s per direction and port latency 0.6 us
// (ml-engineering-networking, after the InfiniBand Trade Association / NVIDIA tables); one NIC per
// GPU (DGX A100: 8 x ConnectX-6 HDR). Scale-up: NVLink3, 12 links x 25 GB/s = 300 GB/s per
// direction (A100 whitepaper), NVLink4, 18 x 25 = 450 GB/s (H100 whitepaper); NVLink's latency is
// not published, so the scale-up steps cost no alpha in ideal mode. Notation: n ranks, N nodes, r
// ranks per node, S the nccl-tests buffer size, lg = log2.
#include "catch_shim.hpp"

#include <cmath>

#include <commscale/collective/model.hpp>

#include "collective_fixtures.hpp"

using namespace commscale;
using namespace collective_test;

namespace closed_forms {

constexpr double alpha = 0.6e-6;     // s, HDR port latency
constexpr double b_nic = 25e9;       // B/s per direction, HDR 4x
constexpr double b_nvlink3 = 300e9;  // B/s per direction, A100
constexpr double b_nvlink4 = 450e9;  // B/s per direction, H100

/// What the model predicts for `a` in ideal mode.
collective_result ideal_time(const cluster& c, const placement& g, collective_op op, double s, algorithm a) {
    return predict_collective(c, g, op, bytes(s), collective_options{a, efficiency_mode::ideal});
}

/// The prediction's latency and transfer terms equal the closed form's, and so does their sum.
void check_alpha_beta(const collective_result& r, double latency, double transfer) {
    CHECK(in_seconds(r.latency) == Approx(latency).epsilon(1e-12));
    CHECK(in_seconds(r.transfer) == Approx(transfer).epsilon(1e-12));
    CHECK(in_seconds(r.time) == Approx(latency + transfer).epsilon(1e-12));
}

/// n nodes of 8 A100 on NVLink3 with one HDR NIC per GPU; the group has one rank per node.
placement one_rank_per_node(int n) { return placement{.ranks = n, .ranks_per_node = 1, .stride = 8}; }

}  // namespace closed_forms

using namespace closed_forms;

TEST_CASE("ring: all_reduce 2(n-1) alpha + 2(n-1)/n S/B, reduce_scatter and all_gather (n-1) alpha + (n-1)/n S/B") {
    // Patarasuk & Yuan 2009 (bandwidth-optimal all-reduce); Thakur, Rabenseifner & Gropp 2005,
    // "Optimization of Collective Communication Operations in MPICH" (ring all-gather: (p-1) alpha + (p-1)/p n beta); the all-reduce is a reduce-scatter
    // then an all-gather.
    const cluster c = dgx_a100(8);
    const double n = 8, s = 1e9;
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::all_reduce, s, algorithm::ring),
                     2 * (n - 1) * alpha, 2 * (n - 1) / n * s / b_nic);
    for (const collective_op op : {collective_op::reduce_scatter, collective_op::all_gather})
        check_alpha_beta(ideal_time(c, one_rank_per_node(8), op, s, algorithm::ring), (n - 1) * alpha,
                         (n - 1) / n * s / b_nic);
    // A small buffer: the latency term dominates, 14 x 0.6 us.
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::all_reduce, 4096, algorithm::ring),
                     14 * alpha, 2 * 7.0 / 8.0 * 4096 / b_nic);
}

TEST_CASE("tree: a pipelined binary tree, all_reduce 2 lg N alpha + 3 S/B across nodes, 2 S/B along the node's chain") {
    // A pipelined reduce up the tree and broadcast down it: an interior node receives S from each
    // of its two children and sends S to its parent (reduce), receives S from its parent and sends
    // S to each child (broadcast), so 3 S cross its port in each direction, in lg N steps each way
    // (Sanders, Speck & Traeff 2009: a single tree uses only part of the bandwidth, which
    // their two trees recover). Inside a node NCCL's tree is a chain: a middle GPU carries 2 S.
    const cluster c = dgx_a100(8);
    const double s = 1e9;
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::all_reduce, s, algorithm::tree),
                     2 * std::log2(8.0) * alpha, 3 * s / b_nic);
    // broadcast alone: S in, 2 S out of an interior node
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::broadcast, s, algorithm::tree),
                     std::log2(8.0) * alpha, 2 * s / b_nic);
    check_alpha_beta(ideal_time(dgx_a100(), placement{8, 8, 1}, collective_op::all_reduce, s, algorithm::tree), 0.0,
                     2 * s / b_nvlink3);
}

TEST_CASE("double_binary_tree: all_reduce 2 lg N alpha + 2 S/B, broadcast lg N alpha + S/B across nodes") {
    // Sanders, Speck & Traeff 2009, "Two-tree algorithms for full bandwidth broadcast, reduction and
    // scan": each half of the buffer goes down its own tree, and every node is interior in one tree
    // and a leaf in the other, so a node's port carries 3 S/2 + S/2 = 2 S per direction for the
    // all-reduce and S for the broadcast (NCCL's tree since 2.4).
    const cluster c = dgx_a100(16);
    const double s = 1e9;
    check_alpha_beta(ideal_time(c, one_rank_per_node(16), collective_op::all_reduce, s, algorithm::double_binary_tree),
                     2 * std::log2(16.0) * alpha, 2 * s / b_nic);
    check_alpha_beta(ideal_time(c, one_rank_per_node(16), collective_op::broadcast, s, algorithm::double_binary_tree),
                     std::log2(16.0) * alpha, s / b_nic);
}

TEST_CASE("parameter_server: all_reduce 2(n-1) alpha + (n-1) S/B through the server's port") {
    // One server (Li et al. 2014, "Scaling Distributed Machine Learning with the Parameter
    // Server"; distributed-training-lecture): n-1 workers push S each into its port and pull S each
    // out of it (one message per worker and direction), the two directions of the full-duplex port
    // in parallel.
    const cluster c = dgx_a100(8);
    const double n = 8, s = 1e8;
    const auto r = ideal_time(c, one_rank_per_node(8), collective_op::all_reduce, s, algorithm::parameter_server);
    check_alpha_beta(r, 2 * (n - 1) * alpha, (n - 1) * s / b_nic);
    CHECK(r.bottleneck == bottleneck_kind::server_nic);
}

TEST_CASE("parameter_server_sharded: all_reduce 2(n-1) alpha + 2(n-1)/n S/B") {
    // Every rank serves 1/n of the keys (Li et al. 2014): a push of (n-1)/n S to the owners, then a
    // pull of (n-1)/n S back, each one message per peer (n-1 steps per phase).
    const cluster c = dgx_a100(8);
    const double n = 8, s = 1e9;
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::all_reduce, s,
                                algorithm::parameter_server_sharded),
                     2 * (n - 1) * alpha, 2 * (n - 1) / n * s / b_nic);
}

TEST_CASE("direct: all_to_all (n-1) alpha + (n-1)/n S/B, one-shot all_reduce (n-1) alpha + (n-1) S/B") {
    // Thakur, Rabenseifner & Gropp 2005 (pairwise exchange all-to-all: p-1 messages, each
    // rank sending (p-1)/p of its buffer); the one-shot all-reduce reads every peer's whole buffer.
    const cluster c = dgx_a100(8);
    const double n = 8, s = 1e9;
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::all_to_all, s, algorithm::direct),
                     (n - 1) * alpha, (n - 1) / n * s / b_nic);
    check_alpha_beta(ideal_time(c, one_rank_per_node(8), collective_op::all_reduce, s, algorithm::direct),
                     (n - 1) * alpha, (n - 1) * s / b_nic);
}

TEST_CASE("halving_doubling: all_reduce 2 lg p alpha + 2(p-1)/p S/B, and (2 lg p' + 2) alpha + (2 + 2(p'-1)/p') S/B") {
    // Rabenseifner's algorithm as Thakur, Rabenseifner & Gropp 2005 give it (the
    // reduction's computation term left out): recursive halving reduce-scatter then recursive
    // doubling all-gather, 2 lg p alpha + 2 (p-1)/p n beta. For p not a power of two, the p - p'
    // extra ranks first hand their buffers to a partner and get the result back at the end (p' the
    // largest power of two below p): (2 lg p' + 2) alpha + (2 + 2 (p'-1)/p') n beta.
    const double s = 1e9;
    check_alpha_beta(ideal_time(dgx_a100(8), one_rank_per_node(8), collective_op::all_reduce, s,
                                algorithm::halving_doubling),
                     2 * std::log2(8.0) * alpha, 2 * 7.0 / 8.0 * s / b_nic);
    check_alpha_beta(ideal_time(dgx_a100(6), one_rank_per_node(6), collective_op::all_reduce, s,
                                algorithm::halving_doubling),
                     (2 * std::log2(4.0) + 2) * alpha, (2 + 2 * 3.0 / 4.0) * s / b_nic);
}

TEST_CASE("hierarchical: 2(r-1)/r S/B_scale-up + 2(N-1) alpha + 2(N-1)/N (S/r)/B_NIC") {
    // Two-level all-reduce (intra-node reduce-scatter, an all-reduce across nodes of each local
    // rank's 1/r of the buffer through its own NIC, intra-node all-gather): the ring's cost at each
    // level, the levels one after the other.
    const cluster c = dgx_a100(4);
    const double r = 8, nodes = 4, s = 1e9;
    check_alpha_beta(ideal_time(c, placement{32, 8, 1}, collective_op::all_reduce, s, algorithm::hierarchical),
                     2 * (nodes - 1) * alpha,
                     2 * (r - 1) / r * s / b_nvlink3 + 2 * (nodes - 1) / nodes * (s / r) / b_nic);
}

TEST_CASE("nvls: the NVSwitch reduces, (r+1)/r S/B per GPU port in 2 steps, with SHARP across nodes S per node") {
    // NVLink SHARP (NVIDIA H100 Tensor Core GPU Architecture whitepaper, "NVLink Switch System"):
    // each GPU sends its S to the switch, which reduces, and gets S/r of the result back; then
    // sends its S/r for the multicast and receives S: (r+1)/r S per direction in 2 steps. With
    // in-network reduction (SHARP, Graham et al. 2016) the switches reduce across nodes too: each
    // node sends S up and receives S down through its NICs, in 2 steps.
    const double s = 1e9, r = 8;
    check_alpha_beta(ideal_time(dgx_h100(), placement{8, 8, 1}, collective_op::all_reduce, s, algorithm::nvls), 0.0,
                     (r + 1) / r * s / b_nvlink4);
    cluster sharp = dgx_h100(4);
    sharp.node.inter = ib_hdr();
    sharp.in_network_reduction = true;
    // the scale-up and network parts pipelined: the slower sets the pace (here NVLink4's 1.125 S
    // at 450 GB/s against S over the node's 8 x 25 GB/s)
    check_alpha_beta(ideal_time(sharp, placement{32, 8, 1}, collective_op::all_reduce, s, algorithm::nvls), 2 * alpha,
                     std::max((r + 1) / r * s / b_nvlink4, s / (8 * b_nic)));
    // all_gather and reduce_scatter on one node: S per port, one step
    check_alpha_beta(ideal_time(dgx_h100(), placement{8, 8, 1}, collective_op::all_gather, s, algorithm::nvls), 0.0,
                     s / b_nvlink4);
}

TEST_CASE("pat: all_gather and reduce_scatter ceil(lg n) alpha + (n-1)/n S/B, one rank per node") {
    // NCCL's Parallel Aggregated Trees (NCCL 2.23+, NVIDIA/nccl src/device/prims_*.h): the ring's
    // bytes in a logarithmic number of rounds; 12 nodes: ceil(lg 12) = 4 steps where the ring takes 11.
    const cluster c = dgx_a100(12);
    const double n = 12, s = 1e9;
    for (const collective_op op : {collective_op::all_gather, collective_op::reduce_scatter})
        check_alpha_beta(ideal_time(c, one_rank_per_node(12), op, s, algorithm::pat), std::ceil(std::log2(n)) * alpha,
                         (n - 1) / n * s / b_nic);
}
