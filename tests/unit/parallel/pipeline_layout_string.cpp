// Megatron-Core's custom pipeline layout (--pipeline-model-parallel-layout; parallel/
// pipeline_layout.hpp): the layouts of NVIDIA's performance recipes read into per-rank layer
// counts, Megatron-Core's checks, first/last stage counts with the interleaved schedule, the step
// predictor, plan JSON and the runs CSV.
//
// Expected counts are worked by hand from Megatron-Core's rule (megatron/core/transformer/
// pipeline_parallel_layer_layout.py PipelineParallelLayerLayout.__init__): entry i of the layout is
// virtual stage i / pp of pipeline rank i mod pp; a rank builds the `t` entries of its V stages.
#include "catch_shim.hpp"

#include <string>
#include <vector>

#include <commscale/hardware/clusters.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/io/training_runs.hpp>
#include <commscale/parallel/pipeline_layout.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {

std::vector<int> rank_counts_of(const plan& p, int layers) {
    std::vector<int> out;
    for (int s = 0; s < p.pp; ++s) out.push_back(stage_layers(p, layers, s));
    return out;
}

std::string layout_refusal(std::string_view layout, int pp, const transformer& m) {
    try {
        (void)parse_pipeline_layout(layout, pp, m);
    } catch (const input_error& e) {
        return e.what();
    }
    return "(accepted)";
}

// DeepSeek-V3's recipe plan on 256 GB200 (Megatron-Bridge perf_recipes deepseek/gb200
// deepseek_v3_pretrain_256gpu_gb200_bf16_config: TP 1, PP 4, VP 4, EP 64, micro-batch 1, global
// batch 4096, sequence 4096)
plan dsv3_gb200_plan() {
    plan p{.tp = 1, .pp = 4, .dp = 64, .micro_batch = 1, .global_batch = 4096, .seq = 4096};
    p.ep = 64;
    p.etp = 1;
    return p;
}

cluster layout_gb200_gpus(int gpus) {
    cluster c = cluster_by_name("gb200-nvl72");
    c.nodes = gpus / c.node.gpus;
    return c;
}

}  // namespace

TEST_CASE("pipeline layout: the recipes' layouts give each rank's layers as Megatron-Core places them") {
    const transformer dsv3 = model_by_name("deepseek-v3");  // 61 layers, 1 MTP module
    const transformer kimi = model_by_name("kimi-k2");      // 61 layers, no MTP
    REQUIRE(dsv3.layers == 61);
    REQUIRE(dsv3.mtp_passes() == 1);
    REQUIRE(kimi.mtp_passes() == 0);

    // "Et*4|(t*4|)*14tmL": 16 stages of 4 layers, the last of 1 (with MTP and the loss).
    // PP 4: rank r holds stages r, r + 4, r + 8, r + 12; rank 3's last is the 1-layer stage.
    const auto pp4 = parse_pipeline_layout("Et*4|(t*4|)*14tmL", 4, dsv3);
    CHECK(pp4.virtual_stages == 4);
    CHECK(pp4.rank_layers == std::vector<int>{16, 16, 16, 13});
    // PP 2 (the GB300 FP8 recipes): V 8, rank 0 the 8 even stages, rank 1 seven of 4 and the last
    const auto pp2 = parse_pipeline_layout("Et*4|(t*4|)*14tmL", 2, dsv3);
    CHECK(pp2.virtual_stages == 8);
    CHECK(pp2.rank_layers == std::vector<int>{32, 29});
    // the same with the repeat written out and cosmetic commas (deepseek/gb200's "(tttt|)")
    CHECK(parse_pipeline_layout("Et*4|(tttt|)*14,tmL", 4, dsv3).rank_layers == pp4.rank_layers);
    // "Et|(tt|)*30mL" (the H100 recipes, PP 16): 32 stages, V 2; rank 0 holds stage 0 (1 layer)
    // and 16 (2), rank 15 stage 15 (2) and 31 (MTP and loss only), the others 2 + 2
    const auto h100 = parse_pipeline_layout("Et|(tt|)*30mL", 16, dsv3);
    CHECK(h100.virtual_stages == 2);
    std::vector<int> expected(16, 4);
    expected.front() = 3;
    expected.back() = 2;
    CHECK(h100.rank_layers == expected);
    // Kimi K2's (PP 16, V 1) table entry, [embedding + 4 decoders] + [4 decoders] x 14 + [decoder, loss]
    const auto k2 = parse_pipeline_layout("Et*4|(t*4|)*14tL", 16, kimi);
    CHECK(k2.virtual_stages == 1);
    std::vector<int> k2_expected(16, 4);
    k2_expected.back() = 1;
    CHECK(k2.rank_layers == k2_expected);
}

TEST_CASE("pipeline layout: Megatron-Core's checks, and what the model cannot hold, are named") {
    const transformer dsv3 = model_by_name("deepseek-v3");
    const auto refused = [&](std::string_view layout, int pp, std::string_view why) {
        const std::string e = layout_refusal(layout, pp, dsv3);
        INFO(layout << " -> " << e);
        CHECK_THAT(e, Catch::Matchers::Contains("plan.pipeline_model_parallel_layout"));
        CHECK_THAT(e, Catch::Matchers::Contains(std::string(why)));
    };
    refused("Et*4|(t*4|)*13tmL", 4, "15 is not a multiple of pp = 4");           // 15 stages
    refused("tEt*3|(t*4|)*14tmL", 4, "the embedding E once, first");            // E not first
    refused("EEt*3|(t*4|)*14tmL", 4, "the embedding E once, first");            // E twice
    refused("Et*4|(t*4|)*14tmLL", 4, "the loss L once, last");                  // L twice
    refused("Et*4|(t*4|)*14tLm", 4, "the loss L once, last");                   // L not last
    refused("Et*3|(t*4|)*14tmL", 4, "61 transformer layers t, the model's; the layout has 60");
    refused("Et*4|(t*4|)*14tL", 4, "1 MTP module(s) m, the model's MTP depths; the layout has 0");
    refused("Et*4|(t*4|)*14mtL", 4, "every MTP module m after the last transformer layer t");
    // Megatron-LM's own docstring example puts MTP in a stage of its own, on another rank than the
    // loss (its standalone MTP): the model runs MTP with the output layer
    refused("Ettt|(tt|)*29,m|L", 16, "standalone MTP stage");
    refused("Et*4|(t*4|)*14tmX", 4, "found 'X'");
    refused("Et*4|(t*4| )*14tmL", 4, "found ' '");
    refused("Et*4|((t*4|)*14)*1tmL", 4, "without nested parentheses");
    refused("Et*4|(t*4|)14tmL", 4, "a repeat count after each group");
    refused("Et*4|(t*4|*14tmL", 4, "a ')' closing each '(' group");
    refused("Et*4|t*4|)*14tmL", 4, "a '(' opening each ')' group");
    refused("Et*4|()*14tmL", 4, "a non-empty group");
    refused("Et*|(t*4|)*14tmL", 4, "a count after each '*'");
    refused("*Et*4|(t*4|)*14tmL", 4, "'*' after a layer character");
    refused("", 1, "the embedding E once, first");
    // repeats are counted before they are unrolled: no 10^14-character string is built
    refused("E(t*9999999|)*9999999L", 4, "at most 2^22 layers and separators");
    refused("Et*99999999|L", 1, "at most 7 digits");
    refused(std::string("Et*4|(t*4|)*14tm\x01L"), 4, "found byte 0x01");
    // a long layout is quoted in part, with its length
    const std::string long_layout = "E" + std::string(1000, 't') + "X";
    const std::string e = layout_refusal(long_layout, 1, dsv3);
    CHECK_THAT(e, Catch::Matchers::Contains("...\" (1002 characters)"));
    CHECK(e.size() < 800);
}

TEST_CASE("pipeline layout: a plan takes V and the first and last ranks' layers, as Megatron-Core sets them") {
    const transformer dsv3 = model_by_name("deepseek-v3");
    plan p = dsv3_gb200_plan();
    apply_pipeline_layout(p, "Et*4|(t*4|)*14tmL", dsv3);
    CHECK(p.schedule == pipeline_schedule::interleaved);
    CHECK(p.virtual_stages == 4);
    CHECK(p.first_stage_layers == 16);
    CHECK(p.last_stage_layers == 13);
    CHECK(rank_counts_of(p, dsv3.layers) == std::vector<int>{16, 16, 16, 13});
    CHECK_NOTHROW(validate(p, dsv3, layout_gb200_gpus(256)));

    // an interleaved plan whose V differs from the layout's (Megatron-Core asserts the two agree)
    plan v2 = dsv3_gb200_plan();
    v2.schedule = pipeline_schedule::interleaved;
    v2.virtual_stages = 2;
    CHECK_THROWS_WITH(apply_pipeline_layout(v2, "Et*4|(t*4|)*14tmL", dsv3),
                      Catch::Matchers::Contains("pp 4 x the plan's virtual_stages 2 (the layout has 16)"));
    // not beside the other layout arguments (Megatron-Core's TransformerConfig refuses them together)
    plan given = dsv3_gb200_plan();
    given.first_stage_layers = 16;
    CHECK_THROWS_WITH(apply_pipeline_layout(given, "Et*4|(t*4|)*14tmL", dsv3),
                      Catch::Matchers::Contains("cannot be set with other pipeline layout arguments"));
    plan split = dsv3_gb200_plan();
    split.account_for_loss_in_pipeline_split = true;
    CHECK_THROWS_WITH(apply_pipeline_layout(split, "Et*4|(t*4|)*14tmL", dsv3),
                      Catch::Matchers::Contains("cannot be set with other pipeline layout arguments"));
    // what the step model cannot hold: middle ranks of different sizes, a rank without a layer
    plan uneven = dsv3_gb200_plan();
    CHECK_THROWS_WITH(apply_pipeline_layout(uneven, "Et*4|t*5|t*3|(t*4|)*12tmL", dsv3),
                      Catch::Matchers::Contains("layers per rank: 16,17,15,13"));
    plan empty_rank = dsv3_gb200_plan();
    empty_rank.pp = 2;
    CHECK_THROWS_WITH(apply_pipeline_layout(empty_rank, "Et*61|mL", dsv3),
                      Catch::Matchers::Contains("a transformer layer on every rank (plan::first_stage_layers = 0 is the even "
                                                "split; layers per rank: 61,0)"));
    // one rank: the layout is one stage and sets nothing but checks the model
    plan one;
    apply_pipeline_layout(one, "Et*61mL", dsv3);
    CHECK(one.first_stage_layers == 0);
    CHECK(one.chunks() == 1);
}

TEST_CASE("pipeline layout: first/last stage counts with the interleaved schedule") {
    // Megatron-Core takes --decoder-first/last-pipeline-num-layers with VP when each rank's count
    // divides by V (transformer_config.py); the model reads the ranks' totals and takes any count
    const transformer m = model_by_name("llama3-70b");  // 80 layers
    plan p{.tp = 8, .pp = 4, .dp = 2, .micro_batch = 1, .global_batch = 64, .seq = 4096};
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 2;
    p.first_stage_layers = 18;
    p.last_stage_layers = 18;
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    CHECK_NOTHROW(validate(p, m, c));
    CHECK(rank_counts_of(p, m.layers) == std::vector<int>{18, 22, 22, 18});
    // the rest must still split evenly over the middle ranks
    p.first_stage_layers = 19;
    CHECK_THROWS_WITH(validate(p, m, c), Catch::Matchers::Contains("plan.first_stage_layers"));
}

TEST_CASE("pipeline layout: the step predictor, plan JSON and the runs CSV read it") {
    const transformer dsv3 = model_by_name("deepseek-v3");
    const cluster c = layout_gb200_gpus(256);
    plan layout = dsv3_gb200_plan();
    apply_pipeline_layout(layout, "Et*4|(t*4|)*14tmL", dsv3);
    plan even = dsv3_gb200_plan();
    even.schedule = pipeline_schedule::interleaved;
    even.virtual_stages = 4;
    const step_breakdown rl = predict_step(dsv3, c, layout), re = predict_step(dsv3, c, even);
    CHECK(rl.first_stage_layers == 16);
    CHECK(rl.last_stage_layers == 13);
    CHECK(rl.max_stage_layers == 16);
    // Megatron-Core's even split of 61 layers over 16 virtual stages leaves the last rank 15
    // layers beside the output layer and the MTP module (a layer and a 129K-vocabulary
    // projection); the recipe's layout takes two more off it, and that rank no longer sets the pace
    CHECK(re.last_stage_layers == 15);
    CHECK(rl.stage_microbatch < re.stage_microbatch);
    CHECK(rl.step < re.step);

    // plan JSON: stage_layers carries the counts and reads back to the same plan
    const nlohmann::json j = io::plan_to_json(layout, dsv3);
    CHECK(j.at("stage_layers") == nlohmann::json::array({16, 16, 16, 13}));
    CHECK(j.at("virtual_stages") == 4);
    const plan back = io::plan_from_json(j);
    CHECK(back.first_stage_layers == 0);  // the even split of the remaining ranks gives rank 0 its 16
    CHECK(back.last_stage_layers == 13);
    CHECK(rank_counts_of(back, dsv3.layers) == std::vector<int>{16, 16, 16, 13});
    CHECK(io::plan_to_json(back, dsv3) == j);

    // runs CSV: the column sets V and the split; beside first_stage_layers it is refused, naming the row
    const std::string header = "model,gpus,tp,pp,ep,micro_batch,global_batch,seq,tokens_per_s_per_gpu,cluster,"
                               "pipeline_model_parallel_layout";
    const auto runs = io::parse_training_runs(header + "\ndeepseek-v3,256,1,4,64,1,4096,4096,3000,gb200-nvl72,Et*4|(t*4|)*14tmL\n",
                                              "runs.csv");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].p.virtual_stages == 4);
    CHECK(runs[0].p.schedule == pipeline_schedule::interleaved);
    CHECK(rank_counts_of(runs[0].p, dsv3.layers) == std::vector<int>{16, 16, 16, 13});
    CHECK_THROWS_WITH(io::parse_training_runs(header + ",first_stage_layers\ndeepseek-v3,256,1,4,64,1,4096,4096,3000,"
                                                       "gb200-nvl72,Et*4|(t*4|)*14tmL,16\n",
                                              "runs.csv"),
                      Catch::Matchers::Contains("runs.csv:2: column pipeline_model_parallel_layout"));
}
