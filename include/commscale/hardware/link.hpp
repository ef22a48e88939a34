#pragma once
/// @file hardware/link.hpp
/// @brief The link value type: one port/NIC, or one GPU's full complement of a scale-up link.
/// Bandwidth is stored per direction; a duplex figure enters only through `duplex_rate`.
/// The catalog (hardware/links.hpp) builds these values at compile time; JSON builds them at run time.

#include <array>
#include <optional>
#include <string_view>

#include "../detail/names.hpp"
#include "../units.hpp"

namespace commscale {



/// @brief Default application-level efficiency of a link: the fraction of the per-direction peak
/// that large transfers reach in practice. ~0.8 per ml-engineering-networking ("if it's advertised
/// as 400Gbps in the best case expect to get 320Gbps (about 80%)"; nccl-tests A100 all-reduce busbw
/// 234.9 of 300 GB/s = 78%; p2p A100 274/300 = 91%, H100 376/450 = 83%). Calibration replaces it.
inline constexpr double default_link_efficiency = 0.8;

/// @brief Where a link sits in a cluster.
enum class link_kind {
    scale_up,   ///< GPU-to-GPU inside a node or NVLink domain (NVLink, xGMI, Gaudi2 RoCE scale-up)
    host_bus,   ///< PCIe: GPU to host, NIC or other GPUs through PCIe switches / host bridge
    scale_out,  ///< NIC to the cluster network (InfiniBand, RoCE, EFA, Ethernet, Slingshot, OPA, TCPX)
};

/// @brief JSON/CLI spellings of the link kinds: `to_string`.
inline constexpr std::array<name_entry<link_kind>, 3> link_kind_spellings{{
    {link_kind::scale_up, "scale_up"},
    {link_kind::host_bus, "host_bus"},
    {link_kind::scale_out, "scale_out"},
}};
static_assert(detail::in_enum_order(link_kind_spellings));
[[nodiscard]] constexpr const auto& name_table(link_kind) { return link_kind_spellings; }

/// @brief Technology family, used to pick default protocol latencies (NVLink / PCI / NET classes).
enum class link_family { nvlink, pcie, xgmi, gaudi, infiniband, efa, roce, ethernet, slingshot, omnipath, tcpx };

/// @brief JSON/CLI spellings of the link families: `to_string`.
inline constexpr std::array<name_entry<link_family>, 11> link_family_spellings{{
    {link_family::nvlink, "nvlink"},
    {link_family::pcie, "pcie"},
    {link_family::xgmi, "xgmi"},
    {link_family::gaudi, "gaudi"},
    {link_family::infiniband, "infiniband"},
    {link_family::efa, "efa"},
    {link_family::roce, "roce"},
    {link_family::ethernet, "ethernet"},
    {link_family::slingshot, "slingshot"},
    {link_family::omnipath, "omnipath"},
    {link_family::tcpx, "tcpx"},
}};
static_assert(detail::in_enum_order(link_family_spellings));
[[nodiscard]] constexpr const auto& name_table(link_family) { return link_family_spellings; }

/// @brief Physical-layer line encoding, where the per-lane payload rate is derived from it.
enum class line_encoding {
    none,        ///< payload rate quoted directly by the vendor
    b8b10b,      ///< 8b/10b (PCIe 1-2)
    b64b66b,     ///< 64b/66b (InfiniBand FDR/EDR, Ethernet)
    b128b130b,   ///< 128b/130b (PCIe 3-5)
    flit,        ///< PCIe 6/7 FLIT mode (PAM4, 256-byte FLITs: 236 TLP + 6 DLP = 242 payload bytes of 256, pcie_payload_efficiency)
};

/// @brief JSON spellings of the line encodings: `to_string`.
inline constexpr std::array<name_entry<line_encoding>, 5> line_encoding_spellings{{
    {line_encoding::none, "none"},
    {line_encoding::b8b10b, "8b/10b"},
    {line_encoding::b64b66b, "64b/66b"},
    {line_encoding::b128b130b, "128b/130b"},
    {line_encoding::flit, "flit"},
}};
static_assert(detail::in_enum_order(line_encoding_spellings));
[[nodiscard]] constexpr const auto& name_table(line_encoding) { return line_encoding_spellings; }

/// @brief Largest link figures the JSON reader accepts: far beyond any built link (NVLink5 is 900
/// GB/s per direction, an 800 Gb/s NIC 100 GB/s), so that a larger figure is a unit slip.
struct link_limits {
    static constexpr double per_direction_GBps = 1e9;  ///< per direction, GB/s (1 EB/s)
    static constexpr double duplex_GBps = 2 * per_direction_GBps;  ///< both directions, GB/s
    static constexpr double per_lane_GBps = per_direction_GBps;    ///< one lane, GB/s
    static constexpr double latency_us = 1e6;  ///< one-way latency, us (1 s)
    static constexpr int lanes = 1024;  ///< lanes per link (PCIe x16: 16)
    static constexpr int links = 1024;  ///< links per GPU (NVLink5: 18)
};

/// @brief One link (a port, a NIC, or a GPU's scale-up complement), per direction.
struct link {
    std::string_view name;               ///< catalog name, e.g. "nvlink4", "ib-ndr-4x", "pcie5-x16"
    link_family family{};
    link_kind kind{};
    bool rdma = false;                   ///< remote DMA (GPUDirect RDMA possible)
    byte_rate per_direction{};           ///< peak payload bandwidth, one direction, whole port/complement
    int lanes = 1;                       ///< lanes per link
    int links = 1;                       ///< links bonded into this port/complement
    byte_rate per_lane{};                ///< one lane, one direction
    line_encoding encoding = line_encoding::none;
    std::optional<duration> latency{};   ///< published port-to-port latency; nullopt if unpublished
    std::string_view source;             ///< citation for the figures

    /// @brief Both directions together: twice the per-direction figure.
    [[nodiscard]] constexpr duplex_rate duplex() const { return commscale::duplex(2.0 * per_direction); }
};

}  // namespace commscale
