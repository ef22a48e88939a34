// Hostile input at the library level: every invalid value reaching a parser or loader (quantity
// text, link / accelerator / cluster / model JSON, measurement logs, files) must throw a typed
// commscale::input_error whose field names the path, whose value shows what was given and whose
// message says what is accepted; never a crash, a NaN result or a silently clamped value.
// Inputs found by the fuzz targets (tests/fuzz) are kept here as regression tests.
#include "catch_shim.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>

#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/collective/model.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/predict/capacity.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/hardware_json.hpp>
#include <commscale/io/model_json.hpp>
#include <commscale/workload/models.hpp>
#include <commscale/units/parse.hpp>

using namespace commscale;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Runs f, which must throw input_error; checks the field contains `field` and the message `what`.
void expect_error(const std::function<void()>& f, const std::string& field, const std::string& what = "") {
    INFO("expected field: " << field);
    try {
        f();
        FAIL("no input_error thrown");
    } catch (const input_error& e) {
        INFO("message: " << e.what());
        CHECK(e.field().find(field) != std::string::npos);
        CHECK_FALSE(e.expected().empty());
        if (!what.empty()) CHECK(std::string(e.what()).find(what) != std::string::npos);
    }
}

const json base_cluster = json::parse(R"({"name": "pod", "nodes": 2, "gpus_per_node": 8,
    "intra": {"link": "nvlink4"}, "inter": {"link": "ib-ndr-4x"}})");

// base_cluster with `patch` merged in (RFC 7386 merge patch).
json cluster_with(const std::string& patch) {
    json j = base_cluster;
    j.merge_patch(json::parse(patch));
    return j;
}

void expect_cluster_error(const std::string& patch, const std::string& field, const std::string& what = "") {
    INFO("patch: " << patch);
    expect_error([&] { (void)io::cluster_from_json(cluster_with(patch), "cluster"); }, field, what);
}

const json base_model = json::parse(R"({"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256})");

void expect_model_error(const std::string& patch, const std::string& field, const std::string& what = "") {
    INFO("patch: " << patch);
    json j = base_model;
    j.merge_patch(json::parse(patch));
    expect_error([&] { (void)io::model_from_json(j, "model"); }, field, what);
}

fs::path scratch() {
    static const fs::path p = [] {
        fs::path d = fs::temp_directory_path() / ("commscale_hostile_" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }();
    return p;
}

}  // namespace

TEST_CASE("quantities: negative, NaN, infinite, absurd, overflowing, wrong-unit and empty text") {
    for (const char* t : {"-1GB", "nan", "NaN GB", "inf", "-inf", "infinity", "1e30", "1e400", "1e30B", "2EB", "",
                          "   ", "GB", "1..5GB", "0x10", "1GB GB", "1 G B", "400Gbps", "1us", "\xff\xfe"}) {
        INFO("text: '" << t << "'");
        expect_error([&] { (void)parse_size(t, "--bytes"); }, "--bytes");
    }
    for (const char* t : {"-400Gbps", "1e17GB/s", "nan GB/s", "1GB", "1e999Gbps"}) {
        INFO("text: '" << t << "'");
        expect_error([&] { (void)parse_rate(t, "--rate"); }, "--rate");
    }
    for (const char* t : {"-1us", "1e11s", "1GB", "inf s"}) expect_error([&] { (void)parse_time(t, "--t"); }, "--t");
    // the value given is echoed and what is accepted is named
    expect_error([] { (void)parse_size("400Gbps", "--bytes"); }, "--bytes", "a size");
    expect_error([] { (void)parse_size("1e30", "--bytes"); }, "--bytes", "no larger than");
    // the largest accepted size is still accepted (1 EB), the boundary is not off by one
    CHECK(in_bytes(parse_size("1e18")) == 1e18);
}

TEST_CASE("link JSON: non-positive, NaN, infinite, absurd, unknown, missing and mistyped fields") {
    auto link_of = [](const std::string& text) { return link_from_json(json::parse(text), "cluster.inter.link"); };
    const std::string f = "cluster.inter.link.";
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 0})"); }, f + "per_direction_GBps");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": -50})"); }, f + "per_direction_GBps");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": "nan"})"); }, f + "per_direction_GBps", "nan");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 1e300})"); }, f + "per_direction_GBps");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": "50"})"); }, f + "per_direction_GBps");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction": "50GB"})"); }, f + "per_direction", "a rate");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction": "-1Gbps"})"); }, f + "per_direction");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out"})"); }, f + "per_direction_GBps", "missing");
    expect_error([&] { (void)link_of(R"({"name": "x", "per_direction_GBps": 50})"); }, f + "kind", "missing");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale-out", "per_direction_GBps": 50})"); }, f + "kind", "did you mean scale_out");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "latncy_us": 1})"); },
                 f + "latncy_us", "did you mean latency_us");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "lanes": 0})"); }, f + "lanes");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "lanes": 4294967297})"); }, f + "lanes");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "lanes": 2.5})"); }, f + "lanes");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "latency_us": -1})"); }, f + "latency_us");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "rdma": "yes"})"); }, f + "rdma");
    expect_error([&] { (void)link_of(R"({"name": "", "kind": "scale_out", "per_direction_GBps": 50})"); }, f + "name");
    expect_error([&] { (void)link_of(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50, "duplex_GBps": 99})"); },
                 f + "duplex_GBps");
    expect_error([&] { (void)link_of(R"("ib-nrd-4x")"); }, "cluster.inter.link", "did you mean");
    expect_error([&] { (void)link_of("42"); }, "cluster.inter.link");
    expect_error([&] { (void)link_of("null"); }, "cluster.inter.link");
    expect_error([&] { (void)links_from_json(json::parse(R"([{"name": "nvlink4"}, {"name": "y"}])"), "links"); }, "links[1]");
}

TEST_CASE("accelerator JSON: impossible memory, peaks and links") {
    auto acc_of = [](const std::string& text) { return accelerator_from_json(json::parse(text), "accelerator"); };
    const std::string ok = R"("name": "x", "memory_GiB": 80, "memory_bandwidth_GBps": 3350, "scale_up_link": "nvlink4")";
    expect_error([&] { (void)acc_of("{" + ok + R"(, "peak_tflops": {"bf16": -989}})"); }, "accelerator.peak_tflops.bf16");
    expect_error([&] { (void)acc_of("{" + ok + R"(, "peak_tflops": {"bf16": 0}})"); }, "accelerator.peak_tflops.bf16");
    expect_error([&] { (void)acc_of("{" + ok + R"(, "peak_tflops": {"bf16": null}})"); }, "accelerator.peak_tflops");
    expect_error([&] { (void)acc_of("{" + ok + R"(, "peak_tflops": {"bf61": 989}})"); }, "accelerator.peak_tflops.bf61", "did you mean bf16");
    expect_error([&] { (void)acc_of("{" + ok + "}"); }, "accelerator.peak_tflops", "missing");
    expect_error([&] { (void)acc_of(R"({"name": "x", "memory_GiB": 0, "memory_bandwidth_GBps": 3350, "scale_up_link": "nvlink4", "peak_tflops": {"bf16": 1}})"); },
                 "accelerator.memory_GiB");
    expect_error([&] { (void)acc_of(R"({"name": "x", "memory": "80GB/s", "memory_bandwidth_GBps": 3350, "scale_up_link": "nvlink4", "peak_tflops": {"bf16": 1}})"); },
                 "accelerator.memory");
    expect_error([&] { (void)acc_of(R"({"name": "x", "memory_GiB": 80, "memory_bandwidth_GBps": 3350, "scale_up_link": "nvlink9", "peak_tflops": {"bf16": 1}})"); },
                 "accelerator.scale_up_link", "did you mean");
    expect_error([&] { (void)acc_of(R"({"name": "h100-sxm", "compute_efficiency": 1.5})"); }, "accelerator.compute_efficiency");
}

TEST_CASE("cluster JSON: overflowing counts, missing parts, unknown keys, bad calibration") {
    expect_cluster_error(R"({"nodes": 0})", "cluster.nodes");
    expect_cluster_error(R"({"nodes": -1})", "cluster.nodes");
    expect_cluster_error(R"({"nodes": 9223372036854775808})", "cluster.nodes");   // 2^63: does not fit a long long
    expect_cluster_error(R"({"nodes": 18446744073709551615})", "cluster.nodes");  // 2^64 - 1
    expect_cluster_error(R"({"nodes": 1e30})", "cluster.nodes");
    expect_cluster_error(R"({"nodes": 2.5})", "cluster.nodes");
    expect_cluster_error(R"({"nodes": "4"})", "cluster.nodes");
    expect_cluster_error(R"({"gpus_per_node": 4294967304})", "cluster.gpus_per_node");  // 2^32 + 8: no int wrap to 8
    expect_cluster_error(R"({"gpus_per_node": null})", "cluster.gpus_per_node");
    expect_cluster_error(R"({"intra": null})", "cluster.intra");
    expect_cluster_error(R"({"intra": {"link": null}})", "cluster.intra.link");
    expect_cluster_error(R"({"intra": {"fabric": "torus"}})", "cluster.intra.fabric", "did you mean");
    expect_cluster_error(R"({"inter": null})", "cluster.inter");  // 2 nodes without a network
    expect_cluster_error(R"({"inter": {"nics_per_node": 0}})", "cluster.inter.nics_per_node");
    expect_cluster_error(R"({"inter": {"oversubscription": 0.5}})", "cluster.inter.oversubscription");
    expect_cluster_error(R"({"inter": {"oversubscription": "nan"}})", "cluster.inter.oversubscription");
    expect_cluster_error(R"({"inter": {"nodes_per_leaf": 0}})", "cluster.inter.nodes_per_leaf");
    expect_cluster_error(R"({"nodse": 4})", "cluster.nodse", "did you mean nodes");
    expect_cluster_error(R"({"inter": {"rail_optimised": true}})", "cluster.inter.rail_optimised", "did you mean rail_optimized");
    expect_cluster_error(R"({"accelerator": "h100-sxn"})", "cluster.accelerator", "did you mean h100-sxm");
    expect_cluster_error(R"({"calibration": {"base_latency_us": [1, 2]}})", "cluster.calibration.base_latency_us");
    expect_cluster_error(R"({"calibration": {"base_latency_us": [1, 2, -3]}})", "cluster.calibration.base_latency_us[2]");
    expect_cluster_error(R"({"calibration": {"base_latency_us": [1, 2, "x"]}})", "cluster.calibration.base_latency_us[2]");
    expect_cluster_error(R"({"calibration": {"protocol_bandwidth": [0, 1, 1]}})", "cluster.calibration.protocol_bandwidth[0]");
    expect_cluster_error(R"({"calibration": {"net": {"efficiency": 0}}})", "cluster.calibration.net.efficiency");
    expect_cluster_error(R"({"calibration": {"net": {"half_size": "1e30"}}})", "cluster.calibration.net.half_size");
    expect_cluster_error(R"({"calibration": {"net": {"half_size": -1}}})", "cluster.calibration.net.half_size");
    expect_cluster_error(R"({"calibration": {"net": {"exponent": 1e9}}})", "cluster.calibration.net.exponent");
    expect_cluster_error(R"({"calibration": {"nvlnk": {}}})", "cluster.calibration.nvlnk", "did you mean nvlink");
    expect_cluster_error(R"({"calibration": {"channels": 1e12}})", "cluster.calibration.channels");
    expect_cluster_error(R"({"calibration": []})", "cluster.calibration");
    expect_error([] { (void)io::cluster_from_json(json::array(), "cluster"); }, "cluster");
    expect_error([] { (void)io::cluster_from_json(json(nullptr), "cluster"); }, "cluster");
}

TEST_CASE("JSON numbers under quantity keys obey the same magnitude limits as text") {
    // Regression: a number under a unit-free key ("per_direction": 1e300, "half_size": 1e300)
    // used to bypass the absurd-magnitude check that the same value as text ("1e300B/s") gets.
    expect_error([] { (void)link_from_json(json::parse(R"({"name": "x", "kind": "scale_out", "per_direction": 1e300})"), "link"); },
                 "link.per_direction", "no larger than");
    expect_cluster_error(R"({"calibration": {"net": {"half_size": 1e300}}})", "cluster.calibration.net.half_size");
    expect_error([] { (void)accelerator_from_json(json::parse(R"({"name": "h100-sxm", "memory": 1e300})"), "accelerator"); },
                 "accelerator.memory");
}

TEST_CASE("JSON numbers too large for a double are an input_error naming the document") {
    // Regression (found by fuzz_json): nlohmann::json throws out_of_range (406), not parse_error,
    // for "1e400"; parse_json let it escape as an untyped exception without the file name.
    expect_error([] { (void)io::parse_json(R"({"nodes": 1e400})", "pod.json"); }, "pod.json", "a JSON document");
    expect_error([] { (void)io::parse_json("[-1e999]", "pod.json"); }, "pod.json");
    expect_error([] { (void)io::parse_json(std::string(400, '9'), "pod.json"); }, "pod.json");
    // an integer beyond 64 bits is read as a double and then rejected by the range check
    expect_cluster_error(R"({"nodes": 1234567890123456789012345678901234567890})", "cluster.nodes");
}

TEST_CASE("model JSON: sizes that do not divide, overflow, are missing or mistyped") {
    expect_model_error(R"({"num_attention_heads": 30})", "model.num_attention_heads", "divisor");
    expect_model_error(R"({"num_key_value_heads": 5})", "model.num_key_value_heads", "divisor");
    expect_model_error(R"({"num_key_value_heads": 64})", "model.num_key_value_heads");
    expect_model_error(R"({"num_hidden_layers": null})", "model.num_hidden_layers", "missing");
    expect_model_error(R"({"num_hidden_layers": 0})", "model.num_hidden_layers");
    expect_model_error(R"({"num_hidden_layers": -32})", "model.num_hidden_layers");
    expect_model_error(R"({"num_hidden_layers": 32.5})", "model.num_hidden_layers");
    expect_model_error(R"({"num_hidden_layers": "32"})", "model.num_hidden_layers");
    expect_model_error(R"({"vocab_size": 1e30})", "model.vocab_size");
    expect_model_error(R"({"vocab_size": 9223372036854775808})", "model.vocab_size");
    expect_model_error(R"({"hidden_size": 4294971392})", "model.hidden_size");  // 2^32 + 4096: no int wrap
    expect_model_error(R"({"intermediate_size": null, "hidden_size": 1073741824, "num_attention_heads": 1,
                          "num_key_value_heads": 1})", "model.hidden_size");  // 4 x hidden overflows int
    expect_model_error(R"({"num_local_experts": 8, "num_experts_per_tok": 9})", "model.num_experts_per_tok");
    expect_model_error(R"({"tie_word_embeddings": "maybe"})", "model.tie_word_embeddings");
    expect_error([] { (void)io::model_from_json(json::parse("[]"), "model"); }, "model");
    expect_error([] { (void)io::model_from_json(json::parse("\"llama\""), "model"); }, "model");
}

TEST_CASE("files: missing, a directory, empty, binary garbage, truncated JSON") {
    const fs::path dir = scratch();
    expect_error([&] { (void)io::read_file((dir / "nope.json").string(), "--cluster"); }, "--cluster", "an existing file");
    expect_error([&] { (void)io::read_file(dir.string(), "--cluster"); }, "--cluster", "a directory");
    const fs::path empty = dir / "empty.json";
    std::ofstream(empty).flush();
    expect_error([&] { (void)io::load_cluster_file(empty.string(), "--cluster"); }, "empty.json", "a JSON document");
    const fs::path bin = dir / "bin.json";
    std::ofstream(bin, std::ios::binary) << std::string("\x7f" "ELF\x02\x01\x01\x00\xff\xfe", 10);
    expect_error([&] { (void)io::load_cluster_file(bin.string(), "--cluster"); }, "bin.json");
    const fs::path trunc = dir / "trunc.json";
    std::ofstream(trunc) << R"({"nodes": 2, "gpus_per_node": 8, "intra": {"link": "nvl)";
    expect_error([&] { (void)io::load_cluster_file(trunc.string(), "--cluster"); }, "trunc.json");
    expect_error([&] { (void)io::load_model_file(trunc.string(), "--model"); }, "trunc.json");
    expect_error([&] { (void)io::load_model_file(dir.string(), "--model"); }, "--model", "a directory");
    // deep nesting is a syntax-level error, not a stack overflow
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    try {
        (void)io::parse_json(deep, "deep.json");
    } catch (const input_error&) {
    }
}

TEST_CASE("atomic writes: an error never creates, truncates or clobbers a file") {
    const fs::path dir = scratch();
    const fs::path keep = dir / "keep.txt";
    std::ofstream(keep) << "old";
    expect_error([&] { io::write_file_atomic((dir / "missing-dir" / "x.json").string(), "new", "--out"); }, "--out");
    expect_error([&] { io::write_file_atomic(dir.string(), "new", "--out"); }, "--out", "a directory");
    expect_error([&] { io::write_file_atomic("", "new", "--svg"); }, "--svg");
    std::ifstream in(keep);
    std::string s;
    in >> s;
    CHECK(s == "old");
    io::write_file_atomic(keep.string(), "new", "--out");
    std::ifstream in2(keep);
    in2 >> s;
    CHECK(s == "new");
    for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().extension() != ".tmp");
}

TEST_CASE("measurement logs: empty, whitespace, binary, truncated and garbled input") {
    const std::string dir = std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/";
    for (const char* f : {"empty.log", "whitespace_only.log", "garbage.bin", "truncated_row.log"}) {
        INFO(f);
        expect_error([&] { (void)read_measurements(dir + f); }, f);
    }
    expect_error([&] { (void)read_measurements(dir); }, "log", "a directory");
    for (const std::string& text :
         {std::string("\0\0\0\0", 4), std::string("\xEF\xBB\xBF"), std::string("{"), std::string("[]"), std::string("[{}]"),
          std::string("{\"format\": \"commscale-probe\", \"version\": 1}"), std::string("#  size count type redop root time algbw busbw #wrong\n"),
          std::string("       8             2     float     sum      -1    12.3    0.00    0.00      0\n       16    "),
          std::string(1 << 16, '#'), std::string(1 << 16, '\n')}) {
        INFO("text of " << text.size() << " bytes");
        expect_error([&] { (void)parse_measurements(text, "pasted.log"); }, "pasted.log");
    }
}

TEST_CASE("capacity planning refuses inputs whose answers would not be finite numbers") {
    using namespace commscale;
    const flop_count f = flops(1e23);
    CHECK_THROWS_AS(plan_for_time(f, 312_TFLOPS, 0.5, seconds(1e300)), input_error);
    CHECK_THROWS_AS(plan_for_time(f, 312_TFLOPS, 0.5, seconds(1e-30)), input_error);
    CHECK_THROWS_AS(plan_for_time(f, flops_per_second(1e-300), 0.5, one_week), input_error);
    CHECK_THROWS_AS(plan_for_time(f, flops_per_second(1e30), 0.5, one_week), input_error);
    CHECK_THROWS_AS(plan_for_time(f, 312_TFLOPS, 1e-300, one_week), input_error);
    CHECK_THROWS_AS(plan_for_time(flops(1e40), 312_TFLOPS, 0.5, one_week), input_error);
    CHECK_THROWS_AS(plan_for_gpus(f, 312_TFLOPS, 0.5, 1e300), input_error);
    REQUIRE_THROWS_WITH(plan_for_time(f, 312_TFLOPS, 0.5, seconds(1e300)), Catch::Matchers::Contains("time") &&
                                                                              Catch::Matchers::Contains("1,000 years"));
    // the extremes that are accepted give finite answers
    const capacity_plan p = plan_for_gpus(flops(1e30), flops_per_second(1e9), 1e-4, 1);
    CHECK(std::isfinite(in_seconds(p.time)));
    CHECK(std::isfinite(p.gpu_hours));
}

TEST_CASE("measurement logs: absurd values are named with their line, a partial table keeps the rest") {
    // nccl-tests columns: size count type redop root | time algbw busbw #wrong | (in-place) ...
    const std::string header =
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
    auto row = [](const std::string& size, const std::string& time) {
        return "  " + size + "  2  float  sum  -1  " + time + "  1.0  1.0  0  " + time + "  1.0  1.0  0\n";
    };
    // every row's time 1e300 us: an error naming line 3 and the value, not "truncated"
    const std::string all_bad = header + row("8", "1e300") + row("16", "1e300") + row("32", "1e300");
    expect_error([&] { (void)parse_measurements(all_bad, "huge.log"); }, "huge.log:3", "time 1e+300");
    // a size of 1e30 bytes
    expect_error([&] { (void)parse_measurements(header + row("1e30", "12.0"), "size.log"); }, "size.log:3", "size 1e+30");
    // one absurd row among good ones: skipped with a warning that names its line
    const std::string partial = header + row("8", "12.0") + row("16", "1e300") + row("32", "12.5");
    const auto sets = parse_measurements(partial, "partial.log", collective_op::all_reduce);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].rows.size() == 2);
    bool named = false;
    for (const auto& w : sets[0].warnings) named = named || (w.find(":4") != std::string::npos && w.find("1e+300") != std::string::npos);
    CHECK(named);
}

TEST_CASE("model JSON: shapes far beyond any published model are input errors naming the field") {
    using namespace commscale;
    // 1.3e18 parameters: hidden 2^20 x 100,000 layers
    expect_error([] { (void)io::model_from_json(nlohmann::json::parse(R"({"num_hidden_layers": 100000, "hidden_size": 1048576,
        "num_attention_heads": 1024, "vocab_size": 50257})"), "model"); }, "model", "at most 1e15 parameters");
    expect_error([] { (void)io::model_from_json(nlohmann::json::parse(R"({"num_hidden_layers": 1000000, "hidden_size": 64,
        "num_attention_heads": 1, "vocab_size": 50257})"), "model"); }, "model.num_hidden_layers", "100000");
    // the largest presets stay well inside
    CHECK_NOTHROW(validate(model_by_name("llama3-405b")));
    CHECK_NOTHROW(validate(model_by_name("megatron-1t")));
}

TEST_CASE("capacity planning: a deadline that would need more than 1e12 GPUs, less than 1 FLOP of work") {
    using namespace commscale;
    // 1e30 FLOPs at 1 GFLOP/s x 1e-4 in one minute: 1.7e23 GPUs, beyond a 64-bit count in JSON
    expect_error([] { (void)plan_for_time(flops(1e30), flops_per_second(1e9), 1e-4, seconds(60)); }, "total_flops",
                 "at most 1e12 GPUs");
    expect_error([] { (void)plan_for_time(flops(0.5), 312_TFLOPS, 0.5, one_week); }, "total_flops", "[1, 1e30]");
    expect_error([] { (void)plan_for_gpus(flops(1e23), 312_TFLOPS, 0.5, 2e12); }, "gpus", "1e12");
    // just inside: 1e12 GPUs are a valid answer
    const capacity_plan p = plan_for_time(flops(1e30), flops_per_second(1e18), 1.0, seconds(1e6));
    CHECK(p.gpus <= capacity_max_gpus);
    CHECK(std::isfinite(p.gpu_hours));
}

TEST_CASE("quantities: -0 is zero, subnormal and absurdly small magnitudes are errors, hardware rates >= 1 MB/s") {
    const parsed_quantity z = parse_quantity("-0GB", quantity_kind::size, "value");
    CHECK(z.value == 0.0);
    CHECK_FALSE(std::signbit(z.value));
    CHECK_FALSE(std::signbit(convert("-0", "B")));
    CHECK(convert("0 GB", "MB") == 0.0);
    expect_error([] { (void)convert("1e-320s", "us"); }, "value", "no smaller than");  // a subnormal double
    expect_error([] { (void)convert("1e-31B", "B"); }, "value", "no smaller than");
    expect_error([] { (void)parse_number("1e-310", "--utilization"); }, "--utilization");
    // convert takes any rate; a rate of hardware is at least 1 MB/s
    CHECK(convert("1bps", "B/s") == Approx(0.125));
    expect_error([] { (void)parse_rate("1bps", "link.per_lane"); }, "link.per_lane", "at least 1 MB/s");
    expect_error([] { (void)parse_rate("7Mbps", "--rate"); }, "--rate", "at least 1 MB/s");
    CHECK(in_GBps(parse_rate("8Mbps")) == Approx(0.001));
    // JSON numbers under quantity keys: the same lower limits as text
    expect_cluster_error(R"({"calibration": {"net": {"half_size": 1e-320}}})", "cluster.calibration.net.half_size");
    expect_error([] { (void)link_from_json(json::parse(R"({"name": "x", "kind": "scale_out", "per_direction_GBps": 50,
        "per_lane": "1Mbps"})"), "link"); }, "link.per_lane", "at least 1 MB/s");
}

TEST_CASE("hardware JSON: absurdly small rates, peaks and memories are named with the accepted range") {
    // channel caps: 0 = uncapped, else a hardware rate (1e-300 GB/s made every time ~1e297 s)
    expect_cluster_error(R"({"calibration": {"channels": 1, "channel_bandwidth_GBps": [1e-300, 0, 0]}})",
                         "cluster.calibration.channel_bandwidth_GBps[0]", "at least 1 MB/s");
    expect_cluster_error(R"({"calibration": {"channels": 1, "channel_bandwidth_GBps": [1, 1, 0.0005]}})",
                         "cluster.calibration.channel_bandwidth_GBps[2]", "0 means uncapped");
    CHECK_NOTHROW(io::cluster_from_json(cluster_with(R"({"calibration": {"channels": 2, "channel_bandwidth_GBps": [0, 0.001, 20]}})")));
    // saturation exponents beyond 8 overflow (half_size x ranks / size)^exponent
    expect_cluster_error(R"({"calibration": {"net": {"exponent": 100}}})", "cluster.calibration.net.exponent", "[0.001, 8]");
    auto acc_of = [](const std::string& text) { return accelerator_from_json(json::parse(text), "accelerator"); };
    const std::string base = R"("name": "x", "scale_up_link": "nvlink4")";
    expect_error([&] { (void)acc_of("{" + base + R"(, "memory_GiB": 80, "memory_bandwidth_GBps": 1e-300, "peak_tflops": {"bf16": 989}})"); },
                 "accelerator.memory_bandwidth_GBps", "at least 1 MB/s");
    expect_error([&] { (void)acc_of("{" + base + R"(, "memory_GiB": 80, "memory_bandwidth": "1bps", "peak_tflops": {"bf16": 989}})"); },
                 "accelerator.memory_bandwidth", "at least 1 MB/s");
    expect_error([&] { (void)acc_of("{" + base + R"(, "memory_GiB": 80, "memory_bandwidth_GBps": 3350, "peak_tflops": {"bf16": 1e-300}})"); },
                 "accelerator.peak_tflops.bf16", "[0.001, 1e9]");
    expect_error([&] { (void)acc_of("{" + base + R"(, "memory_GiB": 1e-300, "memory_bandwidth_GBps": 3350, "peak_tflops": {"bf16": 989}})"); },
                 "accelerator.memory_GiB", "at least 1 MB");
}

TEST_CASE("cluster JSON: the most extreme calibration accepted still predicts finite times") {
    // half sizes up to 1e18 B with exponent 8 on 1 B over 16 ranks: (1e19)^8 = 1e152, finite
    const cluster c = io::cluster_from_json(cluster_with(R"({"accelerator": "h100-sxm", "calibration": {
        "net": {"half_size": 1e18, "exponent": 8, "efficiency": 1e-6, "step_latency_us": [1e6, 1e6, 1e6]},
        "nvlink": {"half_size": 1e18, "exponent": 8, "efficiency": 1e-6},
        "protocol_bandwidth": [1e-6, 1e-6, 1e-6], "base_latency_us": [1e6, 1e6, 1e6],
        "channels": 1, "channel_bandwidth_GBps": [0.001, 0.001, 0.001]}})"));
    const placement all{.ranks = 16, .ranks_per_node = 8, .stride = 1};
    for (const double b : {1.0, 1e6, 1e18}) {
        for (collective_op op : {collective_op::all_reduce, collective_op::all_gather, collective_op::all_to_all}) {
            const auto r = predict_collective(c, all, op, bytes(b));
            INFO(b << " bytes, op " << static_cast<int>(op));
            CHECK(std::isfinite(in_seconds(r.time)));
            CHECK(std::isfinite(in_GBps(r.busbw)));
        }
    }
}

TEST_CASE("model JSON: oversized fields are named by their config.json key") {
    expect_model_error(R"({"vocab_size": 33554432})", "model.vocab_size", "16777216");
    expect_model_error(R"({"intermediate_size": 16777216})", "model.intermediate_size", "8388608");
    expect_model_error(R"({"num_local_experts": 131072, "num_experts_per_tok": 2})", "model.num_local_experts", "65536");
    expect_model_error(R"({"hidden_size": 2097152})", "model.hidden_size", "1048576");
    // GPT-2 spelling: the error names the key the file used
    expect_error([] { (void)io::model_from_json(json::parse(R"({"n_layer": 200000, "n_embd": 64, "n_head": 1, "vocab_size": 50257})"),
                                                "model"); }, "model.n_layer", "100000");
    // the total names the keys it comes from
    expect_error([] { (void)io::model_from_json(json::parse(R"({"num_hidden_layers": 100000, "hidden_size": 1048576,
        "num_attention_heads": 1024, "vocab_size": 50257})"), "model"); }, "model", "num_hidden_layers 100000, hidden_size 1048576");
}

TEST_CASE("measurement logs: times too short for their size, and which result block holds the value") {
    const std::string header =
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
    auto row = [](const std::string& size, const std::string& t, const std::string& t_in_place) {
        return "  " + size + "  2  float  sum  -1  " + t + "  1.0  1.0  0  " + t_in_place + "  1.0  1.0  0\n";
    };
    // 1e-300 us for 8 bytes is 8e306 B/s: every row such, the first is named with its line
    std::string tiny = header;
    for (const char* s : {"8", "16", "32"}) tiny += row(s, "1e-300", "1e-300");
    expect_error([&] { (void)parse_measurements(tiny, "tiny.log"); }, "tiny.log:3", "time 1e-300 us for 8 bytes");
    // 1 GB in 1 ns: 1e18 B/s, over 1e7 GB/s
    expect_error([&] { (void)parse_measurements(header + row("1e9", "0.001", "12.0"), "fast.log"); }, "fast.log:3", "over 1e7 GB/s");
    // the in-place column is named when it holds the bad value
    expect_error([&] { (void)parse_measurements(header + row("8", "12.0", "1e300"), "inplace.log"); }, "inplace.log:3",
                 "in-place column");
    expect_error([&] { (void)parse_measurements(header + row("8", "nan", "12.0"), "oop.log"); }, "oop.log:3",
                 "time nan (out-of-place column)");
}

TEST_CASE("files: devices are refused at once, pipes are read up to the cap") {
    expect_error([] { (void)io::read_file("/dev/zero", "--model"); }, "--model", "character device");
    expect_error([] { (void)io::read_file("/dev/null", "--cluster"); }, "--cluster", "a regular file or a pipe");
    // a FIFO (what <(...) and a piped /dev/stdin are) still works
    const fs::path fifo = scratch() / "pipe.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread writer([&] { std::ofstream(fifo) << R"({"nodes": 1})"; });
    const std::string text = io::read_file(fifo.string(), "--cluster");
    writer.join();
    CHECK(text == R"({"nodes": 1})");
    // standard input is bounded like a file: read_stream stops at max_input_bytes
    std::istringstream big(std::string(1024, 'x'));
    CHECK(io::read_stream(big, "stdin", "log").size() == 1024);
}
