// Megatron-Core's pipeline layout with the embedding and the loss counted as pipeline layers
// (--account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split;
// parallel/plan.hpp stage_layers and validate_pipeline_split): the per-stage layer counts of
// Megatron-Core's own unit tests, Llama 3.1 405B on PP 16 x VP 8, the step predictor's explicit
// layout, plan JSON and the planner.
#include "catch_shim.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {

plan split_plan(int pp, int v, bool embedding, bool loss) {
    plan p;
    p.pp = pp;
    if (v > 1) {
        p.schedule = pipeline_schedule::interleaved;
        p.virtual_stages = v;
    }
    p.account_for_embedding_in_pipeline_split = embedding;
    p.account_for_loss_in_pipeline_split = loss;
    return p;
}

std::vector<int> stages_of(const plan& p, int layers) {
    std::vector<int> out;
    for (int s = 0; s < p.pp; ++s) out.push_back(stage_layers(p, layers, s));
    return out;
}

// A model of `layers` layers that every divisibility but the pipeline's accepts (tp 1).
transformer with_layers(int layers) {
    transformer m = model_by_name("llama3-8b");
    m.layers = layers;
    return m;
}

cluster h100_gpus(int gpus) {
    cluster c = presets::dgx_h100;
    c.nodes = gpus / c.node.gpus;
    return c;
}

}  // namespace

TEST_CASE("per-stage layer counts match Megatron-Core's get_num_layers_to_build") {
    // Hand-computed from megatron/core/transformer/transformer_block.py get_num_layers_to_build:
    // (layers + extras) / pp per stage, / V per virtual stage; minus one layer in virtual stage 0
    // of stage 0 (embedding) and in the last virtual stage of the last stage (loss). The cases
    // are Megatron-LM's tests/unit_tests/transformer/test_transformer_block.py
    // (TestPipelineParallelTransformerBlock) and test_cuda_graphs.py (first/last layer numbers).
    // 63 layers, PP 4, embedding: 64 / 4 = 16 slots per stage, stage 0 builds 15
    CHECK(stages_of(split_plan(4, 1, true, false), 63) == std::vector<int>{15, 16, 16, 16});
    // 63 layers, PP 4, loss: the last stage builds 15
    CHECK(stages_of(split_plan(4, 1, false, true), 63) == std::vector<int>{16, 16, 16, 15});
    // 62 layers, PP 4, both: 64 / 4 = 16, first and last build 15
    CHECK(stages_of(split_plan(4, 1, true, true), 62) == std::vector<int>{15, 16, 16, 15});
    // 62 layers, PP 4 x VP 2, both: 8 per virtual stage; virtual stage 0 of stage 0 and virtual
    // stage 1 of stage 3 build 7: stages 7 + 8, 16, 16, 8 + 7
    CHECK(stages_of(split_plan(4, 2, true, true), 62) == std::vector<int>{15, 16, 16, 15});
    // test_cuda_graphs.py: 14 layers, PP 4, both: first layer numbers [1, 4, 8, 12], last
    // [3, 7, 11, 14] -> 3, 4, 4, 3 layers
    CHECK(stages_of(split_plan(4, 1, true, true), 14) == std::vector<int>{3, 4, 4, 3});
    // 14 layers, PP 4 x VP 2, both: virtual stages (in order) 1, 2, 2, 2, 2, 2, 2, 1 layers
    // (first [1, 2, 4, ..., 14], last [1, 3, 5, ..., 14]); stage 0 = 1 + 2, stage 3 = 2 + 1
    CHECK(stages_of(split_plan(4, 2, true, true), 14) == std::vector<int>{3, 4, 4, 3});
    // Llama 3.1 405B: 126 layers on PP 16 x VP 8 with both: 128 / 128 = 1 slot per virtual stage;
    // stage 0's first virtual stage holds only the embedding, stage 15's last only the loss
    const plan l = split_plan(16, 8, true, true);
    const auto counts = stages_of(l, 126);
    CHECK(counts.front() == 7);
    CHECK(counts.back() == 7);
    for (int s = 1; s < 15; ++s) CHECK(counts[static_cast<std::size_t>(s)] == 8);
    CHECK(max_stage_layers(l, 126) == 8);
    // pp = 1: the flags change nothing (Megatron builds every layer on the one stage)
    CHECK(stage_layers(split_plan(1, 1, true, true), 126, 0) == 126);
    // the defaults keep commscale's split (the flags are off)
    CHECK(plan{}.pipeline_split_extras() == 0);
    CHECK(stages_of(split_plan(4, 1, false, false), 62) == std::vector<int>{15, 16, 16, 15});
}

TEST_CASE("stage_layers' closed form equals the per-virtual-stage sum it replaces") {
    // the uneven split without the flags: virtual stage j pp + s gets layers / (pp V), + 1 when
    // 1 <= j pp + s <= layers % (pp V); summed over j, for every small pp, V and layer count
    for (int pp = 1; pp <= 12; ++pp)
        for (int v = 1; v <= 6; ++v) {
            if (v > 1 && pp < 2) continue;
            const plan p = split_plan(pp, v, false, false);
            for (int layers = pp * v; layers <= pp * v * 4 + 3; ++layers) {
                const int virt = pp * v, base = layers / virt, extra = layers % virt;
                int total = 0;
                for (int s = 0; s < pp; ++s) {
                    int sum = 0;
                    for (int j = 0; j < v; ++j) sum += base + ((j * pp + s >= 1 && j * pp + s <= extra) ? 1 : 0);
                    INFO("pp " << pp << " V " << v << " layers " << layers << " stage " << s);
                    CHECK(stage_layers(p, layers, s) == (pp == 1 ? layers : sum));
                    total += stage_layers(p, layers, s);
                }
                CHECK(total == layers);
                const stage_layout l = layout_of(p, layers);
                CHECK(l.most == max_stage_layers(p, layers));
            }
        }
}

TEST_CASE("validation mirrors Megatron-Core's rules and names the flags") {
    cluster c = h100_gpus(8);
    // Megatron's cases that must fail: 65 + 2 = 67 not divisible by PP 4; flags with given
    // first/last stage counts (transformer_config.py refuses the two together)
    plan p = split_plan(4, 1, true, true);
    p.dp = 2;
    p.global_batch = 16;
    CHECK_THROWS_WITH(validate(p, with_layers(65), c),
                      Catch::Matchers::Contains("plan.pp") && Catch::Matchers::Contains("layers + 2 = 67"));
    CHECK_NOTHROW(validate(p, with_layers(62), c));
    plan q = split_plan(4, 1, true, false);
    q.dp = 2;
    q.global_batch = 16;
    CHECK_NOTHROW(validate(q, with_layers(63), c));
    q.first_stage_layers = 15;
    CHECK_THROWS_WITH(validate(q, with_layers(63), c),
                      Catch::Matchers::Contains("plan.account_for_embedding_in_pipeline_split") &&
                          Catch::Matchers::Contains("first_stage_layers"));
    // one flag where both are needed: the message says which would divide
    plan one = split_plan(4, 1, false, true);
    one.dp = 2;
    one.global_batch = 16;
    CHECK_THROWS_WITH(validate(one, with_layers(62), c),
                      Catch::Matchers::Contains("layers + 1 = 63") &&
                          Catch::Matchers::Contains("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split"));
    // not with the schedules Megatron-Core does not have
    plan zbv = split_plan(4, 1, true, true);
    zbv.schedule = pipeline_schedule::zb_v;
    zbv.dp = 2;
    zbv.global_batch = 16;
    CHECK_THROWS_WITH(validate(zbv, with_layers(62), c),
                      Catch::Matchers::Contains("plan.account_for_embedding_in_pipeline_split") && Catch::Matchers::Contains("zb-v"));
}

TEST_CASE("Llama 3.1 405B on PP 16 x VP 8 runs with the embedding and loss counted") {
    // Meta's and NVIDIA's layout: TP 8, PP 16, VP 8 (128 virtual stages for 126 layers), 8,192
    // tokens; 16,384 GPUs in the paper, here DP 1 on 128 H100 (the layout, not the scale)
    const transformer m = model_by_name("llama3-405b");
    const cluster c = h100_gpus(128);
    plan p{.tp = 8, .pp = 16, .dp = 1, .micro_batch = 1, .global_batch = 64, .seq = 8192};
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 8;
    p.sequence_parallel = true;
    // without the flags: refused, naming both flags
    try {
        (void)predict_step(m, c, p);
        FAIL("PP 16 x VP 8 on 126 layers was accepted without the flags");
    } catch (const input_error& e) {
        const std::string what = e.what();
        CHECK(what.find("plan.pp") != std::string::npos);
        CHECK(what.find("at most the layers (126)") != std::string::npos);
        CHECK(what.find("--account-for-embedding-in-pipeline-split") != std::string::npos);
        CHECK(what.find("--account-for-loss-in-pipeline-split") != std::string::npos);
        CHECK(what.find("layers + 2 = 128") != std::string::npos);
    }
    p.account_for_embedding_in_pipeline_split = true;
    p.account_for_loss_in_pipeline_split = true;
    const step_breakdown r = predict_step(m, c, p);
    CHECK(r.first_stage_layers == 7);
    CHECK(r.last_stage_layers == 7);
    CHECK(r.max_stage_layers == 8);
    CHECK(r.step.value() > 0);
    CHECK(std::isfinite(r.step.value()));
    // the pace is set by an 8-layer middle stage: 7 layers + the output layer on the last stage
    // is lighter than 8 layers at 8,192 tokens (the output GEMM is ~1/8 of a layer's)
    CHECK(r.stage_microbatch.value() == Approx(8.0 * (r.layer.forward() + r.layer.backward() +
                                                      recompute_time(r.layer, p.recompute_mode)).value()));
    // memory of the explicit layout: the heaviest stage is a middle one, 8 layers and no
    // embedding table (a layer, 3.2B parameters, outweighs the 2.1B-parameter vocabulary table)
    const double layer_params = parameters_per_layer(m).total();
    CHECK(in_bytes(r.memory.state.weights) == Approx(8.0 * layer_params / 8.0 * mixed_precision_adam_fp32_grads.weights));
}

TEST_CASE("the explicit layout: where the loss sits sets the pace, the embedding the memory") {
    // 63 layers on PP 4 (x 8 TP x 2 DP = 64 H100): counting the loss gives the last stage 15
    // layers + the output layer, counting the embedding gives it 16 + the output layer, so
    // the loss-counted split is faster (Megatron's reason for the flag)
    const transformer m = with_layers(63);
    const cluster c = h100_gpus(64);
    plan base{.tp = 8, .pp = 4, .dp = 2, .micro_batch = 1, .global_batch = 64, .seq = 4096};
    plan emb = base, loss = base;
    emb.account_for_embedding_in_pipeline_split = true;
    loss.account_for_loss_in_pipeline_split = true;
    const auto re = predict_step(m, c, emb), rl = predict_step(m, c, loss);
    CHECK(re.first_stage_layers == 15);
    CHECK(re.last_stage_layers == 16);
    CHECK(rl.first_stage_layers == 16);
    CHECK(rl.last_stage_layers == 15);
    CHECK(rl.stage_microbatch < re.stage_microbatch);
    CHECK(rl.step < re.step);
    // Llama 3 8B's vocabulary table (128256 x 4096 = 525M parameters) outweighs a layer (218M),
    // so an end stage is the heaviest: with the loss counted the first (16 layers + input
    // table; the last has 15 + output table), with the embedding counted the last (16 layers +
    // output table + final norm); the weights are exactly that stage's parameters / tp
    const double layer_params = parameters_per_layer(m).total();
    const double table = 128256.0 * 4096.0, norm = 4096.0;
    const double bytes_per = mixed_precision_adam_fp32_grads.weights;
    CHECK(in_bytes(rl.memory.state.weights) == Approx((16.0 * layer_params + table) / 8.0 * bytes_per));
    CHECK(in_bytes(re.memory.state.weights) == Approx((16.0 * layer_params + table + norm) / 8.0 * bytes_per));
    // the default method charges the 16-layer stage both tables spread over the stages instead
    const auto rd = predict_step(with_layers(64), c, base);
    CHECK(in_bytes(rd.memory.state.weights) ==
          Approx((16.0 * layer_params + (2.0 * table + norm) / 4.0) / 8.0 * bytes_per));
}

TEST_CASE("plan JSON carries the flags only when set") {
    const transformer m = model_by_name("llama3-405b");
    plan p{.tp = 8, .pp = 16, .dp = 1, .micro_batch = 1, .global_batch = 64, .seq = 8192};
    p.schedule = pipeline_schedule::interleaved;
    p.virtual_stages = 8;
    const nlohmann::json plain = io::plan_to_json(plan{}, m);
    CHECK_FALSE(plain.contains("account_for_embedding_in_pipeline_split"));
    CHECK_FALSE(plain.contains("account_for_loss_in_pipeline_split"));
    p.account_for_embedding_in_pipeline_split = true;
    p.account_for_loss_in_pipeline_split = true;
    const nlohmann::json j = io::plan_to_json(p, m);
    CHECK(j.at("account_for_embedding_in_pipeline_split") == true);
    CHECK(j.at("account_for_loss_in_pipeline_split") == true);
    CHECK(j.at("stage_layers").front() == 7);
    CHECK(j.at("stage_layers")[1] == 8);
    const plan back = io::plan_from_json(j);
    CHECK(back.account_for_embedding_in_pipeline_split);
    CHECK(back.account_for_loss_in_pipeline_split);
    CHECK(back.first_stage_layers == 0);
    CHECK(io::plan_to_json(back, m) == j);
    // a stage_layers array the flags do not produce is named
    nlohmann::json bad = j;
    bad["stage_layers"][0] = 8;
    bad["stage_layers"][1] = 7;
    CHECK_THROWS_WITH(io::plan_from_json(bad), Catch::Matchers::Contains("plan.stage_layers"));
}

TEST_CASE("the planner searches Megatron-Core's embedding/loss layouts") {
    // Llama 3.1 405B on 128 H100 with PP 16: 16 x 8 = 128 = 126 + 2 is only reachable with
    // both flags; the planner lists it, and skips it with try_pipeline_split off
    const transformer m = model_by_name("llama3-405b");
    const cluster c = h100_gpus(128);
    search_request r;
    r.global_batch = 64;
    r.seq = 8192;
    r.top_k = 1000;
    r.max_micro_batch = 1;
    r.try_zero_bubble = false;
    r.try_sequence_parallel = false;
    auto has_layout = [&](const std::vector<search_detail::shape>& shapes, int pp, int v, bool e, bool l) {
        for (const auto& s : shapes)
            if (s.pp == pp && s.v == v && s.embedding == e && s.loss == l) return true;
        return false;
    };
    const auto shapes = plan_shapes(m, c, r);
    CHECK(has_layout(shapes, 16, 8, true, true));
    CHECK(has_layout(shapes, 16, 1, true, true));   // 1f1b: 128 / 16 = 8 slots per stage
    CHECK_FALSE(has_layout(shapes, 16, 8, false, false));
    CHECK_FALSE(has_layout(shapes, 2, 1, true, true));  // 126 splits evenly on PP 2: no flags needed
    CHECK(has_layout(shapes, 2, 9, false, false));      // 126 = 2 x 9 x 7
    r.try_pipeline_split = false;
    const auto without = plan_shapes(m, c, r);
    CHECK_FALSE(has_layout(without, 16, 8, true, true));
    CHECK(without.size() < shapes.size());
    // every flagged plan the search evaluates validates (none rejected), and the results carry
    // the flags
    r.try_pipeline_split = true;
    r.max_virtual_stages = 8;
    const search_result res = search_plans(m, c, accelerator_by_name(c.node.accelerator), r);
    CHECK(res.rejected == 0);
    bool flagged = false;
    for (const auto& x : res.top) flagged = flagged || x.p.pipeline_split_extras() > 0;
    CHECK(flagged);
}

namespace {
// The stage counts of `p` for a model of `layers` layers (parallel/plan.hpp stage_layers).
std::vector<int> stage_counts(const plan& p, int layers) {
    std::vector<int> out;
    for (int i = 0; i < p.pp; ++i) out.push_back(stage_layers(p, layers, i));
    return out;
}
}  // namespace

TEST_CASE("pipeline layout: a pp that does not divide the layers takes Megatron-Core's first/last stage counts") {
    // Megatron-Core refuses such a pp unless --decoder-first/last-pipeline-num-layers are given
    // (transformer_block.py get_num_layers_to_build), and then wants each given count > 0 and the
    // other stages equal (transformer_config.py). By hand: 80 layers on pp 6, at most ceil(80 / 6)
    // = 14 per stage: four middle stages of 14 leave 24, 12 at each end; 126 on pp 8: six of 16
    // leave 30, 15 + 15; 9 on pp 6: middle stages of 2 would leave 1 for two ends, so four of 1
    // leave 5, 3 + 2 (the last the smaller half); 80 on pp 3: 27, 27 and the last given 26.
    auto split = [](int layers, int pp) {
        const uneven_stage_split s = megatron_uneven_split(layers, pp);
        return std::vector<int>{s.first, s.last};
    };
    CHECK(split(80, 6) == std::vector<int>{12, 12});
    CHECK(split(126, 8) == std::vector<int>{15, 15});
    CHECK(split(9, 6) == std::vector<int>{3, 2});
    CHECK(split(80, 3) == std::vector<int>{0, 26});
    CHECK(split(80, 4) == std::vector<int>{0, 0});  // divides: no counts
    CHECK(split(80, 1) == std::vector<int>{0, 0});
    CHECK(split(7, 8) == std::vector<int>{0, 0});   // more stages than layers
    plan p;
    p.pp = 6;
    const uneven_stage_split s = megatron_uneven_split(80, 6);
    p.first_stage_layers = s.first;
    p.last_stage_layers = s.last;
    CHECK(stage_counts(p, 80) == std::vector<int>{12, 14, 14, 14, 14, 12});

    // Against every split Megatron-Core accepts (0 = not given; transformer_config.py: a given count
    // > 0, the other stages an equal share of the rest, at least one layer each): the largest
    // stage is the smallest any of them reaches, and of those with it the larger end is the
    // smallest.
    int checked = 0;
    for (int layers = 2; layers <= 64; ++layers)
        for (int pp = 2; pp <= layers; ++pp) {
            if (layers % pp == 0) continue;
            const uneven_stage_split got = megatron_uneven_split(layers, pp);
            plan q;
            q.pp = pp;
            q.first_stage_layers = got.first;
            q.last_stage_layers = got.last;
            INFO(layers << " layers on pp " << pp << ": first " << got.first << ", last " << got.last);
            REQUIRE((got.first > 0 || got.last > 0));
            REQUIRE_NOTHROW(validate_stage_layers(q, layers));
            const std::vector<int> counts = stage_counts(q, layers);
            int sum = 0;
            for (int c : counts) sum += c;
            CHECK(sum == layers);
            const int most = *std::max_element(counts.begin(), counts.end());
            const int ends = std::max(counts.front(), counts.back());
            int best_most = layers + 1, best_ends = layers + 1;
            for (int f = 0; f <= layers; ++f)
                for (int l = 0; l <= layers; ++l) {
                    if (f == 0 && l == 0) continue;
                    const int others = pp - (f > 0 ? 1 : 0) - (l > 0 ? 1 : 0), rest = layers - f - l;
                    if (rest < others || (others == 0 && rest != 0) || (others > 0 && rest % others != 0)) continue;
                    const int share = others > 0 ? rest / others : 0;
                    const int first = f > 0 ? f : share, last = l > 0 ? l : share;
                    const int m = std::max({first, last, share}), e = std::max(first, last);
                    if (m < best_most || (m == best_most && e < best_ends)) {
                        best_most = m;
                        best_ends = e;
                    }
                }
            CHECK(most == best_most);
            CHECK(ends == best_ends);
            ++checked;
        }
    CHECK(checked > 1000);
}

TEST_CASE("pipeline layout: the planner gives Megatron-Core plans whose pp does not divide the layers their first/last stage counts") {
    // Llama 3 70B's 80 layers on 48 H100 (pp 3, 6, 12, 24 and 48 among the divisors), without the
    // embedding/loss layouts: under megatron-core every such plan carries megatron_uneven_split's
    // counts where they keep the largest stage at ceil(80 / pp) (pp 3: 27; 6: 14; 12: 7), and
    // none where they cannot (pp 24: 7 at each end against 4; pp 48: 17 against 2), validates and
    // is predicted as its plan; under megatron-deepspeed (DeepSpeed's pipeline engine partitions
    // any count) none carries counts. The counts survive plan --json.
    CHECK(search_detail::megatron_flags_split(framework::megatron_core, 80, 6) == uneven_stage_split{12, 12});
    CHECK(search_detail::megatron_flags_split(framework::megatron_core, 80, 12) == uneven_stage_split{5, 5});
    CHECK(search_detail::megatron_flags_split(framework::megatron_core, 80, 24) == uneven_stage_split{});
    CHECK(search_detail::megatron_flags_split(framework::megatron_core, 80, 48) == uneven_stage_split{});
    CHECK(search_detail::megatron_flags_split(framework::megatron_core, 96, 64) == uneven_stage_split{});
    CHECK(search_detail::megatron_flags_split(framework::megatron_deepspeed, 80, 6) == uneven_stage_split{});
    const transformer m = model_by_name("llama3-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 6;
    const accelerator acc = accelerator_by_name("h100-sxm");
    search_request r;
    r.global_batch = 96;
    r.seq = 8192;
    r.top_k = 100000;
    r.max_micro_batch = 1;
    r.try_pipeline_split = false;
    r.try_sequence_parallel = false;
    const search_result res = search_plans(m, c, acc, r);
    CHECK(res.rejected == 0);
    int uneven = 0;
    for (const auto& x : res.top) {
        INFO("tp " << x.p.tp << " pp " << x.p.pp << " " << to_string(x.p.schedule));
        const uneven_stage_split want = search_detail::megatron_flags_split(framework::megatron_core, m.layers, x.p.pp);
        if (want == uneven_stage_split{} || x.p.schedule == pipeline_schedule::zb_v || x.p.schedule == pipeline_schedule::dualpipe) {
            CHECK(x.p.first_stage_layers == 0);
            CHECK(x.p.last_stage_layers == 0);
            continue;
        }
        ++uneven;
        CHECK(x.p.first_stage_layers == want.first);
        CHECK(x.p.last_stage_layers == want.last);
        CHECK(predict_step(m, c, acc, x.p).step.value() == x.r.step.value());
        const planned back = io::planned_from_json(io::planned_to_json(x));
        CHECK(back.p.first_stage_layers == x.p.first_stage_layers);
        CHECK(back.p.last_stage_layers == x.p.last_stage_layers);
    }
    CHECK(uneven > 0);
    r.base = plan{};
    apply_framework(r.base, framework::megatron_deepspeed);
    const search_result ds = search_plans(m, c, acc, r);
    CHECK(ds.rejected == 0);
    bool any_uneven_pp = false;
    for (const auto& x : ds.top) {
        CHECK(x.p.first_stage_layers == 0);
        CHECK(x.p.last_stage_layers == 0);
        any_uneven_pp = any_uneven_pp || m.layers % x.p.pp != 0;
    }
    CHECK(any_uneven_pp);
}
