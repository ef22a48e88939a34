#pragma once
/// @file predict/step.hpp
/// @brief Step-time predictor: for a transformer, a cluster and a plan, the time of one
/// optimizer step split into compute, pipeline bubble and the exposed part of each
/// dimension's communication, with MFU/HFU, throughput, memory, a bottleneck verdict and the
/// inter-node bandwidth that would hide the data-parallel communication. Allocation-free.
///
/// Model (every term per GPU, per step; m micro-batches, p stages, V virtual stages):
///   layer     = the compute model of predict/compute.hpp for the layer's shapes and precision
///               (roofline GEMMs, FlashAttention or unfused attention, memory-bound element-wise
///               kernels, a per-kernel overhead; constants fitted to the calibration set);
///               backward adds what recompute (and --recompute-modules) repeats
///   stage     = its layers (parallel/plan.hpp `stage_layers`: uneven splits allowed) x layer, the
///               last stage also the output layer and loss; the slowest stage sets the pace. With
///               Megatron-Core's --account-for-embedding/loss-in-pipeline-split the first/last
///               stage builds one layer fewer for the embedding/loss slot (the embedding lookup,
///               a gather of s b h values, is not costed); memory is then the heaviest stage
///               of that explicit layout (workload/memory.hpp stage_memory_per_gpu)
///   compute   = m x slowest stage + optimizer step (memory-bound Adam on the local shard)
///               (without Megatron's gradient-accumulation fusion, as NVIDIA's recipes run
///               Megatron-FSDP: each micro-batch's stage adds the copy of its gradients into the
///               gradient buffer, detail::gradient_accumulation_copy)
///               + overlap_compute_slowdown x communication hidden under compute
///               (`compute_efficiency` in the plan replaces the compute model: FLOPs / (peak x it))
///   tp        = calls x collective time (parallel/traffic.hpp); with TP overlap (userbuffers,
///               sequence parallelism) the last of t chunks of each forward reduce-scatter stays
///               exposed, plus what exceeds the GEMMs
///   cp, ep    = CP exposed beyond the attention compute when overlapped (a hybrid model's Mamba-2
///               all-to-alls always exposed); EP (the all-to-alls, and
///               with 1 < etp != tp the expert-TP all-gather/reduce-scatter) exposed (DualPipe:
///               beyond the paired chunk's compute)
///   bubble    = (p - 1) / (V m) x (m x slowest stage + exposed TP/CP/EP)  (Narayanan et al. 2021,
///               Sec. 2.2); zero-bubble and DualPipe schedules as `pipeline_bubble`
///   pp        = 2 m V send/recv; with overlap what the schedule cannot cover is exposed: interleaved
///               the 2 (p V - 1) fill/drain transfers (the first micro-batch's hops through the p V
///               virtual stages, forward and backward), 1F1B 2 (p - 1) m / p + 2 (p - 2) (no slack in
///               its steady state); an event simulation of each schedule in the tests
///   dp        = gradient buckets issued as soon as their gradients exist and run back to back on
///               one stream, overlapping the backward of the last micro-batch on the first stage
///               (which finishes last); with V virtual stages chunk j's buckets start j p chunk-
///               backwards earlier (Megatron-Core's per-chunk `overlap_grad_reduce`); without
///               overlap the whole reduction is exposed. ZeRO-1/2 parameter all-gathers run under
///               the first micro-batch's forward (`overlap_param_gather`); ZeRO-3/FSDP gathers each
///               layer one layer ahead in forward and backward and reduce-scatters it in backward
///               (Zhao et al. 2023)
///   offload   = activation CPU offloading (Megatron-Core --cpu-offloading-num-layers N, pp = 1):
///               Transformer Engine's AsyncDoubleBufferGroupOffloadHandler (transformer_engine/
///               pytorch/cpu_offload.py, v2.9) copies layer i's saved activations to the host on
///               its own stream and waits for the copy at layer w_i of its window map, w_i =
///               floor(L/N)(i+1) - 1 (+ the remainder spread over the first groups); the backward
///               reloads group i between the same layers in reverse. Each copy (one layer's
///               activations, workload/memory.hpp, over the accelerator's host_bandwidth) waits
///               max(0, copy - its window's layers x layer time), forward and backward, every
///               micro-batch
///   step      = compute + bubble + exposed (tp + cp + ep + pp + dp) + exposed offload
/// Not modelled: data loading, stragglers, CUDA graphs (the per-kernel overheads of
/// predict/compute.hpp are charged as if no kernel were captured), MoE routing imbalance beyond
/// `expert_load`.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "../collective/model.hpp"
#include "../detail/names.hpp"
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
#include "compute.hpp"
#include "requirements.hpp"

namespace commscale {

/// @brief What limits a step. The first six are the CLI's vocabulary; cp_comm and ep_comm name
/// context- and expert-parallel communication when those dominate, offload the waits for
/// activation CPU offloading's host copies.
enum class step_bottleneck { compute, tp_comm, pp_comm, dp_comm, bubble, memory, cp_comm, ep_comm, offload };

/// @brief CLI/JSON spellings of the step bottlenecks: `to_string`.
inline constexpr std::array<name_entry<step_bottleneck>, 9> step_bottleneck_spellings{{
    {step_bottleneck::compute, "compute"},
    {step_bottleneck::tp_comm, "tp_comm"},
    {step_bottleneck::pp_comm, "pp_comm"},
    {step_bottleneck::dp_comm, "dp_comm"},
    {step_bottleneck::bubble, "bubble"},
    {step_bottleneck::memory, "memory"},
    {step_bottleneck::cp_comm, "cp_comm"},
    {step_bottleneck::ep_comm, "ep_comm"},
    {step_bottleneck::offload, "offload"},
}};
static_assert(detail::in_enum_order(step_bottleneck_spellings));
[[nodiscard]] constexpr const auto& name_table(step_bottleneck) { return step_bottleneck_spellings; }

/// @brief Scale applied to the compute model's GEMM, attention and memory-bound efficiencies
/// (predict/compute.hpp): 1 = the vendor/benchmark figures as documented there. Training-run
/// calibration (`fit-step`) replaces it with a measured value.
inline constexpr double default_kernel_efficiency = 1.0;

/// @brief Options of the predictor (besides the plan).
struct step_options {
    efficiency_mode mode = efficiency_mode::realistic;  ///< collective model mode
    algorithm algo = algorithm::automatic;              ///< collective algorithm (auto = fastest)
    algorithm_set candidates = algorithm_set::nccl;     ///< what `automatic` chooses among
    double kernel_efficiency = default_kernel_efficiency;  ///< scale on the compute model's efficiencies
    /// The compute model's constants (predict/compute.hpp): the ones fitted to the calibration set
    /// by default, `kernel_constants` for the kernel-level figures alone, or a user's own fit.
    compute_constants constants = fitted_compute_constants;
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
    /// activation CPU offloading (plan::cpu_offloading_num_layers): the host copies of the step
    /// (total) and the time the GPU waits for them (exposed; file comment, "offload")
    comm_time offload{};
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
    double efficiency = 0;       ///< hardware FLOPs / (N x peak x compute): the compute efficiency achieved
    int micro_batches = 0;
    duration optimizer{};        ///< optimizer step (part of compute)
    duration overlap_slowdown{}; ///< compute lost to communication running beside it (part of compute)
    duration stage_microbatch{}; ///< forward + backward of one micro-batch on the slowest stage
    layer_time layer{};          ///< one layer, one micro-batch (compute model; zero with compute_efficiency)
    int first_stage_layers = 0, last_stage_layers = 0, max_stage_layers = 0;
};

namespace detail {
/// Memory per GPU of Megatron-Core's layout with the embedding/loss counted in the pipeline split
/// (plan.hpp stage_layers): the first stage its layers + the embedding, the middle ones layers
/// only, the last its layers + the output layer and loss (workload/memory.hpp
/// stage_memory_per_gpu); the heaviest of the three. Out of line: off the default path.
[[gnu::noinline]] inline memory_breakdown split_layout_memory(const commscale::transformer& m, const commscale::plan& p, const commscale::memory_plan& mp) {
    memory_breakdown most = stage_memory_per_gpu(m, mp, stage_layers(p, m.layers, 0), true, false);
    const memory_breakdown last = stage_memory_per_gpu(m, mp, stage_layers(p, m.layers, p.pp - 1), false, true);
    if (last.total() > most.total()) most = last;
    if (p.pp > 2) {
        const memory_breakdown middle = stage_memory_per_gpu(m, mp, stage_layers(p, m.layers, 1), false, false);
        if (middle.total() > most.total()) most = middle;
    }
    return most;
}
}  // namespace detail

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

/// @brief Idle time of one step's pipeline for `schedule` on `pp` stages (V chunks per device for
/// the interleaved schedule, `micro_batches` per step), from the time `stage` of one micro-batch
/// through the slowest stage (forward + full backward, with its exposed TP/CP/EP), `backward` its
/// full backward and `weight_grad` the weight-gradient part of that backward (W):
///   gpipe, 1f1b    (p - 1) stage                      (Narayanan et al. 2021 Sec. 2.2.1)
///   interleaved    (p - 1) stage / V                  (Narayanan et al. 2021 Sec. 2.2.2)
///   zb-h1          (p - 1)(stage - 2 W)               (Qi et al. 2024 Sec. 2.1: (p-1)(T_F + T_B - T_W)
///                                                      with T_B = backward - W; = DeepSeek-V3 Table 2 "ZB1P")
///   zb-v           (p - 1)(stage - 3 W) / 2           (ZB-H2's (p-1)(T_F + T_B - 2 T_W) on the V
///                                                      schedule's half-stage chunks; 0 at T_F = T_B = T_W,
///                                                      as Qi et al. 2024 Sec. 6 state)
///   dualpipe       (p/2 - 1)(F&B + backward - 3 W)    (DeepSeek-V3 Technical Report Table 2, with the
///                                                      paired chunk F&B = stage: pairing hides communication,
///                                                      not compute)
/// Never negative; 0 without pipelining.
[[nodiscard]] constexpr duration pipeline_bubble(pipeline_schedule schedule, int pp, int micro_batches, int virtual_stages,
                                                 duration stage, duration backward, duration weight_grad) {
    if (pp <= 1 || micro_batches <= 0) return seconds(0.0);
    const double p = pp;
    const duration zero = seconds(0.0);
    switch (schedule) {
        case pipeline_schedule::zb_h1: return (p - 1.0) * std::max(zero, stage - 2.0 * weight_grad);
        case pipeline_schedule::zb_v: return (p - 1.0) * std::max(zero, stage - 3.0 * weight_grad) / 2.0;
        case pipeline_schedule::dualpipe: return (p / 2.0 - 1.0) * std::max(zero, stage + backward - 3.0 * weight_grad);
        default: return bubble_overhead(pp, micro_batches, virtual_stages) * static_cast<double>(micro_batches) * stage;
    }
}

/// @brief The bubble's share of the whole pipelined time: (p - 1) / (V m + p - 1), i.e.
/// overhead / (1 + overhead) (distributed-training-lecture: "(p-1)/(m+p-1)" for V = 1).
[[nodiscard]] constexpr double bubble_fraction_of_step(int pp, int micro_batches, int virtual_stages = 1) {
    const double o = bubble_overhead(pp, micro_batches, virtual_stages);
    return o / (1.0 + o);
}

namespace detail {
/// Time of `c.count` calls priced by `price(group, op, bytes)`; partial last bucket priced apart.
/// With `one`, also one whole call's time (0 for no calls), priced once for both.
template <class Pricer>
[[nodiscard]] duration calls_time(const comm_call& c, Pricer& price, duration* one = nullptr) {
    if (c.empty()) {
        if (one) *one = seconds(0.0);
        return seconds(0.0);
    }
    const double whole = std::floor(c.count);
    const double part = c.count - whole;
    duration t = seconds(0.0);
    if (whole >= 1.0 || one) {
        const duration full = price(c.group, c.op, c.bytes);
        t = whole * full;
        if (one) *one = full;
    }
    if (part > 1e-12) t += price(c.group, c.op, part * c.bytes);
    return t;
}
}  // namespace detail

namespace detail {

/// Per-micro-batch times of one layer (and of the last stage's output layer) that the step is
/// built from: forward, backward (recompute included), the output layer and loss with the MTP
/// modules, the attention core (forward + backward), the GEMMs (recompute included) and the
/// weight-gradient GEMMs alone (what zero-bubble schedules defer).
struct layer_costs {
    duration forward{}, backward{}, output{}, attention{}, gemm{}, weight_gradients{};
    layer_time layer{};  ///< the compute model's breakdown (zero with compute_efficiency)
};

/// The compute model of predict/compute.hpp for the layer's shapes and precision, or, when the
/// plan names a compute_efficiency, the layer's FLOPs at that one fraction of peak.
[[nodiscard, gnu::always_inline]] inline layer_costs layer_costs_of(const commscale::transformer& m, const commscale::plan& p, const compute_params& cpar,
                                                flop_rate peak) {
    layer_costs out;
    const double seq = p.seq;
    duration& layer_f = out.forward;
    duration& layer_b = out.backward;
    duration& out_layer = out.output;
    duration& attn_core = out.attention;
    duration& gemm_layer = out.gemm;
    duration& layer_w = out.weight_gradients;
    // full recompute repeats the forward of its share of the layers (recompute_method block: N per
    // model chunk), a mean over the layers; 0 without full recompute
    const double full_share = p.full_recompute_share(m.layers);
    if (p.compute_efficiency) {
        // one efficiency for every kernel: FLOPs / (peak x efficiency)
        const flop_rate rate = *p.compute_efficiency * peak;
        const double share = 1.0 / (static_cast<double>(p.tp) * p.cp);
        const auto lf = layer_forward_flops(m, seq, p.micro_batch);
        const flop_count rec = p.recompute_mode == recompute::full ? full_share * lf.total()
                               : p.recompute_mode == recompute::selective ? lf.attention_core() : flops(0.0);
        layer_f = share * lf.total() / rate;
        layer_b = share * (2.0 * lf.total() + rec) / rate;
        out_layer = share * 3.0 * (logits_forward_flops(m, seq, p.micro_batch) + mtp_forward_flops(m, seq, p.micro_batch)) / rate;
        attn_core = share * 3.0 * lf.attention_core() / rate;
        gemm_layer = layer_f + layer_b - attn_core;
        // weight gradients: half of the backward GEMM FLOPs (dW beside dX), as many as the forward GEMMs
        layer_w = share * (lf.total() - lf.attention_core()) / rate;
    } else {
        const layer_and_output lo = layer_and_output_cached(m, p, cpar);
        out.layer = lo.layer;
        layer_f = out.layer.forward();
        layer_b = out.layer.backward() + recompute_time(out.layer, p.recompute_mode, full_share) +
                  module_recompute_time(m, p, cpar, out.layer, p.recompute_modules);
        out_layer = lo.output;  // output layer + MTP modules (they ride with the output layer)
        attn_core = out.layer.attention_fwd + out.layer.attention_bwd;
        gemm_layer = out.layer.gemm_fwd + out.layer.gemm_bwd + full_share * out.layer.gemm_fwd;
        layer_w = out.layer.gemm_bwd / 2.0;  // dW of every GEMM: half of the backward GEMMs (dX is the other)
    }
    return out;
}

/// One micro-batch's times of the pipeline stages the step reads: the slowest stage (its layers'
/// forward and backward, the last stage with the output layer), and the first stage's forward and
/// backward (the DP windows; with one stage the output layer's third and two thirds ride on them).
struct stage_times {
    duration slowest{}, first_forward{}, first_backward{};
};
/// What the BF16 layers of plan::first_last_layers_bf16 add to the stages holding them, per
/// micro-batch: the first stage's forward and backward (with one stage, every BF16 layer's), and
/// the last stage's forward + backward. Zero without them.
struct bf16_layers_extra {
    duration first_forward{}, first_backward{}, last{};
};
[[nodiscard]] inline stage_times stage_times_of(const layer_costs& lc, const stage_layout& layout, int pp,
                                                const bf16_layers_extra& x = {}) {
    const duration fb = lc.forward + lc.backward;
    stage_times st;
    st.slowest = std::max(static_cast<double>(layout.most) * fb, static_cast<double>(layout.last) * fb + lc.output + x.last);
    st.first_backward = static_cast<double>(layout.first) * lc.backward + x.first_backward + (pp == 1 ? (2.0 / 3.0) * lc.output : seconds(0.0));
    st.first_forward = static_cast<double>(layout.first) * lc.forward + x.first_forward + (pp == 1 ? lc.output / 3.0 : seconds(0.0));
    if (x.first_forward + x.first_backward != seconds(0.0))
        st.slowest = std::max(st.slowest, st.first_forward + st.first_backward);  // the first stage, its BF16 layers
    return st;
}

/// Folding each micro-batch's weight gradients into the gradient buffer without Megatron's
/// gradient-accumulation fusion (plan::fuses_gradient_accumulation false, the Megatron stacks):
/// each weight-gradient GEMM writes a 16-bit `param.grad` and a backward hook moves it into the
/// buffer, a memory-bound pass over the local parameters (`parameters`, before sharding) at the
/// compute parameters' HBM rate. Megatron-FSDP's sharded buffer (ZeRO 3) copies it:
/// `param.main_grad.copy_(param.grad)`, read 2 bytes and write `gradient_bytes` per parameter
/// (megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py `_grad_acc`, the
/// bucket being reduce-scattered after each micro-batch); DDP's and the distributed optimizer's
/// buffer (ZeRO 0-2) accumulates it: `param.main_grad.add_(param.grad.data)`, read 2 +
/// `gradient_bytes` and write `gradient_bytes` (megatron/core/distributed/
/// distributed_data_parallel.py, the parameters' backward post-hook). With the fusion (Megatron-LM's
/// default) the GEMM accumulates in place: zero, as for the stacks outside Megatron and under
/// --compute-efficiency.
[[nodiscard]] inline duration gradient_accumulation_copy(const commscale::plan& p, double parameters, const compute_params& c) {
    if (p.fuses_gradient_accumulation() || p.compute_efficiency) [[likely]]
        return seconds(0.0);
    const double per_parameter = p.zero == 3 ? 2.0 + p.gradient_bytes : 2.0 + 2.0 * p.gradient_bytes;
    return seconds(memory_seconds(per_parameter * parameters, c));
}

/// Parameters this GPU's optimizer step updates: its whole share without a distributed optimizer;
/// with one (ZeRO >= 1) the dense parameters over DP x CP and the routed experts over expert-DP
/// when their reduction is separate (Megatron-Core's distributed optimizer). The shares are
/// plan_traffic's (`t`, parameters_per_gpu and expert_parameters_per_gpu of the plan).
[[nodiscard]] inline double optimizer_shard_parameters(const commscale::transformer& m, const commscale::plan& p,
                                                       const step_traffic& t) {
    const double local = t.parameters_per_gpu;
    if (p.zero < 1) return local;
    const double dp_cp = static_cast<double>(p.dp) * p.cp;
    if (!separate_expert_reduction(m, p)) return local / dp_cp;
    const double experts = t.expert_parameters_per_gpu;
    return (local - experts) / dp_cp + experts / p.expert_dp();
}

/// Bytes per element of a GEMM input that a linear layer saves for its weight gradient
/// (workload/memory.hpp activation_bytes_per_layer `gemm_input_bytes`): Transformer Engine keeps
/// the quantized column-wise copy alone with its scales: 1 byte in per-tensor FP8 (one scale per
/// tensor), 1 + 1/32 in MXFP8 (an E8M0 scale per 32 elements) and in FP8 block scaling (an FP32
/// scale per 1 x 128 block: Float8BlockQuantizer), 4-bit values and an E4M3 scale per 16 in NVFP4
/// (0.5625), an E8M0 scale per 32 in MXFP4 (0.53125); 2 (the 16-bit input) otherwise.
[[nodiscard]] constexpr double saved_gemm_input_bytes(dtype precision, fp8_recipe recipe = fp8_recipe::delayed) {
    switch (precision) {
        case dtype::fp8: return recipe == fp8_recipe::blockwise ? 1.0 + 4.0 / 128.0 : 1.0;
        case dtype::mxfp8: return 1.0 + 1.0 / 32.0;
        case dtype::nvfp4: return 0.5 + 1.0 / 16.0;
        case dtype::fp4: return 0.5 + 1.0 / 32.0;
        default: return 2.0;
    }
}

/// The memory model's view of plan `p` with `micro_batches` micro-batches per step (workload/
/// memory.hpp): one GPU's shares, what each layer saves, the micro-batches in flight.
[[nodiscard]] inline memory_plan memory_plan_of(const commscale::transformer& m, const commscale::plan& p, int micro_batches) {
    memory_plan mp;
    mp.seq = static_cast<double>(p.seq) / p.cp;
    mp.micro_batch = p.micro_batch;
    mp.tp = p.tp;
    mp.pp = p.pp;
    mp.dp = p.dp * p.cp;
    mp.ep = p.ep;
    mp.etp = p.expert_tp();
    mp.expert_dp = p.expert_dp();
    mp.zero_stage = p.zero;
    mp.sequence_parallel = p.sequence_parallel;
    // what a layer saves without recompute: FlashAttention never stores the s x s scores, the
    // activation memory of selective recompute (Korthikanti et al. 2022 Table 2 without the 5 a s / h
    // term; Dao et al. 2022 Sec. 3.1); also what block recompute's other layers keep. The kernel
    // is attention_kernel_for's (a soft-capped model's under megatron-core: unfused)
    mp.kept_mode = attention_kernel_for(m, p) == attention_kernel::flash ? recompute::selective : recompute::none;
    mp.recompute_mode = p.recompute_mode == recompute::none ? mp.kept_mode : p.recompute_mode;
    // the unfused core's softmax, which sets what it keeps per score (none kept under flash)
    if (mp.kept_mode == recompute::none)
        mp.softmax = score_softmax_for(m, p);
    // ZB-H1 and ZB-V keep 1F1B's peak activations (Qi et al. 2024 Sec. 2.1, 6); DualPipe p + 1
    // micro-batches and two stages' parameters per device (DeepSeek-V3 Technical Report Table 2)
    mp.in_flight = p.schedule == pipeline_schedule::gpipe ? in_flight_gpipe(micro_batches)
                   : p.schedule == pipeline_schedule::interleaved
                       ? in_flight_interleaved(p.pp, micro_batches, p.chunks())
                   : p.schedule == pipeline_schedule::dualpipe ? (p.pp + 1.0) / 2.0  // per stage of doubled layers
                                                               : in_flight_1f1b(p.pp, micro_batches);
    // weights 2 B; gradients as kept (fp32 main gradients 4 B, else 2 B); the optimizer's own state
    mp.state = {2.0, p.gradient_bytes == 4 ? 4.0 : 2.0, static_cast<double>(p.optimizer_state_bytes)};
    mp.offloaded_layers = p.cpu_offloading_num_layers;
    mp.recompute_modules = p.recompute_modules;
    // full recompute's method (Megatron-Core --recompute-method, --recompute-num-layers): the layers
    // it does not recompute save what they save without it (kept_mode; read only with recompute full)
    mp.full_recompute_share = p.full_recompute_share(m.layers);
    mp.full_recompute_group = p.full_recompute_group();
    // Transformer Engine saves quantized GEMM inputs (memory.hpp)
    mp.gemm_input_bytes = saved_gemm_input_bytes(p.precision, p.fp8_scaling);
    return mp;
}

/// Memory per GPU of the plan's heaviest pipeline stage (workload/memory.hpp), its capacity, and
/// whether it fits; sets r.memory, r.memory_capacity and r.fits_in_memory (r.micro_batches and
/// r.max_stage_layers already set).
inline void step_memory(const commscale::transformer& m, const commscale::plan& p, const accelerator& acc,
                        step_breakdown& r) {
    memory_plan mp = memory_plan_of(m, p, r.micro_batches);
    // FP8 parameters: a per-tensor FP8 weight without its transpose, 1 byte (plan::fp8_param_gather)
    if (p.fp8_param_gather && p.precision == dtype::fp8 && p.fp8_scaling != fp8_recipe::blockwise && acc.non_tn_fp8_gemm)
        mp.layer_weight_bytes = 1.0;
    if (p.pipeline_split_extras() > 0 && p.pp > 1) {
        r.memory = detail::split_layout_memory(m, p, mp);
    } else {
        transformer staged = m;  // memory of the stage with the most layers, as if every stage had that many
        staged.layers = r.max_stage_layers * p.pp * (p.schedule == pipeline_schedule::dualpipe ? 2 : 1);
        r.memory = memory_per_gpu(staged, mp);
    }
    r.memory_capacity = acc.memory;
    r.fits_in_memory = acc.memory.value() <= 0 || fits_in_memory(r.memory, acc.memory);
}

/// Chunks of a forward reduce-scatter under Transformer Engine's `pipeline` overlap method, the
/// method TE defaults to for proj_fprop and fc2_fprop and that Megatron-Bridge's BF16 userbuffers
/// configurations set (`num_splits` 4: transformer_engine/pytorch/module/base.py initialize_ub,
/// v2.9; Megatron-Bridge training/comm_overlap.py). Its low-precision configurations run the ring
/// exchange instead, t chunks.
inline constexpr double tp_overlap_pipeline_splits = 4.0;

/// TP (file comment, "tp"): Transformer Engine's userbuffer overlap (sequence parallelism, the TP
/// group on one NVLink domain; transformer_engine/pytorch/module/base.py `initialize_ub`, v2.9, and
/// Megatron-Bridge's userbuffers configurations, training/comm_overlap.py) runs every all-gather
/// as a ring exchange under its GEMM's chunks (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad), the
/// backward's reduce-scatters in bulk under the weight-gradient GEMMs (qkv_dgrad, fc1_dgrad), and
/// the forward's reduce-scatters (proj_fprop, fc2_fprop) chunk by chunk behind the GEMM that
/// produces them, so that their last chunk waits for the next kernel: one of t in the low-precision
/// recipes' ring exchange, one of tp_overlap_pipeline_splits in the `pipeline` method that
/// Transformer Engine defaults to and the BF16 recipes configure. Exposed: t.tp_forward_share of the
/// reduce-scatters' time over that split count, plus whatever exceeds the stage's GEMMs (`gemms`:
/// the slowest stage's GEMM time over the step). Otherwise every TP collective waits.
template <class Pricer>
[[nodiscard]] comm_time tp_exposure(const step_traffic& t, const commscale::plan& p, Pricer& price, duration gemms) {
    comm_time tp;
    const duration reduce = detail::calls_time(t.tp_main, price);
    tp.total = reduce + detail::calls_time(t.tp_gather, price);
    if (p.overlap.tp && p.sequence_parallel && p.tp > 1 && t.tp_main.group.ranks_per_node >= p.tp) {
        const double splits = dtype_bytes(p.precision) < 2.0 ? static_cast<double>(p.tp) : tp_overlap_pipeline_splits;
        tp.exposed = std::min(tp.total, t.tp_forward_share * reduce / splits + std::max(seconds(0.0), tp.total - gemms));
    } else {
        tp.exposed = tp.total;
    }
    return tp;
}

/// CP (file comment, "cp"): the ring exchange of keys and values runs behind the attention core
/// (a hybrid model's Mamba-2 all-to-alls, t.cp_mamba, always wait)
/// (`attention`: the slowest stage's attention time over the step) when overlapped.
template <class Pricer>
[[nodiscard]] comm_time cp_exposure(const step_traffic& t, const commscale::plan& p, Pricer& price, duration attention) {
    comm_time cp;
    cp.total = detail::calls_time(t.cp, price);
    cp.exposed = p.overlap.cp ? std::max(seconds(0.0), cp.total - attention) : cp.total;
    if (!t.cp_mamba.empty()) [[unlikely]] {
        // a hybrid model's Mamba-2 all-to-alls sit between its projections and its scan: exposed
        const duration mamba = detail::calls_time(t.cp_mamba, price);
        cp.total += mamba;
        cp.exposed += mamba;
    }
    return cp;
}

/// What waits of `total` communication when a `paired` share of it runs beside `busy` compute:
/// (1 - paired) total + paired max(0, total - busy). Out of line: off the planner's hot path.
[[nodiscard, gnu::cold, gnu::noinline]] inline duration paired_exposure(duration total, duration busy, double paired) {
    return (1.0 - paired) * total + paired * std::max(seconds(0.0), total - busy);
}

/// EP (file comment, "ep"): the dispatch/combine all-to-alls and expert-TP collectives wait,
/// except under DualPipe, which pairs a forward and a backward chunk of two micro-batches so that
/// each one's all-to-all runs under the other's compute (DeepSeek-V3 Technical Report Sec. 3.2.1;
/// `busy`: the step's compute on the slowest stage), and, on the chunks it pairs
/// (plan::moe_a2a_overlap_share), under Megatron-Core's --overlap-moe-expert-parallel-comm, which
/// pairs them the same way: there max(0, all-to-alls - compute), the rest waits.
template <class Pricer>
[[nodiscard]] comm_time ep_exposure(const step_traffic& t, const commscale::plan& p, Pricer& price, duration busy) {
    comm_time ep;
    ep.total = detail::calls_time(t.ep, price) + detail::calls_time(t.etp_gather, price) + detail::calls_time(t.etp_reduce, price);
    ep.exposed = p.schedule == pipeline_schedule::dualpipe ? std::max(seconds(0.0), ep.total - busy) : ep.total;
    if (p.moe_a2a_overlap) [[unlikely]]
        ep.exposed = paired_exposure(ep.total, busy, p.moe_a2a_overlap_share());
    return ep;
}

/// PP (file comment, "pp"): the stage-boundary sends of every micro-batch (with the TP gather
/// after a scatter-gather send); overlapped (or under DualPipe's paired chunks) only the fill and
/// drain, 2 (pp - 1) of them, wait. ZB-V's V-shaped chunk order sends twice 1F1B's activations
/// (sail-sg/zero-bubble-pipeline-parallelism README: 2x PP traffic).
template <class Pricer>
[[nodiscard]] comm_time pp_exposure(const step_traffic& t, const commscale::plan& p, Pricer& price) {
    comm_time pp;
    if (t.pp.empty()) return pp;
    const duration one = price(t.pp.group, t.pp.op, t.pp.bytes) +
                         (t.pp_gather.empty() ? seconds(0.0) : price(t.pp_gather.group, t.pp_gather.op, t.pp_gather.bytes));
    pp.total = t.pp.count * one;
    if (p.schedule == pipeline_schedule::zb_v) pp.total *= 2.0;
    // The transfers a schedule cannot cover, however asynchronous its sends (docs/model.md,
    // pipeline parallelism; an event simulation of each schedule in tests/unit/predict/
    // pipeline_schedules.cpp): interleaved, the first micro-batch's hops through the p V virtual
    // stages in the warm-up and again in the cool-down, 2 (p V - 1), since a rank's p micro-batches
    // of chunk j cannot start before the first has gone round all p ranks in chunk j - 1; 1F1B
    // keeps no slack in its steady state, so each micro-batch's round trip waits on its transfers
    // too: 2 (p - 1) m / p + 2 (p - 2). GPipe, the zero-bubble schedules and DualPipe keep the
    // fill's and the drain's 2 (p - 1): their steady states have the slack 1F1B's lacks (GPipe
    // runs its forwards back to back, ZB defers the weight gradients, DualPipe pairs chunks), and
    // the simulation does not cover them
    const double pp_d = p.pp;
    const double uncovered = p.schedule == pipeline_schedule::interleaved ? 2.0 * (pp_d * p.chunks() - 1.0)
                             : p.schedule == pipeline_schedule::one_f_one_b
                                 ? 2.0 * (pp_d - 1.0) * p.micro_batches() / pp_d + 2.0 * (pp_d - 2.0)
                                 : 2.0 * (pp_d - 1.0);
    const double fill_drain = std::min(t.pp.count, uncovered);
    pp.exposed = (p.overlap.pp || p.schedule == pipeline_schedule::dualpipe) ? fill_drain * one : pp.total;
    return pp;
}

/// One data-parallel gradient stream: the dense parameters' reduction over DP x CP, or the routed
/// experts' over expert-DP (parallel/traffic.hpp), with its buckets and ZeRO gathers.
struct dp_stream {
    const comm_call* main = nullptr;  ///< one full bucket's collective
    data_size last_bucket{};          ///< the last (partial) bucket
    double buckets = 0;               ///< buckets per step
};

/// Data-parallel communication of a step and what the step waits for (file comment, "dp"): the
/// gradient buckets of the dense and expert streams back to back on one stream under the first
/// stage's last backward, the ZeRO-1/2 parameter gathers under the first forward, or ZeRO-3's
/// per-layer gathers and reduce-scatters; `stage_first_f` / `stage_first_b` are the first stage's
/// forward and backward of one micro-batch, `layer_f` / `layer_b` one layer's.
template <class Pricer>
[[nodiscard]] comm_time dp_exposure(const step_traffic& t, const commscale::plan& p, Pricer& price, double mb,
                                    int max_stage_layers, duration stage_first_f, duration stage_first_b,
                                    duration layer_f, duration layer_b) {
    comm_time dp;
    const dp_stream streams[] = {{&t.dp_main, t.dp_last_bucket, t.dp_bucket_count},
                                 {&t.dp_expert_main, t.dp_expert_last_bucket, t.dp_expert_bucket_count}};
    // dense gradients over DP x CP; the routed experts' over expert-DP when that differs (one stream)
    const bool dense_dp = !t.dp_main.empty(), expert_dp = !t.dp_expert_main.empty();
    if ((dense_dp || expert_dp) && p.zero < 3) {
        // the dense gradients' buckets, then the experts' on the same stream; the last bucket
        // (first layers, embedding) is the dense stream's where there is one
        duration last = seconds(0.0), reduce = seconds(0.0);
        double n = 0.0;
        bool first = true;
        for (const dp_stream& s : streams) {
            if (s.main->empty()) continue;
            const duration stream_last = price(s.main->group, s.main->op, s.last_bucket);
            const double ns = std::max(1.0, s.buckets);
            reduce += (ns > 1 ? (ns - 1.0) * price(s.main->group, s.main->op, s.main->bytes) : seconds(0.0)) + stream_last;
            n += ns;
            if (first) last = stream_last;
            first = false;
        }
        const double per_step = p.reduce_every_micro_batch ? mb : 1.0;
        // the first whole gather (the dense stream's where there is one) waits before the first forward
        duration first_gather = seconds(0.0), expert_first_gather = seconds(0.0);
        duration gather = detail::calls_time(t.dp_gather, price, &first_gather);
        if (expert_dp) gather += detail::calls_time(t.dp_expert_gather, price, &expert_first_gather);
        if (t.dp_gather.empty()) first_gather = expert_first_gather;
        dp.total = per_step * reduce + gather;
        duration exposed = reduce;
        if (p.overlap.dp) {
            // buckets ready uniformly through each chunk's last backward; one stream, back to back
            const int v = p.chunks();
            const double tau = reduce.value() / n, nc = n / static_cast<double>(v);
            const double w = stage_first_b.value() / static_cast<double>(v);
            double finish = -1e300;
            for (int j = v - 1; j >= 0; --j) {
                const double a = -w - static_cast<double>(j) * static_cast<double>(p.pp) * w;  // chunk j's last backward starts
                finish = std::max({finish + nc * tau, a + w / nc + nc * tau, a + w + tau});
            }
            exposed = seconds(std::max(std::min(finish, reduce.value()), last.value()));
            if (per_step > 1)  // earlier micro-batches' reductions run under the next forward and backward
                exposed += (per_step - 1.0) * std::max(seconds(0.0), reduce - (stage_first_f + stage_first_b));
        } else {
            exposed = per_step * reduce;
        }
        exposed += p.overlap.zero ? std::max(first_gather, gather - stage_first_f) : gather;
        dp.exposed = std::min(dp.total, exposed);
    } else if (dense_dp || expert_dp) {
        // ZeRO-3 / FSDP: per layer, an all-gather of its parameters in forward and in backward (every
        // micro-batch) and a reduce-scatter of its gradients in backward (the experts' on expert-DP)
        const double L = std::max(1, max_stage_layers);
        duration ag = seconds(0.0), rs = seconds(0.0);
        if (dense_dp) {
            ag = price(t.dp_main.group, collective_op::all_gather, t.zero3_gather_bytes / t.zero3_gathers);
            rs = price(t.dp_main.group, collective_op::reduce_scatter, t.dp_gradient_bytes / L);
        }
        if (expert_dp) {
            ag += price(t.dp_expert_main.group, collective_op::all_gather, t.zero3_expert_gather_bytes / t.zero3_gathers);
            rs += price(t.dp_expert_main.group, collective_op::reduce_scatter, t.dp_expert_gradient_bytes / L);
        }
        const double reductions = p.reduce_every_micro_batch ? mb : 1.0;
        dp.total = t.zero3_gathers * ag + reductions * L * rs;
        if (p.overlap.zero) {
            const duration fwd = ag + (L - 1.0) * std::max(seconds(0.0), ag - layer_f);
            const duration bwd_sync = L * std::max(seconds(0.0), ag + rs - layer_b) + rs;
            const duration bwd_plain = L * std::max(seconds(0.0), ag - layer_b);
            dp.exposed = mb * fwd + reductions * bwd_sync + (mb - reductions) * bwd_plain;
        } else {
            dp.exposed = dp.total;
        }
        dp.exposed = std::min(dp.total, dp.exposed);
    }
    return dp;
}

/// Activation CPU offloading (file comment, "offload"): `layers` layers of one micro-batch, each
/// `layer_f` forward and `layer_b` backward, the first plan.cpu_offloading_num_layers of them
/// offloaded, `mb` micro-batches. Zero without offloading. Out of line: off the planner's hot path.
[[nodiscard, gnu::cold, gnu::noinline]] inline comm_time offload_exposure(const commscale::transformer& m, const commscale::plan& p,
                                                const accelerator& acc, int layers, duration layer_f,
                                                duration layer_b, double mb) {
    comm_time o;
    const int n = std::min(p.cpu_offloading_num_layers, layers - 1);
    if (n <= 0) return o;
    // what the layer saves for backward, as the memory model counts it (step_memory)
    const double saved = in_bytes(activation_bytes_per_layer(m, memory_plan_of(m, p, static_cast<int>(mb))));
    const double copy = saved / acc.host_bandwidth.value();
    // the window map of AsyncDoubleBufferGroupOffloadHandler.__init__: group i's copy waits at layer w_i
    const int per = layers / n, extra = layers % n;
    int previous = 0, shift = 0;
    double wait = 0.0;
    for (int i = 0; i < n; ++i) {
        if (i < extra) shift = i + 1;
        const int w = per * (i + 1) - 1 + shift;
        const double span = static_cast<double>(i == 0 ? w : w - previous);  // group 0 starts after layer 0
        wait += std::max(0.0, copy - span * layer_f.value()) + std::max(0.0, copy - span * layer_b.value());
        previous = w;
    }
    o.total = seconds(mb * 2.0 * n * copy);
    o.exposed = seconds(mb * wait);
    return o;
}

/// The largest of compute, the exposed part of each dimension's communication and the bubble;
/// memory when the plan does not fit.
[[nodiscard]] inline step_bottleneck step_verdict(const step_breakdown& r) {
    if (!r.fits_in_memory) return step_bottleneck::memory;
    struct cand { step_bottleneck b; double v; };
    const cand cands[] = {{step_bottleneck::compute, r.compute.value()},
                          {step_bottleneck::tp_comm, r.tp.exposed.value()},
                          {step_bottleneck::pp_comm, r.pp.exposed.value()},
                          {step_bottleneck::dp_comm, r.dp.exposed.value()},
                          {step_bottleneck::bubble, r.bubble.value()},
                          {step_bottleneck::cp_comm, r.cp.exposed.value()},
                          {step_bottleneck::ep_comm, r.ep.exposed.value()},
                          {step_bottleneck::offload, r.offload.exposed.value()}};
    cand best = cands[0];
    for (const auto& x : cands)
        if (x.v > best.v) best = x;
    return best.b;
}

/// The compute model's parameters of a step in `precision`: the defaults or `o.constants`, times
/// the options' and the cluster's training-run calibration (fit-step); an efficiency never passes 1.
[[nodiscard]] inline compute_params step_compute_params(const cluster& c, const accelerator& acc, dtype precision, fp8_recipe recipe,
                                                        framework stack, const step_options& o) {
    compute_params cpar = compute_params_for(acc, precision, o.constants, stack, recipe);
    const double kernel = o.kernel_efficiency * c.compute.kernel_efficiency;
    cpar.gemm_efficiency = std::min(1.0, cpar.gemm_efficiency * kernel);
    cpar.bf16_gemm_efficiency = std::min(1.0, cpar.bf16_gemm_efficiency * kernel);
    cpar.memory_efficiency = std::min(1.0, cpar.memory_efficiency * kernel);
    cpar.attention_scale = std::min(1.0 / cpar.attention_efficiency, kernel * c.compute.attention_efficiency);
    cpar.kernel_overhead_s *= c.compute.kernel_overhead;
    cpar.moe_launch_overhead_s *= c.compute.kernel_overhead;
    cpar.ssd_scan_efficiency = std::min(1.0, cpar.ssd_scan_efficiency * kernel);
    cpar.finish();
    return cpar;
}

/// plan::first_last_layers_bf16: each BF16 layer costs what a layer of the same plan in bf16
/// costs (the compute model in bf16: no casts, BF16 GEMMs), `lc` less; the first stage runs the
/// start layers and the last stage the end layers (with one stage, both; a stage's share is at
/// most its layers, as Megatron-Core limits each count to layers / pp). The 16-bit activations
/// these layers save, and their 16-bit sequence-parallel gathers, are not charged. Cold.
[[gnu::cold, gnu::noinline]] inline bf16_layers_extra bf16_layers_extra_of(const transformer& m, const cluster& c,
                                                                            const accelerator& acc, const plan& p,
                                                                            const step_options& o, const layer_costs& lc) {
    plan q = p;
    q.precision = dtype::bf16;
    q.fp8_scaling = fp8_recipe::delayed;
    q.first_last_layers_bf16 = false;
    const compute_params b = step_compute_params(c, acc, dtype::bf16, fp8_recipe::delayed, p.stack, o);
    const layer_costs l16 = layer_costs_of(m, q, b, b.gemm_peak);
    const duration f = l16.forward - lc.forward, bw = l16.backward - lc.backward;
    bf16_layers_extra x;
    const double start = p.bf16_layers_at_start, end = p.bf16_layers_at_end;
    if (p.pp == 1) {
        x.first_forward = (start + end) * f;
        x.first_backward = (start + end) * bw;
    } else {
        x.first_forward = start * f;
        x.first_backward = start * bw;
        x.last = end * (f + bw);
    }
    return x;
}

}  // namespace detail

namespace detail {
/// predict_step_with once `m` and `c` are known to be valid (validate(transformer),
/// validate(cluster)): the plan and the options are still checked. The planner validates its
/// model and cluster once per search and predicts each plan through this.
template <class Pricer>
[[nodiscard]] step_breakdown predict_step_valid_model_cluster(const transformer& m, const cluster& c, const accelerator& acc,
                                                              const plan& p, Pricer&& price, const step_options& o) {
    validate(p, m, c);
    if (!(o.kernel_efficiency > 0.0) || o.kernel_efficiency > 1.0)
        throw input_error("step_options.kernel_efficiency", detail::number_text(o.kernel_efficiency), "a fraction in (0, 1]");
    step_breakdown r;
    const double n_gpus = static_cast<double>(p.gpus());
    if (!(o.constants == fitted_compute_constants)) validate(o.constants, "step_options.constants");  // the defaults are valid
    const compute_params cpar = detail::step_compute_params(c, acc, p.precision, p.fp8_scaling, p.stack, o);
    const flop_rate peak = cpar.gemm_peak;
    const double seq = p.seq, batch = p.global_batch;
    const layer_flops step_layer = layer_forward_flops(m, seq, batch);  // model_flops' and hardware_flops' layer
    r.model_flops = 3.0 * forward_flops(m, step_layer, seq, batch);    // model_flops(m, seq, batch)
    // hardware FLOPs include the multi-token-prediction modules (executed, on the last stage);
    // model FLOPs (MFU) are the main model's, as DeepSeek's per-token figures
    r.hardware_flops = hardware_flops(m, step_layer, r.model_flops, p.recompute_mode, p.full_recompute_share(m.layers)) +
                       3.0 * mtp_forward_flops(m, seq, batch);
    r.micro_batches = p.micro_batches();
    const double mb = r.micro_batches;

    // per-layer and per-stage times of one micro-batch
    const detail::layer_costs lc = detail::layer_costs_of(m, p, cpar, peak);
    r.layer = lc.layer;
    const duration layer_f = lc.forward, layer_b = lc.backward, attn_core = lc.attention, gemm_layer = lc.gemm,
                   layer_w = lc.weight_gradients;
    const stage_layout layout = layout_of(p, m.layers);  // Megatron-Core's split (parallel/plan.hpp)
    r.first_stage_layers = layout.first;
    r.last_stage_layers = layout.last;
    r.max_stage_layers = layout.most;
    detail::bf16_layers_extra bf16_extra{};
    if (p.first_last_layers_bf16) [[unlikely]]
        bf16_extra = detail::bf16_layers_extra_of(m, c, acc, p, o, lc);
    const detail::stage_times stages = detail::stage_times_of(lc, layout, p.pp, bf16_extra);
    // groups placed on NVLink domains (the node, or an NVL72 rack of trays: comm_view); the
    // pricer sees placements counted per domain
    const int domain = c.domain_gpus();
    const step_traffic t = plan_traffic(m, p, domain);
    const duration slowest = stages.slowest + detail::gradient_accumulation_copy(p, t.parameters_per_gpu, cpar),
                   stage_first_f = stages.first_forward, stage_first_b = stages.first_backward;
    r.stage_microbatch = slowest;
    const duration busy_compute = mb * slowest;
    r.optimizer = p.compute_efficiency ? seconds(0.0) : optimizer_time(detail::optimizer_shard_parameters(m, p, t), cpar, p.optimizer_state_bytes);
    duration hidden = seconds(0.0);  // communication that runs beside compute
    r.tp = detail::tp_exposure(t, p, price, mb * static_cast<double>(r.max_stage_layers) * gemm_layer);
    r.cp = detail::cp_exposure(t, p, price, mb * static_cast<double>(r.max_stage_layers) * attn_core);
    r.ep = detail::ep_exposure(t, p, price, busy_compute);
    hidden += (r.tp.total - r.tp.exposed) + (r.cp.total - r.cp.exposed) + (r.ep.total - r.ep.exposed);
    // bubble
    const duration busy = busy_compute + r.tp.exposed + r.cp.exposed + r.ep.exposed;
    r.bubble = pipeline_bubble(p.schedule, p.pp, r.micro_batches, p.chunks(), busy / mb,
                               static_cast<double>(r.max_stage_layers) * layer_b,
                               static_cast<double>(r.max_stage_layers) * layer_w);
    r.pp = detail::pp_exposure(t, p, price);
    // DP
    r.dp_window = stage_first_b;  // backward of the last micro-batch on the first stage
    r.dp = detail::dp_exposure(t, p, price, mb, r.max_stage_layers, stage_first_f, stage_first_b, layer_f, layer_b);
    hidden += r.dp.total - r.dp.exposed;
    r.overlap_slowdown =
        p.compute_efficiency ? seconds(0.0) : overlap_compute_slowdown * c.compute.overlap_slowdown * hidden;
    r.compute = busy_compute + r.optimizer + r.overlap_slowdown;
    r.efficiency = r.hardware_flops.value() / (n_gpus * peak.value() * r.compute.value());
    r.exposed_comm = r.tp.exposed + r.cp.exposed + r.ep.exposed + r.pp.exposed + r.dp.exposed;
    if (p.cpu_offloading_num_layers > 0) [[unlikely]]
        r.offload = detail::offload_exposure(m, p, acc, r.max_stage_layers, layer_f, layer_b, mb);
    r.step = r.compute + r.bubble + r.exposed_comm + r.offload.exposed;

    // derived figures
    const double st = r.step.value();
    r.bubble_fraction = r.bubble.value() / st;
    r.mfu = r.model_flops.value() / (st * n_gpus * peak.value());
    r.hfu = r.hardware_flops.value() / (st * n_gpus * peak.value());
    r.model_flops_per_gpu = r.model_flops / (n_gpus * r.step);
    r.hardware_flops_per_gpu = r.hardware_flops / (n_gpus * r.step);
    r.tokens_per_s = batch * seq / st;

    // memory (first pipeline stage holds the most activations)
    detail::step_memory(m, p, acc, r);

    // required inter-node bandwidth to hide the DP reduction under its window
    // per domain, then per node: a domain's NICs are its nodes' NICs
    r.dp_inter_node_bytes = dp_inter_node_bytes_per_node(t, domain);
    if (domain != c.node.gpus) r.dp_inter_node_bytes = r.dp_inter_node_bytes * (static_cast<double>(c.node.gpus) / domain);
    r.required_inter_node = required_bandwidth(r.dp_inter_node_bytes, r.dp_window);
    r.required_inter_node_step = required_bandwidth(r.dp_inter_node_bytes, r.compute);

    // verdict
    r.bottleneck = detail::step_verdict(r);
    return r;
}
}  // namespace detail

/// @brief Predicts one step of `p` training `m` on `c`, whose GPUs are `acc`, pricing every
/// collective with `price(const placement&, collective_op, data_size) -> duration` (the
/// collective model, a calibrated table, or a closed form). Validates the model, the cluster and
/// the plan (input_error). Formulas in the file comment.
template <class Pricer>
[[nodiscard]] step_breakdown predict_step_with(const transformer& m, const cluster& c, const accelerator& acc,
                                               const plan& p, Pricer&& price, const step_options& o = {}) {
    validate(m, "model");
    validate(c, "cluster");
    return detail::predict_step_valid_model_cluster(m, c, acc, p, std::forward<Pricer>(price), o);
}

/// @brief Prices a collective with the library's collective model (collective/model.hpp):
/// `predict_collective(cluster, group, op, bytes, {algo, mode}).time`. Point it at
/// `comm_view(cluster)` (as predict_step does) to convert an NVLink domain spanning nodes once,
/// not per price.
struct collective_pricer {
    const cluster* c = nullptr;
    collective_options options{};
    [[nodiscard]] duration operator()(const placement& g, collective_op op, data_size s) const {
        return predict_collective_time(*c, g, op, s, options);
    }
};

namespace detail {
/// collective_pricer for one prediction in realistic mode with the automatic choice: the
/// cluster's rate_base (its protocols' latencies and payload fractions, channel caps and
/// efficiencies) computed once for the prediction's collectives instead of once per collective,
/// and the checked placement's path kept for the next collective of the same group (a step prices
/// the TP and the DP group twice or more in a row), with the last two times on that path: a
/// collective of the same bytes and the same cost (cost_twin: a DP stream's all-gather after its
/// reduce-scatter) is not priced again; its rate context is kept too, its saturation updated in
/// place when the bytes change (a TP all-reduce and all-gather of one buffer share it). The same
/// times to the bit (collective_time_on_base). One
/// prediction's own: not shared between threads.
class based_collective_pricer {
public:
    based_collective_pricer(const cluster& c, const collective_options& o) : c_(&c), options_(o), base_(make_rate_base(c)) {}
    [[nodiscard]] duration operator()(const placement& g, collective_op op, data_size s) {
        if (has_path_ && g == last_) {
            check_bytes(s);  // the placement was checked with the path
            const collective_op twin = cost_twin(op);
            for (const priced& e : priced_)
                if (e.bytes == s.value() && e.op == twin) return seconds(e.time);
        } else {
            path_ = make_path(*c_, g, check_inputs(*c_, g, s));
            last_ = g;
            has_path_ = true;
            priced_[0].bytes = priced_[1].bytes = -1.0;  // no time on the new path yet
            x_bytes_ = -1.0;                             // nor a saturation
        }
        const double b = s.value();
        if (g.ranks <= 1 || b <= 0) return seconds(0);
        if (b != x_bytes_) {  // collective_time_on_path's finish_context, in place
            set_saturation(base_.x, base_, path_, b);
            x_bytes_ = b;
        }
        const duration t = automatic_time(*c_, path_, base_.x, g, op, s, options_);
        priced_[next_] = priced{b, cost_twin(op), t.value()};
        next_ ^= 1u;
        return t;
    }

private:
    struct priced {
        double bytes = -1.0;  ///< -1: empty (checked sizes are >= 0)
        collective_op op = collective_op::all_reduce;
        double time = 0.0;
    };
    const cluster* c_;
    collective_options options_;
    rate_base base_;  ///< its context's saturation fields (set_saturation's) are path_'s at x_bytes_
    double x_bytes_ = -1.0;  ///< -1: no saturation set yet
    placement last_{};
    group_path path_{};
    bool has_path_ = false;
    std::array<priced, 2> priced_{};  ///< the last two times on path_, the older overwritten first
    unsigned next_ = 0;
};

template <class Step>
[[nodiscard]] step_breakdown price_on(const cluster& view, const collective_options& co, Step&& step) {
    if (co.algo == algorithm::automatic && co.mode == efficiency_mode::realistic)
        return step(based_collective_pricer(view, co));
    return step(collective_pricer{&view, co});
}
}  // namespace detail

/// @brief Predicts one step of `p` training `m` on `c` with GPUs `acc`, every collective priced
/// by the collective model in `o.mode` with `o.algo`. See predict_step_with.
[[nodiscard]] inline step_breakdown predict_step(const transformer& m, const cluster& c, const accelerator& acc,
                                                 const plan& p, const step_options& o = {}) {
    const collective_options co{o.algo, o.mode, o.candidates};
    // the model and the cluster are checked before the pricer reads the cluster
    validate(m, "model");
    validate(c, "cluster");
    auto step = [&](auto&& price) { return detail::predict_step_valid_model_cluster(m, c, acc, p, price, o); };
    if (!c.domain_spans_nodes()) return detail::price_on(c, co, step);  // no copy
    const cluster view = comm_view(c);
    return detail::price_on(view, co, step);
}

/// @brief As above, with the accelerator named by the cluster's nodes (`c.node.accelerator`,
/// catalog hardware/accelerators.hpp); input_error if the name is unknown.
[[nodiscard]] inline step_breakdown predict_step(const transformer& m, const cluster& c, const plan& p,
                                                 const step_options& o = {}) {
    if (auto a = find_accelerator(c.node.accelerator)) return predict_step(m, c, *a, p, o);
    return predict_step(m, c, accelerator_by_name(c.node.accelerator, "cluster.accelerator"), p, o);
}

}  // namespace commscale
