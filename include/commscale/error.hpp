#pragma once
/// @file error.hpp
/// @brief The library's exception types. Every invalid input throws `commscale::input_error`
/// naming the field path, the value given and what is accepted, e.g.
/// `cluster.nodes: expected an integer >= 1, got 0`.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace commscale {

/// @brief Invalid input: a field, the value given, and what is accepted.
class input_error : public std::invalid_argument {
public:
    input_error(std::string field, std::string value, std::string expected)
        : std::invalid_argument(compose(field, value, expected)),
          field_(std::move(field)), value_(std::move(value)), expected_(std::move(expected)) {}

    [[nodiscard]] const std::string& field() const noexcept { return field_; }
    [[nodiscard]] const std::string& value() const noexcept { return value_; }
    [[nodiscard]] const std::string& expected() const noexcept { return expected_; }

    /// @brief The same error reported under a longer field path (`inter.link` -> `cluster.inter.link`).
    [[nodiscard]] input_error prefixed(std::string_view prefix) const {
        std::string f(prefix);
        if (!field_.empty()) {
            if (!f.empty() && field_.front() != '[') f += '.';
            f += field_;
        }
        return input_error(std::move(f), value_, expected_);
    }

private:
    static std::string compose(const std::string& field, const std::string& value,
                               const std::string& expected) {
        std::string s = field.empty() ? std::string("input") : field;
        s += ": expected ";
        s += expected;
        s += ", got ";
        s += value.empty() ? std::string("nothing") : value;
        return s;
    }
    std::string field_, value_, expected_;
};

/// @brief A text input (log, JSON document) that cannot be read, with the 1-based line number.
class parse_error : public input_error {
public:
    parse_error(std::string source, std::size_t line, std::string value, std::string expected)
        : input_error(source + ":" + std::to_string(line), std::move(value), std::move(expected)),
          line_(line) {}
    [[nodiscard]] std::size_t line() const noexcept { return line_; }

private:
    std::size_t line_;
};

namespace detail {

/// Levenshtein distance, used for "did you mean" suggestions.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

/// Throws the error `make()` returns, built out of line: a check on the prediction path then
/// holds a compare and a call, no string building, and stays small enough to inline
/// (`if (bad) [[unlikely]] detail::fail([&] { return input_error(...); });`).
template <class Make>
[[noreturn, gnu::cold, gnu::noinline]] void fail(const Make& make) {
    throw make();
}

/// Printable form of a number for error messages (keeps NaN/inf readable).
inline std::string number_text(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string s = std::to_string(v);
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
    }
    if (std::fabs(v) >= 1e15 || (v != 0 && std::fabs(v) < 1e-6)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", v);
        s = buf;
    }
    return s;
}

}  // namespace detail

/// @brief Up to `max` names from `candidates` closest to `name` (edit distance, then prefix match).
template <class Range>
[[nodiscard]] std::vector<std::string> closest_names(std::string_view name, const Range& candidates,
                                                     std::size_t max = 3) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const auto& c : candidates) {
        std::string_view cv(c);
        std::size_t d = detail::edit_distance(name, cv);
        if (!name.empty() && cv.substr(0, std::min(cv.size(), name.size())) == name) d = d / 2;
        scored.emplace_back(d, std::string(cv));
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && out.size() < max; ++i) out.push_back(scored[i].second);
    return out;
}

/// @brief input_error for an unknown name: lists the closest known names ("did you mean ...").
template <class Range>
[[nodiscard]] input_error unknown_name(std::string field, std::string_view name, const Range& candidates) {
    std::string expected = "a known name";
    auto near = closest_names(name, candidates);
    if (!near.empty()) {
        expected += " (did you mean ";
        for (std::size_t i = 0; i < near.size(); ++i) {
            if (i) expected += i + 1 == near.size() ? " or " : ", ";
            expected += near[i];
        }
        expected += "?)";
    }
    return input_error(std::move(field), "'" + std::string(name) + "'", std::move(expected));
}

/// @brief Throws unless `v` is finite and > 0 (or >= 0 with allow_zero). Returns v.
inline double require_positive(std::string_view field, double v, bool allow_zero = false) {
    if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0))
        throw input_error(std::string(field), detail::number_text(v),
                          allow_zero ? "a finite number >= 0" : "a finite number > 0");
    return v;
}

/// @brief Throws unless lo <= v <= hi and finite. Returns v.
inline double require_range(std::string_view field, double v, double lo, double hi) {
    if (!std::isfinite(v) || v < lo || v > hi)
        throw input_error(std::string(field), detail::number_text(v),
                          "a number in [" + detail::number_text(lo) + ", " + detail::number_text(hi) + "]");
    return v;
}

/// @brief Throws unless lo <= v <= hi. Returns v.
inline long long require_int_range(std::string_view field, long long v, long long lo, long long hi) {
    if (v < lo || v > hi)
        throw input_error(std::string(field), std::to_string(v),
                          "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

}  // namespace commscale
