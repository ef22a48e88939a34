#pragma once
/// @file io/training_runs.hpp
/// @brief Reads measured training runs from a CSV file (the input of `commscale fit-step`).
///
/// One header row, then one run per row; columns in any order, names as below (case-sensitive),
/// blank lines and lines starting with `#` skipped:
///
/// | column | required | meaning |
/// |---|---|---|
/// | `model` | yes | a preset name (`commscale models`) or a Hugging Face `config.json`, relative to the CSV |
/// | `gpus` | yes | GPUs of the run |
/// | `tp`, `pp` | yes | tensor- and pipeline-parallel degrees |
/// | `dp` | no | data-parallel degree (default gpus / (tp pp cp)) |
/// | `cp`, `ep` | no | context- and expert-parallel degrees (default 1; ep divides dp x cp, EP carved out of DP x CP) |
/// | `etp` | no | expert tensor-parallel degree (0: tp, Megatron-Core's library default; empty: the framework's, stack_expert_tp: 1 for an MoE model under megatron-core, as NVIDIA's recipes run it, else tp) |
/// | `micro_batch`, `global_batch` | yes | sequences per micro-batch and per step |
/// | `seq` | no | sequence length (default min(2048, the model's context)) |
/// | `dtype` | no | bf16 (default), fp16, fp8, ... |
/// | `framework` | no | megatron-core (default), megatron-lm, megatron-deepspeed, deepspeed, fsdp |
/// | `zero` | no | ZeRO stage 0-3 (default: the framework's) |
/// | `recompute` | no | none (default), selective, full |
/// | `sequence_parallel` | no | true/false, 1/0, yes/no (default: the framework's, stack_sequence_parallel: on with TP >= 2 for megatron-core, as NVIDIA's recipes run it, and fsdp, as torchtitan does; off for the others) |
/// | `virtual_stages` | no | interleaved pipeline chunks per GPU (default 1; > 1 selects the interleaved schedule) |
/// | `step_s`, `tflops_per_gpu` or `tokens_per_s_per_gpu` | one of them | the measurement: seconds per step, model TFLOP/s per GPU as `commscale step` counts them (`tflops_per_gpu` of its JSON: model FLOPs, no recompute), or training tokens per second per GPU (free of FLOP-counting conventions) |
/// | `cluster` | no | the run's system: a preset name (`commscale clusters`) or a cluster JSON file, relative to the CSV (default: the command's `--cluster`) |
/// | `account_for_embedding_in_pipeline_split`, `account_for_loss_in_pipeline_split` | no | Megatron-Core's flags, true/false (default false) |
/// | `first_stage_layers`, `last_stage_layers` | no | transformer layers of the first / last pipeline stage, the others sharing the rest evenly (Megatron-Core's `--decoder-first-pipeline-num-layers`, `--decoder-last-pipeline-num-layers`; default 0: the even split; with `virtual_stages` > 1, a rank's layers over its model chunks) |
/// | `pipeline_model_parallel_layout` | no | Megatron-Core's `--pipeline-model-parallel-layout` string, e.g. `Et*4\|(t*4\|)*14tmL` (parallel/pipeline_layout.hpp): sets `virtual_stages` and the first and last stages' layers; not with `first_stage_layers`, `last_stage_layers` or the `account_for_*` columns; a `virtual_stages` given must agree |
/// | `cpu_offloading_num_layers` | no | Megatron-Core's `--cpu-offloading-num-layers`: layers per stage whose activations go to host memory (default 0 = off) |
/// | `recompute_modules` | no | Megatron-Core's `--recompute-modules`, comma-separated (core_attn, layernorm, mla_up_proj, mlp, moe, moe_act, shared_experts; default none) |
/// | `overlap_moe_expert_parallel_comm` | no | Megatron-Core's `--overlap-moe-expert-parallel-comm` (Megatron-Bridge's `moe_a2a_overlap`), true/false (default false) |
/// | `fp8_recipe` | no | with `dtype` fp8, Megatron-Core's `--fp8-recipe`: delayed, tensorwise (current scaling, the "FP8-CS" of Megatron-Bridge's tables; the default under megatron-core, stack_fp8_recipe; delayed under the other frameworks) or blockwise (block scaling, their "FP8-SC") |
/// | `recompute_method`, `recompute_num_layers` | no | with `recompute` full, Megatron-Core's `--recompute-method` (uniform, the default, or block) and `--recompute-num-layers` (layers per checkpoint, or recomputed per model chunk with block; default 0: every layer) |
/// | `first_last_layers_bf16`, `num_layers_at_start_in_bf16`, `num_layers_at_end_in_bf16` | no | Megatron-Core's `--first-last-layers-bf16` (true/false, default false) and its counts (default 1 each): those layers of an FP8/FP4 run in BF16 |
/// | `grad_reduce_in_fp32` | no | Megatron-Core's `grad_reduce_in_fp32`, true/false: gradients kept and reduced in fp32 (4 bytes) or in bf16 (2); default the framework's |
/// | `optimizer_state_bytes` | no | bytes per parameter of the optimizer's own state (plan::optimizer_state_bytes): 12 fp32 main parameters and Adam moments (default), 10 Apex DistributedFusedAdam with 16-bit parameter remainders, 4 bf16 moments without main parameters |
/// | `moe_token_dispatcher` | no | MoE token dispatcher (plan::dispatcher): alltoall (default; Megatron-Core's `--moe-token-dispatcher-type alltoall`), deepep or hybridep (`--moe-token-dispatcher-type flex` with that `--moe-flex-dispatcher-backend`) |
/// | `moe_expert_capacity_factor`, `moe_pad_expert_input_to_capacity` | no | Megatron-Core's `--moe-expert-capacity-factor` (plan::capacity_factor; empty or 0: dropless, the default) and `--moe-pad-expert-input-to-capacity` (true/false, default false; needs the factor): Megatron-Bridge's "tokendrop" runs set 1.0 and true (`apply_moe_token_drop`) |
/// | `overlap_grad_reduce` | no | Megatron-Core's `--overlap-grad-reduce`, true/false: the data-parallel gradient reduction under the backward (plan::overlap dp); default the framework's |
/// | `overlap_param_gather` | no | Megatron-Core's `--overlap-param-gather`, true/false: the distributed optimizer's (ZeRO 1-2) parameter all-gathers under the next step's forward, and ZeRO 3's prefetched (plan::overlap zero); default the framework's |
/// | `fp8_param_gather` | no | Megatron-Core's `--fp8-param-gather`, true/false: with dtype fp8 or mxfp8 the layers' weights kept quantized (plan::fp8_param_gather: their memory); default the framework's (megatron-core: true, as NVIDIA's recipes set it) |
/// | `gradient_accumulation_fusion` | no | Megatron's gradient-accumulation fusion, true/false (Megatron-LM's `--no-gradient-accumulation-fusion`, Megatron-Bridge's `model.gradient_accumulation_fusion`): without it each micro-batch's gradients are copied into the gradient buffer (plan::gradient_accumulation_fusion); only with framework megatron-core or megatron-lm; default the stack's practice (off under megatron-core at ZeRO 3, as NVIDIA's recipes run Megatron-FSDP; on otherwise) |
/// | `family`, `source`, `source_location`, `recipe`, `notes`, `published_tflops_per_gpu`, `published_precision` | no | text kept with the run as published (`accuracy` groups by `family`); ignored by the fit |
/// | `not_expressible` | no | why the library cannot express the run today; such a row is kept (its label and measurement are read, nothing else is validated), reported by `accuracy` and skipped by `fit-step` |
///
/// Every error is an input_error naming the file, the row and the column:
/// `runs.csv:4: column tp: expected an integer in [1, 1048576], got 'x'`.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../error.hpp"
#include "../parallel/framework.hpp"
#include "../parallel/pipeline_layout.hpp"
#include "../parallel/plan.hpp"
#include "../workload/flops.hpp"
#include "../workload/models.hpp"
#include "file.hpp"
#include "cluster_json.hpp"
#include "model_json.hpp"
#include "../hardware/clusters.hpp"

namespace commscale {

/// @brief Ranges of a runs CSV's columns beyond the plan's (plan_limits): far beyond any
/// published run (the largest have ~1e5 GPUs), so that a value outside is a typo.
struct training_run_limits {
    static constexpr long long gpus = 1LL << 24;  ///< GPUs of one run
    /// A measurement (step_s, tflops_per_gpu, tokens_per_s_per_gpu): positive and below 1e12.
    static constexpr double measurement = 1e12;
};

/// @brief One measured training run: the model, the plan, and what was measured.
struct training_run {
    std::string label;     ///< "runs.csv:3 (llama3-8b, 8 GPUs)"
    transformer model{};
    plan p{};
    long long gpus = 0;
    std::optional<double> step_s;          ///< measured seconds per step
    std::optional<double> tflops_per_gpu;  ///< measured model TFLOP/s per GPU (commscale's count)
    std::optional<double> tokens_per_s_per_gpu;  ///< measured training tokens per second per GPU
    std::string model_name;                ///< the `model` cell as written
    std::string cluster_name;              ///< the `cluster` cell as written (empty: the caller's cluster)
    std::optional<cluster> system;         ///< the run's own cluster (`cluster` column), nodes not yet set
    std::string family, source, source_location, recipe, notes;  ///< text columns, as written
    std::string not_expressible;           ///< non-empty: why the run cannot be expressed (not predicted)
};

namespace detail {

/// The cluster of a run: its own (`cluster` column) or `base`, with as many nodes as the run's GPUs need.
[[nodiscard]] inline cluster cluster_for_run(const cluster& default_system, const training_run& r) {
    const cluster& base = r.system ? *r.system : default_system;
    if (r.gpus % base.node.gpus != 0)
        throw input_error(r.label + ": gpus", std::to_string(r.gpus),
                          "a multiple of the cluster's " + std::to_string(base.node.gpus) + " GPUs per node");
    cluster c = base;
    c.nodes = static_cast<int>(r.gpus / base.node.gpus);
    return c;
}

/// Measured step time of a run (from step_s, from tokens_per_s_per_gpu and the tokens of a step,
/// or from tflops_per_gpu and the model FLOPs).
[[nodiscard]] inline double measured_step(const training_run& r) {
    if (r.step_s) return *r.step_s;
    if (r.tokens_per_s_per_gpu)
        return static_cast<double>(r.p.global_batch) * r.p.seq / (*r.tokens_per_s_per_gpu * static_cast<double>(r.gpus));
    const double f = in_flops(model_flops(r.model, r.p.seq, r.p.global_batch));
    return f / (*r.tflops_per_gpu * 1e12 * static_cast<double>(r.gpus));
}

/// Measured training tokens per second per GPU of a run: its tokens_per_s_per_gpu, else from the
/// measured step (measured_step) and the tokens of a step.
[[nodiscard]] inline double measured_tokens_per_s_per_gpu(const training_run& r) {
    if (r.tokens_per_s_per_gpu) return *r.tokens_per_s_per_gpu;
    return static_cast<double>(r.p.global_batch) * r.p.seq / (measured_step(r) * static_cast<double>(r.gpus));
}

}  // namespace detail

namespace io {
namespace detail {

[[nodiscard]] inline std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
    return std::string(s.substr(b, e - b));
}

/// Splits one CSV line on commas; a field in double quotes may contain commas ("" is a quote).
[[nodiscard]] inline std::vector<std::string> split_csv(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (ch == '"') {
                quoted = false;
            } else {
                cur += ch;
            }
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += ch;
        }
    }
    out.push_back(trim(cur));
    return out;
}

}  // namespace detail

/// @brief Parses training runs from CSV `text`; `name` (the file name) prefixes every error and
/// label, `base_dir` resolves relative model paths.
[[nodiscard]] inline std::vector<training_run> parse_training_runs(std::string_view text, const std::string& name,
                                                                   const std::filesystem::path& base_dir = {}) {
    // Every column the parser reads: the plan's and the run's labels, then the measurements (one
    // of which a file must have). The unknown-column error lists them from here.
    static constexpr std::string_view plan_columns[] = {
        "model", "gpus", "tp", "pp", "dp", "cp", "ep", "etp", "micro_batch", "global_batch", "seq", "dtype",
        "framework", "zero", "recompute", "sequence_parallel", "virtual_stages", "name", "cluster",
        "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split", "family", "source",
        "source_location", "recipe", "notes", "not_expressible", "published_tflops_per_gpu", "published_precision",
        "cpu_offloading_num_layers", "grad_reduce_in_fp32", "recompute_modules", "optimizer_state_bytes",
        "moe_token_dispatcher", "recompute_method", "recompute_num_layers", "fp8_recipe",
        "overlap_moe_expert_parallel_comm", "first_last_layers_bf16", "num_layers_at_start_in_bf16",
        "num_layers_at_end_in_bf16", "first_stage_layers", "last_stage_layers", "moe_expert_capacity_factor",
        "moe_pad_expert_input_to_capacity", "overlap_grad_reduce", "overlap_param_gather", "fp8_param_gather",
        "pipeline_model_parallel_layout", "gradient_accumulation_fusion"};
    static constexpr std::string_view measurement_columns[] = {"step_s", "tflops_per_gpu", "tokens_per_s_per_gpu"};
    auto known = [](std::string_view h) {
        for (std::string_view k : plan_columns)
            if (h == k) return true;
        for (std::string_view k : measurement_columns)
            if (h == k) return true;
        return false;
    };
    auto known_columns = [] {
        std::string out = "columns";
        for (std::string_view k : plan_columns) out.append(out.size() > 7 ? ", " : " ").append(k);
        return out + ", and step_s, tflops_per_gpu or tokens_per_s_per_gpu";
    };
    std::vector<std::string> header;
    bool has_tokens = false;  // a tokens_per_s_per_gpu column (changes only the wording of one error)
    std::vector<training_run> runs;
    std::size_t line_no = 0, pos = 0;
    while (pos <= text.size()) {
        const std::size_t nl = text.find('\n', pos);
        const std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        const std::string line = detail::trim(raw);
        if (line.empty() || line[0] == '#') continue;
        const std::string where = name + ":" + std::to_string(line_no);
        auto cells = detail::split_csv(line);
        if (header.empty()) {
            header = cells;
            for (const auto& h : header)
                if (!known(h)) throw input_error(where + ": header", "'" + h + "'", known_columns());
            for (const char* req : {"model", "gpus", "tp", "pp", "micro_batch", "global_batch"}) {
                bool found = false;
                for (const auto& h : header) found = found || h == req;
                if (!found) throw input_error(where + ": header", "no column " + std::string(req), "a header naming it");
            }
            for (const auto& h : header) has_tokens = has_tokens || h == "tokens_per_s_per_gpu";
            bool measured = false;
            for (const auto& h : header)
                for (std::string_view k : measurement_columns) measured = measured || h == k;
            if (!measured)
                throw input_error(where + ": header", "no measurement column",
                                  "a column step_s or tflops_per_gpu, or tokens_per_s_per_gpu");
            continue;
        }
        if (cells.size() != header.size())
            throw input_error(where, std::to_string(cells.size()) + " cells",
                              std::to_string(header.size()) + " cells, one per header column (truncated line?)");
        auto cell = [&](const char* col) -> std::optional<std::string> {
            for (std::size_t i = 0; i < header.size(); ++i)
                if (header[i] == col && !cells[i].empty()) return cells[i];
            return std::nullopt;
        };
        auto integer = [&](const char* col, long long fallback, long long lo, long long hi) -> long long {
            const auto v = cell(col);
            if (!v) return fallback;
            const std::string field = where + ": column " + col;
            std::size_t used = 0;
            long long x = 0;
            try {
                x = std::stoll(*v, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != v->size() || x < lo || x > hi)
                throw input_error(field, "'" + *v + "'",
                                  "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
            return x;
        };
        // the whole cell as a number, or nullopt (not a number, or text after it)
        auto real = [](const std::string& v) -> std::optional<double> {
            std::size_t used = 0;
            double x = 0;
            try {
                x = std::stod(v, &used);
            } catch (const std::exception&) {
                return std::nullopt;
            }
            if (used != v.size()) return std::nullopt;
            return x;
        };
        auto number = [&](const char* col) -> std::optional<double> {
            const auto v = cell(col);
            if (!v) return std::nullopt;
            const auto x = real(*v);
            if (!x || !(*x > 0) || !(*x < training_run_limits::measurement))
                throw input_error(where + ": column " + col, "'" + *v + "'", "a positive number");
            return x;
        };
        training_run r;
        const std::string model_text = cell("model").value_or("");
        r.model_name = model_text;
        auto text_of = [&](const char* col) { return cell(col).value_or(""); };
        r.family = text_of("family");
        r.source = text_of("source");
        r.source_location = text_of("source_location");
        r.recipe = text_of("recipe");
        r.notes = text_of("notes");
        r.not_expressible = text_of("not_expressible");
        r.cluster_name = text_of("cluster");
        auto boolean = [&](const char* col, bool fallback) {
            const auto v = cell(col);
            if (!v) return fallback;
            if (*v == "true" || *v == "1" || *v == "yes") return true;
            if (*v == "false" || *v == "0" || *v == "no") return false;
            throw input_error(where + ": column " + col, "'" + *v + "'", "true/false, 1/0 or yes/no");
        };
        if (!r.not_expressible.empty()) {
            // kept as published: the label, the sizes and the measurement; nothing else is validated
            r.gpus = integer("gpus", 0, 1, training_run_limits::gpus);
            r.p.global_batch = static_cast<int>(integer("global_batch", 1, 1, plan_limits::global_batch));
            r.p.seq = static_cast<int>(integer("seq", 2048, 1, plan_limits::seq));
            r.step_s = number("step_s");
            r.tflops_per_gpu = number("tflops_per_gpu");
            r.tokens_per_s_per_gpu = number("tokens_per_s_per_gpu");
            if (!r.step_s && !r.tflops_per_gpu && !r.tokens_per_s_per_gpu)
                throw input_error(where + ": columns step_s, tflops_per_gpu, tokens_per_s_per_gpu", "all empty",
                                  "one measurement per run");
            const auto label = cell("name");
            r.label = where + " (" + (label ? *label : model_text) + ", " + std::to_string(r.gpus) + " GPUs)";
            runs.push_back(std::move(r));
            continue;
        }
        if (model_text.empty()) throw input_error(where + ": column model", "''", "a model preset or config.json path");
        if (!r.cluster_name.empty()) {
            const std::string field = where + ": column cluster";
            if (auto preset = find_cluster(r.cluster_name)) {
                r.system = *preset;
            } else if (r.cluster_name.size() > 5 &&
                       r.cluster_name.compare(r.cluster_name.size() - 5, 5, ".json") == 0) {
                const std::filesystem::path cp(r.cluster_name);
                r.system = load_cluster_file((cp.is_relative() ? base_dir / cp : cp).string(), field);
            } else {
                r.system = cluster_by_name(r.cluster_name, field);
            }
        }
        {
            const std::string field = where + ": column model";
            const bool file = model_text.size() > 5 && model_text.compare(model_text.size() - 5, 5, ".json") == 0;
            if (file) {
                const std::filesystem::path mp(model_text);
                r.model = load_model_file((mp.is_relative() ? base_dir / mp : mp).string(), field);
            } else {
                r.model = model_by_name(model_text, field);
            }
        }
        r.gpus = integer("gpus", 0, 1, training_run_limits::gpus);
        plan& p = r.p;
        if (const auto v = cell("framework")) p.stack = parse<framework>(*v, where + ": column framework");
        apply_framework(p, p.stack);
        p.tp = static_cast<int>(integer("tp", 1, 1, plan_limits::degree));
        p.pp = static_cast<int>(integer("pp", 1, 1, plan_limits::degree));
        p.cp = static_cast<int>(integer("cp", 1, 1, plan_limits::degree));
        p.ep = static_cast<int>(integer("ep", 1, 1, plan_limits::degree));
        // absent: the stack's (megatron-core: 1 for MoE, as NVIDIA's recipes); 0: = tp (Megatron-Core's library default)
        p.etp = static_cast<int>(integer("etp", stack_expert_tp(p, r.model), 0, plan_limits::degree));
        const long long mp = static_cast<long long>(p.tp) * p.pp * p.cp;
        if (!cell("dp") && r.gpus % mp != 0)
            throw input_error(where + ": columns tp x pp x cp", std::to_string(mp),
                              "a divisor of the run's " + std::to_string(r.gpus) + " GPUs");
        p.dp = static_cast<int>(integer("dp", r.gpus / mp, 1, plan_limits::dp));
        if (static_cast<long long>(p.dp) * mp != r.gpus)
            throw input_error(where + ": column dp", std::to_string(p.dp),
                              "gpus / (tp pp cp) = " + std::to_string(r.gpus / mp));
        p.micro_batch = static_cast<int>(integer("micro_batch", 1, 1, plan_limits::micro_batch));
        p.global_batch = static_cast<int>(integer("global_batch", 1, 1, plan_limits::global_batch));
        p.seq = static_cast<int>(integer("seq", r.model.max_seq > 0 ? std::min(2048, r.model.max_seq) : 2048, 1, plan_limits::seq));
        if (const auto v = cell("dtype")) p.precision = parse<dtype>(*v, where + ": column dtype");
        p.zero = static_cast<int>(integer("zero", p.zero, 0, plan_limits::zero));
        if (const auto v = cell("recompute")) p.recompute_mode = parse<recompute>(*v, where + ": column recompute");
        if (const auto v = cell("sequence_parallel")) {
            if (*v == "true" || *v == "1" || *v == "yes") p.sequence_parallel = true;
            else if (*v == "false" || *v == "0" || *v == "no") p.sequence_parallel = false;
            else throw input_error(where + ": column sequence_parallel", "'" + *v + "'", "true/false, 1/0 or yes/no");
        } else {
            p.sequence_parallel = stack_sequence_parallel(p);  // the framework's: megatron-core with TP >= 2
        }
        p.virtual_stages = static_cast<int>(integer("virtual_stages", 1, 1, plan_limits::virtual_stages));
        if (p.virtual_stages > 1) p.schedule = pipeline_schedule::interleaved;
        p.account_for_embedding_in_pipeline_split = boolean("account_for_embedding_in_pipeline_split", false);
        p.account_for_loss_in_pipeline_split = boolean("account_for_loss_in_pipeline_split", false);
        p.first_stage_layers = static_cast<int>(integer("first_stage_layers", 0, 0, plan_limits::stage_layers));
        p.last_stage_layers = static_cast<int>(integer("last_stage_layers", 0, 0, plan_limits::stage_layers));
        if (const auto v = cell("pipeline_model_parallel_layout"))
            apply_pipeline_layout(p, *v, r.model, where + ": column pipeline_model_parallel_layout");
        p.cpu_offloading_num_layers =
            static_cast<int>(integer("cpu_offloading_num_layers", 0, 0, plan_limits::stage_layers));
        if (cell("grad_reduce_in_fp32")) set_gradient_bytes(p, boolean("grad_reduce_in_fp32", true) ? 4 : 2);
        p.optimizer_state_bytes = static_cast<int>(integer("optimizer_state_bytes", p.optimizer_state_bytes, 0,
                                                           plan_limits::optimizer_state_bytes));
        if (const auto v = cell("recompute_modules"))
            p.recompute_modules = recompute_modules_from_names(*v, where + ": column recompute_modules");
        p.moe_a2a_overlap = boolean("overlap_moe_expert_parallel_comm", false);
        if (const auto v = cell("fp8_recipe")) p.fp8_scaling = parse<fp8_recipe>(*v, where + ": column fp8_recipe");
        else p.fp8_scaling = stack_fp8_recipe(p);  // the framework's: tensorwise for megatron-core's fp8
        if (const auto v = cell("recompute_method"))
            p.full_recompute_method = parse<recompute_method>(*v, where + ": column recompute_method");
        p.recompute_num_layers = static_cast<int>(integer("recompute_num_layers", 0, 0, plan_limits::stage_layers));
        if (const auto v = cell("moe_token_dispatcher")) p.dispatcher = parse<moe_token_dispatcher>(*v, where + ": column moe_token_dispatcher");
        if (const auto v = cell("moe_expert_capacity_factor")) {
            // 0 is dropless, as Megatron-Core reads an unset factor
            const auto x = real(*v);
            if (!x || !(*x == 0.0 || (*x >= 1e-3 && *x <= 1e6)))
                throw input_error(where + ": column moe_expert_capacity_factor", "'" + *v + "'",
                                  "0 (dropless) or a capacity factor in [0.001, 1e6] such as 1.0");
            p.capacity_factor = *x;
        }
        p.pad_to_capacity = boolean("moe_pad_expert_input_to_capacity", false);
        if (p.pad_to_capacity && p.capacity_factor == 0.0)
            throw input_error(where + ": column moe_pad_expert_input_to_capacity", "true",
                              "false without a moe_expert_capacity_factor > 0 (padding to a capacity needs one)");
        p.overlap.dp = boolean("overlap_grad_reduce", p.overlap.dp);
        p.overlap.zero = boolean("overlap_param_gather", p.overlap.zero);
        p.fp8_param_gather = boolean("fp8_param_gather", p.fp8_param_gather);
        if (const auto fusion = cell("gradient_accumulation_fusion")) {
            if (!has_gradient_accumulation_fusion(p.stack))
                throw input_error(where + ": column gradient_accumulation_fusion", "'" + *fusion + "' with framework " + std::string(to_string(p.stack)),
                                  "empty outside the Megatron stacks (megatron-core, megatron-lm), whose setting it is");
            p.gradient_accumulation_fusion = boolean("gradient_accumulation_fusion", true);
        }
        p.first_last_layers_bf16 = boolean("first_last_layers_bf16", false);
        p.bf16_layers_at_start = static_cast<int>(integer("num_layers_at_start_in_bf16", 1, 0, plan_limits::stage_layers));
        p.bf16_layers_at_end = static_cast<int>(integer("num_layers_at_end_in_bf16", 1, 0, plan_limits::stage_layers));
        r.step_s = number("step_s");
        r.tflops_per_gpu = number("tflops_per_gpu");
        r.tokens_per_s_per_gpu = number("tokens_per_s_per_gpu");
        if (!r.step_s && !r.tflops_per_gpu && !r.tokens_per_s_per_gpu)
            throw input_error(where + (r.tokens_per_s_per_gpu || has_tokens ? ": columns step_s, tflops_per_gpu, tokens_per_s_per_gpu"
                                                                            : ": columns step_s, tflops_per_gpu"),
                              has_tokens ? "all empty" : "both empty", "one measurement per run");
        const auto label = cell("name");
        r.label = where + " (" + (label ? *label : std::string(r.model.name)) + ", " + std::to_string(r.gpus) + " GPUs)";
        runs.push_back(std::move(r));
    }
    if (header.empty()) throw input_error(name, "an empty file", "a CSV header and at least one run");
    if (runs.empty()) throw input_error(name, "a header and no runs", "at least one run");
    return runs;
}

/// @brief Reads training runs from a CSV file; model paths are relative to the file's folder.
[[nodiscard]] inline std::vector<training_run> load_training_runs(const std::string& file, std::string_view field = "runs") {
    const std::string text = read_file(file, field);
    return parse_training_runs(text, file, std::filesystem::path(file).parent_path());
}

}  // namespace io
}  // namespace commscale
