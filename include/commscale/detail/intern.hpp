#pragma once
/// @file detail/intern.hpp
/// @brief Process-lifetime string pool, so value types can hold `std::string_view` names both for
/// constexpr catalog entries and for descriptions loaded at run time (JSON files, CLI flags); and
/// its counterpart for small value types (intern_value).

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

/// @brief Returns a pointer to a copy of `v` that lives until the process ends, the same pointer for
/// equal values (thread-safe), so that value types can refer to descriptions loaded at run time as
/// they do to constexpr ones (workload/transformer.hpp hybrid_shape). T is ordered by `<`; its
/// string_view members must point to interned (or static) text.
template <class T>
const T* intern_value(const T& v) {
    static std::mutex m;
    static std::set<T, std::less<>> pool;
    std::lock_guard<std::mutex> lock(m);
    return &*pool.insert(v).first;
}

}  // namespace commscale::detail
