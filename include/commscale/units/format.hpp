#pragma once
/// @file units/format.hpp
/// @brief Short human-readable text for quantities ("450 GB/s", "1.32 GiB", "3.2 ms").
/// Boost.Units' own stream output prints bytes in its base system and is not used for output.

#include <cmath>
#include <cstdio>
#include <string>

#include "../units.hpp"

namespace commscale {

namespace detail {
/// Three significant digits, no trailing zeros, no exponent for 1..999.
inline std::string sig3(double v) {
    char buf[48];
    if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) {
        std::snprintf(buf, sizeof buf, "%.3g", v);
        return buf;
    }
    const double a = std::fabs(v);
    const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s;
}
inline std::string scaled(double v, const double* scales, const char* const* names, int n,
                          double base = 1000.0) {
    int i = 0;
    while (i + 1 < n && std::fabs(v) >= scales[i + 1] * (base >= 1000.0 ? 0.9995 : 1.0)) ++i;
    return sig3(v / scales[i]) + " " + names[i];
}
}  // namespace detail

/// @brief "1.42 GB" (decimal prefixes) or, with iec, "1.32 GiB".
[[nodiscard]] inline std::string to_string(data_size s, bool iec = false) {
    if (iec) {
        static constexpr double sc[] = {1.0, kibi, mebi, gibi, tebi};
        static constexpr const char* nm[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        return detail::scaled(s.value(), sc, nm, 5, 1024.0);
    }
    static constexpr double sc[] = {1.0, kilo, mega, giga, tera, peta};
    static constexpr const char* nm[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    return detail::scaled(s.value(), sc, nm, 6);
}

/// @brief "450 GB/s"; with bits, "400 Gbps".
[[nodiscard]] inline std::string to_string(byte_rate r, bool bits = false) {
    if (bits) {
        static constexpr double sc[] = {1.0, kilo, mega, giga, tera};
        static constexpr const char* nm[] = {"bps", "Kbps", "Mbps", "Gbps", "Tbps"};
        return detail::scaled(r.value() * 8.0, sc, nm, 5);
    }
    static constexpr double sc[] = {1.0, kilo, mega, giga, tera};
    static constexpr const char* nm[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
    return detail::scaled(r.value(), sc, nm, 5);
}

/// @brief "3.2 ms", "0.6 us", "12.8 s".
[[nodiscard]] inline std::string to_string(duration t) {
    const double v = t.value();
    const double a = std::fabs(v);
    if (a == 0) return "0 s";
    if (a < 1e-7) return detail::sig3(v * 1e9) + " ns";
    if (a < 1e-4) return detail::sig3(v * 1e6) + " us";
    if (a < 1.0) return detail::sig3(v * 1e3) + " ms";
    return detail::sig3(v) + " s";
}

/// @brief "65.5 TFLOP".
[[nodiscard]] inline std::string to_string(flop_count f) {
    static constexpr double sc[] = {1.0, kilo, mega, giga, tera, peta, exa, zetta};
    static constexpr const char* nm[] = {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP"};
    return detail::scaled(f.value(), sc, nm, 8);
}

/// @brief "312 TFLOP/s".
[[nodiscard]] inline std::string to_string(flop_rate f) {
    static constexpr double sc[] = {1.0, kilo, mega, giga, tera, peta, exa};
    static constexpr const char* nm[] = {"FLOP/s", "KFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s"};
    return detail::scaled(f.value(), sc, nm, 7);
}

}  // namespace commscale
