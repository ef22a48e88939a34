// nvlink<9> names no NVLink generation: the constraint must reject it at compile time.
// Built with -DCOMMSCALE_CONTROL it spells a real generation and must compile.
#include <commscale/hardware/links.hpp>

#ifdef COMMSCALE_CONTROL
constexpr int generation = 4;
#else
constexpr int generation = 9;
#endif

[[maybe_unused]] constexpr auto bad = commscale::nvlink<generation>;
