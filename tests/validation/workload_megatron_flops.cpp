// Megatron-Core's model FLOP count (workload/flops.hpp megatron_model_flops_per_token) against the
// calibration set's published runs: a table that publishes both tokens/s/GPU and "Model
// TFLOP/sec/GPU" for one run gives the FLOPs per token its software counted, TFLOP/s / tokens/s,
// independent of the run's speed. Every Megatron run of ../shared/calibration/published_runs.csv
// with both figures is here, copied from that file (its sources: NVIDIA NeMo
// docs/source/performance/performance_summary.md @ 070a0bb168 for NeMo 24.07; NVIDIA-NeMo/Megatron-Bridge
// docs/performance-summary-archive.md @ 067f987df0 for release 25.11).
//
// Tolerance. Both published figures are rounded to integers, so the true ratio lies in
// [(F - 0.5) / (T + 0.5), (F + 0.5) / (T - 0.5)] (F TFLOP/s, T tokens/s). The NeMo 24.07 rows all
// meet that bound exactly. The Megatron-Bridge 25.11 rows cannot all meet it whatever the count:
// runs of one model at one sequence length and TP count the same FLOPs per token, yet the four
// DeepSeek-V3 (w/o MTP) runs at 4096 tokens and TP 1 give 249.12 to 249.74 GFLOP, and the rounding
// interval of the GB200 BF16 run (248.93-249.32) lies 0.10% below that of the GB300 BF16 run
// (249.58-249.90): the table's two figures carry a scatter of at least 0.1% beyond rounding (its
// tokens/s and TFLOP/s are presumably averaged apart). Those rows are held to the rounding bound
// plus 0.1%; the one row beyond that (DeepSeek-V3 BF16 on GB200, 0.28% under our count while the
// GB300 runs of the same model agree with it to 0.01%) is marked as inconsistent and held to 0.3%.
// The bounds are far tighter than any convention's term: the full-square attention is 4-13% of
// these models' counts, the MTP module 4%, GPT-OSS's gated MLP counted x3 +23%, and the test
// checks that each of those alternatives fails.
#include "catch_shim.hpp"

#include <cmath>
#include <string_view>

#include <commscale/workload/flops.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {
namespace megatron_flops_test {

// Two models of the NeMo 24.07 table are NeMo configurations rather than published models, kept
// out of the catalog (their names, 8B and 22B, are nominal: these shapes hold 8.5B and 21.3B
// parameters): NVIDIA/NeMo nemo/collections/llm/gpt/model/nemotron.py Nemotron3Config8B and
// Nemotron3Config22B (squared-ReLU MLP, not gated; multi-head attention; vocabulary 256000).
// GPT3-5B, GPT3-20B and Nemotron-340B are catalog presets (workload/models.hpp).
constexpr transformer nemotron3_8b{.name = "nemotron3-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32,
                                   .ffn = 16384, .vocab = 256000, .max_seq = 4096, .source = "NeMo Nemotron3Config8B"};
constexpr transformer nemotron3_22b{.name = "nemotron3-22b", .layers = 40, .hidden = 6144, .heads = 48, .kv_heads = 48,
                                    .ffn = 24576, .vocab = 256000, .max_seq = 4096, .source = "NeMo Nemotron3Config22B"};

enum class release { nemo_24_07, bridge_25_11 };

struct published_run {
    std::string_view published_model;  // as the table names it
    std::string_view gpu;
    std::string_view precision;
    int seq, tp;
    double tokens_per_s_per_gpu, tflops_per_gpu;
    release rel;
    double inconsistent = 0;  // > 0: the row's own tolerance (see the file comment)
};

// published_runs.csv, every Megatron row with tokens_per_sec_per_gpu and tflops_per_gpu.
constexpr published_run runs[] = {
    {"GPT3-5B", "H100", "FP8", 2048, 1, 22521, 736, release::nemo_24_07},
    {"GPT3-20B", "H100", "FP8", 2048, 2, 5851, 750, release::nemo_24_07},
    {"GPT3-175B", "H100 x128", "FP8", 2048, 4, 726, 782, release::nemo_24_07},
    {"GPT3-175B", "H100 x512", "FP8", 2048, 4, 782, 842, release::nemo_24_07},
    {"LLAMA2-7B", "H100", "FP8", 4096, 1, 16847, 776, release::nemo_24_07},
    {"LLAMA2-13B", "H100", "FP8", 4096, 1, 8646, 754, release::nemo_24_07},
    {"LLAMA2-70B", "H100", "FP8", 4096, 4, 1707, 759, release::nemo_24_07},
    {"Nemotron-8B", "H100", "FP8", 4096, 2, 12701, 653, release::nemo_24_07},
    {"Nemotron-22B", "H100", "FP8", 4096, 2, 4256, 554, release::nemo_24_07},
    {"Nemotron-340B", "H100", "FP8", 4096, 8, 322, 678, release::nemo_24_07},
    {"LLAMA3-8B", "H100", "FP8", 8192, 1, 12036, 697, release::nemo_24_07},
    {"LLAMA3-70B", "H100", "FP8", 8192, 4, 1533, 738, release::nemo_24_07},
    {"LLAMA3_8B", "GB300", "FP8-CS", 8192, 1, 37556, 1933, release::bridge_25_11},
    {"LLAMA3_70B", "GB300", "FP8-CS", 8192, 1, 4520, 2030, release::bridge_25_11},
    {"LLAMA3.1_405B", "GB300", "FP8-CS", 8192, 2, 999, 2522, release::bridge_25_11},
    {"DeepSeekV3 (w/o MTP)", "GB300", "BF16", 4096, 1, 3848, 961, release::bridge_25_11},
    {"DeepSeekV3 (w/o MTP)", "GB300", "FP8-MX", 4096, 1, 4357, 1088, release::bridge_25_11},
    {"GPT OSS 120B", "GB300", "BF16", 8192, 1, 18347, 565, release::bridge_25_11},
    {"Qwen3_30B_a3B", "GB300", "FP8-MX", 4096, 1, 28934, 666, release::bridge_25_11},
    {"Qwen3_235B_a22B", "GB300", "BF16", 4096, 1, 6131, 907, release::bridge_25_11},
    {"LLAMA3_8B", "GB200", "FP8-CS", 8192, 1, 31508, 1622, release::bridge_25_11},
    {"LLAMA3_70B", "GB200", "FP8-CS", 8192, 1, 4312, 1937, release::bridge_25_11},
    {"LLAMA3.1_405B", "GB200", "FP8-CS", 8192, 4, 813, 2053, release::bridge_25_11},
    // 782 / 3139 = 249.12 GFLOP per token, 0.28% under the count that the GB300 runs of the same
    // model, sequence and TP reproduce within 0.01% (file comment): inconsistent as published.
    {"DeepSeekV3 (w/o MTP)", "GB200", "BF16", 4096, 1, 3139, 782, release::bridge_25_11, 0.003},
    {"DeepSeekV3 (w/o MTP)", "GB200", "FP8-MX", 4096, 1, 4018, 1003, release::bridge_25_11},
    {"GPT OSS 120B", "GB200", "BF16", 8192, 1, 15876, 488, release::bridge_25_11},
    {"Qwen3_30B_a3B", "GB200", "FP8-MX", 4096, 1, 23766, 547, release::bridge_25_11},
    {"Qwen3_235B_a22B", "GB200", "BF16", 4096, 1, 4916, 728, release::bridge_25_11},
    {"LLAMA3_8B", "B200", "FP8-CS", 8192, 1, 30624, 1576, release::bridge_25_11},
    {"LLAMA3.1_405B", "B200", "FP8-CS", 8192, 4, 661, 1667, release::bridge_25_11},
    {"DeepSeekV3 (w/ MTP)", "B200", "FP8-MX", 4096, 1, 2139, 557, release::bridge_25_11},
    {"GPT OSS 120B", "B200", "BF16", 4096, 1, 8213, 223, release::bridge_25_11},
    {"Qwen3_30B_a3B", "B200", "FP8-MX", 4096, 1, 9299, 214, release::bridge_25_11},
    {"Qwen3_235B_a22B", "B200", "FP8-MX", 4096, 1, 3269, 484, release::bridge_25_11},
    {"LLAMA3_8B", "H100", "FP8-CS", 8192, 1, 14451, 744, release::bridge_25_11},
    {"LLAMA3_70B", "H100", "FP8-CS", 8192, 4, 1602, 719, release::bridge_25_11},
    {"LLAMA3.1_405B", "H100", "FP8-CS", 8192, 8, 292, 737, release::bridge_25_11},
    {"GPT OSS 120B", "H100", "BF16", 4096, 1, 5630, 153, release::bridge_25_11},
    {"Qwen3_30B_a3B", "H100", "FP8-CS", 4096, 1, 5275, 121, release::bridge_25_11},
    {"Qwen3_235B_a22B", "H100", "FP8-CS", 4096, 2, 1575, 233, release::bridge_25_11},
};

/// The shape a published model name denotes: the catalog's preset, or a NeMo configuration above.
/// DeepSeek-V3 "w/o MTP" is the preset with its MTP module off.
transformer shape_of(std::string_view published) {
    if (published == "Nemotron-8B") return nemotron3_8b;
    if (published == "Nemotron-22B") return nemotron3_22b;
    struct alias {
        std::string_view published, preset;
    };
    constexpr alias aliases[] = {
        {"GPT3-5B", "gpt3-5b"},            {"GPT3-20B", "gpt3-20b"},            {"Nemotron-340B", "nemotron4-340b"},
        {"GPT3-175B", "gpt3-175b"},        {"LLAMA2-7B", "llama2-7b"},          {"LLAMA2-13B", "llama2-13b"},
        {"LLAMA2-70B", "llama2-70b"},      {"LLAMA3-8B", "llama3-8b"},          {"LLAMA3_8B", "llama3-8b"},
        {"LLAMA3-70B", "llama3-70b"},      {"LLAMA3_70B", "llama3-70b"},        {"LLAMA3.1_405B", "llama3-405b"},
        {"DeepSeekV3 (w/ MTP)", "deepseek-v3"}, {"DeepSeekV3 (w/o MTP)", "deepseek-v3"},
        {"GPT OSS 120B", "gpt-oss-120b"}, {"Qwen3_30B_a3B", "qwen3-30b-a3b"}, {"Qwen3_235B_a22B", "qwen3-235b-a22b"},
    };
    for (const auto& a : aliases)
        if (a.published == published) {
            transformer m = model_by_name(a.preset);
            if (published == "DeepSeekV3 (w/o MTP)") m.mtp_layers = 0;
            return m;
        }
    FAIL("no shape for " << published);
    return {};
}

/// The options of the release that published the run. NeMo 24.07's figures are reproduced by
/// NeMo's formulas (NVIDIA/NeMo nemo/utils/flops_formulas.py, read at 6a5ad765bc: the full s x s
/// attention square, as Megatron-LM before commit 8873b55d6a) over fixed vocabularies
/// (nemo/collections/common/parts/perf_metrics_utils.py LLM_VOCAB_SIZE_MAP, read at b0545bec2b:
/// gpt3 51200, llama2 32000, llama3 128256, nemotron 256000); only GPT-3 5B tells the fixed 51200
/// from Megatron's padded 50304 (the padded one falls outside the rounding, test below).
/// Megatron-Bridge 25.11 counts causal attention over the vocabulary padded to 128 x TP.
megatron_flops_options options_of(const published_run& r, const transformer& m) {
    megatron_flops_options o;
    o.tensor_parallel = r.tp;
    if (r.rel == release::nemo_24_07) {
        o.attention = megatron_attention_count::full;
        o.vocab = m.vocab == 50257 ? 51200 : m.vocab;  // GPT-3's GPT-2 tokenizer: NeMo's map says 51200
    }
    return o;
}

/// The relative bound of the file comment for one run.
double tolerance_of(const published_run& r) {
    if (r.inconsistent > 0) return r.inconsistent;
    const double rounding = 0.5 / r.tflops_per_gpu + 0.5 / r.tokens_per_s_per_gpu;
    return rounding + (r.rel == release::bridge_25_11 ? 0.001 : 0.0);
}

double published_flops_per_token(const published_run& r) { return r.tflops_per_gpu * 1e12 / r.tokens_per_s_per_gpu; }

}  // namespace megatron_flops_test
}  // namespace

TEST_CASE("Megatron's FLOPs per token reproduce every published TFLOP/s / tokens/s of the calibration set") {
    using namespace megatron_flops_test;
    for (const auto& r : runs) {
        const transformer m = shape_of(r.published_model);
        const double ours = in_flops(megatron_model_flops_per_token(m, r.seq, options_of(r, m)));
        const double published = published_flops_per_token(r);
        INFO(r.published_model << " on " << r.gpu << " " << r.precision << ", seq " << r.seq << ", TP " << r.tp
                               << ": published " << published / 1e9 << " GFLOP/token, Megatron's count " << ours / 1e9
                               << ", library's own " << in_flops(model_flops_per_token(m, r.seq)) / 1e9
                               << ", tolerance " << tolerance_of(r));
        CHECK(std::fabs(ours / published - 1.0) <= tolerance_of(r));
    }
}

TEST_CASE("NeMo 24.07's rows meet the rounding of their two integers exactly, with the full-square attention") {
    using namespace megatron_flops_test;
    for (const auto& r : runs) {
        if (r.rel != release::nemo_24_07) continue;
        const transformer m = shape_of(r.published_model);
        const double ours = in_flops(megatron_model_flops_per_token(m, r.seq, options_of(r, m)));
        INFO(r.published_model << ": " << ours / 1e9 << " GFLOP/token");
        CHECK(ours >= (r.tflops_per_gpu - 0.5) * 1e12 / (r.tokens_per_s_per_gpu + 0.5));
        CHECK(ours <= (r.tflops_per_gpu + 0.5) * 1e12 / (r.tokens_per_s_per_gpu - 0.5));
    }
}

TEST_CASE("every other convention misses the published ratios: causal vs full square, MTP, gated GELU, vocabulary") {
    using namespace megatron_flops_test;
    for (const auto& r : runs) {
        const transformer m = shape_of(r.published_model);
        const double published = published_flops_per_token(r);
        INFO(r.published_model << " on " << r.gpu);
        // The other attention convention: NeMo 24.07 counted the full square, Bridge 25.11 the causal half.
        auto other = options_of(r, m);
        other.attention = other.attention == megatron_attention_count::causal ? megatron_attention_count::full
                                                                              : megatron_attention_count::causal;
        CHECK(std::fabs(in_flops(megatron_model_flops_per_token(m, r.seq, other)) / published - 1.0) > 0.01);
        // GPT-OSS's gated quick-GELU MLP counted as SwiGLU (x3): far off.
        if (m.attention_sinks) {
            auto gated = options_of(r, m);
            gated.swiglu = true;
            CHECK(in_flops(megatron_model_flops_per_token(m, r.seq, gated)) / published - 1.0 > 0.1);
        }
    }
    // DeepSeek-V3 with its MTP module counted where the run had none, and the reverse.
    transformer without = model_by_name("deepseek-v3");
    without.mtp_layers = 0;
    const transformer with = model_by_name("deepseek-v3");
    CHECK(in_flops(megatron_model_flops_per_token(with, 4096)) / (961e12 / 3848) - 1.0 > 0.03);
    CHECK(1.0 - in_flops(megatron_model_flops_per_token(without, 4096)) / (557e12 / 2139) > 0.03);
    // GPT-3 5B over the vocabulary Megatron pads to (50304) instead of NeMo's 51200: outside the rounding.
    megatron_flops_options padded{.attention = megatron_attention_count::full};
    const double at_padded = in_flops(megatron_model_flops_per_token(models::gpt3_5b, 2048, padded));
    CHECK(at_padded < (736 - 0.5) * 1e12 / (22521 + 0.5));
}

TEST_CASE("Megatron's terms, worked by hand: Llama 3 8B at 8192 tokens, TP 1 and TP 4") {
    // training.py transformer_flops, per token (B s = 1): l = 32, h = 4096, q = 4096, kv = 1024,
    // ffn 14336 x3 (SwiGLU), V 128256 (a multiple of 128; of 512 only padded to 128512).
    constexpr double l = 32, h = 4096, q = 4096, kv = 1024, f = 14336, s = 8192;
    constexpr double mlp = 6 * h * 3 * f * l;
    constexpr double attn = l * 6 * (h * (q + 2 * kv) + q * h);
    constexpr double core = l * 6 * q * s;  // 6 x q / 2 (causal) x 2 (scores and values) x s
    const auto m = model_by_name("llama3-8b");
    CHECK(in_flops(megatron_model_flops_per_token(m, s)) == Approx(mlp + attn + core + 6 * h * 128256).epsilon(1e-12));
    CHECK(megatron_logits_vocab(m, {.tensor_parallel = 4}) == 128512);
    CHECK(in_flops(megatron_model_flops_per_token(m, s, {.tensor_parallel = 4})) ==
          Approx(mlp + attn + core + 6 * h * 128512).epsilon(1e-12));
    CHECK(in_flops(megatron_model_flops_per_token(m, s, {.attention = megatron_attention_count::full})) ==
          Approx(mlp + attn + 2 * core + 6 * h * 128256).epsilon(1e-12));
    // Per iteration: x B s.
    CHECK(in_flops(megatron_model_flops(m, s, 128)) == Approx(128 * s * (mlp + attn + core + 6 * h * 128256)).epsilon(1e-12));
}

TEST_CASE("Megatron's MLA, MoE and MTP terms, worked by hand: DeepSeek-V3 at 4096 tokens") {
    // training.py: q_lora_rank 1536 (q_term r_q (h + a (d_n + d_r) + 1)), kv_lora_rank 512,
    // qk_head_dim 128, qk_pos_emb_head_dim 64, v_head_dim 128, 128 heads, h 7168; 3 dense layers of
    // 18432, 58 MoE layers of top-8 x 2048 + one shared expert of 2048; the MTP module as a 62nd
    // (MoE) layer plus its norms and 2h -> h projection, and a second logits GEMM over 129280.
    constexpr double h = 7168, a = 128, dn = 128, dr = 64, dv = 128, rq = 1536, rkv = 512, s = 4096, V = 129280;
    constexpr double attn = 6 * (rq * (h + a * (dn + dr) + 1) + rkv * (h + a * (dn + dv) + 1) + h * dr + a * dv * h);
    constexpr double core = 6 * (a * (dn + dr) / 2 + a * dv / 2) * s;
    auto expected = [&](double mtp) {
        const double mlp = 6 * h * 3 * (18432 * 3 + (8 * 2048 + 2048) * (58 + mtp));
        return mlp + (61 + mtp) * (attn + core) + 6 * mtp * (3 * h + 2 * h * h) + 6 * h * V * (1 + mtp);
    };
    transformer m = model_by_name("deepseek-v3");
    CHECK(in_flops(megatron_model_flops_per_token(m, s)) == Approx(expected(1)).epsilon(1e-12));
    m.mtp_layers = 0;
    CHECK(in_flops(megatron_model_flops_per_token(m, s)) == Approx(expected(0)).epsilon(1e-12));
}
