#pragma once
/// @file hardware/comm_params.hpp
/// @brief Realistic-mode parameters of the collective model: per-protocol latencies, per link class
/// step latencies, large-message efficiencies and the size-saturation curve. A plain aggregate with
/// documented defaults; calibration replaces the values (a calibrated cluster is a cluster whose
/// `comm` member holds fitted parameters).
///
/// Structure (after NCCL's published tuning model, src/graph/tuning.cc of NVIDIA/nccl 2.x, read
/// for its structure and its published constants, no code taken): for each protocol
///   time = base_latency[p] + sum over steps of step_latency[class][p]
///        + bytes_on_wire / (peak x efficiency[class] x protocol_bandwidth[p] x saturation(m))
/// and the model keeps the protocol with the least time. `m` is the number of bytes a rank moves
/// per algorithm step; saturation(m) = 1 / (1 + (half_size / m)^exponent) captures what NCCL's
/// per-step latencies alone do not: busbw keeps rising until messages are hundreds of MB.

#include <array>
#include <cstddef>
#include <string_view>

#include "../detail/names.hpp"
#include "../units.hpp"
#include "link.hpp"

namespace commscale {

/// @brief NCCL-like wire protocols: LL (8-byte stores carrying 4 data bytes + 4 flag bytes),
/// LL128 (128-byte lines carrying 120 data bytes), Simple (bulk copies with memory fences).
enum class protocol { ll, ll128, simple };
inline constexpr std::size_t protocol_count = 3;

/// @brief NCCL's spellings of the protocols (NCCL_PROTO values): `to_string`.
inline constexpr std::array<name_entry<protocol>, protocol_count> protocol_spellings{{
    {protocol::ll, "LL"}, {protocol::ll128, "LL128"}, {protocol::simple, "Simple"},
}};
static_assert(detail::in_enum_order(protocol_spellings));
[[nodiscard]] constexpr const auto& name_table(protocol) { return protocol_spellings; }

/// @brief Latency classes of a path (NCCL distinguishes the same three).
enum class link_class { nvlink, pci, net };
inline constexpr std::size_t link_class_count = 3;

/// @brief Spellings of the latency classes: the keys of the `calibration` JSON's per-class
/// parameters and `fit`'s `fitted_class`.
inline constexpr std::array<name_entry<link_class>, link_class_count> link_class_spellings{{
    {link_class::nvlink, "nvlink"}, {link_class::pci, "pci"}, {link_class::net, "net"},
}};
static_assert(detail::in_enum_order(link_class_spellings));
[[nodiscard]] constexpr const auto& name_table(link_class) { return link_class_spellings; }

/// @brief Latency class of a link: scale-up families (NVLink, xGMI, Gaudi scale-up) are `nvlink`,
/// PCIe is `pci`, every scale-out family is `net`.
[[nodiscard]] constexpr link_class class_of(const link& l) {
    switch (l.family) {
        case link_family::nvlink:
        case link_family::xgmi:
            return link_class::nvlink;
        case link_family::gaudi:
            return l.kind == link_kind::scale_up ? link_class::nvlink : link_class::net;
        case link_family::pcie:
            return link_class::pci;
        default:
            return link_class::net;
    }
}

/// @brief Fraction of a scale-out NIC's per-direction line rate that NCCL's large ring transfers
/// reach. Higher than the scale-up figure (`default_link_efficiency`, 0.8): RDMA NICs move bulk
/// data with little protocol overhead. Public record (NVIDIA NCCL maintainers and AWS):
/// * ConnectX-7 NDR 400 Gb/s (50 GB/s): "you should see 46-48 GB/s per NIC" (NVIDIA/nccl-tests
///   #290) and "up to 48-49 GB/s per NIC" (NVIDIA/nccl-tests #267): 0.92-0.98;
/// * DGX A100, 8 x HDR 200 Gb/s (200 GB/s per node): "we measure 192 GB/s AllReduce BusBW"
///   (NVIDIA/nccl #812, quoted in #1576): 0.96;
/// * AWS EFA v1 (400 Gb/s per node): ~340 Gb/s measured all-reduce (ml-engineering-networking): 0.85.
/// 0.92 keeps all three within 8%; calibration replaces it per system.
inline constexpr double default_network_efficiency = 0.92;

/// @brief Realistic-mode parameters of one link class.
struct link_class_params {
    /// Hardware latency added per algorithm step, indexed by `protocol` (LL, LL128, Simple).
    std::array<duration, protocol_count> step_latency{};
    /// Fraction of the per-direction peak that very large transfers reach
    /// (`default_link_efficiency`, ~0.8: nccl-tests 8 x A100 all-reduce busbw 234.9 of 300 GB/s;
    /// scale-out NICs `default_network_efficiency`, 0.92).
    double efficiency = default_link_efficiency;
    /// Bytes per rank per step at which the saturation curve gives half the large-message bandwidth.
    data_size half_size{};
    /// Exponent of the saturation curve (0.5: slow approach, as measured; larger: sharper knee).
    double exponent = 0.5;
};

/// @brief Ranges of the realistic-mode parameters that the cluster JSON's "calibration" object
/// (io/cluster_json.hpp) accepts, and that calibration's fit must land in to be written there:
/// far beyond any measured system (latencies of microseconds, efficiencies below 1, 32 channels,
/// tens of GB/s per channel), so that a value outside is a unit slip or a typo.
struct comm_params_limits {
    static constexpr double latency_us = 1e6;  ///< base and per-step latencies, us (1 s)
    static constexpr double min_efficiency = 1e-6;  ///< a link class's large-message efficiency ...
    static constexpr double max_efficiency = 1.0;   ///< ... at most the peak
    /// Exponent of the saturation curve: up to 8 (fitted shapes have 0.25 to 4, calibrate.hpp), so
    /// that with half sizes up to 1e18 B (half_size x ranks / size)^exponent stays far below the
    /// largest double.
    static constexpr double min_exponent = 1e-3;
    static constexpr double max_exponent = 8.0;
    static constexpr double min_protocol_bandwidth = 1e-6;  ///< a protocol's fraction of the bandwidth ...
    static constexpr double max_protocol_bandwidth = 1.0;   ///< ... at most all of it
    static constexpr double min_reduction_efficiency = 1e-6;  ///< NVLS and SHARP, fraction of the closed form ...
    static constexpr double max_reduction_efficiency = 10.0;
    static constexpr int channels = 1024;                   ///< channels of the per-channel cap (NCCL: up to 32)
    static constexpr double channel_bandwidth_GBps = 1e6;  ///< one channel's cap, GB/s
};

/// @brief All realistic-mode parameters. Defaults:
/// * base and per-step latencies: NCCL's published tuning constants (2.x; Ring column, see
///   ANCHORS.md "NCCL tuning model"): base 6.6 / 14 / 8.4 us (LL / LL128 / Simple); per step
///   NVLink 0.6 / 1.9 / 3.4 us, PCI 1.0 / 2.5 / 5.7 us, NET 2.7 / 4.0 / 14 us.
/// * protocol bandwidth fractions: LL carries 4 data bytes per 8-byte store (0.5); LL128 120 of
///   128 bytes (0.9375); Simple the whole line (1.0).
/// * large-message efficiency 0.8 for NVLink and PCI (link.hpp `default_link_efficiency`: ~80% of
///   the advertised per-direction figure, ml-engineering-networking; NCCL's effective NVLink rate
///   370 of 450 GB/s on H100, NVIDIA/nccl-tests #212), 0.92 for NET (`default_network_efficiency`:
///   what NCCL rings reach on InfiniBand NDR/HDR per NVIDIA, and EFA per AWS users).
/// * saturation half-size 384 KiB per rank per step with exponent 0.5: the one fitted shape
///   parameter pair, from the nccl-tests 8 x A100 all-reduce table in ml-engineering-networking
///   (busbw 171.5 GB/s at 64 MiB, 194 at 256 MiB, 229 at 1 GiB, 234.9 at 16 GiB). Calibration
///   refits it per system.
/// * in-switch reduction efficiency 0.85 (NCCL's NVLS bandwidth factor on Hopper; 0.74 on
///   Blackwell, which a B200 calibration may set); SHARP the same by default.
/// * per-channel caps: `channels` x `channel_bandwidth[p]` bounds a protocol's bandwidth; the
///   default (0 B/s) means uncapped, since the published per-channel ladders change per release.
struct comm_params {
    std::array<duration, protocol_count> base_latency{seconds(6.6e-6), seconds(14e-6), seconds(8.4e-6)};
    std::array<double, protocol_count> protocol_bandwidth{0.5, 120.0 / 128.0, 1.0};
    link_class_params nvlink{
        .step_latency = {seconds(0.6e-6), seconds(1.9e-6), seconds(3.4e-6)},
        .efficiency = default_link_efficiency,
        .half_size = bytes(384.0 * 1024.0),
        .exponent = 0.5};
    link_class_params pci{
        .step_latency = {seconds(1.0e-6), seconds(2.5e-6), seconds(5.7e-6)},
        .efficiency = default_link_efficiency,
        .half_size = bytes(384.0 * 1024.0),
        .exponent = 0.5};
    link_class_params net{
        .step_latency = {seconds(2.7e-6), seconds(4.0e-6), seconds(14e-6)},
        .efficiency = default_network_efficiency,
        .half_size = bytes(384.0 * 1024.0),
        .exponent = 0.5};
    double nvls_efficiency = 0.85;   ///< in-switch (NVLS) reduction, fraction of the closed form
    double sharp_efficiency = 0.85;  ///< in-network (SHARP) reduction, fraction of the closed form
    int channels = 0;                ///< channels for the per-channel cap; 0 = uncapped
    std::array<byte_rate, protocol_count> channel_bandwidth{};  ///< per channel and protocol; 0 = uncapped

    /// @brief Parameters of one link class.
    [[nodiscard]] constexpr const link_class_params& of(link_class c) const {
        return c == link_class::nvlink ? nvlink : c == link_class::pci ? pci : net;
    }
};

}  // namespace commscale
