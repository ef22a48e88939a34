#pragma once
/// @file parallel/pipeline_layout.hpp
/// @brief Megatron-Core's custom pipeline layout (`--pipeline-model-parallel-layout`,
/// TransformerConfig.pipeline_model_parallel_layout; megatron/core/transformer/
/// pipeline_parallel_layer_layout.py PipelineParallelLayerLayout) read into the plan's split.
///
/// The layout lists the virtual pipeline stages in layer order, '|' between them, each a string of
/// `E` (the embedding), `t` (a transformer layer), `m` (a multi-token-prediction module) and `L`
/// (the output layer and loss). `x*n` repeats one character, `(...)*n` a group (one level, no
/// nesting), and commas are cosmetic: "Et*4|(t*4|)*14tmL" is 16 stages, the first the embedding and
/// 4 layers, 14 of 4 layers, the last a layer, the MTP module and the loss. Stage i belongs to
/// pipeline rank i mod pp, as its virtual stage i / pp: the stage count is pp x V, and the layout
/// sets V. Megatron-Core checks that the first entry is `E`, the last `L`, each once; that the `t`
/// count is the model's layers and the `m` count its MTP depths, every `m` after the last `t`, and
/// MTP only in the last virtual stage of a rank.
///
/// The step model reads a layout as the transformer layers of each pipeline rank (summed over its
/// virtual stages): the first rank's in plan::first_stage_layers, the last rank's in
/// plan::last_stage_layers, the ranks between them equal. Every layout of NVIDIA's performance
/// recipes is of that form (Megatron-Bridge perf_recipes: DeepSeek-V3 "Et|(tt|)*30mL" on PP 16 x
/// V 2, "Et*4|(t*4|)*14tmL" on PP 4 x V 4 and PP 2 x V 8; Kimi K2's per-(PP, V) tables). Refused,
/// with the reason: middle ranks of different sizes, a first or last rank without a transformer
/// layer, MTP away from the last rank (Megatron-Core's standalone MTP stage) and the loss split
/// over several stages.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../error.hpp"
#include "../workload/transformer.hpp"
#include "plan.hpp"

namespace commscale {

/// @brief What a pipeline layout sets in a plan: the virtual stages per rank (V) and the
/// transformer layers of each pipeline rank, summed over its virtual stages.
struct pipeline_layout_split {
    int virtual_stages = 1;
    std::vector<int> rank_layers;  ///< pp counts, rank 0 first
};

namespace detail {
/// The longest layout after its repeats are unrolled: 2^22 characters (a layer or '|' each), far
/// beyond any model's layers and any pp x V the plan accepts.
inline constexpr std::size_t pipeline_layout_max_chars = std::size_t{1} << 22;

/// The layout as an error quotes it: at most 200 characters, then its length.
[[nodiscard]] inline std::string quoted_layout(std::string_view layout) {
    if (layout.size() <= 200) return "\"" + std::string(layout) + "\"";
    return "\"" + std::string(layout.substr(0, 200)) + "...\" (" + std::to_string(layout.size()) + " characters)";
}

[[noreturn]] inline void bad_layout(std::string_view field, std::string_view layout, const std::string& expected) {
    throw input_error(std::string(field), quoted_layout(layout), expected);
}

/// A character as an error names it: itself in quotes when printable, else its byte value.
[[nodiscard]] inline std::string layout_char_text(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return "'" + std::string(1, c) + "'";
    const char* hex = "0123456789abcdef";
    return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

/// A repeat count at `s[i]` (after '*'): decimal digits, at most 7; advances `i` past them.
[[nodiscard]] inline std::size_t layout_repeat(std::string_view s, std::size_t& i, std::string_view field, std::string_view layout) {
    std::size_t n = 0, digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (++digits > 7) bad_layout(field, layout, "repeat counts of at most 7 digits after '*'");
        n = n * 10 + static_cast<std::size_t>(s[i] - '0');
        ++i;
    }
    if (digits == 0) bad_layout(field, layout, "a count after each '*' (\"t*4\", \"(tt|)*30\")");
    return n;
}

/// Appends `text` to `out` `times` times within the size budget.
inline void layout_append(std::string& out, std::string_view text, std::size_t times, std::string_view field, std::string_view layout) {
    if (times > 0 && text.size() > (pipeline_layout_max_chars - out.size()) / times)
        bad_layout(field, layout, "a layout of at most 2^22 layers and separators once its repeats are unrolled");
    for (std::size_t k = 0; k < times; ++k) out.append(text);
}

/// Unrolls `x*n` in a run without parentheses.
[[nodiscard]] inline std::string unroll_chars(std::string_view s, std::string_view field, std::string_view layout) {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i++];
        if (c == '*') bad_layout(field, layout, "'*' after a layer character or a ')' group");
        if (c != 'E' && c != 'L' && c != 't' && c != 'm' && c != '|')
            bad_layout(field, layout,
                       "the characters E (embedding), t (transformer layer), m (MTP module), L (loss), '|' between "
                       "stages, x*n and (...)*n repeats and cosmetic commas; found " + layout_char_text(c));
        std::size_t times = 1;
        if (i < s.size() && s[i] == '*') {
            ++i;
            times = layout_repeat(s, i, field, layout);
        }
        layout_append(out, std::string_view(&c, 1), times, field, layout);
    }
    return out;
}

/// The layout with commas dropped and every repeat unrolled (Megatron-Core parse_str_to_list).
[[nodiscard]] inline std::string unroll_layout(std::string_view layout, std::string_view field) {
    std::string s;
    for (const char c : layout)
        if (c != ',') s.push_back(c);
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t open = s.find_first_of("()", i);
        const std::size_t run_end = open == std::string::npos ? s.size() : open;
        layout_append(out, unroll_chars(std::string_view(s).substr(i, run_end - i), field, layout), 1, field, layout);
        if (open == std::string::npos) break;
        if (s[open] == ')') bad_layout(field, layout, "a '(' opening each ')' group");
        const std::size_t close = s.find_first_of("()", open + 1);
        if (close == std::string::npos || s[close] != ')')
            bad_layout(field, layout, close == std::string::npos ? "a ')' closing each '(' group"
                                                                 : "groups without nested parentheses (Megatron-Core unrolls one level)");
        if (close == open + 1) bad_layout(field, layout, "a non-empty group between '(' and ')'");
        if (close + 1 >= s.size() || s[close + 1] != '*') bad_layout(field, layout, "a repeat count after each group: (...)*n");
        i = close + 2;
        const std::size_t times = layout_repeat(s, i, field, layout);
        layout_append(out, unroll_chars(std::string_view(s).substr(open + 1, close - open - 1), field, layout), times, field, layout);
    }
    return out;
}
}  // namespace detail

/// @brief Reads a Megatron-Core pipeline layout (file comment) for `pp` pipeline ranks and model
/// `m`: its V and each rank's transformer layers. Checks what Megatron-Core checks
/// (PipelineParallelLayerLayout.__init__ and validate_layer_layout) and that MTP and the loss sit
/// on the last rank, as the step model places them; input_error naming `field`, the layout and
/// what is accepted otherwise.
[[nodiscard]] inline pipeline_layout_split parse_pipeline_layout(std::string_view layout, int pp, const transformer& m,
                                                                 std::string_view field = "plan.pipeline_model_parallel_layout") {
    if (pp < 1 || pp > plan_limits::degree)
        throw input_error("plan.pp", std::to_string(pp), "an integer in [1, 2^20] before the layout is read");
    const std::string flat = detail::unroll_layout(layout, field);
    struct stage_counts {
        int embedding = 0, layers = 0, mtp = 0, loss = 0;
    };
    std::vector<stage_counts> stages(1);
    long long total_t = 0, total_m = 0, total_E = 0, total_L = 0;
    bool layer_after_mtp = false, seen_mtp = false;
    for (const char c : flat) {
        stage_counts& st = stages.back();
        switch (c) {
            case '|': stages.emplace_back(); break;
            case 'E': ++st.embedding; ++total_E; break;
            case 'L': ++st.loss; ++total_L; break;
            case 'm': ++st.mtp; ++total_m; seen_mtp = true; break;
            default: ++st.layers; ++total_t; layer_after_mtp = layer_after_mtp || seen_mtp; break;
        }
    }
    const std::size_t n = stages.size();
    const std::size_t ranks = static_cast<std::size_t>(pp);
    if (n % ranks != 0)
        detail::bad_layout(field, layout,
                           "pp x V stages: " + std::to_string(n) + " is not a multiple of pp = " + std::to_string(pp));
    const std::size_t v = n / ranks;
    if (v > static_cast<std::size_t>(plan_limits::virtual_stages))
        detail::bad_layout(field, layout, "at most 2^16 virtual stages per rank");
    if (flat.empty() || flat.front() != 'E' || total_E != 1)
        detail::bad_layout(field, layout, "the embedding E once, first (Megatron-Core: \"The first layer must be embedding\")");
    if (flat.back() != 'L' || total_L != 1)
        detail::bad_layout(field, layout, "the loss L once, last (a loss split over stages, mtp_loss_split, is not modelled)");
    if (total_t != m.layers)
        detail::bad_layout(field, layout,
                           std::to_string(m.layers) + " transformer layers t, the model's; the layout has " + std::to_string(total_t));
    if (total_m != m.mtp_passes())
        detail::bad_layout(field, layout,
                           std::to_string(m.mtp_passes()) + " MTP module(s) m, the model's MTP depths; the layout has " +
                               std::to_string(total_m));
    if (layer_after_mtp) detail::bad_layout(field, layout, "every MTP module m after the last transformer layer t");
    if (total_m > 0 && stages.back().mtp != total_m)
        detail::bad_layout(field, layout,
                           "the MTP modules in the last stage, with the loss (a standalone MTP stage on another rank is "
                           "not modelled: the model runs MTP beside the output layer)");
    pipeline_layout_split out;
    out.virtual_stages = static_cast<int>(v);
    out.rank_layers.assign(ranks, 0);
    for (std::size_t i = 0; i < n; ++i) out.rank_layers[i % ranks] += stages[i].layers;
    return out;
}

/// @brief Sets `s`, the split parse_pipeline_layout read from `layout` for p.pp ranks, in plan
/// `p`: V (the interleaved schedule when V > 1) and plan::first_stage_layers / last_stage_layers,
/// the first and last ranks' transformer layers. As Megatron-Core: not with first/last stage
/// counts or the embedding/loss accounting already set, and V as the plan has it when the plan is
/// interleaved already. Refuses layouts the model cannot hold (file comment), naming the ranks'
/// counts; errors name `field` and quote `layout`. For a caller that reads V from the split first
/// (the CLI, where --schedule interleaved alone defaults V).
inline void apply_pipeline_layout(plan& p, const pipeline_layout_split& s, std::string_view layout,
                                  std::string_view field = "plan.pipeline_model_parallel_layout") {
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.pipeline_split_extras() > 0)
        detail::bad_layout(field, layout,
                           "no first/last stage layer counts or embedding/loss accounting beside it (Megatron-Core: "
                           "\"pipeline_model_parallel_layout cannot be set with other pipeline layout arguments\")");
    if (p.schedule == pipeline_schedule::zb_v || p.schedule == pipeline_schedule::dualpipe)
        detail::bad_layout(field, layout, "the 1f1b or interleaved schedule (Megatron-Core's), not " + std::string(to_string(p.schedule)));
    if (p.schedule == pipeline_schedule::interleaved && p.virtual_stages != s.virtual_stages)
        detail::bad_layout(field, layout,
                           std::to_string(static_cast<long long>(p.pp) * p.virtual_stages) + " stages: pp " + std::to_string(p.pp) +
                               " x the plan's virtual_stages " + std::to_string(p.virtual_stages) + " (the layout has " +
                               std::to_string(static_cast<long long>(p.pp) * s.virtual_stages) + ")");
    if (s.virtual_stages > 1 && p.schedule != pipeline_schedule::interleaved && p.schedule != pipeline_schedule::one_f_one_b)
        detail::bad_layout(field, layout,
                           "one stage per rank with the " + std::string(to_string(p.schedule)) +
                               " schedule (V > 1 is Megatron-Core's interleaved schedule)");
    // checked whole before the plan changes
    const std::vector<int>& r = s.rank_layers;
    if (p.pp >= 2) {
        std::string counts;
        for (std::size_t i = 0; i < r.size(); ++i) counts += (i ? "," : "") + std::to_string(r[i]);
        for (const int k : r)
            if (k < 1)
                detail::bad_layout(field, layout,
                                   "a transformer layer on every rank (plan::first_stage_layers = 0 is the even split; layers "
                                   "per rank: " + counts + ")");
        for (std::size_t i = 2; i + 1 < r.size(); ++i)
            if (r[i] != r[1])
                detail::bad_layout(field, layout,
                                   "ranks between the first and the last holding equal numbers of transformer layers, as the "
                                   "step model holds them (layers per rank: " + counts + ")");
    }
    if (s.virtual_stages > 1) {
        p.schedule = pipeline_schedule::interleaved;
        p.virtual_stages = s.virtual_stages;
    }
    if (p.pp < 2) return;  // one rank holds every layer
    p.first_stage_layers = r.front();
    p.last_stage_layers = r.back();
}

/// @brief Sets the split of `layout` (parse_pipeline_layout for p.pp ranks and model `m`) in plan
/// `p`, as the overload above.
inline void apply_pipeline_layout(plan& p, std::string_view layout, const transformer& m,
                                  std::string_view field = "plan.pipeline_model_parallel_layout") {
    apply_pipeline_layout(p, parse_pipeline_layout(layout, p.pp, m, field), layout, field);
}

}  // namespace commscale
