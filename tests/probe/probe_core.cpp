// Tests for apps/probe/probe_core.hpp: the CUDA-free logic of commscale-probe (options, size
// ladder, nccl-tests bandwidth conventions, JSON and text writers). Expected values come from
// NVIDIA nccl-tests (doc/PERFORMANCE.md, src/*.cu) and from published nccl-tests logs kept in
// ../shared/fixtures/nccl-tests (oci_a100_allreduce_2.13era.log, nccl_2_20_gb10_allreduce.log).
#include "catch_shim.hpp"

#include "probe_core.hpp"

#include <array>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace commscale;
using namespace commscale::probe;

namespace {
options parse(std::initializer_list<std::string_view> args) {
    const std::vector<std::string_view> v(args);
    return parse_options(std::span<const std::string_view>(v));
}
std::string error_of(std::initializer_list<std::string_view> args) {
    try {
        (void)parse(args);
    } catch (const input_error& e) {
        return e.what();
    }
    return "no error";
}
machine_info two_node_machine() {
    machine_info m;
    m.nccl_version = "2.28.9";
    m.cuda_runtime = 13000;
    m.processes = 2;
    m.devices = {{0, 43, "node-a", 0, "0000:0f:00.0", "NVIDIA A100-SXM4-40GB"},
                 {1, 43, "node-a", 1, "0000:15:00.0", "NVIDIA A100-SXM4-40GB"},
                 {2, 44, "node-b", 0, "0000:0f:00.0", "NVIDIA A100-SXM4-40GB"},
                 {3, 44, "node-b", 1, "0000:15:00.0", "NVIDIA A100-SXM4-40GB"}};
    return m;
}
}  // namespace

TEST_CASE("busbw factors are those of nccl-tests doc/PERFORMANCE.md") {
    // all_reduce 2(n-1)/n: 8 ranks -> 1.75, 16 ranks -> 1.875.
    STATIC_REQUIRE(busbw_factor(collective::all_reduce, 8) == 1.75);
    STATIC_REQUIRE(busbw_factor(collective::all_reduce, 16) == 1.875);
    // all_gather, reduce_scatter, alltoall (n-1)/n: 8 ranks -> 0.875.
    STATIC_REQUIRE(busbw_factor(collective::all_gather, 8) == 0.875);
    STATIC_REQUIRE(busbw_factor(collective::reduce_scatter, 8) == 0.875);
    STATIC_REQUIRE(busbw_factor(collective::alltoall, 4) == 0.75);
    // broadcast, reduce, sendrecv: 1 whatever n.
    STATIC_REQUIRE(busbw_factor(collective::broadcast, 8) == 1.0);
    STATIC_REQUIRE(busbw_factor(collective::reduce, 8) == 1.0);
    STATIC_REQUIRE(busbw_factor(collective::sendrecv, 2) == 1.0);
    // One GPU: nccl-tests prints busbw 0 for all_reduce (2 x 0 / 1).
    STATIC_REQUIRE(busbw_factor(collective::all_reduce, 1) == 0.0);
}

TEST_CASE("make_row reproduces published nccl-tests rows") {
    // oci_a100_allreduce_2.13era.log, 2 nodes x 8 A100 (16 ranks):
    //   2097152 B, 99.19 us -> algbw 21.14, busbw 39.64 GB/s
    //   4294967296 B, 34176 us -> algbw 125.67, busbw 235.63 GB/s
    // (the log prints 2 decimals: tolerance 0.005 GB/s plus the rounding of the time column).
    const auto p1 = make_point(collective::all_reduce, 2097152, element_type::float32, 16);
    CHECK(p1.count == 524288);
    const row r1 = make_row(collective::all_reduce, p1, 16, 99.19e-6);
    CHECK(r1.algbw_GBps == Approx(21.14).margin(0.006));
    CHECK(r1.busbw_GBps == Approx(39.64).margin(0.006));
    CHECK(r1.time_us == Approx(99.19));
    const auto p2 = make_point(collective::all_reduce, 4294967296, element_type::float32, 16);
    CHECK(p2.count == 1073741824);
    const row r2 = make_row(collective::all_reduce, p2, 16, 34176e-6);
    CHECK(r2.algbw_GBps == Approx(125.67).margin(0.01));
    CHECK(r2.busbw_GBps == Approx(235.63).margin(0.01));
    // nccl_2_20_gb10_allreduce.log, 2 ranks: 65536 B in 67.93 us -> 0.96 / 0.96 GB/s.
    const row r3 = make_row(collective::all_reduce, make_point(collective::all_reduce, 65536, element_type::float32, 2), 2, 67.93e-6);
    CHECK(r3.algbw_GBps == Approx(0.96).margin(0.005));
    CHECK(r3.busbw_GBps == Approx(0.96).margin(0.005));
    CHECK_FALSE(r3.nccl_predicted_us.has_value());
    // A predicted time is kept; a zero or NaN one is not.
    CHECK(make_row(collective::sendrecv, p1, 2, 1e-3, 950.0).nccl_predicted_us == 950.0);
    CHECK_FALSE(make_row(collective::sendrecv, p1, 2, 1e-3, 0.0).nccl_predicted_us.has_value());
    CHECK_FALSE(make_row(collective::sendrecv, p1, 2, 1e-3, std::nan("")).nccl_predicted_us.has_value());
    // A non-positive or NaN time is an error, never a NaN bandwidth.
    REQUIRE_THROWS_AS(make_row(collective::all_reduce, p1, 2, 0.0), input_error);
    REQUIRE_THROWS_AS(make_row(collective::all_reduce, p1, 2, std::nan("")), input_error);
}

TEST_CASE("sizes are split and rounded like nccl-tests getCollByteCount") {
    // all_reduce: count = bytes / element size; 10 bytes of float -> 2 elements, 8 bytes.
    constexpr auto ar = make_point(collective::all_reduce, 10, element_type::float32, 8);
    STATIC_REQUIRE(ar.bytes == 8);
    STATIC_REQUIRE(ar.count == 2);
    // all_gather on 8 ranks, 1 MiB of float: 262144 elements -> 32768 per rank; size = full output.
    constexpr auto ag = make_point(collective::all_gather, 1048576, element_type::float32, 8);
    STATIC_REQUIRE(ag.count == 32768);
    STATIC_REQUIRE(ag.bytes == 1048576);
    STATIC_REQUIRE(ag.send_bytes == 131072);
    STATIC_REQUIRE(ag.recv_bytes == 1048576);
    // reduce_scatter is the mirror image: the input is full, the output a rank's share.
    constexpr auto rs = make_point(collective::reduce_scatter, 1048576, element_type::float32, 8);
    STATIC_REQUIRE(rs.count == 32768);
    STATIC_REQUIRE(rs.send_bytes == 1048576);
    STATIC_REQUIRE(rs.recv_bytes == 131072);
    // alltoall on 3 ranks, 100 bytes of half: 50 elements -> 16 per peer, 96 bytes.
    constexpr auto a2a = make_point(collective::alltoall, 100, element_type::float16, 3);
    STATIC_REQUIRE(a2a.count == 16);
    STATIC_REQUIRE(a2a.bytes == 96);
    // 8 bytes on 8 ranks of float: fewer elements than ranks -> 0 bytes (skipped by the ladder).
    STATIC_REQUIRE(make_point(collective::all_gather, 8, element_type::float32, 8).bytes == 0);
}

TEST_CASE("the size ladder is min, min*f, ... <= max") {
    options o;
    o.min_bytes = 8;
    o.max_bytes = 1024;
    o.factor = 2;
    const auto ar = size_ladder(o, collective::all_reduce, 8);
    REQUIRE(ar.size() == 8);  // 8, 16, ..., 1024
    CHECK(ar.front().bytes == 8);
    CHECK(ar.back().bytes == 1024);
    // all_gather on 8 ranks: 8 and 16 bytes hold fewer floats than ranks -> skipped; 32 B = 1 per rank.
    const auto ag = size_ladder(o, collective::all_gather, 8);
    REQUIRE(ag.size() == 6);
    CHECK(ag.front().bytes == 32);
    CHECK(ag.front().count == 1);
    // max not on the ladder: 3 -> 9 -> 27 -> 81 with max 100, factor 3 (bytes of half: 2, 8, 26, 80).
    o.min_bytes = 3;
    o.max_bytes = 100;
    o.factor = 3;
    o.dtype = element_type::float16;
    const auto odd = size_ladder(o, collective::broadcast, 1);
    REQUIRE(odd.size() == 4);
    CHECK(odd[0].bytes == 2);
    CHECK(odd[3].bytes == 80);
    // One size.
    o.min_bytes = o.max_bytes = 32 << 20;
    CHECK(size_ladder(o, collective::all_reduce, 8).size() == 1);
    // No overflow near 2^62 with a large factor.
    o.min_bytes = std::uint64_t{1} << 40;
    o.max_bytes = std::uint64_t{1} << 62;
    o.factor = 1024;
    CHECK(size_ladder(o, collective::all_reduce, 8).size() == 3);  // 2^40, 2^50, 2^60
}

TEST_CASE("options: nccl-tests short forms, long forms and defaults") {
    const options d = parse({});
    CHECK(d.min_bytes == 8);
    CHECK(d.max_bytes == 1073741824);
    CHECK(d.factor == 2);
    CHECK(d.warmup == 5);
    CHECK(d.iters == 20);
    CHECK(d.ops.size() == 7);
    CHECK(d.dtype == element_type::float32);
    CHECK(d.predict);

    const options o = parse({"-b", "8", "-e", "128M", "-f", "4", "-w", "2", "-n", "50", "-d", "bfloat16",
                             "--ops", "all_reduce,alltoall", "--json=out.json", "--no-predict", "-g", "1"});
    CHECK(o.min_bytes == 8);
    CHECK(o.max_bytes == 134217728);  // nccl-tests: M = 2^20
    CHECK(o.factor == 4);
    CHECK(o.warmup == 2);
    CHECK(o.iters == 50);
    CHECK(o.dtype == element_type::bfloat16);
    REQUIRE(o.ops.size() == 2);
    CHECK(o.ops[0] == collective::all_reduce);
    CHECK(o.ops[1] == collective::alltoall);
    CHECK(o.json_path == "out.json");
    CHECK_FALSE(o.predict);
    CHECK(o.gpus == 1);

    CHECK(parse({"--min", "1K", "--max", "1G"}).max_bytes == 1073741824);
    CHECK(parse({"--min", "1K"}).min_bytes == 1024);
    CHECK(parse({"--max", "1GB"}).max_bytes == 1000000000);  // a unit: decimal GB
    CHECK(parse({"--max", "2GiB"}).max_bytes == 2147483648);
    CHECK(parse({"--ops", "all_gather_perf", "--ops", "sendrecv"}).ops.size() == 2);
    CHECK(parse({"-h"}).help);
    CHECK(parse({"-d", "half"}).dtype == element_type::float16);
}

TEST_CASE("options: bad values are errors naming the option and what is accepted") {
    using Catch::Matchers::Contains;
    CHECK_THAT(error_of({"-b", "1G", "-e", "1M"}), Contains("--min") && Contains("<= --max"));
    CHECK_THAT(error_of({"-f", "1"}), Contains("--factor") && Contains("[2, 1024]"));
    CHECK_THAT(error_of({"-f", "0"}), Contains("--factor"));
    CHECK_THAT(error_of({"-f", "1.5"}), Contains("--factor"));
    CHECK_THAT(error_of({"-n", "0"}), Contains("--iters") && Contains("got '0'"));
    CHECK_THAT(error_of({"-n", "-3"}), Contains("--iters"));
    CHECK_THAT(error_of({"-w", "many"}), Contains("--warmup"));
    CHECK_THAT(error_of({"--ops", "allreduse"}), Contains("--ops") && Contains("did you mean") && Contains("all_reduce"));
    CHECK_THAT(error_of({"--ops", "all_reduce,,reduce"}), Contains("--ops"));
    CHECK_THAT(error_of({"--ops", "reduce,reduce"}), Contains("twice"));
    CHECK_THAT(error_of({"-d", "double"}), Contains("--dtype") && Contains("float"));
    CHECK_THAT(error_of({"-b", "0"}), Contains("--min"));
    CHECK_THAT(error_of({"-b", "-8"}), Contains("--min"));
    CHECK_THAT(error_of({"-b", "1.5B"}), Contains("whole number of bytes"));
    CHECK_THAT(error_of({"-e", "10Gbps"}), Contains("--max"));  // a rate, not a size
    CHECK_THAT(error_of({"-e", "99999999999G"}), Contains("2^62"));
    CHECK_THAT(error_of({"-e"}), Contains("-e") && Contains("a value after it"));
    CHECK_THAT(error_of({"--mins", "8"}), Contains("option") && Contains("--min"));
    CHECK_THAT(error_of({"--json="}), Contains("--json"));
    CHECK_THAT(error_of({"-g", "0"}), Contains("--gpus"));
    CHECK_THAT(error_of({"", "--n"}), Contains("option"));  // an empty argument, then an unknown option
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO are read from the environment") {
    const auto env = read_nccl_environment([](const char* k) -> const char* {
        return std::strcmp(k, "NCCL_ALGO") == 0 ? "Ring" : std::strcmp(k, "NCCL_PROTO") == 0 ? "" : nullptr;
    });
    CHECK(env.algo == std::optional<std::string>("Ring"));
    CHECK_FALSE(env.proto.has_value());  // empty = unset
}

TEST_CASE("machine info: ranks, distinct hosts, GPU model") {
    const machine_info m = two_node_machine();
    CHECK(m.ranks() == 4);
    CHECK(m.hosts() == std::vector<std::string>{"node-a", "node-b"});
    CHECK(m.gpu() == "NVIDIA A100-SXM4-40GB");
    machine_info mixed = m;
    mixed.devices[3].name = "NVIDIA H100 80GB HBM3";
    CHECK(mixed.gpu() == "mixed: NVIDIA A100-SXM4-40GB, NVIDIA H100 80GB HBM3");
}

TEST_CASE("JSON output has the commscale-probe format and round-trips through nlohmann::json") {
    options o = parse({"-b", "8", "-e", "1G", "-n", "20", "-w", "5"});
    const machine_info m = two_node_machine();
    const nccl_environment env{.algo = std::string("Tree"), .proto = std::nullopt};
    std::vector<collective_result> results;
    const auto p = make_point(collective::all_reduce, 8, o.dtype, 4);
    results.push_back({collective::all_reduce, {make_row(collective::all_reduce, p, 4, 12.3e-6, 10.1)}});
    const auto q = make_point(collective::all_gather, 1048576, o.dtype, 4);
    results.push_back({collective::all_gather, {make_row(collective::all_gather, q, 4, 20e-6)}});

    const std::string text = to_json(m, o, env, results).dump(2);
    const auto doc = nlohmann::json::parse(text);
    CHECK(doc.at("format") == "commscale-probe");
    CHECK(doc.at("version") == 1);
    const auto& mach = doc.at("machine");
    CHECK(mach.at("gpu") == "NVIDIA A100-SXM4-40GB");
    CHECK(mach.at("ranks") == 4);
    CHECK(mach.at("nodes") == 2);
    CHECK(mach.at("hosts") == nlohmann::json::array({"node-a", "node-b"}));
    CHECK(mach.at("nccl_version") == "2.28.9");
    CHECK(mach.at("cuda_runtime") == 13000);
    const auto& set = doc.at("settings");
    CHECK(set.at("min_bytes") == 8);
    CHECK(set.at("max_bytes") == 1073741824);
    CHECK(set.at("factor") == 2);
    CHECK(set.at("warmup") == 5);
    CHECK(set.at("iters") == 20);
    CHECK(set.at("nccl_algo") == "Tree");
    CHECK(set.at("nccl_proto").is_null());
    CHECK(set.at("dtype") == "float");
    const auto& cols = doc.at("collectives");
    REQUIRE(cols.size() == 2);
    CHECK(cols[0].at("op") == "all_reduce");
    const auto& r0 = cols[0].at("rows").at(0);
    CHECK(r0.at("bytes") == 8);
    CHECK(r0.at("count") == 2);
    CHECK(r0.at("time_us").get<double>() == Approx(12.3));
    // 8 B / 12.3 us = 0.000650 GB/s; x 2(4-1)/4 = 1.5 for busbw.
    CHECK(r0.at("algbw_GBps").get<double>() == Approx(8.0 / 12.3e-6 / 1e9));
    CHECK(r0.at("busbw_GBps").get<double>() == Approx(1.5 * 8.0 / 12.3e-6 / 1e9));
    CHECK(r0.at("nccl_predicted_us").get<double>() == Approx(10.1));
    const auto& r1 = cols[1].at("rows").at(0);
    CHECK(cols[1].at("op") == "all_gather");
    CHECK(r1.at("bytes") == 1048576);
    CHECK(r1.at("count") == 65536);  // per rank: 1 MiB / 4 B / 4 ranks
    // 1 MiB in 20 us = 52.43 GB/s algbw, x 3/4 = 39.32 GB/s busbw.
    CHECK(r1.at("algbw_GBps").get<double>() == Approx(52.4288));
    CHECK(r1.at("busbw_GBps").get<double>() == Approx(39.3216));
    CHECK(r1.at("nccl_predicted_us").is_null());
    // Exactly these keys: a stray key would be ignored by readers and hide a typo.
    CHECK(doc.size() == 5);
    CHECK(mach.size() == 6);
    CHECK(set.size() == 8);
    CHECK(r0.size() == 6);
}

TEST_CASE("text output has the shape of an nccl-tests log") {
    const options o = parse({"-b", "2M", "-e", "4G"});
    const machine_info m = two_node_machine();
    collective_result res{collective::all_reduce, {}};
    res.rows.push_back(make_row(collective::all_reduce, make_point(collective::all_reduce, 2097152, o.dtype, 16), 16, 99.19e-6));
    res.rows.push_back(make_row(collective::all_reduce, make_point(collective::all_reduce, 4294967296, o.dtype, 16), 16, 34176e-6));
    const std::string text = to_text(res, m, o);
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    REQUIRE(lines.size() == 17);
    CHECK(lines[0] == "# Collective test starting: all_reduce_perf");
    CHECK(lines[1] == "# nThread 1 nGpus 2 minBytes 2097152 maxBytes 4294967296 step: 2(factor) warmup iters: 5 "
                      "iters: 20 agg iters: 1 validation: 0 graph: 0");
    CHECK(lines[3] == "# Using devices");
    CHECK(lines[4] == "#  Rank  0 Group  0 Pid     43 on     node-a device  0 [0000:0f:00.0] NVIDIA A100-SXM4-40GB");
    CHECK(lines[7] == "#  Rank  3 Group  0 Pid     44 on     node-b device  1 [0000:15:00.0] NVIDIA A100-SXM4-40GB");
    CHECK_THAT(lines[10], Catch::Matchers::Contains("size         count      type   redop    root     time   algbw   busbw #wrong"));
    // Columns as in the published log (same widths as nccl-tests' printf formats).
    CHECK(lines[12] == "     2097152        524288     float     sum      -1    99.19   21.14   39.64    N/A");
    // The log prints 235.63 from the unrounded time; 34176 us exactly gives 235.635 -> "235.64".
    CHECK(lines[13].rfind("  4294967296    1073741824     float     sum      -1    34176  125.67  235.6", 0) == 0);
    CHECK(lines[14].rfind("# Out of bounds values", 0) == 0);
    // Footer: mean busbw of the rows.
    CHECK_THAT(text, Catch::Matchers::Contains("# Avg bus bandwidth    : 137.6"));
    // Every data line has the 9 whitespace-separated fields of the unified format.
    for (int i : {12, 13}) {
        std::istringstream f(lines[static_cast<std::size_t>(i)]);
        std::vector<std::string> fields;
        for (std::string w; f >> w;) fields.push_back(w);
        CHECK(fields.size() == 9);
    }
    // Rooted collectives print the root; non-reducing ones print redop "none".
    const row b = make_row(collective::broadcast, make_point(collective::broadcast, 1024, o.dtype, 4), 4, 150e-6);
    CHECK(text_row(collective::broadcast, b, element_type::float32, 2) ==
          "        1024           256     float    none       2    150.0    0.01    0.01    N/A\n");
}
