#pragma once
// One include for Catch2 v2 (Debian bookworm, <catch2/catch.hpp>) and v3 (<catch2/catch_all.hpp>).
// Tests use: TEST_CASE, SECTION, REQUIRE, CHECK, STATIC_REQUIRE, REQUIRE_THROWS_AS,
// REQUIRE_THROWS_WITH, Approx (as ::Approx), Catch::Matchers::WithinRel, Catch::Matchers::Contains.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
using Catch::Approx;
#include <cstddef>
#include <string>
namespace Catch::Matchers {
// v3 spells the substring matcher ContainsSubstring, and its Contains(T&&) is a template that
// matches range elements. These overloads beat that template for every string argument (a
// non-template wins a tie; a literal picks the more specialized array template), so the v2
// spelling keeps meaning "contains this substring".
template <std::size_t N>
auto Contains(const char (&s)[N]) { return ContainsSubstring(std::string(s)); }
inline auto Contains(const std::string& s) { return ContainsSubstring(s); }
inline auto Contains(std::string& s) { return ContainsSubstring(s); }
inline auto Contains(std::string&& s) { return ContainsSubstring(s); }
inline auto Contains(const char* s) { return ContainsSubstring(std::string(s)); }
}  // namespace Catch::Matchers
#else
#include <catch2/catch.hpp>
#endif
