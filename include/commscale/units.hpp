#pragma once
/// @file units.hpp
/// @brief Quantities with dimensions: one homogeneous Boost.Units system whose base units are the
/// byte, the second and the floating-point operation, so `latency + bytes / rate` is a `duration`
/// with no casts, and adding bytes to seconds does not compile.
///
/// Prefixes follow the vendors: decimal for rates and sizes quoted as GB, GB/s, Gbps (1 GB = 1e9 B,
/// 1 Gbps = 1e9 bit/s = 0.125e9 B/s); IEC (KiB, MiB, GiB = 2^30 B) only where binary is meant.
/// Note for arithmetic: Boost.Units multiplies a quantity by a scalar of the same value type only,
/// so write `2.0 * q`, not `2 * q`.

#include <boost/units/base_dimension.hpp>
#include <boost/units/base_unit.hpp>
#include <boost/units/derived_dimension.hpp>
#include <boost/units/make_system.hpp>
#include <boost/units/quantity.hpp>
#include <boost/units/unit.hpp>
#include <boost/units/cmath.hpp>

#include <cmath>
#include <limits>

namespace commscale {

namespace units {

/// Base dimensions of the commscale system (ordinals chosen away from Boost's own).
struct data_base_dimension : boost::units::base_dimension<data_base_dimension, 7101> {};
struct time_base_dimension : boost::units::base_dimension<time_base_dimension, 7102> {};
struct work_base_dimension : boost::units::base_dimension<work_base_dimension, 7103> {};

using data_dimension = data_base_dimension::dimension_type;
using time_dimension = time_base_dimension::dimension_type;
using work_dimension = work_base_dimension::dimension_type;

struct byte_base_unit : boost::units::base_unit<byte_base_unit, data_dimension, 7111> {
    static constexpr const char* name() { return "byte"; }
    static constexpr const char* symbol() { return "B"; }
};
struct second_base_unit : boost::units::base_unit<second_base_unit, time_dimension, 7112> {
    static constexpr const char* name() { return "second"; }
    static constexpr const char* symbol() { return "s"; }
};
struct flop_base_unit : boost::units::base_unit<flop_base_unit, work_dimension, 7113> {
    static constexpr const char* name() { return "floating-point operation"; }
    static constexpr const char* symbol() { return "FLOP"; }
};

/// The one homogeneous system: byte, second, FLOP.
using system = boost::units::make_system<byte_base_unit, second_base_unit, flop_base_unit>::type;

using byte_unit = boost::units::unit<data_dimension, system>;
using second_unit = boost::units::unit<time_dimension, system>;
using flop_unit = boost::units::unit<work_dimension, system>;
using byte_rate_unit = boost::units::divide_typeof_helper<byte_unit, second_unit>::type;
using flop_rate_unit = boost::units::divide_typeof_helper<flop_unit, second_unit>::type;
using dimensionless_unit = boost::units::unit<boost::units::dimensionless_type, system>;

}  // namespace units

/// @brief An amount of data, in bytes.
using data_size = boost::units::quantity<units::byte_unit, double>;
/// @brief A time interval, in seconds.
using duration = boost::units::quantity<units::second_unit, double>;
/// @brief A data rate, in bytes per second (one direction unless a name says otherwise).
using byte_rate = boost::units::quantity<units::byte_rate_unit, double>;
/// @brief An amount of computation, in floating-point operations.
using flop_count = boost::units::quantity<units::flop_unit, double>;
/// @brief A computation rate, in FLOP per second.
using flop_rate = boost::units::quantity<units::flop_rate_unit, double>;

/// Raw constructors from SI base values (bytes, seconds, FLOPs).
[[nodiscard]] constexpr data_size bytes(double v) { return data_size::from_value(v); }
[[nodiscard]] constexpr duration seconds(double v) { return duration::from_value(v); }
[[nodiscard]] constexpr byte_rate bytes_per_second(double v) { return byte_rate::from_value(v); }
[[nodiscard]] constexpr flop_count flops(double v) { return flop_count::from_value(v); }
[[nodiscard]] constexpr flop_rate flops_per_second(double v) { return flop_rate::from_value(v); }

/// Scale constants (decimal and IEC).
inline constexpr double kilo = 1e3, mega = 1e6, giga = 1e9, tera = 1e12, peta = 1e15, exa = 1e18,
                        zetta = 1e21;
inline constexpr double kibi = 1024.0, mebi = kibi * 1024.0, gibi = mebi * 1024.0, tebi = gibi * 1024.0;

/// Named accessors returning plain doubles in a stated unit (for output and JSON).
[[nodiscard]] constexpr double in_bytes(data_size s) { return s.value(); }
[[nodiscard]] constexpr double in_seconds(duration t) { return t.value(); }
[[nodiscard]] constexpr double in_us(duration t) { return t.value() * 1e6; }
[[nodiscard]] constexpr double in_GBps(byte_rate r) { return r.value() / giga; }
[[nodiscard]] constexpr double in_Gbps(byte_rate r) { return r.value() * 8.0 / giga; }
[[nodiscard]] constexpr double in_flops(flop_count f) { return f.value(); }
[[nodiscard]] constexpr double in_tflops(flop_rate f) { return f.value() / tera; }

namespace detail {
/// The double x nearest `guess` with `written(x) == v` (a few ulps either side), else `guess`:
/// reads a number written in a derived unit (`x * 1e6`, `x / 1e12`) back to the bit.
template <class Written>
[[nodiscard]] double invert_scaled(double v, double guess, Written written) {
    if (!std::isfinite(guess) || written(guess) == v) return guess;
    double lo = guess, hi = guess;
    for (int i = 0; i < 64; ++i) {
        lo = std::nextafter(lo, -std::numeric_limits<double>::infinity());
        if (written(lo) == v) return lo;
        hi = std::nextafter(hi, std::numeric_limits<double>::infinity());
        if (written(hi) == v) return hi;
    }
    return guess;
}
}  // namespace detail

/// Inverses of the named accessors for values read from text and JSON: `in_us(from_us(v)) == v`
/// for every v that some duration writes as (otherwise the nearest duration), so a file read and
/// written back keeps its numbers to the bit, and `from_us(in_us(t)) == t`.
[[nodiscard]] inline duration from_us(double v) {
    return seconds(detail::invert_scaled(v, v / 1e6, [](double x) { return in_us(seconds(x)); }));
}
[[nodiscard]] inline byte_rate from_GBps(double v) {
    return bytes_per_second(detail::invert_scaled(v, v * giga, [](double x) { return in_GBps(bytes_per_second(x)); }));
}
[[nodiscard]] inline byte_rate from_Gbps(double v) {
    return bytes_per_second(detail::invert_scaled(v, v * giga / 8.0, [](double x) { return in_Gbps(bytes_per_second(x)); }));
}
[[nodiscard]] inline flop_rate from_tflops(double v) {
    return flops_per_second(detail::invert_scaled(v, v * tera, [](double x) { return in_tflops(flops_per_second(x)); }));
}

/// @brief A measured time as its text wrote it: the decimal microseconds read (nccl-tests' time
/// column, the probe's `time_us`). Kept as read rather than as the duration it reads as: some
/// decimals have no duration whose in_us is that number (61.38 and 16240 among them: about 2% of
/// the times nccl-tests prints), so fits, relative errors and outputs start from the printed
/// number itself. `in_us` gives it back; `as_duration()` is the duration it reads as (from_us).
struct time_as_read {
    double us = 0;

    [[nodiscard]] duration as_duration() const { return from_us(us); }
    friend bool operator==(const time_as_read&, const time_as_read&) = default;
};

/// @brief The microseconds of a measured time, as read.
[[nodiscard]] constexpr double in_us(time_as_read t) { return t.us; }

/// @brief constexpr literals, in an inline namespace: `using namespace commscale::literals;`.
inline namespace literals {
// sizes (decimal)
constexpr data_size operator""_B(long double v) { return bytes(static_cast<double>(v)); }
constexpr data_size operator""_B(unsigned long long v) { return bytes(static_cast<double>(v)); }
constexpr data_size operator""_KB(long double v) { return bytes(static_cast<double>(v) * kilo); }
constexpr data_size operator""_KB(unsigned long long v) { return bytes(static_cast<double>(v) * kilo); }
constexpr data_size operator""_MB(long double v) { return bytes(static_cast<double>(v) * mega); }
constexpr data_size operator""_MB(unsigned long long v) { return bytes(static_cast<double>(v) * mega); }
constexpr data_size operator""_GB(long double v) { return bytes(static_cast<double>(v) * giga); }
constexpr data_size operator""_GB(unsigned long long v) { return bytes(static_cast<double>(v) * giga); }
constexpr data_size operator""_TB(long double v) { return bytes(static_cast<double>(v) * tera); }
constexpr data_size operator""_TB(unsigned long long v) { return bytes(static_cast<double>(v) * tera); }
// sizes (IEC)
constexpr data_size operator""_KiB(long double v) { return bytes(static_cast<double>(v) * kibi); }
constexpr data_size operator""_KiB(unsigned long long v) { return bytes(static_cast<double>(v) * kibi); }
constexpr data_size operator""_MiB(long double v) { return bytes(static_cast<double>(v) * mebi); }
constexpr data_size operator""_MiB(unsigned long long v) { return bytes(static_cast<double>(v) * mebi); }
constexpr data_size operator""_GiB(long double v) { return bytes(static_cast<double>(v) * gibi); }
constexpr data_size operator""_GiB(unsigned long long v) { return bytes(static_cast<double>(v) * gibi); }
constexpr data_size operator""_TiB(long double v) { return bytes(static_cast<double>(v) * tebi); }
constexpr data_size operator""_TiB(unsigned long long v) { return bytes(static_cast<double>(v) * tebi); }
// rates: bytes per second (GB/s = GBps) and bits per second (Gbps, Tbps)
constexpr byte_rate operator""_MBps(long double v) { return bytes_per_second(static_cast<double>(v) * mega); }
constexpr byte_rate operator""_MBps(unsigned long long v) { return bytes_per_second(static_cast<double>(v) * mega); }
constexpr byte_rate operator""_GBps(long double v) { return bytes_per_second(static_cast<double>(v) * giga); }
constexpr byte_rate operator""_GBps(unsigned long long v) { return bytes_per_second(static_cast<double>(v) * giga); }
constexpr byte_rate operator""_TBps(long double v) { return bytes_per_second(static_cast<double>(v) * tera); }
constexpr byte_rate operator""_TBps(unsigned long long v) { return bytes_per_second(static_cast<double>(v) * tera); }
constexpr byte_rate operator""_Mbps(long double v) { return bytes_per_second(static_cast<double>(v) * mega / 8.0); }
constexpr byte_rate operator""_Mbps(unsigned long long v) { return bytes_per_second(static_cast<double>(v) * mega / 8.0); }
constexpr byte_rate operator""_Gbps(long double v) { return bytes_per_second(static_cast<double>(v) * giga / 8.0); }
constexpr byte_rate operator""_Gbps(unsigned long long v) { return bytes_per_second(static_cast<double>(v) * giga / 8.0); }
constexpr byte_rate operator""_Tbps(long double v) { return bytes_per_second(static_cast<double>(v) * tera / 8.0); }
constexpr byte_rate operator""_Tbps(unsigned long long v) { return bytes_per_second(static_cast<double>(v) * tera / 8.0); }
// times
constexpr duration operator""_ns(long double v) { return seconds(static_cast<double>(v) * 1e-9); }
constexpr duration operator""_ns(unsigned long long v) { return seconds(static_cast<double>(v) * 1e-9); }
constexpr duration operator""_us(long double v) { return seconds(static_cast<double>(v) * 1e-6); }
constexpr duration operator""_us(unsigned long long v) { return seconds(static_cast<double>(v) * 1e-6); }
constexpr duration operator""_ms(long double v) { return seconds(static_cast<double>(v) * 1e-3); }
constexpr duration operator""_ms(unsigned long long v) { return seconds(static_cast<double>(v) * 1e-3); }
constexpr duration operator""_s(long double v) { return seconds(static_cast<double>(v)); }
constexpr duration operator""_s(unsigned long long v) { return seconds(static_cast<double>(v)); }
// work and compute rates
constexpr flop_count operator""_FLOP(long double v) { return flops(static_cast<double>(v)); }
constexpr flop_count operator""_FLOP(unsigned long long v) { return flops(static_cast<double>(v)); }
constexpr flop_count operator""_TFLOP(long double v) { return flops(static_cast<double>(v) * tera); }
constexpr flop_count operator""_TFLOP(unsigned long long v) { return flops(static_cast<double>(v) * tera); }
constexpr flop_count operator""_PFLOP(long double v) { return flops(static_cast<double>(v) * peta); }
constexpr flop_count operator""_PFLOP(unsigned long long v) { return flops(static_cast<double>(v) * peta); }
constexpr flop_count operator""_ZFLOP(long double v) { return flops(static_cast<double>(v) * zetta); }
constexpr flop_count operator""_ZFLOP(unsigned long long v) { return flops(static_cast<double>(v) * zetta); }
constexpr flop_rate operator""_TFLOPS(long double v) { return flops_per_second(static_cast<double>(v) * tera); }
constexpr flop_rate operator""_TFLOPS(unsigned long long v) { return flops_per_second(static_cast<double>(v) * tera); }
constexpr flop_rate operator""_PFLOPS(long double v) { return flops_per_second(static_cast<double>(v) * peta); }
constexpr flop_rate operator""_PFLOPS(unsigned long long v) { return flops_per_second(static_cast<double>(v) * peta); }
}  // namespace literals

/// @brief Bandwidth in both directions together. A duplex figure (what vendors usually print)
/// enters the library only through this type; it never converts implicitly to a `byte_rate`,
/// which always means one direction.
struct duplex_rate {
    byte_rate both_directions;
    /// @brief Per-direction rate: half the duplex figure.
    [[nodiscard]] constexpr byte_rate per_direction() const { return both_directions / 2.0; }
};

/// @brief Wraps a duplex (bidirectional) figure: `duplex(900_GBps).per_direction() == 450_GBps`.
[[nodiscard]] constexpr duplex_rate duplex(byte_rate both_directions) { return {both_directions}; }

}  // namespace commscale
