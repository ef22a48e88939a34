// The catalog commands of the CLI (CLI.md "Catalog"): run the built binary and check its output
// and exit codes.
#include <string>

#include <nlohmann/json.hpp>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/links.hpp>

#include "cli_runner.hpp"

using namespace cli_test;

TEST_CASE("commscale link nvlink4 --json prints 450 GB/s per direction and 900 duplex") {
    const run_result r = run("link nvlink4 --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("name") == "nvlink4");
    CHECK(j.at("kind") == "scale_up");
    CHECK(j.at("per_direction_GBps").get<double>() == 450.0);
    CHECK(j.at("duplex_GBps").get<double>() == 900.0);
    CHECK(j.at("latency_us").is_null());
    CHECK(j.at("lanes").get<int>() == 2);
    CHECK(j.at("links").get<int>() == 18);
    CHECK(j.contains("source"));
}

TEST_CASE("commscale link ib-hdr-4x --json: 200 Gbps = 25 GB/s, latency 0.6 us") {
    const run_result r = run("link ib-hdr-4x --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("per_direction_GBps").get<double>() == Approx(25.0));
    CHECK(j.at("latency_us").get<double>() == Approx(0.6));
}

TEST_CASE("an unknown link name exits 2 with one line suggesting the closest names") {
    require_invalid("link nvlnk4", "did you mean");
    const run_result r = run("link nvlnk4");
    CHECK_THAT(r.err, Catch::Matchers::Contains("nvlink4") && Catch::Matchers::Contains("nvlnk4"));
    require_invalid("accelerator h100 --json", "h100-sxm");
    require_invalid("link", "NAME");                       // missing NAME
    require_invalid("links --kind sideways", "--kind");  // bad filter
}

TEST_CASE("commscale links --json lists the whole catalog, --kind filters it") {
    const run_result r = run("links --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.at("links").size() == commscale::all_links().size());
    for (const auto& e : j.at("links")) {
        CHECK(e.contains("per_direction_GBps"));
        CHECK(e.at("duplex_GBps").get<double>() == Approx(2.0 * e.at("per_direction_GBps").get<double>()));
    }
    const auto up = nlohmann::json::parse(run("links --kind scale_up --json").out);
    for (const auto& e : up.at("links")) CHECK(e.at("kind") == "scale_up");
    CHECK(up.at("links").size() < j.at("links").size());
    const run_result table = run("links");
    CHECK(table.rc == 0);
    CHECK_THAT(table.out, Catch::Matchers::Contains("pcie5-x16") && Catch::Matchers::Contains("ib-gdr-8x"));
}

TEST_CASE("commscale accelerator h100-sxm --json and accelerators --json") {
    const run_result r = run("accelerator h100-sxm --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("memory_GiB").get<double>() == 80.0);
    CHECK(j.at("memory_bandwidth_GBps").get<double>() == Approx(3350.0));
    CHECK(j.at("peak_tflops").at("bf16").get<double>() == Approx(989.5));
    CHECK(j.at("peak_tflops").at("fp8").get<double>() == Approx(1979.0));
    CHECK(j.at("scale_up_link") == "nvlink4");
    const auto v100 = nlohmann::json::parse(run("accelerator v100-sxm2 --json").out);
    CHECK(v100.at("peak_tflops").at("bf16").is_null());
    const auto all = nlohmann::json::parse(run("accelerators --json").out);
    CHECK(all.at("accelerators").size() == commscale::all_accelerators().size());
    const run_result table = run("accelerators");
    CHECK(table.rc == 0);
    CHECK_THAT(table.out, Catch::Matchers::Contains("mi300x") && Catch::Matchers::Contains("1307.4"));
    CHECK(run("accelerator gaudi2").rc == 0);
    CHECK(run("link tcpxo --help").rc == 0);
}

TEST_CASE("commscale convert 400Gbps GB/s prints 50 (CLI.md), 1GiB GB prints 1.073741824") {
    // 400 Gbit/s / 8 bit/B = 50 GB/s; 2^30 B = 1.073741824e9 B.
    const run_result r = run("convert 400Gbps GB/s");
    REQUIRE(r.rc == 0);
    CHECK(std::stod(r.out) == Approx(50.0).epsilon(1e-12));
    const run_result g = run("convert 1GiB GB");
    REQUIRE(g.rc == 0);
    CHECK(std::stod(g.out) == Approx(1.073741824).epsilon(1e-12));
    const auto j = run_json("convert 400Gbps GB/s");
    CHECK(j.at("result").get<double>() == Approx(50.0).epsilon(1e-12));
    CHECK(j.at("unit") == "GB/s");
}

TEST_CASE("cluster and model values may be JSON written inline (what the Python module passes for a dict)") {
    // the CLI.md example pod, inline: 4 x 8 H100 on NDR (400 Gb/s = 50 GB/s per NIC, 8 per node)
    const std::string pod = R"('{"name": "my-pod", "nodes": 4, "gpus_per_node": 8, "accelerator": "h100-sxm",)"
                            R"( "intra": {"link": "nvlink4", "fabric": "switch"},)"
                            R"( "inter": {"link": "ib-ndr-4x", "nics_per_node": 8}}')";
    const run_result c = run("cluster " + pod + " --json");
    REQUIRE(c.rc == 0);
    const auto j = nlohmann::json::parse(c.out);
    CHECK(j.at("name") == "my-pod");
    CHECK(j.at("nodes") == 4);
    const run_result ar = run("collective --op all_reduce --bytes 1GiB --cluster " + pod + " --json");
    REQUIRE(ar.rc == 0);
    CHECK(nlohmann::json::parse(ar.out).at("ranks") == 32);
    // a config.json inline: Llama 2 7B's shape (Touvron et al. 2023: 6.74 B parameters)
    const run_result m = run(R"(model '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,)"
                             R"( "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000,)"
                             R"( "max_position_embeddings": 4096}' --json)");
    REQUIRE(m.rc == 0);
    CHECK(nlohmann::json::parse(m.out).at("parameters").get<double>() == Approx(6.74e9).epsilon(0.01));
    // errors name the flag and the key
    require_invalid(R"(collective --op all_reduce --bytes 1MiB --cluster '{"name": "x"}')", "--cluster.gpus_per_node");
    require_invalid(R"(collective --op all_reduce --bytes 1MiB --cluster '{"name": ')", "--cluster");
    require_invalid(R"(step --model '{"model_type": "llama", "hidden_size": -1}')", "--model");
}

TEST_CASE("cluster NAME takes the topology flags and --gpus as every command does") {
    const run_result r = run("cluster dgx-a100 --gpus 32 --inter ib-ndr-4x --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("nodes") == 4);  // 32 GPUs / 8 per DGX A100
    CHECK(j.at("inter").at("link") == "ib-ndr-4x");
    CHECK(j.at("name") == "dgx-a100+flags");
    // --nodes alone keeps the preset's name, as before
    CHECK(nlohmann::json::parse(run("cluster dgx-h100 --nodes 4 --json").out).at("name") == "dgx-h100");
    require_invalid("cluster dgx-h100 --gpus 12", "--gpus");
    require_invalid("cluster dgx-h100 --gpus 16 --nodes 2", "--gpus");
}

TEST_CASE("every command's --help is its usage and the options generated from its grammar") {
    // The commands as `commscale --help` lists them ("  NAME  summary" lines under "commands:").
    const run_result overview = run("--help");
    REQUIRE(overview.rc == 0);
    std::vector<std::string> commands;
    std::istringstream lines(overview.out.substr(overview.out.find("commands:")));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("  ", 0) == 0) commands.push_back(line.substr(2, line.find(' ', 2) - 2));
    CHECK(commands.size() >= 18);
    for (const std::string& c : commands) {
        INFO("commscale " << c << " --help");
        const run_result h = run(c + " --help");
        CHECK(h.rc == 0);
        CHECK(h.err.empty());
        CHECK(h.out.rfind("usage: commscale " + c, 0) == 0);
        CHECK_THAT(h.out, Catch::Matchers::Contains("\n  --json ") && Catch::Matchers::Contains("\n  --help "));
    }
    // Options with their one-line help; the topology flags grouped (docs/CLI.md "Topology flags").
    const std::string collective = run("collective --help").out;
    CHECK_THAT(collective, Catch::Matchers::Contains("  --ranks-per-node VALUE "));
    CHECK_THAT(collective, Catch::Matchers::Contains("parameter_server_sharded or pat"));  // every --algo value
    const auto topology = collective.find("\ntopology flags:\n");
    REQUIRE(topology != std::string::npos);
    CHECK(collective.find("  --scale-up-domain VALUE ", topology) != std::string::npos);
    CHECK(collective.find("  --bytes VALUE ") < topology);
    const std::string step = run("step --help").out;
    CHECK_THAT(step, Catch::Matchers::Contains("  --no-dp-overlap ") && Catch::Matchers::Contains("  --sequence-parallel "));
}
