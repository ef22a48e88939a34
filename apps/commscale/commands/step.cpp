// `commscale step [--model] [--cluster|topology] --tp T --pp P --dp D [--cp C] [--ep E]
// --micro-batch b --global-batch B [--seq S] [--zero 0-3] [--recompute none|selective|full]
// [--schedule gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe] [--virtual-stages V] [--[no-]sequence-parallel]
// [--compute-efficiency X] [--json] [--svg FILE]`: the predicted training step, its breakdown and
// the bottleneck verdict (docs/CLI.md "Training step"). With no --model/--cluster it runs the
// embedded demo (GPT-3 175B on 16 DGX A100 nodes).
#include <string>

#include <commscale/io/file.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/predict/step.hpp>

#include "../cli.hpp"
#include "../options.hpp"
#include "../step_args.hpp"
#include "../svg.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace step_command {

using namespace commscale;

/// ", attention unfused ..." for the plan line where the unfused core runs (asked for, or a
/// soft-capped model's attention that the stack's flash kernel cannot run), with the softmax it
/// runs (score_softmax); empty under the flash kernel.
std::string unfused_attention_words(const transformer& m, const plan& p) {
    if (attention_kernel_for(m, p) != attention_kernel::unfused) return {};
    const score_softmax sm = score_softmax_for(m, p);
    const char* softmax = sm == score_softmax::fused            ? "the fused softmax"
                          : sm == score_softmax::torch_fallback ? "the PyTorch softmax fallback"
                                                                : "Hugging Face's eager FP32 softmax";
    return std::string(", attention unfused") + (p.attention == attention_kernel::flash ? " (soft-capped scores)" : "") +
           " with " + softmax;
}

std::string render_svg(const step_breakdown& r, const std::string& title) {
    struct part { const char* name; double s; const char* color; };
    const part parts[] = {{"compute", in_seconds(r.compute), "#4c78a8"},
                          {"bubble", in_seconds(r.bubble), "#bab0ac"},
                          {"TP exposed", in_seconds(r.tp.exposed), "#f58518"},
                          {"CP exposed", in_seconds(r.cp.exposed), "#eeca3b"},
                          {"EP exposed", in_seconds(r.ep.exposed), "#b279a2"},
                          {"PP exposed", in_seconds(r.pp.exposed), "#54a24b"},
                          {"DP exposed", in_seconds(r.dp.exposed), "#e45756"}};
    const double W = 760, H = 220, x0 = 40, bar_w = 680, y0 = 60, bar_h = 50;
    const double total = in_seconds(r.step);
    std::string s = cli::svg::open(W, H);
    s += cli::svg::text(W / 2, 24, title, "middle", 14);
    s += cli::svg::text(W / 2, 44, "step " + cli::secs(r.step) + ", MFU " + cli::num(100 * r.mfu, 1) + "%, bottleneck " +
                                       std::string(to_string(r.bottleneck)), "middle", 12);
    double x = x0;
    double ly = y0 + bar_h + 30, lx = x0;
    for (const auto& p : parts) {
        const double w = total > 0 ? bar_w * p.s / total : 0;
        if (w > 0) s += cli::svg::rect(x, y0, w, bar_h, p.color, std::string(p.name) + ": " + cli::num(p.s, 4) + " s");
        x += w;
        s += cli::svg::rect(lx, ly - 10, 10, 10, p.color);
        s += cli::svg::text(lx + 14, ly, std::string(p.name) + " " + cli::num(p.s, 3) + " s");
        lx += 175;
        if (lx > x0 + bar_w - 100) {
            lx = x0;
            ly += 20;
        }
    }
    s += cli::svg::close();
    return s;
}

cli::registrar reg{cli::bound_command<cli::step_request>(
    "step",
    "predict one training step: compute, bubble, exposed TP/PP/DP communication, MFU, verdict",
    "usage: commscale step [--model NAME|FILE] [--cluster NAME|FILE | topology flags] --tp T --pp P [--dp D]\n"
    "                      [--cp C] [--ep E] --micro-batch b --global-batch B [--seq S] [--zero 0|1|2|3]\n"
    "                      [--recompute none|selective|full] [--schedule gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe]\n"
    "                      [--virtual-stages V] [--[no-]sequence-parallel] [--compute-efficiency X] [--dtype bf16]\n"
    "                      [--fp8-recipe delayed|tensorwise|blockwise] [--[no-]fp8-param-gather]\n"
    "                      [--efficiency ideal|default] [--bucket 25MB] [--gradient-bytes 2|4]\n"
    "                      [--[no-]gradient-accumulation-fusion]\n"
    "                      [--framework megatron-core|megatron-lm|megatron-deepspeed|deepspeed|fsdp]\n"
    "                      [--[no-]dp-overlap] [--[no-]tp-overlap] [--[no-]pp-overlap] [--[no-]zero-overlap]\n"
    "                      [--[no-]cp-overlap] [--attention flash|unfused] [--first-stage-layers N]\n"
    "                      [--last-stage-layers N] [--account-for-embedding-in-pipeline-split]\n"
    "                      [--account-for-loss-in-pipeline-split] [--pipeline-model-parallel-layout LAYOUT]\n"
    "                      [--cpu-offloading-num-layers N]\n"
    "                      [--recompute-modules LIST] [--recompute-method uniform|block] [--recompute-num-layers N]\n"
    "                      [--moe-token-dispatcher alltoall|deepep|hybridep] [--overlap-moe-expert-parallel-comm]\n"
    "                      [--no-scatter-gather]\n"
    "                      [--json] [--svg FILE]\n"
    "With no --model/--cluster/topology flag: GPT-3 175B on 16 DGX A100 nodes, tp 8, pp 8, dp 2,\n"
    "micro-batch 1, global batch 512, full recompute (Narayanan et al. 2021 layout).\n"
    "Defaults otherwise: tp = pp = cp = ep = 1, dp = GPUs / (tp pp cp), micro-batch 1,\n"
    "global batch dp x micro-batch (x 4 pp with pipelining), seq min(2048, model context),\n"
    "sequence parallelism with tp >= 2 under megatron-core and fsdp, the interleaved schedule\n"
    "with --virtual-stages > 1.\n"
    "--framework applies a software stack's defaults (ZeRO stage, gradient precision and buckets,\n"
    "overlaps, attention kernel, sequence parallelism); explicit flags override them; the JSON plan\n"
    "echoes every option.\n"
    "JSON keys: step_s compute_s bubble_s tp_comm_s pp_comm_s dp_comm_s dp_comm_exposed_s exposed_comm_s\n"
    "offload_s offload_exposed_s (activation CPU offloading's host copies, the waits for them)\n"
    "bottleneck (compute|tp_comm|pp_comm|dp_comm|bubble|memory; CP/EP count as tp_comm, offloading as\n"
    "compute, bottleneck_detail names them) mfu hfu tflops_per_gpu tokens_per_s, megatron_model_flops_per_token and\n"
    "megatron_tflops_per_gpu (Megatron-Core's num_floating_point_operations: causal attention, padded vocabulary)\n"
    "memory_per_gpu_GiB fits_in_memory required_inter_node_Gbps (per node, at line rate, to hide the\n"
    "DP reduction under the last micro-batch's backward), required_inter_node_step_Gbps (the same bytes\n"
    "within the step's whole compute time: will-it-scale-to-n-gpus's rule), and more. A plan that does\n"
    "not fit in memory is reported so (fits_in_memory false, bottleneck memory); its times are what it\n"
    "would take with enough memory.",
    cli::step_options(false),
    [](const cli::step_request& request, const cli::args& a, std::ostream& out) {
        const cli::step_prediction x = cli::predict_step_of(request);
        const cluster& c = x.cluster;
        const transformer& m = x.model;
        const plan& p = x.plan;
        const step_breakdown& r = x.result;
        const double megatron_per_token = x.megatron_model_flops_per_token;
        const double megatron_tflops = x.megatron_tflops_per_gpu;
        const std::string title = std::string(m.name) + " on " + std::to_string(c.nodes) + " x " + std::string(c.name) +
                                  " (" + std::to_string(c.nodes * c.node.gpus) + " x " + std::string(c.node.accelerator) + ")";
        if (request.svg) io::write_file_atomic(*request.svg, render_svg(r, title), "--svg");
        if (a.flag("json")) {
            cli::print_json(out, cli::step_document(x));
            return 0;
        }
        out << title << "\n";
        if (!r.fits_in_memory)
            out << "DOES NOT FIT: " << cli::num(in_bytes(r.memory.total()) / gibi, 1) << " GiB per GPU needed, "
                << cli::num(in_bytes(r.memory_capacity) / gibi, 1)
                << " GiB available; the times below are what the plan would take with enough memory\n";
        out << "plan: tp " << p.tp << ", pp " << p.pp << ", dp " << p.dp << ", cp " << p.cp << ", ep " << p.ep
            << (p.expert_tp() != p.tp ? ", etp " + std::to_string(p.expert_tp()) : std::string()) << ", micro-batch " << p.micro_batch << ", global batch " << p.global_batch << " x " << p.seq
            << " tokens, " << r.micro_batches << " micro-batches, ZeRO " << p.zero << ", recompute "
            << to_string(p.recompute_mode) << ", " << to_string(p.schedule)
            << (p.chunks() > 1 ? " x" + std::to_string(p.chunks()) : std::string()) << (p.sequence_parallel ? ", SP" : "")
            << ", " << to_string(p.precision) << ", " << to_string(p.stack)
            << (p.pipeline_split_extras() == 2 ? ", embedding and loss counted as pipeline layers"
                : p.account_for_embedding_in_pipeline_split ? ", embedding counted as a pipeline layer"
                : p.account_for_loss_in_pipeline_split   ? ", loss counted as a pipeline layer"
                                                         : "")
            << (p.pp > 1 && (p.first_stage_layers > 0 || p.last_stage_layers > 0)
                    ? ", stage layers " + std::to_string(r.first_stage_layers) + " first, " + std::to_string(r.last_stage_layers) +
                          " last, " + std::to_string(r.max_stage_layers) + " most"
                    : std::string())
            << unfused_attention_words(m, p) << "\n\n";
        const double st = in_seconds(r.step);
        auto row = [&](const char* name, duration total, duration exposed) {
            return std::vector<std::string>{name, cli::secs(total), cli::secs(exposed),
                                            cli::num(100 * in_seconds(exposed) / st, 1) + "%"};
        };
        std::vector<std::vector<std::string>> rows{
            row("compute", r.compute, r.compute), row("pipeline bubble", r.bubble, r.bubble),
            row("TP comm", r.tp.total, r.tp.exposed), row("PP comm", r.pp.total, r.pp.exposed),
            row("DP comm", r.dp.total, r.dp.exposed)};
        if (p.cp > 1) rows.push_back(row("CP comm", r.cp.total, r.cp.exposed));
        if (m.experts > 1 && (p.ep > 1 || in_seconds(r.ep.total) > 0)) rows.push_back(row("EP comm", r.ep.total, r.ep.exposed));
        rows.push_back({"step", "", cli::secs(r.step), "100%"});
        cli::print_table(out, {"component", "total", "on critical path", "share"}, rows);
        out << "\nMFU " << cli::num(100 * r.mfu, 1) << "%, HFU " << cli::num(100 * r.hfu, 1) << "%, "
            << cli::num(in_tflops(r.model_flops_per_gpu), 1) << " TFLOP/s per GPU (model FLOPs), "
            << cli::num(r.tokens_per_s, 0) << " tokens/s\n";
        out << "Megatron-Core's count: " << cli::num(megatron_per_token / 1e9, 2) << " GFLOP/token, "
            << cli::num(megatron_tflops, 1) << " Model TFLOP/sec/GPU\n";
        out << "memory per GPU " << cli::num(in_bytes(r.memory.total()) / gibi, 1) << " GiB of "
            << cli::num(in_bytes(r.memory_capacity) / gibi, 1) << " GiB (" << (r.fits_in_memory ? "fits" : "DOES NOT FIT")
            << ")\n";
        const double need = in_Gbps(r.required_inter_node);
        out << "inter-node bandwidth to hide DP communication: "
            << (need <= 0 ? std::string("none (DP inside a node)")
                          : std::isfinite(need) ? cli::num(need, 0) + " Gbps per node at line rate (have " +
                                                      cli::num(in_Gbps(c.node.node_injection()), 0) + ")"
                                                : std::string("unbounded (no backward window)"))
            << "\n";
        out << "verdict: " << to_string(r.bottleneck) << " - " << cli::step_verdict(r) << "\n";
        return 0;
    })};

}  // namespace step_command
}  // namespace
