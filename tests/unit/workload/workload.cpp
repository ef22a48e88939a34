// Transformer shapes and parameter counts, checked against the sizes the model authors publish.
#include "catch_shim.hpp"

#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
struct published_size {
    std::string_view name;
    double params;
    const char* source;
};
// Sizes as the authors state them. Tolerance 2%: authors round (GPT-2 Large is "774M" in the
// release, 762M in the paper) and some count slightly different embedding tables.
constexpr published_size published[] = {
    {"gpt2-large", 774e6, "OpenAI GPT-2 774M release (Radford et al. 2019 Table 2 lists 762M)"},
    {"gpt3-175b", 175.0e9, "Brown et al. 2020 Table 2.1: 175.0B"},
    {"llama2-7b", 6.74e9, "Touvron et al. 2023 / HF model card: 6.74B"},
    {"llama2-13b", 13.02e9, "HF model card: 13.0B (13,015,864,320)"},
    {"llama2-70b", 68.98e9, "HF model card: 68.98B (68,976,648,192)"},
    {"llama3-8b", 8.03e9, "HF model card: 8.03B"},
    {"llama3-70b", 70.6e9, "HF model card: 70.6B"},
    {"llama3-405b", 405e9, "Dubey et al. 2024 Table 3: 405B"},
    {"opt-175b", 175e9, "Zhang et al. 2022 Table 1: 175B"},
    {"bloom-176b", 176.2e9, "Le Scao et al. 2022: 176,247M parameters"},
    {"mt-nlg-530b", 530e9, "Smith et al. 2022: 530B"},
    {"megatron-1t", 1008e9, "Narayanan et al. 2021 Table 1: 1008B"},
    {"gpt3-5b", 5e9, "NeMo GPTConfig5B, named 5B (ours 5.04B)"},
    {"gpt3-20b", 20e9, "NeMo GPTConfig20B, named 20B (ours 20.2B)"},
    {"nemotron4-340b", 340e9, "Nemotron-4 340B Technical Report: 340B"},
    {"mixtral-8x7b", 46.7e9, "Jiang et al. 2024: 46.7B total"},
    {"mixtral-8x22b", 141e9, "Mistral AI 2024, Cheaper, Better, Faster, Stronger: 141B total"},
    {"deepseek-v3", 671e9, "DeepSeek-V3 Technical Report: 671B total, main model without MTP"},
    {"kimi-k2", 1.04e12, "Kimi K2 report: 1.04T total (ours 1.026T; model_moe.cpp explains the 1.3%)"},
    {"qwen3-30b-a3b", 30.5e9, "HF Qwen/Qwen3-30B-A3B model card: 30.5B total"},
    {"qwen3-235b-a22b", 235e9, "HF Qwen/Qwen3-235B-A22B model card: 235B total"},
    {"qwen3-next-80b-a3b", 80e9, "HF Qwen/Qwen3-Next-80B-A3B-Instruct model card: 80B total (ours 79.67B without the MTP module; workload_hybrid.cpp)"},
    {"gpt-oss-120b", 116.83e9, "OpenAI gpt-oss model card, Table 1: 116.83B total"},
    {"llama4-scout", 109e9, "Meta Llama 4 Scout model card: 109B total, with the vision encoder (text model 1.1% less)"},
    {"llama4-maverick", 400e9, "Meta Llama 4 Maverick model card: 400B total, with the vision encoder"},
    {"gemma2-9b", 8324201984.0 + 256000.0 * 3584, "Gemma 2 report Table 2: 8,324,201,984 non-embedding + the config's 256,000 x 3,584 tied embedding"},
    {"gemma2-27b", 26047480320.0 + 256000.0 * 4608, "Gemma 2 report Table 2: 26,047,480,320 non-embedding + the config's 256,000 x 4,608 tied embedding"},
    {"nemotron-h-8b", 8e9, "Nemotron-H-8B-Base-8K model card: 8B (ours 8.10B; workload_hybrid.cpp)"},
    {"nemotron-h-47b", 47e9, "Nemotron-H-47B-Base-8K model card: 47B"},
    {"nemotron-h-56b", 56e9, "Nemotron-H-56B-Base-8K model card: 56B"},
    {"nemotron3-nano-30b-a3b", 31.6e9, "NVIDIA Nemotron 3 announcement: 31.6B total (model card: 30B)"},
    {"nemotron3-ultra-550b-a55b", 550e9, "the model's name, 550B-A55B (ours 549.31B; workload_hybrid.cpp)"},
    {"nemotron3-super-120b-a12b", 120e9, "NVIDIA Nemotron 3 Super model card: 120B total (ours 120.67B without the MTP module; workload_hybrid.cpp checks the checkpoint's exact count)"},
    {"mpt-125m", 124131840.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 124131840"},
    {"mpt-350m", 354412544.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 354412544"},
    {"mpt-760m", 758111232.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 758111232"},
    {"mpt-1b", 1312804864.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 1312804864"},
    {"mpt-3b", 2647905280.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 2647905280"},
    {"mpt-7b", 6652567552.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 6652567552"},
    {"mpt-13b", 12846090240.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 12846090240"},
    {"mpt-30b", 29975214080.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 29975214080"},
    {"mpt-70b", 64862437376.0, "llm-foundry benchmark table (scripts/train/benchmarking/README.md @ 8c8dd48f): NumParams 64862437376"},
};
}  // namespace

TEST_CASE("every preset's parameter count matches its published size within 2%") {
    REQUIRE(all_models().size() == std::size(published));
    for (const auto& p : published) {
        INFO(p.name << " (" << p.source << ")");
        const auto m = model_by_name(p.name);
        CHECK_THAT(total_parameters(m), Catch::Matchers::WithinRel(p.params, 0.02));
    }
}

TEST_CASE("LLaMA-2 70B with grouped-query attention counts 68.98B exactly as Hugging Face") {
    // HF meta-llama/Llama-2-70b-hf reports 68,976,648,192 parameters.
    CHECK(total_parameters(models::llama2_70b) == Approx(68'976'648'192.0).epsilon(1e-9));
    // LLaMA-2 7B: 6,738,415,616 (HF).
    CHECK(total_parameters(models::llama2_7b) == Approx(6'738'415'616.0).epsilon(1e-9));
}

TEST_CASE("Mixtral 8x7B: 46.7B total, 12.9B active per token") {
    // Jiang et al. 2024, section 2: 47B total, 13B active; model card: 46.7B / 12.9B.
    CHECK_THAT(total_parameters(models::mixtral_8x7b), Catch::Matchers::WithinRel(46.7e9, 0.005));
    CHECK_THAT(active_parameters(models::mixtral_8x7b), Catch::Matchers::WithinRel(12.9e9, 0.01));
    // Dense models: active == total.
    CHECK(active_parameters(models::gpt3_175b) == total_parameters(models::gpt3_175b));
}

TEST_CASE("GPT-style layer is 12 h^2 + 13 h (Narayanan et al. 2021, eq. 2)") {
    constexpr auto p = parameters_per_layer(models::gpt3_175b);
    constexpr double h = 12288;
    STATIC_REQUIRE(p.total() == 12 * h * h + 13 * h);
    STATIC_REQUIRE(p.router == 0);
}

TEST_CASE("presets are valid shapes, lookup suggests close names") {
    for (const auto& m : all_models()) {
        INFO(m.name);
        CHECK_NOTHROW(validate(m));
        CHECK(!m.source.empty());
    }
    STATIC_REQUIRE(find_model("llama2-70b").has_value());
    STATIC_REQUIRE(!find_model("llama2-71b").has_value());
    try {
        (void)model_by_name("lama2-70b", "--model");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "--model");
        CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("llama2-70b"));
    }
}

TEST_CASE("impossible shapes are input errors naming the field") {
    auto m = models::llama2_7b;
    m.heads = 30;  // 4096 % 30 != 0
    CHECK_THROWS_AS(validate(m), input_error);
    m = models::llama2_7b;
    m.kv_heads = 3;
    try {
        validate(m, "cfg");
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(e.field() == "cfg.kv_heads");
    }
    m = models::llama2_7b;
    m.layers = -1;
    CHECK_THROWS_AS(validate(m), input_error);
    m = models::mixtral_8x7b;
    m.experts_per_token = 9;
    CHECK_THROWS_AS(validate(m), input_error);
}
