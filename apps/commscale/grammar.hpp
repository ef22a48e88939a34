#pragma once
// The CLI's grammar on CLI11: one app per registered command (cli.hpp's registry). Only the
// dispatcher (app.cpp) includes it, so the commands compile without CLI11.
// Contract: docs/CLI.md.
#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli.hpp"

namespace cli {

/// True when `name` (without "--") is one of the topology flags: they form the "topology flags"
/// group of every command that takes them.
[[nodiscard]] inline bool is_topology_option(std::string_view name) {
    static const std::vector<option_spec> topo = topology_options();
    return std::any_of(topo.begin(), topo.end(), [&](const option_spec& o) { return o.name == name; });
}

/// The command line's grammar: one CLI11 app per registered command, each with its options (the
/// topology flags as an option group) and the --json and --help flags. Built once per thread from
/// the registry and reused: CLI11 clears an app's results (and those of its subcommands) when it
/// parses again, so apps of their own, rather than subcommands of one app, keep a parse from
/// clearing every command's options (the Python module parses tens of thousands of lines a second).
///
/// CLI11 does the tokenizing (--name value, --name=value, "--" ending the options); the errors
/// keep the CLI's contract (docs/CLI.md): an unknown option is reported with "did you mean", an
/// option given twice, a value given to a flag and a missing value name the option, and every
/// parse error exits with 2.
class grammar {
public:
    grammar() {
        for (const command& c : registry()) {
            auto app = std::make_unique<CLI::App>(c.summary, c.name);
            CLI::App* sub = app.get();
            sub->set_help_flag();  // --help prints the command's usage (below)
            sub->allow_extras();   // positional arguments and unknown options, in order ("--" too)
            entry e{&c, std::move(app), {}};
            for (const option_spec& o : c.options) {
                CLI::Option* opt = add(*sub, o);
                // A group of the subcommand's own options, not a CLI11 option-group app: CLI11
                // 2.1 loops forever on an empty argument followed by an unknown option when a
                // subcommand holds an option-group app.
                if (is_topology_option(o.name)) opt->group("topology flags");
                e.options.push_back({o.name, o.takes_value, opt});
            }
            for (const char* f : {"json", "help"}) e.options.push_back({f, false, add(*sub, option_spec{f, false, ""})});
            entries_.push_back(std::move(e));
        }
    }

    /// Parses a whole command line (`all[0]` a registered command's name) into its arguments.
    [[nodiscard]] args parse(const command& cmd, const std::vector<std::string>& all) {
        const entry& e = find(cmd);
        // CLI11 pops from the back; the command's name is not an argument of its app
        std::vector<std::string> reversed(all.rbegin(), all.rend() - 1);
        try {
            e.app->parse(reversed);
        } catch (const CLI::ParseError& error) {
            throw mismatch(e, all, error);
        }
        if (auto flagged = flag_with_value(e, all)) throw *flagged;
        args a;
        // the extras in order: unknown options and positional arguments, then "--" (kept by CLI11
        // as an extra of an app without positional options) and what follows it, all positional
        bool options_ended = false;
        for (const std::string& s : e.app->remaining()) {
            if (!options_ended && s == "--") {
                options_ended = true;
                continue;
            }
            if (!options_ended && s.size() > 2 && s.rfind("--", 0) == 0) unknown_option(e, s.substr(2, s.find('=') - 2));
            a.positional.push_back(s);
        }
        for (const bound& o : e.options) {
            if (o.option->count() == 0) continue;
            if (!o.takes_value) {
                a.flags_.insert(o.name);
                continue;
            }
            const std::vector<std::string>& given = o.option->results();
            if (given.size() > 1)
                throw commscale::input_error("--" + o.name, "'" + given[1] + "' (given twice)", "one value");
            a.values_[o.name] = given.front();
        }
        if (cmd.by_index) keep_by_index(e, a);
        if (!a.flag("help")) check_positionals(cmd, a);
        return a;
    }

    /// `commscale NAME --help`: the command's usage text, then its options generated from the
    /// grammar (every option with its one-line help; the topology flags as their own group).
    [[nodiscard]] static std::string help(const command& cmd) {
        std::string text = cmd.usage + "\n";
        const auto section = [&](const char* title, bool topology) {
            std::vector<const option_spec*> rows;
            for (const option_spec& o : cmd.options)
                if (is_topology_option(o.name) == topology) rows.push_back(&o);
            if (rows.empty()) return;
            text += fmt::format("\n{}:\n", title);
            for (const option_spec* o : rows) {
                const std::string name = "--" + o->name + (o->takes_value ? " VALUE" : "");
                const std::string& what = o->help.empty() ? std::string("(a flag)") : o->help;
                if (name.size() < 28) text += fmt::format("  {:<28}{}\n", name, what);
                else text += fmt::format("  {}\n  {:<28}{}\n", name, "", what);  // a long name on its own line
            }
        };
        section("options", false);
        section("topology flags", true);
        text += fmt::format("\n  {:<28}{}\n  {:<28}{}\n", "--json", "print one JSON document instead of text", "--help",
                            "print this help");
        return text;
    }

private:
    struct bound {
        std::string name;  // without "--"
        bool takes_value;
        CLI::Option* option;
    };
    struct entry {
        const command* cmd;
        std::unique_ptr<CLI::App> app;
        std::vector<bound> options;
    };

    static CLI::Option* add(CLI::App& where, const option_spec& o) {
        if (!o.takes_value) return where.add_flag("--" + o.name, o.help)->disable_flag_override();
        // Every value is one token, even one that starts with "--"; a second use is reported
        // (not overwritten), so the results are all kept.
        return where.add_option("--" + o.name, o.help)
            ->expected(1)
            ->allow_extra_args(false)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }

    [[nodiscard]] const entry& find(const command& cmd) const {
        for (const entry& e : entries_)
            if (e.cmd == &cmd) return e;
        throw std::logic_error("command '" + cmd.name + "' is not in the grammar");
    }

    /// The values of the command's options by index (args::given): e.options holds them in the
    /// command's order, then --json and --help. Out of line: most commands read by name.
    [[gnu::noinline]] static void keep_by_index(const entry& e, args& a) {
        a.given_.resize(e.cmd->options.size());
        for (std::size_t i = 0; i < a.given_.size(); ++i) {
            const bound& o = e.options[i];
            if (o.option->count() == 0) continue;
            if (o.takes_value) a.given_[i] = o.option->results().front();
            else a.given_[i].emplace();
        }
    }

    [[noreturn]] static void unknown_option(const entry& e, const std::string& name) { throw unknown_option_error(*e.cmd, name); }

    /// CLI11's parse errors in the CLI's words: a value given to a flag, an option missing its
    /// value (only the last argument can be), an unknown option; anything else with CLI11's text.
    [[nodiscard]] static commscale::input_error mismatch(const entry& e, const std::vector<std::string>& all,
                                                         const CLI::ParseError& error) {
        if (auto flagged = flag_with_value(e, all)) return *flagged;
        if (all.size() > 1 && all.back().rfind("--", 0) == 0) {
            const std::string name = all.back().substr(2, all.back().find('=') - 2);
            for (const option_spec& o : e.cmd->options)
                if (o.takes_value && o.name == name)
                    return commscale::input_error("--" + name, "nothing (missing value)", o.help.empty() ? "a value" : o.help);
        }
        const std::string& usage = e.cmd->usage;
        return commscale::input_error(e.cmd->name, error.what(), usage.substr(0, usage.find('\n')));
    }

    /// `--flag=value` (CLI11 would take `--json=true` as `--json`): flags take no value. A token
    /// that is the value of the option before it is that option's business.
    [[nodiscard]] static std::optional<commscale::input_error> flag_with_value(const entry& e, const std::vector<std::string>& all) {
        const auto named = [](const std::string& s, const std::string& name) {
            return s.size() > name.size() + 2 && s.rfind("--", 0) == 0 && s.compare(2, name.size(), name) == 0 &&
                   s[name.size() + 2] == '=';
        };
        for (std::size_t i = 1; i < all.size(); ++i) {
            const std::string& s = all[i];
            if (s == "--") break;
            for (const bound& o : e.options) {
                if (!o.takes_value && named(s, o.name))
                    return commscale::input_error("--" + o.name, "'" + s.substr(o.name.size() + 3) + "'", "no value (a flag)");
                if (o.takes_value && s == "--" + o.name) {
                    ++i;  // its value, whatever it looks like
                    break;
                }
            }
        }
        return std::nullopt;
    }

    static void check_positionals(const command& cmd, const args& a) {
        const int n = static_cast<int>(a.positional.size());
        if (n < cmd.min_positional)
            throw commscale::input_error(cmd.name, "too few arguments", cmd.usage.substr(0, cmd.usage.find('\n')));
        if (cmd.max_positional >= 0 && n > cmd.max_positional)
            throw commscale::input_error(cmd.name, "unexpected argument '" + a.positional[static_cast<std::size_t>(cmd.max_positional)] + "'",
                                         cmd.usage.substr(0, cmd.usage.find('\n')));
    }

    std::vector<entry> entries_;
};

/// This thread's grammar (built on first use, after every command has registered).
inline grammar& this_thread_grammar() {
    thread_local grammar g;
    return g;
}

/// Parses a whole command line (`all[0]` is `cmd`'s name).
inline args parse_args(const command& cmd, const std::vector<std::string>& all) { return this_thread_grammar().parse(cmd, all); }

/// The help text of `commscale NAME --help`.
inline std::string help_text(const command& cmd) { return this_thread_grammar().help(cmd); }

}  // namespace cli
