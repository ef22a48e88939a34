// Tests for include/commscale/hardware/clusters.hpp: the presets reproduce the published system
// figures, lookups work at compile time, unknown names suggest close ones, and every preset agrees
// field by field with its data/clusters/<name>.json.
#include "catch_shim.hpp"

#include <filesystem>
#include <set>
#include <string>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/cluster_json.hpp>

using namespace commscale;
using namespace commscale::literals;

namespace {
constexpr double node_injection_Gbps(const cluster& c) { return in_Gbps(c.node.node_injection()); }
}  // namespace

TEST_CASE("presets are found at compile time and validate") {
    STATIC_REQUIRE(find_cluster("dgx-h100").has_value());
    STATIC_REQUIRE(!find_cluster("dgx-h1000").has_value());
    STATIC_REQUIRE(find_cluster(default_cluster_name).has_value());
    STATIC_REQUIRE(all_clusters().size() == 14);
    std::set<std::string_view> names;
    for (const cluster& c : all_clusters()) {
        INFO(c.name);
        REQUIRE_NOTHROW(validate(c));
        CHECK(!c.source.empty());
        CHECK(!c.node.accelerator.empty());
        CHECK(names.insert(c.name).second);  // unique
        // Every link is a catalog link, so JSON can name it.
        CHECK(find_link(c.node.intra.name).has_value());
        CHECK(find_link(c.node.inter.name).has_value());
        CHECK(find_accelerator(c.node.accelerator).has_value());
    }
    // CLI.md lists these names.
    for (const char* n : {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "aws-p4d", "aws-p5", "gcp-a3-mega",
                          "mi300x-roce", "gaudi2-hls", "baskerville"})
        CHECK(names.count(n) == 1);
}

TEST_CASE("unknown preset names are rejected with suggestions") {
    try {
        (void)cluster_by_name("dgx-h10", "--cluster");
        FAIL("no exception");
    } catch (const input_error& e) {
        CHECK(e.field() == "--cluster");
        CHECK_THAT(e.value(), Catch::Matchers::Contains("dgx-h10"));
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("dgx-h100"));
    }
    REQUIRE_THROWS_AS(cluster_by_name(""), input_error);
}

TEST_CASE("DGX A100: 8 x 200 Gbps ConnectX-6, NVLink3 300 GB/s per direction") {
    // distributed-training-lecture: "Between servers, up to 8 X 200Gbps ConnectX-6/7"; NVLink 600
    // GB/s duplex = 300 per direction (REFERENCE.md "Algorithms").
    constexpr cluster c = presets::dgx_a100;
    STATIC_REQUIRE(c.node.gpus == 8);
    STATIC_REQUIRE(c.node.nics == 8);
    STATIC_REQUIRE(c.node.gpus_per_nic() == 1);
    REQUIRE(node_injection_Gbps(c) == Approx(1600.0).epsilon(1e-12));
    REQUIRE(in_GBps(c.node.intra.per_direction) == Approx(300.0).epsilon(1e-12));
    REQUIRE(c.node.fabric == intra_fabric::switched);
    REQUIRE_FALSE(c.node.in_switch_reduction);  // NVSwitch gen 2: no NVLS
}

TEST_CASE("DGX H100: NVLink is 9x the per-GPU network bandwidth") {
    // gpu-fabrics-for-genai: 18 NVLink4 links x 200 Gbps = 3.6 Tbps per GPU per direction vs
    // 400 Gbps per GPU to the network: 9x.
    constexpr cluster c = presets::dgx_h100;
    const double nvlink_Gbps = in_Gbps(c.node.intra.per_direction);
    const double nic_Gbps = in_Gbps(c.node.inter.per_direction);
    REQUIRE(nvlink_Gbps == Approx(3600.0).epsilon(1e-12));
    REQUIRE(nic_Gbps == Approx(400.0).epsilon(1e-12));
    REQUIRE(nvlink_Gbps / nic_Gbps == Approx(9.0).epsilon(1e-12));
    // 8 x 400 Gbps = 3.2 Tbps per node. (ml-engineering-networking's "8x 200Gbps ... 1.6 Gbps"
    // describes the 200G-port configuration and has a Gbps/Tbps typo; the DGX H100 datasheet's
    // compute ports are 400 Gb/s NDR.)
    REQUIRE(node_injection_Gbps(c) == Approx(3200.0).epsilon(1e-12));
    REQUIRE(c.node.in_switch_reduction);  // NVSwitch gen 3 reduces in the switch (NVLS)
}

TEST_CASE("cloud presets: EFA v1 400 Gbps, EFA v2 3200 Gbps, TCPXO 1600 Gbps per node") {
    // ml-engineering-networking: EFA v1 0.4 Tbps (P4), EFA v2 3.2 Tbps (P5, 32 NICs).
    REQUIRE(node_injection_Gbps(presets::aws_p4d) == Approx(400.0).epsilon(1e-12));
    REQUIRE(presets::aws_p4d.node.gpus_per_nic() == 2);  // 4 EFA interfaces for 8 GPUs
    REQUIRE(node_injection_Gbps(presets::aws_p5) == Approx(3200.0).epsilon(1e-12));
    REQUIRE(presets::aws_p5.node.nics == 32);
    REQUIRE(presets::aws_p5.node.gpus_per_nic() == 1);
    // Google Cloud a3-megagpu-8g: 8 x 200 Gbps GPU NICs.
    REQUIRE(node_injection_Gbps(presets::gcp_a3_mega) == Approx(1600.0).epsilon(1e-12));
}

TEST_CASE("Gaudi2 HLS: 262.5 GB/s to the 7 peers, 2.4 Tbps scale-out per node") {
    // ml-engineering-networking: 21 x 100 GbE = 2.1 Tbps = 262.5 GB/s per card inside the node;
    // 3 x 8 = 24 x 100 GbE = 2.4 Tbps across nodes.
    constexpr cluster c = presets::gaudi2_hls;
    REQUIRE(in_GBps(c.node.intra.per_direction) == Approx(262.5).epsilon(1e-12));
    REQUIRE(node_injection_Gbps(c) == Approx(2400.0).epsilon(1e-12));
    REQUIRE(c.node.fabric == intra_fabric::mesh);
}

TEST_CASE("MI300X: xGMI mesh 7 x 64 = 448 GB/s per direction, 8 x 400G RoCE") {
    constexpr cluster c = presets::mi300x_roce;
    REQUIRE(in_GBps(c.node.intra.per_direction) == Approx(448.0).epsilon(1e-12));
    REQUIRE(c.node.fabric == intra_fabric::mesh);
    REQUIRE(node_injection_Gbps(c) == Approx(3200.0).epsilon(1e-12));
}

TEST_CASE("B200 and H200 servers") {
    // NVLink5: 18 links x 50 GB/s = 900 GB/s per direction (1.8 TB/s duplex), REFERENCE.md.
    REQUIRE(in_GBps(presets::dgx_b200.node.intra.per_direction) == Approx(900.0).epsilon(1e-12));
    REQUIRE(node_injection_Gbps(presets::dgx_b200) == Approx(3200.0).epsilon(1e-12));
    REQUIRE(in_GBps(presets::hgx_h200.node.intra.per_direction) == Approx(450.0).epsilon(1e-12));
}

TEST_CASE("Baskerville: 57 nodes of 4 A100, ONE HDR 200 Gbps NIC shared by the 4 GPUs") {
    // impact-of-gpu-networking-part2, Appendix A.
    constexpr cluster c = presets::baskerville;
    STATIC_REQUIRE(c.nodes == 57);
    STATIC_REQUIRE(c.node.gpus == 4);
    STATIC_REQUIRE(c.total_gpus() == 228);
    STATIC_REQUIRE(c.node.nics == 1);
    STATIC_REQUIRE(c.node.gpus_per_nic() == 4);
    REQUIRE(in_Gbps(c.node.inter.per_direction) == Approx(200.0).epsilon(1e-12));
    REQUIRE(c.node.inter.name == "ib-hdr-4x");
    // HGX A100 4-GPU board: NVLink3 point-to-point, 12 links per GPU (4 to each of 3 peers).
    REQUIRE(c.node.fabric == intra_fabric::mesh);
    REQUIRE(in_GBps(c.node.intra.per_direction) == Approx(300.0).epsilon(1e-12));
}

namespace {
void require_same(const cluster& a, const cluster& b) {
    INFO(a.name);
    CHECK(a.name == b.name);
    CHECK(a.nodes == b.nodes);
    CHECK(a.node.gpus == b.node.gpus);
    CHECK(a.domain_gpus() == b.domain_gpus());
    CHECK(a.node.accelerator == b.node.accelerator);
    CHECK(a.node.intra.name == b.node.intra.name);
    CHECK(a.node.intra.per_direction == b.node.intra.per_direction);
    CHECK(a.node.intra.latency == b.node.intra.latency);
    CHECK(a.node.fabric == b.node.fabric);
    CHECK(a.node.in_switch_reduction == b.node.in_switch_reduction);
    CHECK(a.node.pcie_p2p == b.node.pcie_p2p);
    CHECK(a.node.inter.name == b.node.inter.name);
    CHECK(a.node.inter.per_direction == b.node.inter.per_direction);
    CHECK(a.node.inter.latency == b.node.inter.latency);
    CHECK(a.node.nics == b.node.nics);
    CHECK(a.node.gpudirect_rdma == b.node.gpudirect_rdma);
    CHECK(a.oversubscription == b.oversubscription);
    CHECK(a.nodes_per_leaf == b.nodes_per_leaf);
    CHECK(a.rail_optimized == b.rail_optimized);
    CHECK(a.in_network_reduction == b.in_network_reduction);
    CHECK(a.source == b.source);
}
}  // namespace

TEST_CASE("every preset agrees with data/clusters/<name>.json, and every file is a preset") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(COMMSCALE_DATA_DIR) / "clusters";
    std::set<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") files.insert(e.path().stem().string());
    REQUIRE(files.size() == all_clusters().size());
    for (const cluster& c : all_clusters()) {
        const std::string file = (dir / (std::string(c.name) + ".json")).string();
        REQUIRE(files.count(std::string(c.name)) == 1);
        require_same(io::load_cluster_file(file), c);
    }
}
