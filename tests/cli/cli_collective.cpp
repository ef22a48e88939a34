// Tests of the CLI commands `clusters`, `cluster`, `collective` and `sweep` and of the topology
// flags, run through the built binary (COMMSCALE_CLI_PATH): exit codes (0 / 2), the JSON keys of
// CLI.md, published figures reproduced end to end, and files written whole or not at all.
#include "cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace cli_test;


TEST_CASE("clusters and cluster list the presets, --nodes overrides, unknown names exit 2") {
    const json list = run_json("clusters");
    REQUIRE(list["clusters"].size() == 14);
    std::set<std::string> names;
    for (const auto& c : list["clusters"]) names.insert(c["name"].get<std::string>());
    for (const char* n : {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "dgx-b300", "gb200-nvl72", "gb300-nvl72",
                          "aws-p4d", "aws-p5", "gcp-a3-mega", "mi300x-roce", "mi355x-roce", "gaudi2-hls", "baskerville"})
        CHECK(names.count(n) == 1);
    CHECK(run("clusters").rc == 0);

    // impact-of-gpu-networking-part2, Appendix A: 57 nodes, one HDR NIC for 4 GPUs.
    const json b = run_json("cluster baskerville");
    CHECK(b["nodes"] == 57);
    CHECK(b["inter"]["nics_per_node"] == 1);
    CHECK(b["derived"]["gpus_per_nic"] == 4);
    CHECK(b["derived"]["node_injection_Gbps"].get<double>() == Approx(200.0));
    CHECK(run_json("cluster dgx-h100 --nodes 4")["derived"]["total_gpus"] == 32);

    require_invalid("cluster dgx-h10", "did you mean dgx-h100");
    require_invalid("cluster dgx-h100 --nodes 0", "--nodes");
    require_invalid("cluster", "cluster");
}

TEST_CASE("collective: JSON keys of CLI.md, ideal ring all-reduce of 8 GB on 8 x NVLink3 = 8 GB x 1.75 / 300 GB/s") {
    const json j = run_json("collective --op all_reduce --bytes 8GB --cluster dgx-a100 --algo ring --efficiency ideal");
    CHECK(keys(j) == std::set<std::string>{"op", "algorithm", "ranks", "nodes", "bytes", "time_us", "algbw_GBps",
                                           "busbw_GBps", "latency_us", "transfer_us", "bottleneck", "limiting"});
    CHECK(j["op"] == "all_reduce");
    CHECK(j["algorithm"] == "ring");
    CHECK(j["ranks"] == 8);
    CHECK(j["nodes"] == 1);
    CHECK(j["bytes"] == 8000000000LL);
    // REFERENCE.md "Data movement": 2(n-1)/n x 8 GB over 300 GB/s per direction = 0.04667 s.
    const double expected_us = 8e9 * 1.75 / 300e9 * 1e6;
    CHECK(j["transfer_us"].get<double>() == Approx(expected_us).epsilon(1e-9));
    CHECK(j["time_us"].get<double>() == Approx(j["latency_us"].get<double>() + j["transfer_us"].get<double>()));
    CHECK(j["time_us"].get<double>() == Approx(expected_us).epsilon(1e-3));  // latency negligible at 8 GB
    // nccl-tests: algbw = S / t, busbw = algbw x 2(n-1)/n -> the link's 300 GB/s.
    CHECK(j["algbw_GBps"].get<double>() == Approx(8e9 / (j["time_us"].get<double>() * 1e-6) / 1e9).epsilon(1e-9));
    CHECK(j["busbw_GBps"].get<double>() == Approx(300.0).epsilon(1e-3));
    CHECK_THAT(j["bottleneck"].get<std::string>(), Catch::Matchers::Contains("nvlink3"));
    CHECK(j["limiting"] == json{{"kind", "intra_link"}, {"link", "nvlink3"}, {"sharing", 1}});

    // One rank costs nothing and reports no NaN.
    const json one = run_json("collective --op all_reduce --bytes 1GiB --ranks 1");
    CHECK(one["time_us"] == 0.0);
    CHECK(one["busbw_GBps"] == 0.0);
    // Without --cluster the default preset is one DGX A100 (8 ranks); text output works too.
    CHECK(run_json("collective --op all_gather --bytes 1GiB")["ranks"] == 8);
    const run_result text = run("collective --op all_reduce --bytes 1GiB");
    CHECK(text.rc == 0);
    CHECK_THAT(text.out, Catch::Matchers::Contains("busbw"));
}

TEST_CASE("collective: the Baskerville 1x4 / 2x2 / 4x1 orderings (impact-of-gpu-networking-part2)") {
    // GPT-2 Large bf16 gradients, 1.32 GiB. Measured: default 0.009 / 0.309 / 0.158 s;
    // ring 0.009 / 0.584 / 0.158 s; tree 0.013 / 0.309 / 0.158 s.
    const std::string base = "collective --cluster baskerville --op all_reduce --bytes 1.32GiB ";
    auto t = [&](const std::string& layout, const std::string& algo) {
        const json j = run_json(base + layout + " --algo " + algo);
        return j["time_us"].get<double>() * 1e-6;
    };
    const std::string l14 = "--nodes 1", l22 = "--nodes 2 --ranks 4 --ranks-per-node 2",
                      l41 = "--nodes 4 --ranks 4 --ranks-per-node 1";
    CHECK(run_json(base + l22)["ranks"] == 4);
    CHECK(run_json(base + l22)["nodes"] == 2);
    const double auto14 = t(l14, "auto"), auto22 = t(l22, "auto"), auto41 = t(l41, "auto");
    const double ring14 = t(l14, "ring"), ring22 = t(l22, "ring"), ring41 = t(l41, "ring");
    const double tree14 = t(l14, "tree"), tree22 = t(l22, "tree");
    // 1 x 4 far fastest (measured 0.009 s vs 0.158 and 0.309 s: 17x and 34x). The tolerance is
    // 5x: the model's tree on 2 x 2 is faster than the measured 0.309 s (it does not model the
    // document's extra NCCL overheads), which narrows that ratio.
    CHECK(auto14 * 5 < auto22);
    CHECK(auto14 * 5 < auto41);
    // Ring: 2 x 2 slower than 4 x 1, because two GPUs share one NIC (0.584 vs 0.158 s).
    CHECK(ring22 > ring41);
    // On 2 x 2 tree beats ring (0.309 vs 0.584 s); on 1 x 4 ring beats tree (0.009 vs 0.013 s).
    CHECK(tree22 < ring22);
    CHECK(ring14 < tree14);
    // The shared NIC is named as the bottleneck of the 2 x 2 ring.
    const json j = run_json(base + l22 + " --algo ring");
    CHECK_THAT(j["bottleneck"].get<std::string>(), Catch::Matchers::Contains("ib-hdr-4x"));
    CHECK_THAT(j["bottleneck"].get<std::string>(), Catch::Matchers::Contains("shared by 2"));
    CHECK(j["limiting"] == json{{"kind", "nic"}, {"link", "ib-hdr-4x"}, {"sharing", 2}});
    // 1 x 4 on NVLink3: within a factor 2 of the measured 0.009 s.
    CHECK(ring14 == Approx(0.009).epsilon(1.0));
}

TEST_CASE("topology flags build and override clusters") {
    // CLI.md's flag form: 4 nodes of 8 GPUs, NVLink4 inside, NDR across.
    json j = run_json("collective --op all_reduce --bytes 1GiB --nodes 4 --gpus-per-node 8 --intra nvlink4 --inter ib-ndr-4x");
    CHECK(j["ranks"] == 32);
    CHECK(j["nodes"] == 4);
    // Overriding a preset: fewer NICs make the inter-node all-reduce slower.
    const double full = run_json("collective --op all_reduce --bytes 4GiB --cluster dgx-h100 --nodes 4 --algo ring")["time_us"];
    const double one_nic =
        run_json("collective --op all_reduce --bytes 4GiB --cluster dgx-h100 --nodes 4 --algo ring --nics-per-node 1")["time_us"];
    CHECK(one_nic > 2 * full);
    // A slower fabric is slower: 7:1 oversubscription over many leaves cannot be faster.
    const double blocking = run_json(
        "collective --op all_reduce --bytes 4GiB --cluster dgx-h100 --nodes 128 --algo ring --oversubscription 7")["time_us"];
    const double nonblocking = run_json("collective --op all_reduce --bytes 4GiB --cluster dgx-h100 --nodes 128 --algo ring")["time_us"];
    CHECK(blocking >= nonblocking);
    // `cluster NAME --json` is a cluster file --cluster reads back.
    const run_result dump = run("cluster aws-p5 --nodes 2 --json");
    REQUIRE(dump.rc == 0);
    const fs::path file = scratch() / "p5.json";
    std::ofstream(file) << dump.out;
    j = run_json("collective --op all_reduce --bytes 1GiB --cluster " + file.string());
    CHECK(j["ranks"] == 16);
    CHECK(j["nodes"] == 2);
}

TEST_CASE("collective: invalid input exits 2 naming the option") {
    const std::string ok = "collective --op all_reduce --bytes 1GiB";
    require_invalid("collective --bytes 1GiB", "--op");
    require_invalid("collective --op all_reduce", "--bytes");
    require_invalid("collective --op allreduce --bytes 1GiB", "all_reduce");
    require_invalid(ok + " --algo rnig", "ring");
    require_invalid(ok + " --efficiency fast", "--efficiency");
    require_invalid("collective --op all_reduce --bytes 400Gbps", "--bytes");  // a rate is not a size
    require_invalid("collective --op all_reduce --bytes -5MB", "--bytes");
    require_invalid("collective --op all_reduce --bytes nan", "--bytes");
    require_invalid(ok + " --nodes 0", "--nodes");
    require_invalid(ok + " --gpus-per-node -1", "--gpus-per-node");
    require_invalid(ok + " --intra nvlink9", "--intra");
    require_invalid(ok + " --inter ib-nrd-4x", "ib-ndr-4x");
    require_invalid(ok + " --intra-fabric torus", "--intra-fabric");
    require_invalid(ok + " --accelerator h100", "--accelerator");
    require_invalid(ok + " --oversubscription 0.5", "--oversubscription");
    require_invalid(ok + " --oversubscription nan", "--oversubscription");
    require_invalid(ok + " --cluster nosuch", "--cluster");
    require_invalid(ok + " --cluster " + (scratch() / "missing.json").string(), "--cluster");
    require_invalid(ok + " --ranks 9", "--ranks");              // dgx-a100 has 8 GPUs
    require_invalid(ok + " --nodes 2 --ranks 16 --ranks-per-node 4", "--ranks");  // needs 4 nodes
    require_invalid(ok + " --nodes 2 --nics-per-node 0", "--nics-per-node");
    require_invalid(ok + " --bogus 1", "--bogus");
    // A cluster file with a bad field: the message names the file and the field path.
    const fs::path bad = scratch() / "bad.json";
    std::ofstream(bad) << R"({"nodes": 2, "gpus_per_node": 8, "intra": {"link": "nvlink4"},
                             "inter": {"link": "ib-ndr-4x", "nics_per_node": -1}})";
    require_invalid(ok + " --cluster " + bad.string(), "cluster.inter.nics_per_node");
}

TEST_CASE("sweep: nccl-tests-like rows, JSON keys, shape of the curve") {
    const json j = run_json("sweep --op all_reduce --min 1KiB --max 1GiB --cluster dgx-a100");
    REQUIRE(keys(j) == std::set<std::string>{"rows"});
    const auto& rows = j["rows"];
    REQUIRE(rows.size() == 21);  // 2^10 .. 2^30
    double prev_bytes = 0;
    for (const auto& r : rows) {
        CHECK(keys(r) == std::set<std::string>{"bytes", "time_us", "algbw_GBps", "busbw_GBps", "algorithm"});
        CHECK(r["bytes"].get<double>() > prev_bytes);
        prev_bytes = r["bytes"].get<double>();
        CHECK(r["time_us"].get<double>() > 0);
        CHECK(std::isfinite(r["busbw_GBps"].get<double>()));
    }
    CHECK(rows.front()["bytes"] == 1024);
    CHECK(rows.back()["bytes"] == 1073741824LL);
    // Latency-bound at 1 KiB, near the ~80% plateau of 300 GB/s at 1 GiB (nccl-tests on 8 x A100:
    // 229 GB/s at 1 GiB, ml-engineering-networking).
    CHECK(rows.front()["busbw_GBps"].get<double>() < 10.0);
    CHECK(rows.back()["busbw_GBps"].get<double>() == Approx(229.04).epsilon(0.15));
    // Factor and text output.
    CHECK(run_json("sweep --op all_gather --min 8B --max 8MiB --factor 4")["rows"].size() == 11);
    const run_result text = run("sweep --op all_reduce --min 1MiB --max 4MiB");
    CHECK(text.rc == 0);
    CHECK_THAT(text.out, Catch::Matchers::Contains("busbw"));
}

TEST_CASE("sweep: invalid ranges exit 2") {
    require_invalid("sweep --op all_reduce --min 1MiB --max 1KiB", "--max");
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --factor 1", "--factor");
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --factor 0.5", "--factor");
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --factor nan", "--factor");
    require_invalid("sweep --op all_reduce --min 1B --max 1TB --factor 1.001", "--factor");  // > 4096 rows
    require_invalid("sweep --op all_reduce --min 0B --max 1MiB", "--min");
    require_invalid("sweep --op all_reduce --min 1GB/s --max 1MiB", "--min");
    require_invalid("sweep --op all_reduce --max 1MiB", "--min");
}

TEST_CASE("sweep --svg writes a well-formed standalone SVG, a failing command leaves no file") {
    const fs::path svg = scratch() / "busbw.svg";
    const run_result r = run("sweep --op all_reduce --min 1KiB --max 4GiB --cluster dgx-h100 --svg " + svg.string());
    INFO(r.err);
    REQUIRE(r.rc == 0);
    REQUIRE(fs::exists(svg));
    const std::string s = slurp(svg);
    CHECK(s.rfind("<?xml", 0) == 0);
    CHECK_THAT(s, Catch::Matchers::Contains("xmlns=\"http://www.w3.org/2000/svg\""));
    CHECK_THAT(s, Catch::Matchers::Contains("busbw (GB/s)"));
    CHECK_THAT(s, Catch::Matchers::Contains("message size (bytes, log2 scale)"));
    CHECK_THAT(s, Catch::Matchers::Contains("<polyline"));
    CHECK_THAT(s, Catch::Matchers::Contains("1KiB"));
    CHECK_THAT(s, Catch::Matchers::Contains("1GiB"));
    std::string why;
    CHECK(well_formed_xml(s, why));
    INFO(why);
    CHECK(std::count(s.begin(), s.end(), '\n') > 10);
    CHECK(s.find("nan") == std::string::npos);

    // A failing command (bad factor) neither creates the file nor touches an existing one.
    const fs::path fresh = scratch() / "fresh.svg";
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --factor 1 --svg " + fresh.string(), "--factor");
    CHECK_FALSE(fs::exists(fresh));
    std::ofstream(scratch() / "old.svg") << "old";
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --cluster nosuch --svg " + (scratch() / "old.svg").string(),
                    "--cluster");
    CHECK(slurp(scratch() / "old.svg") == "old");
    // An unwritable destination is invalid input, and no temporary file is left behind.
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --svg " + (scratch() / "no/such/dir/x.svg").string(), "--svg");
    require_invalid("sweep --op all_reduce --min 1KiB --max 1MiB --svg " + scratch().string(), "--svg");
    for (const auto& e : fs::directory_iterator(scratch()))
        CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
}
