// The MoE token dispatcher (plan::dispatcher; Megatron-Core --moe-token-dispatcher-type alltoall,
// or flex with --moe-flex-dispatcher-backend deepep / hybridep): the bytes each one sends, the
// permutations each one runs, no dispatch without expert parallelism, the stacks' defaults, and the
// difference between the all-to-all dispatcher and HybridEP against Megatron-LM's single-MoE-layer
// benchmark.
#include "catch_shim.hpp"
#include "runs_csv_fixtures.hpp"

#include <string>
#include <utility>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/io/training_runs.hpp>
#include <commscale/parallel/traffic.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/search/planner.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {
using runs_test::runs_csv_error;
// C(n, k) as a double, by the multiplicative formula
double choose(int n, int k) {
    double r = 1.0;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
}
// a DeepSeek-like MoE layer as Megatron-LM's moe_perf benchmark builds it
// (tests/functional_tests/test_cases/common/moe_perf: hidden 7168, expert FFN 2048, 32 experts,
// top-8, no shared expert), one layer
transformer deepseek_like_layer() {
    transformer m = models::mixtral_8x7b;
    m.name = "deepseek-like-moe-layer";
    m.layers = 1;
    m.hidden = 7168;
    m.heads = 56;
    m.kv_heads = 56;
    m.ffn = 2048;
    m.experts = 32;
    m.experts_per_token = 8;
    return m;
}
}  // namespace

TEST_CASE("expected destination ranks: ep (1 - C(E - E/ep, k) / C(E, k)), worked by hand") {
    // 32 experts over 8 ranks, top-8 (the moe_perf DeepSeek-like layer): 8 (1 - C(28,8)/C(32,8))
    // = 8 (1 - 3108105/10518300) = 5.636
    CHECK_THAT(expected_destination_ranks(32, 8, 8), WithinRel(8.0 * (1.0 - 3108105.0 / 10518300.0), 1e-12));
    CHECK_THAT(expected_destination_ranks(32, 8, 8), WithinRel(5.63603, 1e-5));
    // DeepSeek-V3: 256 experts over 8 ranks, top-8
    CHECK_THAT(expected_destination_ranks(256, 8, 8), WithinRel(8.0 * (1.0 - choose(224, 8) / choose(256, 8)), 1e-12));
    // one expert per rank, top-2: always two ranks; one rank: one
    CHECK_THAT(expected_destination_ranks(8, 2, 8), WithinRel(2.0, 1e-12));
    CHECK(expected_destination_ranks(64, 6, 1) == 1.0);
    // more ranks than the top-k can reach: at most k
    CHECK(expected_destination_ranks(256, 8, 256) <= 8.0);
    CHECK_THAT(expected_destination_ranks(256, 8, 256), WithinRel(8.0, 1e-12));
}

TEST_CASE("the flex dispatchers send a token once per destination rank, the all-to-all one once per expert") {
    const transformer& m = models::deepseek_v3;
    plan p{.tp = 1, .pp = 1, .dp = 8, .ep = 8, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    p.dispatcher = moe_token_dispatcher::alltoall;
    const step_traffic a2a = plan_traffic(m, p, 8);
    p.dispatcher = moe_token_dispatcher::hybridep;
    const step_traffic hybrid = plan_traffic(m, p, 8);
    p.dispatcher = moe_token_dispatcher::deepep;
    const step_traffic deep = plan_traffic(m, p, 8);
    // all-to-all: T k h bf16 bytes per call (4096 x 8 x 7168 x 2)
    CHECK_THAT(in_bytes(a2a.ep.bytes), WithinRel(4096.0 * 8 * 7168 * 2, 1e-12));
    const double ranks = 8.0 * (1.0 - choose(224, 8) / choose(256, 8));
    CHECK_THAT(in_bytes(hybrid.ep.bytes), WithinRel(4096.0 * ranks * 7168 * 2, 1e-12));
    CHECK(in_bytes(deep.ep.bytes) == in_bytes(hybrid.ep.bytes));
    CHECK(hybrid.ep.count == a2a.ep.count);
}

TEST_CASE("the dispatcher's permutations: two passes for all-to-all (with the sort), one for DeepEP, none for HybridEP") {
    const transformer m = deepseek_like_layer();
    const accelerator acc = *find_accelerator("h100-sxm");
    const compute_params c = compute_params_for(acc, dtype::bf16);
    plan p{.tp = 1, .pp = 1, .dp = 8, .ep = 8, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    p.dispatcher = moe_token_dispatcher::alltoall;
    const layer_time a2a = layer_compute_time(m, p, c);
    p.dispatcher = moe_token_dispatcher::deepep;
    const layer_time deep = layer_compute_time(m, p, c);
    p.dispatcher = moe_token_dispatcher::hybridep;
    const layer_time hybrid = layer_compute_time(m, p, c);
    // routed copies T k = 32768 of h = 7168 bf16 values: the permutation and unpermutation read and
    // write 2 x copies x h (1 + 1/k) x 2 bytes, the sort and its inverse 2 x 2 x copies x h x 2 bytes
    const double row = 4096.0 * 8 * 7168 * 2;
    const double permute = 2.0 * row * (1.0 + 1.0 / 8.0), sort = 4.0 * row;
    const double per_byte = c.inv_memory_rate;
    CHECK_THAT(in_seconds(deep.elementwise_fwd - hybrid.elementwise_fwd), WithinRel(permute * per_byte, 1e-9));
    CHECK_THAT(in_seconds(a2a.elementwise_fwd - deep.elementwise_fwd), WithinRel(sort * per_byte, 1e-9));
    // the backward runs each permutation once in reverse, over the same bytes
    CHECK_THAT(in_seconds(a2a.elementwise_bwd - hybrid.elementwise_bwd), WithinRel((permute + sort) * per_byte, 1e-9));
    // and launches them: two sort kernels more for all-to-all, two permutation kernels fewer for
    // HybridEP, twice as many in the backward, ordinary launches there (kernel_overhead_s apiece:
    // only the experts' GEMMs pay moe_launch_overhead_s); the forward's four local experts of 8,192
    // tokens keep the GPU busier than the launches, which then cost kernel_overhead_s apiece too
    CHECK_THAT(in_seconds(a2a.overhead_bwd - deep.overhead_bwd), WithinRel(4.0 * c.kernel_overhead_s, 1e-9));
    CHECK(in_seconds(deep.overhead_bwd) > in_seconds(hybrid.overhead_bwd));
    CHECK_THAT(in_seconds(a2a.overhead_fwd - deep.overhead_fwd), WithinRel(2.0 * c.kernel_overhead_s, 1e-9));
    // one local expert per rank (32 experts on EP 32): no sort
    p.ep = 32;
    p.dp = 32;
    p.dispatcher = moe_token_dispatcher::alltoall;
    const layer_time a2a_one = layer_compute_time(m, p, c);
    p.dispatcher = moe_token_dispatcher::deepep;
    const layer_time deep_one = layer_compute_time(m, p, c);
    CHECK(in_seconds(a2a_one.elementwise_fwd) == in_seconds(deep_one.elementwise_fwd));
}

TEST_CASE("dropless routing: the forward's expert kernels wait for their launches after the host synchronization, "
          "drop and pad does not synchronize") {
    // Qwen3-30B-A3B on 8 B200 in MXFP8, EP 8, one sequence of 4,096: 16 local experts of 256 tokens
    // each, GEMMs of a few microseconds against 69 kernels launched one by one
    const transformer& m = models::qwen3_30b_a3b;
    const compute_params c = compute_params_for(*find_accelerator("b200"), dtype::mxfp8);
    plan p{.tp = 1, .pp = 1, .dp = 8, .ep = 8, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    p.dispatcher = moe_token_dispatcher::alltoall;
    const layer_time dropless = layer_compute_time(m, p, c);
    const double permutations = detail::permutation_kernels(m, p);
    // forward: 16 experts x (FC1 + FC2) x (GEMM + its input's quantization) + activation + 4 permutations
    CHECK(permutations == 4.0);
    const double experts_fwd = 16.0 * 2.0 * 2.0 + 1.0 + permutations;
    const auto routed = detail::routed_expert_gemms(m, p, c);
    const double work = routed.up.fwd + routed.down.fwd;
    CHECK(work < experts_fwd * c.moe_launch_overhead_s);  // launch-bound
    // the rest of the layer's kernels at kernel_overhead_s: the difference to drop-and-pad is the
    // launches less the GEMM work they overlap, forward only
    p.capacity_factor = 1.0;
    p.pad_to_capacity = true;
    const layer_time padded = layer_compute_time(m, p, c);
    CHECK_THAT(in_seconds(dropless.overhead_fwd - padded.overhead_fwd),
               WithinRel(experts_fwd * (c.moe_launch_overhead_s - c.kernel_overhead_s) - work, 1e-9));
    CHECK(in_seconds(dropless.overhead_bwd) == in_seconds(padded.overhead_bwd));
    CHECK(in_seconds(dropless.gemm_fwd) == in_seconds(padded.gemm_fwd));
    // with 64 sequences per micro-batch the experts' GEMMs outlast their launches: the forward's
    // expert kernels cost kernel_overhead_s apiece, synchronized or not
    plan big = p;
    big.capacity_factor = 0.0;
    big.pad_to_capacity = false;
    big.micro_batch = 64;
    big.global_batch = 512;
    const auto routed_big = detail::routed_expert_gemms(m, big, c);
    CHECK(routed_big.up.fwd + routed_big.down.fwd > experts_fwd * c.moe_launch_overhead_s);
    plan big_padded = big;
    big_padded.capacity_factor = 1.0;
    big_padded.pad_to_capacity = true;
    CHECK_THAT(in_seconds(layer_compute_time(m, big, c).overhead_fwd),
               WithinRel(in_seconds(layer_compute_time(m, big_padded, c).overhead_fwd), 1e-12));
}

TEST_CASE("all-to-all against HybridEP on 8 H100: Megatron-LM's single-MoE-layer benchmark") {
    // Megatron-LM tests/functional_tests/test_cases/common/moe_perf/baseline.json (8 H100, EP 8,
    // sequence 4096, forced balance, BF16): the DeepSeek-like layer takes 6.94 ms forward and
    // 10.45 ms backward with the all-to-all dispatcher, 5.25 and 8.85 with HybridEP: 3.31 ms more
    // per layer and micro-batch. The library prices the difference as the permutations and sort
    // it runs (HBM bytes and launches) and the duplicated copies it sends (the EP all-to-alls).
    const transformer m = deepseek_like_layer();
    cluster c = cluster_by_name("dgx-h100");
    plan p{.tp = 1, .pp = 1, .dp = 8, .ep = 8, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    p.dispatcher = moe_token_dispatcher::alltoall;
    const step_breakdown a2a = predict_step(m, c, p);
    p.dispatcher = moe_token_dispatcher::hybridep;
    const step_breakdown hybrid = predict_step(m, c, p);
    const double excess = in_seconds(a2a.step - hybrid.step);  // one layer, one micro-batch
    INFO("all-to-all over HybridEP: " << excess * 1e3 << " ms (benchmark 3.31 ms)");
    CHECK_THAT(excess, WithinRel(3.31e-3, 0.35));
    // the Mixtral-like layer (hidden 4096, FFN 14336, 8 experts, top-2: one expert per rank, no
    // sort, two ranks per token either way): 4.26 + 7.83 ms against HybridEP's 4.41 + 7.84, the
    // dispatchers within 0.15 ms of each other; the library's difference is the permutations alone
    transformer mix = models::mixtral_8x7b;
    mix.layers = 1;
    plan q{.tp = 1, .pp = 1, .dp = 8, .ep = 8, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    q.dispatcher = moe_token_dispatcher::alltoall;
    const step_breakdown mix_a2a = predict_step(mix, c, q);
    q.dispatcher = moe_token_dispatcher::hybridep;
    const step_breakdown mix_hybrid = predict_step(mix, c, q);
    const double mix_excess = in_seconds(mix_a2a.step - mix_hybrid.step);
    INFO("Mixtral-like: " << mix_excess * 1e3 << " ms (benchmark -0.15 ms of 12.1 ms)");
    CHECK(mix_excess >= 0.0);
    CHECK(mix_excess < 0.5e-3);
}

TEST_CASE("without expert parallelism there is no dispatch: the local permutations whatever the dispatcher") {
    const transformer m = deepseek_like_layer();
    const accelerator acc = *find_accelerator("h100-sxm");
    const compute_params c = compute_params_for(acc, dtype::bf16);
    plan p{.tp = 1, .pp = 1, .dp = 8, .ep = 1, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    p.dispatcher = moe_token_dispatcher::hybridep;
    const layer_time hybrid = layer_compute_time(m, p, c);
    p.dispatcher = moe_token_dispatcher::alltoall;
    const layer_time a2a = layer_compute_time(m, p, c);
    CHECK(in_seconds(hybrid.elementwise_fwd) == in_seconds(a2a.elementwise_fwd));
    CHECK(in_seconds(hybrid.overhead_fwd) == in_seconds(a2a.overhead_fwd));
    cluster cl = cluster_by_name("dgx-h100");
    p.dispatcher = moe_token_dispatcher::hybridep;
    CHECK_NOTHROW(validate(p, m, cl));
}

TEST_CASE("the stacks' dispatchers: HybridEP for megatron-core (the performance recipes), all-to-all elsewhere") {
    plan p;
    CHECK(p.dispatcher == moe_token_dispatcher::hybridep);  // the default plan is the megatron-core profile
    for (const framework f : {framework::megatron_lm, framework::megatron_deepspeed, framework::deepspeed, framework::fsdp}) {
        apply_framework(p, f);
        CHECK(p.dispatcher == moe_token_dispatcher::alltoall);
    }
    apply_framework(p, framework::megatron_core);
    CHECK(p.dispatcher == moe_token_dispatcher::hybridep);
}

TEST_CASE("moe_token_dispatcher in the runs CSV and the plan JSON, unknown names listed") {
    const std::string csv =
        "model,gpus,tp,pp,ep,etp,micro_batch,global_batch,seq,dtype,moe_token_dispatcher,tokens_per_s_per_gpu\n"
        "deepseek-v3,256,1,8,32,1,1,4096,4096,bf16,hybridep,3000\n"
        "deepseek-v3,256,1,8,32,1,1,4096,4096,bf16,,3000\n";
    const auto runs = io::parse_training_runs(csv, "runs.csv");
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].p.dispatcher == moe_token_dispatcher::hybridep);
    CHECK(runs[1].p.dispatcher == moe_token_dispatcher::hybridep);  // empty: the framework's
    const auto fsdp = io::parse_training_runs("model,gpus,tp,pp,ep,etp,micro_batch,global_batch,seq,framework,step_s\n"
                                              "deepseek-v3,256,1,8,32,1,1,4096,4096,fsdp,1\n",
                                              "runs.csv");
    CHECK(fsdp[0].p.dispatcher == moe_token_dispatcher::alltoall);
    try {
        (void)io::parse_training_runs("model,gpus,tp,pp,micro_batch,global_batch,moe_token_dispatcher,step_s\n"
                                  "deepseek-v3,8,1,1,1,8,flex,1\n",
                                  "runs.csv");
        FAIL("expected an input_error");
    } catch (const input_error& e) {
        CHECK(e.field() == "runs.csv:2: column moe_token_dispatcher");
        CHECK_THAT(std::string(e.what()), Contains("alltoall"));
        CHECK_THAT(std::string(e.what()), Contains("hybridep"));
    }
    // the plan JSON carries it and reads it back; a file without it reads the framework's
    plan p{.tp = 1, .pp = 1, .dp = 8, .ep = 8, .etp = 1, .micro_batch = 1, .global_batch = 8, .seq = 4096};
    p.dispatcher = moe_token_dispatcher::deepep;
    nlohmann::json j = io::plan_to_json(p, 61);
    CHECK(j.at("moe_token_dispatcher") == "deepep");
    CHECK(io::plan_from_json(j).dispatcher == moe_token_dispatcher::deepep);
    j.erase("moe_token_dispatcher");
    CHECK(io::plan_from_json(j).dispatcher == moe_token_dispatcher::hybridep);
    j["framework"] = "deepspeed";
    CHECK(io::plan_from_json(j).dispatcher == moe_token_dispatcher::alltoall);
}

TEST_CASE("runs CSV: Megatron's token-dropping and gradient-overlap flags") {
    // Megatron-Bridge's apply_moe_token_drop: --moe-expert-capacity-factor 1.0 with
    // --moe-pad-expert-input-to-capacity; an empty factor or 0 is dropless, Megatron-Core's default
    const std::string head =
        "model,gpus,tp,pp,ep,etp,micro_batch,global_batch,seq,moe_token_dispatcher,moe_expert_capacity_factor,"
        "moe_pad_expert_input_to_capacity,overlap_grad_reduce,tokens_per_s_per_gpu\n";
    const auto runs = io::parse_training_runs(head + "qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,1.0,true,false,9000\n"
                                                     "qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,1.25,,,9000\n"
                                                     "qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,0,false,true,9000\n"
                                                     "qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,,,,9000\n",
                                              "runs.csv");
    REQUIRE(runs.size() == 4);
    CHECK(runs[0].p.capacity_factor == 1.0);
    CHECK(runs[0].p.pad_to_capacity);
    CHECK_FALSE(runs[0].p.overlap.dp);
    CHECK(runs[1].p.capacity_factor == 1.25);
    CHECK_FALSE(runs[1].p.pad_to_capacity);
    CHECK(runs[1].p.overlap.dp);  // empty: the framework's (megatron-core overlaps the reduction)
    CHECK(runs[2].p.capacity_factor == 0.0);
    CHECK(runs[3].p.capacity_factor == 0.0);
    CHECK_FALSE(runs[3].p.pad_to_capacity);
    // padded to capacity, the dispatcher does not synchronize with the host: the experts' forward
    // kernels run ahead of the GPU instead of at moe_launch_overhead_s apiece, so the padded run is
    // faster than the dropless one at a balanced load (the same work: capacity 1 x balanced)
    const cluster& c = presets::dgx_b200;
    const accelerator acc = *find_accelerator("b200");
    const auto padded = predict_step(runs[0].model, c, acc, runs[0].p);
    const auto dropless = predict_step(runs[3].model, c, acc, runs[3].p);
    CHECK(padded.compute < dropless.compute);
    auto error_of = [&](const std::string& row) { return runs_csv_error(head + row); };
    const auto negative = error_of("qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,-1,false,true,9000\n");
    CHECK(negative.first == "runs.csv:2: column moe_expert_capacity_factor");
    CHECK_THAT(negative.second, Contains("0 (dropless)"));
    CHECK(error_of("qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,nan,false,true,9000\n").first ==
          "runs.csv:2: column moe_expert_capacity_factor");
    CHECK(error_of("qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,1.0x,false,true,9000\n").first ==
          "runs.csv:2: column moe_expert_capacity_factor");
    const auto unpadded = error_of("qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,,true,true,9000\n");
    CHECK(unpadded.first == "runs.csv:2: column moe_pad_expert_input_to_capacity");
    CHECK_THAT(unpadded.second, Contains("capacity"));
    CHECK(error_of("qwen3-30b-a3b,8,1,1,8,1,1,64,4096,alltoall,1.0,true,maybe,9000\n").first ==
          "runs.csv:2: column overlap_grad_reduce");
}

TEST_CASE("runs CSV: Megatron's overlap_param_gather") {
    // Megatron-Bridge r0.2.0's performance scripts turn --overlap-param-gather off for MXFP8
    // (deepseek_v3_gb200_config and others: "keeping this enabled causes NaN grad norm"): the
    // distributed optimizer's parameter all-gathers then run before the next step's forward instead
    // of under it
    const std::string head = "model,gpus,tp,pp,micro_batch,global_batch,seq,dtype,overlap_param_gather,tokens_per_s_per_gpu\n";
    const auto runs = io::parse_training_runs(head + "llama3-70b,64,4,4,1,128,8192,bf16,false,1500\n"
                                                     "llama3-70b,64,4,4,1,128,8192,bf16,true,1500\n"
                                                     "llama3-70b,64,4,4,1,128,8192,bf16,,1500\n",
                                              "runs.csv");
    REQUIRE(runs.size() == 3);
    CHECK_FALSE(runs[0].p.overlap.zero);
    CHECK(runs[1].p.overlap.zero);
    CHECK(runs[2].p.overlap.zero);  // empty: the framework's (megatron-core overlaps the gathers)
    const cluster c = [] {
        cluster x = cluster_by_name("dgx-h100");
        x.nodes = 8;
        return x;
    }();
    const auto exposed_gather = predict_step(runs[0].model, c, runs[0].p);
    const auto overlapped = predict_step(runs[1].model, c, runs[1].p);
    // the same traffic; without the overlap the gathers' whole time is on the step's critical path
    CHECK(exposed_gather.dp.total.value() == Approx(overlapped.dp.total.value()).epsilon(1e-12));
    CHECK(exposed_gather.dp.exposed > overlapped.dp.exposed);
    CHECK(exposed_gather.dp.exposed <= exposed_gather.dp.total);
    CHECK(exposed_gather.step > overlapped.step);
    // the gathers run beside the forward only when overlapped, which slows it (step.hpp's
    // overlap_slowdown_s): never the other way
    CHECK(overlapped.compute >= exposed_gather.compute);
    CHECK(runs_csv_error(head + "llama3-70b,64,4,4,1,128,8192,bf16,maybe,1500\n").first ==
          "runs.csv:2: column overlap_param_gather");
}

TEST_CASE("runs CSV: Megatron's gradient_accumulation_fusion") {
    // Megatron-Bridge's recipes run Megatron-FSDP with model.gradient_accumulation_fusion = False;
    // a Megatron-LM run keeps its default (on) unless --no-gradient-accumulation-fusion
    const std::string head = "model,gpus,tp,pp,micro_batch,global_batch,seq,dtype,zero,framework,gradient_accumulation_fusion,"
                             "tokens_per_s_per_gpu\n";
    const auto runs = io::parse_training_runs(head + "llama3-8b,8,1,1,1,128,8192,fp8,3,megatron-core,,14000\n"
                                                     "llama3-8b,8,1,1,1,128,8192,fp8,3,megatron-core,true,14000\n"
                                                     "llama3-8b,8,1,1,1,128,8192,fp8,1,megatron-lm,false,14000\n"
                                                     "llama3-8b,8,1,1,1,128,8192,fp8,1,megatron-lm,,14000\n",
                                              "runs.csv");
    REQUIRE(runs.size() == 4);
    CHECK_FALSE(runs[0].p.gradient_accumulation_fusion.has_value());  // empty: the stack's practice
    CHECK_FALSE(runs[0].p.fuses_gradient_accumulation());
    CHECK(runs[1].p.fuses_gradient_accumulation());
    CHECK_FALSE(runs[2].p.fuses_gradient_accumulation());
    CHECK(runs[3].p.fuses_gradient_accumulation());
    const cluster c = cluster_by_name("dgx-h100");
    CHECK(predict_step(runs[0].model, c, runs[0].p).step > predict_step(runs[1].model, c, runs[1].p).step);
    CHECK(predict_step(runs[2].model, c, runs[2].p).step > predict_step(runs[3].model, c, runs[3].p).step);
    // a stack outside Megatron has no such setting; a value that is not a boolean is named
    const auto torch = runs_csv_error(head + "llama3-8b,8,1,1,1,128,8192,bf16,3,fsdp,false,14000\n");
    CHECK(torch.first == "runs.csv:2: column gradient_accumulation_fusion");
    CHECK_THAT(torch.second, Contains("fsdp") && Contains("megatron-core"));
    CHECK(runs_csv_error(head + "llama3-8b,8,1,1,1,128,8192,fp8,3,megatron-core,maybe,14000\n").first ==
          "runs.csv:2: column gradient_accumulation_fusion");
}

TEST_CASE("plan: every plan carries the request's dispatcher") {
    const transformer& m = models::mixtral_8x7b;
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 4;
    const accelerator acc = *find_accelerator("h100-sxm");
    search_request r;
    r.global_batch = 64;
    r.seq = 4096;
    r.top_k = 50;
    r.max_micro_batch = 1;
    r.try_zero_bubble = false;
    r.try_pipeline_split = false;
    r.base.precision = dtype::bf16;
    r.base.dispatcher = moe_token_dispatcher::deepep;
    const search_result res = search_plans(m, c, acc, r);
    REQUIRE_FALSE(res.top.empty());
    for (const auto& x : res.top) CHECK(x.p.dispatcher == moe_token_dispatcher::deepep);
}
