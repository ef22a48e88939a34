// Hostile input through the `commscale` binary (COMMSCALE_CLI_PATH): every invalid invocation must
// exit 2 with exactly one line on stderr that names the option or JSON field, with nothing on
// stdout (CLI.md: "2 invalid input (one line on stderr naming the option or JSON field, the value
// given, and what is accepted)"); and a failing command that writes files (--out / --svg) must
// neither create a file nor touch an existing one.
#include "cli_runner.hpp"

#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using namespace cli_test;

namespace {

const std::string nccl_dir = std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/";

}  // namespace

TEST_CASE("hostile CLI: bad command names and options get exit 2 with a suggestion") {
    require_invalid("colective --op all_reduce --bytes 1GB", "did you mean collective");
    require_invalid("collective --op all_reduce --bytes 1GB --bogus 1", "--bogus");
    require_invalid("collective --op all_redcue --bytes 1GB", "did you mean all_reduce");
    require_invalid("link nvlnk4", "did you mean nvlink4");
    require_invalid("accelerator h100-sx", "h100-sxm");
    require_invalid("cluster dgx-h10", "dgx-h100");
    require_invalid("model llama3-8", "llama3-8b");
    require_invalid("convert 400Gbps GB/z", "unit");
}

TEST_CASE("hostile CLI: the grammar's own errors keep the contract (exit 2, one line naming the option)") {
    // docs/CLI.md "Conventions": flags take no value, a value option takes one, once.
    require_invalid("collective --op all_reduce --bytes 1GB --json=1", "--json: expected no value (a flag), got '1'");
    require_invalid("step --sequence-parallel=no", "--sequence-parallel");
    require_invalid("convert 1GiB GB --json=true", "--json");  // CLI11 alone would take it as --json
    require_invalid("convert 1GiB GB --json=", "--json");
    require_invalid("collective --op all_reduce --bytes", "--bytes: expected the buffer size");
    require_invalid("collective --op all_reduce --bytes 1GB --bytes 2GB", "'2GB' (given twice)");
    require_invalid("collective --op all_reduce --bytes 1GB --nodes 2 --nodes=4", "--nodes");  // a topology flag
    require_invalid("collective --op all_reduce --bytes 1GB --nodez 2", "did you mean --nodes");
    require_invalid("collective --op all_reduce --bytes 1GB extra", "unexpected argument 'extra'");
    require_invalid("convert 1GiB", "too few arguments");
    // "--" ends the options: what follows is positional, even when it starts with "-".
    require_invalid("convert -- -1GiB GB", "-1GiB");
    const run_result r = run("convert -- 1GiB GB");
    CHECK(r.rc == 0);
    CHECK(r.out == "1.073741824\n");  // 2^30 B = 1.073741824 GB (decimal giga, SI)
    // Empty arguments are positional; followed by an unknown option they once made the parser
    // loop forever (found by fuzz_cli; the input is a seed in tests/fuzz/seeds/cli).
    require_invalid("link a step '' --n", "--n");
    require_invalid("link nvlink4 step", "unexpected argument 'step'");  // a command name is an argument here
    require_invalid("collective --op all_reduce --bytes 1GB '' --nodez 2", "did you mean --nodes");
    // A value may start with "--": it is the option's value, and is judged as one.
    require_invalid("collective --op all_reduce --bytes --json", "--bytes");
}

TEST_CASE("hostile CLI: negative, zero, NaN, infinite and absurd numbers") {
    require_invalid("collective --op all_reduce --bytes -1GB", "--bytes");
    require_invalid("collective --op all_reduce --bytes nan", "--bytes");
    require_invalid("collective --op all_reduce --bytes inf", "--bytes");
    require_invalid("collective --op all_reduce --bytes 1e30", "--bytes");        // 1e30 bytes: absurd
    require_invalid("collective --op all_reduce --bytes 1e400", "--bytes");       // overflows a double
    require_invalid("collective --op all_reduce --bytes 400Gbps", "--bytes");     // a rate, not a size
    require_invalid("collective --op all_reduce --bytes 1GB --nodes 0", "--nodes");
    require_invalid("collective --op all_reduce --bytes 1GB --nodes -4", "--nodes");
    require_invalid("collective --op all_reduce --bytes 1GB --nodes 9223372036854775808", "--nodes");  // 2^63
    require_invalid("collective --op all_reduce --bytes 1GB --nodes 99999999999999999999999", "--nodes");
    require_invalid("collective --op all_reduce --bytes 1GB --gpus-per-node 9223372036854775807", "--gpus-per-node");
    require_invalid("collective --op all_reduce --bytes 1GB --nodes 1.5", "--nodes");
    require_invalid("sweep --op all_reduce --min 1MB --max 1GB --factor 1", "--factor");
    require_invalid("sweep --op all_reduce --min 1GB --max 1MB", "--m");
    require_invalid("cluster dgx-h100 --nodes 0", "--nodes");
    require_invalid("convert -5GB MB", "value");
    require_invalid("convert 1e999GB MB", "value");
    require_invalid("capacity --flops -1 --peak-tflops 312 --utilization 0.5 --days 10", "--flops");
    require_invalid("capacity --flops 1e24 --peak-tflops 312 --utilization 1.5 --days 10", "--utilization");
    require_invalid("capacity --flops 1e24 --peak-tflops 312 --utilization nan --days 10", "--utilization");
    require_invalid("capacity --flops 1e24 --peak-tflops 0 --utilization 0.5 --days 10", "--peak-tflops");
    // absurd but positive: every answer must stay a finite number
    const std::string cap = "capacity --flops 1e23 --peak-tflops 312 --utilization 0.5 ";
    require_invalid(cap + "--weeks 1e300", "--weeks");
    require_invalid(cap + "--days 1e300", "--days");
    require_invalid(cap + "--days 1e-30", "--days");
    require_invalid("capacity --flops 1e23 --peak-tflops 1e-300 --utilization 0.5 --days 10", "--peak-tflops");
    require_invalid("capacity --flops 1e23 --peak-tflops 1e30 --utilization 0.5 --days 10", "--peak-tflops");
    require_invalid("capacity --flops 1e23 --peak-tflops 312 --utilization 1e-300 --days 10", "--utilization");
    require_invalid("capacity --model gpt3-175b --tokens 1e30 --peak-tflops 312 --utilization 0.5 --days 10", "--tokens");
    require_invalid("capacity --params 1e300 --tokens 1e300 --peak-tflops 312 --utilization 0.5 --days 10", "--params");
    require_invalid("capacity --flops 1e23 --peak-tflops 312 --utilization 0.5 --gpus 0", "--gpus");
}

TEST_CASE("hostile CLI: capacity at the edges of its ranges still answers finite numbers") {
    // 1e30 FLOPs on one GPU of 1 GFLOP/s at 0.01%: 1e25 s, finite; and the other extreme
    for (const char* args : {"capacity --flops 1e30 --peak-tflops 0.001 --utilization 0.0001 --gpus 1",
                             "capacity --flops 1 --peak-tflops 1e6 --utilization 1 --days 0.000694444445",
                             "capacity --flops 1e30 --peak-tflops 1e6 --utilization 1 --weeks 52000"}) {
        INFO(args);
        const auto j = run_json(args);
        for (const char* k : {"total_flops", "gpus_needed", "time_s", "gpu_hours"}) {
            INFO(k);
            REQUIRE(j.at(k).is_number());
            CHECK(std::isfinite(j.at(k).get<double>()));
            CHECK(j.at(k).get<double>() >= 0.0);
        }
    }
}

TEST_CASE("hostile CLI: plans that do not divide the model or the cluster") {
    // llama3-8b: 32 heads, 32 layers. 8 GPUs per node.
    require_invalid("step --model llama3-8b --cluster dgx-h100 --nodes 3 --tp 3 --pp 1 --dp 8 --micro-batch 1 --global-batch 8", "tp");
    // pp need not divide the 32 layers (uneven stages), but every stage needs one
    require_invalid("step --model llama3-8b --cluster dgx-h100 --nodes 40 --tp 8 --pp 40 --dp 1 --micro-batch 1 --global-batch 80", "pp");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --nodes 5 --tp 8 --pp 5 --dp 1 --micro-batch 1 --global-batch 8 "
                    "--first-stage-layers 5",
                    "first_stage_layers");  // 27 layers left for 4 stages: not an equal share
    require_invalid("step --model llama3-8b --cluster dgx-h100 --tp 8 --pp 1 --dp 1 --micro-batch 3 --global-batch 8",
                   "batch");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --tp 0 --pp 1 --dp 1 --micro-batch 1 --global-batch 8", "--tp");
    require_invalid("step --model llama3-8b --cluster dgx-h100 --tp 8 --pp 1 --dp 1 --micro-batch 1 --global-batch 8 --zero 7",
                   "--zero");
}

TEST_CASE("hostile CLI: files that are missing, empty, binary, truncated, directories or bad JSON") {
    const fs::path empty = write("empty.json", "");
    const fs::path garbage = write("garbage.json", std::string("\x00\xff\xfe{\x01\x02", 6));
    const fs::path truncated = write("truncated.json", "{\"name\": \"pod\", \"nodes\": 4, \"gpus_per_nod");
    const fs::path wrong_type = write("array.json", "[1, 2, 3]");
    const fs::path unknown_key =
        write("unknown.json", R"({"nodes": 2, "gpus_per_node": 8, "intra": {"link": "nvlink4"},
                                  "inter": {"link": "ib-ndr-4x", "nics_per_nod": 8}})");
    const fs::path bad_link =
        write("badlink.json", R"({"nodes": 2, "gpus_per_node": 8, "intra": {"link": "nvlink4"}, "inter": {"link": "ib-nrd-4x"}})");
    const fs::path nan_link = write(
        "nanlink.json",
        R"({"nodes": 2, "gpus_per_node": 8, "intra": {"link": "nvlink4"}, "inter": {"link": {"name": "x", "kind": "scale_out", "per_direction_GBps": "nan"}}})");
    const fs::path huge_nodes =
        write("huge.json", R"({"nodes": 9223372036854775808, "gpus_per_node": 8, "intra": {"link": "nvlink4"}, "inter": {"link": "ib-ndr-4x"}})");
    const fs::path neg_gpus = write("neg.json", R"({"nodes": 1, "gpus_per_node": -8, "intra": {"link": "nvlink4"}})");
    const fs::path no_intra = write("nointra.json", R"({"nodes": 1, "gpus_per_node": 8})");
    const fs::path bad_calib = write(
        "calib.json",
        R"({"nodes": 1, "gpus_per_node": 8, "intra": {"link": "nvlink4"}, "calibration": {"net": {"efficiency": 2.5}}})");
    const fs::path overflow = write("overflow.json", R"({"nodes": 1e400, "gpus_per_node": 8, "intra": {"link": "nvlink4"}})");
    const std::string coll = "collective --op all_reduce --bytes 1GB --cluster ";

    require_invalid(coll + q(scratch() / "does-not-exist.json"), "--cluster");
    require_invalid(coll + q(scratch()), "--cluster");  // a directory where a file is expected
    require_invalid(coll + q(empty), "empty.json");
    require_invalid(coll + q(garbage), "garbage.json");
    require_invalid(coll + q(truncated), "truncated.json");
    require_invalid(coll + q(wrong_type), "cluster");
    require_invalid(coll + q(unknown_key), "cluster.inter.nics_per_nod");
    require_invalid(coll + q(unknown_key), "did you mean nics_per_node");
    require_invalid(coll + q(bad_link), "cluster.inter.link");
    require_invalid(coll + q(nan_link), "cluster.inter.link.per_direction_GBps");
    require_invalid(coll + q(huge_nodes), "cluster.nodes");
    require_invalid(coll + q(neg_gpus), "cluster.gpus_per_node");
    require_invalid(coll + q(no_intra), "cluster.intra");
    require_invalid(coll + q(overflow), "overflow.json");  // a number a double cannot hold (fuzz_json)
    require_invalid(coll + q(bad_calib), "cluster.calibration.net.efficiency");

    const fs::path model_heads = write("heads.json", R"({"num_hidden_layers": 2, "hidden_size": 4096,
        "num_attention_heads": 30, "vocab_size": 32000})");
    const fs::path model_missing = write("missing.json", R"({"hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000})");
    const fs::path model_float = write("float.json", R"({"num_hidden_layers": 2.5, "hidden_size": 4096,
        "num_attention_heads": 32, "vocab_size": 32000})");
    const fs::path model_huge = write("hugemodel.json", R"({"num_hidden_layers": 2, "hidden_size": 4096,
        "num_attention_heads": 32, "vocab_size": 1e30})");
    require_invalid("model " + q(model_heads), "num_attention_heads");
    require_invalid("model " + q(model_missing), "num_hidden_layers");
    require_invalid("model " + q(model_float), "num_hidden_layers");
    require_invalid("model " + q(model_huge), "vocab_size");
    require_invalid("model " + q(empty), "empty.json");
    require_invalid("model " + q(scratch()), "model");

    require_invalid("fit " + q(nccl_dir + "empty.log"), "empty.log");
    require_invalid("fit " + q(nccl_dir + "whitespace_only.log"), "whitespace_only.log");
    require_invalid("fit " + q(nccl_dir + "garbage.bin"), "garbage.bin");
    require_invalid("fit " + q(nccl_dir + "truncated_row.log"), "truncated_row.log");
    require_invalid("fit " + q(scratch()), "log");
    require_invalid("fit " + q(scratch() / "nope.log"), "nope.log");
    require_invalid("fit " + q(garbage), "garbage.json");
}

TEST_CASE("hostile CLI: endless inputs (/dev/zero) stop at 256 MiB with a clear error") {
    require_invalid("model /dev/zero", "256 MiB");
    require_invalid("cluster /dev/zero", "256 MiB");
    require_invalid("fit /dev/zero", "256 MiB");
    require_invalid("plan-merge /tmp", "FILE");  // a directory, named as the argument
}

TEST_CASE("hostile CLI: lists with repeats and domains that do not tile a node") {
    require_invalid("scale --model llama3-8b --cluster dgx-h100 --tp 8 --nodes 8,8", "--nodes");
    require_invalid("plan --model llama3-8b --cluster dgx-h100 --gpus 16 --global-batch 64 --scale-up-domain 7",
                    "--scale-up-domain");
    // a whole rack of nodes (a multiple) and part of a node (a divisor) are accepted
    CHECK(run("plan --model llama3-8b --cluster dgx-h100 --gpus 16 --global-batch 64 --scale-up-domain 16 --top 1").rc == 0);
    CHECK(run("plan --model llama3-8b --cluster dgx-h100 --gpus 16 --global-batch 64 --scale-up-domain 4 --top 1").rc == 0);
}

TEST_CASE("hostile CLI: a failing command never creates, truncates or clobbers an output file") {
    const std::string log = nccl_dir + "ml_engineering_a100_allreduce.log";
    const std::string old_content = "precious content\n";
    const fs::path out = write("existing_out.json", old_content);
    const fs::path svg = write("existing.svg", old_content);

    // Invalid input after the output options: the files must stay as they were.
    require_invalid("fit " + q(nccl_dir + "garbage.bin") + " --out " + q(out) + " --svg " + q(svg), "garbage.bin");
    CHECK(slurp(out) == old_content);
    CHECK(slurp(svg) == old_content);
    require_invalid("sweep --op all_reduce --min 1MB --max 1e30 --svg " + q(svg), "--max");
    CHECK(slurp(svg) == old_content);
    require_invalid("step --tp 3 --pp 1 --dp 1 --micro-batch 1 --global-batch 8 --model llama3-8b --svg " + q(svg), "tp");
    CHECK(slurp(svg) == old_content);

    // New paths: nothing is created on error.
    const fs::path fresh = scratch() / "fresh.json";
    require_invalid("fit " + q(nccl_dir + "empty.log") + " --out " + q(fresh), "empty.log");
    CHECK_FALSE(fs::exists(fresh));

    // Unwritable destinations: exit 2 naming the option, and no stray temporary file.
    require_invalid("fit " + q(log) + " --out " + q(scratch() / "no-such-dir" / "x.json"), "--out");
    require_invalid("fit " + q(log) + " --out " + q(scratch()), "--out");
    require_invalid("fit " + q(log) + " --svg " + q(scratch() / "no-such-dir" / "x.svg"), "--svg");
    require_invalid("sweep --op all_reduce --min 1MB --max 1GB --svg " + q(scratch()), "--svg");
    for (const auto& e : fs::directory_iterator(scratch()))
        CHECK(e.path().filename().string().find(".tmp") == std::string::npos);

    // And the success path writes complete files that replace the old content.
    const run_result ok = run("fit " + q(log) + " --out " + q(out) + " --svg " + q(svg));
    CHECK(ok.rc == 0);
    CHECK(slurp(out).find("\"calibration\"") != std::string::npos);
    CHECK(slurp(svg).find("</svg>") != std::string::npos);
}

namespace {

/// Fails on any null or non-finite number in a command's JSON output (nlohmann writes NaN and
/// infinity as null), naming the path; `nullable` keys may be null by contract.
void require_all_finite(const nlohmann::json& j, const std::string& where, const std::set<std::string>& nullable = {}) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.value().is_null() && nullable.count(it.key())) continue;
            require_all_finite(it.value(), where + "." + it.key(), nullable);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) require_all_finite(j[i], where + "[" + std::to_string(i) + "]", nullable);
    } else {
        INFO(where << " = " << j.dump());
        CHECK_FALSE(j.is_null());
        if (j.is_number()) CHECK(std::isfinite(j.get<double>()));
    }
}

}  // namespace

TEST_CASE("hostile CLI: capacity names the options a derived total comes from, and prints no zero for a small figure") {
    require_invalid("capacity --flops 1e30 --peak-tflops 0.001 --utilization 0.0001 --days 0.000694444445",
                    "--flops / (--peak-tflops x --utilization x --days)");
    require_invalid("capacity --model gpt3-175b --tokens 1e17 --accelerator h100-sxm --utilization 0.0001 --weeks 0.001",
                    "--model x --tokens / (--accelerator x --utilization x --weeks)");
    require_invalid("capacity --flops 0.5 --peak-tflops 312 --utilization 0.5 --days 1", "--flops");
    require_invalid("capacity --params 1e-300 --tokens 1e9 --peak-tflops 312 --utilization 0.5 --days 1", "--params");
    require_invalid("capacity --params 1e16 --tokens 1e9 --peak-tflops 312 --utilization 0.5 --days 1", "--params");
    require_invalid("capacity --params 7e9 --tokens 1e-300 --peak-tflops 312 --utilization 0.5 --days 1", "--tokens");
    require_invalid("capacity --params 7e9 --tokens 1e19 --peak-tflops 312 --utilization 0.5 --days 1", "--tokens");
    // the extremes accepted: the peak and utilization are printed as given, not rounded to 0
    const auto r = run("capacity --flops 1e30 --peak-tflops 0.001 --utilization 0.0001 --gpus 1");
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("0.001 TFLOPS peak x 0.0001") != std::string::npos);
    CHECK(r.out.find("1.157e+20 days") != std::string::npos);
    const auto j = run_json("capacity --flops 1e30 --peak-tflops 1e6 --utilization 1 --days 1");
    CHECK(j.at("gpus_needed").get<long long>() > 0);
    require_all_finite(j, "capacity");
}

TEST_CASE("hostile CLI: convert prints 0 for -0 and refuses subnormal values") {
    for (const char* args : {"convert -0 B", "convert -0GB MB", "convert -0.0e5us s"}) {
        INFO(args);
        const auto r = run(args);
        CHECK(r.rc == 0);
        CHECK(r.out == "0\n");
    }
    require_invalid("convert 1e-320s us", "value");
}

TEST_CASE("hostile CLI: absurdly slow channels and the most extreme calibration accepted") {
    const std::string base = R"({"nodes": 2, "gpus_per_node": 8, "accelerator": "h100-sxm", "intra": {"link": "nvlink4"},
        "inter": {"link": "ib-ndr-4x"}, "calibration": )";
    const fs::path slow = write("slow_channels.json", base + R"({"channels": 1, "channel_bandwidth_GBps": [1e-300, 1e-300, 1e-300]}})");
    require_invalid("collective --op all_reduce --bytes 1GB --cluster " + q(slow), "calibration.channel_bandwidth_GBps[0]");
    require_invalid("cluster " + q(slow), "slow_channels.json");
    const fs::path steep = write("steep.json", base + R"({"net": {"half_size": 1e18, "exponent": 100}}})");
    require_invalid("cluster " + q(steep), "calibration.net.exponent");
    // at the limits of every range: slow, steep, tiny efficiencies, long latencies; still finite
    const fs::path extreme = write("extreme.json", base + R"({"channels": 1, "channel_bandwidth_GBps": [0.001, 0.001, 0.001],
        "protocol_bandwidth": [1e-6, 1e-6, 1e-6], "base_latency_us": [1e6, 1e6, 1e6],
        "net": {"half_size": 1e18, "exponent": 8, "efficiency": 1e-6, "step_latency_us": [1e6, 1e6, 1e6]},
        "nvlink": {"half_size": 1e18, "exponent": 8, "efficiency": 1e-6}, "nvls_efficiency": 1e-6, "sharp_efficiency": 1e-6}})");
    const std::string c = " --cluster " + q(extreme);
    for (const std::string& args : {"collective --op all_reduce --bytes 1B" + c, "collective --op all_to_all --bytes 1e18B" + c,
                                    "sweep --op all_reduce --min 1B --max 1e18B" + c,
                                    "step --model llama3-8b --tp 8 --pp 1 --dp 2 --micro-batch 1 --global-batch 8" + c,
                                    "scale --model llama3-8b --tp 8 --nodes 1,2" + c}) {
        INFO(args);
        require_all_finite(run_json(args), "output");
    }
}

TEST_CASE("hostile CLI: fit refuses rows that would give an unreadable calibration or too short times") {
    const std::string head =
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
    std::string flat = head, tiny = head;
    for (int s = 8; s <= 16384; s *= 2) {
        const std::string size = std::to_string(s);
        flat += "  " + size + "  2  float  sum  -1  1e8  1.0  1.0  0  1e8  1.0  1.0  0\n";
        tiny += "  " + size + "  2  float  sum  -1  1e-300  1.0  1.0  0  1e-300  1.0  1.0  0\n";
    }
    const fs::path flat_log = write("flat.log", flat), tiny_log = write("tiny.log", tiny);
    const fs::path out = scratch() / "flat_calibrated.json";
    // 100 s for 8 B to 16 KiB: the MAP fit stays inside what --cluster reads back (the half size
    // goes to terabytes), and says that a parameter went far from the datasheet
    const auto flat_run = run("fit " + q(flat_log) + " --out " + q(out) + " --json");
    INFO(flat_run.err);
    REQUIRE(flat_run.rc == 0);
    const auto fj = nlohmann::json::parse(flat_run.out);
    REQUIRE(fj["warnings"].size() >= 1);
    CHECK_THAT(fj["warnings"][0].get<std::string>(), Catch::Matchers::Contains("prior widths from the datasheet"));
    REQUIRE(fs::exists(out));
    CHECK(run("collective --op all_reduce --bytes 1MiB --cluster " + q(out)).rc == 0);
    require_invalid("fit " + q(tiny_log), "tiny.log:4");
    require_invalid("fit " + q(tiny_log), "time 1e-300 us for 8 bytes");
}

TEST_CASE("hostile CLI: devices are refused at once, naming the argument") {
    require_invalid("cluster /dev/urandom", "character device");
    require_invalid("model /dev/null", "a regular file or a pipe");
    require_invalid("collective --op all_reduce --bytes 1GB --cluster /dev/zero", "--cluster");
    // standard input stays available where a command reads it
    const auto r = run("fit -", nccl_dir + "ml_engineering_a100_allreduce.log");
    CHECK(r.rc == 0);
}

TEST_CASE("hostile CLI: plan-merge checks the search fields of every file") {
    const fs::path dir = scratch();
    const std::string f0 = (dir / "m0.json").string(), f1 = (dir / "m1.json").string();
    REQUIRE(run("plan --model llama2-7b --gpus 16 --global-batch 64 --top 3 --shard 0/2 --out " + q(f0)).rc == 0);
    REQUIRE(run("plan --model llama2-7b --gpus 16 --global-batch 64 --top 3 --shard 1/2 --out " + q(f1)).rc == 0);
    REQUIRE(run("plan-merge " + q(f0) + " " + q(f1)).rc == 0);
    const auto tampered = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
        auto j = nlohmann::json::parse(slurp(f0));
        edit(j);
        return write(name, j.dump()).string();
    };
    std::string t = tampered("top_key.json", [](nlohmann::json& j) { j["sepp"] = 2; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".sepp");
    require_invalid("plan-merge " + q(t) + " " + q(f1), "did you mean");
    t = tampered("search_s.json", [](nlohmann::json& j) { j["search_s"] = 1e300; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".search_s");
    t = tampered("top_type.json", [](nlohmann::json& j) { j["top"] = "ten"; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".top");
    t = tampered("model_type.json", [](nlohmann::json& j) { j["model"] = 7; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".model");
    t = tampered("space_key.json", [](nlohmann::json& j) { j["space"]["efficency"] = "ideal"; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".space.efficency");
    t = tampered("breakdown_key.json", [](nlohmann::json& j) { j["plans"][0]["breakdown"]["compute_ss"] = 1; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".plans[0].breakdown.compute_ss");
    t = tampered("breakdown_time.json", [](nlohmann::json& j) { j["plans"][0]["breakdown"]["compute_s"] = 1e300; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".plans[0].breakdown.compute_s");
    t = tampered("nodes.json", [](nlohmann::json& j) { j["nodes"] = 0; });
    require_invalid("plan-merge " + q(t) + " " + q(f1), t + ".nodes");
}

TEST_CASE("hostile CLI: a node without NICs is one node alone, never a crash") {
    // validate(cluster) allows 0 NICs per node on one node; the commands that share NICs among a
    // node's GPUs must answer there, and more nodes are refused naming the field
    for (const std::string cmd : {"step --model llama3-8b --global-batch 64", "collective --op all_reduce --bytes 1GB",
                                  "plan --model llama3-8b --global-batch 64 --gpus 8 --top 1"}) {
        const auto r = run(cmd + " --cluster dgx-h100 --nodes 1 --nics-per-node 0");
        INFO(cmd << ": exit " << r.rc << ", stderr " << r.err);
        CHECK(r.rc == 0);
        CHECK(r.out.find("nan") == std::string::npos);
    }
    require_invalid("step --model llama3-8b --global-batch 64 --cluster dgx-h100 --nodes 2 --nics-per-node 0",
                    "--nics-per-node: expected at least 1 NIC per node when nodes > 1");
}
