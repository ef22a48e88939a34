#pragma once
/// @file hardware/accelerator.hpp
/// @brief The accelerator value type: dense peak FLOP/s per data type (vendors' sparsity figures
/// halved), memory capacity and bandwidth, the scale-up link, a default achievable compute
/// efficiency for large matmuls, and the source.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

#include "../units.hpp"

namespace commscale {

/// @brief Numeric formats with a tensor-core peak.
enum class dtype { fp32, tf32, bf16, fp16, fp8 };
inline constexpr std::size_t dtype_count = 5;

/// @brief Lower-case name: "fp32", "tf32", "bf16", "fp16", "fp8".
[[nodiscard]] constexpr std::string_view dtype_name(dtype d) {
    constexpr std::string_view names[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
    return names[static_cast<std::size_t>(d)];
}

/// @brief One accelerator model.
struct accelerator {
    std::string_view name;                                   ///< e.g. "a100-80gb-sxm"
    std::string_view display_name;                           ///< e.g. "NVIDIA A100-SXM4-80GB"
    data_size memory{};                                      ///< HBM capacity
    byte_rate memory_bandwidth{};                            ///< HBM bandwidth
    std::array<std::optional<flop_rate>, dtype_count> dense_peak{};  ///< indexed by dtype; nullopt = unsupported
    std::string_view scale_up_link;                          ///< catalog link name (full complement per GPU)
    double compute_efficiency = 0.5;                         ///< achievable fraction of peak for large matmuls (documented per entry)
    std::string_view source;

    /// @brief Dense peak for a data type, or nullopt if unsupported.
    [[nodiscard]] constexpr std::optional<flop_rate> peak(dtype d) const {
        return dense_peak[static_cast<std::size_t>(d)];
    }
};

}  // namespace commscale
