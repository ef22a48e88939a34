// Round trips of the probe's output (apps/probe/probe_core.hpp) through the readers
// (calibrate/nccl_tests.hpp) and the fitter (calibrate/calibrate.hpp): what the probe writes, in
// text and in JSON, must read back as the rows it measured and calibrate the model as the
// original measurements do. The "measured" times are the published 8 x A100-SXM4-80GB
// all_reduce_perf table of stas00/ml-engineering (tests/data/nccl-tests/ORIGIN.md), so the fit is
// checked against its published peak busbw (234.89 GB/s at 16 GiB, REFERENCE.md).
#include "catch_shim.hpp"

#include "probe_core.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <commscale/calibrate/calibrate.hpp>
#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/hardware/clusters.hpp>

using namespace commscale;

namespace {

// Published (size, time_us) of the ml-engineering A100 table, 32 KiB .. 16 GiB.
const std::vector<std::pair<std::uint64_t, double>> a100_table = {
    {32768, 43.83},       {65536, 46.80},        {131072, 51.76},      {262144, 61.38},       {524288, 80.40},
    {1048576, 101.9},     {2097152, 101.4},      {4194304, 101.5},     {8388608, 133.5},      {16777216, 276.6},
    {33554432, 424.0},    {67108864, 684.6},     {134217728, 1327.6},  {268435456, 2420.6},   {536870912, 4218.4},
    {1073741824, 8203.9}, {2147483648, 16240.0}, {4294967296, 32136.0}, {8589934592, 64074.0}, {17179869184, 127997.0}};

probe::machine_info one_dgx_a100() {
    probe::machine_info m;
    m.nccl_version = "2.21.5";
    m.cuda_runtime = 12040;
    m.processes = 1;
    for (int r = 0; r < 8; ++r)
        m.devices.push_back({r, 51200, "a100-node", r, "0000:0" + std::to_string(r) + ":00.0", "NVIDIA A100-SXM4-80GB"});
    return m;
}

probe::collective_result measured(probe::collective c) {
    probe::collective_result res{c, {}};
    for (const auto& [b, t] : a100_table)
        res.rows.push_back(probe::make_row(c, probe::make_point(c, b, probe::element_type::float32, 8), 8, t * 1e-6));
    return res;
}

std::vector<fit_point> points(const measurement_set& s) {
    std::vector<fit_point> v;
    for (const auto& r : s.rows) v.push_back({r.bytes, r.time});
    return v;
}

}  // namespace

TEST_CASE("probe text output reads back as the measured rows and calibrates like them") {
    const auto m = one_dgx_a100();
    const probe::options o = [] {
        const std::vector<std::string_view> args{"-b", "32K", "-e", "16G", "-f", "2"};
        return probe::parse_options(std::span<const std::string_view>(args));
    }();
    const auto res = measured(probe::collective::all_reduce);
    const auto sets = parse_measurements(probe::to_text(res, m, o), "probe.txt");
    REQUIRE(sets.size() == 1);
    const auto& s = sets[0];
    CHECK(s.op == collective_op::all_reduce);
    CHECK(s.ranks == 8);
    CHECK(s.nodes == 1);
    CHECK(s.gpu == "NVIDIA A100-SXM4-80GB");
    REQUIRE(s.rows.size() == a100_table.size());
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
        CHECK(in_bytes(s.rows[i].bytes) == static_cast<double>(a100_table[i].first));
        // The text prints times like nccl-tests (%7.2f below 10 ms, fewer digits above): within 0.05%.
        CHECK_THAT(in_us(s.rows[i].time), Catch::Matchers::WithinRel(a100_table[i].second, 5e-4));
    }
    // The published busbw column is reproduced by the probe's own arithmetic: 234.89 at 16 GiB.
    CHECK_THAT(in_GBps(s.rows.back().busbw), Catch::Matchers::WithinRel(234.89, 1e-3));

    const placement all8{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const auto from_text = calibrate_collective(presets::dgx_a100, all8, collective_op::all_reduce, points(s));
    std::vector<fit_point> original;
    for (const auto& [b, t] : a100_table) original.push_back({bytes(static_cast<double>(b)), time_as_read{t}});
    const auto direct = calibrate_collective(presets::dgx_a100, all8, collective_op::all_reduce, original);
    CHECK_THAT(in_GBps(from_text.peak_busbw), Catch::Matchers::WithinRel(in_GBps(direct.peak_busbw), 1e-3));
    CHECK_THAT(in_GBps(from_text.peak_busbw), Catch::Matchers::WithinRel(234.9, 0.02));
    CHECK(from_text.median_rel_error == Approx(direct.median_rel_error).margin(2e-3));
}

TEST_CASE("probe JSON output reads back exactly, both collectives, and calibrates like the text") {
    const auto m = one_dgx_a100();
    const std::vector<std::string_view> args{"-b", "32K", "-e", "16G", "-f", "2"};
    const auto o = probe::parse_options(std::span<const std::string_view>(args));
    const probe::nccl_environment env{};
    const std::vector<probe::collective_result> results{measured(probe::collective::all_reduce),
                                                        measured(probe::collective::all_gather)};
    const auto sets = parse_measurements(probe::to_json(m, o, env, results).dump(), "probe.json");
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].tool == "commscale-probe");
    CHECK(sets[0].version == "2.21.5");
    CHECK(sets[0].op == collective_op::all_reduce);
    CHECK(sets[1].op == collective_op::all_gather);
    for (const auto& s : sets) {
        CHECK(s.ranks == 8);
        CHECK(s.gpu == "NVIDIA A100-SXM4-80GB");
        REQUIRE(s.rows.size() == a100_table.size());
        for (std::size_t i = 0; i < s.rows.size(); ++i)
            CHECK(in_us(s.rows[i].time) == Approx(a100_table[i].second).epsilon(1e-12));
    }
    // all_gather's bus factor (n-1)/n = 0.875 against all_reduce's 2(n-1)/n = 1.75 on equal times.
    CHECK(in_GBps(sets[1].rows.back().busbw) == Approx(in_GBps(sets[0].rows.back().busbw) / 2).epsilon(1e-9));

    const placement all8{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const auto f = calibrate_collective(presets::dgx_a100, all8, collective_op::all_reduce, points(sets[0]));
    CHECK(f.converged);
    CHECK_THAT(in_GBps(f.peak_busbw), Catch::Matchers::WithinRel(234.9, 0.02));
}
