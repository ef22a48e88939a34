#pragma once
/// @file parallel/traffic.hpp
/// @brief The communication one training step generates, per parallel dimension: which
/// collective, how many bytes per call (nccl-tests convention: the full buffer), how many calls
/// per step on one GPU, and on which group placement. Pricing is done by the step predictor
/// (predict/step.hpp) with the collective model; this header only counts. Allocation-free.
///
/// Per dimension (b micro-batch, s sequence, h hidden, e bytes per activation element on the wire,
/// t = TP, c = CP, l_s = layers per pipeline stage, m micro-batches per step). Under FP8/FP4
/// training e is 2 (16-bit) except in the sequence-parallel all-gathers, which carry the GEMM
/// inputs in the GEMM precision (plan_traffic's comment has the sources):
/// * TP: per layer 2 all-reduces of b (s/c) h e in the forward (after attention and after the
///   MLP) and 2 in the backward (Shoeybi et al. 2019, "Megatron-LM", Sec. 3, Fig. 4); full
///   recompute repeats the forward's 2 (here and below, on the layers it recomputes:
///   plan::full_recompute_share). With sequence parallelism each all-reduce becomes a
///   reduce-scatter + an all-gather of the same buffer (Korthikanti et al. 2022, Sec. 4.2.2):
///   same bytes on the wire, since ring all-reduce = reduce-scatter + all-gather. An MoE layer
///   whose experts are not split over TP (expert TP != TP) keeps only the attention's pair.
/// * CP: ring attention passes each rank's K and V block, 2 b (s/c) (kv/t) e bytes, c - 1 times
///   per layer forward; backward passes K/V again plus their gradients (2x) (Liu et al. 2023,
///   "Ring Attention with Blockwise Transformers"; Megatron-Core context parallelism). Hybrid
///   models: the ring on the attention layers only; each Mamba-2 layer instead turns its sequence
///   shards into head shards and back (megatron/core/ssm/mamba_context_parallel.py
///   `pre_conv_ssm`: five all-to-alls of z, x, B, C, dt; `post_conv_ssm`: one of the output):
///   6 all-to-alls per pass over the CP group, forward and backward (and the forward's again
///   with full recompute), carrying b (s/c) (2 d_in + 2 r G N + H + d_in) / t 16-bit values per
///   rank in all (r = c / (G/t) when a TP rank has fewer groups than c, B and C repeated; else 1);
///   priced as 6 calls of the mean size.
/// * TP of a hybrid model: one block per layer (Mamba-2 mixer, attention, MLP or MoE), each with
///   one column- and one row-parallel projection: 1 all-reduce forward and 1 backward per layer.
/// * EP: per MoE layer one all-to-all dispatching the tokens to their experts and one combining
///   them, forward and backward (4 per layer; 6 with full recompute); k b (s/c) h e / t bytes
///   per rank with top-k routing (Lepikhin et al. 2021, "GShard", Sec. 2.2; Fedus et al. 2022),
///   times the busiest rank's effective load (plan::effective_expert_load: routing imbalance,
///   capped by a capacity factor when tokens are dropped, the capacity when padded); LatentMoE
///   dispatches the projected tokens, l = moe_latent_size wide instead of h. The group:
///   ep ranks at stride etp (parallel/plan.hpp group_placement), inside a node or across the NICs.
/// * ETP (expert tensor parallelism different from TP, 1 < etp != tp): per MoE layer the routed
///   tokens that arrived by the all-to-all are all-gathered over the etp ranks before the expert
///   GEMMs and reduce-scattered after them, forward and backward (Megatron-Core
///   MoEAlltoAllTokenDispatcher: `gather_from_sequence_parallel_region` / `reduce_scatter_to_
///   sequence_parallel_region` over the expert-TP group): buffers of k b (s/c) h e x etp / t.
///   With etp = tp these are the layer's MLP-side TP collectives, counted under TP as before;
///   with etp = 1 there are none (whole experts per rank).
/// * PP: per micro-batch per stage boundary one activation send forward and one gradient send
///   backward, b (s/c) h e bytes, cut to 1/t per TP rank by the scatter-gather optimization
///   (each TP rank sends its slice over its own rail, then an NVLink all-gather rebuilds it:
///   Narayanan et al. 2021 Sec. 4.1; gpu-fabrics-for-genai "one-eighth smaller with eight
///   tensor parallel GPUs"). With sequence parallelism the activation is already split 1/t.
///   The interleaved schedule crosses V times as many boundaries.
/// * DP: the local gradient shard (parameters / (t p), expert parameters / (ep etp p) instead)
///   reduced once per step, in buckets: the dense parameters' across dp x c replicas, the routed
///   experts' across the expert-DP group of t c d / (etp ep) replicas (Megatron-Core's
///   distributed optimizer: one buffer per group, the same bucket size); the two are one stream
///   when the groups coincide (no EP, etp = tp). An all-reduce (ZeRO 0), a reduce-scatter
///   of gradients + all-gather of updated parameters (ZeRO 1/2: same volume), or ZeRO-3/FSDP
///   all-gathers of parameters in forward and backward + a reduce-scatter of gradients: 3 x
///   instead of 2 x the shard, the ~1.5x of gpu-fabrics-for-genai (Rajbhandari et al. 2020,
///   "ZeRO", Sec. 7.2.2: "1.5x communication volume").
///
/// Formulas and their sources, in one place: docs/model.md#the-step-term-by-term.

#include <algorithm>
#include <cmath>

#include "../collective/types.hpp"
#include "../workload/flops.hpp"
#include "../workload/transformer.hpp"
#include "plan.hpp"

namespace commscale {

/// @brief One kind of collective call of a dimension: `count` calls per step on each GPU, each
/// of `bytes` (nccl-tests convention), on the group `group`.
struct comm_call {
    collective_op op = collective_op::all_reduce;
    data_size bytes{};
    double count = 0;   ///< calls per step, per GPU
    placement group{};

    /// @brief True when the call does nothing (no calls, no bytes, or a group of one rank).
    [[nodiscard]] constexpr bool empty() const { return count <= 0 || bytes.value() <= 0 || group.ranks < 2; }
};

/// @brief Everything one step sends, per dimension.
struct step_traffic {
    comm_call tp_main{};       ///< all-reduce (or reduce-scatter with sequence parallelism)
    comm_call tp_gather{};     ///< all-gather with sequence parallelism (empty otherwise)
    double tp_forward_share = 0.5;  ///< share of tp_main's calls in forward passes (recomputed ones included)
    comm_call cp{};            ///< ring send/recv of K/V blocks
    comm_call cp_mamba{};      ///< hybrid models: the Mamba-2 and Gated DeltaNet layers' CP all-to-alls (sequence <-> head shards)
    comm_call ep{};            ///< all-to-all of tokens
    comm_call etp_gather{};    ///< all-gather of the routed tokens over expert-TP (1 < etp != tp; else empty)
    comm_call etp_reduce{};    ///< reduce-scatter of the experts' output over expert-TP (1 < etp != tp)
    comm_call pp{};            ///< send/recv between neighbouring stages
    comm_call pp_gather{};     ///< intra-node all-gather after a scatter-gather send
    comm_call dp_main{};       ///< gradient all-reduce / reduce-scatter (one bucket per call)
    comm_call dp_gather{};     ///< parameter all-gather (ZeRO 1-3), one bucket per call
    double dp_bucket_count = 0;   ///< buckets per step (the last one may be partial)
    data_size dp_last_bucket{};   ///< size of the last (possibly partial) gradient bucket
    data_size dp_gradient_bytes{};  ///< the local gradient shard reduced per step (per GPU)
    data_size zero3_gather_bytes{};  ///< ZeRO-3 parameter bytes gathered per step (fwd + bwd, every micro-batch), per GPU
    double zero3_gathers = 0;       ///< ZeRO-3 all-gather calls per step (2 per layer per micro-batch)
    // The routed experts' gradients over the expert-DP group, when it differs from the DP group
    // (EP > 1 or etp != tp); empty otherwise (then dp_* above carry the experts too).
    comm_call dp_expert_main{};        ///< expert gradient all-reduce / reduce-scatter, one bucket per call
    comm_call dp_expert_gather{};      ///< expert parameter all-gather (ZeRO 1-3), one bucket per call
    double dp_expert_bucket_count = 0;
    data_size dp_expert_last_bucket{};
    data_size dp_expert_gradient_bytes{};  ///< the local expert gradient shard reduced per step
    data_size zero3_expert_gather_bytes{};  ///< ZeRO-3 expert parameter bytes gathered per step, per GPU
    double parameters_per_gpu = 0;         ///< parameters_per_gpu(m, p): what DP reduces, before ZeRO sharding
    double expert_parameters_per_gpu = 0;  ///< of them, the routed experts' when their reduction is separate, else 0
};

namespace detail {
/// parameters_per_gpu of Megatron-Core's layout with the embedding/loss counted in the split
/// (plan.hpp stage_layers): the first stage holds its layers + the input table (vocab x h / t),
/// the last its layers + the output table, the middle ones layers only; the heaviest stage.
/// `per_layer`: one layer's parameters on this GPU. Out of line: off the default path.
[[gnu::noinline]] constexpr double split_layout_parameters(const commscale::transformer& m, const commscale::plan& p, double per_layer) {
    const double table = static_cast<double>(m.vocab) * m.hidden / p.tp;
    double most = std::max(stage_layers(p, m.layers, 0) * per_layer + table, stage_layers(p, m.layers, p.pp - 1) * per_layer + table);
    if (p.pp > 2) most = std::max(most, stage_layers(p, m.layers, 1) * per_layer);
    return most;
}
}  // namespace detail


/// @brief Parameters held by one GPU under the plan, before ZeRO sharding: layer parameters /
/// (t p), routed experts' MLPs / (ep etp p) instead (expert parallelism and expert tensor
/// parallelism; / (ep t p) with etp = tp), embeddings / t (vocabulary-parallel, Shoeybi et al.
/// 2019 Sec. 3) counted on the first and last stages (we charge the larger: one table per stage
/// end). Layers: those of the stage holding the most (max_stage_layers), which has the most to reduce.
/// With the embedding/loss counted in the pipeline split, the heaviest stage of the explicit layout.
/// `layers_per_stage`: max_stage_layers(p, m.layers), when at hand.
[[nodiscard]] constexpr double parameters_per_gpu(const transformer& m, const plan& p, double layers_per_stage) {
    const auto lp = parameters_per_layer(m);
    // shared experts and dense layers' MLPs are split like attention (and a hybrid model's Mamba-2
    // mixers, in lp.attention); routed experts / ep
    const double dense = lp.attention + lp.router + lp.norms + lp.shared + (m.experts > 1 ? 0.0 : lp.mlp);
    const double expert = m.experts > 1 ? lp.mlp / p.ep : 0.0;
    const double emb = static_cast<double>(m.vocab) * m.hidden * (m.tied_embeddings || p.pp > 1 ? 1.0 : 2.0);
    if (p.pipeline_split_extras() > 0 && p.pp > 1) {
        const double per_layer = p.expert_tp() != p.tp ? dense / p.tp + expert / p.expert_tp() : (dense + expert) / p.tp;
        return detail::split_layout_parameters(m, p, per_layer);
    }
    if (p.expert_tp() != p.tp) return layers_per_stage * (dense / p.tp + expert / p.expert_tp()) + emb / p.tp;
    return layers_per_stage * (dense + expert) / p.tp + emb / p.tp;
}
[[nodiscard]] constexpr double parameters_per_gpu(const transformer& m, const plan& p) {
    return parameters_per_gpu(m, p, max_stage_layers(p, m.layers));
}

/// @brief The routed experts' part of parameters_per_gpu: layers of the largest stage x their
/// MLPs / (ep etp); 0 for a dense model. What the expert-DP group reduces.
/// `layers_per_stage`: max_stage_layers(p, m.layers), when at hand.
[[nodiscard]] constexpr double expert_parameters_per_gpu(const transformer& m, const plan& p, double layers_per_stage) {
    if (m.experts <= 1) return 0.0;
    return layers_per_stage * parameters_per_layer(m).mlp / (static_cast<double>(p.ep) * p.expert_tp());
}
[[nodiscard]] constexpr double expert_parameters_per_gpu(const transformer& m, const plan& p) {
    return expert_parameters_per_gpu(m, p, max_stage_layers(p, m.layers));
}

/// @brief True when the routed experts' gradients are reduced over a group other than the dense
/// parameters' DP group: an MoE model with EP > 1 or etp != tp.
[[nodiscard]] constexpr bool separate_expert_reduction(const transformer& m, const plan& p) {
    return m.experts > 1 && (p.ep > 1 || p.expert_tp() != p.tp);
}

namespace detail {
/// The hybrid model's part of plan_traffic (file comment), applied to the transformer's counts:
/// TP one collective pair per layer, not two (each layer one block); the CP ring on the attention
/// layers only; the Mamba-2 layers' CP all-to-alls, per layer and pass 6 calls over the CP group,
/// b (s/c) (2 d_in + 2 r G N + H + d_in) / t 16-bit values per rank in all; the Gated DeltaNet
/// layers' (Megatron-Core megatron/core/ssm/gated_delta_net: in_proj's output to head shards,
/// `_all_to_all_cp2hp`, and the gated norm's output back, `_all_to_all_hp2cp`), per layer and pass
/// 2 calls, b (s/c) (2 qk + 2 v + 2 Hv + v) / t values in all; one call list of both kinds at
/// their mean size. `stage_layers`: micro-batches x layers of the busiest stage. Out of line: off
/// the transformer's path.
[[gnu::cold, gnu::noinline]] inline void hybrid_traffic(const commscale::transformer& m, const commscale::plan& p,
                                                        double stage_layers, step_traffic& t) {
    t.tp_main.count *= 0.5;
    t.tp_gather.count *= 0.5;
    t.cp.count *= m.attention_fraction();
    const hybrid_shape& y = *m.hybrid;
    if (p.cp <= 1 || (y.mamba_heads <= 0 && y.gdn_v_heads <= 0)) return;
    const double tp_ranks = p.tp, tokens = static_cast<double>(p.micro_batch) * (static_cast<double>(p.seq) / p.cp);
    const double full = p.full_recompute_share(m.layers);  // the recomputed forwards' share (0 without full recompute)
    double calls = 0.0, values = 0.0;  // per layer and pass, both kinds weighted by their shares
    if (y.mamba_heads > 0) {
        const double groups_local = static_cast<double>(y.mamba_groups) / p.tp;
        const double repeat = groups_local < p.cp ? p.cp / groups_local : 1.0;  // B, C repeated when a rank has < cp groups
        const double width = (2.0 * y.mamba_inner() + 2.0 * repeat * y.mamba_groups * y.ssm_state + y.mamba_heads + y.mamba_inner()) / tp_ranks;
        calls += m.mamba_fraction() * 6.0;
        values += m.mamba_fraction() * tokens * width;
    }
    if (y.gdn_v_heads > 0) {
        calls += m.gdn_fraction() * 2.0;
        values += m.gdn_fraction() * tokens * (y.gdn_in_proj_width() + y.gdn_v_dim()) / tp_ranks;
    }
    if (calls <= 0.0) return;
    t.cp_mamba.op = collective_op::all_to_all;
    t.cp_mamba.group = t.cp.group;
    t.cp_mamba.bytes = bytes(values * 2.0 / calls);
    t.cp_mamba.count = stage_layers * calls * (2.0 + full);
}
}  // namespace detail

/// @brief Expected number of the `ep` expert-parallel ranks that one token's `k` experts fall on,
/// the `experts` split evenly over the ranks and the k drawn uniformly without replacement (the
/// random routing of Megatron-Core's `--moe-router-force-load-balancing`): ep (1 - C(E - E/ep, k) /
/// C(E, k)). What a flex dispatcher (DeepEP, HybridEP) sends per token, against the all-to-all
/// dispatcher's k copies. Models with group-limited routing (DeepSeek-V3's node limit) hit fewer.
[[nodiscard]] constexpr double expected_destination_ranks(int experts, int k, int ep) {
    if (ep <= 1 || experts <= 0 || k <= 0) return ep <= 1 ? 1.0 : static_cast<double>(k);
    const double E = experts, per_rank = static_cast<double>(experts) / ep;
    double none = 1.0;  // P(no expert of the token on a given rank)
    for (int i = 0; i < k && i < experts; ++i) none *= std::max(0.0, E - per_rank - i) / (E - i);
    return ep * (1.0 - none);
}

/// @brief The traffic of one step of `p` training `m` on nodes of `gpus_per_node` GPUs.
/// Formulas in the file comment. Assumes a validated plan.
[[nodiscard]] constexpr step_traffic plan_traffic(const transformer& m, const plan& p, int gpus_per_node) {
    step_traffic t;
    // e: a GEMM input's element, what Transformer Engine all-gathers under sequence parallelism
    // (its userbuffers allocate every all-gather buffer in FP8 under an FP8 recipe, transformer_engine/
    // pytorch/module/base.py initialize_ub: "AllGather buffers use fp8 when using fp8 recipe"; the
    // unfused path quantizes before gathering too). a: everything else on the wire stays 16-bit
    // under FP8/FP4 training: GEMM outputs reduce-scattered or all-reduced, pipeline sends
    // (Megatron-Core's pipeline_dtype, the parameters' dtype), K/V blocks of the context-parallel ring,
    // tokens dispatched to experts (megatron/core/transformer/moe/fused_a2a.py: "Currently, we do not
    // support fp8 dispatch")
    const double e = dtype_bytes(p.precision);
    const double a = std::max(e, 2.0);
    const double b = p.micro_batch;
    const double s_local = static_cast<double>(p.seq) / p.cp;
    const double h = m.hidden;
    const double mb = p.micro_batches();
    const double chunks = p.chunks();
    const double layers_stage = max_stage_layers(p, m.layers);  // the slowest stage sets the pace
    // the share of the layers whose forward full recompute repeats, with its TP collectives
    // (recompute_method block: N per model chunk; 0 without full recompute)
    const double full = p.full_recompute_share(m.layers);
    const double activation = b * s_local * h * a;  // one layer's output on one TP group

    // Tensor parallelism
    // An MoE layer whose experts are not split over TP (expert TP != TP) sends each TP rank's
    // sequence shard to the experts over EP: its MLP has no TP collective (Megatron-Core's
    // MoEAlltoAllTokenDispatcher gathers over the expert-TP group only, the etp collectives
    // below), and only the attention's pair remains, forward and backward. With expert TP = TP the
    // dispatcher's gather and reduce-scatter over TP are counted as the dense MLP's pair.
    const double moe_without_tp = m.experts > 1 && p.expert_tp() != p.tp ? m.moe_fraction() : 0.0;
    const double tp_per_layer = (4.0 + 2.0 * full) * (1.0 - 0.5 * moe_without_tp);
    t.tp_main.group = group_placement(p, parallel_dim::tp, gpus_per_node);
    t.tp_main.bytes = bytes(activation);
    t.tp_main.count = p.tp > 1 ? mb * layers_stage * tp_per_layer : 0.0;
    t.tp_forward_share = (2.0 + 2.0 * full) / (4.0 + 2.0 * full);
    if (p.sequence_parallel) {
        t.tp_main.op = collective_op::reduce_scatter;
        t.tp_gather = t.tp_main;
        t.tp_gather.op = collective_op::all_gather;
        t.tp_gather.bytes = bytes(b * s_local * h * e);
        // not counted: the backward gathers each column-parallel GEMM's input again for its weight
        // gradient, always under the input gradient's GEMM (Megatron-Core tensor_parallel/layers.py
        // LinearWithGradAccumulationAndAsyncCommunication.backward, async; TE's bulk overlaps)
    } else {
        t.tp_main.op = collective_op::all_reduce;
    }

    // Context parallelism: K and V blocks around the ring, c - 1 hops per layer and pass
    // K/V heads are split across TP ranks; with fewer K/V heads than ranks each rank keeps one
    // MLA: keys a (d_n + d_r) and values a d_v wide after the up-projection, one pair per head
    const double kv_width = m.is_mla() ? 0.5 * m.heads * static_cast<double>(m.qk_head_dim() + m.v_head_dim) : m.kv_dim();
    const double kv_local = kv_width * (m.kv_heads >= p.tp ? 1.0 / p.tp : 1.0 / (m.kv_heads > 0 ? m.kv_heads : 1));
    t.cp.op = collective_op::send_recv;
    t.cp.group = group_placement(p, parallel_dim::cp, gpus_per_node);
    t.cp.bytes = bytes(2.0 * b * s_local * kv_local * a);
    t.cp.count = p.cp > 1 ? mb * layers_stage * (p.cp - 1) * ((1.0 + full) + 2.0) : 0.0;

    // Expert parallelism: dispatch + combine, forward and backward
    if (m.experts > 1 && p.ep > 1) {
        const double k = m.experts_per_token;
        t.ep.op = collective_op::all_to_all;
        t.ep.group = group_placement(p, parallel_dim::ep, gpus_per_node);
        // the all-to-all finishes when the busiest rank has received its tokens: x the effective load
        t.ep.bytes = bytes(k * b * s_local * m.expert_io() * a / p.tp * p.effective_expert_load());
        // the flex dispatcher sends a token once per destination rank, not once per expert
        if (p.dispatcher != moe_token_dispatcher::alltoall)
            t.ep.bytes = t.ep.bytes * (expected_destination_ranks(m.experts, m.experts_per_token, p.ep) / k);
        t.ep.count = mb * layers_stage * m.moe_fraction() * (4.0 + 2.0 * full);  // MoE layers only
    }
    // Expert tensor parallelism apart from TP: all-gather before, reduce-scatter after the experts
    if (m.experts > 1 && p.expert_tp() > 1 && p.expert_tp() != p.tp) {
        const double k = m.experts_per_token;
        t.etp_gather.op = collective_op::all_gather;
        t.etp_gather.group = group_placement(p, parallel_dim::etp, gpus_per_node);
        t.etp_gather.bytes = bytes(k * b * s_local * m.expert_io() * a * p.expert_tp() / p.tp * p.effective_expert_load());
        t.etp_gather.count = mb * layers_stage * m.moe_fraction() * (2.0 + full);
        t.etp_reduce = t.etp_gather;
        t.etp_reduce.op = collective_op::reduce_scatter;
    }

    // Pipeline parallelism: activations forward, gradients backward, per boundary crossed
    if (p.pp > 1) {
        const bool split = p.sequence_parallel || p.pp_scatter_gather;
        t.pp.op = collective_op::send_recv;
        t.pp.group = group_placement(p, parallel_dim::pp, gpus_per_node);
        t.pp.bytes = bytes(split ? activation / p.tp : activation);
        t.pp.count = 2.0 * mb * chunks;
        if (p.pp_scatter_gather && !p.sequence_parallel && p.tp > 1) {
            t.pp_gather.op = collective_op::all_gather;
            t.pp_gather.group = t.tp_main.group;
            t.pp_gather.bytes = bytes(activation);
            t.pp_gather.count = t.pp.count;
        }
    }

    // Data parallelism (over dp x cp replicas; routed experts over expert-DP), bucketed
    const double params = parameters_per_gpu(m, p, layers_stage);
    t.parameters_per_gpu = params;
    const placement dpg = group_placement(p, parallel_dim::dp, gpus_per_node);
    // Megatron-Core sizes every bucket from the dense DP group (max(40M, 1M x dp) parameters)
    const double bucket = std::max(p.bucket.value(), p.bucket_per_dp.value() * dpg.ranks);
    struct dp_stream {
        comm_call* main;
        comm_call* gather;
        double* bucket_count;
        data_size* last_bucket;
        data_size* gradient_bytes;
        data_size* zero3_bytes;
    };
    auto reduce = [&](double shard_params, const placement& group, const dp_stream& out) {
        const double grad = shard_params * p.gradient_bytes;
        *out.gradient_bytes = bytes(grad);
        const double full_buckets = std::floor(grad / bucket);
        const double rest = grad - full_buckets * bucket;
        *out.bucket_count = full_buckets + (rest > 0 ? 1.0 : 0.0);
        *out.last_bucket = bytes(rest > 0 ? rest : (grad > 0 ? bucket : 0.0));
        if (group.ranks > 1 && grad > 0) {
            out.main->group = group;
            out.main->bytes = bytes(grad < bucket ? grad : bucket);
            out.main->count = grad / out.main->bytes.value();  // fractional: the last bucket is partial
            if (p.zero == 0) {
                out.main->op = collective_op::all_reduce;
            } else {
                out.main->op = collective_op::reduce_scatter;
                // updated parameters (stage 1/2) are gathered once per step in the compute precision
                out.gather->op = collective_op::all_gather;
                out.gather->group = group;
                out.gather->bytes = bytes((grad < bucket ? grad : bucket) * e / p.gradient_bytes);
                out.gather->count = p.zero == 3 ? 0.0 : out.main->count;
                // FSDP: parameters gathered per layer in forward and again in backward, every micro-batch
                if (p.zero == 3) *out.zero3_bytes = bytes(2.0 * shard_params * e * mb);
            }
        }
    };
    if (separate_expert_reduction(m, p)) {
        const double experts = expert_parameters_per_gpu(m, p, layers_stage);
        t.expert_parameters_per_gpu = experts;
        reduce(params - experts, dpg, {&t.dp_main, &t.dp_gather, &t.dp_bucket_count, &t.dp_last_bucket,
                                       &t.dp_gradient_bytes, &t.zero3_gather_bytes});
        reduce(experts, group_placement(p, parallel_dim::edp, gpus_per_node),
               {&t.dp_expert_main, &t.dp_expert_gather, &t.dp_expert_bucket_count, &t.dp_expert_last_bucket,
                &t.dp_expert_gradient_bytes, &t.zero3_expert_gather_bytes});
    } else {
        reduce(params, dpg, {&t.dp_main, &t.dp_gather, &t.dp_bucket_count, &t.dp_last_bucket, &t.dp_gradient_bytes,
                             &t.zero3_gather_bytes});
    }
    if (p.zero == 3 && (!t.dp_main.empty() || !t.dp_expert_main.empty())) t.zero3_gathers = 2.0 * layers_stage * mb;
    if (m.is_hybrid()) [[unlikely]]
        detail::hybrid_traffic(m, p, mb * layers_stage, t);
    return t;
}

/// @brief Bytes one GPU puts on the wire for one call of `c` (ring/pairwise closed forms):
/// all-reduce 2 (n-1)/n S; reduce-scatter and all-gather (n-1)/n S; all-to-all (n-1)/n S;
/// send/recv S. Used for traffic accounting (e.g. NVLink vs network bytes), not timing.
[[nodiscard]] constexpr double wire_bytes_per_gpu(const comm_call& c) {
    if (c.empty()) return 0.0;
    return busbw_factor(c.op, c.group.ranks) * c.bytes.value();  // nccl-tests' factor (collective/types.hpp)
}

}  // namespace commscale
