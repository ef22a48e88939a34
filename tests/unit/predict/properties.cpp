// Properties of the predictions over random inputs (fixed seeds, so every failure reproduces):
//  * no NaN, infinity or negative time in any collective or step prediction;
//  * identities: algbw x time = bytes and busbw = algbw x the nccl-tests bus factor
//    (nccl-tests doc/PERFORMANCE.md);
//  * lower bounds: no algorithm beats the optimal bandwidth bound of its operation, with B the most
//    a rank can inject (its scale-up complement plus its node's NICs):
//      all-reduce 2(n-1)/n S/B (Patarasuk & Yuan 2009; with in-network or in-switch reduction the
//      GPUs only send and receive (n-1)/n S: NVLS / SHARP), reduce-scatter and all-gather
//      (n-1)/n S/B (Chan et al. 2007), all-to-all (n-1)/n S/B, broadcast, reduce and send/recv S/B;
//  * monotonicity of the step: more bandwidth never makes a step slower.
// Each property runs on 100,000 random inputs (about 5 s under ASan+UBSan, well under 1 s in Release).
#include "catch_shim.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

namespace {

constexpr int samples = 100'000;

class rng {
public:
    explicit rng(std::uint64_t seed) : g_(seed) {}
    int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
    double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g_); }
    double log_uniform(double lo, double hi) { return std::exp(real(std::log(lo), std::log(hi))); }
    bool coin() { return integer(0, 1) == 1; }

private:
    std::mt19937_64 g_;
};

commscale::link random_link(rng& r, link_kind kind, link_family family, double lo, double hi) {
    commscale::link l{};
    l.name = kind == link_kind::scale_out ? "random-nic" : "random-scale-up";
    l.kind = kind;
    l.family = family;
    l.rdma = true;
    l.per_direction = bytes_per_second(r.log_uniform(lo, hi));
    l.per_lane = l.per_direction;
    if (r.coin()) l.latency = seconds(r.real(0.1e-6, 5e-6));
    l.source = "random test input";
    return l;
}

cluster random_cluster(rng& r) {
    constexpr int gpu_choices[] = {1, 2, 4, 8, 16};
    cluster c{};
    c.name = "random";
    c.nodes = r.integer(1, 128);
    c.node.gpus = gpu_choices[r.integer(0, 4)];
    const int fabric = r.integer(0, 2);
    c.node.fabric = fabric == 0 ? intra_fabric::switched : fabric == 1 ? intra_fabric::mesh : intra_fabric::pcie;
    c.node.intra = random_link(r, link_kind::scale_up, fabric == 2 ? link_family::pcie : link_family::nvlink, 4e9, 2e12);
    c.node.inter = random_link(r, link_kind::scale_out, r.coin() ? link_family::infiniband : link_family::roce, 1e9, 1e11);
    c.node.nics = r.integer(1, c.node.gpus);
    c.node.in_switch_reduction = fabric == 0 && r.coin();
    c.in_network_reduction = r.coin();
    c.oversubscription = r.coin() ? 1.0 : r.real(1.0, 8.0);
    c.nodes_per_leaf = r.integer(1, 32);
    return c;
}

placement random_placement(rng& r, const cluster& c) {
    const int rpn = r.integer(1, c.node.gpus);
    const int max_stride = rpn > 1 ? (c.node.gpus - 1) / (rpn - 1) : c.node.gpus;
    return placement{r.integer(1, c.nodes * rpn), rpn, r.integer(1, max_stride)};
}

// The optimal-algorithm bandwidth factor: the bytes one rank must send (or receive), over S.
double optimal_factor(collective_op op, double n, bool in_network_reduction) {
    switch (op) {
        case collective_op::all_reduce: return (in_network_reduction ? 1.0 : 2.0) * (n - 1.0) / n;
        case collective_op::reduce_scatter:
        case collective_op::all_gather:
        case collective_op::all_to_all: return (n - 1.0) / n;
        case collective_op::broadcast:
        case collective_op::reduce:
        case collective_op::send_recv: return 1.0;
    }
    return 0.0;
}

bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

TEST_CASE("collectives on random clusters: finite, identities hold, never below the optimal bound") {
    rng r(0x5eed'c011);
    long bound_checks = 0;
    for (int i = 0; i < samples; ++i) {
        const cluster c = random_cluster(r);
        const placement g = random_placement(r, c);
        const auto op = static_cast<collective_op>(r.integer(0, 6));
        const data_size s = bytes(std::floor(r.log_uniform(1.0, 1e12)));
        const auto mode = r.coin() ? efficiency_mode::ideal : efficiency_mode::realistic;
        const auto algo = static_cast<algorithm>(r.integer(0, algorithm_count - 1));
        if (!algorithm_applies(c, g, op, algo)) continue;
        INFO("sample " << i << ": nodes " << c.nodes << " gpus " << c.node.gpus << " fabric " << to_string(c.node.fabric)
                       << " ranks " << g.ranks << "/" << g.ranks_per_node << " stride " << g.stride << " op " << to_string(op)
                       << " algo " << to_string(algo) << " bytes " << in_bytes(s));
        const collective_result p = predict_collective(c, g, op, s, {algo, mode});
        const double t = in_seconds(p.time);
        REQUIRE(finite_nonnegative(t));
        REQUIRE(finite_nonnegative(in_seconds(p.latency)));
        REQUIRE(finite_nonnegative(in_seconds(p.transfer)));
        REQUIRE(finite_nonnegative(p.algbw.value()));
        REQUIRE(finite_nonnegative(p.busbw.value()));
        if (g.ranks == 1 || t == 0) continue;
        // identities (nccl-tests): algbw = S / t, busbw = algbw x factor(op, n)
        REQUIRE(p.algbw.value() * t == Approx(in_bytes(s)).epsilon(1e-12));
        REQUIRE(p.busbw.value() == Approx(p.algbw.value() * busbw_factor(op, g.ranks)).epsilon(1e-12));
        // lower bound on the bandwidth term
        const double n = g.ranks;
        const bool intra = std::min(g.ranks_per_node, g.ranks) > 1, multi = g.nodes() > 1;
        const double inject = (intra ? c.node.intra.per_direction.value() : 0.0) +
                              (multi ? c.node.nics * c.node.inter.per_direction.value() : 0.0);
        const bool reduction_offload = c.node.in_switch_reduction || c.in_network_reduction;
        const double bound = optimal_factor(op, n, reduction_offload) * in_bytes(s) / inject;
        REQUIRE(in_seconds(p.transfer) >= bound * (1.0 - 1e-12));
        ++bound_checks;
    }
    CHECK(bound_checks > samples / 4);
}

TEST_CASE("training steps on random models, clusters and plans: finite, and faster links never slow a step") {
    rng r(0x5eed'57e9);
    const auto models = all_models();
    long valid = 0, tried = 0;
    for (int i = 0; i < samples; ++i) {
        const transformer& m = models[static_cast<std::size_t>(r.integer(0, static_cast<int>(models.size()) - 1))];
        cluster c = all_clusters()[static_cast<std::size_t>(r.integer(0, static_cast<int>(all_clusters().size()) - 1))];
        c.nodes = 1 << r.integer(0, 7);
        const int gpus = c.total_gpus();
        plan p{};
        p.tp = 1 << r.integer(0, 3);
        p.pp = 1 << r.integer(0, 4);
        p.cp = r.integer(0, 3) == 0 ? 2 : 1;
        p.ep = m.experts > 1 ? 1 << r.integer(0, 3) : 1;
        const long long rest = static_cast<long long>(p.tp) * p.pp * p.cp;
        if (rest > gpus || gpus % rest != 0) continue;
        p.dp = static_cast<int>(gpus / rest);
        p.micro_batch = 1 << r.integer(0, 2);
        p.global_batch = p.dp * p.micro_batch * (1 << r.integer(0, 6));
        p.seq = 1024 << r.integer(0, 2);
        p.zero = r.integer(0, 3);
        p.recompute_mode = static_cast<recompute>(r.integer(0, 2));
        p.schedule = static_cast<pipeline_schedule>(r.integer(0, 2));
        p.virtual_stages = p.schedule == pipeline_schedule::interleaved ? 2 : 1;
        p.sequence_parallel = r.coin();
        ++tried;
        try {
            validate(p, m, c);
        } catch (const input_error&) {
            continue;  // the plan does not divide this model or cluster: rejected, not predicted
        }
        INFO("sample " << i << ": " << m.name << " on " << c.name << " x" << c.nodes << " tp " << p.tp << " pp " << p.pp
                       << " dp " << p.dp << " cp " << p.cp << " ep " << p.ep << " b " << p.micro_batch << " B "
                       << p.global_batch << " zero " << p.zero);
        step_options o{};
        o.mode = r.coin() ? efficiency_mode::ideal : efficiency_mode::realistic;
        const step_breakdown b = predict_step(m, c, p, o);
        for (const duration& d : {b.step, b.compute, b.bubble, b.tp.total, b.tp.exposed, b.pp.total, b.pp.exposed, b.dp.total,
                                 b.dp.exposed, b.cp.total, b.ep.total, b.exposed_comm})
            REQUIRE(finite_nonnegative(in_seconds(d)));
        REQUIRE(in_seconds(b.step) > 0);
        for (const double v : {b.mfu, b.hfu, b.tokens_per_s, b.bubble_fraction, b.model_flops_per_gpu.value()})
            REQUIRE(finite_nonnegative(v));
        REQUIRE(b.mfu <= 1.0);
        REQUIRE(b.hfu >= b.mfu * (1.0 - 1e-12));
        // more bandwidth (both link levels doubled) never makes the step slower
        cluster faster = c;
        faster.node.intra.per_direction = 2.0 * faster.node.intra.per_direction;
        faster.node.inter.per_direction = 2.0 * faster.node.inter.per_direction;
        const step_breakdown q = predict_step(m, faster, p, o);
        REQUIRE(in_seconds(q.step) <= in_seconds(b.step) * (1.0 + 1e-12));
        ++valid;
    }
    CHECK(valid > tried / 10);
}
