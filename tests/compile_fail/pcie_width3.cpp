// PCIe has no x3 link width: pcie<5, 3> must not compile.
#include <commscale/hardware/links.hpp>

#ifdef COMMSCALE_CONTROL
constexpr int width = 4;
#else
constexpr int width = 3;
#endif

[[maybe_unused]] constexpr auto bad = commscale::pcie<5, width>;
