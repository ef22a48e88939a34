// Tests for include/commscale/collective/model.hpp: the worked numbers of REFERENCE.md ("Data
// movement", "Topology effects", "Algorithms") and published nccl-tests measurements.
#include "catch_shim.hpp"

#include <cmath>
#include <string>

#include <commscale/collective/model.hpp>

#include "collective_fixtures.hpp"

using namespace commscale;
using namespace collective_test;

namespace {
constexpr collective_options ideal(algorithm a = algorithm::automatic) { return {a, efficiency_mode::ideal}; }
constexpr collective_options real(algorithm a = algorithm::automatic) { return {a, efficiency_mode::realistic}; }
}  // namespace

TEST_CASE("busbw factors follow nccl-tests: 2(n-1)/n, (n-1)/n, 1") {
    // ml-engineering-networking: factor 1 at n = 2, 1.75 at n = 8, ~1.97 at n = 64.
    STATIC_REQUIRE(busbw_factor(collective_op::all_reduce, 2) == 1.0);
    STATIC_REQUIRE(busbw_factor(collective_op::all_reduce, 8) == 1.75);
    STATIC_REQUIRE(busbw_factor(collective_op::all_reduce, 64) == 2.0 * 63.0 / 64.0);
    STATIC_REQUIRE(busbw_factor(collective_op::all_gather, 8) == 0.875);
    STATIC_REQUIRE(busbw_factor(collective_op::reduce_scatter, 4) == 0.75);
    STATIC_REQUIRE(busbw_factor(collective_op::all_to_all, 2) == 0.5);
    STATIC_REQUIRE(busbw_factor(collective_op::broadcast, 8) == 1.0);
    STATIC_REQUIRE(busbw_factor(collective_op::send_recv, 2) == 1.0);
    // nccl-tests row (ml-engineering-networking): 16 GiB in 127997 us -> algbw 134.22, busbw 234.89.
    const duration t = 127997.0_us;
    CHECK(in_GBps(algbw(16.0_GiB, t)) == Approx(134.22).epsilon(1e-4));
    CHECK(in_GBps(busbw(collective_op::all_reduce, 8, 16.0_GiB, t)) == Approx(234.89).epsilon(1e-4));
    CHECK(in_GBps(algbw(1.0_GB, 0.0_s)) == 0.0);  // no inf for an instantaneous collective
}

TEST_CASE("names round-trip and unknown names suggest the closest") {
    for (int i = 0; i < 7; ++i) {
        const auto op = static_cast<collective_op>(i);
        CHECK(parse<collective_op>(to_string(op), "op") == op);
    }
    for (int i = 0; i < algorithm_count; ++i) {
        const auto a = static_cast<algorithm>(i);
        CHECK(parse<algorithm>(to_string(a), "algo") == a);
    }
    CHECK(parse<collective_op>("all-reduce", "op") == collective_op::all_reduce);
    CHECK(parse<algorithm>("automatic", "algo") == algorithm::automatic);
    try {
        (void)parse<collective_op>("allreduce", "op");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "op");
        CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("all_reduce"));
    }
    try {
        (void)parse<algorithm>("rign", "algo");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "algo");
        CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("ring"));
    }
}

TEST_CASE("ideal ring all-reduce of 8 GB on 8 GPUs over NVLink 3 = 8 GB x 1.75 / 300 GB/s") {
    // ml-engineering-networking: DDP, 2B parameters, fp32 gradients = 8 GB.
    const auto r = predict_collective(dgx_a100(), {8, 8, 1}, collective_op::all_reduce, 8.0_GB, ideal(algorithm::ring));
    const double expected = 8e9 * 1.75 / 300e9;  // 0.04667 s
    CHECK(in_seconds(r.time) == Approx(expected).epsilon(1e-12));
    CHECK(in_seconds(r.latency) == 0.0);  // NVLink latency unpublished: the closed form has no alpha
    CHECK(in_GBps(r.busbw) == Approx(300.0).epsilon(1e-12));
    CHECK(r.bottleneck == bottleneck_kind::intra_link);
    CHECK(describe_bottleneck(r) == "intra-node link nvlink3");
    // The document rounds 2(n-1)/n up to 2: "16 GB / 300 GB/s = 0.053 s" overstates the ring by
    // 1/0.875; its summary table's 0.027 s (= 8 GB / 300 GB/s) drops the factor altogether.
    CHECK(16.0 / 300.0 == Approx(0.0533).epsilon(1e-3));
    CHECK(in_seconds(r.time) / (16.0 / 300.0) == Approx(0.875).epsilon(1e-12));
    CHECK(in_seconds(r.time) / (8.0 / 300.0) == Approx(1.75).epsilon(1e-12));
    // H100: the document's 16/450 = 0.035 s; the ring gives 8 x 1.75 / 450 = 0.0311 s.
    const auto h = predict_collective(dgx_h100(), {8, 8, 1}, collective_op::all_reduce, 8.0_GB, ideal(algorithm::ring));
    CHECK(in_seconds(h.time) == Approx(8.0 * 1.75 / 450.0).epsilon(1e-12));
}

TEST_CASE("ideal closed forms of the seven operations on one NVSwitch node") {
    const cluster c = dgx_a100();
    const placement g{8, 8, 1};
    const double s = 1e9, b = 300e9;
    auto t = [&](collective_op op, algorithm a) { return in_seconds(predict_collective(c, g, op, bytes(s), ideal(a)).time); };
    CHECK(t(collective_op::reduce_scatter, algorithm::ring) == Approx(7.0 / 8.0 * s / b).epsilon(1e-12));
    CHECK(t(collective_op::all_gather, algorithm::ring) == Approx(7.0 / 8.0 * s / b).epsilon(1e-12));
    CHECK(t(collective_op::broadcast, algorithm::ring) == Approx(s / b).epsilon(1e-12));
    CHECK(t(collective_op::reduce, algorithm::ring) == Approx(s / b).epsilon(1e-12));
    CHECK(t(collective_op::all_to_all, algorithm::direct) == Approx(7.0 / 8.0 * s / b).epsilon(1e-12));
    CHECK(t(collective_op::all_to_all, algorithm::ring) == Approx(s * 7.0 / 2.0 / b).epsilon(1e-12));
    CHECK(t(collective_op::send_recv, algorithm::direct) == Approx(s / b).epsilon(1e-12));
    // one-shot all-reduce reads 7 buffers; halving-doubling moves 2(n-1)/n S like the ring.
    CHECK(t(collective_op::all_reduce, algorithm::direct) == Approx(7.0 * s / b).epsilon(1e-12));
    CHECK(t(collective_op::all_reduce, algorithm::halving_doubling) == Approx(1.75 * s / b).epsilon(1e-12));
    // chain of 8 GPUs (NCCL's intra-node tree): each middle GPU receives S from its child and S
    // from its parent.
    CHECK(t(collective_op::all_reduce, algorithm::tree) == Approx(2.0 * s / b).epsilon(1e-12));
}

TEST_CASE("mesh: one peer gets 1/(G-1) of the complement, rings use every link") {
    // HGX A100 4-GPU board: 12 NVLink 3 links per GPU, 4 to each of the 3 peers = 100 GB/s per peer.
    const cluster c = baskerville(1);
    const auto p2p = predict_collective(c, {2, 2, 1}, collective_op::send_recv, 1.0_GB, ideal());
    CHECK(in_seconds(p2p.time) == Approx(1e9 / 100e9).epsilon(1e-12));
    const auto ring4 = predict_collective(c, {4, 4, 1}, collective_op::all_reduce, 1.0_GB, ideal(algorithm::ring));
    CHECK(in_seconds(ring4.time) == Approx(1.5e9 / 300e9).epsilon(1e-12));
    // Two GPUs of the four: only the 4 links between them, 100 GB/s.
    const auto ring2 = predict_collective(c, {2, 2, 1}, collective_op::all_reduce, 1.0_GB, ideal(algorithm::ring));
    CHECK(in_seconds(ring2.time) == Approx(1e9 / 100e9).epsilon(1e-12));
}

TEST_CASE("Baskerville 1x4 / 2x2 / 4x1 all-reduce of GPT-2 Large gradients (1.32 GiB bf16)") {
    // impact-of-gpu-networking-part2, measured (default / ring / tree), seconds:
    //   1x4: 0.009 / 0.009 / 0.013;  2x2: 0.309 / 0.584 / 0.309;  4x1: 0.158 / 0.158 / 0.158.
    const cluster c = baskerville(4);
    const data_size s = 1.32_GiB;
    const placement p14{4, 4, 1}, p22{4, 2, 1}, p41{4, 1, 1};
    for (const auto mode : {efficiency_mode::ideal, efficiency_mode::realistic}) {
        auto t = [&](const placement& g, algorithm a) {
            return in_seconds(predict_collective(c, g, collective_op::all_reduce, s, {a, mode}).time);
        };
        // 1x4 far fastest (the measurement: 17x to 34x faster than the others).
        CHECK(t(p14, algorithm::automatic) * 5.0 < t(p22, algorithm::automatic));
        CHECK(t(p14, algorithm::automatic) * 5.0 < t(p41, algorithm::automatic));
        // with ring, 2x2 is slower than 4x1: the two GPUs of a node share its one NIC
        CHECK(t(p22, algorithm::ring) > 1.5 * t(p41, algorithm::ring));
        // on 2x2 tree beats ring (aggregated in the node before crossing the NIC) ...
        CHECK(t(p22, algorithm::tree) < t(p22, algorithm::ring));
        // ... on 1x4 ring beats tree (the chain carries 2S per GPU, the ring 1.5S)
        CHECK(t(p14, algorithm::ring) < t(p14, algorithm::tree));
    }
    auto rt = [&](const placement& g, algorithm a) {
        return in_seconds(predict_collective(c, g, collective_op::all_reduce, s, real(a)).time);
    };
    // Ballpark, realistic mode. 1x4 within 30% (ring 0.009, tree 0.013 s).
    CHECK(rt(p14, algorithm::ring) == Approx(0.009).epsilon(0.3));
    CHECK(rt(p14, algorithm::tree) == Approx(0.013).epsilon(0.3));
    // What the datasheets explain and what they do not. Bytes per NIC and direction: a ring
    // enters and leaves each node once per channel, so 4x1 and 2x2 rings both move 1.5 S through
    // each node's one HDR port; the 2x2 tree moves S. Measured throughput per NIC byte:
    //   4x1 ring 1.5 x 1.417e9 B / 0.158 s = 13.4 GB/s (54% of the 25 GB/s port),
    //   2x2 ring 1.5 x 1.417e9 B / 0.584 s =  3.6 GB/s, 2x2 tree 1.417e9 B / 0.309 s = 4.6 GB/s.
    // No published link explains the 2x2 figures: the GPUs' and the NIC's PCIe Gen4 x16 (31.5
    // GB/s) and the HDR port (25 GB/s) are the same in both layouts. The preset has no GPUDirect
    // RDMA path (NIC on a CPU root port), so the model divides the NIC between the two GPUs that
    // stage through host memory (2x for the ring, none for the tree, which leaves each node from
    // one GPU) and keeps the NIC at its 0.92 network efficiency. Left unexplained: host staging
    // itself (4x1 reaches 54%, not 92%: 0.096 vs 0.158 s) and a further ~2-3x in the 2x2 runs
    // (likely the far socket's GPU reaching the NIC across the CPU interconnect, or fewer NCCL
    // channels per NIC); neither has a published constant, so the model does not invent one.
    // 4x1 ring within 40% of 0.158 s.
    CHECK(rt(p41, algorithm::ring) == Approx(0.158).epsilon(0.4));
    // 2x2: only a factor-5 band (the model is 3.1x and 4.8x faster than measured).
    CHECK(rt(p22, algorithm::ring) > 0.584 / 5.0);
    CHECK(rt(p22, algorithm::ring) < 0.584);
    CHECK(rt(p22, algorithm::tree) > 0.309 / 5.0);
    CHECK(rt(p22, algorithm::tree) < 0.309);
    // With GPUDirect RDMA the same hardware would not penalise sharing in the ring: 2x2 = 4x1.
    cluster gdr = c;
    gdr.node.gpudirect_rdma = true;
    const double ring22_gdr = in_seconds(predict_collective(gdr, p22, collective_op::all_reduce, s, real(algorithm::ring)).time);
    CHECK(ring22_gdr < rt(p22, algorithm::ring) * 0.6);
    // The limiting resource in words.
    const auto r22 = predict_collective(c, p22, collective_op::all_reduce, s, real(algorithm::ring));
    CHECK(r22.bottleneck == bottleneck_kind::nic);
    CHECK(r22.sharing == 2);
    CHECK(describe_bottleneck(r22) == "inter-node NIC ib-hdr-4x shared by 2 GPUs");
}

TEST_CASE("nccl-tests all_reduce_perf on 8 x A100 (NVLink 3): realistic busbw within 15% from 64 MiB") {
    // ml-engineering-networking, all rows: size (B), busbw (GB/s).
    struct row { double size, busbw; };
    constexpr row table[] = {
        {32768, 1.31},       {65536, 2.45},       {131072, 4.43},       {262144, 7.47},
        {524288, 11.41},     {1048576, 18.00},    {2097152, 36.18},     {4194304, 72.33},
        {8388608, 109.93},   {16777216, 106.16},  {33554432, 138.49},   {67108864, 171.54},
        {134217728, 176.92}, {268435456, 194.07}, {536870912, 222.72},  {1073741824, 229.04},
        {2147483648, 231.41}, {4294967296, 233.88}, {8589934592, 234.61}, {17179869184, 234.89}};
    const cluster c = dgx_a100();
    const placement g{8, 8, 1};
    double previous = 0;
    for (const row& rw : table) {
        const auto ring = predict_collective(c, g, collective_op::all_reduce, bytes(rw.size), real(algorithm::ring));
        const auto best = predict_collective(c, g, collective_op::all_reduce, bytes(rw.size), real());
        INFO("size " << rw.size << " measured " << rw.busbw << " ring " << in_GBps(ring.busbw) << " auto "
                     << in_GBps(best.busbw) << " (" << to_string(best.algo) << ")");
        if (rw.size >= 64.0 * 1024 * 1024) {
            CHECK(in_GBps(ring.busbw) == Approx(rw.busbw).epsilon(0.15));
            CHECK(in_GBps(best.busbw) == Approx(rw.busbw).epsilon(0.15));
        } else {
            // Latency-bound sizes: the shape, within a factor 3 of the measurement.
            CHECK(in_GBps(ring.busbw) > rw.busbw / 3.0);
            CHECK(in_GBps(ring.busbw) < rw.busbw * 3.0);
        }
        CHECK(in_GBps(ring.busbw) > previous);  // rises through the whole range
        previous = in_GBps(ring.busbw);
    }
    // Small messages are latency-bound, large ones saturate near 80% of 300 GB/s.
    const auto small = predict_collective(c, g, collective_op::all_reduce, 32.0_KiB, real(algorithm::ring));
    CHECK(small.bottleneck == bottleneck_kind::latency);
    CHECK(in_GBps(small.busbw) < 0.05 * 300.0);
    const auto large = predict_collective(c, g, collective_op::all_reduce, 16.0_GiB, real(algorithm::ring));
    CHECK(in_GBps(large.busbw) / 300.0 > 0.75);
    CHECK(in_GBps(large.busbw) / 300.0 < 0.82);
}

TEST_CASE("one 4 GB all-reduce vs 1000 x 4 MB on the same node: ~3.4x slower") {
    // ml-engineering-networking: busbw 1257.165 Gbps for 1 x 4 GB, 374.391 Gbps for 1000 x 4 MB.
    const double measured = 1257.165 / 374.391;  // 3.36
    const cluster c = dgx_a100();
    const placement g{8, 8, 1};
    const auto one = predict_collective(c, g, collective_op::all_reduce, 4.0_GB, real());
    const auto piece = predict_collective(c, g, collective_op::all_reduce, 4.0_MB, real());
    const double ratio = 1000.0 * in_seconds(piece.time) / in_seconds(one.time);
    CHECK(ratio == Approx(measured).epsilon(0.25));
}

TEST_CASE("4 nodes at 200 Gbps, 16 GB of all-reduce traffic: 0.64 s per the document vs the models") {
    // ml-engineering-networking: "16GB is 128Gb, and so at 200Gbps this will take 0.64 seconds".
    CHECK(in_seconds(16.0_GB / 200.0_Gbps) == Approx(0.64).epsilon(1e-12));
    // With one 200 Gbps NIC per 8-GPU node, NCCL's inter-node double binary tree moves 2S through
    // each NIC: exactly the document's 2 x 8 GB / 200 Gbps.
    cluster one_nic = dgx_a100(4);
    one_nic.node.nics = 1;
    one_nic.node.inter.latency = std::nullopt;
    const placement g{32, 8, 1};
    const auto dbt = predict_collective(one_nic, g, collective_op::all_reduce, 8.0_GB, ideal(algorithm::double_binary_tree));
    CHECK(in_seconds(dbt.time) == Approx(0.64).epsilon(1e-12));
    // The hierarchical ring needs only 2(N-1)/N S / B = 0.48 s across nodes, plus the intra-node
    // reduce-scatter and all-gather (2 x 7/8 x 8 GB / 300 GB/s = 0.0467 s).
    const auto hier = predict_collective(one_nic, g, collective_op::all_reduce, 8.0_GB, ideal(algorithm::hierarchical));
    CHECK(in_seconds(hier.time) == Approx(0.48 + 0.0466667).epsilon(1e-5));
    // The fastest of all algorithms is at least as fast; NCCL's own choice (ring or tree) is not.
    collective_options fastest = ideal();
    fastest.candidates = algorithm_set::any;
    const auto best = predict_collective(one_nic, g, collective_op::all_reduce, 8.0_GB, fastest);
    CHECK(in_seconds(best.time) <= in_seconds(hier.time));
    const auto nccl = predict_collective(one_nic, g, collective_op::all_reduce, 8.0_GB, ideal());
    CHECK((nccl.algo == algorithm::ring || nccl.algo == algorithm::double_binary_tree));
    CHECK(in_seconds(nccl.time) > in_seconds(hier.time));
    // A DGX A100 has one 200 Gbps NIC per GPU: the ring crosses each node through 8 NICs.
    const auto dgx = predict_collective(dgx_a100(4), g, collective_op::all_reduce, 8.0_GB, ideal(algorithm::ring));
    CHECK(in_seconds(dgx.time) == Approx(2.0 * 31.0 / 32.0 * 8e9 / 200e9).epsilon(1e-3));
    // ~23x slower than NVLink per the document (0.64 / 0.027); the model: 0.64 / 0.0467 = 13.7x.
    CHECK(0.64 / 0.027 == Approx(23.7).epsilon(0.01));
}

TEST_CASE("parameter server for ResNet-50 on 256 workers: the server NIC is the bottleneck") {
    // distributed-training-lecture: 97.5 MB of gradients, 3 iterations/s per V100, 256 workers:
    // a single server must absorb 256 x 3 x 97.5 MB/s = 74.9 GB/s through a 400 Gbps (50 GB/s) NIC.
    // 24.4M fp32 parameters x 4 B = 97.6 MB (the lecture rounds to 97.5 MB, used below).
    CHECK(in_bytes(24.4e6 * (4.0_B)) == Approx(97.5e6).epsilon(2e-3));
    const data_size grads = 97.5_MB;
    const byte_rate need = 256.0 * 3.0 * grads / 1.0_s;
    CHECK(in_GBps(need) == Approx(74.88).epsilon(1e-4));
    // 69.7 GiB/s. The lecture's "73.1 GiB/s" is 74,880 MB/s / 1024, a mix of decimal and binary
    // prefixes: 74.88e9 B/s / 2^30 = 69.74 GiB/s is the right figure.
    CHECK(in_GBps(need) / 1.073741824 == Approx(69.74).epsilon(1e-3));  // GiB/s
    CHECK(need > 400.0_Gbps);

    cluster c = dgx_a100(256);
    c.node.gpus = 1;
    c.node.nics = 1;
    c.node.inter = ib_ndr();
    const placement g{256, 1, 1};
    const auto ps = predict_collective(c, g, collective_op::all_reduce, grads, ideal(algorithm::parameter_server));
    // 255 remote workers push 97.5 MB each through the server's 50 GB/s port.
    CHECK(in_seconds(ps.time) == Approx(255.0 * 97.5e6 / 50e9).epsilon(1e-9));
    CHECK(1.0 / in_seconds(ps.time) < 3.0);  // cannot keep up with 3 iterations/s
    CHECK(ps.bottleneck == bottleneck_kind::server_nic);
    CHECK_THAT(describe_bottleneck(ps), Catch::Matchers::Contains("parameter-server NIC ib-ndr-4x"));
    // Ring and sharded servers spread the load: every node moves 2(n-1)/n x 97.5 MB.
    const auto ring = predict_collective(c, g, collective_op::all_reduce, grads, ideal(algorithm::ring));
    CHECK(in_seconds(ring.time) == Approx(2.0 * 255.0 / 256.0 * 97.5e6 / 50e9).epsilon(1e-9));
    const auto sharded = predict_collective(c, g, collective_op::all_reduce, grads, ideal(algorithm::parameter_server_sharded));
    CHECK(in_seconds(sharded.time) == Approx(2.0 * 255.0 / 256.0 * 97.5e6 / 50e9).epsilon(1e-9));
    CHECK(1.0 / in_seconds(ring.time) > 3.0 * 50.0);
}

TEST_CASE("8 x H100: ring near 80% of 450 GB/s, in-switch reduction above the link rate") {
    // Public record (ANCHORS.md, jax-ml scaling book): ~370 GB/s busbw with ring-type algorithms on
    // 8 x H100, only with multi-GB messages; NVLS pushes all-reduce busbw above 450 GB/s.
    const cluster c = dgx_h100();
    const placement g{8, 8, 1};
    const auto ring = predict_collective(c, g, collective_op::all_reduce, 8.0_GiB, real(algorithm::ring));
    CHECK(in_GBps(ring.busbw) == Approx(370.0).epsilon(0.15));
    const auto nvls = predict_collective(c, g, collective_op::all_reduce, 8.0_GiB, real(algorithm::nvls));
    CHECK(in_GBps(nvls.busbw) > 450.0);
    CHECK(nvls.bottleneck == bottleneck_kind::switch_reduction);
    // Ideal NVLS: each GPU port carries (n+1)/n S: busbw = 2(n-1)/(n+1) x 450 = 700 GB/s.
    const auto nvls_ideal = predict_collective(c, g, collective_op::all_reduce, 8.0_GiB, ideal(algorithm::nvls));
    CHECK(in_GBps(nvls_ideal.busbw) == Approx(2.0 * 7.0 / 9.0 * 450.0).epsilon(1e-12));
    const auto best = predict_collective(c, g, collective_op::all_reduce, 8.0_GiB, real());
    CHECK(best.algo == algorithm::nvls);
    // NVLS needs the switch: on A100 it is an error naming the algorithm.
    CHECK_THROWS_AS(predict_collective(dgx_a100(), g, collective_op::all_reduce, 1.0_GB, real(algorithm::nvls)),
                    input_error);
}

TEST_CASE("multi-node DGX: NIC per GPU, spine oversubscription beyond one leaf") {
    cluster c = dgx_h100(64);
    c.nodes_per_leaf = 16;
    c.oversubscription = 7.0;  // gpu-fabrics-for-genai: 7:1 at the spine in large clusters
    const data_size s = 1.0_GB;
    // DP group of stride 8 (one GPU per node): 16 nodes stay under one leaf, 32 cross the spine.
    const auto leaf = predict_collective(c, {16, 1, 8}, collective_op::all_reduce, s, ideal(algorithm::ring));
    CHECK(in_seconds(leaf.time) == Approx(2.0 * 15.0 / 16.0 * 1e9 / 50e9).epsilon(1e-12));
    CHECK(leaf.bottleneck == bottleneck_kind::nic);
    CHECK(describe_bottleneck(leaf) == "inter-node NIC ib-ndr-4x");
    const auto spine = predict_collective(c, {32, 1, 8}, collective_op::all_reduce, s, ideal(algorithm::ring));
    CHECK(in_seconds(spine.time) == Approx(2.0 * 31.0 / 32.0 * 1e9 / (50e9 / 7.0)).epsilon(1e-12));
    CHECK(spine.bottleneck == bottleneck_kind::spine);
    // Full nodes: the ring leaves each node through its 8 NICs (400 GB/s) vs NVLink 450.
    const auto full = predict_collective(c, {64, 8, 1}, collective_op::all_reduce, s, ideal(algorithm::ring));
    CHECK(in_seconds(full.time) == Approx(2.0 * 63.0 / 64.0 * 1e9 / 400e9).epsilon(1e-12));
    // Realistic 2-node ring: the NICs reach 46-48 GB/s each (NVIDIA/nccl-tests #290), 0.92 of
    // 400 GB/s per node; NVLink's 0.8 x 450 = 360 GB/s is the tighter of the two, so busbw sits
    // within 10% of 0.8 x 400 = 320 and below 0.92 x 400.
    const auto two = predict_collective(dgx_h100(2), {16, 8, 1}, collective_op::all_reduce, 4.0_GiB, real(algorithm::ring));
    CHECK(in_GBps(two.busbw) == Approx(0.8 * 400.0).epsilon(0.1));
    CHECK(in_GBps(two.busbw) < default_network_efficiency * 400.0);
}

TEST_CASE("one rank and empty buffers cost zero, bad input is an input_error") {
    const cluster c = dgx_a100(2);
    for (int i = 0; i < 7; ++i) {
        const auto r = predict_collective(c, {1, 1, 1}, static_cast<collective_op>(i), 1.0_GB);
        CHECK(in_seconds(r.time) == 0.0);
        CHECK(r.bottleneck == bottleneck_kind::none);
        CHECK(in_GBps(r.busbw) == 0.0);
    }
    CHECK(in_seconds(predict_collective(c, {8, 8, 1}, collective_op::all_reduce, 0.0_B).time) == 0.0);
    auto field_of = [&](const placement& g, data_size s, collective_options o = {}) -> std::string {
        try {
            (void)predict_collective(c, g, collective_op::all_reduce, s, o);
        } catch (const input_error& e) {
            return e.field();
        }
        return "no error";
    };
    CHECK(field_of({0, 1, 1}, 1.0_GB) == "placement.ranks");
    CHECK(field_of({8, 9, 1}, 1.0_GB) == "placement.ranks_per_node");
    CHECK(field_of({24, 8, 1}, 1.0_GB) == "placement.ranks");  // 3 nodes on a 2-node cluster
    CHECK(field_of({4, 4, 4}, 1.0_GB) == "placement.stride");
    CHECK(field_of({8, 8, 1}, bytes(-1.0)) == "bytes");
    CHECK(field_of({8, 8, 1}, bytes(std::nan(""))) == "bytes");
    CHECK(field_of({8, 8, 1}, 1.0_GB, real(algorithm::nvls)) == "algo");
    try {
        (void)predict_collective(c, {8, 8, 1}, collective_op::all_gather, 1.0_GB, real(algorithm::tree));
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "algo");
        CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("all_gather"));
    }
    cluster broken = dgx_a100(2);
    broken.node.inter.per_direction = bytes_per_second(0.0);
    CHECK_THROWS_AS(predict_collective(broken, {16, 8, 1}, collective_op::all_reduce, 1.0_GB), input_error);
}

TEST_CASE("2 nodes x 8 A100 at 1.6 Tbps per node: nccl-tests busbw ~236 GB/s for 4-8 GiB") {
    // oracle-quickstart/oci-hpc-oke README (nccl-tests all_reduce_perf, 16 x A100-SXM4-40GB on two
    // BM.GPU4.8 nodes, 16 x 100 Gbps RoCE = 1.6 Tbps per node): busbw 235.63 GB/s at 4 GiB,
    // 237.94 at 8 GiB (out of place). NCCL runs its tree there, so busbw exceeds what a ring could
    // report through the NICs (2 x 15/16 x S over 200 GB/s per node).
    cluster c = dgx_a100(2);
    c.node.inter = make_link("roce-100", link_family::roce, link_kind::scale_out, 100.0_Gbps);
    c.node.nics = 16;
    const placement g{16, 8, 1};
    const auto r4 = predict_collective(c, g, collective_op::all_reduce, 4.0_GiB, real());
    const auto r8 = predict_collective(c, g, collective_op::all_reduce, 8.0_GiB, real());
    CHECK(in_GBps(r4.busbw) == Approx(235.63).epsilon(0.15));
    CHECK(in_GBps(r8.busbw) == Approx(237.94).epsilon(0.15));
    const auto ring = predict_collective(c, g, collective_op::all_reduce, 8.0_GiB, real(algorithm::ring));
    // a ring cannot beat the node's NICs at the network efficiency (0.92 of 200 GB/s)
    CHECK(in_GBps(ring.busbw) < default_network_efficiency * 200.0 * 1.001);
}
