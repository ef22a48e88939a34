// Pipeline schedules of today: zero-bubble ZB-H1 / ZB-V (Qi et al. 2024, "Zero Bubble (Almost)
// Pipeline Parallelism", ICLR 2024; sail-sg/zero-bubble-pipeline-parallelism README) and DualPipe
// (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", Sec. 3.2.1, Table 2; deepseek-ai/DualPipe):
// the bubble formulas against the papers' statements, the schedules in the step predictor (bubble,
// memory, EP overlap), their validation and the planner's search.
#include "catch_shim.hpp"

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/flops.hpp>
#include <commscale/workload/models.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace commscale;

namespace {
double us(duration d) { return in_us(d); }
duration t(double v) { return seconds(v * 1e-6); }
auto free_comm = [](const placement&, collective_op, data_size) { return seconds(0.0); };
}  // namespace

TEST_CASE("bubble formulas: DeepSeek-V3 Table 2 (1F1B, ZB1P, DualPipe) with F = 1, B = 2, W = 1") {
    // Table 2: 1F1B (PP-1)(F+B); ZB1P (PP-1)(F+B-2W); DualPipe (PP/2-1)(F&B+B-3W). B is the full
    // backward, W its weight part; F&B is a forward and a backward chunk run together (= F + B of compute).
    const int pp = 8, m = 32;
    const duration stage = t(3), backward = t(2), w = t(1);
    CHECK(us(pipeline_bubble(pipeline_schedule::one_f_one_b, pp, m, 1, stage, backward, w)) == Approx(7 * 3.0));
    CHECK(us(pipeline_bubble(pipeline_schedule::zb_h1, pp, m, 1, stage, backward, w)) == Approx(7 * (3.0 - 2.0)));
    CHECK(us(pipeline_bubble(pipeline_schedule::dualpipe, pp, m, 1, stage, backward, w)) == Approx(3 * (3.0 + 2.0 - 3.0)));
    // GPipe has 1F1B's bubble; interleaving divides it by V (Narayanan et al. 2021 Sec. 2.2.2).
    CHECK(us(pipeline_bubble(pipeline_schedule::gpipe, pp, m, 1, stage, backward, w)) == Approx(21.0));
    CHECK(us(pipeline_bubble(pipeline_schedule::interleaved, pp, m, 4, stage, backward, w)) == Approx(21.0 / 4));
    // No pipeline, no bubble; never negative when W dominates.
    CHECK(us(pipeline_bubble(pipeline_schedule::dualpipe, 1, m, 1, stage, backward, w)) == 0.0);
    CHECK(us(pipeline_bubble(pipeline_schedule::zb_h1, pp, m, 1, t(1), t(0.5), t(0.9))) == 0.0);
}

TEST_CASE("bubble formulas: Qi et al. with T_F = T_B = T_W, bubble rates (p-1)/m, (p-1)/3m and 0") {
    // sail-sg README "Comparison assuming T_F=T_B=T_W": bubble rate 1F1B (p-1)/m, ZB1P (p-1)/(3m),
    // ZBV 0 (rate = bubble / (m x stage time)); Sec. 2.1: ZB-H1's bubble is one third of 1F1B's.
    for (int p : {4, 8, 16}) {
        const int m = 4 * p;
        const duration stage = t(3), backward = t(2), w = t(1);  // T_F = T_B = T_W = 1, backward = T_B + T_W
        const double ideal = m * 3.0;
        CHECK(us(pipeline_bubble(pipeline_schedule::one_f_one_b, p, m, 1, stage, backward, w)) / ideal ==
              Approx((p - 1.0) / m));
        CHECK(us(pipeline_bubble(pipeline_schedule::zb_h1, p, m, 1, stage, backward, w)) / ideal ==
              Approx((p - 1.0) / (3.0 * m)));
        CHECK(us(pipeline_bubble(pipeline_schedule::zb_v, p, m, 1, stage, backward, w)) == Approx(0.0).margin(1e-12));
    }
}

TEST_CASE("schedules in the step predictor: bubble order, 1F1B memory for ZB, DualPipe's two parameter copies") {
    const transformer m = model_by_name("llama2-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;  // 64 GPUs
    const accelerator h100 = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 8, .pp = 8, .dp = 1, .micro_batch = 1, .global_batch = 32, .seq = 4096};
    auto run = [&](pipeline_schedule s) {
        plan q = p;
        q.schedule = s;
        return predict_step_with(m, c, h100, q, free_comm);
    };
    const auto one = run(pipeline_schedule::one_f_one_b), zb1 = run(pipeline_schedule::zb_h1),
               zbv = run(pipeline_schedule::zb_v), dual = run(pipeline_schedule::dualpipe);
    // Without communication cost the stage time is compute: ZB-H1 removes 2W of each (p-1) slot.
    // W = dW GEMMs = the forward GEMMs' FLOPs, the larger part of a 70B layer's forward at 4k tokens.
    const auto lf = layer_forward_flops(m, 4096, 1);
    const double gemm_share = (lf.total() - lf.attention_core()) / lf.total();
    REQUIRE(gemm_share > 0.7);
    CHECK(in_seconds(zb1.bubble) < 0.6 * in_seconds(one.bubble));
    CHECK(in_seconds(zbv.bubble) < in_seconds(zb1.bubble));
    CHECK(in_seconds(dual.bubble) < in_seconds(zb1.bubble));
    CHECK(in_seconds(one.bubble) / in_seconds(one.compute - one.optimizer - one.overlap_slowdown) == Approx(7.0 / 32.0));
    // Compute itself is the same work.
    CHECK(in_seconds(zb1.compute) == Approx(in_seconds(one.compute)));
    // Memory: ZB-H1 and ZB-V keep 1F1B's activations and state.
    CHECK(in_bytes(zb1.memory.total()) == Approx(in_bytes(one.memory.total())));
    CHECK(in_bytes(zbv.memory.total()) == Approx(in_bytes(one.memory.total())));
    // DualPipe: 2x parameters (two stages per device) and p + 1 in-flight micro-batches (Table 2).
    CHECK(in_bytes(dual.memory.state.total()) == Approx(2.0 * in_bytes(one.memory.state.total())).epsilon(0.05));
    const double layer_act_ratio = in_bytes(dual.memory.activations) / in_bytes(one.memory.activations);
    CHECK(layer_act_ratio == Approx(9.0 / 8.0).epsilon(0.02));
}

TEST_CASE("DualPipe hides the EP all-to-all under the paired chunk's compute") {
    const transformer mixtral = model_by_name("mixtral-8x7b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    plan p{.tp = 2, .pp = 4, .dp = 8, .ep = 8, .micro_batch = 1, .global_batch = 128, .seq = 4096};
    const auto base = predict_step(mixtral, c, p);
    REQUIRE(in_seconds(base.ep.total) > 0);
    CHECK(in_seconds(base.ep.exposed) == Approx(in_seconds(base.ep.total)));
    p.schedule = pipeline_schedule::dualpipe;
    const auto dual = predict_step(mixtral, c, p);
    CHECK(in_seconds(dual.ep.total) == Approx(in_seconds(base.ep.total)));
    CHECK(in_seconds(dual.ep.exposed) < 0.05 * in_seconds(dual.ep.total));
}

TEST_CASE("schedule validation: DualPipe needs an even pp and an even number of micro-batches >= 2 pp") {
    const transformer m = model_by_name("llama2-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    auto field_of = [&](plan p) -> std::string {
        try {
            (void)predict_step(m, c, p);
        } catch (const input_error& e) {
            return e.field();
        }
        return "none";
    };
    plan p{.tp = 8, .pp = 8, .dp = 1, .micro_batch = 1, .global_batch = 16, .seq = 4096,
           .schedule = pipeline_schedule::dualpipe};
    CHECK(field_of(p) == "none");  // 16 micro-batches = 2 x pp
    p.global_batch = 14;
    CHECK(field_of(p) == "plan.global_batch");  // 14 < 2 x 8
    // An odd number of stages: 7 x 8 GPUs of 7 nodes.
    cluster seven = c;
    seven.nodes = 7;
    plan odd{.tp = 8, .pp = 7, .dp = 1, .micro_batch = 1, .global_batch = 28, .seq = 4096,
             .schedule = pipeline_schedule::dualpipe};
    try {
        (void)predict_step(m, seven, odd);
        FAIL("odd pp accepted for DualPipe");
    } catch (const input_error& e) {
        CHECK(e.field() == "plan.pp");
    }
    // ZB-V and DualPipe are pipeline schedules: pp = 1 is refused, naming the schedule.
    cluster one = c;
    one.nodes = 1;
    plan single{.tp = 8, .pp = 1, .dp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096,
                .schedule = pipeline_schedule::zb_v};
    try {
        (void)predict_step(m, one, single);
        FAIL("zb-v accepted without a pipeline");
    } catch (const input_error& e) {
        CHECK(e.field() == "plan.schedule");
    }
    CHECK(parse<pipeline_schedule>("zb-v", "plan.schedule") == pipeline_schedule::zb_v);
    CHECK(to_string(pipeline_schedule::dualpipe) == "dualpipe");
    CHECK_THROWS_AS(parse<pipeline_schedule>("zb-h3", "plan.schedule"), input_error);
}

TEST_CASE("plan searches the zero-bubble and DualPipe schedules") {
    const transformer m = model_by_name("llama2-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    const accelerator h100 = accelerator_by_name(c.node.accelerator);
    search_request r;
    r.global_batch = 64;
    r.seq = 4096;
    r.top_k = 100000;
    r.pareto = false;
    r.try_block_recompute = false;  // not what this test is about (it keeps every plan: quicker without)
    const auto res = search_plans(m, c, h100, r);
    std::set<std::string> seen;
    for (const auto& e : res.top) seen.insert(std::string(to_string(e.p.schedule)));
    CHECK(seen.count("zb-h1") == 1);
    CHECK(seen.count("zb-v") == 1);
    CHECK(seen.count("dualpipe") == 1);
    r.try_zero_bubble = false;
    seen.clear();
    for (const auto& e : search_plans(m, c, h100, r).top) seen.insert(std::string(to_string(e.p.schedule)));
    CHECK(seen.count("zb-h1") == 0);
    CHECK(seen.count("dualpipe") == 0);
}

TEST_CASE("max_stage_layers equals the largest stage of every even split (brute force)") {
    for (int pp = 1; pp <= 16; ++pp)
        for (int v = 1; v <= 4; ++v)
            for (int layers = pp * v; layers <= 130; ++layers) {
                plan p{.pp = pp};
                if (v > 1) {
                    p.schedule = pipeline_schedule::interleaved;
                    p.virtual_stages = v;
                }
                int best = 0, sum = 0;
                for (int s = 0; s < pp; ++s) {
                    best = std::max(best, stage_layers(p, layers, s));
                    sum += stage_layers(p, layers, s);
                }
                INFO("pp " << pp << " V " << v << " layers " << layers);
                REQUIRE(sum == layers);
                REQUIRE(max_stage_layers(p, layers) == best);
            }
}

TEST_CASE("MoE routing imbalance, token dropping and padding set the busiest EP rank's load") {
    // Effective load of the busiest rank (plan::effective_expert_load): dropless = the imbalance;
    // dropping caps it at the capacity factor (GShard/Switch); padding always does the capacity's work.
    plan p;
    CHECK(p.effective_expert_load() == 1.0);
    p.expert_load = 1.6;
    CHECK(p.effective_expert_load() == 1.6);
    p.capacity_factor = 1.25;
    CHECK(p.effective_expert_load() == 1.25);
    p.pad_to_capacity = true;
    p.expert_load = 1.1;
    CHECK(p.effective_expert_load() == 1.25);

    // In the step: the all-to-all bytes and the routed-expert GEMMs of the busiest rank scale with
    // the load; attention and the dense parts do not.
    const transformer mixtral = model_by_name("mixtral-8x7b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    plan q{.tp = 2, .pp = 4, .dp = 8, .ep = 8, .micro_batch = 1, .global_batch = 128, .seq = 4096};
    const auto balanced = predict_step(mixtral, c, q);
    q.expert_load = 1.5;
    const auto skewed = predict_step(mixtral, c, q);
    const double ep_ratio = in_seconds(skewed.ep.total) / in_seconds(balanced.ep.total);
    CHECK(ep_ratio > 1.3);  // bandwidth-bound all-to-all of 1.5x the bytes (latency part unchanged)
    CHECK(ep_ratio <= 1.5 + 1e-9);
    // Expert GEMMs are ~89% of Mixtral's layer GEMM FLOPs at top-2 (2 x 3 h f = 352M vs QKV + O
    // h (2h + 2kv) = 42M per token): x1.5 load gives about 0.11 + 0.89 x 1.5 = 1.45.
    CHECK(in_seconds(skewed.layer.gemm_fwd) > 1.2 * in_seconds(balanced.layer.gemm_fwd));
    CHECK(in_seconds(skewed.layer.gemm_fwd) < 1.5 * in_seconds(balanced.layer.gemm_fwd));
    CHECK(in_seconds(skewed.layer.attention_fwd) == Approx(in_seconds(balanced.layer.attention_fwd)));
    // Dropping at capacity 1.0 undoes the skew entirely.
    q.capacity_factor = 1.0;
    const auto dropped = predict_step(mixtral, c, q);
    CHECK(in_seconds(dropped.step) == Approx(in_seconds(balanced.step)));
    // Bad values name the field.
    q.expert_load = 0.5;
    CHECK_THROWS_WITH(predict_step(mixtral, c, q), Catch::Matchers::Contains("plan.expert_load"));
    q.expert_load = 1.0;
    q.capacity_factor = 0.0;
    q.pad_to_capacity = true;
    CHECK_THROWS_WITH(predict_step(mixtral, c, q), Catch::Matchers::Contains("plan.pad_to_capacity"));
}

namespace {
// An event simulation of Megatron-Core's pipeline schedules (megatron/core/pipeline_parallel/
// schedules.py): each rank runs its chunks in the schedule's order, one at a time, and a chunk
// starts once its input has arrived, `hop` after the chunk it depends on ends (a send that never
// blocks: the most any overlap can hide). Non-interleaved 1F1B: p - r - 1 warm-up forwards on rank r;
// interleaved: (p - r - 1) 2 + (V - 1) p (get_num_warmup_microbatches), micro-batches in groups of p
// per chunk (microbatch_group_size_per_vp_stage). Returns the step's makespan.
double simulated_pipeline(int p, int v, int m, double f, double b, double hop) {
    struct op {
        bool forward;
        int chunk, mb;
    };
    const int n = m * v;
    auto fwd = [&](int k) { return op{true, (k % (p * v)) / p, (k / (p * v)) * p + k % p}; };
    auto bwd = [&](int k) { return op{false, v - 1 - (k % (p * v)) / p, (k / (p * v)) * p + k % p}; };
    std::vector<std::vector<op>> order(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
        const int w = std::min(v > 1 ? (p - r - 1) * 2 + (v - 1) * p : p - r - 1, n);
        auto& o = order[static_cast<std::size_t>(r)];
        for (int k = 0; k < w; ++k) o.push_back(fwd(k));
        for (int i = 0; i < n - w; ++i) {
            o.push_back(fwd(w + i));
            o.push_back(bwd(i));
        }
        for (int i = n - w; i < n; ++i) o.push_back(bwd(i));
    }
    // end time of (forward?, rank, chunk, micro-batch); -1 while not run
    std::vector<double> end(static_cast<std::size_t>(2 * p * v * m), -1.0);
    auto at = [&](bool forward, int r, int j, int mb) -> double& {
        return end[static_cast<std::size_t>(((forward ? 0 : 1) * p * v + r * v + j) * m + mb)];
    };
    std::vector<std::size_t> pos(static_cast<std::size_t>(p), 0);
    std::vector<double> clock(static_cast<std::size_t>(p), 0.0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int r = 0; r < p; ++r) {
            auto& o = order[static_cast<std::size_t>(r)];
            for (std::size_t& i = pos[static_cast<std::size_t>(r)]; i < o.size(); ++i) {
                const op x = o[i];
                double ready = 0.0;  // when its input is here
                if (x.forward && (r > 0 || x.chunk > 0)) {
                    const double e = r > 0 ? at(true, r - 1, x.chunk, x.mb) : at(true, p - 1, x.chunk - 1, x.mb);
                    if (e < 0) break;
                    ready = e + hop;
                } else if (!x.forward) {
                    const double e = r < p - 1 ? at(false, r + 1, x.chunk, x.mb)
                                     : x.chunk < v - 1 ? at(false, 0, x.chunk + 1, x.mb)
                                                       : at(true, r, x.chunk, x.mb);
                    if (e < 0) break;
                    ready = e + (r < p - 1 || x.chunk < v - 1 ? hop : 0.0);
                }
                double& c = clock[static_cast<std::size_t>(r)];
                c = std::max(c, ready) + (x.forward ? f : b);
                at(x.forward, r, x.chunk, x.mb) = c;
                progress = true;
            }
        }
    }
    return *std::max_element(clock.begin(), clock.end());
}
}  // namespace

TEST_CASE("pipeline transfers: the step predictor exposes what an event simulation of the schedule cannot hide") {
    // Without transfers the simulation gives Narayanan et al.'s step, m V (f + b) + (p - 1)(f + b)
    // (Sec. 2.2); the transfers add what no overlap hides: interleaved, the fill's and the drain's
    // hops through the p V virtual stages; 1F1B, whose steady state keeps no slack, each
    // micro-batch's round trip as well. The step predictor's exposed PP time, with every send at
    // one price, is that many sends.
    const double f = 1.0, b = 2.0, hop = 0.01;
    for (int p : {2, 4, 8})
        for (int v : {1, 2, 4})
            for (int m : {p, 4 * p}) {
                CAPTURE(p, v, m);
                const double none = simulated_pipeline(p, v, m, f, b, 0.0);
                CHECK(none == Approx(m * v * (f + b) + (p - 1) * (f + b)));
                const double sends = (simulated_pipeline(p, v, m, f, b, hop) - none) / hop;
                CHECK(sends == Approx(v > 1 ? 2.0 * (p * v - 1) : 2.0 * (p - 1) * m / p + 2.0 * (p - 2)).margin(1e-6));
            }

    // the step predictor: every send_recv at 1 ms, everything else free
    const transformer mdl = model_by_name("llama2-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 16;  // 128 GPUs
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    auto sends_only = [](const placement&, collective_op op, data_size) {
        return seconds(op == collective_op::send_recv ? 1e-3 : 0.0);
    };
    for (int v : {1, 2, 4}) {
        plan pl{.tp = 8, .pp = 4, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 4096};
        if (v > 1) {
            pl.schedule = pipeline_schedule::interleaved;
            pl.virtual_stages = v;
        }
        const int m = pl.micro_batches();
        const step_breakdown r = predict_step_with(mdl, c, acc, pl, sends_only);
        CAPTURE(v, m);
        CHECK((in_seconds(r.pp.total) * 1e3) == Approx(2.0 * m * v));  // one activation forward, one gradient back per chunk
        const double simulated = (simulated_pipeline(pl.pp, v, m, 1.0, 2.0, hop) - simulated_pipeline(pl.pp, v, m, 1.0, 2.0, 0.0)) / hop;
        CHECK(in_seconds(r.pp.exposed) * 1e3 == Approx(simulated).epsilon(1e-9));
        pl.overlap.pp = false;  // blocking sends: every transfer waits
        CHECK(in_seconds(predict_step_with(mdl, c, acc, pl, sends_only).pp.exposed) * 1e3 == Approx(2.0 * m * v));
    }
    // the schedules the simulation does not cover keep the fill's and the drain's 2 (p - 1)
    for (pipeline_schedule sched : {pipeline_schedule::gpipe, pipeline_schedule::zb_h1}) {
        plan pl{.tp = 8, .pp = 4, .dp = 4, .micro_batch = 1, .global_batch = 64, .seq = 4096};
        pl.schedule = sched;
        CHECK(in_seconds(predict_step_with(mdl, c, acc, pl, sends_only).pp.exposed) * 1e3 == Approx(2.0 * (4 - 1)));
    }
}
