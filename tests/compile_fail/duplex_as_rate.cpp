// A duplex (both directions) figure never converts to a per-direction byte_rate: assigning one to
// the other must not compile. The control asks for the per-direction half explicitly.
#include <commscale/hardware/links.hpp>
#include <commscale/units.hpp>

using namespace commscale::literals;

#ifdef COMMSCALE_CONTROL
[[maybe_unused]] const commscale::byte_rate advertised = commscale::duplex(900_GBps).per_direction();
[[maybe_unused]] const commscale::byte_rate h100 = commscale::nvlink<4>.duplex().per_direction();
#else
[[maybe_unused]] const commscale::byte_rate advertised = commscale::duplex(900_GBps);
#endif
