// Expert parallelism carved out of DP x CP and expert tensor parallelism, as Megatron-Core's
// "MoE parallel folding" lays them out (megatron/core/parallel_state.py, initialize_model_parallel:
// the expert layers decompose each pipeline stage's tp x cp x dp ranks as etp x ep x expert-DP):
// validation, the EP group's placement and the links its all-to-all uses, the expert weights'
// memory, the expert-DP gradient reduction, and the expert GEMMs under expert TP.
#include "catch_shim.hpp"
#include "plan_fixtures.hpp"

#include <cmath>
#include <string>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/memory.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

using plan_test::error_of;
using plan_test::h100_nodes;

TEST_CASE("EP carved out of DP x CP: cp 2 x dp 4 takes ep 8, an ep not dividing dp x cp is refused") {
    const cluster c = h100_nodes(1);
    const auto& m = models::deepseek_v3;  // 256 routed experts
    plan p{.tp = 1, .pp = 1, .dp = 4, .cp = 2, .ep = 8, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    CHECK(error_of(p, m, c) == "no error");
    CHECK(p.expert_tp() == 1);
    CHECK(p.expert_dp() == 1);  // every rank of the stage holds its own 32 experts
    // the EP group is the 8 consecutive ranks: the 2 CP ranks of each of the 4 DP replicas
    const auto g = group_placement(p, parallel_dim::ep, 8);
    CHECK(g.ranks == 8);
    CHECK(g.stride == 1);
    CHECK(g.ranks_per_node == 8);
    // the dense gradients still reduce over all dp x cp = 8 ranks
    CHECK(group_placement(p, parallel_dim::dp, 8).ranks == 8);

    // 16 divides the 256 experts but not dp x cp = 8
    p.ep = 16;
    const std::string e = error_of(p, m, c);
    CHECK_THAT(e, Contains("plan.ep | plan.ep: expected a divisor of dp x cp (4 x 2 = 8)"));
    CHECK_THAT(e, Contains("got 16"));
    // ep dividing dp x cp but not dp alone (the old rule): cp 4 x dp 2 with ep 8
    plan q{.tp = 1, .pp = 1, .dp = 2, .cp = 4, .ep = 8, .micro_batch = 1, .global_batch = 2, .seq = 4096};
    CHECK(error_of(q, m, c) == "no error");
}

TEST_CASE("expert tensor parallelism: etp x ep divides tp x cp x dp, etp divides the expert width") {
    const cluster c = h100_nodes(1);
    const auto& m = models::deepseek_v3;  // expert width 2048
    plan p{.tp = 2, .pp = 1, .dp = 4, .ep = 8, .micro_batch = 1, .global_batch = 4, .seq = 4096};
    // etp = tp = 2 by default: ep must divide dp x cp = 4
    CHECK_THAT(error_of(p, m, c), Contains("plan.ep: expected a divisor of dp x cp (4 x 1 = 4)"));
    // whole experts per rank (etp 1): the stage's 8 ranks are 8 EP ranks of one expert-TP rank each
    p.etp = 1;
    CHECK(error_of(p, m, c) == "no error");
    CHECK(p.expert_dp() == 1);
    const auto g = group_placement(p, parallel_dim::ep, 8);
    CHECK(g.stride == 1);
    CHECK(g.ranks_per_node == 8);
    p.etp = 4;  // 4 x 8 does not divide 8
    CHECK_THAT(error_of(p, m, c), Contains("plan.ep: expected a divisor of tp x cp x dp / etp (8 / 4 = 2)"));
    p.etp = 3;
    CHECK_THAT(error_of(p, m, c), Contains("plan.etp: expected a divisor of the expert width (2048)"));
    p.ep = 1;
    p.etp = 2;
    auto dense = models::llama3_8b;
    p.etp = 1;  // a dense model has no experts to split apart from TP
    CHECK_THAT(error_of(p, dense, c), Contains("plan.etp"));
    p.etp = 2;  // = tp: accepted
    CHECK(error_of(p, dense, c) == "no error");
    p.etp = -1;
    CHECK_THAT(error_of(p, m, c), Contains("plan.etp"));
}

TEST_CASE("EP 8 on DGX H100: the all-to-all on NVLink inside a node, on the NICs across nodes") {
    // 8 nodes of 8 H100 (NVLink4 switch 450 GB/s per direction per GPU, one 400 Gbps NIC per GPU).
    const cluster c = h100_nodes(8);
    const auto& m = models::mixtral_8x22b;  // 8 experts, top-2
    const collective_pricer price{&c, {}};
    // in the node: tp 1, EP over 8 consecutive ranks
    const plan in{.tp = 1, .pp = 1, .dp = 64, .ep = 8, .micro_batch = 1, .global_batch = 64, .seq = 4096};
    // across nodes: the same tp 1 and EP bytes, but each expert split over the 8 GPUs of a node
    // (etp 8), so the EP group's members are 8 ranks apart: one per node
    plan across = in;
    across.etp = 8;
    REQUIRE(error_of(in, m, c) == "no error");
    REQUIRE(error_of(across, m, c) == "no error");
    const auto ti = plan_traffic(m, in, 8), ta = plan_traffic(m, across, 8);
    CHECK(ti.ep.group.ranks == 8);
    CHECK(ti.ep.group.ranks_per_node == 8);
    CHECK(ti.ep.group.nodes() == 1);
    CHECK(ta.ep.group.ranks == 8);
    CHECK(ta.ep.group.ranks_per_node == 1);
    CHECK(ta.ep.group.nodes() == 8);
    // the same calls of the same bytes: k b s h e / t with t = 1
    CHECK(ti.ep.bytes.value() == ta.ep.bytes.value());
    CHECK(ti.ep.count == ta.ep.count);
    CHECK(ti.ep.bytes.value() == Approx(2.0 * 4096 * 6144 * 2.0));
    const double t_in = in_seconds(detail::calls_time(ti.ep, price));
    const double t_across = in_seconds(detail::calls_time(ta.ep, price));
    // NVLink4 450 GB/s per direction vs one 50 GB/s NIC per GPU: about 9x on the wire (7/8 of an
    // all-to-all leaves the GPU either way); the model's efficiencies and latencies keep it > 5x
    INFO("EP all-to-all per step: in the node " << t_in << " s, across nodes " << t_across << " s");
    CHECK(t_across / t_in > 5.0);
    CHECK(t_across / t_in < 12.0);
    // the step predictor prices the same group: in-node EP comm = the all-to-alls alone
    const auto acc = accelerator_by_name(c.node.accelerator);
    const auto ri = predict_step(m, c, acc, in);
    CHECK_THAT(in_seconds(ri.ep.total), WithinRel(t_in, 1e-12));
    // across nodes EP comm adds the expert-TP all-gather / reduce-scatter (inside the node)
    const auto ra = predict_step(m, c, acc, across);
    CHECK(in_seconds(ra.ep.total) > t_across);
    CHECK(ta.etp_gather.group.ranks == 8);
    CHECK(ta.etp_gather.group.ranks_per_node == 8);
    // Megatron's usual layout, tp = etp = 8 with ep 8 over dp 8: EP one rank per node as well
    const plan tp8{.tp = 8, .pp = 1, .dp = 8, .ep = 8, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    REQUIRE(error_of(tp8, m, c) == "no error");
    const auto g8 = group_placement(tp8, parallel_dim::ep, 8);
    CHECK(g8.stride == 8);
    CHECK(g8.ranks_per_node == 1);
    // and with cp: tp 1, cp 2, dp 32, ep 8 stays in the node (CP ranks first, then DP)
    const plan cp2{.tp = 1, .pp = 1, .dp = 32, .cp = 2, .ep = 8, .micro_batch = 1, .global_batch = 32, .seq = 4096};
    REQUIRE(error_of(cp2, m, c) == "no error");
    CHECK(group_placement(cp2, parallel_dim::ep, 8).ranks_per_node == 8);
}

TEST_CASE("expert weights per GPU scale as 1 / (ep x etp): DeepSeek-V3 by hand") {
    const auto& m = models::deepseek_v3;
    // DeepSeek-V3 (config.json): 58 MoE layers of 256 routed experts, each a SwiGLU MLP of
    // 3 x 7168 x 2048 parameters; the MTP module carries one more MoE layer
    const double per_expert = 3.0 * 7168 * 2048;
    CHECK(routed_expert_parameters(m) == 58.0 * 256 * per_expert);
    const double routed = 59.0 * 256 * per_expert;  // main model + MTP module
    const double all = total_parameters(m) + mtp_parameters(m);
    // ZeRO 0: 2 bytes of weights per parameter, dense parts / tp, experts / (ep etp)
    for (int tp : {1, 8}) {
        for (int ep : {1, 8, 64}) {
            for (int etp : {1, tp}) {
                INFO("tp " << tp << ", ep " << ep << ", etp " << etp);
                const auto s = model_state_per_gpu(m, tp, 1, 64, ep, 0, mixed_precision_adam, etp);
                const double expected = 2.0 * ((all - routed) / tp + routed / (static_cast<double>(ep) * etp));
                CHECK_THAT(in_bytes(s.weights), WithinRel(expected, 1e-12));
            }
        }
    }
    // the expert weights alone: 2 x 59 x 256 x 44.04M / (ep x etp) bytes (20.79 GB at ep 64)
    const auto ep1 = model_state_per_gpu(m, 1, 1, 64, 1, 0);
    const auto ep64 = model_state_per_gpu(m, 1, 1, 64, 64, 0);
    CHECK_THAT(in_bytes(ep1.weights) - in_bytes(ep64.weights), WithinRel(2.0 * routed * 63.0 / 64.0, 1e-12));
    // ZeRO 1: Adam's 12 bytes of the experts are sharded over expert-DP (dp tp / (etp ep) = 8 for
    // dp 64, ep 8), the rest over all 64 DP ranks (Megatron-Core's distributed optimizer)
    const auto z1 = model_state_per_gpu(m, 1, 1, 64, 8, 1);
    CHECK_THAT(in_bytes(z1.optimizer), WithinRel(12.0 * ((all - routed) / 64.0 + routed / 8.0 / 8.0), 1e-12));
    // the step predictor's memory: tp 8 with etp 8 vs etp 1 (whole experts per rank) at ep 8
    const cluster c = h100_nodes(32);
    const auto acc = accelerator_by_name(c.node.accelerator);
    plan p{.tp = 8, .pp = 8, .dp = 4, .ep = 4, .micro_batch = 1, .global_batch = 64, .seq = 4096};
    p.zero = 0;
    const auto a = predict_step(m, c, acc, p);
    p.etp = 1;  // 8 x 4 x 1 = 32 ranks per stage: ep 4 x etp 1 divides them
    const auto b = predict_step(m, c, acc, p);
    // the predictor charges every stage the largest one's 8 layers (a 64-layer model, 61 of them
    // MoE, + the MTP module's) / pp 8: 62 x 256 experts / 8 per stage, / ep 4, / etp 8 or 1
    const double stage_experts = 62.0 * 256 * per_expert / 8.0 / 4.0;
    CHECK_THAT(in_bytes(b.memory.state.weights) - in_bytes(a.memory.state.weights),
               WithinRel(2.0 * stage_experts * (1.0 - 1.0 / 8.0), 1e-9));
}

TEST_CASE("expert-DP gradient reduction: dp x cp / ep ranks for the experts, dp x cp for the rest") {
    const cluster c = h100_nodes(16);
    const auto& m = models::deepseek_v3;
    // tp 1, pp 8, cp 2, dp 8, ep 8: 128 GPUs; expert-DP = 16 / 8 = 2
    plan p{.tp = 1, .pp = 8, .dp = 8, .cp = 2, .ep = 8, .micro_batch = 1, .global_batch = 64, .seq = 4096};
    set_gradient_bytes(p, 4);  // fp32 gradients (Megatron-LM's bf16 default)
    REQUIRE(error_of(p, m, c) == "no error");
    CHECK(p.expert_dp() == 2);
    const auto t = plan_traffic(m, p, 8);
    CHECK(t.dp_main.group.ranks == 16);
    CHECK(t.dp_expert_main.group.ranks == 2);
    // gradient bytes: the stage's dense parameters and its experts / ep, fp32
    const double experts = expert_parameters_per_gpu(m, p);
    CHECK_THAT(experts, WithinRel(8.0 * 58.0 / 61.0 * 256.0 * 3.0 * 7168 * 2048 / 8.0, 1e-12));
    CHECK_THAT(in_bytes(t.dp_expert_gradient_bytes), WithinRel(4.0 * experts, 1e-12));
    CHECK_THAT(in_bytes(t.dp_gradient_bytes), WithinRel(4.0 * (parameters_per_gpu(m, p) - experts), 1e-12));
    CHECK(t.dp_expert_main.op == collective_op::reduce_scatter);  // ZeRO 1, the distributed optimizer
    // the EP group (8 consecutive ranks: cp 2 x 4 of the DP replicas) fills a block; the block's
    // expert-DP partner is the same EP rank in the next block, past the 8 pipeline stages: 64
    // ranks apart, in another node. The dense DP group has 8 members in each of 2 nodes.
    CHECK(t.dp_expert_main.group.stride == 64);
    CHECK(t.dp_expert_main.group.ranks_per_node == 1);
    CHECK(t.dp_main.group.ranks_per_node == 8);
    // the step reduces both: more DP time than the dense stream alone
    const auto acc = accelerator_by_name(c.node.accelerator);
    const auto r = predict_step(m, c, acc, p);
    const collective_pricer price{&c, {}};
    const double dense_only = in_seconds(detail::calls_time(t.dp_main, price) + detail::calls_time(t.dp_gather, price));
    CHECK(in_seconds(r.dp.total) > dense_only);
    // with every rank of the stage an EP rank (ep = dp x cp), the experts have no replica to reduce with
    p.ep = 16;
    const auto u = plan_traffic(m, p, 8);
    CHECK(p.expert_dp() == 1);
    CHECK(u.dp_expert_main.empty());
    CHECK(u.dp_main.group.ranks == 16);
    // a dense model and EP 1 keep the single stream
    p.ep = 1;
    const auto v = plan_traffic(m, p, 8);
    CHECK(v.dp_expert_main.empty());
    CHECK_THAT(in_bytes(v.dp_gradient_bytes), WithinRel(4.0 * parameters_per_gpu(m, p), 1e-15));
}

TEST_CASE("expert tensor parallelism: the same expert FLOPs per rank, in GEMMs etp times taller and 1/etp as wide") {
    // DeepSeek-V3 on H100, tp 8, ep 8: with etp = tp = 8 each rank runs all T k tokens its TP
    // group received through 1/8 of each local expert; with etp = 1 its own T k / 8 tokens through
    // whole experts. One expert GEMM on a given batch of tokens is 8x the work per rank with
    // etp = 1 (the split undone), but each rank sees 1/8 of the tokens (Megatron-Core's MoE with
    // TP is sequence-parallel), so the FLOPs per rank are the same and the time per rank stays
    // about the same where the GEMMs are compute-bound. Where they are not (few tokens per
    // expert), whole experts take longer: each rank reads 8x the expert weights.
    const auto& m = models::deepseek_v3;
    const auto acc = accelerator_by_name("h100-sxm");
    const compute_params cp = compute_params_for(acc, dtype::bf16);
    // the compute model's large-GEMM rate for grouped GEMMs (compute_constants::grouped_gemm_efficiency)
    const double rate = acc.peak(dtype::bf16)->value() * cp.gemm_efficiency * cp.grouped_gemm_efficiency;
    const double h = 7168, f = 2048, k = 8;
    for (int mb : {1, 16}) {
        plan p{.tp = 8, .pp = 1, .dp = 8, .ep = 8, .micro_batch = mb, .global_batch = 8 * mb, .seq = 4096};
        const double t_split = in_seconds(routed_expert_gemm_time(m, p, cp));
        p.etp = 1;
        const double t_whole = in_seconds(routed_expert_gemm_time(m, p, cp));
        INFO("micro-batch " << mb << ": routed expert GEMMs per MoE layer, etp 8 " << t_split << " s, etp 1 " << t_whole << " s");
        // per-rank FLOPs: T k / t tokens through whole experts, 3 GEMMs of 2 h f, fwd + bwd (x 3)
        const double flops_rank = 3.0 * 3.0 * 2.0 * (4096.0 * mb * k / 8) * h * f;
        CHECK(t_split >= 0.999 * flops_rank / rate);
        CHECK(t_whole >= 0.999 * flops_rank / rate);
        if (mb == 16) {
            // 2048 tokens per local expert with etp 1: compute-bound, the same time within 10%
            CHECK(t_whole / t_split > 0.9);
            CHECK(t_whole / t_split < 1.1);
            CHECK(t_split < 1.1 * flops_rank / rate);
        } else {
            // 128 tokens per whole expert: memory-bound on the expert weights
            CHECK(t_whole > 1.5 * t_split);
        }
    }
    plan p{.tp = 8, .pp = 1, .dp = 8, .ep = 8, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    // memory: experts per GPU 8x with etp 1 (whole experts)
    const auto s8 = model_state_per_gpu(m, 8, 1, 8, 8, 0, mixed_precision_adam, 8);
    const auto s1 = model_state_per_gpu(m, 8, 1, 8, 8, 0, mixed_precision_adam, 1);
    const double routed = 59.0 * 256 * 3.0 * 7168 * 2048;
    CHECK_THAT(in_bytes(s1.weights) - in_bytes(s8.weights), WithinRel(2.0 * routed / 8.0 * (1.0 - 1.0 / 8.0), 1e-12));
    // no expert-TP collectives at etp = 1 or etp = tp; with 1 < etp != tp (tp 8, etp 2) an all-gather
    // and a reduce-scatter per MoE layer forward and backward over the 2 expert-TP ranks
    cluster c = h100_nodes(8);
    p.etp = 1;
    CHECK(plan_traffic(m, p, 8).etp_gather.empty());
    p.etp = 8;
    CHECK(plan_traffic(m, p, 8).etp_gather.empty());
    p.etp = 2;
    p.ep = 8;
    REQUIRE(error_of(p, m, c) == "no error");
    const auto t = plan_traffic(m, p, 8);
    CHECK(t.etp_gather.group.ranks == 2);
    CHECK(t.etp_gather.op == collective_op::all_gather);
    CHECK(t.etp_reduce.op == collective_op::reduce_scatter);
    CHECK(t.etp_gather.count == Approx(58.0 / 61.0 * 61.0 * 2.0));
    CHECK(t.etp_gather.bytes.value() == Approx(8.0 * 4096 * 7168 * 2.0 * 2.0 / 8.0));
}

TEST_CASE("planner: EP searched over tp x cp x dp / etp, expert TP over the divisors of tp") {
    // Megatron-Core (parallel_state.py initialize_model_parallel) lays the expert layers of a stage
    // out as etp x ep x expert-DP over its tp x cp x dp ranks. Mixtral 8x7B (8 experts, expert
    // width 14336) on 2 DGX H100 nodes: with etp = tp, ep divides dp x cp (and with cp 2, dp 4 the
    // search holds ep 8, which divides dp x cp but not dp); with etp < tp, ep may fold over TP too
    // (tp 2, etp 1, dp 4: ep 8). Every shape validates.
    const cluster c = h100_nodes(2);
    const auto& m = models::mixtral_8x7b;
    search_request r;
    r.global_batch = 64;
    r.seq = 4096;
    const auto shapes = plan_shapes(m, c, r);
    bool folded_over_cp = false, folded_over_tp = false, etp_below_tp = false;
    for (const auto& s : shapes) {
        const int etp = s.etp == 0 ? s.tp : s.etp;
        INFO("tp " << s.tp << " pp " << s.pp << " dp " << s.dp << " cp " << s.cp << " ep " << s.ep << " etp " << etp);
        CHECK(s.tp % etp == 0);
        CHECK(m.expert_width() % etp == 0);
        CHECK((static_cast<long long>(s.tp) * s.cp * s.dp / etp) % s.ep == 0);
        if (etp == s.tp) CHECK((s.dp * s.cp) % s.ep == 0);
        CHECK(m.experts % s.ep == 0);
        CHECK(s.etp != s.tp);  // etp equal to tp is spelled 0 (Megatron's default), so plans are not listed twice
        folded_over_cp = folded_over_cp || (etp == s.tp && s.dp % s.ep != 0);
        folded_over_tp = folded_over_tp || ((s.dp * s.cp) % s.ep != 0);
        etp_below_tp = etp_below_tp || etp < s.tp;
    }
    CHECK(folded_over_cp);
    CHECK(folded_over_tp);
    CHECK(etp_below_tp);
    const auto res = search_plans(m, c, accelerator_by_name(c.node.accelerator), r);
    REQUIRE_FALSE(res.top.empty());
    CHECK(res.rejected == 0);  // every enumerated plan validates
}

TEST_CASE("planner: the published Qwen3 235B layout (TP 2, PP 8, EP 32, expert TP 1 on 256 H100) is in the space") {
    // Megatron-Bridge 25.11's Qwen3 235B-A22B H100 recipe (calibration set): TP 2, PP 8, EP 32 on
    // 256 GPUs, dp 16, expert TP 1: ep 32 does not divide dp x cp = 16, so only expert TP 1
    // (EP folded over TP) makes it valid. The search must enumerate it, and validate() must name
    // the flag when it is asked for with expert TP = tp.
    cluster c = h100_nodes(32);
    const transformer& m = models::qwen3_235b_a22b;
    search_request r;
    r.global_batch = 2048;
    r.seq = 4096;
    const auto shapes = plan_shapes(m, c, r);
    CHECK(std::any_of(shapes.begin(), shapes.end(), [](const auto& s) {
        return s.tp == 2 && s.pp == 8 && s.dp == 16 && s.cp == 1 && s.ep == 32 && s.etp == 1;
    }));
    plan p{.tp = 2, .pp = 8, .dp = 16, .ep = 32, .micro_batch = 1, .global_batch = 2048, .seq = 4096};
    try {
        validate(p, m, c);
        FAIL("ep 32 with expert TP = tp 2 and dp 16 must be refused");
    } catch (const input_error& e) {
        const std::string what = e.what();
        CHECK(what.find("plan.ep") != std::string::npos);
        CHECK(what.find("--etp 1") != std::string::npos);
    }
    p.etp = 1;
    CHECK_NOTHROW(validate(p, m, c));
}

TEST_CASE("TP collectives of MoE layers: none in the MLP when the experts are not split over TP") {
    // DeepSeek-V3 (61 layers, the first 3 dense) on 64 DGX H100 nodes, TP 2 x PP 8 x DP 32, EP 64:
    // with expert TP 1, Megatron-Core's all-to-all dispatcher sends each TP rank's sequence shard to
    // the experts over EP, so the 58 MoE layers keep the attention's TP pair only (2 of 4
    // collectives per layer, forward and backward); with expert TP = TP the dispatcher gathers and
    // reduce-scatters over TP as a dense MLP does.
    const transformer& m = models::deepseek_v3;
    plan p{.tp = 2, .pp = 8, .dp = 32, .ep = 64, .micro_batch = 1, .global_batch = 512, .seq = 4096};
    p.sequence_parallel = true;
    p.etp = 1;
    plan q = p;
    q.etp = 2;
    q.ep = 32;
    const step_traffic folded = plan_traffic(m, p, 8), split = plan_traffic(m, q, 8);
    const double moe_layers = 58.0 / 61.0;
    CHECK(folded.tp_main.count == Approx(split.tp_main.count * (1.0 - 0.5 * moe_layers)));
    CHECK(folded.tp_gather.count == Approx(split.tp_gather.count * (1.0 - 0.5 * moe_layers)));
    CHECK(folded.tp_main.bytes.value() == Approx(split.tp_main.bytes.value()));
    // half of each layer's reduce-scatters belong to its forward either way
    CHECK(folded.tp_forward_share == Approx(0.5));
    CHECK(split.tp_forward_share == Approx(0.5));
}
