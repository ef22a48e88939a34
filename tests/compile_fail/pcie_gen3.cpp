// PCIe generations below 4 are not in the catalog: pcie<3, 16> must not compile.
#include <commscale/hardware/links.hpp>

#ifdef COMMSCALE_CONTROL
constexpr int generation = 4;
#else
constexpr int generation = 3;
#endif

[[maybe_unused]] constexpr auto bad = commscale::pcie<generation, 16>;
