#pragma once
/// @file search/planner.hpp
/// @brief The planner: enumerates every valid parallelization plan of a transformer on a
/// cluster for a global batch (TP x PP x DP x CP x EP x micro-batch x ZeRO stage x recompute x
/// pipeline schedule with virtual stages x sequence parallelism), predicts each with the step
/// predictor (predict/step.hpp), and returns the K fastest plans that fit in memory with full
/// breakdowns and the Pareto front of step time against memory headroom.
///
/// The space (a plan is in it iff `validate(plan, model, cluster)` accepts it and):
/// * TP inside the scale-up domain: tp divides `scale_up_domain` (the cluster's NVLink domain,
///   `cluster::domain_gpus()`: the node's GPUs, or a whole NVL72 rack, unless the request says
///   otherwise): TP's per-layer collectives need the
///   scale-up link (Shoeybi et al. 2019 Sec. 3; Narayanan et al. 2021 Sec. 3.3 "tensor model
///   parallelism ... within a multi-GPU server").
/// * pipeline schedules only with pp >= 2 (one stage is gradient accumulation: 1F1B spelling);
///   interleaved with every V >= 2 such that layers % (pp x V) == 0 (Narayanan et al. 2021
///   Sec. 2.2.2), up to `max_virtual_stages` when that is set. pp need not divide the layers:
///   under megatron-core (the base plan's stack) the gpipe, 1f1b and zb-h1 plans of such a pp
///   give the first and/or last stage's layer count as Megatron-Core's
///   `--decoder-first/last-pipeline-num-layers` take them (parallel/plan.hpp
///   `megatron_uneven_split`) where those reach ceil(layers / pp) layers on the largest stage, so
///   a 126-layer model can use pp 8 (15, 6 x 16, 15). Where they cannot (96 layers on pp 64: 17
///   at each end), and under the other stacks, the stages split as `stage_layers` does without
///   counts (Megatron-Core runs that split with a `--pipeline-model-parallel-layout`).
/// * Megatron-Core's layouts that count the embedding and/or the loss as pipeline layers
///   (`--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`;
///   megatron/core/transformer/transformer_block.py `get_num_layers_to_build`), with 1f1b and
///   interleaved (Megatron-Core's schedules), when `try_pipeline_split` is set: where pp x V does
///   not divide the layers but divides layers + 1 (the loss alone, and the embedding alone) or
///   layers + 2 (both), e.g. Llama 3.1 405B's 126 layers on PP 16 x V 8.
/// * hybrid Mamba-Transformer models: tp and cp that split the Mamba-2 heads and groups as
///   Megatron-Core does (parallel/plan.hpp mamba_tp_ok, mamba_cp_ok).
/// * sequence parallelism only with tp >= 2 (with one TP rank it is the same plan);
///   ZeRO stages 1-3 only with a data-parallel group (dp x cp >= 2; else they equal stage 0).
/// * experts parallel only for MoE models, as Megatron-Core decomposes each stage's tp x cp x dp
///   ranks for the expert layers (parallel_state.py): expert tensor parallelism etp is every
///   divisor of tp that divides the expert width (etp = tp is Megatron's default; etp 1 is what the
///   published Megatron-Bridge MoE recipes run), and ep divides the experts and tp x cp x dp / etp
///   (EP carved out of DP x CP with etp = tp, folded over TP as well with etp < tp);
///   cp divides the sequence, and with cp >= 2 each CP rank holds at least `min_cp_tokens` of it
///   when that is set (the `plan` and `capacity` commands set default_min_cp_tokens).
/// * full recompute by block (Megatron-Core's `--recompute-method block --recompute-num-layers N`,
///   what Megatron-Bridge's recipes set by hand, e.g. Llama 3 8B on H100 with N = 5), when
///   `try_block_recompute` is set: beside each plan with full recompute of every layer that fits,
///   the plan that recomputes only the fewest layers N of each model chunk (1 <= N < layers /
///   (pp x V)) with which it still fits. Memory falls as N grows and the step time rises
///   (full_recompute_share), so that N is the fastest block plan of the shape and micro-batch;
///   the other N are not in the space. The search starts from the N that the two ends interpolate
///   (memory is affine in the recomputed share) and steps to the first that fits; every plan it
///   predicts counts in `evaluated`, the one it keeps in `feasible`.
/// * activation CPU offloading (Megatron-Core's `--cpu-offloading-num-layers N`, what
///   Megatron-Bridge's GB200/GB300 recipes set for Llama 3 70B and 405B), when
///   `try_cpu_offloading` is set and the GPU's host link is NVLink-C2C-class
///   (offload_min_host_bandwidth_GBps): where a plan with pp = 1 and no recomputation does not
///   fit, the same plan offloading the fewest layers N (1 <= N < layers) with which it fits
///   (memory falls by one layer's activations per offloaded layer; the host copies' cost is the
///   predictor's, predict/step.hpp "offload"), searched as block recompute's N; larger
///   micro-batches are tried while some N fits.
/// * memory: the predictor's `fits_in_memory`. Plans that do not fit are evaluated, counted in
///   `evaluated`, never returned.
///
/// Pruning (exact, the ranking equals brute force; tests/unit/search/planner.cpp checks it): for a fixed
/// everything-but-micro-batch, memory per GPU is non-decreasing in the micro-batch b (weights
/// do not depend on b; per-layer activations are linear in b; in-flight micro-batches x b is
/// min(p b, B/dp) for 1F1B, B/dp for GPipe, min((p + (p-1)/V) b, B/dp) interleaved:
/// workload/memory.hpp), so micro-batches are tried in increasing order and the first that does
/// not fit, with no number of offloaded layers that fits, ends that subtree.
///
/// Ranking: a strict total order, so results are deterministic and independent of threads and
/// shards: step time ascending, then (equal times) memory per GPU ascending (of two plans as fast,
/// the one with more headroom: ZeRO 2 before ZeRO 1 where they tie), then the plan key ascending:
/// tp, pp, dp, cp, ep,
/// micro_batch, zero, recompute (none < selective < full; full's method uniform < block, then
/// its N), offloaded layers, schedule (gpipe < 1f1b <
/// interleaved < zb-h1 < zb-v < dualpipe), virtual_stages, sequence_parallel (off < on), then the
/// pipeline-split flags, embedding and loss (off < on), then the expert TP degree in effect.
///
/// Pareto front: the feasible plans no other feasible plan dominates, where b dominates a if
/// b's step time and memory per GPU are both <= a's and one is <. Sorted by the ranking order.
/// With `pareto_max_slowdown` X set, only the front's plans whose step time is at most X times the
/// best plan's are kept (the `plan` command sets default_pareto_max_slowdown).
///
/// Speed: the outer choices (all but the micro-batch) are listed once; threads take them in
/// chunks, each with its own top-K, Pareto front and price cache; the results merge by the total
/// order. Inside a thread no allocation, no strings, no logging: plans are aggregates, the
/// top-K and front are pre-reserved, and collectives are priced through `price_cache`, an exact
/// memo of the collective model (its result depends only on the cluster, the options, the group
/// placement, the operation and the size, all fixed or part of the key).
///
/// Sharding: outer choice number i (in enumeration order) belongs to shard i mod N, so N jobs
/// with `shard = 0..N-1` cover the space exactly once; `merge_results` of their results equals
/// the unsharded search (top-K, front, counts).

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../collective/model.hpp"
#include "../error.hpp"
#include "../hardware/accelerator.hpp"
#include "../hardware/topology.hpp"
#include "../parallel/plan.hpp"
#include "../predict/step.hpp"
#include "../workload/transformer.hpp"

namespace commscale {

/// @brief Largest search settings `validate(search_request)` and the `plan` command accept (the
/// workload's own bounds are plan_limits and cluster_limits). Beyond them a value is a typo: no
/// machine runs more threads in one process, and no search space has more shapes to shard or rank.
struct search_limits {
    /// GPUs to plan for (`plan --gpus`): 2^30, about cluster_limits::nodes x gpus_per_node.
    static constexpr long long gpus = 1LL << 30;
    /// Plans kept (`top_k`), and shards of one search: 2^20.
    static constexpr int top_k = 1 << 20;
    static constexpr int shards = 1 << 20;
    /// Worker threads of one search: 4096, more cores than any one machine has.
    static constexpr int threads = 4096;
    /// GPUs per NVLink domain as a limit on TP (`scale_up_domain`): 2^20, plan_limits::degree.
    static constexpr int scale_up_domain = 1 << 20;
    /// Largest micro-batch tried (`max_micro_batch`, 0 = up to the global batch): 2^30, plan_limits::global_batch.
    static constexpr int max_micro_batch = 1 << 30;
    /// Largest CP degree tried (`max_cp`, 0 = up to the sequence): 2^26, plan_limits::seq.
    static constexpr int max_cp = 1 << 26;
};

/// @brief The `plan` and `capacity` commands' smallest share of the sequence a context-parallel
/// rank holds (seq / cp, with cp >= 2): 4,096 tokens. Every published run with context
/// parallelism in data/calibration/published_runs.csv holds at least that (NVIDIA NeMo's
/// performance benchmarks and Megatron-Bridge's configurations: Llama 3 8B, 70B and 405B at
/// sequence 8,192 with CP 2), and the Llama 3 paper (Dubey et al. 2024, Table 4) uses CP 16 only
/// for its 131,072-token long-context stage (8,192 tokens per rank). Below it the K/V exchange of
/// ring attention outgrows the attention it hides under (a rank's attention work falls as
/// (seq / cp)^2, its K/V bytes only as seq / cp), which is why no recipe goes there. The library's
/// own default (search_request::min_cp_tokens = 0) searches every cp dividing the sequence.
inline constexpr int default_min_cp_tokens = 4096;

/// @brief The slowest GPU-host link (per direction) over which the planner tries activation CPU
/// offloading: 200 GB/s, NVLink-C2C's class (GH200 450, GB200 and GB300 225 GB/s per GPU,
/// hardware/accelerators.hpp). Below it sit the PCIe x16 hosts (31.5-63 GB/s), whose GPUs reach
/// their NICs' GPUDirect RDMA traffic through that same link on HGX/DGX boards: a contention the
/// offload model (predict/step.hpp) does not price, and why Megatron-Bridge's recipes offload only
/// on GB200/GB300. `step --cpu-offloading-num-layers` still predicts offloading on any host.
inline constexpr double offload_min_host_bandwidth_GBps = 200.0;

/// @brief The `plan` command's Pareto front keeps the plans at most 2 x the best step time: a plan
/// twice as slow as the best doubles the time to train (and the GPU-hours) for its memory
/// headroom, a trade nobody plans for; `--pareto-factor` changes it. The library's own default
/// (search_request::pareto_max_slowdown = 0) keeps the whole front.
inline constexpr double default_pareto_max_slowdown = 2.0;

/// @brief What to search: the workload, the space's limits, and how to run the search.
struct search_request {
    int global_batch = 0;         ///< sequences per optimizer step (B)
    int seq = 2048;               ///< tokens per sequence
    int top_k = 10;               ///< plans to return
    int threads = 1;              ///< worker threads (>= 1)
    int shard = 0;                ///< this job's shard, in [0, shards)
    int shards = 1;               ///< total shards the space is split into
    int scale_up_domain = 0;      ///< GPUs TP may span (0: the cluster's NVLink domain, `cluster::domain_gpus()`)
    int max_micro_batch = 0;      ///< largest micro-batch tried (0: up to B / dp)
    int max_virtual_stages = 0;   ///< largest V of the interleaved schedule (0: any)
    bool try_zero_bubble = true;  ///< also search zb-h1, zb-v and dualpipe (parallel/plan.hpp)
    int max_cp = 0;               ///< largest context-parallel degree (0: any divisor of seq)
    /// smallest seq / cp of a plan with cp >= 2 (0: any; default_min_cp_tokens is the commands')
    int min_cp_tokens = 0;
    /// Pareto front kept to step times <= this x the best (0: the whole front; >= 1 otherwise)
    double pareto_max_slowdown = 0;
    bool try_sequence_parallel = true;  ///< also try sequence parallelism (tp >= 2)
    /// also try Megatron-Core's layouts counting the embedding/loss as pipeline layers (file comment)
    bool try_pipeline_split = true;
    /// also try full recompute by block of the fewest layers that fits (file comment)
    bool try_block_recompute = true;
    /// also try activation CPU offloading of the fewest layers that fits (file comment)
    bool try_cpu_offloading = true;
    bool pareto = true;           ///< compute the Pareto front
    /// Fields that are not searched (precision, gradient bytes, bucket, overlap assumptions,
    /// compute efficiency, pipeline scatter-gather) are taken from this plan.
    plan base{};
    step_options options{};      ///< predictor options (collective model mode and algorithm)
};

/// @brief One evaluated plan and its predicted breakdown.
struct planned {
    plan p{};
    step_breakdown r{};
};

/// @brief The outcome of a search (or of merged shards).
struct search_result {
    long long candidates = 0;  ///< outer choices (all but the micro-batch) of this shard
    long long evaluated = 0;   ///< plans predicted (full evaluations)
    long long feasible = 0;    ///< evaluated plans that fit in memory
    long long rejected = 0;    ///< plans the predictor refused (input_error); 0 in a consistent library
    double search_s = 0;       ///< wall time of the search (merged: the sum over shards)
    std::vector<planned> top;     ///< the best top_k feasible plans, best first
    std::vector<planned> pareto;  ///< the step-time / memory Pareto front, in ranking order
};

/// @brief The plan key of the ranking's tie-break (file comment), as integers in order.
[[nodiscard]] constexpr std::array<int, 17> plan_key(const plan& p) {
    return {p.tp, p.pp, p.dp, p.cp, p.ep, p.micro_batch, p.zero, static_cast<int>(p.recompute_mode),
            static_cast<int>(p.full_recompute_method), p.recompute_num_layers, p.cpu_offloading_num_layers,
            static_cast<int>(p.schedule), p.chunks(), p.sequence_parallel ? 1 : 0,
            p.account_for_embedding_in_pipeline_split ? 1 : 0, p.account_for_loss_in_pipeline_split ? 1 : 0,
            p.expert_tp()};
}

/// @brief The ranking's strict total order: step time, then memory per GPU, then plan key (file
/// comment).
[[nodiscard]] inline bool ranks_before(const planned& a, const planned& b) {
    const double sa = a.r.step.value(), sb = b.r.step.value();
    if (sa != sb) return sa < sb;
    const double ma = a.r.memory.total().value(), mb = b.r.memory.total().value();
    if (ma != mb) return ma < mb;
    return plan_key(a.p) < plan_key(b.p);
}

/// @brief True if `b` dominates `a`: step time and memory per GPU both <= and one <.
[[nodiscard]] inline bool dominates(const planned& b, const planned& a) {
    const double sb = b.r.step.value(), sa = a.r.step.value();
    const double mb = b.r.memory.total().value(), ma = a.r.memory.total().value();
    return sb <= sa && mb <= ma && (sb < sa || mb < ma);
}

/// @brief Exact memo of a collective pricer for one search: (placement, op, bytes) -> time, in a
/// fixed open-addressing table allocated up front (no allocation while pricing). When the table
/// is full a price is computed without caching, so results never depend on the cache.
template <class Pricer>
class price_cache {
public:
    /// @brief A cache of 2^log2_slots entries in front of `inner`.
    explicit price_cache(Pricer inner, int log2_slots = 14)
        : inner_(inner), slots_(std::size_t{1} << log2_slots), mask_((std::size_t{1} << log2_slots) - 1) {}

    /// @brief `inner(g, op, s)`, from the table when it was priced before.
    [[nodiscard]] duration operator()(const placement& g, collective_op op, data_size s) {
        std::uint64_t bits = 0;
        const double v = s.value();
        std::memcpy(&bits, &v, sizeof bits);
        std::uint64_t h = bits * 0x9E3779B97F4A7C15ull;
        h ^= (static_cast<std::uint64_t>(static_cast<unsigned>(g.ranks)) << 32) ^
             (static_cast<std::uint64_t>(static_cast<unsigned>(g.ranks_per_node)) << 16) ^
             static_cast<std::uint64_t>(static_cast<unsigned>(g.stride)) ^
             (static_cast<std::uint64_t>(op) << 56);
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        for (std::size_t probe = 0; probe < 8; ++probe) {
            entry& e = slots_[(h + probe) & mask_];
            if (!e.used) {
                e = entry{v, g.ranks, g.ranks_per_node, g.stride, op, inner_(g, op, s).value(), true};
                ++misses;
                return seconds(e.time);
            }
            if (e.bytes == v && e.ranks == g.ranks && e.per_node == g.ranks_per_node && e.stride == g.stride && e.op == op) {
                ++hits;
                return seconds(e.time);
            }
        }
        ++misses;
        return inner_(g, op, s);
    }

    long long hits = 0;    ///< prices served from the table
    long long misses = 0;  ///< prices computed

private:
    struct entry {
        double bytes = 0;
        int ranks = 0, per_node = 0, stride = 0;
        collective_op op{};
        double time = 0;
        bool used = false;
    };
    Pricer inner_;
    std::vector<entry> slots_;
    std::size_t mask_;
};

namespace search_detail {

/// Divisors of n in increasing order (setup only).
[[nodiscard]] inline std::vector<int> divisors(long long n) {
    std::vector<int> d;
    for (long long i = 1; i * i <= n; ++i) {
        if (n % i) continue;
        d.push_back(static_cast<int>(i));
        if (i * i != n) d.push_back(static_cast<int>(n / i));
    }
    std::sort(d.begin(), d.end());
    return d;
}

/// The first/last stage counts the search gives a plan of `pp` stages of a `layers`-layer model
/// under `stack` (file comment): megatron_uneven_split's where the stack is megatron-core and its
/// largest stage holds ceil(layers / pp) layers, else none.
[[nodiscard]] constexpr uneven_stage_split megatron_flags_split(framework stack, int layers, int pp) {
    if (stack != framework::megatron_core) return {};
    const uneven_stage_split s = megatron_uneven_split(layers, pp);
    if (s.first == 0 && s.last == 0) return s;
    plan q;
    q.pp = pp;
    q.first_stage_layers = s.first;
    q.last_stage_layers = s.last;
    return max_stage_layers(q, layers) == (layers + pp - 1) / pp ? s : uneven_stage_split{};
}

/// One outer choice: everything but the micro-batch.
struct shape {
    int tp, pp, dp, cp, ep, zero, v;
    recompute rc;
    pipeline_schedule sched;
    bool sp;
    bool embedding = false, loss = false;  ///< the pipeline-split flags (plan.hpp)
    int etp = 0;                           ///< plan.etp: 0 = tp (Megatron's default)
    uneven_stage_split split{};            ///< plan.first/last_stage_layers (megatron_flags_split)
};

/// Per-thread accumulator: top-K and Pareto front, reserved up front (own cache line: no false
/// sharing of the counters between threads).
struct alignas(64) accumulator {
    std::vector<planned> top;
    std::vector<planned> front;
    std::size_t k = 10;
    bool pareto = true;
    long long evaluated = 0, feasible = 0, rejected = 0;

    void init(std::size_t top_k, bool with_pareto) {
        k = top_k;
        pareto = with_pareto;
        top.reserve(k + 1);
        if (pareto) front.reserve(1024);
    }
    void offer(const planned& x) {
        if (top.size() < k || ranks_before(x, top.back())) {
            auto it = std::upper_bound(top.begin(), top.end(), x, ranks_before);
            top.insert(it, x);
            if (top.size() > k) top.pop_back();
        }
        if (pareto) offer_front(x);
    }
    void offer_front(const planned& x) {
        for (const auto& f : front)
            if (dominates(f, x)) return;
        std::erase_if(front, [&](const planned& f) { return dominates(x, f); });
        front.push_back(x);  // reserved; grows only past 1024 non-dominated plans
    }
};

}  // namespace search_detail

/// @brief Drops from a Pareto front the plans slower than `max_slowdown` x its fastest (0: none).
/// A part's front trimmed against its own fastest plan keeps every plan the whole front keeps
/// (the whole space's fastest is no slower), so trimming parts and then their merge is exact.
inline void trim_pareto(std::vector<planned>& front, double max_slowdown) {
    if (!(max_slowdown > 0) || front.empty()) return;
    double best = front.front().r.step.value();
    for (const auto& x : front) best = std::min(best, x.r.step.value());
    std::erase_if(front, [&](const planned& x) { return x.r.step.value() > max_slowdown * best; });
}

/// @brief Merges results of disjoint parts of one space (threads or shards): counts add up,
/// search_s adds up, the top `top_k` by the ranking order and the Pareto front of the union
/// (kept to `pareto_max_slowdown` x its fastest plan when that is > 0, trim_pareto).
/// Equals the search of the whole space.
[[nodiscard]] inline search_result merge_results(std::span<const search_result> parts, int top_k,
                                                 double pareto_max_slowdown = 0) {
    search_result out;
    std::vector<planned> all, front;
    for (const auto& r : parts) {
        out.candidates += r.candidates;
        out.evaluated += r.evaluated;
        out.feasible += r.feasible;
        out.rejected += r.rejected;
        out.search_s += r.search_s;
        all.insert(all.end(), r.top.begin(), r.top.end());
        front.insert(front.end(), r.pareto.begin(), r.pareto.end());
    }
    std::sort(all.begin(), all.end(), ranks_before);
    if (all.size() > static_cast<std::size_t>(top_k)) all.resize(static_cast<std::size_t>(top_k));
    out.top = std::move(all);
    for (const auto& x : front) {
        bool dominated = false;
        for (const auto& y : front)
            if (dominates(y, x)) {
                dominated = true;
                break;
            }
        if (!dominated) out.pareto.push_back(x);
    }
    trim_pareto(out.pareto, pareto_max_slowdown);
    std::sort(out.pareto.begin(), out.pareto.end(), ranks_before);
    return out;
}

/// @brief `c` sized to `gpus` GPUs (whole nodes: its node count set to gpus / GPUs per node), the
/// cluster a search plans for. Throws input_error naming `field` (e.g. the CLI's "--gpus") when
/// `gpus` is not a multiple of the node's GPUs or needs more than cluster_limits::nodes nodes, and
/// naming "cluster" when the sized cluster is not valid.
[[nodiscard]] inline cluster cluster_for_gpus(cluster c, long long gpus, std::string_view field = "search.gpus") {
    if (gpus < 1 || gpus % c.node.gpus != 0)
        throw input_error(std::string(field), std::to_string(gpus),
                          "a multiple of the " + std::to_string(c.node.gpus) + " GPUs per node of '" + std::string(c.name) + "'");
    if (gpus / c.node.gpus > cluster_limits::nodes)
        throw input_error(std::string(field), std::to_string(gpus), "at most " + std::to_string(cluster_limits::nodes) + " nodes");
    c.nodes = static_cast<int>(gpus / c.node.gpus);
    validate(c, "cluster");
    return c;
}

/// @brief Throws input_error naming the request field unless the request is usable.
inline void validate(const search_request& r) {
    require_int_range("search.global_batch", r.global_batch, 1, plan_limits::global_batch);
    require_int_range("search.seq", r.seq, 1, plan_limits::seq);
    require_int_range("search.top_k", r.top_k, 1, search_limits::top_k);
    require_int_range("search.threads", r.threads, 1, search_limits::threads);
    require_int_range("search.shards", r.shards, 1, search_limits::shards);
    if (r.shard < 0 || r.shard >= r.shards)
        throw input_error("search.shard", std::to_string(r.shard),
                          "an index in [0, " + std::to_string(r.shards - 1) + "] (shards = " + std::to_string(r.shards) + ")");
    require_int_range("search.scale_up_domain", r.scale_up_domain, 0, search_limits::scale_up_domain);
    require_int_range("search.max_micro_batch", r.max_micro_batch, 0, search_limits::max_micro_batch);
    require_int_range("search.max_virtual_stages", r.max_virtual_stages, 0, plan_limits::virtual_stages);
    require_int_range("search.max_cp", r.max_cp, 0, search_limits::max_cp);
    require_int_range("search.min_cp_tokens", r.min_cp_tokens, 0, plan_limits::seq);
    if (!(r.pareto_max_slowdown == 0 || (r.pareto_max_slowdown >= 1 && r.pareto_max_slowdown <= 1e6)))
        throw input_error("search.pareto_max_slowdown", detail::number_text(r.pareto_max_slowdown),
                          "0 (the whole front) or a factor in [1, 1e6]");
}

namespace search_detail {
/// The fewest n in [1, most] with which plan `cur.p`, set to n by `set(n)`, fits in memory; its
/// prediction left in `cur.r` (every prediction counted in `out.evaluated`). n = 1 first; then
/// from the n where memory, affine in n and falling by `slope(m1)` bytes per unit (m1: n = 1's
/// bytes), meets the capacity, stepped down or up to the first n that fits (memory never rises
/// with n). False when none fits.
template <class Pricer, class Set, class Slope>
[[nodiscard]] bool fewest_fitting(const transformer& m, const cluster& c, const accelerator& acc, const search_request& r,
                                  Pricer& price, planned& cur, int most, Set set, Slope slope, accumulator& out) {
    auto fits = [&](int n) {
        set(n);
        try {
            cur.r = detail::predict_step_valid_model_cluster(m, c, acc, cur.p, price, r.options);  // both validated by the search
        } catch (const input_error&) {
            ++out.rejected;
            return false;
        }
        ++out.evaluated;
        return cur.r.fits_in_memory;
    };
    if (most < 1) return false;
    if (fits(1)) return true;
    if (most < 2) return false;
    const double m1 = cur.r.memory.total().value(), cap = cur.r.memory_capacity.value(), d = slope(m1);
    const double x = d > 0 ? 1.0 + (m1 - cap) / d : 2.0;
    int n = std::clamp(static_cast<int>(std::ceil(std::isfinite(x) ? std::min(x, static_cast<double>(most)) - 1e-9 : 2.0)), 2, most);
    if (fits(n)) {
        planned fit = cur;
        while (n > 2 && fits(n - 1)) {
            --n;
            fit = cur;
        }
        cur = fit;
        return true;
    }
    while (n < most)
        if (fits(++n)) return true;
    return false;
}

/// Full recompute by block of the fewest layers that fits (file comment): `cur` holds a plan with
/// full recompute of every layer, which fits (`full_bytes` per GPU). Offers the block plan of the
/// fewest layers N per model chunk, 1 <= N < layers / (pp x V), that fits, if any, to `out` (the
/// kept one counted in `out.feasible`); `cur.p` is restored.
template <class Pricer>
void offer_fewest_block(const transformer& m, const cluster& c, const accelerator& acc, const search_request& r,
                        Pricer& price, planned& cur, double full_bytes, accumulator& out) {
    plan& p = cur.p;
    const double chunk = p.layers_per_model_chunk(m.layers);
    const recompute_method method0 = p.full_recompute_method;
    const int n0 = p.recompute_num_layers;
    p.full_recompute_method = recompute_method::block;
    // memory = full's + (1 - N / chunk) x (what the whole activations add): through N = chunk
    const bool found = fewest_fitting(
        m, c, acc, r, price, cur, static_cast<int>(std::ceil(chunk)) - 1, [&](int n) { p.recompute_num_layers = n; },
        [&](double m1) { return (m1 - full_bytes) / (chunk - 1.0); }, out);
    if (found) {
        ++out.feasible;
        out.offer(cur);
    }
    p.full_recompute_method = method0;
    p.recompute_num_layers = n0;
}

/// Activation CPU offloading of the fewest layers that fits (file comment): `cur` holds a plan
/// with pp = 1 and no recomputation that does not fit (`plain_bytes` per GPU). Offers the plan
/// offloading the fewest layers N, 1 <= N < layers, that fits, if any, to `out` (the kept one
/// counted in `out.feasible`); `cur.p` is restored. Returns whether one fits.
template <class Pricer>
bool offer_fewest_offload(const transformer& m, const cluster& c, const accelerator& acc, const search_request& r,
                          Pricer& price, planned& cur, double plain_bytes, accumulator& out) {
    plan& p = cur.p;
    const int n0 = p.cpu_offloading_num_layers;
    // memory = plain's - N x one layer's activations x the micro-batches in flight
    const bool found = fewest_fitting(
        m, c, acc, r, price, cur, m.layers - 1, [&](int n) { p.cpu_offloading_num_layers = n; },
        [&](double m1) { return plain_bytes - m1; }, out);
    if (found) {
        ++out.feasible;
        out.offer(cur);
    }
    p.cpu_offloading_num_layers = n0;
    return found;
}
}  // namespace search_detail

/// @brief The outer choices of the space (everything but the micro-batch), in enumeration
/// order: tp, cp, pp, etp descending (tp first), ep ascending; schedule gpipe, 1f1b, interleaved V ascending, zb-h1, zb-v, dualpipe; sequence
/// parallel off, on; ZeRO 0-3; recompute none, selective, full. Only shapes with dp dividing the
/// global batch. Rules in the file comment.
[[nodiscard]] inline std::vector<search_detail::shape> plan_shapes(const transformer& m, const cluster& c,
                                                                   const search_request& r) {
    using search_detail::divisors;
    std::vector<search_detail::shape> out;
    const long long gpus = static_cast<long long>(c.nodes) * c.node.gpus;
    const int domain = r.scale_up_domain > 0 ? r.scale_up_domain : c.domain_gpus();
    const auto all = divisors(gpus);
    for (int tp : all) {
        if (domain % tp != 0 || m.heads % tp != 0 || (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)) continue;
        if (!mamba_tp_ok(m, tp) || !gdn_split_ok(m, tp, 1)) continue;  // hybrid models: TP splits the mixers' heads
        for (int cp : divisors(gpus / tp)) {
            if (r.seq % cp != 0 || (r.max_cp > 0 && cp > r.max_cp)) continue;
            if (!mamba_cp_ok(m, tp, cp) || !gdn_split_ok(m, tp, cp)) continue;
            if (!attention_cp_ok(m, r.base.attention, r.base.stack, cp)) continue;  // unfused attention: no CP
            if (cp > 1 && r.seq / cp < r.min_cp_tokens) continue;  // too few tokens per CP rank
            for (int pp : divisors(gpus / tp / cp)) {
                // uneven splits allowed (parallel/plan.hpp stage_layers); up to layers + 2 stages with
                // the embedding and the loss counted as pipeline layers
                const bool plain = pp <= m.layers;
                if (!plain && !(r.try_pipeline_split && pp <= m.layers + 2)) continue;
                const int dp = static_cast<int>(gpus / tp / cp / pp);
                if (r.global_batch % dp != 0) continue;
                // first_last_layers_bf16: Megatron-Core allows at most layers / pp BF16 layers per end
                if (r.base.first_last_layers_bf16 &&
                    std::max(r.base.bf16_layers_at_start, r.base.bf16_layers_at_end) > m.layers / pp)
                    continue;
                // Megatron-Core runs a pp that does not divide the layers with the first/last stage
                // counts given (parallel/plan.hpp megatron_uneven_split) where they reach the even
                // pace, ceil(layers / pp) per stage; otherwise, and under the other stacks, the
                // stages split as stage_layers does (Megatron-Core: a pipeline layout string)
                const uneven_stage_split uneven = search_detail::megatron_flags_split(r.base.stack, m.layers, pp);
                // expert layers (file comment): etp = tp first (plan.etp 0), then its smaller divisors
                std::vector<std::pair<int, int>> expert_layouts;  // (plan.etp, ep)
                const long long stage = static_cast<long long>(tp) * cp * dp;
                std::vector<int> etps{tp};
                if (m.is_moe()) {
                    const auto below = divisors(tp);
                    for (auto it = below.rbegin(); it != below.rend(); ++it)
                        if (*it < tp && m.expert_width() % *it == 0) etps.push_back(*it);
                }
                for (const int etp : etps)
                    for (const int ep : divisors(etp == tp ? static_cast<long long>(dp) * cp : stage / etp))
                        if (m.experts % ep == 0 && (ep == 1 || m.experts > 1)) expert_layouts.emplace_back(etp == tp ? 0 : etp, ep);
                for (const auto& [etp, ep] : expert_layouts) {
                    struct sched_v { pipeline_schedule s; int v; bool embedding = false, loss = false; };
                    std::vector<sched_v> scheds;
                    // Megatron-Core's rule (transformer_config.py): (layers + extras) % (pp x V) == 0
                    auto split_variants = [&](pipeline_schedule sc, int v) {
                        if (!r.try_pipeline_split) return;
                        const long long virt = static_cast<long long>(pp) * v;
                        if (m.layers % virt == 0) return;  // the plain split already is Megatron's even one
                        switch (pipeline_split_slots_needed(m.layers, virt)) {
                            case 1:
                                scheds.push_back({sc, v, false, true});
                                scheds.push_back({sc, v, true, false});
                                break;
                            case 2: scheds.push_back({sc, v, true, true}); break;
                            default: break;
                        }
                    };
                    if (pp == 1) {
                        scheds.push_back({pipeline_schedule::one_f_one_b, 1});
                    } else {
                        if (plain) scheds.push_back({pipeline_schedule::gpipe, 1});
                        if (plain) scheds.push_back({pipeline_schedule::one_f_one_b, 1});
                        split_variants(pipeline_schedule::one_f_one_b, 1);
                        for (int v = 2; static_cast<long long>(pp) * v <= m.layers + (r.try_pipeline_split ? 2 : 0); ++v) {
                            if (r.max_virtual_stages > 0 && v > r.max_virtual_stages) break;
                            if (m.layers % (pp * v) == 0) scheds.push_back({pipeline_schedule::interleaved, v});
                            else split_variants(pipeline_schedule::interleaved, v);
                        }
                        // today's schedules (parallel/plan.hpp); DualPipe's batch conditions are checked per micro-batch
                        if (r.try_zero_bubble && plain) {
                            scheds.push_back({pipeline_schedule::zb_h1, 1});
                            if (2LL * pp <= m.layers) scheds.push_back({pipeline_schedule::zb_v, 1});
                            if (pp % 2 == 0) scheds.push_back({pipeline_schedule::dualpipe, 1});
                        }
                    }
                    for (const auto& sv : scheds) {
                        const bool flags_split = !sv.embedding && !sv.loss &&
                                                 (sv.s == pipeline_schedule::gpipe || sv.s == pipeline_schedule::one_f_one_b ||
                                                  sv.s == pipeline_schedule::zb_h1);
                        const uneven_stage_split split = flags_split ? uneven : uneven_stage_split{};
                        for (int sp = 0; sp < 2; ++sp) {
                            if (sp && (tp < 2 || !r.try_sequence_parallel || (r.seq / cp) % tp != 0)) continue;
                            for (int zero = 0; zero <= 3; ++zero) {
                                if (zero > 0 && static_cast<long long>(dp) * cp < 2) continue;
                                for (recompute rc : {recompute::none, recompute::selective, recompute::full})
                                    out.push_back({tp, pp, dp, cp, ep, zero, sv.v, rc, sv.s, sp == 1, sv.embedding, sv.loss, etp, split});
                            }
                        }
                    }
                }
            }
        }
    }
    return out;
}

/// @brief Searches the space of `r` for model `m` on cluster `c` with GPUs `acc`, pricing
/// collectives with `price(const placement&, collective_op, data_size) -> duration` (memoized
/// per thread by price_cache; copy-constructible). Returns the top-K plans that fit, the Pareto
/// front and the counts (file comment). Throws input_error for a bad request, model or cluster.
template <class Pricer>
[[nodiscard]] search_result search_plans_with(const transformer& m, const cluster& c, const accelerator& acc,
                                              const search_request& r, const Pricer& price) {
    validate(m, "model");
    validate(c, "cluster");
    validate(r);
    const auto t0 = std::chrono::steady_clock::now();
    const auto shapes_all = plan_shapes(m, c, r);
    std::vector<search_detail::shape> shapes;
    shapes.reserve(shapes_all.size() / static_cast<std::size_t>(r.shards) + 1);
    for (std::size_t i = 0; i < shapes_all.size(); ++i)
        if (static_cast<int>(i % static_cast<std::size_t>(r.shards)) == r.shard) shapes.push_back(shapes_all[i]);

    // the micro-batches each shape's replicas can take: the divisors of global_batch / dp, per
    // distinct dp (a loop over every integer up to B / dp costs seconds at B ~ 1e9)
    std::vector<std::pair<int, std::vector<int>>> micro_batches_of;
    for (const auto& s : shapes)
        if (std::none_of(micro_batches_of.begin(), micro_batches_of.end(), [&](const auto& e) { return e.first == s.dp; }))
            micro_batches_of.emplace_back(s.dp, search_detail::divisors(r.global_batch / s.dp));

    // one thread per 64 shapes at most: starting a thread costs more than a small space
    const int threads = std::max(1, std::min<int>(r.threads, static_cast<int>((shapes.size() + 63) / 64)));
    std::vector<search_detail::accumulator> acc_of(static_cast<std::size_t>(threads));
    for (auto& a : acc_of) a.init(static_cast<std::size_t>(r.top_k), r.pareto);
    std::atomic<std::size_t> next{0};
    constexpr std::size_t chunk = 8;
    std::exception_ptr failure;
    std::mutex failure_mutex;

    // activation CPU offloading (file comment): asked for, over an NVLink-C2C-class host link, from a
    // base plan that neither recomputes modules nor offloads already (Megatron-Core's rules), of a
    // model with layers to keep
    const bool offload_searched = r.try_cpu_offloading && r.base.recompute_modules == 0 &&
                                  r.base.cpu_offloading_num_layers == 0 && m.layers >= 2 &&
                                  acc.host_bandwidth.value() >= offload_min_host_bandwidth_GBps * giga;
    auto work = [&](std::size_t t) {
        try {
            auto& out = acc_of[t];
            price_cache<Pricer> cache(price);
            planned cur;
            cur.p = r.base;
            cur.p.global_batch = r.global_batch;
            cur.p.seq = r.seq;
            for (;;) {
                const std::size_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
                if (begin >= shapes.size()) break;
                const std::size_t end = std::min(shapes.size(), begin + chunk);
                for (std::size_t i = begin; i < end; ++i) {
                    const auto& s = shapes[i];
                    plan& p = cur.p;
                    p.tp = s.tp;
                    p.pp = s.pp;
                    p.dp = s.dp;
                    p.cp = s.cp;
                    p.ep = s.ep;
                    p.etp = s.etp;
                    p.zero = s.zero;
                    p.recompute_mode = s.rc;
                    p.schedule = s.sched;
                    p.virtual_stages = s.v;
                    p.sequence_parallel = s.sp;
                    p.account_for_embedding_in_pipeline_split = s.embedding;
                    p.account_for_loss_in_pipeline_split = s.loss;
                    p.first_stage_layers = s.split.first;
                    p.last_stage_layers = s.split.last;
                    const int per_replica = r.global_batch / s.dp;
                    // activation CPU offloading: Megatron-Core's rules (pp = 1, no recomputation)
                    const bool offload = offload_searched && s.pp == 1 && s.rc == recompute::none;
                    const auto& sizes = std::find_if(micro_batches_of.begin(), micro_batches_of.end(),
                                                     [&](const auto& e) { return e.first == s.dp; })->second;
                    for (const int b : sizes) {
                        if (r.max_micro_batch > 0 && b > r.max_micro_batch) break;
                        p.micro_batch = b;
                        if (!schedule_accepts(s.sched, s.pp, per_replica / b)) continue;  // too few micro-batches
                        try {
                            cur.r = detail::predict_step_valid_model_cluster(m, c, acc, p, cache, r.options);  // both validated by the search
                        } catch (const input_error&) {
                            ++out.rejected;
                            continue;
                        }
                        ++out.evaluated;
                        if (!cur.r.fits_in_memory) {
                            // memory is non-decreasing in b, with or without offloading N layers
                            if (offload && search_detail::offer_fewest_offload(m, c, acc, r, cache, cur,
                                                                               cur.r.memory.total().value(), out))
                                continue;
                            break;
                        }
                        ++out.feasible;
                        out.offer(cur);
                        if (s.rc == recompute::full && r.try_block_recompute)
                            search_detail::offer_fewest_block(m, c, acc, r, cache, cur, cur.r.memory.total().value(), out);
                    }
                }
            }
        } catch (...) {
            const std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) failure = std::current_exception();
        }
    };
    if (threads == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        pool.reserve(static_cast<std::size_t>(threads));
        for (int t = 0; t < threads; ++t) pool.emplace_back(work, static_cast<std::size_t>(t));
        for (auto& th : pool) th.join();
    }
    if (failure) std::rethrow_exception(failure);

    std::vector<search_result> parts(acc_of.size());
    for (std::size_t t = 0; t < acc_of.size(); ++t) {
        parts[t].evaluated = acc_of[t].evaluated;
        parts[t].feasible = acc_of[t].feasible;
        parts[t].rejected = acc_of[t].rejected;
        parts[t].top = std::move(acc_of[t].top);
        parts[t].pareto = std::move(acc_of[t].front);
    }
    search_result out = merge_results(parts, r.top_k, r.pareto_max_slowdown);
    out.candidates = static_cast<long long>(shapes.size());
    out.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

/// @brief search_plans_with, collectives priced by the collective model
/// (`collective_pricer`, predict/step.hpp) in `r.options.mode` with `r.options.algo`.
[[nodiscard]] inline search_result search_plans(const transformer& m, const cluster& c, const accelerator& acc,
                                                const search_request& r) {
    const cluster view = comm_view(c);
    return search_plans_with(m, c, acc, r, collective_pricer{&view, collective_options{r.options.algo, r.options.mode, r.options.candidates}});
}

/// @brief The fastest plan that fits on `gpus` GPUs of `c` (its node count set to gpus / GPUs per
/// node), searched with `r` as one whole search of one plan (top_k 1, shard 0/1, no Pareto front),
/// or nullopt when no plan fits or no plan shape exists. What capacity planning asks at each GPU
/// count (predict/capacity.hpp, plan_capacity). Throws input_error naming `gpus` unless it is a
/// whole number of nodes, at most cluster_limits::nodes of them.
[[nodiscard]] inline std::optional<planned> best_plan_at(const transformer& m, cluster c, const accelerator& acc,
                                                         search_request r, long long gpus) {
    if (gpus < 1 || c.node.gpus < 1 || gpus % c.node.gpus != 0 || gpus / c.node.gpus > cluster_limits::nodes)
        throw input_error("gpus", std::to_string(gpus),
                          "a multiple of the " + std::to_string(c.node.gpus) + " GPUs per node, at most " +
                              std::to_string(cluster_limits::nodes) + " nodes");
    c.nodes = static_cast<int>(gpus / c.node.gpus);
    r.top_k = 1;
    r.shard = 0;
    r.shards = 1;
    r.pareto = false;
    search_result res = search_plans(m, c, acc, r);
    if (res.top.empty()) return std::nullopt;
    return res.top.front();
}

/// @brief Why a search returned no plan, in words ("" when it returned one): no shape (no
/// factorization tp x pp x dp x cp = GPUs with the divisibility rules and dp dividing the global
/// batch), or nothing fits in memory.
[[nodiscard]] inline std::string empty_reason(const transformer& m, const cluster& c, const search_request& r,
                                              const search_result& res) {
    if (!res.top.empty()) return "";
    const long long gpus = static_cast<long long>(c.nodes) * c.node.gpus;
    if (res.candidates == 0)
        return "no valid plan shape: no tp x pp x dp x cp = " + std::to_string(gpus) + " with tp dividing the " +
               std::to_string(m.heads) + " heads and the scale-up domain, pp dividing the " + std::to_string(m.layers) +
               " layers, cp dividing seq " + std::to_string(r.seq) + " and dp dividing the global batch " +
               std::to_string(r.global_batch);
    if (res.feasible == 0) return "no plan fits in memory (" + std::to_string(res.evaluated) + " evaluated)";
    return "";
}

}  // namespace commscale
