// Capacity from the model (predict/capacity.hpp plan_capacity) and the goodput model behind it:
// Young's interval and Daly's wall time against their closed forms and a Monte Carlo run of the
// process they describe, the Llama 3 reliability figures, and the search for the smallest GPU
// count against a brute-force sweep (with the planner, and with made-up step times that are not
// monotone in the count).
#include "catch_shim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/capacity.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::WithinRel;

namespace {
namespace plan_capacity_test {

// The Llama 3 snapshot (Dubey et al. 2024, Sec. 3.3.4): 419 unexpected interruptions in 54 days
// on 16,384 H100. The job's MTBF is 54 d / 419 = 11,135.08 s = 3.09 h, whatever the per-GPU split.
constexpr double snapshot_s = 54.0 * 86400.0;
constexpr double job_mtbf_16k = snapshot_s / 419.0;

// Daly 2006's expected wall time per unit of work, written out here from the paper's model.
double daly_wall_per_work(double tau, double delta, double restart, double mtbf) {
    return mtbf * std::exp(restart / mtbf) * (std::exp((tau + delta) / mtbf) - 1.0) / tau;
}

// A plan search stand-in: made-up step times per GPU count (seconds; absent: no plan fits).
struct fake_plan {
    plan p{};
    step_breakdown r{};
};
struct fake_oracle {
    const std::map<long long, double>* steps;
    long long* calls;
    std::optional<fake_plan> operator()(long long gpus) const {
        ++*calls;
        const auto it = steps->find(gpus);
        if (it == steps->end()) return std::nullopt;
        fake_plan x;
        x.p.dp = static_cast<int>(gpus);
        x.r.step = seconds(it->second);
        return x;
    }
};

// The planner at a count, memoized: the brute-force sweep and every search share the plans.
struct memo_planner {
    transformer m;
    cluster c;
    accelerator acc;
    search_request r;
    std::map<long long, std::optional<planned>> seen;
    long long runs = 0;
    std::optional<planned> operator()(long long gpus) {
        auto it = seen.find(gpus);
        if (it != seen.end()) return it->second;
        ++runs;
        return seen[gpus] = best_plan_at(m, c, acc, r, gpus);
    }
};

}  // namespace plan_capacity_test
}  // namespace

using namespace plan_capacity_test;

TEST_CASE("goodput: the default MTBF is the Llama 3 snapshot's, one interruption every 3.09 h on 16,384 GPUs") {
    // 54 days x 16,384 GPUs / 419 = 50,677 GPU-hours per interruption; Meta: "one failure every
    // three hours" (3.09 h).
    CHECK_THAT(in_seconds(default_gpu_mtbf) / 3600.0, WithinRel(54.0 * 24.0 * 16384.0 / 419.0, 1e-12));
    CHECK_THAT(in_seconds(default_gpu_mtbf / 16384.0), WithinRel(job_mtbf_16k, 1e-12));
    CHECK_THAT(job_mtbf_16k / 3600.0, WithinRel(3.0, 0.035));
}

TEST_CASE("goodput: Young's interval and Daly's lost fraction on 16,384 GPUs match their closed forms") {
    // A 30 s checkpoint and a 10 min restart on the Llama 3 failure rate.
    const double delta = 30.0, restart = 600.0;
    const duration mtbf = default_gpu_mtbf / 16384.0;
    // Young 1974: tau = sqrt(2 delta M) = sqrt(2 x 30 x 11,135.08) = 817.38 s
    const duration tau = young_checkpoint_interval(seconds(delta), mtbf);
    CHECK_THAT(in_seconds(tau), WithinRel(std::sqrt(2.0 * delta * job_mtbf_16k), 1e-12));
    CHECK_THAT(in_seconds(tau), WithinRel(817.377, 1e-5));

    const duration work = seconds(30.0 * 86400.0);
    const goodput g = expected_goodput(work, {.job_mtbf = mtbf, .checkpoint_time = seconds(delta), .restart_time = seconds(restart)});
    const double per_work = daly_wall_per_work(in_seconds(tau), delta, restart, job_mtbf_16k);
    CHECK_THAT(in_seconds(g.checkpoint_interval), WithinRel(in_seconds(tau), 1e-12));
    CHECK_THAT(in_seconds(g.wall), WithinRel(in_seconds(work) * per_work, 1e-12));
    CHECK_THAT(g.lost_fraction, WithinRel(1.0 - 1.0 / per_work, 1e-12));
    CHECK_THAT(g.expected_interruptions, WithinRel(in_seconds(g.wall) / job_mtbf_16k, 1e-12));
    // 12.0% of the wall time lost (1 - 1 / 1.1368)
    CHECK_THAT(g.lost_fraction, WithinRel(0.12034, 1e-4));
    // Young's first-order overhead at his interval: sqrt(2 delta / M) + R / M = 0.1273, of which the
    // exact model's overhead (T_w / T_s - 1 = 0.1368) differs by second-order terms (< 10%).
    const double first_order = std::sqrt(2.0 * delta / job_mtbf_16k) + restart / job_mtbf_16k;
    CHECK_THAT(in_seconds(g.wall) / in_seconds(work) - 1.0, WithinRel(first_order, 0.1));
    // Young's interval is where the lost time is smallest: 20% either side loses more
    for (const double f : {0.8, 1.25}) {
        const goodput other = expected_goodput(
            work, {.job_mtbf = mtbf, .checkpoint_time = seconds(delta), .restart_time = seconds(restart), .checkpoint_interval = tau * f});
        CHECK(other.lost_fraction > g.lost_fraction);
    }
}

TEST_CASE("goodput: Daly's wall time is the mean of the process it models (Monte Carlo, fixed seed)") {
    // Segments of tau compute + delta checkpoint; exponential interruptions at rate 1/M, also
    // during restarts; after each, R of restart, then the segment again from its start.
    const double mtbf = job_mtbf_16k, delta = 30.0, restart = 600.0, tau = 817.0;
    std::mt19937_64 rng(20240723);
    std::exponential_distribution<double> next_failure(1.0 / mtbf);
    const int segments = 200000;
    double total = 0;
    for (int i = 0; i < segments; ++i) {
        for (;;) {
            const double t = next_failure(rng);
            if (t >= tau + delta) {
                total += tau + delta;
                break;
            }
            total += t;
            for (;;) {  // the restart, itself interruptible
                const double u = next_failure(rng);
                if (u >= restart) {
                    total += restart;
                    break;
                }
                total += u;
            }
        }
    }
    const double simulated = total / (segments * tau);
    const goodput g = expected_goodput(seconds(tau), {.job_mtbf = seconds(mtbf), .checkpoint_time = seconds(delta),
                                                      .restart_time = seconds(restart), .checkpoint_interval = seconds(tau)});
    // the standard error of 200,000 segments is ~0.1% of the mean
    CHECK_THAT(in_seconds(g.wall) / tau, WithinRel(simulated, 0.005));
}

TEST_CASE("goodput: infinite MTBF is the failure-free time, checkpoints alone cost delta / tau") {
    const duration work = seconds(1e6);
    const duration inf = seconds(std::numeric_limits<double>::infinity());
    const goodput none = expected_goodput(work, {.job_mtbf = inf, .checkpoint_time = seconds(30), .restart_time = seconds(600)});
    CHECK(in_seconds(none.wall) == in_seconds(work));
    CHECK(none.lost_fraction == 0);
    CHECK(none.expected_interruptions == 0);
    CHECK(std::isinf(in_seconds(none.checkpoint_interval)));
    const goodput ckpt = expected_goodput(work, {.job_mtbf = inf, .checkpoint_time = seconds(30), .checkpoint_interval = seconds(3600)});
    CHECK_THAT(in_seconds(ckpt.wall), WithinRel(1e6 * (1.0 + 30.0 / 3600.0), 1e-12));
    // free checkpoints taken continuously: only the restarts cost, e^(R/M)
    const goodput free = expected_goodput(work, {.job_mtbf = seconds(1e4), .restart_time = seconds(600)});
    CHECK_THAT(in_seconds(free.wall), WithinRel(1e6 * std::exp(0.06), 1e-12));
    // a very long MTBF converges to the failure-free time (expm1 keeps the precision)
    const goodput rare = expected_goodput(work, {.job_mtbf = seconds(1e18), .checkpoint_time = seconds(30), .restart_time = seconds(600)});
    CHECK_THAT(in_seconds(rare.wall), WithinRel(1e6, 1e-6));
}

TEST_CASE("goodput: the defaults keep Llama 3 405B on 16,384 GPUs above 90% effective training time") {
    // The Llama 3 paper: "higher than 90% effective training time" with 466 interruptions in 54 days,
    // at most 0.1 x 54 d / 466 = 1,001 s lost per interruption. The defaults: the snapshot's failure
    // rate, a checkpoint of 14 bytes per parameter at 2 TB/s (405B: 5.68 TB, 2.84 s), a 10 min restart.
    const transformer m = model_by_name("llama3-405b");
    const duration delta = default_checkpoint_time(total_parameters(m));
    CHECK_THAT(in_seconds(delta), WithinRel(total_parameters(m) * 14.0 / 2e12, 1e-12));
    CHECK_THAT(in_seconds(delta), WithinRel(2.84, 0.01));
    const duration work = seconds(snapshot_s);
    const goodput g = expected_goodput(work, {.job_mtbf = default_gpu_mtbf / 16384.0,
                                              .checkpoint_time = delta,
                                              .restart_time = default_restart_time});
    CHECK(g.lost_fraction < 0.10);
    CHECK(g.lost_fraction > 0.02);  // not free: about 7%
    const double lost_per_interruption = (in_seconds(g.wall) - snapshot_s) / g.expected_interruptions;
    CHECK(lost_per_interruption < 0.1 * snapshot_s / 466.0);
}

TEST_CASE("goodput: bad inputs name the field") {
    const duration w = seconds(100);
    CHECK_THROWS_AS(expected_goodput(w, {.job_mtbf = seconds(0)}), input_error);
    CHECK_THROWS_AS(expected_goodput(w, {.job_mtbf = seconds(std::nan(""))}), input_error);
    CHECK_THROWS_AS(expected_goodput(w, {.checkpoint_time = seconds(-1)}), input_error);
    CHECK_THROWS_AS(expected_goodput(w, {.restart_time = seconds(1e8)}), input_error);
    CHECK_THROWS_AS(expected_goodput(w, {.checkpoint_interval = seconds(0)}), input_error);
    CHECK_THROWS_AS(expected_goodput(seconds(-1), {}), input_error);
    // an interval far beyond the MTBF: e^(1e9 / 1) is not a number
    CHECK_THROWS_AS(expected_goodput(w, {.job_mtbf = seconds(1), .checkpoint_interval = seconds(1e9)}), input_error);
    try {
        (void)expected_goodput(w, {.restart_time = seconds(-5)});
        FAIL("no throw");
    } catch (const input_error& e) {
        CHECK(e.field() == "restart_time");
    }
}

TEST_CASE("capacity counts: whole granules x k, eight per doubling, at most 12.5% apart") {
    std::vector<long long> ks;
    for (long long k = 1; k <= 64; k = next_capacity_multiple(k)) ks.push_back(k);
    const std::vector<long long> expected{1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                          18, 20, 22, 24, 26, 28, 30, 32, 36, 40, 44, 48, 52, 56, 60, 64};
    CHECK(ks == expected);
    for (long long k = 16; k < (1LL << 20); k = next_capacity_multiple(k)) {
        CHECK(is_capacity_multiple(k));
        CHECK(static_cast<double>(next_capacity_multiple(k)) / static_cast<double>(k) <= 1.125 + 1e-12);
    }
    CHECK_FALSE(is_capacity_multiple(17));
    CHECK_FALSE(is_capacity_multiple(34));
    CHECK(is_capacity_multiple(36));
}

TEST_CASE("plan_capacity: the smallest count that meets the deadline, against brute force (non-monotone steps)") {
    // Made-up step times in seconds per count: not monotone (80 is slower than 64, 104 has no plan)
    const std::map<long long, double> steps{{8, 40.0},  {16, 20.5}, {24, 14.0}, {32, 10.0}, {40, 9.0},  {48, 7.0},
                                            {56, 6.5},  {64, 5.0},  {72, 5.5},  {80, 5.2},  {88, 4.1},  {96, 4.5},
                                            {112, 3.6}, {120, 3.3}, {128, 3.0}, {144, 2.9}, {160, 2.6}, {176, 2.7},
                                            {192, 2.2}, {208, 2.3}, {224, 2.0}, {240, 1.95}, {256, 1.8}};
    model_capacity_request q;
    q.tokens = 1e9;
    q.tokens_per_step = 1e6;  // 1,000 steps
    q.granule = 8;
    q.gpus_per_node = 8;
    q.max_gpus = 256;
    q.mtbf = seconds(std::numeric_limits<double>::infinity());
    q.curve = false;
    for (double deadline_s = 1500; deadline_s <= 45000; deadline_s *= 1.07) {
        INFO("deadline " << deadline_s << " s");
        q.deadline = seconds(deadline_s);
        long long calls = 0;
        const auto res = plan_capacity(q, fake_oracle{&steps, &calls});
        long long brute = 0;
        for (const auto& [n, s] : steps)
            if (1000.0 * s <= deadline_s) {
                brute = n;
                break;
            }
        CHECK(res.met == (brute > 0));
        if (brute > 0) {
            CHECK(res.answer.gpus == brute);
            CHECK(in_seconds(res.answer.time.wall) == 1000.0 * steps.at(brute));
            CHECK(res.answer.meets_deadline);
        }
    }
}

TEST_CASE("plan_capacity: with the planner, the found count is the smallest candidate meeting the deadline") {
    // LLaMA 2 7B on DGX A100 nodes, 2 x 10^10 tokens of 4M-token batches: small enough to plan every
    // candidate count up to 256 GPUs by brute force.
    memo_planner planner{model_by_name("llama2-7b"), cluster_by_name("dgx-a100"), accelerator_by_name("a100-80gb-sxm"), {}, {}, 0};
    planner.r.global_batch = 1024;
    planner.r.seq = 4096;
    planner.r.threads = 2;
    planner.r.min_cp_tokens = default_min_cp_tokens;
    model_capacity_request q;
    q.tokens = 2e10;
    q.tokens_per_step = 1024.0 * 4096.0;
    q.model_flops_per_step = model_flops(planner.m, 4096, 1024);
    q.peak = peak_for(planner.acc, dtype::bf16);
    q.granule = 8;
    q.gpus_per_node = 8;
    q.max_gpus = 256;
    q.checkpoint_time = default_checkpoint_time(total_parameters(planner.m));
    q.curve = false;

    // brute force: every candidate count's wall time
    std::vector<std::pair<long long, double>> wall;
    for (long long k = 1; k * 8 <= 256; k = next_capacity_multiple(k)) {
        q.gpus = k * 8;
        const auto one = plan_capacity(q, [&](long long n) { return planner(n); });
        if (one.met) wall.emplace_back(q.gpus, in_seconds(one.answer.time.wall));
        // the 100%-MFU bound the search skips counts by: no plan beats it
        if (one.met) CHECK(one.answer.r.mfu < 1.0);
    }
    q.gpus = 0;
    REQUIRE(wall.size() > 10);
    const long long brute_runs = planner.runs;

    long long previous = std::numeric_limits<long long>::max();
    for (double days = 0.5; days <= 12; days *= 1.3) {
        INFO(days << " days");
        q.deadline = days * one_day;
        const auto res = plan_capacity(q, [&](long long n) { return planner(n); });
        long long brute = 0;
        for (const auto& [n, w] : wall)
            if (w <= days * 86400.0) {
                brute = n;
                break;
            }
        CHECK(res.met == (brute > 0));
        if (!res.met) continue;
        CHECK(res.answer.gpus == brute);
        // monotone in the deadline: a later deadline never needs more GPUs
        CHECK(res.answer.gpus <= previous);
        previous = res.answer.gpus;
        // fewer counts planned than the sweep's: those below the 100%-MFU bound are skipped
        CHECK(res.evaluated < static_cast<long long>(wall.size()));
    }
    CHECK(previous < 256);  // some deadline was met
    CHECK(planner.runs == brute_runs);  // every search asked only counts the sweep had planned
}

TEST_CASE("plan_capacity: infinite MTBF gives the failure-free answer, failures need more GPUs") {
    const std::map<long long, double> steps{{8, 8.0}, {16, 4.1}, {24, 2.8}, {32, 2.1}, {40, 1.7}, {48, 1.45}, {56, 1.25}, {64, 1.1}};
    long long calls = 0;
    model_capacity_request q;
    q.tokens = 1e12;
    q.tokens_per_step = 4e6;  // 250,000 steps
    q.max_gpus = 64;
    q.deadline = seconds(250000.0 * 2.15);
    q.mtbf = seconds(std::numeric_limits<double>::infinity());
    q.checkpoint_time = seconds(30);
    q.curve = false;
    const auto free = plan_capacity(q, fake_oracle{&steps, &calls});
    REQUIRE(free.met);
    CHECK(free.answer.gpus == 32);
    CHECK(in_seconds(free.answer.time.wall) == in_seconds(free.answer.time.failure_free));
    CHECK(in_seconds(free.answer.time.failure_free) == 250000.0 * 2.1);
    CHECK(free.answer.time.lost_fraction == 0);
    // a failure every 1,000 GPU-hours: 32 GPUs lose 2.8% (Daly), more than their 2.4% of slack
    q.mtbf = seconds(1000.0 * 3600.0);
    const auto failing = plan_capacity(q, fake_oracle{&steps, &calls});
    REQUIRE(failing.met);
    CHECK(failing.answer.gpus == 40);
    const double m40 = 1000.0 * 3600.0 / 40.0, tau = std::sqrt(2.0 * 30.0 * m40);
    CHECK_THAT(in_seconds(failing.answer.time.wall),
               WithinRel(250000.0 * 1.7 * daly_wall_per_work(tau, 30.0, 600.0, m40), 1e-12));
    // per node: 8 GPUs per node, the same MTBF per node is 8 x the per-GPU one
    q.mtbf = seconds(1000.0 * 3600.0 / 8.0);
    q.mtbf_per_node = true;
    const auto per_node = plan_capacity(q, fake_oracle{&steps, &calls});
    CHECK(per_node.answer.gpus == 40);
    CHECK_THAT(in_seconds(per_node.answer.time.job_mtbf), WithinRel(m40, 1e-12));
}

TEST_CASE("plan_capacity: --gpus mode, cost, rank by cost, the curve around the answer") {
    // 64 GPUs are cheaper in GPU-hours than 56 (a better plan shape there)
    const std::map<long long, double> steps{{8, 8.0}, {16, 4.1}, {24, 2.8}, {32, 2.1}, {40, 1.7}, {48, 1.45}, {56, 1.3}, {64, 1.05},
                                            {72, 1.0}, {80, 0.9}, {88, 0.85}, {96, 0.8}, {104, 0.78}, {112, 0.76}, {128, 0.7}};
    long long calls = 0;
    model_capacity_request q;
    q.tokens = 1e12;
    q.tokens_per_step = 4e6;
    q.max_gpus = 512;
    q.mtbf = seconds(std::numeric_limits<double>::infinity());
    q.price_per_gpu_hour = 2.5;
    q.curve = false;
    q.gpus = 64;
    const auto at = plan_capacity(q, fake_oracle{&steps, &calls});
    REQUIRE(at.met);
    CHECK(at.answer.gpus == 64);
    CHECK(in_seconds(at.answer.time.wall) == 250000.0 * 1.05);
    CHECK_THAT(at.answer.gpu_hours, WithinRel(64.0 * 250000.0 * 1.05 / 3600.0, 1e-12));
    CHECK_THAT(at.answer.cost, WithinRel(2.5 * at.answer.gpu_hours, 1e-12));

    q.gpus = 0;
    q.deadline = seconds(250000.0 * 1.35);
    const auto fastest = plan_capacity(q, fake_oracle{&steps, &calls});
    CHECK(fastest.answer.gpus == 56);
    q.rank_by = capacity_rank::cost;
    const auto cheapest = plan_capacity(q, fake_oracle{&steps, &calls});
    // 56 x 1.3 = 72.8 > 64 x 1.05 = 67.2 GPU-seconds per step; 72 x 1.0 = 72 and beyond cost more
    CHECK(cheapest.answer.gpus == 64);
    CHECK(cheapest.answer.cost < fastest.answer.cost);

    q.rank_by = capacity_rank::time;
    q.curve = true;
    const auto curve = plan_capacity(q, fake_oracle{&steps, &calls});
    std::vector<long long> counts;
    for (const auto& x : curve.curve) counts.push_back(x.gpus);
    CHECK(std::is_sorted(counts.begin(), counts.end()));
    // 56 x 1/2, 2 and 4 (28 is not whole nodes), beyond the counts the search itself planned
    for (const long long n : {112LL, 224LL}) CHECK(std::find(counts.begin(), counts.end(), n) != counts.end());
    CHECK(std::find(counts.begin(), counts.end(), 28LL) == counts.end());
    CHECK(counts.back() == 224);
}

TEST_CASE("plan_capacity: bad requests name the field") {
    const std::map<long long, double> steps{{8, 1.0}};
    long long calls = 0;
    auto field_of = [&](model_capacity_request q) {
        try {
            (void)plan_capacity(q, fake_oracle{&steps, &calls});
        } catch (const input_error& e) {
            return e.field();
        }
        return std::string("no error");
    };
    model_capacity_request ok;
    ok.tokens = 1e9;
    ok.tokens_per_step = 1e6;
    ok.deadline = one_day;
    ok.max_gpus = 64;
    CHECK(field_of(ok) == "no error");
    auto q = ok;
    q.tokens = 0;
    CHECK(field_of(q) == "tokens");
    q = ok;
    q.tokens_per_step = std::nan("");
    CHECK(field_of(q) == "tokens_per_step");
    q = ok;
    q.gpus = 16;
    CHECK(field_of(q) == "deadline");  // both a deadline and a count
    q = ok;
    q.deadline.reset();
    CHECK(field_of(q) == "deadline");  // neither
    q = ok;
    q.deadline = seconds(1);
    CHECK(field_of(q) == "time");
    q = ok;
    q.granule = 12;
    CHECK(field_of(q) == "granule");  // not whole 8-GPU nodes
    q = ok;
    q.max_gpus = 4;
    CHECK(field_of(q) == "max_gpus");
    q = ok;
    q.mtbf = seconds(-1);
    CHECK(field_of(q) == "mtbf");
    q = ok;
    q.restart_time = seconds(-1);
    CHECK(field_of(q) == "restart_time");
    q = ok;
    q.checkpoint_interval = seconds(0);
    CHECK(field_of(q) == "checkpoint_interval");
    q = ok;
    q.price_per_gpu_hour = -2;
    CHECK(field_of(q) == "price_per_gpu_hour");
    q = ok;
    q.deadline.reset();
    q.gpus = 12;
    CHECK(field_of(q) == "gpus");
}

TEST_CASE("planner: min_cp_tokens bounds CP, pareto_max_slowdown trims the front") {
    const transformer m = model_by_name("llama2-7b");
    cluster c = cluster_by_name("dgx-a100");
    c.nodes = 2;
    const accelerator acc = accelerator_by_name("a100-80gb-sxm");
    search_request r;
    r.global_batch = 32;
    r.seq = 4096;
    r.top_k = 100000;
    r.threads = 2;
    r.max_micro_batch = 2;  // a smaller space, for the sanitizer build
    r.max_virtual_stages = 2;
    r.try_zero_bubble = false;
    r.try_pipeline_split = false;
    const auto all = search_plans(m, c, acc, r);
    REQUIRE(static_cast<long long>(all.top.size()) == all.feasible);
    int most_cp = 1;
    for (const auto& x : all.top) most_cp = std::max(most_cp, x.p.cp);
    CHECK(most_cp > 4);  // fewer than 1,024 tokens per rank: in the unbounded space
    r.min_cp_tokens = 1024;
    const auto bounded = search_plans(m, c, acc, r);
    REQUIRE(!bounded.top.empty());
    for (const auto& x : bounded.top) CHECK((x.p.cp == 1 || 4096 / x.p.cp >= 1024));
    CHECK(bounded.candidates < all.candidates);
    // every plan of the unbounded space that the bound keeps is still there, with its time
    long long kept = 0;
    for (const auto& x : all.top)
        if (x.p.cp == 1 || 4096 / x.p.cp >= 1024) ++kept;
    CHECK(kept == bounded.feasible);

    r.min_cp_tokens = 0;
    r.pareto_max_slowdown = 1.5;
    const auto trimmed = search_plans(m, c, acc, r);
    REQUIRE(!all.pareto.empty());
    const double best = all.top.front().r.step.value();
    std::size_t within = 0;
    for (const auto& x : all.pareto) within += x.r.step.value() <= 1.5 * best ? 1 : 0;
    CHECK(trimmed.pareto.size() == within);
    CHECK(within < all.pareto.size());
    for (const auto& x : trimmed.pareto) CHECK(x.r.step.value() <= 1.5 * best);
    // shards trimmed against their own best and merged equal the whole search trimmed
    std::vector<search_result> parts;
    for (int i = 0; i < 3; ++i) {
        search_request s = r;
        s.shard = i;
        s.shards = 3;
        parts.push_back(search_plans(m, c, acc, s));
    }
    const auto merged = merge_results(parts, r.top_k, 1.5);
    REQUIRE(merged.pareto.size() == trimmed.pareto.size());
    for (std::size_t i = 0; i < merged.pareto.size(); ++i) CHECK(plan_key(merged.pareto[i].p) == plan_key(trimmed.pareto[i].p));
    r.pareto_max_slowdown = 0.5;
    CHECK_THROWS_AS(search_plans(m, c, acc, r), input_error);
    r.pareto_max_slowdown = 0;
    r.min_cp_tokens = -1;
    CHECK_THROWS_AS(search_plans(m, c, acc, r), input_error);
}
