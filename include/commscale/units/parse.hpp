#pragma once
/// @file units/parse.hpp
/// @brief Reads quantities from text ("1.32GiB", "400Gbps", "450GB/s", "0.6us", "312TFLOPS") for
/// the CLI and the JSON loaders. A value of the wrong kind (a rate where a size is expected) is an
/// error naming the text and the expected kind, never a guess.

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "../units.hpp"

namespace commscale {

/// @brief What a unit suffix measures.
enum class quantity_kind { number, size, rate, time, work, work_rate };

/// @brief A human name for a quantity kind, used in error messages.
[[nodiscard]] constexpr std::string_view kind_name(quantity_kind k) {
    switch (k) {
        case quantity_kind::number: return "a plain number";
        case quantity_kind::size: return "a size (bytes; suffix B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)";
        case quantity_kind::rate: return "a rate (suffix GB/s, GBps, MB/s, TB/s, Mbps, Gbps, Tbps)";
        case quantity_kind::time: return "a time (suffix ns, us, ms, s)";
        case quantity_kind::work: return "an amount of work (suffix FLOP, GFLOP, TFLOP, PFLOP, EFLOP, ZFLOP)";
        case quantity_kind::work_rate: return "a compute rate (suffix GFLOPS, TFLOPS, PFLOPS)";
    }
    return "a quantity";
}

/// @brief A unit symbol: its kind and the factor to the base unit (B, s, B/s, FLOP, FLOP/s).
struct unit_info {
    quantity_kind kind;
    double scale;
};

/// @brief Looks up a unit symbol; nullopt if unknown. Accepts the spellings of CLI.md
/// (B, KB..TB, KiB..TiB, GB/s, GBps, Gbps, Tbps, ns, us, ms, s) and FLOP/FLOPS multiples.
[[nodiscard]] inline std::optional<unit_info> find_unit(std::string_view u) {
    struct entry { std::string_view sym; quantity_kind kind; double scale; };
    using K = quantity_kind;
    static constexpr entry table[] = {
        {"", K::size, 1.0}, {"B", K::size, 1.0},
        {"KB", K::size, kilo}, {"kB", K::size, kilo}, {"MB", K::size, mega}, {"GB", K::size, giga},
        {"TB", K::size, tera}, {"PB", K::size, peta},
        {"KiB", K::size, kibi}, {"MiB", K::size, mebi}, {"GiB", K::size, gibi}, {"TiB", K::size, tebi},
        {"B/s", K::rate, 1.0}, {"Bps", K::rate, 1.0},
        {"KB/s", K::rate, kilo}, {"MB/s", K::rate, mega}, {"MBps", K::rate, mega},
        {"GB/s", K::rate, giga}, {"GBps", K::rate, giga}, {"TB/s", K::rate, tera}, {"TBps", K::rate, tera},
        {"GiB/s", K::rate, gibi}, {"MiB/s", K::rate, mebi},
        {"bps", K::rate, 1.0 / 8.0}, {"b/s", K::rate, 1.0 / 8.0},
        {"Kbps", K::rate, kilo / 8.0}, {"Mbps", K::rate, mega / 8.0}, {"Mb/s", K::rate, mega / 8.0},
        {"Gbps", K::rate, giga / 8.0}, {"Gb/s", K::rate, giga / 8.0},
        {"Tbps", K::rate, tera / 8.0}, {"Tb/s", K::rate, tera / 8.0},
        {"ns", K::time, 1e-9}, {"us", K::time, 1e-6}, {"\xC2\xB5s", K::time, 1e-6}, {"ms", K::time, 1e-3},
        {"s", K::time, 1.0}, {"min", K::time, 60.0}, {"h", K::time, 3600.0}, {"d", K::time, 86400.0},
        {"FLOP", K::work, 1.0}, {"GFLOP", K::work, giga}, {"TFLOP", K::work, tera},
        {"PFLOP", K::work, peta}, {"EFLOP", K::work, exa}, {"ZFLOP", K::work, zetta},
        {"FLOPS", K::work_rate, 1.0}, {"FLOP/s", K::work_rate, 1.0},
        {"GFLOPS", K::work_rate, giga}, {"GFLOP/s", K::work_rate, giga},
        {"TFLOPS", K::work_rate, tera}, {"TFLOP/s", K::work_rate, tera},
        {"PFLOPS", K::work_rate, peta}, {"PFLOP/s", K::work_rate, peta},
    };
    for (const auto& e : table)
        if (e.sym == u) return unit_info{e.kind, e.scale};
    return std::nullopt;
}

/// @brief A parsed quantity: its kind and its value in base units (B, s, B/s, FLOP, FLOP/s).
struct parsed_quantity {
    quantity_kind kind;
    double value;
};

namespace detail {
/// Largest accepted magnitude per kind: beyond these a value is a typo, not a cluster.
[[nodiscard]] constexpr double absurd_limit(quantity_kind k) {
    switch (k) {
        case quantity_kind::size: return 1e18;       // 1 EB
        case quantity_kind::rate: return 1e16;       // 10 PB/s
        case quantity_kind::time: return 1e10;       // ~300 years
        case quantity_kind::work: return 1e30;       // far beyond any training run (GPT-4 est. 3e25)
        case quantity_kind::work_rate: return 1e21;  // 1 ZFLOP/s
        case quantity_kind::number: return 1e300;
    }
    return 1e300;
}
/// Smallest accepted non-zero magnitude per kind (zero itself is accepted): 1e-30 base units
/// (1e-30 s, B, B/s, FLOP) is far below any physical figure, and keeps every conversion away
/// from subnormal doubles ("1e-320s"); plain numbers only lose the subnormals (below 1e-300).
[[nodiscard]] constexpr double absurd_small(quantity_kind k) { return k == quantity_kind::number ? 1e-300 : 1e-30; }
inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}
}  // namespace detail

/// @brief Parses "<number>[ ]<unit>". With `expected` set, a unitless number takes that kind's
/// base unit (bytes, seconds, ...); a unit of another kind throws. Negative, NaN, infinite and
/// absurd values throw. `field` names the input in errors.
[[nodiscard]] inline parsed_quantity parse_quantity(std::string_view text, quantity_kind expected,
                                                    std::string_view field = "value") {
    const std::string_view t = detail::trim(text);
    const std::string shown = "'" + std::string(text) + "'";
    const std::string want(kind_name(expected));
    if (t.empty()) throw input_error(std::string(field), "an empty string", want);
    double v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range)
        throw input_error(std::string(field), shown, want + " of sensible magnitude");
    if (ec != std::errc() ) throw input_error(std::string(field), shown, want);
    std::string_view suffix = detail::trim(std::string_view(ptr, static_cast<std::size_t>(t.data() + t.size() - ptr)));
    if (!std::isfinite(v)) throw input_error(std::string(field), shown, want + ", finite");
    if (v < 0) throw input_error(std::string(field), shown, want + ", not negative");
    if (v == 0) v = 0.0;  // "-0" is zero, printed as 0 (not "-0")
    if (v != 0 && v < detail::absurd_small(expected))
        throw input_error(std::string(field), shown,
                          want + ", 0 or no smaller than " + detail::number_text(detail::absurd_small(expected)));
    if (expected == quantity_kind::number) {
        if (!suffix.empty()) throw input_error(std::string(field), shown, want);
        return {quantity_kind::number, v};
    }
    unit_info u{expected, 1.0};
    if (!suffix.empty()) {
        auto found = find_unit(suffix);
        if (!found) throw input_error(std::string(field), shown + " (unknown unit '" + std::string(suffix) + "')", want);
        u = *found;
    }
    if (u.kind != expected)
        throw input_error(std::string(field), shown + " (" + std::string(kind_name(u.kind)).substr(0, std::string(kind_name(u.kind)).find(" (")) + ")", want);
    const double base = v * u.scale;
    if (base != 0 && base < detail::absurd_small(expected))
        throw input_error(std::string(field), shown,
                          want + ", 0 or no smaller than " + detail::number_text(detail::absurd_small(expected)) + " base units");
    if (base > detail::absurd_limit(expected))
        throw input_error(std::string(field), shown, want + " no larger than " + detail::number_text(detail::absurd_limit(expected)) + " base units");
    return {expected, base};
}

/// @brief Parses a size ("1.32GiB", "8GB", "4096"). See parse_quantity.
[[nodiscard]] inline data_size parse_size(std::string_view text, std::string_view field = "size") {
    return bytes(parse_quantity(text, quantity_kind::size, field).value);
}
/// @brief Slowest byte rate accepted for hardware (a link direction, a memory, a channel):
/// 1 MB/s (8 Mbit/s). Anything slower is a unit slip (a Gbps figure entered as GB/s x 1e-9),
/// not hardware, and the times computed from it would overflow. (convert accepts any rate.)
inline constexpr double min_hardware_rate = 1e6;  // B/s

/// @brief Throws input_error naming `field` unless `bps` (B/s) is at least min_hardware_rate.
inline double require_hardware_rate(std::string_view field, double bps, std::string_view shown) {
    if (!(bps >= min_hardware_rate))
        throw input_error(std::string(field), std::string(shown),
                          "a rate of at least 1 MB/s (0.001 GB/s, 8 Mbps)");
    return bps;
}

/// @brief Parses a per-direction rate of hardware ("400Gbps", "450GB/s"), at least 1 MB/s (see
/// min_hardware_rate). See parse_quantity.
[[nodiscard]] inline byte_rate parse_rate(std::string_view text, std::string_view field = "rate") {
    const double v = parse_quantity(text, quantity_kind::rate, field).value;
    return bytes_per_second(require_hardware_rate(field, v, "'" + std::string(text) + "'"));
}
/// @brief Parses a time ("0.6us", "3.2ms"); a bare number is seconds. See parse_quantity.
[[nodiscard]] inline duration parse_time(std::string_view text, std::string_view field = "time") {
    return seconds(parse_quantity(text, quantity_kind::time, field).value);
}
/// @brief Parses an amount of work ("420ZFLOP"). See parse_quantity.
[[nodiscard]] inline flop_count parse_work(std::string_view text, std::string_view field = "flops") {
    return flops(parse_quantity(text, quantity_kind::work, field).value);
}
/// @brief Parses a compute rate ("312TFLOPS"). See parse_quantity.
[[nodiscard]] inline flop_rate parse_work_rate(std::string_view text, std::string_view field = "flop_rate") {
    return flops_per_second(parse_quantity(text, quantity_kind::work_rate, field).value);
}

/// @brief Parses a plain non-negative finite number ("0.8", "1e9").
[[nodiscard]] inline double parse_number(std::string_view text, std::string_view field = "value") {
    return parse_quantity(text, quantity_kind::number, field).value;
}

/// @brief The multiplier of a count's suffix as people write token, parameter and FLOP counts
/// ("15T tokens", "70B parameters"): the SI prefixes k (also K), M, G, T, P, E, Z (10^3 to
/// 10^21), and B for 10^9 (billion, the suffix of model names: "Llama 3 70B"); nullopt otherwise.
[[nodiscard]] constexpr std::optional<double> count_multiplier(std::string_view suffix) {
    if (suffix.empty()) return 1.0;
    if (suffix.size() != 1) return std::nullopt;
    switch (suffix.front()) {
        case 'k':
        case 'K': return kilo;
        case 'M': return mega;
        case 'G':
        case 'B': return giga;
        case 'T': return tera;
        case 'P': return peta;
        case 'E': return exa;
        case 'Z': return zetta;
        default: return std::nullopt;
    }
}

/// @brief Parses a count with an optional suffix of count_multiplier ("15T" = 1.5e13, "70B" =
/// 7e10, "4M", "2.5e12", "300e9"). Negative, NaN, infinite and unknown suffixes throw naming
/// `field`, the text and the accepted suffixes; so do values above 1e300.
[[nodiscard]] inline double parse_count(std::string_view text, std::string_view field = "count") {
    const std::string_view t = detail::trim(text);
    const std::string shown = "'" + std::string(text) + "'";
    constexpr std::string_view want = "a count: a number with an optional suffix k, M, G (or B), T, P, E or Z (e.g. 15T, 70B, 2.5e12)";
    std::size_t cut = t.size();
    while (cut > 0 && std::isalpha(static_cast<unsigned char>(t[cut - 1]))) --cut;
    const std::string_view suffix = detail::trim(t.substr(cut));
    const auto scale = count_multiplier(suffix);
    if (cut == 0) throw input_error(std::string(field), shown, std::string(want));
    if (!scale) throw input_error(std::string(field), shown + " (unknown suffix '" + std::string(suffix) + "')", std::string(want));
    double v = 0;
    try {
        v = parse_number(t.substr(0, cut), field);
    } catch (const input_error&) {
        throw input_error(std::string(field), shown, std::string(want));
    }
    const double n = v * *scale;
    if (!(n <= 1e300)) throw input_error(std::string(field), shown, std::string(want) + " of sensible magnitude");
    return n;
}

/// @brief Parses a FLOP count as people type it: a count of parse_count ("2.5e24", "420Z") or an
/// amount of work with its unit ("420ZFLOP", parse_work, whose error names the units accepted).
[[nodiscard]] inline flop_count parse_flop_count(std::string_view text, std::string_view field = "flops") {
    try {
        return flops(parse_count(text, field));
    } catch (const input_error&) {
        return parse_work(text, field);
    }
}

/// @brief Converts "VALUE" to the unit `to` ("400Gbps" -> "GB/s" = 50). Both must be of one kind.
[[nodiscard]] inline double convert(std::string_view value, std::string_view to) {
    auto target = find_unit(detail::trim(to));
    if (!target || detail::trim(to).empty())
        throw input_error("unit", "'" + std::string(to) + "'",
                          "a unit: B, KB..TB, KiB..TiB, GB/s, GBps, Gbps, Tbps, ns, us, ms, s, TFLOP, TFLOPS");
    const parsed_quantity q = parse_quantity(value, target->kind, "value");
    return q.value / target->scale;
}

}  // namespace commscale
