#pragma once
// The commscale CLI framework: a command registry (each command lives in its own file under
// commands/ and registers itself, so adding a command touches no existing file), the parsed
// arguments a command reads, and output helpers. The grammar (CLI11) is in grammar.hpp.
// Contract: docs/CLI.md. Exit codes: 0 success, 2 invalid input, 1 internal error.

#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <commscale/error.hpp>
#include <commscale/io/file.hpp>
#include <commscale/units/parse.hpp>

namespace cli {

/// One option a command accepts. `takes_value` false means a boolean flag.
struct option_spec {
    std::string name;        // without the leading "--"
    bool takes_value = true;
    std::string help;
};

/// True when the value of --cluster or --model is a JSON object written inline ('{' first, after
/// any blanks): what the Python module passes for a dict, and handy in scripts.
[[nodiscard]] inline bool is_inline_json(const std::string& v) {
    const auto first = v.find_first_not_of(" \t\r\n");
    return first != std::string::npos && v[first] == '{';
}

/// True when the value of --cluster or --model names a file rather than a preset: it ends in
/// ".json", contains a path separator, or is an existing file.
[[nodiscard]] inline bool looks_like_file(const std::string& v) {
    if (v.size() > 5 && v.compare(v.size() - 5, 5, ".json") == 0) return true;
    if (v.find('/') != std::string::npos || v.find('\\') != std::string::npos) return true;
    std::error_code ec;
    return std::filesystem::is_regular_file(v, ec);
}

/// Parsed arguments of one command invocation.
class args {
public:
    std::vector<std::string> positional;

    // Names are looked up as string_views (transparent comparators): commands ask about dozens of
    // options per call, and the Python module runs commands tens of thousands of times a second.
    [[nodiscard]] bool has(std::string_view name) const { return values_.find(name) != values_.end() || flag(name); }
    [[nodiscard]] bool flag(std::string_view name) const { return flags_.find(name) != flags_.end(); }
    [[nodiscard]] std::optional<std::string> get(std::string_view name) const {
        auto it = values_.find(name);
        if (it == values_.end()) return std::nullopt;
        return it->second;
    }
    [[nodiscard]] std::string require(const std::string& name, const std::string& expected) const {
        auto v = get(name);
        if (!v) throw commscale::input_error("--" + name, "nothing (missing)", expected);
        return *v;
    }
    /// Integer option in [lo, hi]; `fallback` if absent.
    [[nodiscard]] long long integer(std::string_view name, long long fallback, long long lo, long long hi) const {
        auto v = get(name);
        if (!v) return fallback;
        return parse_int("--" + std::string(name), *v, lo, hi);
    }
    /// Number option (plain, finite, >= 0); `fallback` if absent.
    [[nodiscard]] double number(std::string_view name, double fallback) const {
        auto v = get(name);
        if (!v) return fallback;
        return commscale::parse_number(*v, "--" + std::string(name));
    }

    /// Size option (bytes, or a number with a unit: parse_size); `fallback` if absent.
    [[nodiscard]] commscale::data_size size(std::string_view name, commscale::data_size fallback) const {
        auto v = get(name);
        if (!v) return fallback;
        return commscale::parse_size(*v, "--" + std::string(name));
    }

    static long long parse_int(const std::string& field, const std::string& text, long long lo, long long hi) {
        std::size_t pos = 0;
        long long v = 0;
        bool ok = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-');
        if (ok) {
            try {
                v = std::stoll(text, &pos);
            } catch (...) {
                ok = false;
            }
        }
        if (!ok || pos != text.size())
            throw commscale::input_error(field, "'" + text + "'",
                                         "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return commscale::require_int_range(field, v, lo, hi);
    }

    /// The value of the command's option `i` (in the order of `command::options`; a flag given: the
    /// empty text), or nullptr where it is not given: what options bound to a request read
    /// (options.hpp; kept for commands with `command::by_index` only).
    [[nodiscard]] const std::string* given(std::size_t i) const {
        return i < given_.size() && given_[i] ? &*given_[i] : nullptr;
    }

    std::map<std::string, std::string, std::less<>> values_;
    std::set<std::string, std::less<>> flags_;
    std::vector<std::optional<std::string>> given_;  ///< by option index (given())
};

/// One CLI command.
struct command {
    std::string name;
    std::string summary;                  // one line, for `commscale --help`
    std::string usage;                    // full help text for `commscale NAME --help`
    std::vector<option_spec> options;     // accepted options (besides --json and --help)
    std::function<int(const args&, std::ostream&)> run;
    int min_positional = 0;
    int max_positional = 0;
    /// Whether `run` reads the options by index (args::given; options.hpp's bound_command): the
    /// grammar keeps the values by index only for such commands.
    bool by_index = false;
};

inline std::vector<command>& registry() {
    static std::vector<command> r;
    return r;
}

/// The registered command `name`, or nullptr.
[[nodiscard]] inline const command* find_command(std::string_view name) {
    for (const command& c : registry())
        if (c.name == name) return &c;
    return nullptr;
}

/// The error for an option `--name` that `cmd` does not have, with the nearest of its options
/// ("did you mean").
[[nodiscard]] inline commscale::input_error unknown_option_error(const command& cmd, std::string_view name) {
    std::vector<std::string> cands{"--json", "--help"};
    for (const option_spec& k : cmd.options) cands.push_back("--" + k.name);
    return commscale::unknown_name("option of '" + cmd.name + "'", "--" + std::string(name), cands);
}

/// Static registration: `static cli::registrar reg{cli::command{...}};` in a commands/*.cpp file.
struct registrar {
    explicit registrar(command c) { registry().push_back(std::move(c)); }
};

/// Options every command that needs a cluster accepts (CLI.md "Topology flags").
inline std::vector<option_spec> topology_options() {
    return {
        {"cluster", true, "preset name or cluster JSON file"},
        {"nodes", true, "number of nodes"},
        {"gpus-per-node", true, "GPUs per node"},
        {"intra", true, "intra-node link name (e.g. nvlink4)"},
        {"intra-fabric", true, "switch|mesh|pcie"},
        {"inter", true, "inter-node link name (e.g. ib-ndr-4x)"},
        {"nics-per-node", true, "NICs per node"},
        {"accelerator", true, "accelerator name"},
        {"oversubscription", true, "leaf-to-spine oversubscription ratio (e.g. 7 for 7:1)"},
        {"scale-up-domain", true, "GPUs sharing one NVLink fabric: GPUs per node, or a multiple (72: an NVL72 rack of trays)"},
    };
}

/// The one-line message of a command that failed, and how (CLI.md "Exit codes").
struct failure {
    std::string message;        ///< "commscale: FIELD: expected ..., got ..." (no newline)
    bool invalid_input = true;  ///< exit 2 (invalid input); false: exit 1 (internal error)
};

/// The failure of the exception being handled (call it inside a catch block): input errors and
/// JSON the library could not read are invalid input; anything else is an internal error.
[[nodiscard]] inline failure current_failure() {
    try {
        throw;
    } catch (const commscale::input_error& e) {
        return {"commscale: " + std::string(e.what()), true};
    } catch (const nlohmann::json::exception& e) {
        return {"commscale: invalid JSON: " + std::string(e.what()), true};
    } catch (const std::exception& e) {
        return {"commscale: internal error: " + std::string(e.what()), false};
    } catch (...) {
        return {"commscale: internal error: an exception of unknown type", false};
    }
}

/// Where print_json hands its document instead of printing it, when set: the Python module runs
/// commands in-process and converts the document to Python objects without a text round trip.
/// Thread-local, so commands run from several threads each capture their own.
inline nlohmann::json*& json_capture() {
    thread_local nlohmann::json* target = nullptr;
    return target;
}

/// Sets json_capture() for one scope.
class capture_json {
public:
    explicit capture_json(nlohmann::json& into) : previous_(json_capture()) { json_capture() = &into; }
    ~capture_json() { json_capture() = previous_; }
    capture_json(const capture_json&) = delete;
    capture_json& operator=(const capture_json&) = delete;

private:
    nlohmann::json* previous_;
};

/// Prints a JSON document (exactly one) with a trailing newline, or hands it to json_capture().
inline void print_json(std::ostream& out, const nlohmann::json& j) {
    if (nlohmann::json* into = json_capture()) {
        *into = j;
        return;
    }
    out << j.dump(2) << "\n";
}
inline void print_json(std::ostream& out, nlohmann::json&& j) {
    if (nlohmann::json* into = json_capture()) {
        *into = std::move(j);
        return;
    }
    out << j.dump(2) << "\n";
}

/// How a column of tabular results holds its values.
enum class column_type { real, integer, boolean };

/// One number of a result's --json document as a column of tabular results (the Python module's
/// cs.steps and cs.collectives): its key (a nested key joined to its parent's by '.'), its type,
/// and the value the document has there (NaN where it has null). The Python tests compare every
/// column with the document, key by key, and check that no number of the document is left out.
template <class Prediction>
struct number_column {
    std::string_view key;
    column_type type;
    double (*value)(const Prediction&);
};

/// One text of a result's --json document as a column of tabular results (few distinct values:
/// names and verdict words). `Text` is std::string_view where the texts are names that outlive
/// the prediction (catalog names, interned names), std::string otherwise.
template <class Prediction, class Text = std::string_view>
struct label_column {
    std::string_view key;
    Text (*value)(const Prediction&);
};

/// A plain-text table with left-aligned first column and right-aligned others.
inline void print_table(std::ostream& out, const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> w(header.size(), 0);
    for (std::size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
    auto line = [&](const std::vector<std::string>& r) {
        std::string text;
        for (std::size_t i = 0; i < r.size() && i < w.size(); ++i)
            text += i == 0 ? fmt::format("{:<{}}", r[i], w[i]) : fmt::format("  {:>{}}", r[i], w[i]);
        out << text << "\n";
    };
    line(header);
    for (const auto& r : rows) line(r);
}

/// Number to text with up to `digits` decimals, trailing zeros removed.
inline std::string num(double v, int digits = 3) {
    std::string s = fmt::format("{:.{}f}", v, digits);
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
}

}  // namespace cli
