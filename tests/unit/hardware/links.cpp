// The interconnect catalog against the published figures of REFERENCE.md "Links"
// (ml-engineering-networking, gpu-fabrics-for-genai, distributed-training-lecture) and the vendors'
// datasheets. Each expected value is the document's number, not the code's output.
#include <cmath>
#include <set>
#include <string>

#include <commscale/hardware/links.hpp>

#include "catch_shim.hpp"

using namespace commscale;
using namespace commscale::literals;

namespace {
double gbps(byte_rate r) { return in_Gbps(r); }
double gBps(byte_rate r) { return in_GBps(r); }
}  // namespace

TEST_CASE("PCIe x16 per direction and duplex match ml-engineering's table within its rounding") {
    // Document: Gen4 31/62, Gen5 63/126, Gen6 121/241, Gen7 242/484 GB/s; per lane ~2.0/~4.0/~7.5/~15.0.
    // The catalog derives them: GT/s x payload efficiency / 8 x 16 lanes.
    // Rounding: the document truncates the per-direction figure (31.5 -> 31) and its duplex column
    // doubles the truncated value (62) or is one low (Gen6 241 vs 2 x 121 = 242). Tolerance: the
    // per-direction figure truncates to the document's integer; duplex and per-lane within 2%.
    CHECK(pcie<4, 16>.per_direction.value() == Approx(16.0 * 16e9 * 128.0 / 130.0 / 8.0).epsilon(1e-12));
    CHECK(std::floor(gBps(pcie<4, 16>.per_direction)) == 31.0);
    CHECK(std::floor(gBps(pcie<5, 16>.per_direction)) == 63.0);
    CHECK(std::floor(gBps(pcie<6, 16>.per_direction)) == 121.0);
    CHECK(std::floor(gBps(pcie<7, 16>.per_direction)) == 242.0);
    CHECK(gBps(pcie<4, 16>.duplex().both_directions) == Approx(62.0).epsilon(0.02));
    CHECK(gBps(pcie<5, 16>.duplex().both_directions) == Approx(126.0).epsilon(0.02));
    CHECK(gBps(pcie<6, 16>.duplex().both_directions) == Approx(241.0).epsilon(0.02));
    CHECK(gBps(pcie<7, 16>.duplex().both_directions) == Approx(484.0).epsilon(0.02));
    CHECK(gBps(pcie<4, 1>.per_lane) == Approx(2.0).epsilon(0.02));
    CHECK(gBps(pcie<5, 1>.per_lane) == Approx(4.0).epsilon(0.02));
    CHECK(gBps(pcie<6, 1>.per_lane) == Approx(7.5).epsilon(0.02));
    CHECK(gBps(pcie<7, 1>.per_lane) == Approx(15.0).epsilon(0.02));
    // Gen6/7 FLIT: 242 payload bytes per 256-byte FLIT makes x16 exactly 121 / 242 GB/s.
    CHECK(gBps(pcie<6, 16>.per_direction) == Approx(121.0).epsilon(1e-12));
    CHECK(gBps(pcie<7, 16>.per_direction) == Approx(242.0).epsilon(1e-12));
    CHECK(pcie<5, 16>.encoding == line_encoding::b128b130b);
    CHECK(pcie<6, 16>.encoding == line_encoding::flit);
}

TEST_CASE("PCIe widths scale linearly and every lane count is the slot width") {
    CHECK(pcie<5, 8>.per_direction == pcie<5, 16>.per_direction / 2.0);
    CHECK(pcie<5, 1>.per_direction == pcie<5, 1>.per_lane);
    CHECK(pcie<4, 4>.lanes == 4);
    // Each generation doubles the previous one (16 -> 32 -> 64 -> 128 GT/s); 4 -> 5 exactly.
    CHECK(pcie<5, 16>.per_direction == 2.0 * pcie<4, 16>.per_direction);
    CHECK(pcie<7, 16>.per_direction == 2.0 * pcie<6, 16>.per_direction);
}

TEST_CASE("the document's cross-comparison table lists PCIe duplex figures as unidirectional") {
    // ml-engineering-networking's intra-node table gives "PCIe 5 126.0" and "PCIe 4 62.0" under the
    // unidirectional column; those are the duplex figures (x16: 63 and 31.5 per direction).
    const double pcie5_in_table = 126.0, pcie4_in_table = 62.0;
    CHECK(gBps(pcie<5, 16>.per_direction) != Approx(pcie5_in_table).epsilon(0.1));
    CHECK(gBps(pcie<5, 16>.duplex().both_directions) == Approx(pcie5_in_table).epsilon(0.01));
    CHECK(gBps(pcie<4, 16>.per_direction) != Approx(pcie4_in_table).epsilon(0.1));
    CHECK(gBps(pcie<4, 16>.duplex().both_directions) == Approx(pcie4_in_table).epsilon(0.02));
    // Its "NVLink is 7x faster than PCIe" on Hopper holds per direction: 450 / 63 = 7.1.
    CHECK(nvlink<4>.per_direction / pcie<5, 16>.per_direction == Approx(7.0).epsilon(0.03));
}

TEST_CASE("NVLink: 25 GB/s per link per direction, 6/12/18 links -> 150/300/450 (300/600/900 duplex)") {
    STATIC_REQUIRE(nvlink_bundle<2, 1>.per_direction == 25_GBps);
    STATIC_REQUIRE(nvlink_bundle<3, 1>.per_direction == 25_GBps);
    STATIC_REQUIRE(nvlink_bundle<4, 1>.per_direction == 25_GBps);
    // NVLink3 is the "4 lanes x 6.25 GB/s" of the document (A100 whitepaper: 4 pairs x 50 Gbit/s).
    // The document claims the same lane layout for NVLink 2 and 4; NVIDIA's whitepapers give 8 x 25
    // Gbit/s (V100) and 2 x 100 Gbit/s (H100) for the same 25 GB/s per link.
    STATIC_REQUIRE(nvlink<3>.lanes == 4);
    STATIC_REQUIRE(nvlink<3>.per_lane == 6.25_GBps);
    STATIC_REQUIRE(nvlink<2>.lanes == 8 && nvlink<4>.lanes == 2);
    STATIC_REQUIRE(nvlink<2>.links == 6 && nvlink<3>.links == 12 && nvlink<4>.links == 18);
    STATIC_REQUIRE(nvlink<2>.per_direction == 150_GBps);
    STATIC_REQUIRE(nvlink<3>.per_direction == 300_GBps);
    STATIC_REQUIRE(nvlink<4>.per_direction == 450_GBps);
    STATIC_REQUIRE(nvlink<2>.duplex().both_directions == 300_GBps);
    STATIC_REQUIRE(nvlink<3>.duplex().both_directions == 600_GBps);
    STATIC_REQUIRE(nvlink<4>.duplex().both_directions == 900_GBps);
    // NVLink 5 (Blackwell datasheet): 18 links x 50 GB/s = 900 per direction, 1.8 TB/s total.
    STATIC_REQUIRE(nvlink_bundle<5, 1>.per_direction == 50_GBps);
    STATIC_REQUIRE(nvlink<5>.per_direction == 900_GBps);
    STATIC_REQUIRE(nvlink<5>.duplex().both_directions == 1.8_TBps);
}

TEST_CASE("NVLink bundles as nvidia-smi topo -m prints them (NV2, NV12, NV18)") {
    // The document's dual-GPU desktop shows "NV2": two bonded NVLinks = 50 GB/s per direction.
    CHECK(gBps(nvlink_bundle<3, 2>.per_direction) == 50.0);
    CHECK(nvlink_bundle<3, 12>.per_direction == nvlink<3>.per_direction);  // A100 "NV12"
    CHECK(nvlink_bundle<4, 18>.per_direction == nvlink<4>.per_direction);  // H100 "NV18"
    CHECK(find_link("nvlink3-nv12")->per_direction == 300_GBps);
    CHECK(find_link("nvlink4-nv18")->per_direction == 450_GBps);
    CHECK(link_by_name("nvlink4-nv2").links == 2);
    CHECK(link_by_name("nvlink4-nv2").name == "nvlink4-nv2");
}

TEST_CASE("DGX H100 NVLink network: 72 NVLink4 links = 3.6 TB/s duplex") {
    // 72 links x 25 GB/s x 2 directions; equivalently 4 x the 0.9 TB/s of one GPU's 18 links.
    const duplex_rate dgx = duplex(72.0 * nvlink_bundle<4, 1>.per_direction * 2.0);
    CHECK(dgx.both_directions == 3.6_TBps);
    CHECK(4.0 * nvlink<4>.duplex().both_directions == 3.6_TBps);
}

TEST_CASE("xGMI: MI250X 7 x 50 = 350 (700 duplex), MI300X 7 x 64 = 448 (896)") {
    STATIC_REQUIRE(xgmi_mi250x_link.per_direction == 50_GBps);
    STATIC_REQUIRE(xgmi_mi250x.links == 7);
    STATIC_REQUIRE(xgmi_mi250x.per_direction == 350_GBps);
    STATIC_REQUIRE(xgmi_mi250x.duplex().both_directions == 700_GBps);
    STATIC_REQUIRE(xgmi_mi300x_link.per_direction == 64_GBps);
    STATIC_REQUIRE(xgmi_mi300x.per_direction == 448_GBps);
    STATIC_REQUIRE(xgmi_mi300x.duplex().both_directions == 896_GBps);
}

TEST_CASE("Gaudi2: 21 x 100 GbE = 2.1 Tbps = 262.5 GB/s, 24 x 100 GbE per node = 2.4 Tbps") {
    STATIC_REQUIRE(gaudi2_scaleup.links == 21);
    CHECK(gbps(gaudi2_scaleup.per_direction) == Approx(2100.0).epsilon(1e-12));
    CHECK(gBps(gaudi2_scaleup.per_direction) == Approx(262.5).epsilon(1e-12));
    // gaudi2-scaleout is one card's 3 ports; an 8-card node has 24 ports = 2.4 Tbps.
    CHECK(gbps(8.0 * gaudi2_scaleout.per_direction) == Approx(2400.0).epsilon(1e-12));
    CHECK(gbps(gaudi2_scaleout_node.per_direction) == Approx(2400.0).epsilon(1e-12));
    CHECK(gaudi2_scaleout_node.links == 24);
}

TEST_CASE("InfiniBand: per-lane 25/50/100/200/400 Gbps, 1x/4x/8x/12x ports, EDR/HDR latency") {
    CHECK(gbps(infiniband<ib_rate::edr, 1>.per_direction) == Approx(25.0));
    CHECK(gbps(infiniband<ib_rate::hdr, 1>.per_direction) == Approx(50.0));
    CHECK(gbps(infiniband<ib_rate::ndr, 1>.per_direction) == Approx(100.0));
    CHECK(gbps(infiniband<ib_rate::xdr, 1>.per_direction) == Approx(200.0));
    CHECK(gbps(infiniband<ib_rate::gdr, 1>.per_direction) == Approx(400.0));
    STATIC_REQUIRE(infiniband<ib_rate::ndr, 4>.per_direction == 400_Gbps);
    STATIC_REQUIRE(infiniband<ib_rate::gdr, 8>.per_direction == 3200_Gbps);
    STATIC_REQUIRE(infiniband<ib_rate::hdr, 4>.per_direction == 200_Gbps);
    STATIC_REQUIRE(infiniband<ib_rate::edr, 12>.per_direction == 300_Gbps);
    // NDR 4x = 400 Gbps = 50 GB/s, the NIC of distributed-training-lecture's parameter-server example.
    CHECK(gBps(infiniband<ib_rate::ndr, 4>.per_direction) == Approx(50.0));
    REQUIRE(infiniband<ib_rate::edr, 4>.latency.has_value());
    REQUIRE(infiniband<ib_rate::hdr, 4>.latency.has_value());
    CHECK(in_us(*infiniband<ib_rate::edr, 4>.latency) == Approx(0.5));
    CHECK(in_us(*infiniband<ib_rate::hdr, 4>.latency) == Approx(0.6));
    CHECK_FALSE(infiniband<ib_rate::ndr, 4>.latency.has_value());
    CHECK_FALSE(infiniband<ib_rate::xdr, 4>.latency.has_value());
    CHECK_FALSE(infiniband<ib_rate::gdr, 4>.latency.has_value());
    // Every catalog port is width x lane rate.
    for (const char* rate : {"edr", "hdr", "ndr", "xdr", "gdr"})
        for (int w : {1, 4, 8, 12}) {
            const commscale::link l = link_by_name(std::string("ib-") + rate + "-" + std::to_string(w) + "x");
            CHECK(l.per_direction == static_cast<double>(w) * l.per_lane);
            CHECK(l.lanes == w);
        }
}

TEST_CASE("EFA: one 100 Gbps interface, p4d 4 -> 400 Gbps, p5 32 -> 3200 Gbps") {
    CHECK(gbps(efa_v1.per_direction) == Approx(100.0));
    CHECK(gbps(4.0 * efa_v1.per_direction) == Approx(400.0));
    CHECK(gbps(32.0 * efa_v2.per_direction) == Approx(3200.0));
    CHECK(efa_v1.rdma);
    CHECK_FALSE(efa_v2.latency.has_value());
    // Measured ~340 Gbps all-reduce on p4d is 85% of the 400 Gbps node figure, near the ~80% default.
    CHECK(340.0 / gbps(4.0 * efa_v1.per_direction) == Approx(default_link_efficiency).margin(0.06));
}

TEST_CASE("Slingshot 4 x 200 = 800 Gbps, TCPX 4 x 200 = 800 Gbps, TCPXO 8 x 200, OPA 100/200") {
    CHECK(gbps(4.0 * slingshot_200.per_direction) == Approx(800.0));
    CHECK(gbps(4.0 * tcpx.per_direction) == Approx(800.0));
    CHECK(gbps(8.0 * tcpxo.per_direction) == Approx(1600.0));
    CHECK(gbps(opa_100.per_direction) == Approx(100.0));
    CHECK(gbps(opa_200.per_direction) == Approx(200.0));
    // One OPA installation measured 135 Gbps of 200 (68%).
    CHECK(135.0 / gbps(opa_200.per_direction) == Approx(0.675));
    CHECK_FALSE(tcpx.rdma);
    CHECK_FALSE(eth_400.rdma);
    CHECK(roce_400.rdma);
    CHECK(gbps(roce_800.per_direction) == Approx(800.0));
    CHECK(gbps(eth_100.per_direction) == Approx(100.0));
    // IEEE 802.3df 800GBASE: 8 lanes x 100 Gbit/s; plain Ethernet, no RDMA
    CHECK(gbps(eth_800.per_direction) == Approx(800.0));
    CHECK(eth_800.lanes == 8);
    CHECK_FALSE(eth_800.rdma);
}

TEST_CASE("DGX H100: 8 x 400 Gbps NICs, the document's 8 x 200 Gbps '1.6 Gbps' is 1.6 Tbps") {
    CHECK(gbps(8.0 * infiniband<ib_rate::ndr, 4>.per_direction) == Approx(3200.0));
    // ml-engineering-networking writes "8x 200Gbps ... 1.6 Gbps"; 8 x 200 Gbps = 1600 Gbps = 1.6 Tbps.
    const byte_rate eight_hdr = 8.0 * infiniband<ib_rate::hdr, 4>.per_direction;
    CHECK(eight_hdr == 1.6_Tbps);
    CHECK(gbps(eight_hdr) != Approx(1.6));
}

TEST_CASE("applications see ~80% of the advertised per-direction figure") {
    // 400 Gbps advertised -> ~320 Gbps in practice.
    CHECK(gbps(default_link_efficiency * infiniband<ib_rate::ndr, 4>.per_direction) == Approx(320.0));
    // DGX A100: 200 Gbps ConnectX-6 typically measured at 160 Gbps.
    CHECK(gbps(default_link_efficiency * roce_200.per_direction) == Approx(160.0));
    // Measured fractions of the per-direction peak: p2p A100 274/300 (91%), H100 376/450 (83%),
    // nccl-tests A100 all-reduce busbw 234.9/300 (78%).
    CHECK(274.0 / gBps(nvlink<3>.per_direction) == Approx(0.913).margin(0.001));
    CHECK(376.0 / gBps(nvlink<4>.per_direction) == Approx(0.836).margin(0.001));
    CHECK(234.9 / gBps(nvlink<3>.per_direction) == Approx(0.783).margin(0.001));
}

TEST_CASE("duplex trap: A100 busbw 235 GB/s is 40% of the 600 duplex but 78% per direction") {
    CHECK(235.0 / gBps(nvlink<3>.duplex().both_directions) == Approx(0.39).margin(0.01));
    CHECK(235.0 / gBps(nvlink<3>.per_direction) == Approx(0.78).margin(0.01));
    // A duplex figure enters only through duplex(): 600 duplex -> 300 per direction.
    CHECK(duplex(600_GBps).per_direction() == nvlink<3>.per_direction);
}

TEST_CASE("H100: 18 NVLink4 x 200 Gbps = 3.6 Tbps per direction, 9x a 400 Gbps NIC") {
    CHECK(gbps(nvlink_bundle<4, 1>.per_direction) == Approx(200.0));
    CHECK(gbps(nvlink<4>.per_direction) == Approx(3600.0));
    CHECK(nvlink<4>.per_direction / infiniband<ib_rate::ndr, 4>.per_direction == Approx(9.0));
}

TEST_CASE("A100 NVLink 300 per direction vs A800 200, NVLink must be >= 1.75x the network") {
    // distributed-training-lecture: A100 600 GB/s duplex vs A800 400.
    CHECK(link_by_name("nvlink3-nv8").duplex().both_directions == 400_GBps);
    CHECK(link_by_name("nvlink3-nv8").per_direction == 200_GBps);
}

TEST_CASE("runtime names of CLI.md resolve to the compile-time values") {
    CHECK(link_by_name("nvlink2").per_direction == nvlink<2>.per_direction);
    CHECK(link_by_name("nvlink5").per_direction == nvlink<5>.per_direction);
    CHECK(link_by_name("pcie4-x16").per_direction == pcie<4, 16>.per_direction);
    CHECK(link_by_name("ib-ndr-4x").per_direction == infiniband<ib_rate::ndr, 4>.per_direction);
    for (const char* n : {"xgmi-mi250x", "xgmi-mi300x", "gaudi2-scaleup", "gaudi2-scaleout", "efa-v1", "efa-v2",
                          "roce-100", "roce-200", "roce-400", "roce-800", "eth-100", "eth-200", "eth-400", "eth-800",
                          "slingshot-200", "opa-100", "opa-200", "tcpx", "tcpxo", "nvlink3-nv12"})
        CHECK(find_link(n).has_value());
    for (int g = 4; g <= 7; ++g)
        for (int w : {1, 2, 4, 8, 16})
            CHECK(find_link("pcie" + std::to_string(g) + "-x" + std::to_string(w)).has_value());
    std::set<std::string_view> seen;
    for (const commscale::link& l : all_links()) {
        CHECK(seen.insert(l.name).second);  // names are unique
        CHECK(l.per_direction.value() > 0);
        CHECK(!l.source.empty());
        // per direction = links x lanes x per-lane rate, for every entry
        CHECK(l.per_direction.value() ==
              Approx(static_cast<double>(l.links * l.lanes) * l.per_lane.value()).epsilon(1e-12));
        CHECK(find_link(l.name)->per_direction == l.per_direction);
    }
}

TEST_CASE("an unknown link name is an input_error that suggests the closest names") {
    CHECK_FALSE(find_link("nvlink9").has_value());
    CHECK_FALSE(find_link("").has_value());
    CHECK_THROWS_AS(link_by_name("nvlnk4"), input_error);
    CHECK_THROWS_WITH(link_by_name("nvlnk4"), Catch::Matchers::Contains("nvlink4") &&
                                                  Catch::Matchers::Contains("did you mean"));
    CHECK_THROWS_WITH(link_by_name("ib-ndr-5x", "cluster.inter.link"),
                      Catch::Matchers::Contains("cluster.inter.link") && Catch::Matchers::Contains("ib-ndr-4x"));
}

TEST_CASE("name helpers spell the JSON/CLI vocabulary") {
    STATIC_REQUIRE(to_string(link_kind::scale_out) == "scale_out");
    STATIC_REQUIRE(to_string(link_family::tcpx) == "tcpx");
    STATIC_REQUIRE(to_string(line_encoding::b128b130b) == "128b/130b");
    STATIC_REQUIRE(to_string(ib_rate::gdr) == "gdr");
}

TEST_CASE("in-switch reduction is a property of the NVLink generation, not of the link's name") {
    // NVLink SHARP arrived with the third-generation NVSwitch of NVLink4 systems (H100
    // whitepaper) and stays with Blackwell's NVLink Switch; V100/A100 NVSwitches do not reduce
    CHECK(nvlink_switch_reduces(nvlink<4>));
    CHECK(nvlink_switch_reduces(nvlink<5>));
    CHECK(nvlink_switch_reduces(nvlink_bundle<4, 12>));
    CHECK_FALSE(nvlink_switch_reduces(nvlink<3>));
    CHECK_FALSE(nvlink_switch_reduces(nvlink<2>));
    CHECK_FALSE(nvlink_switch_reduces(link_by_name("pcie5-x16")));
    CHECK_FALSE(nvlink_switch_reduces(link_by_name("ib-ndr-4x")));
    commscale::link renamed = nvlink<4>;
    renamed.name = "my-hopper-fabric";
    CHECK(nvlink_switch_reduces(renamed));
    STATIC_REQUIRE(nvlink_switch_reduces(nvlink<5>));
}
