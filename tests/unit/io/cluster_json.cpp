// Tests for include/commscale/io/cluster_json.hpp: the CLI.md schema reads, defaults are the
// documented ones, round trips are identities, and every bad input names its field path.
#include "catch_shim.hpp"

#include <filesystem>
#include <string>

#include <commscale/hardware/clusters.hpp>
#include <commscale/io/cluster_json.hpp>

using namespace commscale;
using nlohmann::json;

namespace {

/// The example of CLI.md "Topology flags", verbatim.
const char* const cli_md_example = R"({"name": "my-pod", "nodes": 4, "gpus_per_node": 8, "accelerator": "h100-sxm",
 "intra": {"link": "nvlink4", "fabric": "switch"},
 "inter": {"link": "ib-ndr-4x", "nics_per_node": 8, "oversubscription": 1.0}})";

/// The input_error thrown by reading `j`, or fails the test.
input_error error_of(const json& j) {
    try {
        (void)io::cluster_from_json(j);
    } catch (const input_error& e) {
        return e;
    }
    FAIL("no input_error for " << j.dump());
    return input_error("", "", "");
}

json example() { return json::parse(cli_md_example); }

}  // namespace

TEST_CASE("the CLI.md example reads with the documented defaults") {
    const cluster c = io::cluster_from_json(example());
    CHECK(c.name == "my-pod");
    CHECK(c.nodes == 4);
    CHECK(c.node.gpus == 8);
    CHECK(c.total_gpus() == 32);
    CHECK(c.node.accelerator == "h100-sxm");
    CHECK(c.node.intra.name == "nvlink4");
    CHECK(in_GBps(c.node.intra.per_direction) == Approx(450.0).epsilon(1e-12));  // 18 x 25 GB/s
    CHECK(c.node.fabric == intra_fabric::switched);
    CHECK(c.node.inter.name == "ib-ndr-4x");
    CHECK(in_Gbps(c.node.inter.per_direction) == Approx(400.0).epsilon(1e-12));  // NDR 4 x 100 Gbps
    CHECK(c.node.nics == 8);
    CHECK(c.oversubscription == 1.0);
    // Defaults (documented on cluster_from_json): NVLS from the link generation on a switched
    // fabric (NVLink4's third-generation NVSwitch reduces in the switch: H100 whitepaper, "NVLink
    // Switch System"), off for NVLink3 or a mesh
    CHECK(c.node.in_switch_reduction);
    {
        nlohmann::json j = example();
        j["intra"]["link"] = "nvlink3";
        j["accelerator"] = "a100-80gb-sxm";
        CHECK_FALSE(io::cluster_from_json(j).node.in_switch_reduction);
        j["intra"]["link"] = "nvlink4";
        j["accelerator"] = "h100-sxm";
        j["intra"]["fabric"] = "mesh";
        CHECK_FALSE(io::cluster_from_json(j).node.in_switch_reduction);
        j["intra"]["fabric"] = "switch";
        j["intra"]["in_switch_reduction"] = false;  // stated: overrides the hardware
        CHECK_FALSE(io::cluster_from_json(j).node.in_switch_reduction);
    }
    CHECK(c.node.pcie_p2p);
    CHECK(c.nodes_per_leaf == 32);
    CHECK(c.rail_optimized);
    CHECK_FALSE(c.in_network_reduction);
    CHECK(c.node.gpudirect_rdma);
    CHECK(io::same_comm_params(c.comm, comm_params{}));
}

TEST_CASE("nics_per_node defaults to one NIC per GPU, no inter section means a single node") {
    json j = example();
    j["inter"].erase("nics_per_node");
    CHECK(io::cluster_from_json(j).node.nics == 8);
    json single = example();
    single.erase("inter");
    single["nodes"] = 1;
    const cluster c = io::cluster_from_json(single);
    CHECK(c.node.nics == 0);
    CHECK_FALSE(io::cluster_to_json(c).contains("inter"));
    // Several nodes need a scale-out link.
    single["nodes"] = 2;
    const input_error e = error_of(single);
    CHECK(e.field() == "cluster.inter.nics_per_node");
}

TEST_CASE("round trips: cluster -> JSON -> cluster, and JSON -> cluster -> JSON") {
    for (const cluster& p : all_clusters()) {
        INFO(p.name);
        const json j = io::cluster_to_json(p);
        const cluster back = io::cluster_from_json(j);
        CHECK(io::cluster_to_json(back) == j);
        CHECK(back.node.intra.per_direction == p.node.intra.per_direction);
        CHECK(back.node.inter.per_direction == p.node.inter.per_direction);
        CHECK(back.node.nics == p.node.nics);
        CHECK(back.source == p.source);
    }
    // A link that is not in the catalog travels as an object.
    cluster custom = presets::baskerville;
    custom.node.inter.per_direction = bytes_per_second(20e9);
    custom.node.inter.name = "ib-hdr-measured";
    const json j = io::cluster_to_json(custom);
    REQUIRE(j["inter"]["link"].is_object());
    const cluster back = io::cluster_from_json(j);
    CHECK(back.node.inter.name == "ib-hdr-measured");
    CHECK(in_GBps(back.node.inter.per_direction) == Approx(20.0).epsilon(1e-12));
    CHECK(io::cluster_to_json(back) == j);
}

TEST_CASE("calibration carries comm_params and round-trips") {
    json j = example();
    j["calibration"] = {{"net", {{"efficiency", 0.62}, {"step_latency_us", {2.0, 4.5, 12.0}}}},
                        {"nvls_efficiency", 0.9},
                        {"base_latency_us", {5.0, 10.0, 7.0}}};
    const cluster c = io::cluster_from_json(j);
    CHECK(c.comm.net.efficiency == 0.62);
    CHECK(in_us(c.comm.net.step_latency[2]) == Approx(12.0).epsilon(1e-12));
    CHECK(in_us(c.comm.base_latency[0]) == Approx(5.0).epsilon(1e-12));
    CHECK(c.comm.nvls_efficiency == 0.9);
    // Fields not given keep the documented defaults.
    CHECK(c.comm.nvlink.efficiency == comm_params{}.nvlink.efficiency);
    const json out = io::cluster_to_json(c);
    REQUIRE(out.contains("calibration"));
    const cluster back = io::cluster_from_json(out);
    CHECK(back.comm.net.efficiency == 0.62);
    CHECK(in_us(back.comm.net.step_latency[1]) == Approx(4.5).epsilon(1e-12));
    // Errors name the path inside the calibration object.
    j["calibration"]["net"]["efficiency"] = -0.5;
    CHECK(error_of(j).field() == "cluster.calibration.net.efficiency");
    j["calibration"]["net"]["efficiency"] = 0.5;
    j["calibration"]["net"]["step_latency_us"] = {1.0, 2.0};
    CHECK(error_of(j).field() == "cluster.calibration.net.step_latency_us");
    j["calibration"]["net"]["step_latency_us"] = {1.0, "x", 2.0};
    CHECK(error_of(j).field() == "cluster.calibration.net.step_latency_us[1]");
    j["calibration"]["net"].erase("step_latency_us");
    j["calibration"]["net"]["efficency"] = 0.7;
    const input_error e = error_of(j);
    CHECK(e.field() == "cluster.calibration.net.efficency");
    CHECK_THAT(e.expected(), Catch::Matchers::Contains("efficiency"));
}

TEST_CASE("errors name the field path, the value and what is accepted") {
    SECTION("missing") {
        json j = example();
        j.erase("gpus_per_node");
        const input_error e = error_of(j);
        CHECK(e.field() == "cluster.gpus_per_node");
        CHECK_THAT(e.value(), Catch::Matchers::Contains("missing"));
        j = example();
        j["intra"].erase("link");
        CHECK(error_of(j).field() == "cluster.intra.link");
        j = example();
        j.erase("intra");
        CHECK(error_of(j).field() == "cluster.intra");
    }
    SECTION("negative and zero") {
        json j = example();
        j["inter"]["nics_per_node"] = -1;
        const input_error e = error_of(j);
        CHECK(e.field() == "cluster.inter.nics_per_node");
        CHECK(e.value() == "-1");
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("[0, 1024]"));
        j = example();
        j["nodes"] = 0;
        CHECK(error_of(j).field() == "cluster.nodes");
        j = example();
        j["inter"]["oversubscription"] = 0.5;  // less than 1:1 is not a ratio of oversubscription
        CHECK(error_of(j).field() == "cluster.inter.oversubscription");
    }
    SECTION("NaN and wrong types") {
        json j = example();
        j["inter"]["oversubscription"] = "nan";
        const input_error e = error_of(j);
        CHECK(e.field() == "cluster.inter.oversubscription");
        CHECK(e.value() == "nan");
        j = example();
        j["nodes"] = 2.5;
        CHECK(error_of(j).field() == "cluster.nodes");
        j = example();
        j["nodes"] = "four";
        CHECK(error_of(j).field() == "cluster.nodes");
        j = example();
        j["intra"] = "nvlink4";
        CHECK(error_of(j).field() == "cluster.intra");
        CHECK_THROWS_AS(io::cluster_from_json(json::array()), input_error);
    }
    SECTION("unknown key, with a suggestion") {
        json j = example();
        j["gpus_per_nod"] = 8;
        input_error e = error_of(j);
        CHECK(e.field() == "cluster.gpus_per_nod");
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("gpus_per_node"));
        j = example();
        j["inter"]["nic_per_node"] = 8;
        e = error_of(j);
        CHECK(e.field() == "cluster.inter.nic_per_node");
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("nics_per_node"));
    }
    SECTION("unknown link, accelerator and fabric names, with suggestions") {
        json j = example();
        j["inter"]["link"] = "ib-nrd-4x";
        input_error e = error_of(j);
        CHECK(e.field() == "cluster.inter.link");
        CHECK_THAT(e.value(), Catch::Matchers::Contains("ib-nrd-4x"));
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("ib-ndr-4x"));
        j = example();
        j["accelerator"] = "h100-sx";
        e = error_of(j);
        CHECK(e.field() == "cluster.accelerator");
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("h100-sxm"));
        j = example();
        j["intra"]["fabric"] = "nvswitch";
        e = error_of(j);
        CHECK(e.field() == "cluster.intra.fabric");
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("switch"));
    }
    SECTION("a link object with a bad field names the nested path") {
        json j = example();
        j["inter"]["link"] = {{"name", "my-nic"}, {"kind", "scale_out"}, {"per_direction_GBps", -5}};
        CHECK(error_of(j).field() == "cluster.inter.link.per_direction_GBps");
    }
}

TEST_CASE("load_cluster_file reports the file, the field path, and missing files") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "commscale_cluster_json_test";
    fs::create_directories(dir);
    const std::string good = (dir / "pod.json").string(), bad = (dir / "bad.json").string();
    io::write_file_atomic(good, cli_md_example);
    CHECK(io::load_cluster_file(good).total_gpus() == 32);
    json j = example();
    j["inter"]["link"] = "ib-hdr-4";
    io::write_file_atomic(bad, j.dump());
    try {
        (void)io::load_cluster_file(bad, "--cluster");
        FAIL("no exception");
    } catch (const input_error& e) {
        CHECK(e.field() == bad + ": cluster.inter.link");
        CHECK_THAT(e.expected(), Catch::Matchers::Contains("ib-hdr-4x"));
    }
    io::write_file_atomic(bad, "{\"nodes\": 4,");
    CHECK_THROWS_AS(io::load_cluster_file(bad), input_error);
    try {
        (void)io::load_cluster_file((dir / "missing.json").string(), "--cluster");
        FAIL("no exception");
    } catch (const input_error& e) {
        CHECK(e.field() == "--cluster");
    }
    fs::remove_all(dir);
}
