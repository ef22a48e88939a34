#pragma once
/// @file detail/intern.hpp
/// @brief Process-lifetime string pool, so value types can hold `std::string_view` names both for
/// constexpr catalog entries and for descriptions loaded at run time (JSON files, CLI flags).

#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace commscale::detail {

/// @brief Returns a view of a copy of `s` that lives until the process ends (thread-safe).
inline std::string_view intern(std::string_view s) {
    static std::mutex m;
    static std::set<std::string, std::less<>> pool;
    std::lock_guard<std::mutex> lock(m);
    auto it = pool.find(s);
    if (it == pool.end()) it = pool.emplace(s).first;
    return *it;
}

}  // namespace commscale::detail
