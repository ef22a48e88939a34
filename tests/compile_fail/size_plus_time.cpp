// Adding bytes to seconds is a dimension error: it must not compile. The control adds the
// transfer time of the bytes instead, which is a time.
#include <commscale/units.hpp>

using namespace commscale::literals;

[[maybe_unused]] inline auto sum() {
    const commscale::data_size size = 8_GB;
    const commscale::duration latency = 5_us;
#ifdef COMMSCALE_CONTROL
    return latency + size / 400_Gbps;
#else
    return latency + size;
#endif
}
