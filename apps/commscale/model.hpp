#pragma once
// The --model flag of every command that needs a transformer (docs/CLI.md "Models"):
//   --model NAME|FILE   a preset (commscale models), a Hugging Face config.json file or its JSON inline
// With no --model the model is `cli::default_model_name` (llama2-7b: a widely trained open model
// whose published shape is in data/models/llama2-7b.json).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <commscale/io/model_json.hpp>
#include <commscale/workload/models.hpp>

#include "cli.hpp"
#include "options.hpp"

namespace cli {

/// The preset used when --model is absent.
inline constexpr std::string_view default_model_name = "llama2-7b";

/// A model already parsed from its inline JSON text (the Python module's model handles): while
/// set on this thread, load_model_value returns `value` for exactly `text` instead of parsing it.
struct parsed_model {
    std::string_view text;
    const commscale::transformer* value = nullptr;
};

/// This thread's parsed model (none by default).
inline parsed_model& parsed_model_slot() {
    thread_local parsed_model slot;
    return slot;
}

/// A model from a preset name, a config.json file or a config.json object written inline ('{'
/// first: what the Python module passes for a dict). Errors name `field` or `field.<key>`. A preset
/// name is a preset even where a file of that name exists (no file-system look-up for presets).
[[nodiscard]] inline commscale::transformer load_model_value(const std::string& v, const std::string& field) {
    if (const parsed_model& p = parsed_model_slot(); p.value != nullptr && v == p.text) return *p.value;
    if (auto preset = commscale::find_model(v)) return *preset;
    if (is_inline_json(v)) return commscale::io::model_from_json(commscale::io::parse_json(v, field), field, "custom");
    if (looks_like_file(v)) return commscale::io::load_model_file(v, field);
    return commscale::model_by_name(v, field);
}

/// --model's reader: a model parsed before (the Python module's rows) or the text read by
/// load_model_value.
[[nodiscard]] inline commscale::transformer read_model(const given_value& v, const std::string& field) {
    return reads::parsed_or<commscale::transformer>(v, field, &load_model_value);
}

/// The model --model gives (preset, config.json or inline JSON; read here, where the command's
/// order puts it), or the default preset. Errors name --model (unknown preset, with "did you
/// mean") or --model.<key> (a bad field in the file).
[[nodiscard]] inline commscale::transformer resolve_model(const std::optional<given<commscale::transformer>>& model) {
    if (!model) return commscale::model_by_name(default_model_name, "--model");
    return **model;
}

/// The --model option of a command, bound to the field `field` of its request.
template <class R>
[[nodiscard]] bound_option<R> model_option(std::optional<given<commscale::transformer>> R::*field) {
    return opt::given<R>("model", field, &read_model,
                         "model preset name (commscale models) or a Hugging Face config.json file");
}

}  // namespace cli
