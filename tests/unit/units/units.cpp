// Tests for include/commscale/units.hpp, units/parse.hpp and units/format.hpp.
#include "catch_shim.hpp"

#include <commscale/collective/types.hpp>
#include <commscale/units.hpp>
#include <commscale/units/format.hpp>
#include <commscale/units/parse.hpp>

using namespace commscale;

TEST_CASE("literals use vendor prefixes: GB/s = 1e9 B/s, Gbps = 1e9 bit/s, GiB = 2^30 B") {
    STATIC_REQUIRE(in_GBps(450_GBps) == 450.0);
    STATIC_REQUIRE((400_Gbps).value() == 50e9);  // 400 Gbps / 8 bits per byte
    STATIC_REQUIRE((1_GiB).value() == 1073741824.0);
    STATIC_REQUIRE((1_TB).value() == 1e12);
    STATIC_REQUIRE((2.1_Tbps).value() == 262.5e9);  // Gaudi2: 21 x 100 GbE = 2.1 Tbps = 262.5 GB/s
    STATIC_REQUIRE(in_us(0.6_us) == 0.6);
    STATIC_REQUIRE(in_tflops(312_TFLOPS) == 312.0);
}

TEST_CASE("latency + bytes / rate is a duration without casts") {
    // ml-engineering-networking: 320 GB (80B params in fp32) at 200 Gbps takes 12.8 s.
    constexpr duration t = 0_s + 320_GB / 200_Gbps;
    STATIC_REQUIRE(t.value() > 12.799);
    STATIC_REQUIRE(t.value() < 12.801);
    // ... and 1.6 s at 1600 Gbps.
    REQUIRE(in_seconds(320_GB / 1600_Gbps) == Approx(1.6));
    // FLOPs / FLOP/s is seconds: 65.536 TFLOP at 156 TFLOP/s = 0.42 s.
    REQUIRE(in_seconds(65.536_TFLOP / 156_TFLOPS) == Approx(0.42).epsilon(0.005));
}

TEST_CASE("duplex figures enter only through duplex_rate") {
    // NVLink 4: 900 GB/s duplex = 450 GB/s per direction (ml-engineering-networking).
    STATIC_REQUIRE(duplex(900_GBps).per_direction() == 450_GBps);
    // A100: 600 GB/s advertised duplex; measured busbw 235 GB/s is 40% of duplex, 78% of 300.
    constexpr auto a100 = duplex(600_GBps);
    REQUIRE(235.0 / in_GBps(a100.both_directions) == Approx(0.39).margin(0.01));
    REQUIRE(235.0 / in_GBps(a100.per_direction()) == Approx(0.78).margin(0.01));
}

TEST_CASE("parse reads sizes, rates, times with their units") {
    REQUIRE(in_bytes(parse_size("1.32GiB")) == Approx(1.32 * 1073741824.0));
    REQUIRE(in_bytes(parse_size("8GB")) == 8e9);
    REQUIRE(in_bytes(parse_size("4096")) == 4096.0);
    REQUIRE(in_bytes(parse_size("64 MiB")) == 64.0 * 1048576.0);
    REQUIRE(in_GBps(parse_rate("400Gbps")) == Approx(50.0));
    REQUIRE(in_GBps(parse_rate("450GB/s")) == Approx(450.0));
    REQUIRE(in_GBps(parse_rate("450GBps")) == Approx(450.0));
    REQUIRE(in_GBps(parse_rate("3.2Tbps")) == Approx(400.0));
    REQUIRE(in_us(parse_time("0.6us")) == Approx(0.6));
    REQUIRE(in_seconds(parse_time("3.2ms")) == Approx(0.0032));
    REQUIRE(in_tflops(parse_work_rate("312TFLOPS")) == Approx(312.0));
    REQUIRE(in_flops(parse_work("420ZFLOP")) == Approx(4.2e23));
}

TEST_CASE("parse_count reads counts as people write them: 15T tokens, 70B parameters, 4M, 2.5e12") {
    REQUIRE(parse_count("15T") == 15e12);  // Llama 3: "over 15T tokens"
    REQUIRE(parse_count("70B") == 70e9);
    REQUIRE(parse_count("4M") == 4e6);
    REQUIRE(parse_count("4k") == 4e3);
    REQUIRE(parse_count("4K") == 4e3);
    REQUIRE(parse_count("2.5G") == 2.5e9);
    REQUIRE(parse_count("1.5P") == 1.5e15);
    REQUIRE(parse_count("2E") == 2e18);
    REQUIRE(parse_count("420Z") == Approx(4.2e23));
    REQUIRE(parse_count("2.5e12") == 2.5e12);
    REQUIRE(parse_count("1E5") == 1e5);  // an exponent, not exa
    REQUIRE(parse_count(" 300e9 ") == 300e9);
    REQUIRE(in_flops(parse_flop_count("420Z")) == Approx(4.2e23));
    REQUIRE(in_flops(parse_flop_count("420ZFLOP")) == Approx(4.2e23));
    REQUIRE(in_flops(parse_flop_count("6.3e24")) == 6.3e24);
    for (const char* bad : {"15X", "-5T", "nan", "inf", "T", "", "15 tokens", "1..5T", "1e400", "15e"}) {
        INFO(bad);
        try {
            (void)parse_count(bad, "--tokens");
            FAIL("no error");
        } catch (const input_error& e) {
            CHECK(e.field() == "--tokens");
            CHECK(e.expected().find("a count") == 0);
        }
    }
    // a FLOP count of another kind names the units
    CHECK_THROWS_WITH(parse_flop_count("400Gbps", "--flops"), Catch::Matchers::Contains("--flops") && Catch::Matchers::Contains("FLOP"));
}

TEST_CASE("convert: 400Gbps is 50 GB/s, 1 GiB is 1.073741824 GB") {
    REQUIRE(convert("400Gbps", "GB/s") == Approx(50.0));
    REQUIRE(convert("1GiB", "GB") == Approx(1.073741824));
    REQUIRE(convert("450GB/s", "Gbps") == Approx(3600.0));  // 18 NVLink4 links x 200 Gbps = 3.6 Tbps (gpu-fabrics-for-genai)
    REQUIRE(convert("1s", "us") == Approx(1e6));
}

TEST_CASE("parse errors name the field, the text and the expected kind") {
    using Catch::Matchers::Contains;
    REQUIRE_THROWS_AS(parse_size("400Gbps", "--bytes"), input_error);
    REQUIRE_THROWS_WITH(parse_size("400Gbps", "--bytes"), Contains("--bytes") && Contains("'400Gbps'") && Contains("a rate") && Contains("expected a size"));
    REQUIRE_THROWS_WITH(parse_rate("8GB", "link.bw"), Contains("link.bw") && Contains("expected a rate"));
    REQUIRE_THROWS_WITH(parse_size("-1GB"), Contains("not negative"));
    REQUIRE_THROWS_WITH(parse_size("nan"), Contains("finite"));
    REQUIRE_THROWS_WITH(parse_size("inf"), Contains("finite"));
    REQUIRE_THROWS_WITH(parse_size("1e30"), Contains("no larger than"));
    REQUIRE_THROWS_WITH(parse_size("12 parsecs"), Contains("unknown unit"));
    REQUIRE_THROWS_WITH(parse_size(""), Contains("empty"));
    REQUIRE_THROWS_WITH(parse_size("GB"), Contains("expected a size"));
    REQUIRE_THROWS_WITH(convert("400Gbps", "furlongs"), Contains("unit"));
    REQUIRE_THROWS_WITH(convert("400Gbps", "GB"), Contains("expected a size"));
}

TEST_CASE("formatter prints readable quantities, not Boost's bit-based I/O") {
    REQUIRE(to_string(450_GBps) == "450 GB/s");
    REQUIRE(to_string(400_Gbps, true) == "400 Gbps");
    REQUIRE(to_string(1.32_GiB, true) == "1.32 GiB");
    REQUIRE(to_string(8_GB) == "8 GB");
    REQUIRE(to_string(3.2_ms) == "3.2 ms");
    REQUIRE(to_string(0.6_us) == "0.6 us");
    REQUIRE(to_string(12.8_s) == "12.8 s");
    REQUIRE(to_string(65.536_TFLOP) == "65.5 TFLOP");
    REQUIRE(to_string(312_TFLOPS) == "312 TFLOP/s");
}

TEST_CASE("unknown names come with suggestions") {
    const std::vector<std::string> names{"nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie5-x16"};
    auto e = unknown_name("link", "nvlnk4", names);
    REQUIRE(std::string(e.what()).find("did you mean nvlink4") != std::string::npos);
    REQUIRE(e.field() == "link");
}

TEST_CASE("printed microseconds and GB/s read back to the bit") {
    // 61.38 and 16240 have no double of seconds whose in_us is them (nccl-tests times of the
    // ml-engineering A100 table): from_us gives the nearest duration, one unit in the last place
    // off, and a measured time keeps the printed decimal itself (time_as_read).
    for (const double v : {61.38, 16240.0, 32136.0, 64074.0, 43.83, 127997.0, 0.5, 1.7e8}) {
        const double back = in_us(from_us(v));
        CHECK((back == v || std::nextafter(back, v) == v));
        CHECK(in_us(time_as_read{v}) == v);
        CHECK(time_as_read{v}.as_duration() == from_us(v));
    }
    CHECK(in_us(from_us(61.38)) != 61.38);
    for (const double v : {234.89, 0.024, 66.4834, 1e7}) CHECK(in_GBps(from_GBps(v)) == v);
    // efficiency_mode reads "default" as realistic and suggests it.
    CHECK(parse<efficiency_mode>("default", "--efficiency") == efficiency_mode::realistic);
    CHECK(to_string(efficiency_mode::realistic) == "realistic");
    REQUIRE_THROWS_WITH(parse<efficiency_mode>("defualt", "--efficiency"),
                        Catch::Matchers::Contains("--efficiency") && Catch::Matchers::Contains("default"));
}
