// Tests for include/commscale/calibrate/nccl_tests.hpp: every log variant has a fixture under
// tests/data/nccl-tests/ (ORIGIN.md says where each comes from).
#include "catch_shim.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/io/file.hpp>

using namespace commscale;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

std::string fixture(const std::string& name) { return io::read_file(std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/" + name); }

std::vector<measurement_set> parse_fixture(const std::string& name, std::optional<collective_op> op = std::nullopt) {
    return parse_measurements(fixture(name), name, op);
}

bool any_warning(const measurement_set& m, const std::string& text) {
    for (const auto& w : m.warnings)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

/// The parse_error thrown for `text`, or a failed check.
parse_error error_of(const std::string& text, const std::string& source, std::optional<collective_op> op = std::nullopt) {
    try {
        (void)parse_measurements(text, source, op);
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("expected a parse_error for " + source);
    return parse_error(source, 0, "", "");
}

const measured_row& row_of(const measurement_set& m, double bytes) {
    for (const auto& r : m.rows)
        if (in_bytes(r.bytes) == bytes) return r;
    FAIL("no row of " + std::to_string(bytes) + " bytes");
    return m.rows.front();
}

}  // namespace

TEST_CASE("ml-engineering 8 x A100 all_reduce table: all 20 rows as published") {
    const auto sets = parse_fixture("ml_engineering_a100_allreduce.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::all_reduce);
    CHECK(m.ranks == 8);
    CHECK(m.nodes == 1);
    CHECK(m.dtype == "float");
    CHECK(m.redop == "sum");
    REQUIRE(m.rows.size() == 20);
    // 32 KiB .. 16 GiB, doubling.
    for (std::size_t i = 0; i < m.rows.size(); ++i) {
        CHECK(in_bytes(m.rows[i].bytes) == 32768.0 * static_cast<double>(std::uint64_t{1} << i));
        CHECK(m.rows[i].count == in_bytes(m.rows[i].bytes) / 4);
        // nccl-tests defines algbw = size / time (doc/PERFORMANCE.md): the published columns agree
        // within their printed precision, so the columns were read in the right places.
        CHECK_THAT(in_bytes(m.rows[i].bytes) / in_us(m.rows[i].time) / 1e3, WithinRel(in_GBps(m.rows[i].algbw), 0.01));
        // busbw = algbw x 2(n-1)/n with n = 8.
        CHECK_THAT(in_GBps(m.rows[i].algbw) * 1.75, WithinRel(in_GBps(m.rows[i].busbw), 0.01));
    }
    // busbw by size, REFERENCE.md [ml-engineering-networking].
    CHECK(in_GBps(row_of(m, 32768).busbw) == Approx(1.31));
    CHECK(in_GBps(row_of(m, 1048576).busbw) == Approx(18.00));
    CHECK(in_GBps(row_of(m, 4194304).busbw) == Approx(72.33));
    CHECK(in_GBps(row_of(m, 16777216).busbw) == Approx(106.16));
    CHECK(in_GBps(row_of(m, 67108864).busbw) == Approx(171.54));
    CHECK(in_GBps(row_of(m, 268435456).busbw) == Approx(194.07));
    CHECK(in_GBps(row_of(m, 1073741824).busbw) == Approx(229.04));
    CHECK(in_GBps(row_of(m, 4294967296).busbw) == Approx(233.88));
    CHECK(in_GBps(row_of(m, 17179869184).busbw) == Approx(234.89));
    CHECK(in_us(row_of(m, 17179869184).time) == Approx(127997));
    CHECK(in_us(row_of(m, 134217728).time) == Approx(1327.6));
    CHECK(in_GBps(row_of(m, 17179869184).inplace_busbw.value()) == Approx(234.89));
    CHECK(m.warnings.empty());
}

TEST_CASE("real log, 2.13 era: 0x0f bus ids, trimmed device list, footer") {
    const auto sets = parse_fixture("oci_a100_allreduce_2.13era.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::all_reduce);  // from the file name: the log does not name its test
    // Only ranks 0, 1, 8, 15 are listed: the highest rank id gives 16, as busbw/algbw does
    // (237.94 / 126.90 = 1.875 = 2 x 15/16).
    CHECK(m.ranks == 16);
    CHECK(m.nodes == 2);
    CHECK(m.hosts == std::vector<std::string>{"nccl-allreduce-job0-mpiworker-0", "nccl-allreduce-job0-mpiworker-1"});
    CHECK(m.gpu == "NVIDIA A100-SXM4-40GB");
    REQUIRE(m.rows.size() == 5);
    const auto& big = row_of(m, 8589934592.0);
    CHECK(big.count == 2147483648.0);
    CHECK(in_us(big.time) == 67689);
    CHECK(in_GBps(big.algbw) == Approx(126.90));
    CHECK(in_GBps(big.busbw) == Approx(237.94));
    CHECK(in_us(big.inplace_time.value()) == Approx(67811));
    CHECK(in_GBps(big.inplace_algbw.value()) == Approx(126.68));
    CHECK(in_GBps(big.inplace_busbw.value()) == Approx(237.52));
    CHECK(in_us(row_of(m, 2097152).inplace_time.value()) == Approx(100.1));
    REQUIRE(m.avg_busbw);
    CHECK(in_GBps(*m.avg_busbw) == Approx(66.4834));
}

TEST_CASE("real log, nccl-tests 2.20: version line, test name, 000f:01:00 bus ids") {
    const auto sets = parse_fixture("nccl_2_20_gb10_allreduce.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.tool == "nccl-tests");
    CHECK(m.version == "2.20.0");
    CHECK(m.op == collective_op::all_reduce);
    CHECK(m.ranks == 2);
    CHECK(m.nodes == 2);
    CHECK(m.gpu == "NVIDIA GB10");
    REQUIRE(m.rows.size() == 4);
    CHECK(in_bytes(m.rows[0].bytes) == 8192);
    CHECK(in_us(m.rows[0].time) == Approx(35.15));
    CHECK(in_us(m.rows[3].inplace_time.value()) == Approx(64.71));
    CHECK_FALSE(m.avg_busbw);  // the snippet ends before the footer
}

TEST_CASE("real log, sendrecv: #wrong N/A, op from the file name or the caller") {
    auto sets = parse_fixture("nccl_sendrecv_issue214.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::send_recv);
    CHECK(sets[0].ranks == 2);
    CHECK(sets[0].gpu == "NVIDIA A40");
    CHECK(sets[0].hosts == std::vector<std::string>{"gpu23", "gpu24"});
    REQUIRE(sets[0].rows.size() == 2);
    CHECK(in_us(sets[0].rows[1].inplace_time.value()) == Approx(34.15));
    // An explicit op wins over the file name when the log names none.
    sets = parse_measurements(fixture("nccl_sendrecv_issue214.log"), "log.txt", collective_op::send_recv);
    CHECK(sets[0].op == collective_op::send_recv);
}

TEST_CASE("real log cut after the column header (issue 107): a parse_error at the end") {
    const auto e = error_of(fixture("nccl_old_v2_issue107.log"), "issue107.log", collective_op::all_reduce);
    CHECK(e.line() == 12);
    CHECK_THAT(std::string(e.what()), Contains("issue107.log:12") && Contains("line 11") && Contains("truncated"));
}

TEST_CASE("real NCCL_DEBUG=INFO output without a table: a parse_error") {
    const auto e = error_of(fixture("nccl_debug_info_issue1189.log"), "info.log");
    CHECK(e.line() == 4);
    CHECK_THAT(std::string(e.what()), Contains("without a results table"));
}

TEST_CASE("OpenMPI --tag-output prefixes, stderr NCCL INFO lines, 16 ranks on 2 nodes") {
    const auto sets = parse_fixture("unified_openmpi_prefixed.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.version == "2.23.0");
    CHECK(m.ranks == 16);
    CHECK(m.nodes == 2);
    CHECK(m.gpu == "NVIDIA H100 80GB HBM3");
    REQUIRE(m.rows.size() == 10);
    CHECK(in_bytes(m.rows[0].bytes) == 8);
    CHECK(in_us(m.rows[0].time) == Approx(35.00));
    CHECK(in_us(m.rows[0].inplace_time.value()) == Approx(35.35));
    REQUIRE(m.avg_busbw);
    CHECK(in_GBps(*m.avg_busbw) == Approx(18.7640));
    CHECK(m.warnings.empty());
}

TEST_CASE("Slurm srun -l prefixes, the op from the command line") {
    const auto sets = parse_fixture("slurm_labelled.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::reduce_scatter);
    CHECK(sets[0].ranks == 4);
    CHECK(sets[0].rows.size() == 9);
}

TEST_CASE("option -C: cputime columns are read, with a warning") {
    const auto sets = parse_fixture("cputime_C.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].rows.size() == 6);
    CHECK(any_warning(sets[0], "CPU"));
}

TEST_CASE("option -I: per-iteration columns and timestamps are skipped by name") {
    const auto sets = parse_fixture("per_iteration_I.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::broadcast);
    CHECK(m.version == "2.24.1");
    CHECK(m.redop == "none");
    REQUIRE(m.rows.size() == 4);
    // Row 65536: time 20.36 (not i_min 19.75), in-place time 20.56 (not the out-of-place i_cv%).
    CHECK(in_us(m.rows[0].time) == Approx(20.36));
    CHECK(in_GBps(m.rows[0].algbw) == Approx(3.22));
    CHECK(in_us(m.rows[0].inplace_time.value()) == Approx(20.56));
    CHECK(in_GBps(m.rows[0].inplace_busbw.value()) == Approx(3.19));
    CHECK(m.warnings.empty());
}

TEST_CASE("numbers in exponent form") {
    const auto sets = parse_fixture("exponent_numbers.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::all_gather);
    CHECK(m.ranks == 2);
    CHECK(m.gpu == "NVIDIA L4");
    CHECK(in_bytes(m.rows.back().bytes) == 17179869184.0);
    CHECK(in_us(m.rows.back().time) == 1.7e8);
    CHECK(in_us(row_of(m, 67108864).time) == 671209);
    REQUIRE(m.avg_busbw);
    CHECK(in_GBps(*m.avg_busbw) == Approx(0.024));
}

TEST_CASE("old columns: error instead of #wrong, no root, no Group") {
    const auto sets = parse_fixture("old_error_column.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::all_reduce);
    CHECK(m.ranks == 2);
    CHECK(m.nodes == 2);
    CHECK(m.gpu == "Tesla V100-SXM2-16GB");
    REQUIRE(m.rows.size() == 7);
    CHECK(in_us(m.rows[0].time) == Approx(134.9));
    CHECK(in_GBps(m.rows[0].busbw) == Approx(7.78));
    CHECK(in_us(m.rows[1].inplace_time.value()) == Approx(242.1));
}

TEST_CASE("a paste that lost its leading '#'") {
    const auto sets = parse_fixture("lost_hash_paste.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::all_to_all);
    CHECK(m.version == "2.19.4");
    CHECK(m.ranks == 8);
    CHECK(m.gpu == "NVIDIA H100 80GB HBM3");
    REQUIRE(m.rows.size() == 5);
    CHECK(in_us(m.rows[0].time) == Approx(30.02));
    REQUIRE(m.avg_busbw);
    CHECK(in_GBps(*m.avg_busbw) == Approx(60.5));
}

TEST_CASE("rows without any header: standard columns assumed, ranks from busbw/algbw") {
    const auto sets = parse_fixture("headerless_rows.log", collective_op::all_reduce);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].rows.size() == 6);
    CHECK(sets[0].ranks == 4);  // busbw / algbw = 1.5 = 2 x 3/4
    CHECK(any_warning(sets[0], "assumed"));
    CHECK(any_warning(sets[0], "inferred from busbw/algbw"));
    // Without an op the table cannot be used.
    const auto e = error_of(fixture("headerless_rows.log"), "rows.txt");
    CHECK(e.line() == 1);
    CHECK_THAT(std::string(e.what()), Contains("--op"));
}

TEST_CASE("duplicated identical reports (binary without MPI under mpirun) are returned once") {
    const auto sets = parse_fixture("duplicated_identical.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::all_reduce);
    CHECK(sets[0].ranks == 1);
    CHECK(sets[0].rows.size() == 5);
    CHECK(any_warning(sets[0], "identical copy"));
}

TEST_CASE("interleaved copies from independent processes are separated") {
    const auto sets = parse_fixture("duplicated_interleaved.log");
    REQUIRE(sets.size() == 2);
    for (const auto& m : sets) {
        CHECK(m.ranks == 1);
        CHECK(m.nodes == 1);
        CHECK(m.rows.size() == 5);
        CHECK(any_warning(m, "several processes"));
    }
    CHECK(in_us(sets[0].rows[0].time) == Approx(9.5));
    CHECK(in_us(sets[1].rows[0].time) == Approx(9.78));
}

TEST_CASE("two collectives in one log give two sets") {
    const auto sets = parse_fixture("two_collectives.log");
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].op == collective_op::all_reduce);
    CHECK(sets[1].op == collective_op::all_gather);
    CHECK(sets[1].redop == "none");
    for (const auto& m : sets) {
        CHECK(m.ranks == 8);
        CHECK(m.rows.size() == 6);
        CHECK(m.avg_busbw.has_value());
    }
    // The caller's op does not override the test the log names, but the mismatch is reported.
    const auto again = parse_measurements(fixture("two_collectives.log"), "x.log", collective_op::broadcast);
    CHECK(again[0].op == collective_op::all_reduce);
    CHECK(any_warning(again[0], "requested broadcast"));
}

TEST_CASE("rccl-tests: version line, RCCL block, devices without Group, 0000:05:00.0") {
    const auto sets = parse_fixture("rccl_mi300x.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.tool == "rccl-tests");
    CHECK(m.version == "develop:5d1e9b7");
    CHECK(m.op == collective_op::all_reduce);
    CHECK(m.ranks == 8);
    CHECK(m.nodes == 1);
    CHECK(m.hosts == std::vector<std::string>{"gpu-53"});
    CHECK(m.gpu == "AMD Instinct MI300X");
    CHECK(m.rows.size() == 6);
    CHECK(m.warnings.empty());
}

TEST_CASE("rccl-tests -O 0: only the in-place block") {
    const auto sets = parse_fixture("rccl_inplace_only_O0.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.tool == "rccl-tests");
    CHECK(m.op == collective_op::all_gather);
    REQUIRE(m.rows.size() == 4);
    for (const auto& r : m.rows) {
        REQUIRE(r.inplace_time);
        CHECK(in_us(*r.inplace_time) == in_us(r.time));
    }
    CHECK(in_us(m.rows[0].time) == Approx(20.37));
    CHECK(in_GBps(m.rows.back().busbw) == Approx(317.80));
    CHECK(any_warning(m, "in-place results only"));
}

TEST_CASE("nccl-tests with the out-of-place block printed blank") {
    // Header of both blocks, rows with only the in-place columns (nccl-tests prints spaces).
    const std::string log =
        "# Collective test starting: reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     1048576        262144     float     sum       0                                        20.00   52.43   52.43      0\n";
    const auto sets = parse_measurements(log, "blank.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::reduce);
    REQUIRE(sets[0].rows.size() == 1);
    CHECK(in_us(sets[0].rows[0].time) == 20.0);
    CHECK(in_GBps(sets[0].rows[0].inplace_busbw.value()) == Approx(52.43));
}

TEST_CASE("a partial table is accepted, the skipped lines are named") {
    const auto sets = parse_fixture("partial_table.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].rows.size() == 5);
    CHECK(any_warning(sets[0], "skipped 3 unreadable row(s)"));
    CHECK(any_warning(sets[0], "19, 22, 24"));
}

TEST_CASE("rows with NaN or negative values are skipped with a warning") {
    const auto sets = parse_fixture("nan_negative_rows.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].rows.size() == 6);
    CHECK(any_warning(sets[0], ":18: skipped a row with time nan"));
    CHECK(any_warning(sets[0], ":21: skipped a row with time -12.5"));
    for (const auto& r : sets[0].rows) CHECK(usable(r));
}

TEST_CASE("bad input: parse_error with the 1-based line") {
    SECTION("empty") {
        const auto e = error_of(fixture("empty.log"), "empty.log");
        CHECK(e.line() == 1);
        CHECK_THAT(std::string(e.what()), Contains("empty input"));
    }
    SECTION("whitespace only") { CHECK(error_of(fixture("whitespace_only.log"), "ws.log").line() == 1); }
    SECTION("binary data") {
        const auto e = error_of(fixture("garbage.bin"), "garbage.bin");
        CHECK(e.line() == 1);
        CHECK_THAT(std::string(e.what()), Contains("binary data"));
    }
    SECTION("binary data after some text") {
        const auto e = error_of(std::string("# nThread 1 nGpus 1\n#\n\x01\x02\x03 junk\n") + std::string(1, '\0') + "\n", "late.bin");
        CHECK(e.line() == 3);
    }
    SECTION("a log cut inside its first row") {
        const auto e = error_of(fixture("truncated_row.log"), "truncated_row.log");
        CHECK(e.line() == 12);
        CHECK_THAT(std::string(e.what()), Contains("truncated") && Contains("13 columns") && Contains("line 10"));
    }
    SECTION("a table that names no collective") {
        const auto e = error_of(fixture("no_op_named.log"), "no_op_named.log");
        CHECK(e.line() == 8);
        // ... readable once the op is given, or named by the file.
        CHECK(parse_fixture("no_op_named.log", collective_op::broadcast)[0].op == collective_op::broadcast);
        CHECK(parse_measurements(fixture("no_op_named.log"), "runs/broadcast-a10.log")[0].op == collective_op::broadcast);
    }
    SECTION("a test commscale does not model") {
        const auto e = error_of("# Collective test starting: hypercube_perf\n" + fixture("no_op_named.log"), "h.log");
        CHECK_THAT(std::string(e.what()), Contains("hypercube_perf"));
    }
    SECTION("prose without a table") {
        const auto e = error_of("hello\nworld\n", "prose.txt");
        CHECK(e.line() == 2);
    }
}

TEST_CASE("line endings, byte order mark and launcher prefixes do not change the result") {
    const std::string lf = fixture("nccl_2_20_gb10_allreduce.log");
    std::string crlf;
    for (char c : lf) {
        if (c == '\n') crlf += '\r';
        crlf += c;
    }
    const auto a = parse_measurements(lf, "a.log"), b = parse_measurements("\xEF\xBB\xBF" + crlf, "a.log");
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0].rows == b[0].rows);
    CHECK(a[0].ranks == b[0].ranks);
    std::string tagged;
    std::size_t start = 0;
    while (start < lf.size()) {
        const auto end = lf.find('\n', start);
        tagged += "[1,0]<stdout>: " + lf.substr(start, end - start) + "\n";
        if (end == std::string::npos) break;
        start = end + 1;
    }
    const auto c = parse_measurements(tagged, "a.log");
    REQUIRE(c.size() == 1);
    CHECK(c[0].rows == a[0].rows);
}

TEST_CASE("several data types in one table (-d all) give one set per type") {
    const std::string log =
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n"
        "     2097152        524288     float     sum      -1    30.00   69.91  122.33      0    30.00   69.91  122.33      0\n"
        "     1048576        524288      half     sum      -1    19.00   55.19   96.58      0    19.00   55.19   96.58      0\n"
        "     2097152       1048576      half     sum      -1    29.00   72.32  126.55      0    29.00   72.32  126.55      0\n";
    const auto sets = parse_measurements(log, "types.log");
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].dtype == "float");
    CHECK(sets[1].dtype == "half");
    CHECK(sets[0].ranks == 8);  // 91.75 / 52.43 = 1.75
    CHECK(in_us(sets[1].rows[0].time) == 19.0);
}

TEST_CASE("nccl-tests -J JSON: string booleans, nan, padded root") {
    const auto sets = parse_fixture("nccl_tests_J.json");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::all_reduce);  // from args[0]
    CHECK(m.ranks == 8);
    CHECK(m.nodes == 1);
    CHECK(m.gpu == "NVIDIA H100 80GB HBM3");
    CHECK(m.dtype == "float");
    CHECK(m.redop == "sum");
    REQUIRE(m.rows.size() == 6);  // 7 results, one with an in-place "nan"
    CHECK(any_warning(m, "results[2]"));
    CHECK(in_bytes(m.rows.back().bytes) == 134217728);
    CHECK(in_us(m.rows.back().time) == Approx(670.45));
    CHECK(in_us(m.rows.back().inplace_time.value()) == Approx(677.15));
    REQUIRE(m.avg_busbw);
    CHECK(in_GBps(*m.avg_busbw) == Approx(92.585714));
}

TEST_CASE("nccl-tests JSON with other key spellings") {
    const std::string doc = R"({"results": [{"bytes": "1048576", "count": 262144, "type": "float", "redop": "sum", "root": "    -1",
        "out_of_place": {"time_us": 20.0, "algbw": 52.43, "busbw": 91.75}}]})";
    const auto sets = parse_measurements(doc, "all_reduce.json");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::all_reduce);  // from the file name
    CHECK(sets[0].ranks == 8);                       // from busbw / algbw
    CHECK(in_bytes(sets[0].rows[0].bytes) == 1048576);
    CHECK_FALSE(sets[0].rows[0].inplace_time);
}

TEST_CASE("commscale probe JSON") {
    const auto sets = parse_fixture("probe_h100.json");
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].tool == "commscale-probe");
    CHECK(sets[0].version == "2.28.9");
    CHECK(sets[0].op == collective_op::all_reduce);
    CHECK(sets[1].op == collective_op::all_gather);
    CHECK(sets[0].ranks == 8);
    CHECK(sets[0].nodes == 1);
    CHECK(sets[0].hosts == std::vector<std::string>{"h100-a"});
    CHECK(sets[0].gpu == "NVIDIA H100 80GB HBM3");
    CHECK(sets[0].dtype == "float");
    REQUIRE(sets[0].rows.size() == 10);
    CHECK(in_bytes(sets[0].rows.back().bytes) == 1073741824);
    CHECK(in_us(sets[0].rows.back().time) == Approx(5094.51));
    CHECK(in_us(sets[0].rows.back().nccl_predicted.value()) == Approx(4737.89));
    for (const auto& r : sets[1].rows) CHECK_FALSE(r.nccl_predicted);
}

TEST_CASE("invalid probe JSON names the field") {
    const std::string ok = R"({"format": "commscale-probe", "version": 1,
        "machine": {"gpu": "G", "ranks": 2, "nodes": 1, "hosts": ["h"], "nccl_version": "2.28.9"},
        "collectives": [{"op": "all_reduce", "rows": [{"bytes": 8, "count": 2, "time_us": 12.3, "algbw_GBps": 0.0, "busbw_GBps": 0.0}]}]})";
    REQUIRE(parse_measurements(ok, "p.json").size() == 1);
    auto fails_with = [&](std::string doc, const std::string& from, const std::string& to, const std::string& text) {
        const auto at = doc.find(from);
        REQUIRE(at != std::string::npos);
        doc.replace(at, from.size(), to);
        REQUIRE_THROWS_AS(parse_measurements(doc, "p.json"), input_error);
        REQUIRE_THROWS_WITH(parse_measurements(doc, "p.json"), Contains(text));
    };
    fails_with(ok, "\"version\": 1", "\"version\": 7", "version");
    fails_with(ok, "\"ranks\": 2", "\"ranks\": 0", "machine.ranks");
    fails_with(ok, "\"ranks\": 2,", "", "machine.ranks");
    fails_with(ok, "\"all_reduce\"", "\"allreduse\"", "did you mean");
    fails_with(ok, "\"time_us\": 12.3", "\"time_us\": \"fast\"", "collectives[0].rows[0].time_us");
    fails_with(ok, "\"time_us\": 12.3", "\"time_us\": -1", "collectives[0].rows");
}

TEST_CASE("invalid JSON: parse_error with the line") {
    const auto e = error_of("{\n  \"format\": \"commscale-probe\",\n  \"version\": 1,\n  oops\n}\n", "bad.json");
    CHECK(e.line() == 4);
    const auto deep = error_of(std::string(100000, '[') + std::string(100000, ']'), "deep.json");
    CHECK_THAT(std::string(deep.what()), Contains("nested"));
    CHECK(error_of("{\"format\": \"other\"}", "o.json").line() == 1);
    CHECK(error_of("{\"something\": 1}", "o.json").line() == 1);
    CHECK(error_of("[]", "o.json").line() == 1);
}

TEST_CASE("robustness: truncations and byte flips of every fixture only throw input errors") {
    const char* names[] = {"ml_engineering_a100_allreduce.log", "oci_a100_allreduce_2.13era.log", "per_iteration_I.log",
                           "duplicated_interleaved.log",        "rccl_mi300x.log",                "nccl_tests_J.json",
                           "probe_h100.json",                   "unified_openmpi_prefixed.log"};
    std::size_t parsed = 0, rejected = 0;
    std::uint32_t seed = 12345;
    auto next = [&] {
        seed = seed * 1664525u + 1013904223u;  // Numerical Recipes LCG
        return seed >> 8;
    };
    for (const char* name : names) {
        const std::string text = fixture(name);
        for (int k = 0; k < 60; ++k) {
            std::string t = text;
            if (k % 3 == 0) t.resize(next() % (t.size() + 1));
            else
                for (int f = 0; f < 1 + k % 7; ++f) t[next() % t.size()] = static_cast<char>(next() & 0xff);
            try {
                const auto sets = parse_measurements(t, name, collective_op::all_reduce);
                ++parsed;
                for (const auto& m : sets) {
                    CHECK_FALSE(m.rows.empty());
                    for (const auto& r : m.rows) CHECK(usable(r));
                }
            } catch (const input_error&) {
                ++rejected;
            }
        }
    }
    CHECK(parsed + rejected == 480);
    CHECK(parsed > 0);
}

TEST_CASE("data check failures are reported and the timings kept") {
    const std::string log =
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     1048576        262144     float     sum      -1    20.00   52.43   91.75     12    20.00   52.43   91.75      0\n"
        "# Out of bounds values : 12 FAILED\n"
        "# Avg bus bandwidth    : 91.75 \n";
    const auto sets = parse_measurements(log, "check.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].rows.size() == 1);
    CHECK(any_warning(sets[0], ":3: the row for 1048576 bytes reports wrong results (12)"));
    CHECK(any_warning(sets[0], ":4: the data check failed"));
}

TEST_CASE("old per-collective leading columns (no redop for broadcast, no redop/root for all_gather)") {
    const std::string bcast =
        "$ ./build/broadcast_perf -b 1M -e 2M -g 4\n"
        "#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "     1048576        262144   float       0    20.00   52.43   52.43  0e+00    20.50   51.15   51.15  0e+00\n"
        "     2097152        524288   float       0    30.00   69.91   69.91  0e+00    30.50   68.76   68.76  0e+00\n";
    auto sets = parse_measurements(bcast, "b.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::broadcast);
    CHECK(sets[0].redop.empty());
    CHECK(in_us(sets[0].rows[1].inplace_time.value()) == Approx(30.5));
    const std::string gather =
        "$ ./build/all_gather_perf -b 1M -e 2M -g 4\n"
        "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "     1048576         65536   float    20.00   52.43   39.32  0e+00    20.50   51.15   38.36  0e+00\n";
    sets = parse_measurements(gather, "g.log");
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].op == collective_op::all_gather);
    CHECK(sets[0].ranks == 4);  // 39.32 / 52.43 = 0.75 = 3/4
    CHECK(in_GBps(sets[0].rows[0].busbw) == Approx(39.32));
}

TEST_CASE("read_measurements names the file, a missing file is an input_error") {
    const auto path = std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/two_collectives.log";
    const auto sets = read_measurements(path);
    REQUIRE(sets.size() == 2);
    try {
        (void)read_measurements(std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/empty.log");
        FAIL("expected a parse_error");
    } catch (const parse_error& e) {
        CHECK_THAT(std::string(e.what()), Contains("empty.log:1"));
    }
    REQUIRE_THROWS_AS(read_measurements("/nonexistent/log.txt"), input_error);
    REQUIRE_THROWS_WITH(read_measurements("/nonexistent/log.txt", std::nullopt, "fit.logs[0]"), Contains("fit.logs[0]"));
}

TEST_CASE("fixture: old per-collective columns, broadcast with root and no redop, all_gather with neither") {
    auto sets = parse_fixture("old_columns_broadcast.log");
    REQUIRE(sets.size() == 1);
    const auto& b = sets[0];
    CHECK(b.op == collective_op::broadcast);  // from the command line
    CHECK(b.redop.empty());
    CHECK(b.ranks == 4);
    CHECK(b.gpu == "Tesla V100-SXM2-16GB");
    REQUIRE(b.rows.size() == 4);
    CHECK(in_us(b.rows[0].time) == Approx(22.10));
    CHECK(in_GBps(b.rows[3].busbw) == Approx(78.18));     // broadcast: busbw = algbw
    CHECK(in_us(b.rows[3].inplace_time.value()) == Approx(108.10));
    sets = parse_fixture("old_columns_all_gather.log");
    REQUIRE(sets.size() == 1);
    const auto& g = sets[0];
    CHECK(g.op == collective_op::all_gather);
    CHECK(g.ranks == 4);
    REQUIRE(g.rows.size() == 4);
    CHECK(g.rows[0].count == 65536);                 // per rank: 1 MiB / 4 B / 4 ranks
    CHECK(in_GBps(g.rows[1].busbw) == Approx(50.41));    // (n-1)/n = 0.75 of algbw 67.22
    CHECK(in_GBps(g.rows[2].inplace_busbw.value()) == Approx(58.25));
}

TEST_CASE("fixture: out-of-place block printed blank, the in-place columns are the measurement") {
    const auto sets = parse_fixture("blank_out_of_place.log");
    REQUIRE(sets.size() == 1);
    const auto& m = sets[0];
    CHECK(m.op == collective_op::reduce);
    CHECK(m.ranks == 8);
    REQUIRE(m.rows.size() == 4);
    for (const auto& r : m.rows) {
        REQUIRE(r.inplace_time);
        CHECK(in_us(r.time) == in_us(*r.inplace_time));
    }
    CHECK(in_us(m.rows[0].time) == Approx(20.00));
    CHECK(in_GBps(m.rows[3].busbw) == Approx(106.73));
}

TEST_CASE("fixture: -d all gives one set per data type, rows in order") {
    const auto sets = parse_fixture("d_all.log");
    const std::vector<std::string> types{"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16"};
    REQUIRE(sets.size() == types.size());
    for (std::size_t i = 0; i < types.size(); ++i) {
        INFO(types[i]);
        CHECK(sets[i].dtype == types[i]);
        CHECK(sets[i].op == collective_op::all_reduce);
        CHECK(sets[i].ranks == 8);  // busbw / algbw = 1.75 = 2(n-1)/n, and 8 device lines
        REQUIRE(sets[i].rows.size() == 3);
        CHECK(in_bytes(sets[i].rows[0].bytes) == 1048576);
        CHECK(in_bytes(sets[i].rows[2].bytes) == 4194304);
    }
    CHECK(sets[0].rows[0].count == 1048576);  // int8: one element per byte
    CHECK(sets[8].rows[0].count == 131072);   // double: 8 bytes per element
    CHECK(in_GBps(sets[0].rows[2].busbw) == Approx(91.75));
}
