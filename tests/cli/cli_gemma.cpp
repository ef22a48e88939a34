// Gemma 2 from the command line: `model` reads its post-norms and soft-caps from the config.json
// (Hugging Face google/gemma-2-9b) and prints them; `step` runs its soft-capped attention unfused
// under megatron-core and refuses context parallelism there, naming plan.cp, and its plan line names
// the unfused attention and its softmax (docs/CLI.md).
#include "cli_runner.hpp"

#include <string>

#include <nlohmann/json.hpp>

using namespace cli_test;

namespace {
const std::string gemma2 = std::string(COMMSCALE_TEST_DATA_DIR) + "/hf-configs/gemma-2-9b.json";
}

TEST_CASE("model: Gemma 2 9B's post-norms and soft-caps, and its report's parameter count") {
    const auto j = run_json("model " + gemma2 + " --json");
    CHECK(j.at("post_norms").get<bool>());
    CHECK(j.at("attn_logit_softcapping").get<double>() == 50.0);
    CHECK(j.at("final_logit_softcapping").get<double>() == 30.0);
    // Gemma 2 report Table 2: 8,324,201,984 non-embedding parameters; + 256,000 x 3,584 tied
    CHECK(j.at("parameters").get<double>() == 8324201984.0 + 256000.0 * 3584);
    const auto text = run("model " + gemma2);
    CHECK(text.rc == 0);
    CHECK(text.out.find("4 per layer") != std::string::npos);
    CHECK(text.out.find("c = 50") != std::string::npos);
}

TEST_CASE("step: Gemma 2's soft-capped attention, unfused under megatron-core, flash under fsdp") {
    const std::string plan = " --cluster dgx-h100 --gpus 8 --tp 2 --global-batch 64 --seq 8192 --json";
    const auto mcore = run_json("step --model " + gemma2 + plan);
    const auto fsdp = run_json("step --model " + gemma2 + plan + " --framework fsdp");
    // the unfused core stores its scores: more activation memory, more attention time
    CHECK(mcore.at("memory_breakdown_GiB").at("activations").get<double>() >
          2 * fsdp.at("memory_breakdown_GiB").at("activations").get<double>());
    CHECK(mcore.at("layer_s").at("attention_fwd").get<double>() > fsdp.at("layer_s").at("attention_fwd").get<double>());
    require_invalid("step --model " + gemma2 + " --cluster dgx-h100 --gpus 8 --tp 2 --cp 2 --global-batch 64 --seq 8192",
                    "plan.cp");
    CHECK(run("step --model " + gemma2 + " --cluster dgx-h100 --gpus 8 --tp 2 --cp 2 --global-batch 64 --seq 8192 --framework fsdp").rc == 0);
}

TEST_CASE("step: the plan line names the unfused attention and the softmax it runs") {
    // Megatron's FusedScaleMaskSoftmax runs its fused kernel up to 4,096 keys and its PyTorch
    // fallback beyond; the PyTorch stacks' unfused attention is Hugging Face's eager attention
    const std::string plan = " --cluster dgx-h100 --gpus 8 --tp 2 --global-batch 64";
    const auto at = [&](const std::string& args) { return run("step --model " + gemma2 + plan + args); };
    const auto short_seq = at(" --seq 4096"), long_seq = at(" --seq 8192");
    REQUIRE(short_seq.rc == 0);
    REQUIRE(long_seq.rc == 0);
    CHECK(short_seq.out.find("attention unfused (soft-capped scores) with the fused softmax") != std::string::npos);
    CHECK(long_seq.out.find("attention unfused (soft-capped scores) with the PyTorch softmax fallback") != std::string::npos);
    CHECK(at(" --seq 4096 --framework fsdp").out.find("attention unfused") == std::string::npos);
    CHECK(at(" --seq 4096 --framework fsdp --attention unfused").out.find("attention unfused with Hugging Face's eager FP32 softmax") !=
          std::string::npos);
    CHECK(run("step --model llama3-8b" + plan + " --seq 4096").out.find("attention unfused") == std::string::npos);
}
