#pragma once
// Options bound to a command's request (docs/CLI.md "Options"): a command declares each of its
// options once, as the field of its request struct that the option sets and the typed reader of
// its value: an integer in a range of the library's `*_limits`, a number in a range, a choice from
// an enum's spelling table (detail/names.hpp), a size, a text or a flag. The help of a choice lists
// the table's spellings, so no list of choices is typed by hand. A value the reader refuses is an
// input_error in the CLI's words (the option, the value, what is accepted), printed by the
// dispatcher's one failure formatter (cli::current_failure).
//
// The grammar (grammar.hpp, CLI11) tokenizes the command line and checks its shape first: an
// unknown option, an option given twice, a value given to a flag, a missing value, the positional
// arguments, --help. The readers then run in the order the options are declared, before the
// command (not as CLI11 ->check validators, which run inside CLI11's parse, before those checks,
// and would change which error a line with two of them reports). Options still read by name (the
// topology flags and --model, which the Python module's rows share) are declared `opt::by_name`:
// the command reads them from `args`. A command whose checks of which options go together come
// before their values (capacity) declares them `opt::later`: the request holds the text and its
// reader, and the command reads the value where its order puts it.
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <commscale/detail/names.hpp>
#include <commscale/error.hpp>
#include <commscale/units/parse.hpp>

#include "cli.hpp"

namespace cli {

/// One option of a command bound to a field of the command's request `R`.
template <class R>
struct bound_option {
    option_spec spec;
    /// Writes the given value (a flag: the empty text) into the request; throws input_error. Empty
    /// for an option read by name.
    std::function<void(R&, const std::string&)> read;
};

/// An option's text as given and its reader, read when the command asks (opt::later): `*x` is the
/// value (or the reader's input_error), `x.text` the text, which errors quote.
template <class T>
struct later {
    std::string text;
    std::function<T(const std::string&)> read;
    [[nodiscard]] T operator*() const { return read(text); }
};

namespace options_detail {
template <class T>
struct value_of {
    using type = T;
};
template <class T>
struct value_of<std::optional<T>> {
    using type = T;
};
/// The type a field holds: T for T and for std::optional<T>.
template <class R, class Field>
using value_t = typename value_of<std::remove_cvref_t<std::invoke_result_t<Field, R&>>>::type;
}  // namespace options_detail

namespace opt {

// `Field` below is a pointer to a member of R or a function R& -> the field (a nested member).

/// A flag (no value): sets the field to `value`.
template <class R, class Field>
[[nodiscard]] bound_option<R> flag(std::string name, Field field, std::string help, bool value = true) {
    return {{std::move(name), false, std::move(help)}, [field, value](R& r, const std::string&) { std::invoke(field, r) = value; }};
}

/// A value kept as text (a file name).
template <class R, class Field>
[[nodiscard]] bound_option<R> text(std::string name, Field field, std::string help) {
    return {{std::move(name), true, std::move(help)}, [field](R& r, const std::string& v) { std::invoke(field, r) = v; }};
}

/// An integer in [lo, hi] (the bounds of the library's *_limits structs).
template <class R, class Field>
[[nodiscard]] bound_option<R> integer(std::string name, Field field, long long lo, long long hi, std::string help) {
    return {{name, true, std::move(help)}, [field, flag = "--" + name, lo, hi](R& r, const std::string& v) {
                std::invoke(field, r) = static_cast<options_detail::value_t<R, Field>>(args::parse_int(flag, v, lo, hi));
            }};
}

/// A plain number in [lo, hi].
template <class R, class Field>
[[nodiscard]] bound_option<R> number(std::string name, Field field, double lo, double hi, std::string help) {
    return {{name, true, std::move(help)}, [field, flag = "--" + name, lo, hi](R& r, const std::string& v) {
                std::invoke(field, r) = commscale::require_range(flag, commscale::parse_number(v, flag), lo, hi);
            }};
}

/// A size (bytes, or a number with a unit: parse_size).
template <class R, class Field>
[[nodiscard]] bound_option<R> size(std::string name, Field field, std::string help) {
    return {{name, true, std::move(help)},
            [field, flag = "--" + name](R& r, const std::string& v) { std::invoke(field, r) = commscale::parse_size(v, flag); }};
}

/// One of an enum's spellings (its table in the library, aliases included): `help`, with every
/// spelling it reads ("a, b or c") in place of `{}`.
template <commscale::named_enum E, class R, class Field>
[[nodiscard]] bound_option<R> choice(std::string name, Field field, std::string help = "{}") {
    if (const auto at = help.find("{}"); at != std::string::npos) {
        std::string names;
        const auto accepted = commscale::suggested_names_of<E>();
        for (std::size_t i = 0; i < accepted.size(); ++i)
            names += std::string(i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ") + std::string(accepted[i]);
        help.replace(at, 2, names);
    }
    return {{name, true, std::move(help)},
            [field, flag = "--" + name](R& r, const std::string& v) { std::invoke(field, r) = commscale::parse<E>(v, flag); }};
}

/// An option read by its own reader: `read(request, text)`.
template <class R>
[[nodiscard]] bound_option<R> custom(std::string name, std::string help, std::function<void(R&, const std::string&)> read) {
    return {{std::move(name), true, std::move(help)}, std::move(read)};
}

/// An option read where the command asks for it (`*field`: `parse(text, "--name")`), not before it
/// runs: for a command whose checks of which options go together come first and quote the options
/// as given (capacity, cluster), so that a line with two errors reports the one the command's own
/// order finds first.
template <class R, class T, class Parse>
[[nodiscard]] bound_option<R> later(std::string name, std::optional<cli::later<T>> R::*field, Parse parse, std::string help) {
    std::function<T(const std::string&)> read = [parse, flag = "--" + name](const std::string& v) -> T { return parse(v, flag); };
    return {{std::move(name), true, std::move(help)},
            [field, read = std::move(read)](R& r, const std::string& v) { r.*field = cli::later<T>{v, read}; }};
}

/// Options the command reads by name from `args` (the topology flags, --model).
template <class R>
[[nodiscard]] std::vector<bound_option<R>> by_name(std::vector<option_spec> specs) {
    std::vector<bound_option<R>> out;
    for (option_spec& s : specs) out.push_back({std::move(s), {}});
    return out;
}

}  // namespace opt

/// The options `first` and then `more`, in that order.
template <class R>
[[nodiscard]] std::vector<bound_option<R>> operator+(std::vector<bound_option<R>> first, std::vector<bound_option<R>> more) {
    for (bound_option<R>& o : more) first.push_back(std::move(o));
    return first;
}

/// A command whose options are bound to its request `R`: the readers fill a default `R` from the
/// options given, in declaration order, and `run` gets it with `args` (the positional arguments,
/// --json, and the options read by name).
template <class R>
[[nodiscard]] command bound_command(std::string name, std::string summary, std::string usage,
                                    std::vector<bound_option<R>> options,
                                    std::function<int(const R&, const args&, std::ostream&)> run,
                                    int min_positional = 0, int max_positional = 0) {
    command c{std::move(name), std::move(summary), std::move(usage), {}, {}, min_positional, max_positional, true};
    for (const bound_option<R>& o : options) c.options.push_back(o.spec);
    c.run = [options = std::move(options), run = std::move(run)](const args& a, std::ostream& out) {
        R request{};
        for (std::size_t i = 0; i < options.size(); ++i)
            if (const std::string* v = a.given(i); v != nullptr && options[i].read) options[i].read(request, *v);
        return run(request, a, out);
    };
    return c;
}

}  // namespace cli
