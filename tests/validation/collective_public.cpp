// The realistic collective model against published nccl-tests / rccl-tests all-reduce results,
// with the cluster presets' datasheet constants only (nothing fitted to these rows).
//
// Solid figures (a measured busbw at >= 64 MiB, with the system and the algorithm known) are
// checked within 15%. Figures the model misses, or that are not measurements, are listed with
// the reason, and checked on the side the model is known to err so that a model change that
// moves them is noticed.
//
// Not in this file, because no published busbw was found for them in the public record this
// project searched: AWS p5 (EFA v2, 32 x 100 Gb/s), GCP A3 / A3 Mega (GPUDirect-TCPX / TCPXO),
// multi-node DGX H100 with NCCL's default NVLS/NVLSTree (only forced-ring figures are
// published as expectations), and an 8 x MI300X rccl-tests row above 8 MiB.
#include "catch_shim.hpp"

#include <string>
#include <string_view>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/clusters.hpp>

using namespace commscale;
using namespace commscale::literals;

namespace {

constexpr double kib = 1024.0, mib = kib * kib, gib = mib * kib;

/// One published all-reduce figure.
struct published {
    std::string_view system;
    cluster c;
    placement g;
    algorithm algo;     ///< what the measurement ran (NCCL's default choice = automatic)
    double size;        ///< bytes (nccl-tests size)
    double busbw;       ///< GB/s, as printed by nccl-tests
    std::string_view source;
};

cluster with_nodes(std::string_view preset, int nodes) {
    cluster c = cluster_by_name(preset);
    c.nodes = nodes;
    return c;
}

double predicted_busbw(const published& p) {
    return in_GBps(predict_collective(p.c, p.g, collective_op::all_reduce, bytes(p.size),
                                      {p.algo, efficiency_mode::realistic})
                       .busbw);
}

}  // namespace

TEST_CASE("public all-reduce results within 15% from 64 MiB up (datasheet constants only)") {
    // OCI BM.GPU4.8: 8 x A100 40GB on NVSwitch, 16 x 100 Gb/s RoCE per node.
    cluster oci = with_nodes("dgx-a100", 2);
    oci.node.inter = roce_100;
    oci.node.nics = 16;
    const published rows[] = {
        // ml-engineering-networking, nccl-tests all_reduce_perf on one 8 x A100 NVLink3 node.
        {"8xA100 NVLink3", with_nodes("dgx-a100", 1), {8, 8, 1}, algorithm::automatic, 64 * mib, 171.54,
         "ml-engineering-networking nccl-tests table"},
        {"8xA100 NVLink3", with_nodes("dgx-a100", 1), {8, 8, 1}, algorithm::automatic, 256 * mib, 194.07,
         "ml-engineering-networking nccl-tests table"},
        {"8xA100 NVLink3", with_nodes("dgx-a100", 1), {8, 8, 1}, algorithm::automatic, 1 * gib, 229.04,
         "ml-engineering-networking nccl-tests table"},
        {"8xA100 NVLink3", with_nodes("dgx-a100", 1), {8, 8, 1}, algorithm::automatic, 16 * gib, 234.89,
         "ml-engineering-networking nccl-tests table"},
        // NVIDIA (S. Jeaugey), NVIDIA/nccl-tests #212: "NCCL can get an effective NVLink bandwidth
        // of 370GB/s ... with NCCL_ALGO=RING"; with NVLink SHARP "a peak busBw of ~480GB/s" on
        // 8 GPUs, at large sizes (256 MiB is too small). Sizes taken as 8 GiB.
        {"8xH100 NVLink4 ring", with_nodes("dgx-h100", 1), {8, 8, 1}, algorithm::ring, 8 * gib, 370.0,
         "NVIDIA/nccl-tests #212"},
        {"8xH100 NVLink4 NVLS", with_nodes("dgx-h100", 1), {8, 8, 1}, algorithm::automatic, 8 * gib, 480.0,
         "NVIDIA/nccl-tests #212; NVIDIA GTC S62129 via NVIDIA/nccl #1374"},
        // NVIDIA/nccl-tests #290 (NVIDIA, A. Laddy): 476 GB/s on one H100 node "in the expected range".
        {"8xH100 NVLink4 NVLS", with_nodes("dgx-h100", 1), {8, 8, 1}, algorithm::automatic, 8 * gib, 476.0,
         "NVIDIA/nccl-tests #290"},
        // NVIDIA/nccl-tests #272: 8 x H200, NCCL 2.20.3, -e 4G: peak busbw 475 GB/s.
        {"8xH200 NVLink4 NVLS", with_nodes("hgx-h200", 1), {8, 8, 1}, algorithm::automatic, 4 * gib, 475.0,
         "NVIDIA/nccl-tests #272"},
        // NVIDIA/nccl #1807: 8 x B200 in one machine, NCCL 2.27, all_reduce_perf "830+" (size not
        // given: 8 GiB assumed). Default (Hopper) NVLS factor 0.85: +12%; see below for 0.74.
        {"8xB200 NVLink5 NVLS", with_nodes("dgx-b200", 1), {8, 8, 1}, algorithm::automatic, 8 * gib, 830.0,
         "NVIDIA/nccl #1807"},
        // NVIDIA (A. Laddy), NVIDIA/nccl #812 quoted in #1576: "On an Nvidia DGX-A100 system we have
        // 8x200Gbit/s IB cards and we measure 192GB/s AllReduce BusBW" (multi-node ring; 4 nodes
        // and 8 GiB assumed).
        {"DGX A100 x4 HDR ring", with_nodes("dgx-a100", 4), {32, 8, 1}, algorithm::ring, 8 * gib, 192.0,
         "NVIDIA/nccl #812, #1576"},
        // NVIDIA/nccl-tests #290: with NCCL_ALGO=RING on NDR 400 Gb/s "you should see 46-48GB/s per
        // NIC": 8 NICs x 47 = 376 GB/s busbw for 2 DGX H100 (8 GiB assumed).
        {"DGX H100 x2 NDR ring", with_nodes("dgx-h100", 2), {16, 8, 1}, algorithm::ring, 8 * gib, 376.0,
         "NVIDIA/nccl-tests #290"},
        {"DGX H100 x8 NDR ring", with_nodes("dgx-h100", 8), {64, 8, 1}, algorithm::ring, 8 * gib, 376.0,
         "NVIDIA/nccl-tests #290"},
        // ml-engineering-networking: EFA v1 (p4d, 4 x 100 Gb/s) "~340 Gbps measured" all-reduce =
        // 42.5 GB/s busbw per node (multi-node ring; 4 nodes and 8 GiB assumed).
        {"p4d x4 EFA v1 ring", with_nodes("aws-p4d", 4), {32, 8, 1}, algorithm::ring, 8 * gib, 42.5,
         "ml-engineering-networking"},
        // oracle-quickstart/oci-hpc-oke README: 2 x BM.GPU4.8 (16 x A100, 16 x 100 Gb/s RoCE per
        // node), NCCL default (tree on two nodes): 235.63 GB/s at 4 GiB, 237.94 at 8 GiB.
        {"2xOCI A100 RoCE auto", oci, {16, 8, 1}, algorithm::automatic, 4 * gib, 235.63,
         "oracle-quickstart/oci-hpc-oke README"},
        {"2xOCI A100 RoCE auto", oci, {16, 8, 1}, algorithm::automatic, 8 * gib, 237.94,
         "oracle-quickstart/oci-hpc-oke README"},
    };
    for (const published& p : rows) {
        const double model = predicted_busbw(p);
        INFO(p.system << ", " << p.size / mib << " MiB: measured " << p.busbw << " GB/s, model " << model
                      << " GB/s (" << p.source << ")");
        CHECK(p.size >= 64 * mib);
        CHECK(model == Approx(p.busbw).epsilon(0.15));
    }
}

TEST_CASE("public figures the model misses, and why") {
    // NVIDIA/nccl #527 (2022, NCCL 2.9.9 with the aws-ofi-nccl plugin of the time), 1 GiB on
    // p4d.24xlarge: busbw 57.17 (2 nodes, tree), 31.77 (3 nodes), 29.61 (4 nodes) GB/s. The model
    // is 40-50% above: that software stack reached ~60% of EFA v1's 50 GB/s per node, while
    // ml-engineering-networking reports ~340 Gb/s (85%) for the same instance later. The older
    // figures are not used to lower the NIC efficiency.
    struct miss { int nodes; double busbw; };
    for (const miss m : {miss{2, 57.17}, miss{3, 31.77}, miss{4, 29.61}}) {
        const published p{"p4d EFA v1 (2022)", with_nodes("aws-p4d", m.nodes), {8 * m.nodes, 8, 1},
                          algorithm::automatic, 1 * gib, m.busbw, "NVIDIA/nccl #527"};
        const double model = predicted_busbw(p);
        INFO(m.nodes << " nodes: measured " << m.busbw << ", model " << model);
        CHECK(model > 1.3 * m.busbw);
        CHECK(model < 1.7 * m.busbw);
    }

    // 8 x MI300X (rccl-tests): no published busbw at >= 64 MiB was found. AMD's ROCm blog
    // "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X" (2025) gives
    // the usable xGMI rate: ~48 of 64 GB/s per link (75%) after CRC and protocol overhead, so a
    // ring over all 7 links of a GPU is capped near 7 x 48 = 336 GB/s. That is a ceiling, not a
    // measurement: the model's ring (0.8 x 448 GB/s, saturating) sits within 15% of it.
    {
        const published p{"8xMI300X xGMI ring", with_nodes("mi300x-roce", 1), {8, 8, 1}, algorithm::ring,
                          8 * gib, 336.0, "AMD ROCm blog, mi300x-rccl-xgmi"};
        CHECK(predicted_busbw(p) == Approx(336.0).epsilon(0.15));
    }

    // Baskerville (impact-of-gpu-networking-part2): see collective.cpp; the 2x2 layouts run
    // 3-5x slower than any published link explains.
}

TEST_CASE("B200 with NCCL's Blackwell NVLS factor (0.74) lands within 3% of the published 830 GB/s") {
    // NCCL's tuning model uses an NVLS bandwidth factor of 0.85 on Hopper and 0.74 on Blackwell
    // (ANCHORS.md). The preset keeps the default parameters (a calibration block in a preset
    // would have to round-trip bit for bit through the cluster JSON); a calibrated B200 sets it.
    cluster b200 = presets::dgx_b200;
    b200.comm.nvls_efficiency = 0.74;
    const double busbw =
        in_GBps(predict_collective(b200, {8, 8, 1}, collective_op::all_reduce, bytes(8 * gib)).busbw);
    CHECK(busbw == Approx(830.0).epsilon(0.03));
    const double hopper_factor =
        in_GBps(predict_collective(presets::dgx_b200, {8, 8, 1}, collective_op::all_reduce, bytes(8 * gib)).busbw);
    CHECK(hopper_factor > busbw);
}
