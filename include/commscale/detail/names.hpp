#pragma once
/// @file detail/names.hpp
/// @brief The spelling layer: every enum of the vocabulary (operations, algorithms, schedules,
/// data types, link families, ...) declares one table of `{value, "spelling"}` pairs beside
/// itself, in enumerator order, and a `name_table(E)` that returns it (found by argument-dependent
/// lookup). From that one table come `to_string(E)` (the CLI/JSON spelling), `from_name<E>(text)`
/// (exact match or nullopt) and `parse<E>(text, field)` (an `input_error` naming `field`, with
/// the closest spellings as "did you mean" suggestions), so each spelling is written once. An enum
/// may add `name_aliases(E)`, other words it reads (`aliased_enum`): an older or longer word
/// ("automatic" for `auto`), or '-' for '_' ("all-reduce").

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <concepts>
#include <type_traits>

#include "../error.hpp"

namespace commscale {

/// @brief One enumerator and its spelling.
template <class E>
struct name_entry {
    E value;
    std::string_view name;
};

/// @brief An enum with a spelling table: `name_table(E{})` returns a `std::array<name_entry<E>, N>`
/// listing every enumerator once, in declaration order.
template <class E>
concept named_enum = std::is_enum_v<E> && requires(E e) {
    { name_table(e).size() } -> std::convertible_to<std::size_t>;
    { name_table(e)[0].name } -> std::convertible_to<std::string_view>;
};

/// @brief Another spelling an enum reads. A `suggested` alias is offered by "did you mean" like the
/// table's spellings (a word the documentation uses); the others are only read (a spelling
/// variant such as '-' for '_', which would crowd the suggestions with near-duplicates).
template <class E>
struct name_alias {
    E value;
    std::string_view name;
    bool suggested;
};

/// @brief A named enum that also reads other spellings: `name_aliases(E{})` returns a
/// `std::array<name_alias<E>, N>` of extra input spellings (an older, shorter or longer word for
/// an enumerator, a '-' for '_' variant). `from_name` and `parse` accept them, `parse` suggests
/// the `suggested` ones; `to_string` never writes them.
template <class E>
concept aliased_enum = named_enum<E> && requires(E e) {
    { name_aliases(e).size() } -> std::convertible_to<std::size_t>;
    { name_aliases(e)[0].name } -> std::convertible_to<std::string_view>;
    { name_aliases(e)[0].suggested } -> std::convertible_to<bool>;
};

namespace detail {
/// True if entry i of the table names the enumerator with underlying value i (what lets
/// to_string index the table instead of searching it).
template <class E, std::size_t N>
[[nodiscard]] constexpr bool in_enum_order(const std::array<name_entry<E>, N>& table) {
    for (std::size_t i = 0; i < N; ++i)
        if (static_cast<std::size_t>(table[i].value) != i || table[i].name.empty()) return false;
    return true;
}
/// An ASCII letter in lower case, any other character as it is (locale-free, constexpr: the
/// case-insensitive matching of device, tool and collective names).
[[nodiscard]] constexpr char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace detail

/// @brief The spelling of `e` from its table (the first entry's for a value outside the enum).
template <named_enum E>
[[nodiscard]] constexpr std::string_view to_string(E e) {
    const auto& table = name_table(e);
    const auto i = static_cast<std::size_t>(e);
    return i < table.size() ? table[i].name : table[0].name;
}

/// @brief The enumerator spelled exactly `text`, or nullopt.
template <named_enum E>
[[nodiscard]] constexpr std::optional<E> from_name(std::string_view text) {
    for (const auto& entry : name_table(E{}))
        if (entry.name == text) return entry.value;
    if constexpr (aliased_enum<E>)
        for (const auto& entry : name_aliases(E{}))
            if (entry.name == text) return entry.value;
    return std::nullopt;
}

/// @brief Every spelling of E, in enumerator order (the candidates of a "did you mean").
template <named_enum E>
[[nodiscard]] constexpr auto names_of() {
    constexpr std::size_t n = name_table(E{}).size();
    std::array<std::string_view, n> out{};
    for (std::size_t i = 0; i < n; ++i) out[i] = name_table(E{})[i].name;
    return out;
}

/// @brief The spellings of E as prose: "a, b, c" with `last` before the final one
/// (" or " gives "none, selective or full"; ", " a plain comma list).
template <named_enum E>
[[nodiscard]] std::string name_list(std::string_view last = " or ") {
    std::string out;
    const auto names = names_of<E>();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i) out += i + 1 == names.size() ? last : std::string_view(", ");
        out += names[i];
    }
    return out;
}

/// @brief The spellings "did you mean" offers: the table's, then the suggested aliases (if any).
template <named_enum E>
[[nodiscard]] constexpr auto suggested_names_of() {
    if constexpr (aliased_enum<E>) {
        constexpr std::size_t n = name_table(E{}).size();
        constexpr std::size_t m = [] {
            std::size_t k = 0;
            for (const auto& alias : name_aliases(E{}))
                if (alias.suggested) ++k;
            return k;
        }();
        std::array<std::string_view, n + m> out{};
        for (std::size_t i = 0; i < n; ++i) out[i] = name_table(E{})[i].name;
        std::size_t k = n;
        for (const auto& alias : name_aliases(E{}))
            if (alias.suggested) out[k++] = alias.name;
        return out;
    } else {
        return names_of<E>();
    }
}

/// @brief The enumerator spelled `text` (an alias included); input_error naming `field` with the
/// closest suggested spellings ("did you mean ...") otherwise.
template <named_enum E>
[[nodiscard]] E parse(std::string_view text, std::string_view field) {
    if (const auto v = from_name<E>(text)) return *v;
    throw unknown_name(std::string(field), text, suggested_names_of<E>());
}

}  // namespace commscale
