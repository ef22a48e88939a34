#pragma once
/// @file calibrate/nccl_tests_common.hpp
/// @brief The pieces the measurement readers share (calibrate/nccl_tests.hpp is the umbrella):
/// token and number scanning as nccl-tests prints them, the collective named in a file name, the
/// rank count implied by busbw / algbw, and the JSON value helpers of the two JSON readers.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../error.hpp"
#include "../io/file.hpp"
#include "measurements.hpp"

namespace commscale {

namespace detail::nccl {

inline constexpr std::string_view accepted_formats =
    "nccl-tests or rccl-tests text output, nccl-tests JSON (-J), or commscale probe JSON";

[[nodiscard]] inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

[[nodiscard]] inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (is_space(s.front()) || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

[[nodiscard]] inline std::vector<std::string_view> tokens(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i])) ++i;
        const std::size_t b = i;
        while (i < s.size() && !is_space(s[i])) ++i;
        if (i > b) out.push_back(s.substr(b, i - b));
    }
    return out;
}

[[nodiscard]] inline bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (detail::ascii_lower(a[i]) != detail::ascii_lower(b[i])) return false;
    return true;
}

[[nodiscard]] inline bool contains(std::string_view s, std::string_view what) {
    return s.find(what) != std::string_view::npos;
}

/// A short printable excerpt of a line for messages (control bytes shown as '?').
[[nodiscard]] inline std::string excerpt(std::string_view s, std::size_t max = 80) {
    s = trim(s);
    std::string out;
    for (std::size_t i = 0; i < s.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        out += (c < 0x20 || c == 0x7f) ? '?' : s[i];
    }
    if (s.size() > max) out += "...";
    return "'" + out + "'";
}

/// A number as nccl-tests prints it: decimal or exponent form, optional '+', '_' digit separators
/// (hand-edited tables), a trailing '*' (rccl-tests marks errors over threshold so). NaN and inf
/// parse (the caller rejects them with a precise message).
[[nodiscard]] inline std::optional<double> number(std::string_view s) {
    if (!s.empty() && s.back() == '*') s.remove_suffix(1);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (s.empty() || s.size() > 64) return std::nullopt;
    char buf[64];
    std::size_t n = 0;
    for (char c : s) {
        if (c == '_') continue;
        buf[n++] = c;
    }
    if (n == 0) return std::nullopt;
    double v = 0;
    const auto r = std::from_chars(buf, buf + n, v);
    if (r.ec != std::errc() || r.ptr != buf + n) {
        // from_chars reports out-of-range for huge exponents; treat as not a usable number.
        return std::nullopt;
    }
    return v;
}

[[nodiscard]] inline std::optional<long long> integer(std::string_view s) {
    long long v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

/// The op named in a file name ("sendrecv_ib.log", "all-gather.txt"), longest names first.
[[nodiscard]] inline std::optional<collective_op> op_in_source_name(std::string_view name) {
    std::string s;
    for (char c : name) {
        if (c == '-' || c == '_' || c == ' ') continue;
        s += detail::ascii_lower(c);
    }
    const std::pair<std::string_view, collective_op> names[] = {
        {"reducescatter", collective_op::reduce_scatter}, {"allreduce", collective_op::all_reduce},
        {"allgather", collective_op::all_gather},         {"alltoall", collective_op::all_to_all},
        {"sendrecv", collective_op::send_recv},           {"broadcast", collective_op::broadcast},
    };
    for (const auto& [n, op] : names)
        if (contains(s, n)) return op;
    if (contains(s, "reduce")) return collective_op::reduce;
    return std::nullopt;
}

[[nodiscard]] inline std::string line_list(const std::vector<std::size_t>& lines) {
    std::string s;
    for (std::size_t i = 0; i < lines.size() && i < 12; ++i) {
        if (i) s += ", ";
        s += std::to_string(lines[i]);
    }
    if (lines.size() > 12) s += ", ... (" + std::to_string(lines.size()) + " in all)";
    return s;
}

/// Ranks consistent with busbw / algbw on every row (nccl-tests prints 2 decimals), or 0 when the
/// factor does not depend on the rank count or several counts fit. Source of the factor:
/// nccl-tests doc/PERFORMANCE.md (busbw_factor in collective/model.hpp).
[[nodiscard]] inline int ranks_from_bus_factor(collective_op op, const std::vector<measured_row>& rows) {
    if (op == collective_op::broadcast || op == collective_op::reduce || op == collective_op::send_recv) return 0;
    int found = 0, count = 0;
    bool any = false;
    for (int n = 1; n <= 4096; ++n) {
        const double f = n == 1 ? 0.0 : busbw_factor(op, n);
        bool ok = true;
        for (const auto& r : rows) {
            const double algbw = in_GBps(r.algbw), busbw = in_GBps(r.busbw);
            if (algbw < 1.0) continue;  // too few printed digits to tell
            any = true;
            // Printed to 2 decimals: each column is off by up to 0.005 (plus relative slack for
            // the 3-significant-digit forms of large values).
            const double tol_a = 0.0051 + 5e-4 * algbw, tol_b = 0.0051 + 5e-4 * busbw;
            const double lo = (algbw - tol_a) * f - tol_b, hi = (algbw + tol_a) * f + tol_b;
            if (busbw < lo || busbw > hi) {
                ok = false;
                break;
            }
        }
        if (!any) return 0;
        if (ok) {
            found = n;
            if (++count > 1) return 0;
        }
    }
    return count == 1 ? found : 0;
}

/// 1-based line of byte offset `byte` in `text`.
[[nodiscard]] inline std::size_t line_of(std::string_view text, std::size_t byte) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < text.size() && i < byte; ++i)
        if (text[i] == '\n') ++line;
    return line;
}

/// A JSON value as a double: numbers, numeric strings (nccl-tests pads root as "    -1"), "nan".
[[nodiscard]] inline std::optional<double> json_number(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        const auto s = trim(v.get_ref<const std::string&>());
        if (iequals(s, "nan") || iequals(s, "-nan")) return std::numeric_limits<double>::quiet_NaN();
        return number(s);
    }
    return std::nullopt;
}

/// The first of `keys` present (not null) in object `o`, else nullptr.
[[nodiscard]] inline const nlohmann::json* json_find(const nlohmann::json& o, std::initializer_list<const char*> keys) {
    if (!o.is_object()) return nullptr;
    for (const char* k : keys) {
        const auto it = o.find(k);
        if (it != o.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

[[nodiscard]] inline std::string json_string(const nlohmann::json* v) {
    if (!v) return {};
    if (v->is_string()) return std::string(trim(v->get_ref<const std::string&>()));
    if (v->is_number()) return v->dump();
    return {};
}

}  // namespace detail::nccl

}  // namespace commscale
