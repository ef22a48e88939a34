#pragma once
/// @file io/json_reader.hpp
/// @brief Validating reader over a nlohmann::json object: every accessor names the field path in
/// its error (`cluster.inter.nics_per_node: expected an integer in [0, 1024], got -1`), quantities
/// accept a number in base units or a string with a unit ("450GB/s"), and `finish()` rejects
/// unknown keys with "did you mean". Used by every JSON loader in commscale.

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../error.hpp"
#include "../units.hpp"
#include "../units/parse.hpp"

namespace commscale::io {

/// @brief A JSON value's type in words, for error messages.
[[nodiscard]] inline std::string json_type_name(const nlohmann::json& j) {
    switch (j.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::string: return "the string " + j.dump();
        case nlohmann::json::value_t::boolean: return j.get<bool>() ? "true" : "false";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned:
        case nlohmann::json::value_t::number_float: return j.dump();
        default: return "an unsupported value";
    }
}

/// @brief Parses text as JSON; syntax errors (and numbers that overflow a double) become
/// input_error naming `source` and, for syntax errors, the byte offset.
[[nodiscard]] inline nlohmann::json parse_json(const std::string& text, const std::string& source) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw input_error(source, "invalid JSON at byte " + std::to_string(e.byte) + " (" + std::string(e.what()) + ")",
                          "a JSON document");
    } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number too large for a double (1e400)
        throw input_error(source, "invalid JSON (" + std::string(e.what()) + ")", "a JSON document with numbers a double can hold");
    }
}

/// @brief Reads fields of one JSON object, tracking which keys were used.
class json_reader {
public:
    json_reader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object()) throw input_error(path_.empty() ? "document" : path_, json_type_name(j_), "a JSON object");
    }

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
    [[nodiscard]] bool has(const std::string& key) const {
        used_.insert(key);
        return j_.contains(key) && !j_.at(key).is_null();
    }
    /// True when `key` is in the object, null or not (has: present and not null).
    [[nodiscard]] bool present(const std::string& key) const {
        used_.insert(key);
        return j_.contains(key);
    }
    [[nodiscard]] const nlohmann::json& raw(const std::string& key) const {
        used_.insert(key);
        if (!j_.contains(key)) throw input_error(field(key), "nothing (missing)", "a value");
        return j_.at(key);
    }
    /// Marks keys as known without reading them (documentation-only fields such as "source").
    void ignore(std::initializer_list<const char*> keys) const {
        for (auto k : keys) used_.insert(k);
    }

    [[nodiscard]] std::string string(const std::string& key) const {
        const auto& v = raw(key);
        if (!v.is_string()) throw input_error(field(key), json_type_name(v), "a string");
        return v.get<std::string>();
    }
    [[nodiscard]] std::string string_or(const std::string& key, const std::string& fallback) const {
        return has(key) ? string(key) : fallback;
    }
    [[nodiscard]] bool boolean(const std::string& key) const {
        const auto& v = raw(key);
        if (v.is_boolean()) return v.get<bool>();
        if (v.is_string()) {  // some tools (nccl-tests -J) write booleans as strings
            const auto s = v.get<std::string>();
            if (s == "true" || s == "True" || s == "1") return true;
            if (s == "false" || s == "False" || s == "0") return false;
        }
        throw input_error(field(key), json_type_name(v), "true or false");
    }
    [[nodiscard]] bool boolean_or(const std::string& key, bool fallback) const { return has(key) ? boolean(key) : fallback; }

    /// A finite number in [lo, hi].
    [[nodiscard]] double number(const std::string& key, double lo = -std::numeric_limits<double>::max(),
                                double hi = std::numeric_limits<double>::max()) const {
        const auto& v = raw(key);
        double x = 0;
        if (v.is_number()) x = v.get<double>();
        else if (v.is_string()) {
            const auto s = v.get<std::string>();
            if (s == "nan" || s == "NaN") x = std::numeric_limits<double>::quiet_NaN();
            else throw input_error(field(key), json_type_name(v), "a number");
        } else throw input_error(field(key), json_type_name(v), "a number");
        return require_range(field(key), x, lo, hi);
    }
    [[nodiscard]] double number_or(const std::string& key, double fallback, double lo = -std::numeric_limits<double>::max(),
                                   double hi = std::numeric_limits<double>::max()) const {
        return has(key) ? number(key, lo, hi) : fallback;
    }
    /// An integer in [lo, hi] (a float with a fractional part, or out of range, is an error).
    [[nodiscard]] long long integer(const std::string& key, long long lo, long long hi) const {
        const auto& v = raw(key);
        if (v.is_number_integer() || v.is_number_unsigned()) {
            if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
                throw input_error(field(key), v.dump(), "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
            return require_int_range(field(key), v.get<long long>(), lo, hi);
        }
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15)
                return require_int_range(field(key), static_cast<long long>(d), lo, hi);
        }
        throw input_error(field(key), json_type_name(v), "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    [[nodiscard]] long long integer_or(const std::string& key, long long fallback, long long lo, long long hi) const {
        return has(key) ? integer(key, lo, hi) : fallback;
    }
    [[nodiscard]] int int32(const std::string& key, int lo, int hi) const { return static_cast<int>(integer(key, lo, hi)); }
    [[nodiscard]] int int32_or(const std::string& key, int fallback, int lo, int hi) const {
        return has(key) ? int32(key, lo, hi) : fallback;
    }

    /// A quantity: a number in the base unit (bytes, seconds, B/s, FLOP, FLOP/s) or a string with a unit.
    [[nodiscard]] double quantity(const std::string& key, quantity_kind kind) const {
        const auto& v = raw(key);
        if (v.is_string()) return parse_quantity(v.get<std::string>(), kind, field(key)).value;
        if (v.is_number()) {
            const double x = v.get<double>();
            if (!std::isfinite(x) || x < 0) throw input_error(field(key), v.dump(), std::string(kind_name(kind)) + ", finite and not negative");
            // The same magnitude limit as the text form ("1e300B/s"), so a number cannot bypass it.
            if (x > detail::absurd_limit(kind))
                throw input_error(field(key), v.dump(),
                                  std::string(kind_name(kind)) + " no larger than " + detail::number_text(detail::absurd_limit(kind)) +
                                      " base units");
            if (x != 0 && x < detail::absurd_small(kind))
                throw input_error(field(key), v.dump(),
                                  std::string(kind_name(kind)) + ", 0 or no smaller than " +
                                      detail::number_text(detail::absurd_small(kind)) + " base units");
            return x == 0 ? 0.0 : x;
        }
        throw input_error(field(key), json_type_name(v), std::string(kind_name(kind)));
    }
    [[nodiscard]] data_size size(const std::string& key) const { return bytes(quantity(key, quantity_kind::size)); }
    /// A byte rate of hardware: at least 1 MB/s (min_hardware_rate, units/parse.hpp).
    [[nodiscard]] byte_rate rate(const std::string& key) const {
        const double v = quantity(key, quantity_kind::rate);
        return bytes_per_second(require_hardware_rate(field(key), v, detail::number_text(v / giga) + " GB/s"));
    }
    [[nodiscard]] duration time(const std::string& key) const { return seconds(quantity(key, quantity_kind::time)); }

    /// A nested object reader.
    [[nodiscard]] json_reader object(const std::string& key) const { return json_reader(raw(key), field(key)); }
    /// An array (throws if not an array).
    [[nodiscard]] const nlohmann::json& array(const std::string& key) const {
        const auto& v = raw(key);
        if (!v.is_array()) throw input_error(field(key), json_type_name(v), "an array");
        return v;
    }

    /// Throws for keys present in the object that no accessor asked for, suggesting the closest known key.
    void finish(const std::vector<std::string>& known_extra = {}) const {
        std::vector<std::string> known(used_.begin(), used_.end());
        known.insert(known.end(), known_extra.begin(), known_extra.end());
        for (auto it = j_.begin(); it != j_.end(); ++it) {
            if (used_.count(it.key())) continue;
            bool extra = false;
            for (const auto& k : known_extra) extra = extra || k == it.key();
            if (extra) continue;
            auto e = unknown_name(field(it.key()), it.key(), known);
            throw input_error(e.field(), e.value() + " (unknown key)", e.expected().empty() ? "a known key" : "a known key" + e.expected().substr(std::string("a known name").size()));
        }
    }

private:
    const nlohmann::json& j_;
    std::string path_;
    mutable std::set<std::string> used_;
};

}  // namespace commscale::io
