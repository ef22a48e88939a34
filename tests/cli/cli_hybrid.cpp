// Hybrid Mamba-Transformer models from the command line: `model` shows a preset or a config.json
// with its pattern, `step` prices Nemotron-H and Nemotron 3 Nano, and a bad pattern or plan is
// one line naming the field (CLI.md contract).
#include "cli_runner.hpp"

#include <string>

#include <nlohmann/json.hpp>

using namespace cli_test;

TEST_CASE("model: Nemotron-H and Nemotron 3 presets and config.json files, with their layer kinds") {
    const auto h = run_json("model nemotron-h-56b");
    CHECK(h.at("parameters").get<double>() == Approx(56e9).epsilon(0.01));  // model card: 56B
    CHECK(h.at("hybrid_layers").at("mamba").get<int>() == 54);
    CHECK(h.at("hybrid_layers").at("attention").get<int>() == 10);
    CHECK(h.at("hybrid_layers").at("mlp").get<int>() == 54);
    CHECK(h.at("ssm_state_size").get<int>() == 256);
    // Nemotron 3 Nano's config.json: 31.6B total, 3.6B active with the embeddings (NVIDIA)
    const auto n = run_json(std::string("model ") + COMMSCALE_TEST_DATA_DIR + "/hf-configs/nemotron-3-nano-30b-a3b.json");
    CHECK(n.at("parameters").get<double>() == Approx(31.6e9).epsilon(0.01));
    CHECK(n.at("active_parameters").get<double>() == Approx(3.6e9).epsilon(0.01));
    CHECK(n.at("hybrid_override_pattern").get<std::string>() == "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME");
    CHECK(n.at("n_shared_experts").get<int>() == 2);  // moe_shared_expert_intermediate_size 3712 = 2 x 1856
    // 23 layers x 64 heads x 64 x state 128 x 2 bytes
    CHECK(n.at("ssm_state_bytes_per_sequence").get<double>() == 23.0 * 64 * 64 * 128 * 2);
    const auto text = run("model nemotron-h-8b");
    CHECK(text.rc == 0);
    CHECK(text.out.find("24 Mamba-2 + 4 attention + 24 MLP + 0 MoE layers") != std::string::npos);
}

TEST_CASE("step prices Nemotron-H 8B: compute-bound on a DGX H100 node, memory that fits") {
    const auto j = run_json("step --model nemotron-h-8b --cluster dgx-h100 --nodes 1 --tp 2 --sequence-parallel "
                            "--global-batch 64 --seq 8192 --json");
    const double params = 8'100'852'736.0;
    const auto& mem = j.at("memory_breakdown_GiB");
    // 2-byte weights, bf16 gradients over TP 2 (Megatron-Bridge's nemotronh performance config:
    // ddp.grad_reduce_in_fp32 = False); Adam's 12 bytes also over DP 4 (distributed optimizer)
    CHECK(mem.at("weights").get<double>() == Approx(2 * params / 2 / (1 << 30)).epsilon(1e-6));
    CHECK(mem.at("gradients").get<double>() == Approx(2 * params / 2 / (1 << 30)).epsilon(1e-6));
    CHECK(mem.at("optimizer").get<double>() == Approx(12 * params / 8 / (1 << 30)).epsilon(1e-6));
    CHECK(j.at("memory_per_gpu_GiB").get<double>() < 80.0);
    CHECK(j.at("fits_in_memory").get<bool>());
    CHECK(j.at("layer_s").at("scan_fwd").get<double>() > 0.0);
    CHECK(j.at("layer_s").at("scan_bwd").get<double>() > j.at("layer_s").at("scan_fwd").get<double>());
    CHECK(j.at("bottleneck").get<std::string>() == "compute");
    // Megatron's hybrid count: 46.71 GFLOP per token at 8192 (workload_hybrid.cpp works it by hand)
    CHECK(j.at("megatron_model_flops_per_token").get<double>() == Approx(46'707'769'344.0).epsilon(1e-9));
    CHECK(j.at("step_s").get<double>() > 0.0);
}

TEST_CASE("step prices Nemotron 3 Nano with expert parallelism, from the preset and from its config.json") {
    const std::string plan = " --cluster dgx-h100 --nodes 2 --tp 2 --sequence-parallel --ep 8 --global-batch 64 --seq 8192 --json";
    const auto a = run_json("step --model nemotron3-nano-30b-a3b" + plan);
    const auto b = run_json(std::string("step --model ") + COMMSCALE_TEST_DATA_DIR + "/hf-configs/nemotron-3-nano-30b-a3b.json" + plan);
    CHECK(a.at("step_s").get<double>() == Approx(b.at("step_s").get<double>()).epsilon(1e-12));
    CHECK(a.at("ep_comm_s").get<double>() > 0.0);
    CHECK(a.at("fits_in_memory").get<bool>());
}

TEST_CASE("hybrid models: a bad pattern or a TP that splits no Mamba group is one line naming the field") {
    const auto bad = write("bad-pattern.json", R"({"model_type": "nemotron_h", "num_hidden_layers": 4, "hidden_size": 1024,
        "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 32000,
        "hybrid_override_pattern": "M*-X", "mamba_num_heads": 32, "mamba_head_dim": 64})");
    require_invalid("model " + q(bad), "hybrid_override_pattern");
    const auto short_pattern = write("short-pattern.json", R"({"model_type": "nemotron_h", "num_hidden_layers": 4,
        "hidden_size": 1024, "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 32000,
        "hybrid_override_pattern": "M*-"})");
    require_invalid("model " + q(short_pattern), "hybrid_override_pattern");
    // a latent width of 0 (LatentMoE needs a positive one; null means none)
    const auto latent = write("latent.json", R"({"model_type": "nemotron_h", "num_hidden_layers": 2, "hidden_size": 1024,
        "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 32000, "hybrid_override_pattern": "ME",
        "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 512, "moe_latent_size": 0})");
    require_invalid("model " + q(latent), "moe_latent_size");
    // Nemotron-H 8B's 8 Mamba groups do not split over TP 16
    require_invalid("step --model nemotron-h-8b --cluster dgx-h100 --nodes 2 --tp 16 --global-batch 16 --seq 8192", "tp");
}
