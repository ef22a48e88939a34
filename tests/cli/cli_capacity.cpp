// The `capacity`, `models` and `model` commands, run as a user would (CLI.md contract: keys,
// exit codes, one-line errors naming the option).
#include "cli_runner.hpp"

#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

using namespace cli_test;

TEST_CASE("capacity: gpu-fabrics-for-genai Table 1 OPT row, 430 ZFLOP / (624 TFLOPS x 0.3 x 1 week) -> 3,798") {
    const auto j = run_json("capacity --flops 430ZFLOP --peak-tflops 624 --utilization 0.3 --weeks 1");
    CHECK(j.at("gpus_needed").get<long long>() == 3798);
    CHECK(j.at("total_flops").get<double>() == Approx(4.3e23));
    CHECK(j.at("time_s").get<double>() <= 604800.0);
    CHECK(j.at("gpu_hours").get<double>() == Approx(430e21 / (624e12 * 0.3) / 3600).epsilon(1e-9));
}

TEST_CASE("capacity: GPT-3 from P and D with 8 FLOPs/param/token is 420 ZFLOP -> 3,710 A100s (Table 1)") {
    const auto j = run_json("capacity --params 175e9 --tokens 300e9 --flops-per-param-token 8 --peak-tflops 624 "
                            "--utilization 0.3 --weeks 1");
    CHECK(j.at("total_flops").get<double>() == Approx(420e21));
    CHECK(j.at("gpus_needed").get<long long>() == 3710);
}

TEST_CASE("capacity: GPT-4 estimate on H100 FP8-class 3,000 TFLOPS at 50% over 4 weeks -> ~8.5K") {
    const auto j = run_json("capacity --flops 31200ZFLOP --peak-tflops 3000 --utilization 0.5 --weeks 4");
    CHECK(j.at("gpus_needed").get<long long>() == 8598);
}

TEST_CASE("capacity --gpus: time on a given cluster, --accelerator picks the dense peak by --dtype") {
    // will-it-scale: 240 A100 (312 TFLOPS bf16 dense, A100 datasheet) running 180k GPU-hours of work.
    const double f = 180000.0 * 3600 * 312e12 * 0.5;
    char flops[64];
    std::snprintf(flops, sizeof flops, "%.17g", f);
    const auto j = run_json(std::string("capacity --flops ") + flops + " --accelerator a100-80gb-sxm --dtype bf16 "
                            "--utilization 0.5 --gpus 240");
    CHECK(j.at("gpus_needed").get<long long>() == 240);
    CHECK(j.at("gpu_hours").get<double>() == Approx(180000.0).epsilon(1e-9));
    CHECK(j.at("time_s").get<double>() / 86400 == Approx(31.25).epsilon(1e-9));
}

TEST_CASE("capacity: bad input exits 2 with one line naming the option") {
    struct bad {
        const char* args;
        const char* option;
    };
    const bad cases[] = {
        {"capacity --flops 1e23 --peak-tflops 312 --utilization 1.5 --weeks 1", "--utilization"},
        {"capacity --flops 1e23 --peak-tflops 312 --utilization 0.4", "--weeks"},
        {"capacity --flops 1e23 --peak-tflops 312 --utilization 0.4 --weeks 1 --gpus 8", "--"},
        {"capacity --flops 400Gbps --peak-tflops 312 --utilization 0.4 --weeks 1", "--flops"},
        {"capacity --params 1e9 --tokens 1e12 --flops-per-param-token 7 --peak-tflops 312 --utilization 0.4 --weeks 1",
         "--flops-per-param-token"},
        {"capacity --params -1 --tokens 1e12 --peak-tflops 312 --utilization 0.4 --weeks 1", "--params"},
        {"capacity --flops 1e23 --accelerator a100-80gb-sxm --dtype fp8 --utilization 0.4 --weeks 1", "--dtype"},
        {"capacity --flops 1e23 --accelerator a100-80gb --utilization 0.4 --weeks 1", "--accelerator"},
        {"capacity --flops 1e23 --peak-tflops 312 --utilization 0.4 --gpus 0", "--gpus"},
        {"capacity --flops 1e23 --utilization 0.4 --weeks 1", "--peak-tflops"},
    };
    for (const auto& c : cases) require_invalid(c.args, c.option);
}

TEST_CASE("capacity --model uses the preset's active parameters") {
    // Mixtral 8x7B: 12.9B active (Jiang et al. 2024); 6 x 12.9e9 x 1e12 tokens ~ 77 ZFLOP.
    const auto j = run_json("capacity --model mixtral-8x7b --tokens 1e12 --peak-tflops 989 --utilization 0.4 --gpus 512");
    CHECK(j.at("total_flops").get<double>() == Approx(6 * 12.9e9 * 1e12).epsilon(0.01));
}

TEST_CASE("models lists every CLI.md preset, model shows one, from a name or a config.json") {
    const auto j = run_json("models");
    std::set<std::string> names;
    for (const auto& m : j.at("models")) names.insert(m.at("name").get<std::string>());
    for (const char* n : {"gpt2-large", "gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
                          "llama3-405b", "opt-175b", "bloom-176b", "mt-nlg-530b", "megatron-1t", "mixtral-8x7b",
                          "mixtral-8x22b", "deepseek-v3", "kimi-k2", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b"})
        CHECK(names.count(n) == 1);
    const auto m = run_json("model llama2-70b");
    CHECK(m.at("parameters").get<double>() == Approx(68.98e9).epsilon(0.001));  // HF model card
    const auto f = run_json(std::string("model ") + COMMSCALE_DATA_DIR + "/models/mixtral-8x7b.json");
    CHECK(f.at("active_parameters").get<double>() == Approx(12.9e9).epsilon(0.01));
    // a DeepSeek-V3 config.json (MLA, shared experts, MTP): 671B main model (DeepSeek-V3 report)
    const auto d = run_json(std::string("model ") + COMMSCALE_TEST_DATA_DIR + "/hf-configs/deepseek-v3.json");
    CHECK(d.at("parameters").get<double>() == Approx(671e9).epsilon(0.01));
    CHECK(d.at("mtp_parameters").get<double>() > 0);
    CHECK(d.at("kv_lora_rank").get<int>() == 512);
    require_invalid("model lama2-70b", "llama2-70b");
}
