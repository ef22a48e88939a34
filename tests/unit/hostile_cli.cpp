// Hostile input through the `commscale` binary (COMMSCALE_CLI_PATH): every invalid invocation must
// exit 2 with exactly one line on stderr that names the option or JSON field, with nothing on
// stdout (CLI.md: "2 invalid input (one line on stderr naming the option or JSON field, the value
// given, and what is accepted)"); and a failing command that writes files (--out / --svg) must
// neither create a file nor touch an existing one.
#include "cli_runner.hpp"

#include <filesystem>
#include <cmath>
#include <string>
#include <vector>

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
    require_invalid("step --model llama3-8b --cluster dgx-h100 --nodes 5 --tp 8 --pp 5 --dp 1 --micro-batch 1 --global-batch 8", "pp");
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
