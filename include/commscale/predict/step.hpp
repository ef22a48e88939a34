#pragma once
/// @file predict/step.hpp
/// @brief Step-time predictor: for a transformer, a cluster and a plan, the time of one
/// optimizer step split into compute, pipeline bubble and the exposed part of each
/// dimension's communication, with MFU/HFU, throughput, memory, a bottleneck verdict and the
/// inter-node bandwidth that would hide the data-parallel communication. Allocation-free.
///
/// Model (every term per GPU, per step):
///   compute   = hardware FLOPs / (N x peak(dtype) x efficiency)            (HFU definition,
///               Korthikanti et al. 2022 Sec. 6; FLOPs from workload/flops.hpp)
///   efficiency = plan.compute_efficiency, else accelerator.compute_efficiency x
///               step_options.kernel_efficiency (see `default_kernel_efficiency`)
///   tp, cp, ep = calls x collective time on the dimension's group (parallel/traffic.hpp);
///               TP exposed unless overlapped; CP exposed beyond the attention compute when
///               overlapped; EP exposed
///   bubble    = (p - 1) / (V m) x (compute + exposed TP/CP/EP)  (Narayanan et al. 2021, Sec. 2.2:
///               GPipe/1F1B (p-1)/m of the ideal time, interleaved (p-1)/(V m))
///   pp        = 2 m V send/recv; with overlap only the 2 (p - 1) fill/drain transfers are exposed
///   dp        = bucketed gradient reduction; with overlap it runs under the backward of the last
///               micro-batch (gradient accumulation defers it there), exposed = last bucket +
///               what exceeds that window (Li et al. 2020, PyTorch DDP Sec. 3.2.3); ZeRO-1/2
///               parameter all-gather hidden under the next forward when overlapped; ZeRO-3
///               per-layer gathers prefetched under compute, first layer's exposed
///   step      = compute + bubble + exposed (tp + cp + ep + pp + dp)
/// Not modelled: optimizer-step time, data loading, stragglers, kernel-launch gaps beyond the
/// efficiency factor, load imbalance of embeddings across stages and of MoE routing.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "../collective/model.hpp"
#include "../collective/types.hpp"
#include "../hardware/accelerator.hpp"
#include "../hardware/accelerators.hpp"
#include "../hardware/topology.hpp"
#include "../parallel/plan.hpp"
#include "../parallel/traffic.hpp"
#include "../units.hpp"
#include "../workload/flops.hpp"
#include "../workload/memory.hpp"
#include "../workload/transformer.hpp"
#include "requirements.hpp"

namespace commscale {

/// @brief What limits a step. The first six are the CLI's vocabulary; cp_comm and ep_comm name
/// context- and expert-parallel communication when those dominate.
enum class step_bottleneck { compute, tp_comm, pp_comm, dp_comm, bubble, memory, cp_comm, ep_comm };

/// @brief "compute", "tp_comm", "pp_comm", "dp_comm", "bubble", "memory", "cp_comm", "ep_comm".
[[nodiscard]] constexpr std::string_view bottleneck_name(step_bottleneck b) {
    switch (b) {
        case step_bottleneck::compute: return "compute";
        case step_bottleneck::tp_comm: return "tp_comm";
        case step_bottleneck::pp_comm: return "pp_comm";
        case step_bottleneck::dp_comm: return "dp_comm";
        case step_bottleneck::bubble: return "bubble";
        case step_bottleneck::memory: return "memory";
        case step_bottleneck::cp_comm: return "cp_comm";
        case step_bottleneck::ep_comm: return "ep_comm";
    }
    return "compute";
}

/// @brief Fraction of the accelerator's matmul efficiency (its `compute_efficiency`, a
/// large-GEMM microbenchmark figure) that a whole training step's kernels sustain: non-matmul
/// kernels (norms, softmax, dropout, activations, bias/residual adds: memory-bound), smaller
/// GEMMs and launch gaps. 0.7 brings the A100's 0.869 of peak to ~0.61, the per-GPU throughput
/// of Megatron-LM transformer layers without pipeline or data-parallel losses: Narayanan et al.
/// 2021 Table 1 reports 44-52% of peak end to end *including* the bubble and TP communication,
/// which this model adds separately; Korthikanti et al. 2022 Table 5 reports 22B-1T layers at
/// 41-56% MFU. Checked against several published runs in tests/unit/step_published.cpp.
inline constexpr double default_kernel_efficiency = 0.70;

/// @brief Options of the predictor (besides the plan).
struct step_options {
    efficiency_mode mode = efficiency_mode::realistic;  ///< collective model mode
    algorithm algo = algorithm::automatic;              ///< collective algorithm (auto = fastest)
    algorithm_set candidates = algorithm_set::nccl;     ///< what `automatic` chooses among
    double kernel_efficiency = default_kernel_efficiency;
};

/// @brief Communication time of one dimension: everything it sends, and what the step waits for.
struct comm_time {
    duration total{};
    duration exposed{};
};

/// @brief The predicted step and its breakdown.
struct step_breakdown {
    duration step{};             ///< one optimizer step
    duration compute{};          ///< compute at the given efficiency (recompute included)
    duration bubble{};           ///< pipeline fill/drain idle time
    comm_time tp{}, pp{}, dp{}, cp{}, ep{};
    duration exposed_comm{};     ///< sum of the exposed parts
    duration dp_window{};        ///< backward time available to hide the DP reduction
    double bubble_fraction = 0;  ///< bubble / step
    double mfu = 0;              ///< model FLOPs / (step x N x peak)
    double hfu = 0;              ///< hardware FLOPs (recompute included) / (step x N x peak)
    flop_rate model_flops_per_gpu{};     ///< model FLOPs / (step x N): tflops_per_gpu
    flop_rate hardware_flops_per_gpu{};  ///< hardware FLOPs / (step x N)
    double tokens_per_s = 0;
    flop_count model_flops{};    ///< per step, whole job
    flop_count hardware_flops{}; ///< per step, whole job
    memory_breakdown memory{};   ///< per GPU (first pipeline stage)
    data_size memory_capacity{};
    bool fits_in_memory = true;
    step_bottleneck bottleneck = step_bottleneck::compute;
    byte_rate required_inter_node{};  ///< per node, all NICs together, to hide the DP communication
                                      ///< under the backward pass of the last micro-batch
    byte_rate required_inter_node_step{};  ///< the same bytes within the step's whole compute time:
                                           ///< will-it-scale-to-n-gpus's rule "comm <= compute"
    data_size dp_inter_node_bytes{};  ///< DP bytes one node sends across the network per step
    double efficiency = 0;       ///< compute efficiency used
    int micro_batches = 0;
};

/// @brief Compute time of `work` FLOPs spread over `gpus` GPUs, each sustaining `efficiency` x
/// `peak`: work / (gpus x peak x efficiency). ml-engineering-networking: 65.536 TFLOP per GPU at
/// 50% of 312 TFLOPS -> 0.42 s.
[[nodiscard]] constexpr duration compute_time(flop_count work, double gpus, flop_rate peak, double efficiency) {
    return work / (gpus * efficiency * peak);
}

/// @brief Pipeline bubble as a fraction of the ideal (bubble-free) time: (p - 1) / (V m)
/// (Narayanan et al. 2021 Sec. 2.2.1-2.2.2; GPipe and 1F1B V = 1). 0 without pipelining.
[[nodiscard]] constexpr double bubble_overhead(int pp, int micro_batches, int virtual_stages = 1) {
    if (pp <= 1 || micro_batches <= 0) return 0.0;
    return (pp - 1.0) / (static_cast<double>(virtual_stages < 1 ? 1 : virtual_stages) * micro_batches);
}

/// @brief The bubble's share of the whole pipelined time: (p - 1) / (V m + p - 1), i.e.
/// overhead / (1 + overhead) (distributed-training-lecture: "(p-1)/(m+p-1)" for V = 1).
[[nodiscard]] constexpr double bubble_fraction_of_step(int pp, int micro_batches, int virtual_stages = 1) {
    const double o = bubble_overhead(pp, micro_batches, virtual_stages);
    return o / (1.0 + o);
}

namespace detail {
/// Time of `c.count` calls priced by `price(group, op, bytes)`; partial last bucket priced apart.
template <class Pricer>
[[nodiscard]] duration calls_time(const comm_call& c, Pricer& price) {
    if (c.empty()) return seconds(0.0);
    const double whole = std::floor(c.count);
    const double part = c.count - whole;
    duration t = whole * price(c.group, c.op, c.bytes);
    if (part > 1e-12) t += price(c.group, c.op, part * c.bytes);
    return t;
}
}  // namespace detail

/// @brief Predicts one step of `p` training `m` on `c`, whose GPUs are `acc`, pricing every
/// collective with `price(const placement&, collective_op, data_size) -> duration` (the
/// collective model, a calibrated table, or a closed form). Validates the plan (input_error).
/// Formulas in the file comment.
template <class Pricer>
[[nodiscard]] step_breakdown predict_step_with(const transformer& m, const cluster& c, const accelerator& acc,
                                               const plan& p, Pricer&& price, const step_options& o = {}) {
    validate(m, "model");
    validate(c, "cluster");
    validate(p, m, c);
    if (!(o.kernel_efficiency > 0.0) || o.kernel_efficiency > 1.0)
        throw input_error("step_options.kernel_efficiency", detail::number_text(o.kernel_efficiency), "a fraction in (0, 1]");
    step_breakdown r;
    const double n_gpus = static_cast<double>(p.gpus());
    const flop_rate peak = peak_for(acc, p.precision, "plan.dtype");
    r.efficiency = p.compute_efficiency ? *p.compute_efficiency : acc.compute_efficiency * o.kernel_efficiency;
    if (!(r.efficiency > 0.0) || r.efficiency > 1.0)
        throw input_error("accelerator.compute_efficiency", detail::number_text(r.efficiency), "a fraction in (0, 1]");
    const double seq = p.seq, batch = p.global_batch;
    r.model_flops = model_flops(m, seq, batch);
    r.hardware_flops = hardware_flops(m, seq, batch, p.recompute_mode);
    r.micro_batches = p.micro_batches();
    const double mb = r.micro_batches;
    r.compute = compute_time(r.hardware_flops, n_gpus, peak, r.efficiency);

    // shares of the compute: backward (2 forwards of the model FLOPs) and the attention core
    const double fwd = r.model_flops.value() / 3.0;
    const double backward_share = 2.0 * fwd / r.hardware_flops.value();
    const auto layer = layer_forward_flops(m, seq, batch);
    const double core_share = 3.0 * m.layers * layer.attention_core().value() / r.hardware_flops.value();

    const step_traffic t = plan_traffic(m, p, c.node.gpus);
    // TP
    r.tp.total = detail::calls_time(t.tp_main, price) + detail::calls_time(t.tp_gather, price);
    r.tp.exposed = p.overlap.tp ? std::max(seconds(0.0), r.tp.total - r.compute) : r.tp.total;
    // CP
    r.cp.total = detail::calls_time(t.cp, price);
    r.cp.exposed = p.overlap.cp ? std::max(seconds(0.0), r.cp.total - core_share * r.compute) : r.cp.total;
    // EP
    r.ep.total = detail::calls_time(t.ep, price);
    r.ep.exposed = r.ep.total;
    // bubble
    const duration busy = r.compute + r.tp.exposed + r.cp.exposed + r.ep.exposed;
    const double bubble_ratio = bubble_overhead(p.pp, r.micro_batches, p.chunks());
    r.bubble = bubble_ratio * busy;
    // PP
    if (!t.pp.empty()) {
        const duration one = price(t.pp.group, t.pp.op, t.pp.bytes) +
                             (t.pp_gather.empty() ? seconds(0.0) : price(t.pp_gather.group, t.pp_gather.op, t.pp_gather.bytes));
        r.pp.total = t.pp.count * one;
        const double fill_drain = std::min(t.pp.count, 2.0 * (p.pp - 1.0));
        r.pp.exposed = p.overlap.pp ? fill_drain * one : r.pp.total;
    }
    // DP
    r.dp_window = backward_share * r.compute / mb;  // backward of the last micro-batch
    if (!t.dp_main.empty()) {
        // (buckets - 1) full buckets and the last, possibly partial one; each size priced once
        const duration last = price(t.dp_main.group, t.dp_main.op, t.dp_last_bucket);
        const double full_buckets = t.dp_bucket_count - 1.0;
        const duration reduce =
            (full_buckets > 0 ? full_buckets * price(t.dp_main.group, t.dp_main.op, t.dp_main.bytes) : seconds(0.0)) + last;
        const duration gather = detail::calls_time(t.dp_gather, price);
        duration z3 = seconds(0.0), z3_one = seconds(0.0);
        if (t.zero3_gathers > 0) {
            z3_one = price(t.dp_main.group, collective_op::all_gather, t.zero3_gather_bytes / t.zero3_gathers);
            z3 = t.zero3_gathers * z3_one;
        }
        r.dp.total = reduce + gather + z3;
        if (p.overlap.dp) {
            r.dp.exposed = std::min(reduce, last + std::max(seconds(0.0), reduce - last - r.dp_window));
        } else {
            r.dp.exposed = reduce;
        }
        const duration fwd_one = (1.0 - backward_share) * r.compute / mb;
        r.dp.exposed += p.overlap.zero ? std::max(seconds(0.0), gather - fwd_one) : gather;
        if (t.zero3_gathers > 0)
            r.dp.exposed += p.overlap.zero ? z3_one + std::max(seconds(0.0), z3 - z3_one - r.compute) : z3;
    }
    r.exposed_comm = r.tp.exposed + r.cp.exposed + r.ep.exposed + r.pp.exposed + r.dp.exposed;
    r.step = r.compute + r.bubble + r.exposed_comm;

    // derived figures
    const double st = r.step.value();
    r.bubble_fraction = r.bubble.value() / st;
    r.mfu = r.model_flops.value() / (st * n_gpus * peak.value());
    r.hfu = r.hardware_flops.value() / (st * n_gpus * peak.value());
    r.model_flops_per_gpu = r.model_flops / (n_gpus * r.step);
    r.hardware_flops_per_gpu = r.hardware_flops / (n_gpus * r.step);
    r.tokens_per_s = batch * seq / st;

    // memory (first pipeline stage holds the most activations)
    memory_plan mp;
    mp.seq = static_cast<double>(p.seq) / p.cp;
    mp.micro_batch = p.micro_batch;
    mp.tp = p.tp;
    mp.pp = p.pp;
    mp.dp = p.dp * p.cp;
    mp.ep = p.ep;
    mp.zero_stage = p.zero;
    mp.sequence_parallel = p.sequence_parallel;
    mp.recompute_mode = p.recompute_mode;
    mp.in_flight = p.schedule == pipeline_schedule::gpipe ? in_flight_gpipe(r.micro_batches)
                   : p.schedule == pipeline_schedule::interleaved
                       ? in_flight_interleaved(p.pp, r.micro_batches, p.chunks())
                       : in_flight_1f1b(p.pp, r.micro_batches);
    if (p.gradient_bytes == 4) mp.state = mixed_precision_adam_fp32_grads;
    r.memory = memory_per_gpu(m, mp);
    r.memory_capacity = acc.memory;
    r.fits_in_memory = acc.memory.value() <= 0 || fits_in_memory(r.memory, acc.memory);

    // required inter-node bandwidth to hide the DP reduction under its window
    r.dp_inter_node_bytes = dp_inter_node_bytes_per_node(t, c.node.gpus);
    r.required_inter_node = required_bandwidth(r.dp_inter_node_bytes, r.dp_window);
    r.required_inter_node_step = required_bandwidth(r.dp_inter_node_bytes, r.compute);

    // verdict
    if (!r.fits_in_memory) {
        r.bottleneck = step_bottleneck::memory;
    } else {
        struct cand { step_bottleneck b; double v; };
        const cand cands[] = {{step_bottleneck::compute, r.compute.value()},
                              {step_bottleneck::tp_comm, r.tp.exposed.value()},
                              {step_bottleneck::pp_comm, r.pp.exposed.value()},
                              {step_bottleneck::dp_comm, r.dp.exposed.value()},
                              {step_bottleneck::bubble, r.bubble.value()},
                              {step_bottleneck::cp_comm, r.cp.exposed.value()},
                              {step_bottleneck::ep_comm, r.ep.exposed.value()}};
        cand best = cands[0];
        for (const auto& x : cands)
            if (x.v > best.v) best = x;
        r.bottleneck = best.b;
    }
    return r;
}

/// @brief Prices a collective with the library's collective model (collective/model.hpp):
/// `predict_collective(cluster, group, op, bytes, {algo, mode}).time`.
struct collective_pricer {
    const cluster* c = nullptr;
    collective_options options{};
    [[nodiscard]] duration operator()(const placement& g, collective_op op, data_size s) const {
        return predict_collective(*c, g, op, s, options).time;
    }
};

/// @brief Predicts one step of `p` training `m` on `c` with GPUs `acc`, every collective priced
/// by the collective model in `o.mode` with `o.algo`. See predict_step_with.
[[nodiscard]] inline step_breakdown predict_step(const transformer& m, const cluster& c, const accelerator& acc,
                                                 const plan& p, const step_options& o = {}) {
    return predict_step_with(m, c, acc, p, collective_pricer{&c, collective_options{o.algo, o.mode, o.candidates}}, o);
}

/// @brief As above, with the accelerator named by the cluster's nodes (`c.node.accelerator`,
/// catalog hardware/accelerators.hpp); input_error if the name is unknown.
[[nodiscard]] inline step_breakdown predict_step(const transformer& m, const cluster& c, const plan& p,
                                                 const step_options& o = {}) {
    if (auto a = find_accelerator(c.node.accelerator)) return predict_step(m, c, *a, p, o);
    return predict_step(m, c, accelerator_by_name(c.node.accelerator, "cluster.accelerator"), p, o);
}

}  // namespace commscale
