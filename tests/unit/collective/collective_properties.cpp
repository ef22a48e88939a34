// Properties of predict_collective over many random clusters, placements and sizes (fixed seed).
#include "catch_shim.hpp"

#include <cmath>
#include <cstdint>
#include <random>

#include <commscale/collective/model.hpp>

#include "collective_fixtures.hpp"

using namespace commscale;
using namespace collective_test;

namespace {

struct random_case {
    cluster c;
    placement g;
    collective_op op;
    data_size s;
};

class generator {
public:
    explicit generator(std::uint64_t seed) : rng_(seed) {}

    int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
    double log_uniform(double lo, double hi) { return std::exp(real(std::log(lo), std::log(hi))); }
    bool coin() { return integer(0, 1) == 1; }

    random_case next() {
        random_case k;
        constexpr int gpu_choices[] = {1, 2, 4, 8, 16};
        cluster& c = k.c;
        c.nodes = integer(1, 64);
        c.node.gpus = gpu_choices[integer(0, 4)];
        const int fabric = integer(0, 2);
        c.node.fabric = fabric == 0 ? intra_fabric::switched : fabric == 1 ? intra_fabric::mesh : intra_fabric::pcie;
        const link_family f_intra = c.node.fabric == intra_fabric::pcie ? link_family::pcie : link_family::nvlink;
        c.node.intra = make_link("intra", f_intra, link_kind::scale_up, bytes_per_second(log_uniform(8e9, 1.8e12)),
                                 coin() ? std::optional<duration>(seconds(real(0.1e-6, 2e-6))) : std::nullopt);
        c.node.inter = make_link("inter", coin() ? link_family::infiniband : link_family::roce, link_kind::scale_out,
                                 bytes_per_second(log_uniform(1e9, 1e11)),
                                 coin() ? std::optional<duration>(seconds(real(0.5e-6, 5e-6))) : std::nullopt);
        c.node.nics = integer(1, c.node.gpus);
        c.node.in_switch_reduction = c.node.fabric == intra_fabric::switched && coin();
        c.in_network_reduction = coin();
        c.node.gpudirect_rdma = coin();
        c.node.pcie_p2p = coin();
        c.rail_optimized = coin();
        c.oversubscription = coin() ? 1.0 : real(1.0, 8.0);
        c.nodes_per_leaf = integer(1, 32);
        const int rpn = integer(1, c.node.gpus);
        const int max_stride = rpn > 1 ? (c.node.gpus - 1) / (rpn - 1) : c.node.gpus;
        k.g = placement{integer(1, c.nodes * rpn), rpn, integer(1, max_stride)};
        k.op = static_cast<collective_op>(integer(0, 6));
        k.s = bytes(std::floor(log_uniform(1.0, 3e11)));
        return k;
    }

private:
    std::mt19937_64 rng_;
};

constexpr int cases = 100'000;  // random inputs per property (issue: >= 100,000)

bool finite_nonnegative(const collective_result& r) {
    for (const double v : {in_seconds(r.time), in_seconds(r.latency), in_seconds(r.transfer), in_GBps(r.algbw),
                           in_GBps(r.busbw)})
        if (!std::isfinite(v) || v < 0) return false;
    return true;
}

}  // namespace

TEST_CASE("properties over random inputs: monotone, bounded, automatic is the minimum, no NaN") {
    generator gen(20240611);
    long checked = 0;
    for (int i = 0; i < cases; ++i) {
        const random_case k = gen.next();
        INFO("case " << i << " nodes " << k.c.nodes << " gpus " << k.c.node.gpus << " fabric "
                     << to_string(k.c.node.fabric) << " ranks " << k.g.ranks << " rpn " << k.g.ranks_per_node
                     << " stride " << k.g.stride << " op " << to_string(k.op) << " bytes " << in_bytes(k.s));
        for (const auto mode : {efficiency_mode::ideal, efficiency_mode::realistic}) {
            // automatic among every algorithm (`any`) and among NCCL's (the default)
            const auto best = predict_collective(k.c, k.g, k.op, k.s, {algorithm::automatic, mode, algorithm_set::any});
            const auto nccl = predict_collective(k.c, k.g, k.op, k.s, {algorithm::automatic, mode, algorithm_set::nccl});
            REQUIRE(finite_nonnegative(best));
            REQUIRE(finite_nonnegative(nccl));
            REQUIRE(in_seconds(best.time) <= in_seconds(nccl.time));
            REQUIRE(in_seconds(best.time) == Approx(in_seconds(best.latency) + in_seconds(best.transfer)));
            if (k.g.ranks == 1) REQUIRE(in_seconds(best.time) == 0.0);
            for (int a = 1; a < algorithm_count; ++a) {
                const auto algo = static_cast<algorithm>(a);
                if (!algorithm_applies(k.c, k.g, k.op, algo)) continue;
                const auto r = predict_collective(k.c, k.g, k.op, k.s, {algo, mode});
                REQUIRE(finite_nonnegative(r));
                // automatic never slower than any named algorithm of its candidate set
                REQUIRE(in_seconds(best.time) <= in_seconds(r.time));
                if (detail::nccl_implements(k.op, algo)) REQUIRE(in_seconds(nccl.time) <= in_seconds(r.time));
                // time grows with bytes ...
                const auto bigger = predict_collective(k.c, k.g, k.op, 2.0 * k.s, {algo, mode});
                REQUIRE(in_seconds(bigger.time) >= in_seconds(r.time));
                // ... and shrinks with bandwidth
                cluster faster = k.c;
                faster.node.intra.per_direction = 2.0 * faster.node.intra.per_direction;
                faster.node.inter.per_direction = 2.0 * faster.node.inter.per_direction;
                const auto quick = predict_collective(faster, k.g, k.op, k.s, {algo, mode});
                REQUIRE(in_seconds(quick.time) <= in_seconds(r.time) * (1.0 + 1e-12));
                if (k.g.ranks > 1 && k.s.value() > 0) REQUIRE(in_seconds(r.time) > 0.0);
                // busbw never above what a rank's ports can carry, except with in-switch reduction
                if (algo != algorithm::nvls) {
                    const double port = (std::min(k.g.ranks_per_node, k.g.ranks) > 1 ? k.c.node.intra.per_direction.value() : 0.0) +
                                        (k.g.nodes() > 1 ? k.c.node.nics * k.c.node.inter.per_direction.value() : 0.0);
                    REQUIRE(r.busbw.value() <= port * (1.0 + 1e-9));
                }
                if (mode == efficiency_mode::realistic) {
                    // realistic is never faster than the closed form on datasheet peaks
                    const auto peak = predict_collective(k.c, k.g, k.op, k.s, {algo, efficiency_mode::ideal});
                    REQUIRE(in_seconds(r.time) >= in_seconds(peak.time) * (1.0 - 1e-12));
                }
                ++checked;
            }
            // ideal ring all-reduce never below the 2(n-1)/n x S / B lower bound, B the fastest
            // port a rank has (its scale-up complement or its node's NICs), and its busbw never
            // above the bottleneck link's per-direction peak.
            if (mode == efficiency_mode::ideal && k.op == collective_op::all_reduce && k.g.ranks > 1) {
                const auto ring = predict_collective(k.c, k.g, k.op, k.s, {algorithm::ring, mode});
                const double n = k.g.ranks;
                const bool multi = k.g.nodes() > 1, intra = std::min(k.g.ranks_per_node, k.g.ranks) > 1;
                const double b = std::max(intra ? k.c.node.intra.per_direction.value() : 0.0,
                                          multi ? k.c.node.nics * k.c.node.inter.per_direction.value() : 0.0);
                REQUIRE(in_seconds(ring.time) >= 2.0 * (n - 1.0) / n * k.s.value() / b * (1.0 - 1e-12));
                double limit = intra ? k.c.node.intra.per_direction.value() : 1e300;
                if (multi) limit = std::min(limit, k.c.node.nics * k.c.node.inter.per_direction.value());
                REQUIRE(ring.busbw.value() <= limit * (1.0 + 1e-9));
            }
        }
    }
    CHECK(checked > 100'000);
}
