// JSON for links and accelerators: the CLI.md keys, round trips, validation errors that name the
// field path, and data/links.json and data/accelerators.json through the readers.
#include <string>

#include <commscale/io/file.hpp>
#include <commscale/io/hardware_json.hpp>

#include "catch_shim.hpp"

using namespace commscale;
using namespace commscale::literals;
using nlohmann::json;
using Catch::Matchers::WithinRel;

namespace {
commscale::link read_link(const std::string& text) { return link_from_json(json::parse(text), "cluster.inter.link"); }
accelerator read_acc(const std::string& text) { return accelerator_from_json(json::parse(text), "accelerator"); }
json data_file(const std::string& name) {
    return io::parse_json(io::read_file(std::string(COMMSCALE_DATA_DIR) + "/" + name), name);
}
}  // namespace

TEST_CASE("link JSON has the CLI.md keys: nvlink4 is 450 per direction, 900 duplex, latency null") {
    const json j = nvlink<4>;
    CHECK(j.at("name") == "nvlink4");
    CHECK(j.at("kind") == "scale_up");
    CHECK(j.at("per_direction_GBps").get<double>() == 450.0);
    CHECK(j.at("duplex_GBps").get<double>() == 900.0);
    CHECK(j.at("latency_us").is_null());
    CHECK(j.at("lanes") == 2);
    CHECK(j.at("links") == 18);
    CHECK(j.at("source").get<std::string>().find("H100") != std::string::npos);
    const json hdr = infiniband<ib_rate::hdr, 4>;
    CHECK(hdr.at("latency_us").get<double>() == Approx(0.6));
    CHECK(hdr.at("per_direction_GBps").get<double>() == Approx(25.0));  // 200 Gbps
}

TEST_CASE("accelerator JSON has the CLI.md keys, null where a dtype is unsupported") {
    const json j = a100_80gb_sxm;
    CHECK(j.at("name") == "a100-80gb-sxm");
    CHECK(j.at("memory_GiB").get<double>() == 80.0);
    CHECK(j.at("memory_bandwidth_GBps").get<double>() == Approx(2039.0));
    CHECK(j.at("peak_tflops").at("bf16").get<double>() == Approx(312.0));
    CHECK(j.at("peak_tflops").at("fp8").is_null());
    CHECK(j.at("scale_up_link") == "nvlink3");
    CHECK(j.contains("source"));
}

TEST_CASE("every catalog entry survives a JSON round trip") {
    for (const commscale::link& l : all_links()) {
        const commscale::link back = json(l).get<commscale::link>();
        CHECK(back.name == l.name);
        CHECK(back.kind == l.kind);
        CHECK(back.family == l.family);
        CHECK(back.rdma == l.rdma);
        CHECK(back.per_direction == l.per_direction);
        CHECK(back.per_lane == l.per_lane);
        CHECK(back.lanes == l.lanes);
        CHECK(back.links == l.links);
        CHECK(back.encoding == l.encoding);
        CHECK(back.latency == l.latency);
        CHECK(back.source == l.source);
    }
    for (const accelerator& a : all_accelerators()) {
        // under a name the catalog does not know, so that every field comes from the JSON
        json j = a;
        j["name"] = "json-" + std::string(a.name);
        const accelerator back = j.get<accelerator>();
        CHECK(back.memory == a.memory);
        CHECK(back.memory_bandwidth == a.memory_bandwidth);
        CHECK(back.dense_peak == a.dense_peak);
        CHECK(back.scale_up_link == a.scale_up_link);
        CHECK(back.compute_efficiency == a.compute_efficiency);
        CHECK(back.power == a.power);
        CHECK(back.compute_units == a.compute_units);
        CHECK(back.fp8_mamf_ratio == a.fp8_mamf_ratio);
        CHECK(back.fp4_gemm_ratio == a.fp4_gemm_ratio);
        CHECK(back.mxfp8_gemm_time_ratio == a.mxfp8_gemm_time_ratio);
        CHECK(back.exponentials_per_bf16_flop == a.exponentials_per_bf16_flop);
        CHECK_THAT(back.host_bandwidth.value(), WithinRel(a.host_bandwidth.value(), 1e-12));
        CHECK(back.non_tn_fp8_gemm == a.non_tn_fp8_gemm);
    }
}

TEST_CASE("a link may be a catalog name, a catalog entry with overrides, or a full object") {
    CHECK(link_from_json(json("ib-ndr-4x"), "inter.link").per_direction == 400_Gbps);
    // Calibrated HDR: same port, measured latency and bandwidth.
    const commscale::link cal = read_link(R"({"name": "ib-hdr-4x", "latency_us": 2.1, "per_direction": "190Gbps"})");
    CHECK(cal.per_direction == 190_Gbps);
    CHECK(in_us(*cal.latency) == Approx(2.1));
    CHECK(cal.lanes == 4);
    // A new link: a duplex figure enters only through a key that says so, and is halved.
    const commscale::link mine = read_link(R"({"name": "my-fabric", "kind": "scale_out", "duplex_GBps": 100,
                                               "latency": "3us", "source": "lab measurement"})");
    CHECK(mine.name == "my-fabric");
    CHECK(mine.per_direction == 50_GBps);
    CHECK(mine.per_lane == 50_GBps);
    CHECK(mine.rdma);
    CHECK(mine.source == "lab measurement");
    CHECK(in_us(*mine.latency) == Approx(3.0));
    const commscale::link tcp = read_link(R"({"name": "lan", "kind": "scale_out", "family": "ethernet",
                                              "per_direction_GBps": 1.25})");
    CHECK_FALSE(tcp.rdma);
    CHECK_FALSE(tcp.latency.has_value());
}

TEST_CASE("bad link JSON names the field path, the value and what is accepted") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(link_from_json(json("nvlnk4"), "cluster.intra.link"),
                      Contains("cluster.intra.link") && Contains("nvlink4"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "latncy_us": 1})"),
                      Contains("cluster.inter.link.latncy_us") && Contains("latency_us"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out"})"),
                      Contains("cluster.inter.link.per_direction_GBps") && Contains("missing"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "per_direction_GBps": 50})"), Contains("cluster.inter.link.kind"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "sideways", "per_direction_GBps": 50})"),
                      Contains("cluster.inter.link.kind") && Contains("scale_out"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": -5})"),
                      Contains("per_direction_GBps") && Contains("-5"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 0})"),
                      Contains("per_direction_GBps") && Contains("at least 0.001 GB/s"));
    // absurdly slow (a unit slip): 1e-308 GB/s would make every collective time overflow
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 1e-308})"),
                      Contains("per_direction_GBps") && Contains("1e-308") && Contains("at least 0.001 GB/s"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction": "1bps"})"),
                      Contains("per_direction") && Contains("at least 0.001 GB/s"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 25, "latency": "2s"})"),
                      Contains("latency") && Contains("at most 1 s"));
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": "nan"})"),
                      Contains("per_direction_GBps") && Contains("nan"));
    // A size where a rate is expected is an error, not a guess.
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction": "400GB"})"),
                      Contains("cluster.inter.link.per_direction") && Contains("rate"));
    // Per-direction and duplex that disagree (the duplex-as-unidirectional mistake) are rejected.
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 126, "duplex_GBps": 126})"),
                      Contains("duplex_GBps") && Contains("252"));
    CHECK_THROWS_AS(read_link(R"({"name": "", "kind": "scale_out", "per_direction_GBps": 1})"), input_error);
    CHECK_THROWS_AS(read_link(R"([1, 2])"), input_error);
    CHECK_THROWS_WITH(read_link(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 1, "lanes": 0})"),
                      Contains("cluster.inter.link.lanes"));
}

TEST_CASE("accelerator JSON: names, overrides, new parts and errors") {
    using Catch::Matchers::Contains;
    CHECK(accelerator_from_json(json("h100-sxm"), "accelerator").peak(dtype::fp8) == 1979_TFLOPS);
    const accelerator slow = read_acc(R"({"name": "h100-sxm", "compute_efficiency": 0.6})");
    CHECK(slow.compute_efficiency == 0.6);
    CHECK(slow.peak(dtype::bf16) == h100_sxm.peak(dtype::bf16));
    const accelerator mine = read_acc(R"({"name": "my-gpu", "memory": "24GiB", "memory_bandwidth": "1TB/s",
        "peak_tflops": {"bf16": 100, "fp8": null}, "scale_up_link": "pcie4-x16"})");
    CHECK(mine.memory == 24_GiB);
    CHECK(mine.memory_bandwidth == 1_TBps);
    CHECK(mine.peak(dtype::bf16) == 100_TFLOPS);
    CHECK_FALSE(mine.peak(dtype::fp8).has_value());
    CHECK(mine.compute_efficiency == default_compute_efficiency);
    // where the efficiency comes from: a new part's default is assumed, a given figure measured,
    // a catalog entry keeps its own unless overridden; the key round-trips and bad spellings name it
    CHECK(mine.compute_efficiency_basis == efficiency_basis::assumed);
    CHECK(slow.compute_efficiency_basis == efficiency_basis::measured);
    CHECK(read_acc(R"({"name": "gb300"})").compute_efficiency_basis == efficiency_basis::fitted);
    CHECK(read_acc(R"({"name": "gb300", "compute_efficiency": 0.85})").compute_efficiency_basis == efficiency_basis::measured);
    CHECK(read_acc(R"({"name": "gb300", "compute_efficiency": 0.85, "compute_efficiency_basis": "fitted"})")
              .compute_efficiency_basis == efficiency_basis::fitted);
    CHECK(read_acc(R"({"name": "h100-sxm", "compute_efficiency_basis": "assumed"})").compute_efficiency_basis ==
          efficiency_basis::assumed);
    CHECK(accelerator_to_json(gb300)["compute_efficiency_basis"] == "fitted");
    CHECK(accelerator_from_json(accelerator_to_json(l40s), "accelerator").compute_efficiency_basis == efficiency_basis::assumed);
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "compute_efficiency_basis": "guessed"})"),
                      Contains("accelerator.compute_efficiency_basis") && Contains("guessed") && Contains("measured"));
    // not known for a new part: no wave quantization, the BF16 matmul efficiency for FP8, the
    // exponentials not priced apart
    CHECK(mine.compute_units == 0);
    CHECK(mine.fp8_mamf_ratio == 1.0);
    CHECK(mine.fp4_gemm_ratio == 1.0);
    CHECK(mine.exponentials_per_bf16_flop == 0.0);
    CHECK(mine.host_bandwidth.value() == pcie<5, 16>.per_direction.value());  // PCIe Gen5 x16
    CHECK(read_acc(R"({"name": "gb200", "host_bandwidth_GBps": 450})").host_bandwidth.value() == 450e9);
    // FP8 GEMMs in every layout: Blackwell's data-center parts (compute capability 10.x), not Hopper
    CHECK(!mine.non_tn_fp8_gemm);
    CHECK(b200.non_tn_fp8_gemm);
    CHECK(gb300.non_tn_fp8_gemm);
    CHECK(!h100_sxm.non_tn_fp8_gemm);
    CHECK(read_acc(R"({"name": "h100-sxm", "non_tn_fp8_gemm": true})").non_tn_fp8_gemm);
    CHECK_THROWS_WITH(read_acc(R"({"name": "b200", "non_tn_fp8_gemm": 1})"), Contains("accelerator.non_tn_fp8_gemm"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "host_bandwidth_GBps": 0})"),
                      Contains("accelerator.host_bandwidth_GBps") && Contains("0.1"));
    const accelerator counted = read_acc(R"({"name": "h100-sxm", "compute_units": 100})");
    CHECK(counted.compute_units == 100);
    CHECK(counted.fp8_mamf_ratio == h100_sxm.fp8_mamf_ratio);
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "compute_units": -1})"), Contains("accelerator.compute_units"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "fp8_mamf_ratio": 0})"), Contains("accelerator.fp8_mamf_ratio"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "b200", "fp4_gemm_ratio": -0.5})"), Contains("accelerator.fp4_gemm_ratio"));
    CHECK(read_acc(R"({"name": "b200", "fp4_gemm_ratio": 0.7})").fp4_gemm_ratio == 0.7);
    // MXFP8 over per-tensor FP8 GEMM time: Transformer Engine's B300 pair (7.161 / 6.812 ms) unless given
    CHECK_THAT(mine.mxfp8_gemm_time_ratio, WithinRel(7.161 / 6.812, 1e-12));
    CHECK(read_acc(R"({"name": "b200", "mxfp8_gemm_time_ratio": 1.2})").mxfp8_gemm_time_ratio == 1.2);
    CHECK_THROWS_WITH(read_acc(R"({"name": "b200", "mxfp8_gemm_time_ratio": 0})"),
                      Contains("accelerator.mxfp8_gemm_time_ratio") && Contains("0.1"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "exponentials_per_bf16_flop": 2})"),
                      Contains("accelerator.exponentials_per_bf16_flop"));
    CHECK_THROWS_WITH(accelerator_from_json(json("h100"), "cluster.accelerator"),
                      Contains("cluster.accelerator") && Contains("h100-sxm"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "peak_tflops": {"bf17": 1}})"),
                      Contains("accelerator.peak_tflops.bf17") && Contains("bf16"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "scale_up_link": "nvlink9"})"),
                      Contains("accelerator.scale_up_link"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "compute_efficiency": 1.5})"),
                      Contains("accelerator.compute_efficiency"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "memory": "3TB/s"})"), Contains("accelerator.memory"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "x", "memory_GiB": 8, "memory_bandwidth_GBps": 100,
                                   "peak_tflops": {"bf16": null}, "scale_up_link": "pcie4-x16"})"),
                      Contains("accelerator.peak_tflops"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "x", "memory_bandwidth_GBps": 100, "peak_tflops": {"bf16": 1},
                                   "scale_up_link": "pcie4-x16"})"),
                      Contains("accelerator.memory_GiB"));
    CHECK_THROWS_WITH(read_acc(R"({"name": "h100-sxm", "peak_tflops": {"bf16": -1}})"),
                      Contains("accelerator.peak_tflops.bf16"));
}

TEST_CASE("data/links.json and data/accelerators.json load through the validating readers") {
    // Their text is what the headers generate (catalog: golden files); here they read back.
    CHECK(links_from_json(data_file("links.json"), "links.json").size() == all_links().size());
    CHECK(accelerators_from_json(data_file("accelerators.json"), "accelerators.json").size() == all_accelerators().size());
}
