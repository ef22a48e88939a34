#pragma once
// Fixture shared by the model tests: validate()'s error field for a transformer ("no error" when
// it is valid), so a test names the field a bad shape is refused on.

#include <string>

#include <commscale/workload/transformer.hpp>

namespace model_test {

inline std::string error_field(const commscale::transformer& m) {
    try {
        validate(m, "model");
    } catch (const commscale::input_error& e) {
        return e.field();
    }
    return "no error";
}

}  // namespace model_test
