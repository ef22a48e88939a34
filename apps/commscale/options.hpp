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
// and would change which error a line with two of them reports). An option whose value the command
// reads where its own order puts it is declared `opt::given`: the request holds the value as given
// and its reader, and the command reads the value when it asks (capacity, whose checks of which
// options go together come before their values, and cluster). The value as given is a command
// line's text, or, where the Python module's rows fill the request (step and scale's,
// collective's), a number of a row, read as the number its text would read as (cli::reads), or a
// model or cluster a row holds parsed. --model (model.hpp model_option), the
// topology flags, --gpus where it gives the node count and the collective's options (topology.hpp
// topology_bound, gpus_option, collective_bound) are given options of every command that takes them.
#include <charconv>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <commscale/detail/names.hpp>
#include <commscale/error.hpp>
#include <commscale/units/parse.hpp>

#include "cli.hpp"

namespace cli {

/// The shortest text that reads back as `v`, written as Python's repr() writes a float (which is
/// how the Python module writes a float for the command line): positional for decimal exponents
/// -4 to 15 (with ".0" when integral), d.ddde+XX otherwise; "nan", "inf", "-inf".
[[nodiscard]] inline std::string float_text(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto done = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(done.ptr - buf));  // [-]d[.ddd]e(+|-)XX
    const bool negative = sci.front() == '-';
    const std::size_t e = sci.find('e');
    std::string digits;
    for (const char ch : sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0)))
        if (ch != '.') digits += ch;
    int exponent = 0;
    const std::string_view exp_text = sci.substr(e + 1);
    (void)std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0), exp_text.data() + exp_text.size(), exponent);
    const int point = exponent + 1;  // digits before the decimal point
    std::string out = negative ? "-" : "";
    if (point <= -4 || point > 16) {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        const int magnitude = exponent < 0 ? -exponent : exponent;
        out += exponent < 0 ? "e-" : "e+";
        if (magnitude < 10) out += '0';
        out += std::to_string(magnitude);
    } else if (point <= 0) {
        out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    } else if (static_cast<std::size_t>(point) >= digits.size()) {
        out += digits + std::string(static_cast<std::size_t>(point) - digits.size(), '0') + ".0";
    } else {
        out += digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
    }
    return out;
}

/// A value parsed before it is given (the Python module parses each model and cluster of a call
/// once): the value, or the failure of its parse.
template <class T>
struct parsed {
    std::optional<T> value;
    failure error;  ///< when there is no value
};

/// What an option's reader throws for a parsed value without one: the failure of its parse.
struct parse_failed {
    failure what;
};

/// An option's value as given: a command line's text, a number that the Python module's rows hold
/// without text (an int, a float), which reads as the number its text would read as, or a value
/// parsed before (`parsed<T>` of the type the option's reader gives: a model, a cluster).
struct given_value {
    enum class kind : unsigned char { text, integer, real, parsed };
    kind k = kind::text;
    std::string_view text;  ///< kind::text (held by whoever gave it: `args`, a row's column)
    union {
        long long integer = 0;  ///< kind::integer
        double real;            ///< kind::real
        const void* object;     ///< kind::parsed: a `parsed<T>`, held by whoever gave it
    };

    [[nodiscard]] static given_value of_text(std::string_view t) {
        given_value v;
        v.text = t;
        return v;
    }
    [[nodiscard]] static given_value of_integer(long long i) {
        given_value v;
        v.k = kind::integer;
        v.integer = i;
        return v;
    }
    [[nodiscard]] static given_value of_real(double r) {
        given_value v;
        v.k = kind::real;
        v.real = r;
        return v;
    }
    template <class T>
    [[nodiscard]] static given_value of_parsed(const parsed<T>& p) {
        given_value v;
        v.k = kind::parsed;
        v.object = &p;
        return v;
    }
    /// The text a command line would hold (a number as Python's str() writes it; nothing for a
    /// parsed value).
    [[nodiscard]] std::string spelled() const {
        switch (k) {
            case kind::integer: return std::to_string(integer);
            case kind::real: return float_text(real);
            case kind::parsed: return std::string();
            case kind::text: break;
        }
        return std::string(text);
    }
};

// The readers of a given value: a number in range as it is, anything else read from its text, so
// that a number reads as its text would and a refused one with the same message.
namespace reads {

inline constexpr long long exact_integer = 1LL << 53;  // every int up to here is a double

/// An integer in [lo, hi] (args::parse_int).
[[nodiscard]] inline long long integer(const given_value& v, const std::string& flag, long long lo, long long hi) {
    if (v.k == given_value::kind::integer) {
        if (v.integer >= lo && v.integer <= hi) return v.integer;
        return commscale::require_int_range(flag, v.integer, lo, hi);
    }
    return args::parse_int(flag, v.spelled(), lo, hi);
}

/// A plain number (parse_number).
[[nodiscard]] inline double number(const given_value& v, std::string_view flag) {
    constexpr double smallest = commscale::detail::absurd_small(commscale::quantity_kind::number);
    if (v.k == given_value::kind::real && std::isfinite(v.real) && (v.real == 0 || v.real >= smallest))
        return v.real == 0 ? 0.0 : v.real;  // -0.0 reads as 0
    if (v.k == given_value::kind::integer && v.integer >= 0 && v.integer <= exact_integer) return static_cast<double>(v.integer);
    if (v.k == given_value::kind::text) return commscale::parse_number(v.text, flag);
    return commscale::parse_number(v.spelled(), flag);
}

/// A size: bytes, or a number with a unit (parse_size).
[[nodiscard]] inline commscale::data_size size(const given_value& v, std::string_view flag) {
    constexpr double smallest = commscale::detail::absurd_small(commscale::quantity_kind::size);
    const double largest = commscale::detail::absurd_limit(commscale::quantity_kind::size);
    if (v.k == given_value::kind::real && std::isfinite(v.real) && (v.real == 0 || v.real >= smallest) && v.real <= largest)
        return commscale::bytes(v.real == 0 ? 0.0 : v.real);
    if (v.k == given_value::kind::integer && v.integer >= 0 && v.integer <= exact_integer &&
        static_cast<double>(v.integer) <= largest)
        return commscale::bytes(static_cast<double>(v.integer));
    if (v.k == given_value::kind::text) return commscale::parse_size(v.text, flag);
    return commscale::parse_size(v.spelled(), flag);
}

/// One of an enum's spellings (parse<E>).
template <commscale::named_enum E>
[[nodiscard]] E choice(const given_value& v, std::string_view flag) {
    if (v.k == given_value::kind::text) return commscale::parse<E>(v.text, flag);
    return commscale::parse<E>(v.spelled(), flag);
}

/// A value parsed before (kind::parsed, a `parsed<T>`), or parse_failed with its failure; else
/// `load(text, flag)`.
template <class T, class Load>
[[nodiscard]] T parsed_or(const given_value& v, const std::string& flag, Load&& load) {
    if (v.k == given_value::kind::parsed) {
        const auto& p = *static_cast<const parsed<T>*>(v.object);
        if (!p.value) throw parse_failed{p.error};
        return *p.value;
    }
    return load(v.spelled(), flag);
}

}  // namespace reads

/// An option's value as given and its reader, read where the command asks (opt::given): `*x` is
/// the value (or the reader's input_error). The reader belongs to the command's option.
template <class T>
struct given {
    given_value value;
    const std::function<T(const given_value&)>* read = nullptr;
    [[nodiscard]] T operator*() const { return (*read)(value); }
};

/// One option of a command bound to a field of the command's request `R`.
template <class R>
struct bound_option {
    option_spec spec;
    /// Writes the given value (a flag: the empty text) into the request; throws input_error.
    std::function<void(R&, const std::string&)> read;
    /// Writes a value given without a command line (the Python module's rows: a flag given True)
    /// into the request, for the options declared opt::given and the flags; else empty.
    std::function<void(R&, const given_value&)> take = {};
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
    return {{std::move(name), false, std::move(help)},
            [field, value](R& r, const std::string&) { std::invoke(field, r) = value; },
            [field, value](R& r, const given_value&) { std::invoke(field, r) = value; }};
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

/// An option read where the command asks for it (`*field`: `read(value)`, the value as given), not
/// before it runs: for a command whose checks of which options go together come first and quote
/// the options as given (capacity, cluster: `x.value.spelled()`), so that a line with two errors
/// reports the one the command's own order finds first, and for a command whose request the
/// Python module's rows fill too (step, scale), which give a number without its text.
/// `read(value, "--name")` is one of cli::reads's readers or built on them.
template <class R, class T, class Read>
[[nodiscard]] bound_option<R> given(std::string name, std::optional<cli::given<T>> R::*field, Read read, std::string help) {
    // one reader for every copy of the option, so that the requests may point to it
    auto shared = std::make_shared<const std::function<T(const given_value&)>>(
        [read, flag = "--" + name](const given_value& v) -> T { return read(v, flag); });
    auto take = [field, shared](R& r, const given_value& v) { r.*field = cli::given<T>{v, shared.get()}; };
    return {{std::move(name), true, std::move(help)},
            [take](R& r, const std::string& v) { take(r, given_value::of_text(v)); }, take};
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
/// --json, and the options' texts).
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
            if (const std::string* v = a.given(i); v != nullptr) options[i].read(request, *v);
        return run(request, a, out);
    };
    return c;
}

}  // namespace cli
