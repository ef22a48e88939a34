#pragma once
// Fixtures shared by the plan-validation tests: a DGX H100 cluster of a given size, and validate()'s
// error as "field | message" text ("no error" when the plan is valid).

#include <string>

#include <commscale/hardware/clusters.hpp>
#include <commscale/parallel/plan.hpp>

namespace plan_test {

inline commscale::cluster h100_nodes(int nodes) {
    commscale::cluster c = commscale::cluster_by_name("dgx-h100");
    c.nodes = nodes;
    return c;
}

inline std::string error_of(const commscale::plan& p, const commscale::transformer& m, const commscale::cluster& c) {
    try {
        validate(p, m, c);
    } catch (const commscale::input_error& e) {
        return e.field() + " | " + e.what();
    }
    return "no error";
}

}  // namespace plan_test
