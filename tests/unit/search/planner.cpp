// The planner (search/planner.hpp): published layouts, memory, determinism across threads and
// shards, and a brute-force cross-check of the ranking on a small space.
#include "catch_shim.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {

cluster dgx_a100(int nodes) {
    cluster c = cluster_by_name("dgx-a100");
    c.nodes = nodes;
    return c;
}

// Every returned plan in the same order with bit-identical step times.
void require_same(const std::vector<planned>& a, const std::vector<planned>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO("rank " << i);
        CHECK(plan_key(a[i].p) == plan_key(b[i].p));
        CHECK(a[i].r.step.value() == b[i].r.step.value());
    }
}

// GPT-3 175B on 1,024 A100 with global batch 1536 (Narayanan et al. 2021, Table 1 row "175B":
// t = 8, p = 8, 1,024 GPUs, batch 1536). The space is cut (CP <= 2, V <= 4, micro-batch <= 4)
// to keep the sanitizer build quick; the full space is the benchmark's.
search_request gpt3_request() {
    search_request r;
    r.global_batch = 1536;
    r.seq = 2048;
    r.top_k = 20;
    r.max_cp = 2;
    r.max_virtual_stages = 4;
    r.max_micro_batch = 4;
    return r;
}

}  // namespace

TEST_CASE("planner: GPT-3 175B on 1,024 A100-80GB keeps TP inside a DGX node even when it may leave it") {
    const transformer m = model_by_name("gpt3-175b");
    const cluster c = dgx_a100(128);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r = gpt3_request();
    // Let TP span the whole cluster: the predictor, not the rule, must keep it on NVLink.
    r.scale_up_domain = 1024;
    r.threads = 2;
    const search_result res = search_plans(m, c, acc, r);
    REQUIRE(res.top.size() == 20);
    for (const auto& x : res.top) {
        INFO("tp " << x.p.tp << " pp " << x.p.pp << " dp " << x.p.dp);
        CHECK(x.p.tp <= c.node.gpus);
        CHECK(c.node.gpus % x.p.tp == 0);
    }
    // The best plan is at least as fast as the published Megatron-LM layout (t 8, p 8, dp 16,
    // micro-batch 1, 1F1B; full recompute as in Narayanan et al. 2021), which is in the space.
    plan megatron = r.base;
    megatron.tp = 8;
    megatron.pp = 8;
    megatron.dp = 16;
    megatron.micro_batch = 1;
    megatron.global_batch = 1536;
    megatron.seq = 2048;
    megatron.recompute_mode = recompute::full;
    const auto pub = predict_step(m, c, acc, megatron);
    REQUIRE(pub.fits_in_memory);
    CHECK(res.top.front().r.step <= pub.step);
    // Narayanan et al. 2021 Table 1 report 44% of peak for this row; the best plan should be
    // at least in that class (>= 35%) and physically possible (< 100%).
    CHECK(res.top.front().r.mfu > 0.35);
    CHECK(res.top.front().r.mfu < 1.0);
}

TEST_CASE("planner: no returned plan exceeds memory, and each equals predict_step of its plan") {
    const transformer m = model_by_name("gpt3-175b");
    const cluster c = dgx_a100(128);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r = gpt3_request();
    const search_result res = search_plans(m, c, acc, r);
    REQUIRE(!res.top.empty());
    REQUIRE(!res.pareto.empty());
    CHECK(res.feasible < res.evaluated);  // memory prunes something for a 175B model
    for (const auto* list : {&res.top, &res.pareto}) {
        for (const auto& x : *list) {
            CHECK(x.r.fits_in_memory);
            CHECK(x.r.memory.total() <= acc.memory);
            const auto again = predict_step(m, c, acc, x.p);
            CHECK(again.step.value() == Approx(x.r.step.value()).epsilon(1e-12));
            CHECK(again.memory.total().value() == x.r.memory.total().value());
        }
    }
    // The front: sorted by time, memory strictly decreasing along it (2-D non-dominated set),
    // and it starts at the fastest time (with the least memory among the fastest plans, which
    // may be another plan than the top one: e.g. a higher ZeRO stage at equal time).
    for (std::size_t i = 1; i < res.pareto.size(); ++i) {
        CHECK(res.pareto[i].r.step >= res.pareto[i - 1].r.step);
        CHECK(res.pareto[i].r.memory.total() <= res.pareto[i - 1].r.memory.total());
    }
    CHECK(res.pareto.front().r.step.value() == res.top.front().r.step.value());
    CHECK(res.pareto.front().r.memory.total() <= res.top.front().r.memory.total());
}

TEST_CASE("planner: identical across thread counts and across shards merged") {
    const transformer m = model_by_name("llama2-13b");
    const cluster c = dgx_a100(4);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r;
    r.global_batch = 256;
    r.seq = 4096;
    r.top_k = 50;
    r.threads = 1;
    const search_result one = search_plans(m, c, acc, r);
    REQUIRE(one.top.size() == 50);
    for (int t : {2, 3, 5}) {
        r.threads = t;
        const search_result many = search_plans(m, c, acc, r);
        INFO(t << " threads");
        CHECK(many.evaluated == one.evaluated);
        CHECK(many.feasible == one.feasible);
        CHECK(many.candidates == one.candidates);
        require_same(many.top, one.top);
        require_same(many.pareto, one.pareto);
    }
    r.threads = 2;
    for (int n : {2, 3, 7}) {
        std::vector<search_result> parts;
        long long candidates = 0;
        for (int i = 0; i < n; ++i) {
            r.shard = i;
            r.shards = n;
            parts.push_back(search_plans(m, c, acc, r));
            candidates += parts.back().candidates;
        }
        const search_result merged = merge_results(parts, r.top_k);
        INFO(n << " shards");
        CHECK(candidates == one.candidates);
        CHECK(merged.evaluated == one.evaluated);
        CHECK(merged.feasible == one.feasible);
        require_same(merged.top, one.top);
        require_same(merged.pareto, one.pareto);
    }
}

namespace {
// Every plan of the space by nested loops, without the planner's shape list, pruning or
// interpolation (search/planner.hpp file comment): TP dividing the 8 GPUs of the node, every
// schedule and V, the pipeline-split flags, sequence parallelism, ZeRO, recompute; beside each
// full-recompute plan that fits, the block plan of the fewest layers per chunk that fits (a scan
// from 1); for a plan with pp 1 and no recompute that does not fit, the plan offloading the fewest
// layers that fits (a scan from 1). Returns the feasible plans ranked; counts the valid plans.
struct brute_force {
    std::vector<planned> feasible;
    long long valid = 0, block_plans = 0, offload_plans = 0;
};

brute_force enumerate_plans(const transformer& m, const cluster& c, const accelerator& acc, int gpus, int batch, int seq,
                            dtype precision = dtype::bf16) {
    brute_force out;
    auto& brute = out.feasible;
    long long& valid = out.valid;
    // the fewest n in [1, most) with which `p`, set by `set(n)`, fits (a linear scan)
    auto fewest = [&](plan p, int most, auto set) -> std::optional<planned> {
        for (int n = 1; n < most; ++n) {
            set(p, n);
            ++valid;
            const auto r = predict_step(m, c, acc, p);
            if (r.fits_in_memory) return planned{p, r};
        }
        return std::nullopt;
    };
    for (int tp = 1; tp <= 8; ++tp) {  // TP inside the 8-GPU node
        if (8 % tp || m.heads % tp) continue;
        for (int pp = 1; pp <= gpus; ++pp)
            for (int cp = 1; cp <= gpus; ++cp)
                for (int dp = 1; dp <= gpus; ++dp) {
                    if (tp * pp * cp * dp != gpus || m.layers % pp || seq % cp) continue;
                    for (int b = 1; b <= batch; ++b) {
                        if (batch % (dp * b)) continue;
                        for (int sched = 0; sched < 6; ++sched)
                            for (int v = 1; v <= m.layers; ++v) {
                                const auto s = static_cast<pipeline_schedule>(sched);
                                if (pp == 1 && (s != pipeline_schedule::one_f_one_b || v != 1)) continue;
                                // zero-bubble and DualPipe: enough micro-batches (ZB-H1 >= pp, ZB-V
                                // and DualPipe >= 2 pp, DualPipe an even number on an even pp)
                                const int mbs = batch / (dp * b);
                                if (s == pipeline_schedule::zb_h1 && mbs < pp) continue;
                                if (s == pipeline_schedule::zb_v && (mbs < 2 * pp || m.layers < 2 * pp)) continue;
                                if (s == pipeline_schedule::dualpipe && (pp % 2 || mbs % 2 || mbs < 2 * pp)) continue;
                                if (s != pipeline_schedule::interleaved && v != 1) continue;
                                if (s == pipeline_schedule::interleaved && v < 2) continue;
                                // Megatron-Core's embedding (bit 0) / loss (bit 1) pipeline-split flags:
                                // with 1f1b or interleaved where pp x V does not divide the layers, the
                                // loss or the embedding alone when layers + 1 divides, both when only
                                // layers + 2 does (search/planner.hpp file comment)
                                for (int flags = 0; flags < 4; ++flags) {
                                const int extras = (flags & 1) + ((flags >> 1) & 1);
                                if (flags != 0) {
                                    const int virt = pp * v;
                                    if (pp == 1 || (s != pipeline_schedule::one_f_one_b && s != pipeline_schedule::interleaved)) continue;
                                    if (m.layers % virt == 0 || (m.layers + extras) % virt) continue;
                                    if (extras == 2 && (m.layers + 1) % virt == 0) continue;
                                } else if (s == pipeline_schedule::interleaved && m.layers % (pp * v)) {
                                    continue;
                                }
                                for (int sp = 0; sp < 2; ++sp) {
                                    if (sp && (tp < 2 || (seq / cp) % tp)) continue;
                                    for (int zero = 0; zero <= 3; ++zero) {
                                        if (zero && dp * cp < 2) continue;
                                        for (auto rc : {recompute::none, recompute::selective, recompute::full}) {
                                            plan p;
                                            p.tp = tp;
                                            p.pp = pp;
                                            p.dp = dp;
                                            p.cp = cp;
                                            p.micro_batch = b;
                                            p.global_batch = batch;
                                            p.seq = seq;
                                            p.precision = precision;
                                            p.zero = zero;
                                            p.recompute_mode = rc;
                                            p.schedule = s;
                                            p.virtual_stages = v;
                                            p.sequence_parallel = sp == 1;
                                            p.account_for_embedding_in_pipeline_split = (flags & 1) != 0;
                                            p.account_for_loss_in_pipeline_split = (flags & 2) != 0;
                                            ++valid;
                                            const auto r = predict_step(m, c, acc, p);
                                            if (!r.fits_in_memory) {
                                                if (pp != 1 || rc != recompute::none) continue;
                                                // activation CPU offloading of the fewest layers
                                                if (auto x = fewest(p, m.layers, [](plan& q, int n) { q.cpu_offloading_num_layers = n; })) {
                                                    brute.push_back(*x);
                                                    ++out.offload_plans;
                                                }
                                                continue;
                                            }
                                            brute.push_back({p, r});
                                            if (rc != recompute::full) continue;
                                            // full recompute by block: the fewest layers N per model chunk
                                            // (N < layers / (pp V))
                                            const int chunk_layers = (m.layers + pp * p.chunks() - 1) / (pp * p.chunks());
                                            if (auto x = fewest(p, chunk_layers, [](plan& q, int n) {
                                                    q.full_recompute_method = recompute_method::block;
                                                    q.recompute_num_layers = n;
                                                })) {
                                                brute.push_back(*x);
                                                ++out.block_plans;
                                            }
                                        }
                                    }
                                }
                                }
                            }
                    }
                }
    }
    std::sort(brute.begin(), brute.end(), ranks_before);
    return out;
}

// The search of `r` equals the brute force: the same feasible plans in the same order, bit for
// bit, and the Pareto front by its definition.
void require_brute_force(const transformer& m, const cluster& c, const accelerator& acc, search_request r,
                         const brute_force& bf) {
    const auto& brute = bf.feasible;
    r.top_k = static_cast<int>(brute.size()) + 10;
    r.threads = 3;
    const search_result res = search_plans(m, c, acc, r);
    CHECK(res.feasible == static_cast<long long>(brute.size()));
    CHECK(res.evaluated <= bf.valid);
    CHECK(res.rejected == 0);
    require_same(res.top, brute);

    // The Pareto front by definition, O(n^2) over every feasible plan.
    std::vector<planned> front;
    for (const auto& x : brute) {
        bool dominated = false;
        for (const auto& y : brute) {
            const bool le = y.r.step <= x.r.step && y.r.memory.total() <= x.r.memory.total();
            const bool lt = y.r.step < x.r.step || y.r.memory.total() < x.r.memory.total();
            if (le && lt) {
                dominated = true;
                break;
            }
        }
        if (!dominated) front.push_back(x);
    }
    require_same(res.pareto, front);
}
}  // namespace

TEST_CASE("planner: the ranking equals sorting predict_step over every valid plan (brute force)") {
    // 16 GPUs (2 DGX A100 nodes), LLaMA 2 7B, 32 sequences of 2048 tokens: small enough to
    // enumerate every plan by nested loops.
    const transformer m = model_by_name("llama2-7b");
    const cluster c = dgx_a100(2);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    const brute_force bf = enumerate_plans(m, c, acc, 16, 32, 2048);
    REQUIRE(bf.valid > 1000);
    REQUIRE(bf.feasible.size() > 100);
    REQUIRE(bf.block_plans > 10);  // the space has block-recompute plans
    REQUIRE(bf.feasible.size() < static_cast<std::size_t>(bf.valid));  // memory excludes some plans
    search_request r;
    r.global_batch = 32;
    r.seq = 2048;
    require_brute_force(m, c, acc, r, bf);
}

TEST_CASE("planner: with activation CPU offloading, the ranking equals brute force on a tight space") {
    // Llama 3 8B on 8 GB200 at 8,192 tokens, 32 sequences: plans with one pipeline stage and no
    // recomputation outgrow 186 GiB from 3-4 sequences per micro-batch and fit again by
    // offloading layers over NVLink-C2C.
    const transformer m = model_by_name("llama3-8b");
    cluster c = cluster_by_name("gb200-nvl72");
    c.nodes = 8 / c.node.gpus;
    const accelerator acc = accelerator_by_name("gb200");
    const brute_force bf = enumerate_plans(m, c, acc, 8, 32, 8192);
    REQUIRE(bf.offload_plans > 5);
    REQUIRE(bf.block_plans > 5);
    search_request r;
    r.global_batch = 32;
    r.seq = 8192;
    require_brute_force(m, c, acc, r, bf);
    // without offloading, none of them
    r.try_cpu_offloading = false;
    r.top_k = 100000;
    for (const auto& x : search_plans(m, c, acc, r).top) CHECK(x.p.cpu_offloading_num_layers == 0);
}

TEST_CASE("planner: MT-NLG 530B on 5,128 A100: 5,128 = 8 x 641 leaves pp = 1 and dp a multiple of 641") {
    const transformer m = model_by_name("mt-nlg-530b");
    const cluster c = dgx_a100(641);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r;
    r.global_batch = 2520;  // 2^3 3^2 5 7: no multiple of 641 divides it
    r.seq = 2048;
    r.threads = 2;
    const auto none = search_plans(m, c, acc, r);
    CHECK(none.candidates == 0);
    CHECK(none.top.empty());
    CHECK_THAT(empty_reason(m, c, r, none), Catch::Matchers::Contains("dp dividing the global batch 2520"));
    r.global_batch = 1923;  // 3 x 641
    const auto some = search_plans(m, c, acc, r);
    REQUIRE(some.candidates > 0);
    REQUIRE(!some.top.empty());
    for (const auto& x : some.top) {
        // the 105 = 3 x 5 x 7 layers share no factor with 5,128; pp 2 only with the loss or the
        // embedding counted as a pipeline layer (105 + 1 = 2 x 53, Megatron-Core's flags)
        CHECK((x.p.pp == 1 || (x.p.pp == 2 && x.p.pipeline_split_extras() == 1)));
        CHECK(x.p.dp % 641 == 0);
        CHECK(x.p.tp * x.p.cp * x.p.dp * x.p.pp == 5128);
        CHECK(x.r.fits_in_memory);
    }
    // without those layouts, pp = 1 only
    r.try_pipeline_split = false;
    const auto plain = search_plans(m, c, acc, r);
    REQUIRE(!plain.top.empty());
    for (const auto& x : plain.top) {
        CHECK(x.p.pp == 1);
        CHECK(x.p.tp * x.p.cp * x.p.dp == 5128);
    }
}

TEST_CASE("planner: bad requests name the field") {
    const transformer m = model_by_name("llama2-7b");
    const cluster c = dgx_a100(1);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r;
    r.global_batch = 0;
    CHECK_THROWS_WITH(search_plans(m, c, acc, r), Catch::Matchers::Contains("search.global_batch"));
    r.global_batch = 8;
    r.shards = 3;
    r.shard = 3;
    CHECK_THROWS_WITH(search_plans(m, c, acc, r), Catch::Matchers::Contains("search.shard"));
    r.shard = 0;
    r.threads = 0;
    CHECK_THROWS_WITH(search_plans(m, c, acc, r), Catch::Matchers::Contains("search.threads"));
    r.threads = 1;
    r.top_k = -1;
    CHECK_THROWS_WITH(search_plans(m, c, acc, r), Catch::Matchers::Contains("search.top_k"));
}

TEST_CASE("planner: the price cache returns exactly what it memoizes") {
    const cluster c = dgx_a100(4);
    const collective_pricer inner{&c, {}};
    price_cache<collective_pricer> cache(inner, 2);  // 4 slots: forces the uncached path too
    const placement groups[] = {{8, 8, 1}, {4, 1, 8}, {32, 8, 1}, {2, 1, 8}, {16, 4, 2}};
    for (int round = 0; round < 2; ++round)
        for (const auto& g : groups)
            for (double s : {1e3, 25e6, 3.3e8}) {
                CHECK(cache(g, collective_op::all_reduce, bytes(s)).value() ==
                      inner(g, collective_op::all_reduce, bytes(s)).value());
                CHECK(cache(g, collective_op::all_gather, bytes(s)).value() ==
                      inner(g, collective_op::all_gather, bytes(s)).value());
            }
    CHECK(cache.hits > 0);
}

TEST_CASE("planner: DeepSeek-V3 on 256 GB200 finds a plan at least as fast as the published one") {
    // Megatron-Bridge 25.11's DeepSeek-V3 BF16 row on 256 GB200 NVL72 (the calibration set): TP 1,
    // PP 4, VP 4, EP 64, expert TP 1, micro-batch 1, global batch 4096 x 4096 tokens. The search,
    // predicting on the same model, must find that plan or a faster one that fits.
    const transformer m = models::deepseek_v3;
    cluster c = cluster_by_name("gb200-nvl72");
    c.nodes = 256 / c.node.gpus;
    const accelerator acc = accelerator_by_name("gb200");
    plan published{.tp = 1, .pp = 4, .dp = 64, .ep = 64, .micro_batch = 1, .global_batch = 4096, .seq = 4096};
    published.etp = 1;
    published.schedule = pipeline_schedule::interleaved;
    published.virtual_stages = 4;
    const auto pub = predict_step(m, c, acc, published);
    REQUIRE(pub.fits_in_memory);
    search_request r;
    r.global_batch = 4096;
    r.seq = 4096;
    r.top_k = 1;
    r.threads = 2;
    const search_result res = search_plans(m, c, acc, r);
    REQUIRE_FALSE(res.top.empty());
    const auto& best = res.top.front();
    INFO("published " << in_seconds(pub.step) << " s; best tp " << best.p.tp << " pp " << best.p.pp << " ep " << best.p.ep
                      << " " << in_seconds(best.r.step) << " s");
    CHECK(best.r.fits_in_memory);
    CHECK(in_seconds(best.r.step) <= in_seconds(pub.step) * (1.0 + 1e-9));
}

TEST_CASE("planner: Llama 3 70B on 64 GB200 and GB300 finds the published offloading plans or faster ones") {
    // Megatron-Bridge 25.11's Llama 3 70B FP8-CS rows on 64 GB200 and 64 GB300 NVL72 (the
    // calibration set): Megatron-FSDP over the 64 GPUs, TP = PP = CP = 1, micro-batch 2, global
    // batch 256 x 8192 tokens, activations of 40 (GB200) and 20 (GB300) layers offloaded over
    // NVLink-C2C (r0.2.0 recipes, cpu_offloading_num_layers). Without offloading the search's best
    // plan is slower than the published one on GB200 (micro-batch 1); with it, the search finds that
    // plan or a faster one, offloading no more layers than the recipe does at micro-batch 2.
    const transformer m = model_by_name("llama3-70b");
    for (const auto& [name, offloaded] : {std::pair<const char*, int>{"gb200-nvl72", 40}, {"gb300-nvl72", 20}}) {
        INFO(name);
        cluster c = cluster_by_name(name);
        c.nodes = 64 / c.node.gpus;
        const accelerator acc = accelerator_by_name(c.node.accelerator);
        plan published{.tp = 1, .pp = 1, .dp = 64, .micro_batch = 2, .global_batch = 256, .seq = 8192, .zero = 3};
        published.precision = dtype::fp8;
        published.fp8_scaling = fp8_recipe::tensorwise;
        published.cpu_offloading_num_layers = offloaded;
        const auto pub = predict_step(m, c, acc, published);
        REQUIRE(pub.fits_in_memory);
        search_request r;
        r.global_batch = 256;
        r.seq = 8192;
        r.top_k = 2000;
        r.threads = 2;
        r.base.precision = dtype::fp8;
        r.base.fp8_scaling = fp8_recipe::tensorwise;
        const search_result res = search_plans(m, c, acc, r);
        REQUIRE_FALSE(res.top.empty());
        const auto& best = res.top.front();
        INFO("published " << in_seconds(pub.step) << " s; best tp " << best.p.tp << " pp " << best.p.pp << " mb "
                          << best.p.micro_batch << " zero " << best.p.zero << " offload " << best.p.cpu_offloading_num_layers
                          << " " << in_seconds(best.r.step) << " s");
        CHECK(in_seconds(best.r.step) <= in_seconds(pub.step) * (1.0 + 1e-9));
        // the published layout with the fewest offloaded layers that fit
        bool found = false;
        for (const auto& x : res.top)
            if (x.p.tp == 1 && x.p.pp == 1 && x.p.cp == 1 && x.p.dp == 64 && x.p.zero == 3 && x.p.micro_batch == 2 &&
                x.p.recompute_mode == recompute::none && !x.p.sequence_parallel) {
                found = true;
                CHECK(x.p.cpu_offloading_num_layers >= 1);
                CHECK(x.p.cpu_offloading_num_layers <= offloaded);
                plan fewer = x.p;
                fewer.cpu_offloading_num_layers -= 1;
                CHECK_FALSE(predict_step(m, c, acc, fewer).fits_in_memory);
            }
        CHECK(found);
        r.try_cpu_offloading = false;
        r.top_k = 1;
        const search_result plain = search_plans(m, c, acc, r);
        REQUIRE_FALSE(plain.top.empty());
        CHECK(best.r.step <= plain.top.front().r.step);
    }
}

TEST_CASE("planner: no CPU offloading over a PCIe host link") {
    // Llama 3 70B in FP8 on 64 H100 at 8,192 tokens has plans that fit only with part of their
    // activations elsewhere; over PCIe (63 GB/s, shared on DGX H100 with the GPU's NIC traffic)
    // the search does not offload (offload_min_host_bandwidth_GBps), on GB200's NVLink-C2C it does
    const transformer m = model_by_name("llama3-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    const accelerator h100 = accelerator_by_name("h100-sxm");
    CHECK(h100.host_bandwidth.value() < offload_min_host_bandwidth_GBps * giga);
    CHECK(accelerator_by_name("gb200").host_bandwidth.value() >= offload_min_host_bandwidth_GBps * giga);
    search_request r;
    r.global_batch = 128;
    r.seq = 8192;
    r.top_k = 100000;
    r.pareto = false;
    r.max_virtual_stages = 2;
    r.base.precision = dtype::fp8;
    const search_result res = search_plans(m, c, h100, r);
    REQUIRE_FALSE(res.top.empty());
    for (const auto& x : res.top) CHECK(x.p.cpu_offloading_num_layers == 0);
}

TEST_CASE("planner: cluster_for_gpus sizes a preset to whole nodes and names the field otherwise") {
    const cluster c = cluster_for_gpus(cluster_by_name("dgx-h100"), 1024, "--gpus");
    CHECK(c.nodes == 128);
    CHECK(c.node.gpus == 8);
    CHECK_THROWS_WITH(cluster_for_gpus(cluster_by_name("dgx-h100"), 1020, "--gpus"),
                      Catch::Contains("--gpus") && Catch::Contains("1020") && Catch::Contains("multiple of the 8 GPUs per node"));
    CHECK_THROWS_WITH(cluster_for_gpus(cluster_by_name("dgx-h100"), 0), Catch::Contains("search.gpus"));
    // an NVL72 rack's trays: 256 GPUs are 64 trays of 4
    CHECK(cluster_for_gpus(cluster_by_name("gb200-nvl72"), 256).nodes == 64);
}

TEST_CASE("planner: full recompute by block keeps the fewest layers per chunk that fit") {
    // Llama 3 70B in FP8 on 64 H100 at 8,192 tokens (Megatron-Bridge 25.11's layout of this run is
    // TP 4 x PP 8 x VP 5; the space also holds FSDP plans that fit only with some layers
    // recomputed). Block plans (Megatron-Core's --recompute-method block --recompute-num-layers N)
    // must be the fewest N that fits: N - 1 does not, and each is faster than recomputing every
    // layer of the same plan.
    const transformer m = model_by_name("llama3-70b");
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 8;
    const accelerator acc = accelerator_by_name("h100-sxm");
    search_request r;
    r.global_batch = 128;
    r.seq = 8192;
    r.top_k = 400;
    r.max_virtual_stages = 5;
    r.base.precision = dtype::fp8;
    const search_result with = search_plans(m, c, acc, r);
    r.try_block_recompute = false;
    const search_result without = search_plans(m, c, acc, r);
    REQUIRE(!with.top.empty());
    REQUIRE(!without.top.empty());
    CHECK(with.top.front().r.step <= without.top.front().r.step);
    CHECK(with.evaluated > without.evaluated);
    CHECK(with.candidates == without.candidates);  // the same outer choices
    int blocks = 0;
    for (const auto& x : without.top) CHECK(x.p.full_recompute_method == recompute_method::uniform);
    for (const auto& x : with.top) {
        if (x.p.full_recompute_method != recompute_method::block) continue;
        ++blocks;
        INFO("tp " << x.p.tp << " pp " << x.p.pp << " V " << x.p.chunks() << " N " << x.p.recompute_num_layers);
        REQUIRE(x.p.recompute_mode == recompute::full);
        const int n = x.p.recompute_num_layers;
        CHECK(n >= 1);
        CHECK(n < (m.layers + x.p.pp * x.p.chunks() - 1) / (x.p.pp * x.p.chunks()));
        const auto again = predict_step(m, c, acc, x.p);
        CHECK(again.fits_in_memory);
        CHECK(again.step.value() == x.r.step.value());
        if (n > 1) {
            plan fewer = x.p;
            fewer.recompute_num_layers = n - 1;
            CHECK_FALSE(predict_step(m, c, acc, fewer).fits_in_memory);
        }
        plan every = x.p;
        every.full_recompute_method = recompute_method::uniform;
        every.recompute_num_layers = 0;
        CHECK(predict_step(m, c, acc, every).step > x.r.step);
    }
    CHECK(blocks > 0);
}

TEST_CASE("planner: of two plans as fast, the one with less memory per GPU ranks first") {
    // ZeRO 1 and ZeRO 2 under Megatron-Core reduce-scatter the same gradients in the same buckets,
    // so their step times are equal; ZeRO 2 also shards the gradient buffer
    const cluster c = dgx_a100(4);
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r;
    r.global_batch = 64;
    r.seq = 2048;
    r.top_k = 200;
    r.max_virtual_stages = 4;
    const search_result s = search_plans(models::llama2_13b, c, acc, r);
    REQUIRE(s.top.size() > 1);
    int ties = 0;
    for (std::size_t i = 1; i < s.top.size(); ++i) {
        const planned &a = s.top[i - 1], &b = s.top[i];
        if (a.r.step.value() != b.r.step.value()) continue;
        ++ties;
        INFO("rank " << i);
        CHECK(a.r.memory.total().value() <= b.r.memory.total().value());
    }
    CHECK(ties > 0);
    // the order itself: equal step, less memory first, whatever the plan key says
    planned x = s.top[0], y = s.top[0];
    y.r.memory.state.optimizer = y.r.memory.state.optimizer * 0.5;
    CHECK(ranks_before(y, x));
    CHECK_FALSE(ranks_before(x, y));
}
