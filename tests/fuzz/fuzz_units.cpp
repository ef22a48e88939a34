// Fuzz target: the quantity/unit text parser and converter. Any input must either parse to a
// finite, non-negative value of the expected kind or throw commscale::input_error.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <commscale/units/format.hpp>
#include <commscale/units/parse.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto sep = text.find('|');
    const std::string value = text.substr(0, sep);
    using K = commscale::quantity_kind;
    for (K k : {K::number, K::size, K::rate, K::time, K::work, K::work_rate}) {
        try {
            const auto q = commscale::parse_quantity(value, k, "fuzz");
            if (!std::isfinite(q.value) || q.value < 0 || q.kind != k) std::abort();
        } catch (const commscale::input_error&) {
        }
    }
    if (sep != std::string::npos) {
        try {
            const double v = commscale::convert(value, text.substr(sep + 1));
            if (!std::isfinite(v) || v < 0) std::abort();
        } catch (const commscale::input_error&) {
        }
    }
    try {
        (void)commscale::to_string(commscale::parse_size(value), true);
        (void)commscale::to_string(commscale::parse_rate(value));
        (void)commscale::to_string(commscale::parse_time(value));
    } catch (const commscale::input_error&) {
    }
    return 0;
}
