// Calibration beyond the fitted sweep (calibrate/calibrate.hpp): fitting one collective must
// improve the predictions of the others on the same system, and the reported uncertainties must
// cover the truth. Synthetic systems: known realistic-mode parameters (`truth_params`, every value
// moved 10-50% away from the defaults of hardware/comm_params.hpp) on the dgx-a100 / dgx-h100
// presets; measurements = predict_collective of that truth with multiplicative Gaussian noise
// (fixed seeds). Real data: the 8 x A100 all-reduce table of ml-engineering-networking and the
// OCI 2 x 8 A100 all-reduce log (tests/data/nccl-tests/ORIGIN.md).
#include "catch_shim.hpp"

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <commscale/calibrate/calibrate.hpp>
#include <commscale/calibrate/nccl_tests.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/file.hpp>

using namespace commscale;

namespace {

// The "measured system": base latencies (fixed by the fit) kept at the defaults so that the model
// family contains the truth; everything the fit estimates moved away from its default.
comm_params truth_params() {
    comm_params p;
    p.protocol_bandwidth = {0.3, 0.75, 1.0};
    p.nvlink = {.step_latency = {seconds(0.9e-6), seconds(2.5e-6), seconds(4.5e-6)},
                .efficiency = 0.72,
                .half_size = bytes(1.5e6),
                .exponent = 0.7};
    p.net = {.step_latency = {seconds(4e-6), seconds(6e-6), seconds(20e-6)},
             .efficiency = 0.9,
             .half_size = bytes(200e3),
             .exponent = 0.9};
    return p;
}

// A measured point from the published units: size (B) and time (us).
fit_point cross_point(double size, double time_us) { return {bytes(size), time_as_read{time_us}}; }

// An nccl-tests-like sweep (8 B .. 4 GiB, factor 2) of `op` on the truth, with relative noise `sd`.
std::vector<fit_point> sweep(const cluster& truth, const placement& g, collective_op op, unsigned seed, double sd) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, sd);
    std::vector<fit_point> v;
    for (int i = 0; i <= 29; ++i) {
        const double s = std::ldexp(8.0, i);
        v.push_back(cross_point(s, in_us(predict_collective(truth, g, op, bytes(s)).time) * (1.0 + noise(rng))));
    }
    return v;
}

error_summary errors(const cluster& c, const placement& g, collective_op op, const std::vector<fit_point>& rows) {
    std::vector<double> meas, pred;
    for (const auto& p : rows) {
        meas.push_back(in_us(p.time));
        pred.push_back(in_us(predict_collective(c, g, op, p.bytes).time));
    }
    return summarize_errors(meas, pred);
}

calibration_options fast() {
    calibration_options o;
    o.cross_validate = false;
    return o;
}

constexpr collective_op second_ops[] = {collective_op::all_gather, collective_op::reduce_scatter, collective_op::broadcast};

// Checks the prediction of each second collective (all_gather, reduce_scatter, broadcast) on `g`
// by the calibrated cluster against the truth (noiseless): median <= `bound[i]` and at most
// 1/`improvement` of the uncalibrated one.
void check_second_collectives(const cluster& uncalibrated, const cluster& calibrated, const cluster& truth,
                              const placement& g, std::array<double, 3> bound, double improvement = 3.0) {
    for (std::size_t i = 0; i < 3; ++i) {
        const auto op = second_ops[i];
        const auto rows = sweep(truth, g, op, 23, 0.0);
        const auto before = errors(uncalibrated, g, op, rows), after = errors(calibrated, g, op, rows);
        INFO(to_string(op) << " on " << g.ranks << " ranks: uncalibrated median " << before.median << " max " << before.max
                         << "; calibrated median " << after.median << " max " << after.max);
        CHECK(after.median <= bound[i]);
        CHECK(after.median < before.median / improvement);
    }
}

}  // namespace

TEST_CASE("fitting all_reduce on one NVSwitch node improves all_gather, reduce_scatter and broadcast") {
    // Issue 5 target: calibrated predictions of a second collective within 10% (median).
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    for (const cluster& c : {presets::dgx_a100, presets::dgx_h100}) {
        cluster truth = c;
        truth.comm = truth_params();
        const auto f = calibrate_collective(c, node, collective_op::all_reduce,
                                            sweep(truth, node, collective_op::all_reduce, 11, 0.02), fast());
        INFO(c.name << ": fitted efficiency " << f.fitted.efficiency << " (truth 0.72)");
        CHECK(f.median_rel_error < 0.03);  // 2% noise
        CHECK_THAT(f.fitted.efficiency, Catch::Matchers::WithinRel(0.72, 0.03));
        // dgx-a100: 0.7 / 0.7 / 0.8% median; dgx-h100: all_gather / reduce_scatter 0.6%,
        // broadcast 3.1% (the all-reduce there is NVLS, the broadcast a ring: the NVLink
        // saturation curve is fitted over per-step sizes the ring does not use; 10.4% before the
        // step latencies shared a prior factor, calibration_latency_correlation).
        check_second_collectives(c, f.calibrated, truth, node, {0.10, 0.10, 0.10});
    }
}

TEST_CASE("fitting all_reduce across 2 and 4 nodes (InfiniBand) improves the other collectives") {
    // A multi-node sweep calibrates the NIC class only (`calibrated_class`): the scale-up class
    // keeps what the cluster had. The recommended order is therefore the node first (an 8-GPU
    // sweep), then the multi-node sweep on top of that calibrated cluster. Both are all_reduce.
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const cluster h100 = presets::dgx_h100;
    cluster truth1 = h100;
    truth1.comm = truth_params();
    const cluster node_cal =
        calibrate_collective(h100, node, collective_op::all_reduce, sweep(truth1, node, collective_op::all_reduce, 11, 0.02), fast())
            .calibrated;
    for (const int nodes : {2, 4}) {
        cluster c = h100, start = node_cal, truth = truth1;
        c.nodes = start.nodes = truth.nodes = nodes;
        const placement g{.ranks = 8 * nodes, .ranks_per_node = 8, .stride = 1};
        const auto f = calibrate_collective(start, g, collective_op::all_reduce,
                                            sweep(truth, g, collective_op::all_reduce, 13, 0.02), fast());
        CHECK(f.fitted_class == link_class::net);
        CHECK(f.median_rel_error < 0.03);
        // The fitted all_reduce is NVLS: 2 NVLink steps and 2(N-1) NIC steps of latency; the
        // second collectives are NCCL's rings: on 4 nodes 28 NVLink and 3 NIC steps. The sweeps
        // fix the sum base + 2 x NVLink + 2(N-1) x NIC step latency, not how it splits between
        // the classes, so the rings' small-message latency is an extrapolation in step count
        // (truth 43.8 us for an 8-byte all_gather on 4 nodes). The NVLS node sweep pins the
        // NVLink Simple step latency; the LL and LL128 ones follow it through the prior's shared
        // factor (calibration_latency_correlation). Medians: 2 nodes 47% -> 0.8% all_gather /
        // reduce_scatter, 0.7% broadcast; 4 nodes 50% -> 3.4%, 3.3% (with independent latency
        // priors 6.3% and 12.3%: the LL step latency stayed at NCCL's constant). Calibrating the
        // node from a ring collective too does better still (the joint fit two tests below).
        check_second_collectives(c, f.calibrated, truth, g, std::array{0.10, 0.10, 0.10}, 3.0);
    }
}

TEST_CASE("a multi-node all_reduce fitted from the defaults still improves the other collectives") {
    // Without the node calibrated first, the NIC class absorbs the scale-up class's error (the
    // fitted NIC efficiency lands far from the truth's 0.9), so the second collectives improve
    // less: all_gather / reduce_scatter 47% -> 8.2%, broadcast 47% -> 8.6% (median) on 2 nodes.
    cluster c = presets::dgx_h100;
    c.nodes = 2;
    cluster truth = c;
    truth.comm = truth_params();
    const placement g{.ranks = 16, .ranks_per_node = 8, .stride = 1};
    const auto f = calibrate_collective(c, g, collective_op::all_reduce, sweep(truth, g, collective_op::all_reduce, 11, 0.02), fast());
    CHECK(f.median_rel_error < 0.03);
    for (const auto op : second_ops) {
        const auto rows = sweep(truth, g, op, 23, 0.0);
        const auto before = errors(c, g, op, rows), after = errors(f.calibrated, g, op, rows);
        INFO(to_string(op) << ": uncalibrated median " << before.median << ", calibrated " << after.median);
        CHECK(after.median < before.median / 2.0);
        CHECK(after.median <= 0.10);
    }
}

TEST_CASE("a 2-node all_reduce calibration predicts 4 and 8 nodes of the same system") {
    // Cross-scale: the node calibrated first (8-GPU sweep), then a 2 x 8 all_reduce sweep fits the
    // NIC class; the calibrated cluster with 4 and 8 nodes predicts the truth's all_reduce,
    // all_gather and reduce_scatter there (noiseless sweeps). The fitted quantities are the
    // hardware's (per-step latencies, efficiency, saturation), so they carry over to more nodes.
    // Measured medians (defaults in brackets): all_reduce 1.7% on 4 nodes, 2.0% on 8 (58%, 68%);
    // all_gather / reduce_scatter 9.1%, 10.7% (50%, 53%): the rings' step-count extrapolation of
    // the latency (see the test above). Bounds: all_reduce 5%, the others 12%.
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const cluster h100 = presets::dgx_h100;
    cluster truth = h100;
    truth.comm = truth_params();
    const cluster node_cal =
        calibrate_collective(h100, node, collective_op::all_reduce, sweep(truth, node, collective_op::all_reduce, 11, 0.02), fast())
            .calibrated;
    cluster start = node_cal, truth2 = truth;
    start.nodes = truth2.nodes = 2;
    const placement two{.ranks = 16, .ranks_per_node = 8, .stride = 1};
    const cluster fitted =
        calibrate_collective(start, two, collective_op::all_reduce, sweep(truth2, two, collective_op::all_reduce, 13, 0.02), fast())
            .calibrated;
    for (const int nodes : {4, 8}) {
        cluster cal = fitted, tr = truth, def = h100;
        cal.nodes = tr.nodes = def.nodes = nodes;
        const placement g{.ranks = 8 * nodes, .ranks_per_node = 8, .stride = 1};
        for (const auto op : {collective_op::all_reduce, collective_op::all_gather, collective_op::reduce_scatter}) {
            const auto rows = sweep(tr, g, op, 29, 0.0);
            const auto before = errors(def, g, op, rows), after = errors(cal, g, op, rows);
            INFO(to_string(op) << " on " << nodes << " nodes: default median " << before.median << ", calibrated " << after.median
                             << " (max " << after.max << ")");
            CHECK(after.median <= (op == collective_op::all_reduce ? 0.05 : 0.12));
            CHECK(after.median < before.median / 4.0);
        }
    }
}

TEST_CASE("node calibrated from all_reduce and all_gather jointly: a 2-node all_reduce carries over to every collective and to 8 nodes") {
    // Why the tests above stop at 12%: the node's all_reduce is NVLS (2 NVLink steps of latency),
    // so it cannot tell the NVLink per-step latency from the saturation curve, which a ring (7
    // steps on a node, 28 on 4 nodes) needs. One all_gather sweep on the node, fitted jointly
    // with the all_reduce (calibrate_collectives), separates them: the per-step latency grows with
    // the algorithm's step count, the saturation with the bytes moved. The hardware's quantities
    // are then fitted, and a multi-node all_reduce (the NIC class) carries over to the other
    // collectives and to more nodes. Measured medians (dgx-h100 / dgx-a100): on 2 nodes 0.5-1.1%,
    // on 4 nodes 0.7-1.3%, on 8 nodes 0.6-1.6% for all_reduce, all_gather, reduce_scatter and
    // broadcast. Bound: the 10% target, and 3% (twice the largest).
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const placement two{.ranks = 16, .ranks_per_node = 8, .stride = 1};
    for (const cluster& c : {presets::dgx_h100, presets::dgx_a100}) {
        cluster truth = c;
        truth.comm = truth_params();
        const std::vector<calibration_sweep> node_sweeps{
            {node, collective_op::all_reduce, sweep(truth, node, collective_op::all_reduce, 11, 0.02)},
            {node, collective_op::all_gather, sweep(truth, node, collective_op::all_gather, 21, 0.02)}};
        const auto n = calibrate_collectives(c, node_sweeps, fast());
        CHECK(n.rows == 60);
        CHECK(n.fitted_class == link_class::nvlink);
        cluster start = n.calibrated, truth2 = truth;
        start.nodes = truth2.nodes = 2;
        const auto f = calibrate_collective(start, two, collective_op::all_reduce,
                                            sweep(truth2, two, collective_op::all_reduce, 13, 0.02), fast());
        CHECK(f.fitted_class == link_class::net);
        for (const int nodes : {2, 4, 8}) {
            cluster cal = f.calibrated, tr = truth, def = c;
            cal.nodes = tr.nodes = def.nodes = nodes;
            const placement g{.ranks = 8 * nodes, .ranks_per_node = 8, .stride = 1};
            for (const auto op : {collective_op::all_reduce, collective_op::all_gather, collective_op::reduce_scatter,
                                  collective_op::broadcast}) {
                const auto rows = sweep(tr, g, op, 29, 0.0);
                const auto before = errors(def, g, op, rows), after = errors(cal, g, op, rows);
                INFO(c.name << ", " << to_string(op) << " on " << nodes << " nodes: default median " << before.median
                            << ", calibrated " << after.median << " (max " << after.max << ")");
                CHECK(after.median <= 0.03);
                CHECK(after.median < before.median / 10.0);
            }
        }
    }
}

TEST_CASE("calibrate_collectives: one parameter set for all sweeps, and its bad input") {
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const placement two{.ranks = 16, .ranks_per_node = 8, .stride = 1};
    cluster c = presets::dgx_h100;
    c.nodes = 2;
    cluster truth = c;
    truth.comm = truth_params();
    const auto ar = sweep(truth, node, collective_op::all_reduce, 11, 0.0);
    // One sweep jointly is the single fit.
    const auto single = calibrate_collective(c, node, collective_op::all_reduce, ar, fast());
    const auto joint = calibrate_collectives(c, std::vector<calibration_sweep>{{node, collective_op::all_reduce, ar}}, fast());
    CHECK(joint.fitted.efficiency == single.fitted.efficiency);
    CHECK(joint.latency == single.latency);
    CHECK_THROWS_AS(calibrate_collectives(c, std::vector<calibration_sweep>{}, fast()), input_error);
    // A node sweep and a 2-node sweep calibrate different classes (NVLink, NIC).
    CHECK_THROWS_AS(calibrate_collectives(c,
                                          std::vector<calibration_sweep>{{node, collective_op::all_reduce, ar},
                                                                         {two, collective_op::all_reduce, sweep(truth, two, collective_op::all_reduce, 3, 0.0)}},
                                          fast()),
                    input_error);
    // A bad row of the second sweep is named as such.
    auto bad = ar;
    bad[4].time = time_as_read{-1.0};
    try {
        (void)calibrate_collectives(c, std::vector<calibration_sweep>{{node, collective_op::all_reduce, ar}, {node, collective_op::all_gather, bad}},
                                    fast());
        FAIL("no error");
    } catch (const input_error& e) {
        CHECK(std::string(e.what()).find("sweeps[1].rows") != std::string::npos);
    }
}

TEST_CASE("round trip through the model: parameters recovered within their reported uncertainty") {
    // 8 x A100, all_reduce, 1% noise, 16 seeds. Every estimated parameter of the NVLink class
    // (three step latencies, efficiency, half size, exponent) must lie within 3σ of the truth in
    // at least 85% of the seeds, and within 1σ in 35-85% of all cases (68% for an exactly linear
    // model; the protocol minimum makes the cost surface kinked, which widens the tails).
    const cluster c = presets::dgx_a100;
    cluster truth = c;
    truth.comm = truth_params();
    const link_class_params& t = truth.comm.nvlink;
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    constexpr int seeds = 16, params = 6;
    std::array<int, params> within3{};
    int within1 = 0;
    for (unsigned seed = 1; seed <= seeds; ++seed) {
        const auto f = calibrate_collective(c, node, collective_op::all_reduce,
                                            sweep(truth, node, collective_op::all_reduce, seed, 0.01), fast());
        const link_class_params& k = f.fitted;
        auto z_of = [](double est, double tru, double sd) { return std::fabs(est - tru) / sd; };
        const std::array<double, params> z{
            z_of(in_us(k.step_latency[0]), in_us(t.step_latency[0]), in_us(f.step_latency_sigma[0])),
            z_of(in_us(k.step_latency[1]), in_us(t.step_latency[1]), in_us(f.step_latency_sigma[1])),
            z_of(in_us(k.step_latency[2]), in_us(t.step_latency[2]), in_us(f.step_latency_sigma[2])),
            z_of(k.efficiency, t.efficiency, f.efficiency_sigma),
            z_of(in_bytes(k.half_size), in_bytes(t.half_size), in_bytes(f.half_size_sigma)),
            z_of(k.exponent, t.exponent, f.exponent_sigma)};
        for (std::size_t i = 0; i < params; ++i) {
            INFO("seed " << seed << " parameter " << i << " z " << z[i]);
            CHECK_FALSE(std::isnan(z[i]));  // +inf σ (a parameter the sweep does not fix) gives z = 0
            within3[i] += z[i] < 3.0;
            within1 += z[i] < 1.0;
        }
        CHECK(f.median_rel_error < 0.015);
    }
    for (std::size_t i = 0; i < params; ++i) {
        INFO("parameter " << i << " within 3 sigma in " << within3[i] << " of " << seeds);
        CHECK(within3[i] >= 14);  // 85% of 16, rounded up
    }
    const double cover1 = static_cast<double>(within1) / (seeds * params);
    INFO("within 1 sigma: " << cover1);
    CHECK(cover1 >= 0.35);
    CHECK(cover1 <= 0.85);
}

TEST_CASE("real data: the single-node A100 calibration predicts the OCI 2 x 8 A100 large rows") {
    // The OCI log keeps 5 rows (too few to fit 8 parameters). Its two largest rows (4 and 8 GiB,
    // busbw 235.6 and 237.9 GB/s) are bound inside the nodes (NVLink3), as a single-node A100 is:
    // the 8 x A100 table of ml-engineering (234.9 GB/s at 16 GiB) calibrates exactly that class.
    // Measured: the calibrated cluster predicts the rows 8.6% and 9.1% slow, the defaults 9.0% and
    // 8.7%: the measured 2-node busbw (235.6-237.9 GB/s) is above the single node's at 1 GiB (229
    // GB/s) and its fitted peak (233.7 GB/s, efficiency 0.779 against the default 0.8), and the
    // model adds the inter-node ring steps to the NVLink-bound part. Bound: 10%, and no more than
    // one point worse than the defaults.
    const auto node_sets = parse_measurements(
        io::read_file(std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/ml_engineering_a100_allreduce.log"), "ml");
    const auto oci_sets =
        parse_measurements(io::read_file(std::string(COMMSCALE_TEST_DATA_DIR) + "/nccl-tests/oci_a100_allreduce_2.13era.log"), "oci",
                           collective_op::all_reduce);  // the snippet lost its binary name
    REQUIRE(node_sets.size() == 1);
    REQUIRE(oci_sets.size() == 1);
    std::vector<fit_point> node_rows;
    for (const auto& r : node_sets[0].rows) node_rows.push_back({r.bytes, r.time});
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    cluster cal = calibrate_collective(presets::dgx_a100, node, collective_op::all_reduce, node_rows, fast()).calibrated;
    cluster def = presets::dgx_a100;
    cal.nodes = def.nodes = 2;
    const placement two{.ranks = 16, .ranks_per_node = 8, .stride = 1};
    REQUIRE(oci_sets[0].ranks == 16);
    int checked = 0;
    for (const auto& r : oci_sets[0].rows) {
        if (in_bytes(r.bytes) < 1e9) continue;
        const double t_cal = in_us(predict_collective(cal, two, collective_op::all_reduce, r.bytes).time);
        const double t_def = in_us(predict_collective(def, two, collective_op::all_reduce, r.bytes).time);
        INFO(in_bytes(r.bytes) << " B: measured " << in_us(r.time) << " us, calibrated " << t_cal << ", default " << t_def);
        CHECK(std::fabs(t_cal / in_us(r.time) - 1.0) <= 0.10);
        CHECK(std::fabs(t_cal / in_us(r.time) - 1.0) <= std::fabs(t_def / in_us(r.time) - 1.0) + 0.01);
        ++checked;
    }
    CHECK(checked == 2);
}

TEST_CASE("calibrate_collective: bad measurement sets are input errors, never NaN") {
    const placement node{.ranks = 8, .ranks_per_node = 8, .stride = 1};
    const cluster c = presets::dgx_a100;
    std::vector<fit_point> good;
    for (int i = 0; i < 12; ++i) good.push_back(cross_point(std::ldexp(1024.0, i), 20.0 + i));
    auto with = [&](std::size_t i, fit_point p) {
        auto v = good;
        v[i] = p;
        return v;
    };
    const std::vector<fit_point> none, one{cross_point(1024, 10.0)}, same(12, cross_point(1024, 10.0));
    for (const auto& v : {none, one, same, with(3, cross_point(std::nan(""), 10.0)), with(3, cross_point(-1.0, 10.0)), with(3, cross_point(1024.0, -5.0)),
                          with(3, cross_point(1024.0, std::nan(""))), with(3, cross_point(1024.0, 0.0))})
        CHECK_THROWS_AS(calibrate_collective(c, node, collective_op::all_reduce, v, fast()), input_error);
    // A placement the cluster cannot hold.
    const placement too_many{.ranks = 64, .ranks_per_node = 8, .stride = 1};
    CHECK_THROWS_AS(calibrate_collective(c, too_many, collective_op::all_reduce, good, fast()), input_error);
}
