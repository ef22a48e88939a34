// Fuzz target: the measurement log reader (nccl-tests / rccl-tests text, nccl-tests -J JSON, the
// commscale probe JSON) through parse_measurements. Any input must either give measurement sets
// whose rows are finite, non-negative and sorted by size, or throw commscale::input_error.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <commscale/calibrate/nccl_tests.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 262144) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto sets = commscale::parse_measurements(text, "fuzz.log");
        for (const auto& s : sets) {
            if (s.ranks < 0 || s.nodes < 0) std::abort();
            double last = -1;
            for (const auto& r : s.rows) {
                const double row_bytes = commscale::in_bytes(r.bytes);
                for (double v : {row_bytes, r.count, commscale::in_us(r.time), commscale::in_GBps(r.algbw), commscale::in_GBps(r.busbw)})
                    if (!std::isfinite(v) || v < 0) std::abort();
                if (row_bytes < last) std::abort();
                last = row_bytes;
            }
        }
    } catch (const commscale::input_error&) {
    }
    return 0;
}
