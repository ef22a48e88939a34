// NVLink domains that span nodes (cluster::scale_up_domain): an NVL72 rack is 18 compute trays of
// 4 GPUs on one NVLink5 fabric. Groups inside the rack are priced on NVLink (NVLink5: 1.8 TB/s per
// GPU duplex = 900 GB/s per direction, NVIDIA GB200 NVL72 product page), groups spread across racks
// on one 400 Gb/s ConnectX-7 per GPU (50 GB/s per direction); the expected figures are those
// datasheet numbers, not the library's output.
#include <string>

#include <nlohmann/json.hpp>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

#include "catch_shim.hpp"

using namespace commscale;

namespace {
/// `racks` GB200 NVL72 racks (18 trays each).
cluster gb200_racks(int racks) {
    cluster c = cluster_by_name("gb200-nvl72");
    c.nodes = 18 * racks;
    return c;
}

/// The same trays with the NVLink domain cut to the tray (what the preset modelled before racks).
cluster trays_only(cluster c) {
    c.scale_up_domain = 0;
    return c;
}

const collective_options ideal{algorithm::automatic, efficiency_mode::ideal};

/// Throws the input_error of validate(c), or fails.
input_error validate_error(const cluster& c) {
    try {
        validate(c, "cluster");
    } catch (const input_error& e) {
        return e;
    }
    FAIL("validate accepted scale_up_domain " << c.scale_up_domain);
    return input_error("", "", "");
}
}  // namespace

TEST_CASE("scale_up_domain: the NVL72 presets are 18 trays of 4 GPUs in one 72-GPU NVLink domain") {
    for (const char* name : {"gb200-nvl72", "gb300-nvl72"}) {
        INFO(name);
        const cluster c = cluster_by_name(name);
        // product page: 72 GPUs in 18 compute trays of 4; one NIC per GPU (4 per tray)
        CHECK(c.node.gpus == 4);
        CHECK(c.nodes == 18);
        CHECK(c.total_gpus() == 72);
        CHECK(c.scale_up_domain == 72);
        CHECK(c.domain_gpus() == 72);
        CHECK(c.node.nics == 4);
        CHECK(c.node.gpus_per_nic() == 1);
        const cluster v = comm_view(c);
        CHECK(v.nodes == 1);
        CHECK(v.node.gpus == 72);
        CHECK(v.node.nics == 72);
        CHECK(v.node.in_switch_reduction);
    }
    // two racks: two domains; half a rack: one partial domain of 36 GPUs
    CHECK(comm_view(gb200_racks(2)).nodes == 2);
    cluster half = cluster_by_name("gb200-nvl72");
    half.nodes = 9;
    CHECK(half.domain_gpus() == 36);
    CHECK(comm_view(half).nodes == 1);
    // 25 trays (100 GPUs): a full rack and a partial one
    half.nodes = 25;
    CHECK(comm_view(half).nodes == 2);
    CHECK(comm_view(half).node.gpus == 72);
    // every other preset's domain is its node, and its view is itself
    for (const cluster& p : all_clusters()) {
        if (p.domain_spans_nodes()) continue;
        CHECK(p.domain_gpus() == p.node.gpus);
        CHECK(comm_view(p).nodes == p.nodes);
        CHECK(comm_view(p).node.gpus == p.node.gpus);
    }
}

TEST_CASE("scale_up_domain: validate rejects a domain that is not whole nodes or spans nodes off a switch") {
    cluster c = cluster_by_name("gb200-nvl72");
    for (int bad : {70, 2, -4, 6}) {
        c.scale_up_domain = bad;
        const input_error e = validate_error(c);
        CHECK(e.field() == "cluster.scale_up_domain");
        CHECK(e.value() == std::to_string(bad));
        CHECK(std::string(e.expected()).find("multiple of gpus_per_node (4)") != std::string::npos);
    }
    for (int good : {0, 4, 8, 72, 576}) {
        c.scale_up_domain = good;
        CHECK_NOTHROW(validate(c, "cluster"));
    }
    cluster mesh = cluster_by_name("mi300x-roce");
    mesh.scale_up_domain = 16;
    const input_error e = validate_error(mesh);
    CHECK(e.field() == "cluster.scale_up_domain");
    CHECK(std::string(e.expected()).find("switched") != std::string::npos);
    mesh.scale_up_domain = 8;  // the node itself
    CHECK_NOTHROW(validate(mesh, "cluster"));
}

TEST_CASE("scale_up_domain: cluster JSON reads and writes it, omitted when the domain is the node") {
    const cluster c = cluster_by_name("gb300-nvl72");
    const nlohmann::json j = io::cluster_to_json(c);
    REQUIRE(j.contains("scale_up_domain"));
    CHECK(j["scale_up_domain"].get<int>() == 72);
    const cluster back = io::cluster_from_json(j);
    CHECK(back.scale_up_domain == 72);
    CHECK(back.node.gpus == 4);
    CHECK(back.nodes == 18);
    CHECK(io::cluster_to_json(back) == j);
    CHECK_FALSE(io::cluster_to_json(cluster_by_name("dgx-h100")).contains("scale_up_domain"));
    CHECK_FALSE(io::cluster_to_json(trays_only(c)).contains("scale_up_domain"));
    nlohmann::json bad = j;
    bad["scale_up_domain"] = 70;
    CHECK_THROWS_WITH(io::cluster_from_json(bad), Catch::Matchers::Contains("cluster.scale_up_domain") &&
                                                      Catch::Matchers::Contains("70"));
    bad["scale_up_domain"] = -1;
    CHECK_THROWS_AS(io::cluster_from_json(bad), input_error);
}

TEST_CASE("NVL72: a TP 8 and an EP 64 group inside one rack run at NVLink5 speed, spread over racks at the NIC's") {
    // inside: 8 or 64 ranks in one NVLink domain (ranks_per_node counts ranks per domain)
    const cluster two = gb200_racks(2);
    const auto tp_in = predict_collective(two, placement{.ranks = 8, .ranks_per_node = 8, .stride = 1},
                                          collective_op::all_gather, bytes(1.0 * gibi), ideal);
    const auto ep_in = predict_collective(two, placement{.ranks = 64, .ranks_per_node = 64, .stride = 1},
                                          collective_op::all_to_all, bytes(1.0 * gibi), ideal);
    CHECK(tp_in.nodes == 1);
    CHECK(tp_in.bottleneck == bottleneck_kind::intra_link);
    CHECK(tp_in.bottleneck_link == "nvlink5");
    CHECK(in_GBps(tp_in.busbw) == Approx(900.0).epsilon(0.01));  // NVLink5 per direction
    CHECK(in_GBps(ep_in.busbw) == Approx(900.0).epsilon(0.01));
    // across: the same groups one GPU per rack (8 and 64 racks), each GPU on its own 400G NIC
    const auto tp_out = predict_collective(gb200_racks(8), placement{.ranks = 8, .ranks_per_node = 1, .stride = 1},
                                           collective_op::all_gather, bytes(1.0 * gibi), ideal);
    const auto ep_out = predict_collective(gb200_racks(64), placement{.ranks = 64, .ranks_per_node = 1, .stride = 1},
                                           collective_op::all_to_all, bytes(1.0 * gibi), ideal);
    CHECK(tp_out.nodes == 8);
    CHECK(tp_out.bottleneck == bottleneck_kind::nic);
    CHECK(tp_out.bottleneck_link == "ib-ndr-4x");
    CHECK(in_GBps(tp_out.busbw) == Approx(50.0).epsilon(0.01));  // 400 Gb/s = 50 GB/s
    CHECK(in_GBps(ep_out.busbw) == Approx(50.0).epsilon(0.01));
    // realistic mode keeps the order and stays under the peaks; the in-rack all-reduce uses NVLS
    const auto ar_in = predict_collective(two, placement{.ranks = 8, .ranks_per_node = 8, .stride = 1},
                                          collective_op::all_reduce, bytes(1.0 * gibi));
    CHECK(ar_in.algo == algorithm::nvls);
    const auto ag_real = predict_collective(two, placement{.ranks = 8, .ranks_per_node = 8, .stride = 1},
                                            collective_op::all_gather, bytes(1.0 * gibi));
    CHECK(in_GBps(ag_real.busbw) > 0.6 * 900.0);
    CHECK(in_GBps(ag_real.busbw) <= 900.0);
    // the tray alone (domain = node): a TP 8 group spans two trays and crosses the NICs
    const auto tray = predict_collective(trays_only(two), placement{.ranks = 8, .ranks_per_node = 4, .stride = 1},
                                         collective_op::all_gather, bytes(1.0 * gibi), ideal);
    CHECK(tray.nodes == 2);
    CHECK(in_GBps(tray.busbw) < 0.3 * in_GBps(tp_in.busbw));
    // a group larger than the domains it is given is refused, naming the placement
    CHECK_THROWS_WITH(predict_collective(two, placement{.ranks = 8, .ranks_per_node = 73, .stride = 1},
                                         collective_op::all_gather, bytes(1.0 * gibi)),
                      Catch::Matchers::Contains("placement.ranks_per_node"));
}

TEST_CASE("NVL72 step: TP 8 inside a rack costs far less than TP 8 across trays' NICs") {
    // Llama 3 70B on two racks (144 GPUs): TP 8 with sequence parallelism, DP 18
    const transformer m = model_by_name("llama3-70b");
    const plan p{.tp = 8, .pp = 1, .dp = 18, .micro_batch = 1, .global_batch = 144, .seq = 8192, .sequence_parallel = true};
    const cluster racks = gb200_racks(2);
    const auto in_rack = predict_step(m, racks, p);
    const auto across = predict_step(m, trays_only(racks), p);
    CHECK(in_rack.tp.total.value() > 0.0);
    // a ring over two trays still spreads over their 4 NICs each (200 GB/s per tray): NVLink5's
    // 900 GB/s per GPU is ~3.5x that after the efficiencies
    CHECK(in_rack.tp.total.value() < 0.4 * across.tp.total.value());
    CHECK(in_rack.step.value() < across.step.value());
    // the TP group's placement: all 8 ranks in one NVLink domain
    const step_traffic t = plan_traffic(m, p, racks.domain_gpus());
    CHECK(t.tp_main.group.ranks_per_node == 8);
    CHECK(t.tp_main.group.nodes() == 1);
}

TEST_CASE("NVL72 step: the EP 64 all-to-all inside a rack costs far less than across trays' NICs") {
    // Qwen3-235B-A22B (128 experts) on 8 racks (576 GPUs): EP 64 carved out of DP 576
    const transformer m = model_by_name("qwen3-235b-a22b");
    const plan p{.tp = 1, .pp = 1, .dp = 576, .ep = 64, .micro_batch = 1, .global_batch = 576, .seq = 4096};
    const cluster racks = gb200_racks(8);
    const auto in_rack = predict_step(m, racks, p);
    const auto across = predict_step(m, trays_only(racks), p);
    CHECK(in_rack.ep.total.value() > 0.0);
    CHECK(in_rack.ep.total.value() < 0.25 * across.ep.total.value());
    const step_traffic t = plan_traffic(m, p, racks.domain_gpus());
    CHECK(t.ep.group.ranks_per_node == 64);
    CHECK(t.ep.group.nodes() == 1);
    // the inter-node requirement is per node (tray), not per rack
    CHECK(in_rack.dp_inter_node_bytes.value() ==
          Approx(dp_inter_node_bytes_per_node(t, 72).value() * 4.0 / 72.0).epsilon(1e-12));
}

TEST_CASE("planner: TP may span the cluster's NVLink domain by default") {
    const transformer m = model_by_name("llama3-70b");
    search_request r;
    r.global_batch = 144;
    r.seq = 8192;
    auto max_tp = [&](const cluster& c) {
        int tp = 0;
        for (const auto& s : plan_shapes(m, c, r)) tp = std::max(tp, s.tp);
        return tp;
    };
    const cluster racks = gb200_racks(2);
    CHECK(max_tp(racks) == 8);              // 64 heads: the largest divisor of 72 is 8
    CHECK(max_tp(trays_only(racks)) == 4);  // the tray
    r.scale_up_domain = 4;                  // an explicit request still limits it
    CHECK(max_tp(racks) == 4);
}
