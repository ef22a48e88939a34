// Tests for include/commscale/io/result_json.hpp: the JSON of collective results, plans, step
// breakdowns and plan searches reads back to the same values (to the bit in base units; in us,
// GB/s or TFLOP/s to a value that writes the same number) and writes back to the same document; shards written and read back merge into the unsharded search; and every hostile
// input (missing key, wrong type, negative or NaN number, unknown name or key) is an input_error
// naming its field path.
#include "catch_shim.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <commscale/collective/model.hpp>
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/cluster_json.hpp>  // first: its io::detail must not hide commscale::detail
#include <commscale/io/result_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using nlohmann::json;

namespace {

cluster preset(const char* name, int nodes) {
    cluster c = cluster_by_name(name);
    c.nodes = nodes;
    return c;
}

/// The input_error `read` throws, or fails the test.
input_error error_of(const std::function<void()>& read) {
    try {
        read();
    } catch (const input_error& e) {
        return e;
    }
    FAIL("no input_error");
    return input_error("", "", "");
}

/// Checks that reading `j` through `read` fails naming exactly `field`.
void require_field(const std::function<void(const json&)>& read, const json& j, const std::string& field) {
    const input_error e = error_of([&] { read(j); });
    INFO(e.what());
    CHECK(e.field() == field);
}

// A small search: Llama 2 7B on two DGX A100 (the CLI tests' `plan` example).
search_request small_request() {
    search_request r;
    r.global_batch = 32;
    r.seq = 2048;
    r.top_k = 12;
    return r;
}

void require_same_breakdown(const step_breakdown& a, const step_breakdown& b) {
    CHECK(a.step.value() == b.step.value());
    CHECK(a.compute.value() == b.compute.value());
    CHECK(a.bubble.value() == b.bubble.value());
    for (auto part : {&step_breakdown::tp, &step_breakdown::pp, &step_breakdown::dp, &step_breakdown::cp, &step_breakdown::ep}) {
        CHECK((a.*part).total.value() == (b.*part).total.value());
        CHECK((a.*part).exposed.value() == (b.*part).exposed.value());
    }
    CHECK(a.exposed_comm.value() == b.exposed_comm.value());
    CHECK(a.dp_window.value() == b.dp_window.value());
    CHECK(a.bubble_fraction == b.bubble_fraction);
    CHECK(a.mfu == b.mfu);
    CHECK(a.hfu == b.hfu);
    // written in TFLOP/s: read back as a rate that writes the same number, within an ulp or so
    CHECK(in_tflops(a.model_flops_per_gpu) == in_tflops(b.model_flops_per_gpu));
    CHECK(in_tflops(a.hardware_flops_per_gpu) == in_tflops(b.hardware_flops_per_gpu));
    CHECK_THAT(b.model_flops_per_gpu.value(), Catch::Matchers::WithinRel(a.model_flops_per_gpu.value(), 1e-15));
    CHECK(a.tokens_per_s == b.tokens_per_s);
    CHECK(a.memory.state.weights.value() == b.memory.state.weights.value());
    CHECK(a.memory.state.gradients.value() == b.memory.state.gradients.value());
    CHECK(a.memory.state.optimizer.value() == b.memory.state.optimizer.value());
    CHECK(a.memory.activations.value() == b.memory.activations.value());
    CHECK(a.memory_capacity.value() == b.memory_capacity.value());
    CHECK(a.fits_in_memory == b.fits_in_memory);
    CHECK(a.bottleneck == b.bottleneck);
    const bool bounded = std::isfinite(a.required_inter_node.value());
    CHECK(std::isfinite(b.required_inter_node.value()) == bounded);
    if (bounded) CHECK(in_Gbps(a.required_inter_node) == in_Gbps(b.required_inter_node));
    CHECK(a.dp_inter_node_bytes.value() == b.dp_inter_node_bytes.value());
    CHECK(a.efficiency == b.efficiency);
    CHECK(a.micro_batches == b.micro_batches);
    CHECK(a.optimizer.value() == b.optimizer.value());
    CHECK(a.overlap_slowdown.value() == b.overlap_slowdown.value());
    CHECK(a.stage_microbatch.value() == b.stage_microbatch.value());
    CHECK(a.layer.gemm_fwd.value() == b.layer.gemm_fwd.value());
    CHECK(a.layer.attention_bwd.value() == b.layer.attention_bwd.value());
    CHECK(a.layer.elementwise_bwd.value() == b.layer.elementwise_bwd.value());
}

}  // namespace

// ---------------------------------------------------------------- round trips

TEST_CASE("result JSON: collective results read back to the bit, every bottleneck wording") {
    struct call {
        const char* cluster;
        int nodes;
        collective_op op;
        double bytes;
        algorithm algo;
        placement group;
    };
    const call calls[] = {
        {"baskerville", 2, collective_op::all_reduce, 1.32 * gibi, algorithm::ring, {4, 2, 1}},  // NIC shared by 2 GPUs
        {"dgx-h100", 4, collective_op::all_gather, gibi, algorithm::automatic, {32, 8, 1}},
        {"dgx-a100", 2, collective_op::all_reduce, 8, algorithm::automatic, {16, 8, 1}},           // latency
        {"aws-p4d", 4, collective_op::reduce_scatter, gibi, algorithm::pat, {4, 1, 1}},
        {"dgx-h100", 2, collective_op::all_reduce, gibi, algorithm::parameter_server, {16, 8, 1}},  // server NIC
        {"dgx-h100", 1, collective_op::all_reduce, 256e6, algorithm::nvls, {8, 8, 1}},              // in-switch
        {"dgx-a100", 1, collective_op::all_reduce, gibi, algorithm::automatic, {1, 1, 1}},          // none
        {"dgx-a100", 8, collective_op::all_to_all, gibi, algorithm::automatic, {64, 8, 1}},
    };
    for (const auto& x : calls) {
        const cluster c = preset(x.cluster, x.nodes);
        collective_options o;
        o.algo = x.algo;
        const collective_result r = predict_collective(c, x.group, x.op, bytes(x.bytes), o);
        const json j = io::to_json(r);
        INFO(j.dump());
        const collective_result back = io::from_json<collective_result>(j, "collective");
        CHECK(back.op == r.op);
        CHECK(back.algo == r.algo);
        CHECK(back.ranks == r.ranks);
        CHECK(back.nodes == r.nodes);
        CHECK(back.bytes.value() == std::round(r.bytes.value()));
        // written in us and GB/s: read back as values that write the same numbers
        CHECK(in_us(back.time) == in_us(r.time));
        CHECK(in_us(back.latency) == in_us(r.latency));
        CHECK(in_us(back.transfer) == in_us(r.transfer));
        CHECK(in_GBps(back.algbw) == in_GBps(r.algbw));
        CHECK(in_GBps(back.busbw) == in_GBps(r.busbw));
        CHECK_THAT(back.time.value(), Catch::Matchers::WithinRel(r.time.value(), 1e-15));
        CHECK(back.bottleneck == r.bottleneck);
        CHECK(back.bottleneck_link == r.bottleneck_link);
        CHECK(back.sharing == r.sharing);
        CHECK(io::to_json(back).dump() == j.dump());
    }
    // a link that is not in the catalog is kept by name
    json j = io::to_json(predict_collective(preset("baskerville", 2), placement{4, 2, 1}, collective_op::all_reduce, bytes(gibi)));
    j["limiting"] = {{"kind", "nic"}, {"link", "my-nic"}, {"sharing", 3}};
    j["bottleneck"] = "inter-node NIC my-nic shared by 3 GPUs";
    const collective_result custom = io::collective_result_from_json(j);
    CHECK(custom.bottleneck == bottleneck_kind::nic);
    CHECK(custom.bottleneck_link == "my-nic");
    CHECK(custom.sharing == 3);
}

TEST_CASE("result JSON: step breakdowns and plans read back to the bit") {
    struct run {
        const char* model;
        const char* cluster;
        int nodes;
        std::function<void(plan&)> edit;
    };
    const std::vector<run> runs = {
        {"gpt3-175b", "dgx-a100", 16,
         [](plan& p) {
             p.tp = 8, p.pp = 8, p.dp = 2, p.global_batch = 512, p.recompute_mode = recompute::full;
         }},
        {"llama2-7b", "dgx-a100", 1, [](plan& p) { p.tp = 8, p.global_batch = 8; }},  // DP inside nothing: no DP traffic
        {"llama2-70b", "dgx-h100", 8,
         [](plan& p) {
             apply_framework(p, framework::fsdp);
             p.tp = 8, p.pp = 4, p.dp = 2, p.zero = 3, p.global_batch = 64, p.first_stage_layers = 14, p.last_stage_layers = 16;
         }},
        {"llama2-70b", "dgx-h100", 8,
         [](plan& p) { p.tp = 8, p.pp = 4, p.dp = 2, p.global_batch = 64, p.last_stage_layers = 17; }},
        {"llama3-70b", "dgx-h100", 8,
         [](plan& p) {
             p.tp = 8, p.pp = 4, p.dp = 2, p.global_batch = 64, p.schedule = pipeline_schedule::interleaved;
             p.virtual_stages = 5, p.sequence_parallel = true;
         }},
        {"mixtral-8x7b", "dgx-h100", 4,
         [](plan& p) {
             apply_framework(p, framework::deepspeed);
             p.tp = 2, p.dp = 16, p.ep = 8, p.etp = 1, p.global_batch = 64, p.capacity_factor = 1.25, p.pad_to_capacity = true;
         }},
        {"gpt3-175b", "dgx-a100", 1, [](plan& p) { p.tp = 8, p.global_batch = 8; }},  // does not fit
        // Megatron's gradient-accumulation fusion: set against the stack's practice either way
        {"llama3-8b", "dgx-h100", 1, [](plan& p) { p.dp = 8, p.zero = 3, p.global_batch = 16, p.gradient_accumulation_fusion = true; }},
        {"llama3-8b", "dgx-h100", 1, [](plan& p) { p.dp = 8, p.global_batch = 16, p.gradient_accumulation_fusion = false; }},
    };
    for (const auto& x : runs) {
        const transformer m = model_by_name(x.model);
        const cluster c = preset(x.cluster, x.nodes);
        plan p;
        x.edit(p);
        const step_breakdown r = predict_step(m, c, p);
        const json j = io::to_json(r);
        INFO(x.model << " " << j.dump());
        const step_breakdown back = io::from_json<step_breakdown>(j, "step");
        require_same_breakdown(r, back);
        CHECK(io::to_json(back).dump() == j.dump());

        const json pj = io::plan_to_json(p, m);
        const plan q = io::from_json<plan>(pj, "plan");
        CHECK(plan_key(q) == plan_key(p));
        CHECK(q.expert_tp() == p.expert_tp());
        CHECK(q.global_batch == p.global_batch);
        CHECK(q.seq == p.seq);
        CHECK(q.precision == p.precision);
        CHECK(q.stack == p.stack);
        CHECK(q.gradient_bytes == p.gradient_bytes);
        CHECK(q.bucket.value() == p.bucket.value());
        CHECK(q.bucket_per_dp.value() == p.bucket_per_dp.value());
        CHECK(q.overlap.dp == p.overlap.dp);
        CHECK(q.overlap.zero == p.overlap.zero);
        CHECK(q.attention == p.attention);
        CHECK(q.reduce_every_micro_batch == p.reduce_every_micro_batch);
        CHECK(q.capacity_factor == p.capacity_factor);
        CHECK(q.pad_to_capacity == p.pad_to_capacity);
        CHECK(q.first_stage_layers == p.first_stage_layers);
        CHECK(q.last_stage_layers == p.last_stage_layers);
        CHECK(q.fuses_gradient_accumulation() == p.fuses_gradient_accumulation());
        CHECK(io::plan_to_json(q, m).dump() == pj.dump());
        // the same plan predicts the same step
        CHECK(predict_step(m, c, q).step.value() == r.step.value());
    }
}

TEST_CASE("result JSON: a plan search reads back to the same document, and shards read back merge into the whole") {
    const transformer m = model_by_name("llama2-7b");
    const cluster c = preset("dgx-a100", 2);
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    search_request r = small_request();
    search_result whole = search_plans(m, c, acc, r);
    REQUIRE(!whole.top.empty());
    REQUIRE(!whole.pareto.empty());

    search_report rep;
    rep.model = std::string(m.name);
    rep.cluster = std::string(c.name);
    rep.accelerator = std::string(c.node.accelerator);
    rep.nodes = c.nodes;
    rep.gpus = 16;
    rep.request = r;
    rep.request.scale_up_domain = c.domain_gpus();
    rep.request.base.compute_efficiency = 0.375;
    rep.result = whole;
    const json j = io::to_json(rep);
    const search_report back = io::from_json<search_report>(j, "search.json");
    CHECK(io::to_json(back).dump() == j.dump());
    CHECK(back.request.base.compute_efficiency == 0.375);
    // the space's flags that documents of older versions lack read back as those versions searched:
    // zero-bubble schedules and pipeline-split layouts tried, block recompute and CPU offloading not
    {
        search_report flags = rep;
        flags.request.try_zero_bubble = false;
        flags.request.try_pipeline_split = false;
        flags.request.try_block_recompute = true;
        flags.request.try_cpu_offloading = true;
        json older = io::to_json(flags);
        const search_report same = io::from_json<search_report>(older, "search.json");
        CHECK_FALSE(same.request.try_zero_bubble);
        CHECK_FALSE(same.request.try_pipeline_split);
        CHECK(same.request.try_block_recompute);
        CHECK(same.request.try_cpu_offloading);
        for (const char* key : {"zero_bubble", "pipeline_split", "block_recompute", "cpu_offloading"}) older["space"].erase(key);
        const search_report old = io::from_json<search_report>(older, "search.json");
        CHECK(old.request.try_zero_bubble);
        CHECK(old.request.try_pipeline_split);
        CHECK_FALSE(old.request.try_block_recompute);
        CHECK_FALSE(old.request.try_cpu_offloading);
    }
    REQUIRE(back.result.top.size() == whole.top.size());
    for (std::size_t i = 0; i < whole.top.size(); ++i) {
        CHECK(plan_key(back.result.top[i].p) == plan_key(whole.top[i].p));
        CHECK(back.result.top[i].r.step.value() == whole.top[i].r.step.value());
        CHECK(back.result.top[i].r.memory.total().value() == whole.top[i].r.memory.total().value());
    }
    // search_result alone, and one planned entry
    CHECK(io::to_json(io::from_json<search_result>(io::to_json(whole), "r")).dump() == io::to_json(whole).dump());
    CHECK(io::to_json(io::from_json<planned>(io::to_json(whole.top[0]), "p")).dump() == io::to_json(whole.top[0]).dump());

    // three shards, each through JSON text, merged: the unsharded ranking, front and counts
    std::vector<search_result> parts;
    for (int s = 0; s < 3; ++s) {
        search_request q = r;
        q.shard = s;
        q.shards = 3;
        const search_result part = search_plans(m, c, acc, q);
        parts.push_back(io::search_result_from_json(json::parse(io::to_json(part).dump(2)), "shard"));
    }
    search_result merged = merge_results(parts, r.top_k);
    merged.search_s = whole.search_s = 0;
    CHECK(merged.candidates == whole.candidates);
    CHECK(io::to_json(merged).dump() == io::to_json(whole).dump());

    // the same through whole `plan --json` documents (merge_search_reports, what plan-merge runs):
    // shard order does not matter; a missing, repeated or foreign shard is named
    std::vector<json> docs;
    std::vector<std::string> paths;
    for (int s : {2, 0, 1}) {
        search_report part = rep;
        part.request.shard = s;
        part.request.shards = 3;
        part.result = parts[static_cast<std::size_t>(s)];
        docs.push_back(json::parse(io::to_json(part).dump()));
        paths.push_back("shard-" + std::to_string(s) + ".json");
    }
    const search_report all = io::merge_search_reports(docs, paths);
    CHECK(all.merged_shards == 3);
    CHECK(all.request.shards == 1);
    search_result again = all.result;
    again.search_s = 0;
    CHECK(io::to_json(again).dump() == io::to_json(whole).dump());
    CHECK_THROWS_WITH(io::merge_search_reports({docs[0], docs[1]}, {paths[0], paths[1]}),
                      Catch::Contains("plan-merge") && Catch::Contains("missing 1/3"));
    CHECK_THROWS_WITH(io::merge_search_reports({docs[0], docs[0], docs[1]}, {paths[0], "again.json", paths[1]}),
                      Catch::Contains("again.json.shard") && Catch::Contains("each shard once"));
    json foreign = docs[1];
    foreign["seq"] = 4096;
    CHECK_THROWS_WITH(io::merge_search_reports({docs[0], foreign, docs[2]}, paths),
                      Catch::Contains("shard-0.json.seq") && Catch::Contains("shards of one search"));
}

TEST_CASE("result JSON: searched plans with block recompute and CPU offloading read back with them") {
    // Llama 3 70B in FP8 on 64 GB200: the search keeps plans offloading activations and plans
    // recomputing a block of layers (search/planner.hpp); both read back to the same plan key
    const transformer m = model_by_name("llama3-70b");
    const cluster c = preset("gb200-nvl72", 16);
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    search_request r;
    r.global_batch = 256;
    r.seq = 8192;
    r.top_k = 400;
    r.base.precision = dtype::fp8;
    const search_result res = search_plans(m, c, acc, r);
    bool offload = false, block = false;
    for (const auto& x : res.top) {
        offload = offload || x.p.cpu_offloading_num_layers > 0;
        block = block || x.p.full_recompute_method == recompute_method::block;
        const json j = io::to_json(x);
        CHECK(j.contains("cpu_offloading_num_layers") == (x.p.cpu_offloading_num_layers > 0));
        CHECK(j.contains("recompute_num_layers") == (x.p.recompute_num_layers > 0));
        const planned back = io::from_json<planned>(json::parse(j.dump()), "p");
        CHECK(plan_key(back.p) == plan_key(x.p));
        CHECK(io::to_json(back).dump() == j.dump());
    }
    CHECK(offload);
    CHECK(block);
}

// ---------------------------------------------------------------- hostile inputs

TEST_CASE("result JSON: hostile collective results name the field") {
    const json good = io::to_json(predict_collective(preset("dgx-a100", 2), placement{16, 8, 1}, collective_op::all_reduce, bytes(gibi)));
    auto read = [](const json& j) { (void)io::collective_result_from_json(j, "c"); };
    auto edited = [&](const std::function<void(json&)>& edit) {
        json j = good;
        edit(j);
        return j;
    };
    require_field(read, edited([](json& j) { j.erase("time_us"); }), "c.time_us");
    require_field(read, edited([](json& j) { j["ranks"] = "sixteen"; }), "c.ranks");
    require_field(read, edited([](json& j) { j["ranks"] = 2.5; }), "c.ranks");
    require_field(read, edited([](json& j) { j["latency_us"] = -1; }), "c.latency_us");
    require_field(read, edited([](json& j) { j["busbw_GBps"] = "nan"; }), "c.busbw_GBps");
    require_field(read, edited([](json& j) { j["bytes"] = -8; }), "c.bytes");
    require_field(read, edited([](json& j) { j["op"] = "allreduce"; }), "c.op");
    require_field(read, edited([](json& j) { j["algorithm"] = "rings"; }), "c.algorithm");
    require_field(read, edited([](json& j) { j["bottleneck"] = "the network"; }), "c.bottleneck");
    require_field(read, edited([](json& j) { j["bottleneck"] = "inter-node NIC x shared by 1 GPUs"; }), "c.bottleneck");
    // the structure and its words must agree; each of its keys is checked
    require_field(read, edited([](json& j) { j["limiting"] = {{"kind", "none"}, {"link", nullptr}, {"sharing", 1}}; }), "c.bottleneck");
    require_field(read, edited([](json& j) { j["limiting"]["kind"] = "latency"; }), "c.limiting.link");
    require_field(read, edited([](json& j) { j["limiting"]["kind"] = "network"; }), "c.limiting.kind");
    require_field(read, edited([](json& j) { j["limiting"]["sharing"] = 0; }), "c.limiting.sharing");
    require_field(read, edited([](json& j) { j["limiting"]["link"] = 7; }), "c.limiting.link");
    require_field(read, edited([](json& j) { j["limiting"]["extra"] = 7; }), "c.limiting.extra");
    require_field(read, edited([](json& j) { j.erase("limiting"); }), "c.limiting");
    require_field(read, edited([](json& j) { j["time_s"] = 1; }), "c.time_s");
    require_field(read, json::array(), "c");
    CHECK_THAT(error_of([&] { read(edited([](json& j) { j["op"] = "allreduce"; })); }).what(),
               Catch::Matchers::Contains("all_reduce"));
}

TEST_CASE("result JSON: hostile step breakdowns and plans name the field") {
    const transformer m = model_by_name("llama2-7b");
    plan p;
    p.tp = 8, p.global_batch = 8;
    const json good = io::to_json(predict_step(m, preset("dgx-a100", 1), p));
    auto read = [](const json& j) { (void)io::step_breakdown_from_json(j, "b"); };
    auto edited = [&](const std::function<void(json&)>& edit) {
        json j = good;
        edit(j);
        return j;
    };
    require_field(read, edited([](json& j) { j.erase("compute_s"); }), "b.compute_s");
    require_field(read, edited([](json& j) { j["compute_s"] = -0.5; }), "b.compute_s");
    require_field(read, edited([](json& j) { j["compute_s"] = "nan"; }), "b.compute_s");
    require_field(read, edited([](json& j) { j["compute_s"] = 1e300; }), "b.compute_s");
    require_field(read, edited([](json& j) { j["fits_in_memory"] = 3; }), "b.fits_in_memory");
    require_field(read, edited([](json& j) { j["bottleneck_detail"] = "network"; }), "b.bottleneck_detail");
    require_field(read, edited([](json& j) { j["bottleneck"] = "bubble"; }), "b.bottleneck");
    require_field(read, edited([](json& j) { j["memory_breakdown_GiB"]["weights"] = "1GiB"; }), "b.memory_breakdown_GiB.weights");
    require_field(read, edited([](json& j) { j["memory_breakdown_GiB"]["kv"] = 1; }), "b.memory_breakdown_GiB.kv");
    require_field(read, edited([](json& j) { j["memory_per_gpu_GiB"] = 1.0; }), "b.memory_per_gpu_GiB");
    require_field(read, edited([](json& j) { j["layer_s"] = 0.1; }), "b.layer_s");
    require_field(read, edited([](json& j) { j.erase("required_inter_node_Gbps"); }), "b.required_inter_node_Gbps");
    require_field(read, edited([](json& j) { j["micro_batches"] = -1; }), "b.micro_batches");
    require_field(read, edited([](json& j) { j["compute_ss"] = 1; }), "b.compute_ss");
    // null for an unbounded rate is accepted and reads as infinite
    CHECK(std::isinf(io::step_breakdown_from_json(edited([](json& j) { j["required_inter_node_Gbps"] = nullptr; }))
                         .required_inter_node.value()));

    const json plan_good = io::plan_to_json(p, m);
    auto read_plan = [](const json& j) { (void)io::plan_from_json(j, "plan"); };
    auto plan_edited = [&](const std::function<void(json&)>& edit) {
        json j = plan_good;
        edit(j);
        return j;
    };
    require_field(read_plan, plan_edited([](json& j) { j.erase("tp"); }), "plan.tp");
    require_field(read_plan, plan_edited([](json& j) { j["tp"] = 0; }), "plan.tp");
    require_field(read_plan, plan_edited([](json& j) { j["zero"] = 4; }), "plan.zero");
    require_field(read_plan, plan_edited([](json& j) { j["schedule"] = "1F1B"; }), "plan.schedule");
    require_field(read_plan, plan_edited([](json& j) { j["recompute"] = "some"; }), "plan.recompute");
    require_field(read_plan, plan_edited([](json& j) { j["dtype"] = "bf17"; }), "plan.dtype");
    require_field(read_plan, plan_edited([](json& j) { j["framework"] = "megatron"; }), "plan.framework");
    require_field(read_plan, plan_edited([](json& j) { j["attention"] = "fast"; }), "plan.attention");
    require_field(read_plan, plan_edited([](json& j) { j["gradient_bytes"] = 3; }), "plan.gradient_bytes");
    require_field(read_plan, plan_edited([](json& j) { j["expert_load"] = "nan"; }), "plan.expert_load");
    require_field(read_plan, plan_edited([](json& j) { j["bucket_bytes"] = -1; }), "plan.bucket_bytes");
    require_field(read_plan, plan_edited([](json& j) { j["overlap"]["dp"] = "yes"; }), "plan.overlap.dp");
    require_field(read_plan, plan_edited([](json& j) { j["stage_layers"] = json::array({16, 16}); }), "plan.stage_layers");
    require_field(read_plan, plan_edited([](json& j) { j["stage_layers"] = json::array({-1}); }), "plan.stage_layers[0]");
    require_field(read_plan, plan_edited([](json& j) { j["virtual_stages"] = 2; }), "plan.virtual_stages");
    require_field(read_plan, plan_edited([](json& j) { j["sepp"] = 2; }), "plan.sepp");
}

TEST_CASE("result JSON: hostile plan searches name the field") {
    const transformer m = model_by_name("llama2-7b");
    const cluster c = preset("dgx-a100", 2);
    search_report rep;
    rep.model = "llama2-7b", rep.cluster = "dgx-a100", rep.accelerator = std::string(c.node.accelerator);
    rep.nodes = 2, rep.gpus = 16;
    rep.request = small_request();
    rep.request.scale_up_domain = 8;
    rep.result = search_plans(m, c, accelerator_by_name(c.node.accelerator), rep.request);
    REQUIRE(!rep.result.top.empty());
    const json good = io::to_json(rep);
    auto read = [](const json& j) { (void)io::search_report_from_json(j, "f.json"); };
    auto edited = [&](const std::function<void(json&)>& edit) {
        json j = good;
        edit(j);
        return j;
    };
    REQUIRE_NOTHROW(read(good));
    require_field(read, edited([](json& j) { j.erase("model"); }), "f.json.model");
    require_field(read, edited([](json& j) { j["model"] = 7; }), "f.json.model");
    require_field(read, edited([](json& j) { j["nodes"] = 0; }), "f.json.nodes");
    require_field(read, edited([](json& j) { j["gpus"] = 12; j["nodes"] = 8; }), "f.json.gpus");
    require_field(read, edited([](json& j) { j["top"] = "ten"; }), "f.json.top");
    require_field(read, edited([](json& j) { j["search_s"] = -1; }), "f.json.search_s");
    require_field(read, edited([](json& j) { j["evaluated"] = "nan"; }), "f.json.evaluated");
    require_field(read, edited([](json& j) { j["shard"] = "7/3"; }), "f.json.shard");
    require_field(read, edited([](json& j) { j["space"]["efficiency"] = "realistic-ish"; }), "f.json.space.efficiency");
    require_field(read, edited([](json& j) { j["space"]["dtype"] = "fp9"; }), "f.json.space.dtype");
    require_field(read, edited([](json& j) { j["space"]["efficency"] = "ideal"; }), "f.json.space.efficency");
    require_field(read, edited([](json& j) { j["space"]["block_recompute"] = "yes"; }), "f.json.space.block_recompute");
    require_field(read, edited([](json& j) { j["plans"] = json::object(); }), "f.json.plans");
    require_field(read, edited([](json& j) { j["plans"][0] = 1; }), "f.json.plans[0]");
    require_field(read, edited([](json& j) { j["plans"][0]["tp"] = 3; }), "f.json.plans[0].tp");
    require_field(read, edited([](json& j) { j["plans"][0]["step_s"] = 1e300; }), "f.json.plans[0].step_s");
    require_field(read, edited([](json& j) { j["plans"][0]["step_s"] = 0.5; }), "f.json.plans[0].step_s");  // not the breakdown's
    require_field(read, edited([](json& j) { j["plans"][0]["mfu"] = "nan"; }), "f.json.plans[0].mfu");
    require_field(read, edited([](json& j) { j["plans"][0]["schedule"] = "zb"; }), "f.json.plans[0].schedule");
    require_field(read, edited([](json& j) { j["plans"][0].erase("breakdown"); }), "f.json.plans[0].breakdown");
    require_field(read, edited([](json& j) { j["pareto"][0]["breakdown"]["compute_s"] = -1; }),
                  "f.json.pareto[0].breakdown.compute_s");
    require_field(read, edited([](json& j) { j["sepp"] = 2; }), "f.json.sepp");
    CHECK_THAT(error_of([&] { read(edited([](json& j) { j["sepp"] = 2; })); }).what(), Catch::Matchers::Contains("did you mean"));
}
