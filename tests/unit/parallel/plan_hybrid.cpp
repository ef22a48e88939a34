// Parallelism of hybrid Mamba-Transformer models as Megatron-Core runs them: TP splits the Mamba-2
// heads and groups (megatron/core/ssm/mamba_mixer.py), CP turns sequence shards into head shards by
// all-to-all (megatron/core/ssm/mamba_context_parallel.py), one TP collective pair per layer (each
// layer one block), the ring only on the attention layers; the planner keeps to the same rules.
#include "catch_shim.hpp"
#include "plan_fixtures.hpp"

#include <string>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/parallel/traffic.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::Contains;


TEST_CASE("TP must split the Mamba-2 heads and their groups, CP the heads left on a TP rank") {
    const auto& m = models::nemotron_h_8b;  // 128 Mamba heads in 8 groups, 32 attention heads
    // 16 divides the 32 attention heads and the 128 Mamba heads but not the 8 groups
    plan p{.tp = 16, .dp = 1, .micro_batch = 1, .global_batch = 1, .seq = 8192};
    const std::string e = plan_test::error_of(p, m, plan_test::h100_nodes(2));
    CHECK_THAT(e, Contains("plan.tp | "));
    CHECK_THAT(e, Contains("mamba_heads 128, mamba_groups 8"));
    CHECK_THAT(e, Contains("got 16"));
    CHECK(mamba_tp_ok(m, 8));
    CHECK(!mamba_tp_ok(m, 16));
    // tp 8 leaves 16 heads and one group per rank: cp 2 and 16 split them (B, C repeated), 3 does not
    CHECK(mamba_cp_ok(m, 8, 2));
    CHECK(mamba_cp_ok(m, 8, 16));
    CHECK(!mamba_cp_ok(m, 8, 32));  // 16 heads on 32 CP ranks
    CHECK(!mamba_cp_ok(m, 1, 3));   // 3 divides neither the 128 heads nor the 8 groups
    // tp 2: 4 groups per rank, cp 8 repeats each group twice (8 % 4 == 0); cp 4 splits them
    CHECK(mamba_cp_ok(m, 2, 8));
    CHECK(mamba_cp_ok(m, 2, 4));
    plan q{.tp = 8, .dp = 1, .cp = 3, .micro_batch = 1, .global_batch = 1, .seq = 8190};
    const std::string ecp = plan_test::error_of(q, m, plan_test::h100_nodes(3));
    CHECK_THAT(ecp, Contains("plan.cp | "));
    CHECK_THAT(ecp, Contains("with tp 8"));
    // a transformer has no such rule
    CHECK(mamba_tp_ok(models::llama3_8b, 16));
    CHECK(mamba_cp_ok(models::llama3_8b, 1, 3));
}

TEST_CASE("TP traffic of a hybrid model: one all-reduce pair per layer, not two") {
    const auto& m = models::nemotron_h_8b;
    plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 8, .seq = 8192};
    const auto t = plan_traffic(m, p, 8);
    // 2 micro-batches x 52 layers x (1 forward + 1 backward)
    CHECK(t.tp_main.count == 2.0 * 52 * 2);
    CHECK(in_bytes(t.tp_main.bytes) == 1.0 * 8192 * 4096 * 2);
    p.recompute_mode = recompute::full;
    CHECK(plan_traffic(m, p, 8).tp_main.count == 2.0 * 52 * 3);
    // a transformer layer keeps its two (attention and MLP): Llama 3 8B, 32 layers
    plan l{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 8, .seq = 8192};
    CHECK(plan_traffic(models::llama3_8b, l, 8).tp_main.count == 2.0 * 32 * 4);
}

TEST_CASE("CP of a hybrid model: the ring on the attention layers, all-to-alls on the Mamba-2 layers") {
    const auto& m = models::nemotron_h_8b;
    plan p{.tp = 2, .dp = 2, .cp = 2, .micro_batch = 1, .global_batch = 2, .seq = 8192};
    const auto t = plan_traffic(m, p, 8);
    // ring: 4 attention layers x (cp - 1) x 3 passes (forward K/V, backward K/V and gradients)
    CHECK(t.cp.count == Approx(1.0 * 52 * (4.0 / 52) * 1 * 3));
    // Mamba CP (mamba_context_parallel.py): per layer and pass z, x (d_in / t each), B, C (G N / t
    // each: 4 groups per TP rank >= cp, no repeat) and dt (H / t) into head shards, and the output
    // (d_in / t) back: 6 all-to-alls over 8192 / 2 tokens, bf16; forward and backward
    const double width = (2.0 * 8192 + 2.0 * 8 * 128 + 128 + 8192) / 2;
    CHECK(t.cp_mamba.op == collective_op::all_to_all);
    CHECK(t.cp_mamba.group.ranks == 2);
    CHECK(t.cp_mamba.count == Approx(24.0 * 6 * 2));
    CHECK(in_bytes(t.cp_mamba.bytes) * 6 == Approx(4096.0 * width * 2));
    // tp 8: one group per rank < cp 2, each group's B and C repeated twice before the exchange
    plan r{.tp = 8, .dp = 1, .cp = 2, .micro_batch = 1, .global_batch = 1, .seq = 8192};
    const auto t8 = plan_traffic(m, r, 8);
    CHECK(in_bytes(t8.cp_mamba.bytes) * 6 == Approx(4096.0 * (2.0 * 8192 + 2.0 * 2 * 8 * 128 + 128 + 8192) / 8 * 2));
    // a transformer has no Mamba all-to-alls
    plan l{.tp = 2, .dp = 2, .cp = 2, .micro_batch = 1, .global_batch = 2, .seq = 8192};
    CHECK(plan_traffic(models::llama3_8b, l, 8).cp_mamba.empty());
}

TEST_CASE("the Mamba-2 mixers' gradients are reduced with the dense parameters") {
    const auto& m = models::nemotron_h_8b;
    plan p{.tp = 2, .dp = 4, .micro_batch = 1, .global_batch = 8, .seq = 8192};
    // every parameter split by tp (the vocabulary too), none by ep: total / 2, + one more table with
    // pp 1 and untied embeddings counted once per stage end (parameters_per_gpu)
    CHECK(parameters_per_gpu(m, p) == Approx(total_parameters(m) / 2).epsilon(1e-6));
}

TEST_CASE("the planner searches only the TP and CP degrees Megatron-Core accepts for the mixer") {
    // Nemotron 3 Nano: 64 Mamba heads in 8 groups; on 16 GPUs tp 16 (beyond the node) is never
    // tried and every plan it returns validates
    const cluster c = plan_test::h100_nodes(2);
    search_request r{.global_batch = 32, .seq = 8192, .top_k = 50};
    const auto res = search_plans(models::nemotron3_nano, c, accelerator_by_name(c.node.accelerator), r);
    CHECK(res.rejected == 0);  // nothing the predictor refuses is enumerated
    REQUIRE(!res.top.empty());
    for (const auto& x : res.top) {
        CHECK(mamba_tp_ok(models::nemotron3_nano, x.p.tp));
        CHECK(mamba_cp_ok(models::nemotron3_nano, x.p.tp, x.p.cp));
        CHECK(plan_test::error_of(x.p, models::nemotron3_nano, c) == "no error");
    }
    CHECK(res.evaluated > 0);
}

TEST_CASE("Gated DeltaNet heads split over TP x CP as Megatron-Core splits them, and the CP all-to-alls count them") {
    const auto& m = models::qwen3_next_80b_a3b;  // 16 query-key heads, 32 value heads; 16 attention heads
    // megatron/core/ssm/gated_delta_net/common.py: both head counts divided by tp, then by cp
    CHECK(gdn_split_ok(m, 16, 1));
    CHECK(gdn_split_ok(m, 4, 4));
    CHECK(!gdn_split_ok(m, 32, 1));  // 16 key heads on 32 ranks
    CHECK(!gdn_split_ok(m, 4, 8));   // 4 key heads per TP rank on 8 CP ranks
    CHECK(gdn_split_ok(models::llama3_8b, 3, 5));  // no GDN layers: nothing to split
    plan p{.tp = 4, .dp = 1, .cp = 8, .micro_batch = 1, .global_batch = 1, .seq = 8192};
    const std::string e = plan_test::error_of(p, m, plan_test::h100_nodes(4));
    CHECK_THAT(e, Contains("plan.cp | "));
    CHECK_THAT(e, Contains("Gated DeltaNet key and value heads (16, 32)"));
    // CP 2 over TP 2: per layer and pass, the G blocks' 2 all-to-alls (in_proj's output to head
    // shards, the norm's output back), b (s/c) (2 qk + 2 v + 2 Hv + v) / t 16-bit values
    plan q{.tp = 2, .dp = 1, .cp = 2, .micro_batch = 1, .global_batch = 1, .seq = 8192};
    const cluster c = plan_test::h100_nodes(1);
    const auto t = plan_traffic(m, q, c.domain_gpus());
    REQUIRE(!t.cp_mamba.empty());
    const double per_pass_values = 36.0 / 96 * 4096 * (2 * 2048 + 2 * 4096 + 64 + 4096) / 2;
    const double calls_per_pass = 36.0 / 96 * 2;
    CHECK(in_bytes(t.cp_mamba.bytes) == Approx(2 * per_pass_values / calls_per_pass).epsilon(1e-12));
}
