// REFERENCE.md items of "Clusters" (gpu-fabrics-for-genai), "Algorithms"
// (distributed-training-lecture) and "Scaling" (will-it-scale-to-n-gpus) that need the collective
// model, the topology or the traffic model together: each computed with the library and compared
// with the published figure.
#include "catch_shim.hpp"

#include <commscale/collective/model.hpp>
#include <commscale/hardware/topology.hpp>
#include <commscale/parallel/traffic.hpp>
#include <commscale/predict/requirements.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/transformer.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/workload/models.hpp>

#include "collective_fixtures.hpp"

using namespace commscale;
using namespace commscale::literals;
using namespace collective_test;

namespace {

collective_options ideal_with(algorithm a) { return collective_options{a, efficiency_mode::ideal, algorithm_set::nccl}; }

// P nodes of one GPU each on InfiniBand HDR 4x (200 Gbps = 25 GB/s, 0.6 us port latency): every
// step of every algorithm crosses the network, as in the lecture's P-worker picture.
cluster one_gpu_nodes(int p) {
    cluster c = dgx_a100(p);
    c.node.gpus = 1;
    c.node.nics = 1;
    return c;
}

}  // namespace

TEST_CASE("gpu-fabrics: one 8 GB gradient flow at 400 Gbps takes 160 ms") {
    // 8e9 B x 8 bit/B / 400e9 bit/s = 0.16 s: a send between two nodes on NDR 400 Gbps NICs.
    const cluster c = dgx_h100(2);
    const auto r = predict_collective(c, {2, 1, 1}, collective_op::send_recv, 8.0_GB, ideal_with(algorithm::automatic));
    CHECK(in_seconds(r.time) == Approx(0.160).epsilon(1e-9));  // the fixture's NDR link has no published latency
    CHECK(r.bottleneck == bottleneck_kind::nic);
}

TEST_CASE("gpu-fabrics: rail-only networks stop at 128-port switches x 8 rails = 1,024 GPUs") {
    CHECK(rail_only_max_gpus(128, 8) == 1024);
    CHECK(rail_only_max_gpus(64, 8) == 512);
    CHECK_THROWS_AS(rail_only_max_gpus(0, 8), input_error);
    CHECK_THROWS_AS(rail_only_max_gpus(128, -1), input_error);
}

TEST_CASE("7:1 spine oversubscription: rail-optimized leaves keep a 32-node ring off the spine, ToR leaves do not") {
    // gpu-fabrics: "oversubscription 7:1 at the spine in large clusters". 32 DGX H100 (8 x 400 Gbps
    // NICs), leaves of 128 downlinks: rail-optimized, a leaf holds NIC k of 128 nodes, so a DP group
    // of GPU k of 32 nodes never leaves it; top-of-rack, a leaf holds the 8 NICs of 16 nodes, so the
    // same group crosses the 7:1 spine and the network part of the ring runs 7x slower.
    cluster rail = dgx_h100(32);
    rail.oversubscription = 7.0;
    rail.nodes_per_leaf = 128;
    rail.rail_optimized = true;
    cluster tor = rail;
    tor.rail_optimized = false;
    CHECK(rail.nodes_under_one_leaf() == 128);
    CHECK(tor.nodes_under_one_leaf() == 16);
    const placement dp{32, 1, 8};  // GPU 0 of each node (stride 8: one per node)
    const auto opt = ideal_with(algorithm::ring);
    const auto on_rail = predict_collective(rail, dp, collective_op::all_reduce, 1.0_GB, opt);
    const auto on_tor = predict_collective(tor, dp, collective_op::all_reduce, 1.0_GB, opt);
    // ring: 2 (n-1)/n x 1 GB through one 50 GB/s NIC, / 7 behind the spine
    CHECK(in_seconds(on_rail.transfer) == Approx(2.0 * 31.0 / 32.0 * 1e9 / 50e9).epsilon(1e-9));
    CHECK(in_seconds(on_tor.transfer) == Approx(7.0 * 2.0 * 31.0 / 32.0 * 1e9 / 50e9).epsilon(1e-9));
    CHECK(on_rail.bottleneck == bottleneck_kind::nic);
    CHECK(on_tor.bottleneck == bottleneck_kind::spine);
    // 16 nodes fit under one ToR leaf: no spine, both wirings equal.
    tor.nodes = rail.nodes = 16;
    const placement dp16{16, 1, 8};
    CHECK(in_seconds(predict_collective(tor, dp16, collective_op::all_reduce, 1.0_GB, opt).time) ==
          Approx(in_seconds(predict_collective(rail, dp16, collective_op::all_reduce, 1.0_GB, opt).time)).epsilon(1e-12));
}

TEST_CASE("lecture: rounds, per-node bytes and fan-in of parameter server vs ring") {
    // distributed-training-lecture: parameter server O(1) rounds, peak node bandwidth O(N x P),
    // fan-in O(P); ring O(2P) rounds, O(N/P) per step, fan-in O(1), each node sends 2(P-1)N/P.
    const double b = 25e9, alpha = 0.6e-6;  // HDR 4x per direction, port latency
    for (int p : {4, 16, 64}) {
        const cluster c = one_gpu_nodes(p);
        const placement g{p, 1, 1};
        const double n_bytes = 1e9, pd = p;
        const auto ring = predict_collective(c, g, collective_op::all_reduce, bytes(n_bytes), ideal_with(algorithm::ring));
        CHECK(in_seconds(ring.latency) == Approx(2.0 * (pd - 1.0) * alpha).epsilon(1e-9));          // 2(P-1) rounds
        CHECK(in_seconds(ring.transfer) * b == Approx(2.0 * (pd - 1.0) * n_bytes / pd).epsilon(1e-9));  // 2(P-1)N/P sent
        CHECK(ring.bottleneck == bottleneck_kind::nic);
        const auto ps = predict_collective(c, g, collective_op::all_reduce, bytes(n_bytes),
                                           ideal_with(algorithm::parameter_server));
        // The lecture's O(1) rounds are logical (one push, one pull); the alpha-beta cost charges
        // the server's port one latency per message it takes in and sends out (fan-in P - 1).
        CHECK(in_seconds(ps.latency) == Approx(2.0 * (pd - 1.0) * alpha).epsilon(1e-9));
        // the server's port takes N from each of the P-1 workers: (P-1) N, fan-in P-1
        CHECK(in_seconds(ps.transfer) * b == Approx((pd - 1.0) * n_bytes).epsilon(1e-9));
        CHECK(ps.bottleneck == bottleneck_kind::server_nic);
        // so the server moves P/2 times the bytes of a ring node
        CHECK(in_seconds(ps.transfer) / in_seconds(ring.transfer) == Approx(pd / 2.0).epsilon(1e-9));
    }
}

TEST_CASE("lecture: tensor parallelism sends (d B / P)(P - 1) per link in the forward pass, pipelining d B / P") {
    // Forward pass of a layer split P ways: every partition gathers the other P - 1 slices of the
    // d x B activation (an all-gather of d x B); a pipeline stage sends its slice to the next
    // stage only. Per link: (P - 1) times the pipeline's bytes.
    const cluster c = dgx_a100(1);
    const double b = 300e9;  // NVLink 3 per direction
    const double d = 12288, batch = 2048 * 2;  // hidden size x tokens, 2 bytes each
    const double act = d * batch * 2.0;
    for (int p : {2, 4, 8}) {
        const double pd = p;
        const auto tp = predict_collective(c, {p, p, 1}, collective_op::all_gather, bytes(act), ideal_with(algorithm::ring));
        const auto pp = predict_collective(c, {2, 2, 1}, collective_op::send_recv, bytes(act / pd), ideal_with(algorithm::automatic));
        const double tp_link = in_seconds(tp.transfer) * b, pp_link = in_seconds(pp.transfer) * b;
        CHECK(tp_link == Approx(act / pd * (pd - 1.0)).epsilon(1e-9));
        CHECK(pp_link == Approx(act / pd).epsilon(1e-9));
        CHECK(tp_link / pp_link == Approx(pd - 1.0).epsilon(1e-9));
    }
}

TEST_CASE("lecture: GPT-4's rumoured 1.8T parameters over 120 layers are ~60 GB per layer in fp32") {
    // 1.8e12 / 120 = 1.5e10 parameters per layer x 4 B = 60 GB: more than an 80 GB H100 holds once
    // gradients and Adam state (16 B/param) are added, so one layer must itself be split.
    // A GPT-style shape with 120 layers and h = 35,328 (96 heads of 368): 12 h^2 + 13 h per layer.
    constexpr transformer gpt4ish{.name = "gpt-4 (rumoured size)", .layers = 120, .hidden = 35328, .heads = 96,
                                  .kv_heads = 96, .ffn = 4 * 35328, .vocab = 100256, .max_seq = 8192, .biases = true,
                                  .source = "distributed-training-lecture (rumour)"};
    const double per_layer = parameters_per_layer(gpt4ish).total();
    CHECK(per_layer * 120.0 == Approx(1.8e12).epsilon(0.01));
    CHECK(per_layer * 4.0 == Approx(60e9).epsilon(0.01));  // fp32 weights of one layer
    CHECK(per_layer * 16.0 > 80e9 * 2.0);                  // weights + gradients + Adam: > two H100s
}

TEST_CASE("will-it-scale: the library's DP byte count for the 10B example, and the bandwidth it needs") {
    // will-it-scale-to-n-gpus: P = 10B with fp16 gradients (20 GB), 32 x 128 tokens per step on N
    // nodes of 8 A100 at 50% of 300 TFLOPS. The all-reduce crosses each node's NICs hierarchically:
    // 2 (N-1)/N x 2P bytes per node (the ring bound of Patarasuk & Yuan 2009); within the
    // 0.2048/N s of compute that needs 1562.5 (N-1) Gbps for P = 10B (the document's rule
    // "N x P GB/s" = 80 N Gbps is ~10x too lenient; see REFERENCE.md).
    constexpr transformer m10b{.name = "10b", .layers = 32, .hidden = 5120, .heads = 40, .kv_heads = 40,
                               .ffn = 20480, .vocab = 50257, .max_seq = 2048, .source = "test shape"};
    const double params = total_parameters(m10b);
    REQUIRE(params == Approx(10e9).epsilon(0.06));  // 12 l h^2 = 10.07e9, + embeddings and norms
    for (int n : {2, 4, 8, 16}) {
        plan p;
        p.dp = 8 * n;
        p.micro_batch = 1;
        p.global_batch = p.dp;
        p.seq = 128;
        p.gradient_bytes = 2;
        const step_traffic t = plan_traffic(m10b, p, 8);
        const data_size per_node = dp_inter_node_bytes_per_node(t, 8);
        const double nd = n;
        // every gradient (to 1e-6: the traffic model counts one h-vector of the final norm apart)
        CHECK(in_bytes(per_node) == Approx(2.0 * (nd - 1.0) / nd * 2.0 * params).epsilon(1e-6));
        const duration window = compute_time(approx_training_flops(10e9, 32.0 * 128.0), 8.0 * n, 300_TFLOPS, 0.5);
        const double need_gbps = in_Gbps(required_bandwidth(per_node, window));
        CHECK(need_gbps == Approx(1562.5 * (nd - 1.0) * params / 10e9).epsilon(1e-6));
    }
}

TEST_CASE("impact-of-gpu-networking: GPT-2 Large DDP epochs on 1x4 / 2x2 / 4x1 Baskerville GPUs") {
    // Measured epoch-2 times 135.42 / 895.85 / 251.68 s (same data, so epoch time is proportional
    // to step time). The batch is not published: 4 sequences of 1024 tokens per GPU, 4 steps of
    // accumulation. What the model reproduces: one node is fastest, and 4 x 1 costs about twice
    // as much (measured 1.86x; model 1.30x: the 4x1 all-reduce is host-staged on one HDR NIC; 1.42x
    // before the compute constants were fitted to the calibration set, which made the compute it
    // hides under slower).
    // What it does not: 2 x 2 as the slowest (6.6x). The all-reduce there is 3-5x faster in the
    // model than measured, for the reasons in collective.cpp's Baskerville test, so the model
    // ranks 2 x 2 between the other two.
    const transformer gpt2l = model_by_name("gpt2-large");
    auto step_on = [&](int nodes, int gpus_per_node) {
        cluster c = cluster_by_name("baskerville");
        c.nodes = nodes;
        c.node.gpus = gpus_per_node;
        plan p;  // PyTorch DDP: no optimizer sharding, 25 MB buckets overlapped with backward
        p.zero = 0;
        p.gradient_bytes = 4;  // fp32 gradients: AMP keeps the parameters and their gradients in fp32
        p.bucket = bytes(ddp_bucket_bytes);
        p.bucket_per_dp = bytes(0.0);
        p.dp = 4;
        p.micro_batch = 4;
        p.global_batch = 64;
        p.seq = 1024;
        return in_seconds(predict_step(gpt2l, c, p).step);
    };
    const double t14 = step_on(1, 4), t22 = step_on(2, 2), t41 = step_on(4, 1);
    INFO("1x4 " << t14 << " s, 2x2 " << t22 << " s, 4x1 " << t41 << " s");
    CHECK(t14 < t22);
    CHECK(t14 < t41);
    const double measured_41 = 251.68 / 135.42;  // 1.86
    CHECK(t41 / t14 == Approx(measured_41).epsilon(0.6));
    CHECK(t41 / t14 > 1.25);
}
