#pragma once
// One include for Catch2 v2 (Debian bookworm, <catch2/catch.hpp>) and v3 (<catch2/catch_all.hpp>).
// Tests use: TEST_CASE, SECTION, REQUIRE, CHECK, STATIC_REQUIRE, REQUIRE_THROWS_AS,
// REQUIRE_THROWS_WITH, Approx (as ::Approx), Catch::Matchers::WithinRel, Catch::Matchers::Contains.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
using Catch::Approx;
namespace Catch::Matchers {
// v3 spells the substring matcher ContainsSubstring; keep the v2 name working.
inline auto Contains(const std::string& s) { return ContainsSubstring(s); }
}  // namespace Catch::Matchers
#else
#include <catch2/catch.hpp>
#endif
