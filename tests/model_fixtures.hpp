#pragma once
// Fixtures shared by the model tests: the error field of validate() for a transformer, and of
// io::model_from_json for a config.json ("no error" when it is accepted), so a test names the field
// a bad shape is refused on.

#include <string>

#include <commscale/io/model_json.hpp>
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

inline std::string json_error_field(const nlohmann::json& j) {
    try {
        (void)commscale::io::model_from_json(j, "model");
    } catch (const commscale::input_error& e) {
        return e.field();
    }
    return "no error";
}

}  // namespace model_test
