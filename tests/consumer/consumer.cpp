// A downstream program: uses the core library (units + catalog) the way a capacity-planning tool would.
#include <commscale/commscale.hpp>

#include <iostream>

int main() {
    using namespace commscale;
    constexpr commscale::link l = nvlink<4>;
    static_assert(l.per_direction == 450_GBps);
    std::cout << "nvlink4 per direction " << to_string(l.per_direction) << "\n";
    const duration t = 8_GB / l.per_direction;
    std::cout << "8 GB over it: " << to_string(t) << "\n";
    return t > 0_s ? 0 : 1;
}
