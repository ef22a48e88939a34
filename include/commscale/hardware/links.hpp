#pragma once
/// @file hardware/links.hpp
/// @brief The interconnect catalog: compile-time spellings (`nvlink<4>`, `pcie<5, 16>`,
/// `infiniband<ib_rate::ndr, 4>`, `xgmi_mi300x`, ...) and runtime lookup by the names of CLI.md
/// (`link_by_name("ib-ndr-4x")`), both yielding the same constexpr `link` value.
///
/// Conventions. Every `link` stores its bandwidth per direction; `duplex()` doubles it. A name
/// denotes one port/NIC (scale-out, PCIe slot) or one GPU's full complement of a scale-up link
/// (`nvlink4` = the 18 links of one H100). Sub-bundles as printed by `nvidia-smi topo -m`
/// ("NV2", "NV12", "NV18") are `nvlink_bundle<Gen, Links>` / "nvlink3-nv12".
/// Rates quoted in bits use decimal prefixes (1 Gbps = 1e9 bit/s = 0.125 GB/s).
///
/// Formulas and their sources, in one place: docs/model.md#links.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "../error.hpp"
#include "../units.hpp"
#include "link.hpp"

namespace commscale {

namespace detail {

/// A name built at compile time (template spellings need a name with static storage).
struct catalog_name {
    char text[24]{};
    std::size_t size = 0;
    [[nodiscard]] constexpr std::string_view view() const { return {text, size}; }
    constexpr catalog_name& operator+=(std::string_view s) {
        for (char c : s) text[size++] = c;
        return *this;
    }
    constexpr catalog_name& operator+=(int v) {
        char digits[12]{};
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v > 0);
        while (n > 0) text[size++] = digits[--n];
        return *this;
    }
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// NVLink
// ---------------------------------------------------------------------------------------------

/// @brief What one NVLink generation is: links per GPU, differential pairs (lanes) per link per
/// direction, the payload rate of one lane in one direction, and where the figures come from.
struct nvlink_generation_facts {
    int generation;
    int links_per_gpu;
    int lanes_per_link;
    double lane_gbit_s;  ///< one lane, one direction, payload (decimal Gbit/s)
    bool switch_reduction;  ///< this generation's NVSwitch reduces in the switch (NVLink SHARP, NVLS)
    std::string_view source;
};

/// @brief The NVLink generations of the catalog, one row each (a new generation is one row: the
/// catalog, its names and `nvlink<Gen>` follow from it).
/// NVLink2 8 x 25 Gbit/s per link (V100 whitepaper), NVLink3 4 x 50 (A100 whitepaper), NVLink4
/// 2 x 100 (H100 whitepaper: "only two high-speed differential pairs to form a single link"),
/// NVLink5 2 x 200 (Blackwell: 50 GB/s per link per direction). In-switch reduction: the
/// third-generation NVSwitch of NVLink4 systems introduced NVLink SHARP (H100 whitepaper, "NVLink
/// Switch System"), kept by Blackwell's NVLink Switch; the NVSwitches of NVLink2/3 do not reduce.
/// Note: ml-engineering-networking's table gives "4 lanes of 6.25 GB/s" for NVLink 2, 3 and 4; that
/// is NVLink3's layout only. The per-link figure (25 GB/s per direction) is the same for 2-4.
inline constexpr auto nvlink_generations = std::to_array<nvlink_generation_facts>({
    {2, 6, 8, 25.0, false,
     "NVIDIA Tesla V100 GPU Architecture whitepaper (2017): 6 NVLink2 links x 25 GB/s per direction, 300 GB/s total"},
    {3, 12, 4, 50.0, false,
     "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 12 NVLink3 links x 4 pairs x 50 Gbit/s, 600 GB/s total"},
    {4, 18, 2, 100.0, true,
     "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 18 NVLink4 links x 2 pairs x 100 Gbit/s, 900 GB/s total"},
    {5, 18, 2, 200.0, true, "NVIDIA Blackwell/B200 datasheet (2024): 18 NVLink5 links x 50 GB/s per direction, 1.8 TB/s total"},
});

/// @brief Whether the catalog has a row for NVLink generation `gen`.
[[nodiscard]] constexpr bool has_nvlink_generation(int gen) {
    for (const auto& g : nvlink_generations)
        if (g.generation == gen) return true;
    return false;
}
/// @brief The row of NVLink generation `gen` (a generation of the catalog: has_nvlink_generation).
/// Rows are returned by value and looked up by integers only, so that the concepts below stay
/// constant expressions under every compiler mode (sanitizers instrument pointer comparisons).
[[nodiscard]] constexpr nvlink_generation_facts nvlink_generation_row(int gen) {
    for (const auto& g : nvlink_generations)
        if (g.generation == gen) return g;
    return {};
}

/// @brief Whether a switched fabric of link `l` can reduce in the switch (NVLS): an NVLink link
/// whose lane layout and rate are those of a generation with switch_reduction (NVLink4, NVLink5,
/// any bundle of them). A property of the link, not of its name.
[[nodiscard]] constexpr bool nvlink_switch_reduces(const link& l) {
    if (l.family != link_family::nvlink) return false;
    for (const auto& g : nvlink_generations)
        if (l.lanes == g.lanes_per_link && l.per_lane.value() == g.lane_gbit_s * giga / 8.0) return g.switch_reduction;
    return false;
}

/// @brief NVLink generations in the catalog (rows of nvlink_generations): 2 (V100), 3 (A100),
/// 4 (H100/H200), 5 (B200).
template <int Gen>
concept nvlink_generation = has_nvlink_generation(Gen);

/// @brief Links per GPU of each NVLink generation (V100 6, A100 12, H100 18, B200 18).
template <int Gen> requires nvlink_generation<Gen>
inline constexpr int nvlink_links_per_gpu = nvlink_generation_row(Gen).links_per_gpu;

/// @brief Differential pairs (lanes) per link per direction (nvlink_generations).
template <int Gen> requires nvlink_generation<Gen>
inline constexpr int nvlink_lanes_per_link = nvlink_generation_row(Gen).lanes_per_link;

/// @brief One lane, one direction: NVLink2 25 Gbit/s, NVLink3 50, NVLink4 100, NVLink5 200
/// (payload; nvlink_generations).
template <int Gen> requires nvlink_generation<Gen>
inline constexpr byte_rate nvlink_lane_rate = bytes_per_second(nvlink_generation_row(Gen).lane_gbit_s * giga / 8.0);

/// @brief Sub-bundle sizes the catalog lists below each generation's full complement: the "NV#"
/// counts `nvidia-smi topo -m` reports between two GPUs (NV1 ... NV12).
inline constexpr auto nvlink_bundle_sizes = std::to_array({1, 2, 4, 6, 8, 12});

namespace detail {
template <int Gen>
constexpr catalog_name nvlink_bundle_name(int n_links) {
    catalog_name n;
    n += "nvlink";
    n += Gen;
    if (n_links != nvlink_links_per_gpu<Gen>) {
        n += "-nv";
        n += n_links;
    }
    return n;
}
template <int Gen, int Links>
inline constexpr catalog_name nvlink_bundle_name_v = nvlink_bundle_name<Gen>(Links);

}  // namespace detail

/// @brief A bonded set of `Links` NVLinks between two GPUs, as `nvidia-smi topo -m` prints "NV#".
/// per_direction = Links x lanes x lane rate (25 GB/s per link for NVLink2-4, 50 for NVLink5).
/// Named "nvlinkG-nvK" ("nvlink3-nv12"); the full complement keeps the plain name ("nvlink4").
template <int Gen, int Links>
    requires nvlink_generation<Gen> && (Links >= 1 && Links <= nvlink_links_per_gpu<Gen>)
inline constexpr link nvlink_bundle{
    .name = detail::nvlink_bundle_name_v<Gen, Links>.view(),
    .family = link_family::nvlink,
    .kind = link_kind::scale_up,
    .rdma = true,
    .per_direction = static_cast<double>(Links * nvlink_lanes_per_link<Gen>) * nvlink_lane_rate<Gen>,
    .lanes = nvlink_lanes_per_link<Gen>,
    .links = Links,
    .per_lane = nvlink_lane_rate<Gen>,
    .encoding = line_encoding::none,
    .latency = std::nullopt,
    .source = nvlink_generation_row(Gen).source,
};

/// @brief One GPU's full NVLink complement: 150 / 300 / 450 / 900 GB/s per direction for
/// generations 2 / 3 / 4 / 5 (300 / 600 / 900 / 1800 duplex). Sources: NVIDIA whitepapers above.
template <int Gen> requires nvlink_generation<Gen>
inline constexpr link nvlink = nvlink_bundle<Gen, nvlink_links_per_gpu<Gen>>;

// ---------------------------------------------------------------------------------------------
// PCIe
// ---------------------------------------------------------------------------------------------

/// @brief What one PCIe generation is: raw transfer rate per lane, line code and the fraction of
/// the raw bit rate that carries transaction-layer data, and where the figures come from.
struct pcie_generation_facts {
    int generation;
    double transfer_rate_gts;    ///< raw GT/s per lane
    line_encoding encoding;
    double payload_efficiency;   ///< payload bits per raw bit
    std::string_view source;
};

/// @brief The PCIe generations of the catalog, one row each (the catalog's x1-x16 entries and
/// `pcie<Gen, Width>` follow from the row).
/// Rates: 16 (Gen4), 32 (Gen5), 64 (Gen6, PAM4), 128 (Gen7, PAM4) GT/s per lane (PCI-SIG, PCI
/// Express Base Specification 4.0/5.0/6.0/7.0 announcements, pcisig.com).
/// Payload: Gen4/5 use the 128b/130b line code (PCI Express Base Specification 3.0+) -> 128/130.
/// Gen6/7 use FLIT mode (PCI Express Base Specification 6.0): a 256-byte FLIT holds 236 bytes of
/// TLP, 6 of DLP, 8 of CRC and 6 of FEC; counting TLP+DLP bytes as payload gives 242/256 = 0.9453.
/// This is the figure behind the usual "121 GB/s per direction at x16" for Gen6 (PCI-SIG,
/// "PCIe 6.0 Specification: The Interconnect for I/O Needs of the Future", 2022), 242 for Gen7.
inline constexpr auto pcie_generations = std::to_array<pcie_generation_facts>({
    {4, 16.0, line_encoding::b128b130b, 128.0 / 130.0, "PCI-SIG PCIe 4.0 base spec: 16 GT/s per lane, 128b/130b encoding"},
    {5, 32.0, line_encoding::b128b130b, 128.0 / 130.0, "PCI-SIG PCIe 5.0 base spec: 32 GT/s per lane, 128b/130b encoding"},
    {6, 64.0, line_encoding::flit, 242.0 / 256.0,
     "PCI-SIG PCIe 6.0 base spec: 64 GT/s PAM4 per lane, FLIT mode (242 of 256 bytes payload)"},
    {7, 128.0, line_encoding::flit, 242.0 / 256.0,
     "PCI-SIG PCIe 7.0 base spec: 128 GT/s PAM4 per lane, FLIT mode (242 of 256 bytes payload)"},
});

/// @brief Whether the catalog has a row for PCIe generation `gen`.
[[nodiscard]] constexpr bool has_pcie_generation(int gen) {
    for (const auto& g : pcie_generations)
        if (g.generation == gen) return true;
    return false;
}
/// @brief The row of PCIe generation `gen` (a generation of the catalog: has_pcie_generation),
/// by value (as nvlink_generation_row).
[[nodiscard]] constexpr pcie_generation_facts pcie_generation_row(int gen) {
    for (const auto& g : pcie_generations)
        if (g.generation == gen) return g;
    return {};
}

/// @brief PCIe generations in the catalog (rows of pcie_generations: 4 to 7).
template <int Gen>
concept pcie_generation = has_pcie_generation(Gen);
/// @brief Link widths defined by the PCIe base specification that the catalog lists: x1, x2, x4, x8, x16.
template <int Width>
concept pcie_width = (Width == 1 || Width == 2 || Width == 4 || Width == 8 || Width == 16);

/// @brief Raw transfer rate per lane in GT/s (pcie_generations).
template <int Gen> requires pcie_generation<Gen>
inline constexpr double pcie_transfer_rate_gts = pcie_generation_row(Gen).transfer_rate_gts;

/// @brief Fraction of the raw bit rate that carries transaction-layer data (pcie_generations):
/// 128/130 for Gen4/5, 242/256 for the FLIT mode of Gen6/7.
template <int Gen> requires pcie_generation<Gen>
inline constexpr double pcie_payload_efficiency = pcie_generation_row(Gen).payload_efficiency;

/// @brief One lane, one direction: GT/s x payload efficiency / 8 bits per byte.
/// Gen4 1.969, Gen5 3.938, Gen6 7.5625, Gen7 15.125 GB/s (ml-engineering-networking rounds to
/// ~2.0 / ~4.0 / ~7.5 / ~15.0).
template <int Gen> requires pcie_generation<Gen>
inline constexpr byte_rate pcie_lane_rate =
    bytes_per_second(pcie_transfer_rate_gts<Gen> * giga * pcie_payload_efficiency<Gen> / 8.0);

namespace detail {
template <int Gen, int Width>
inline constexpr catalog_name pcie_name_v = [] {
    catalog_name n;
    n += "pcie";
    n += Gen;
    n += "-x";
    n += Width;
    return n;
}();
}  // namespace detail

/// @brief A PCIe slot/link of generation `Gen` and `Width` lanes, per direction:
/// Width x GT/s x payload efficiency / 8. x16: Gen4 31.5, Gen5 63.0, Gen6 121.0, Gen7 242.0 GB/s.
template <int Gen, int Width> requires pcie_generation<Gen> && pcie_width<Width>
inline constexpr link pcie{
    .name = detail::pcie_name_v<Gen, Width>.view(),
    .family = link_family::pcie,
    .kind = link_kind::host_bus,
    .rdma = true,  // peer-to-peer DMA between devices on the bus
    .per_direction = static_cast<double>(Width) * pcie_lane_rate<Gen>,
    .lanes = Width,
    .links = 1,
    .per_lane = pcie_lane_rate<Gen>,
    .encoding = pcie_generation_row(Gen).encoding,
    .latency = std::nullopt,
    .source = pcie_generation_row(Gen).source,
};

// ---------------------------------------------------------------------------------------------
// InfiniBand
// ---------------------------------------------------------------------------------------------

/// @brief InfiniBand data rates (per-lane payload: EDR 25, HDR 50, NDR 100, XDR 200, GDR 400 Gbit/s).
enum class ib_rate { edr, hdr, ndr, xdr, gdr };

/// @brief Lower-case spellings of the InfiniBand rates (catalog names "ib-ndr-4x", ...).
inline constexpr std::array<name_entry<ib_rate>, 5> ib_rate_spellings{{
    {ib_rate::edr, "edr"}, {ib_rate::hdr, "hdr"}, {ib_rate::ndr, "ndr"}, {ib_rate::xdr, "xdr"}, {ib_rate::gdr, "gdr"},
}};
static_assert(detail::in_enum_order(ib_rate_spellings));
[[nodiscard]] constexpr const auto& name_table(ib_rate) { return ib_rate_spellings; }

/// @brief Port widths defined by the InfiniBand Architecture Specification: 1x, 4x, 8x, 12x.
template <int Width>
concept ib_width = (Width == 1 || Width == 4 || Width == 8 || Width == 12);

/// @brief One InfiniBand generation's facts: its per-lane payload rate in Gbit/s, its line code
/// and its published port latency in seconds (nullopt where not published).
struct ib_generation_facts {
    ib_rate rate;
    double lane_gbps;
    line_encoding encoding;
    std::optional<double> latency_s;
};

/// @brief The InfiniBand generations of the catalog, one row each, in ib_rate order (the catalog's
/// 1x-12x entries and `infiniband<R, Width>` follow from the row). Lane rates: EDR 25, HDR 50,
/// NDR 100, XDR 200, GDR 400 Gbit/s (InfiniBand Trade Association roadmap, infinibandta.org;
/// ml-engineering-networking); EDR uses 64b/66b line coding; port latency EDR 0.5 us, HDR 0.6 us
/// (ml-engineering-networking, after the InfiniBand Trade Association/NVIDIA tables), not published
/// for NDR, XDR, GDR.
inline constexpr auto ib_generations = std::to_array<ib_generation_facts>({
    {ib_rate::edr, 25.0, line_encoding::b64b66b, 0.5e-6},
    {ib_rate::hdr, 50.0, line_encoding::none, 0.6e-6},
    {ib_rate::ndr, 100.0, line_encoding::none, std::nullopt},
    {ib_rate::xdr, 200.0, line_encoding::none, std::nullopt},
    {ib_rate::gdr, 400.0, line_encoding::none, std::nullopt},
});
static_assert([] {
    for (std::size_t i = 0; i < ib_generations.size(); ++i)
        if (static_cast<std::size_t>(ib_generations[i].rate) != i) return false;
    return ib_generations.size() == ib_rate_spellings.size();
}());

/// @brief One lane, one direction, payload rate: the row's lane rate (ib_generations).
[[nodiscard]] constexpr byte_rate ib_lane_rate(ib_rate r) {
    return bytes_per_second(ib_generations[static_cast<std::size_t>(r)].lane_gbps * giga / 8.0);
}

/// @brief Published port latency (ib_generations); nullopt where not published.
[[nodiscard]] constexpr std::optional<duration> ib_latency(ib_rate r) {
    const auto s = ib_generations[static_cast<std::size_t>(r)].latency_s;
    if (!s) return std::nullopt;
    return seconds(*s);
}

namespace detail {
template <ib_rate R, int Width>
inline constexpr catalog_name ib_name_v = [] {
    catalog_name n;
    n += "ib-";
    n += to_string(R);
    n += "-";
    n += Width;
    n += "x";
    return n;
}();
inline constexpr std::string_view ib_source =
    "InfiniBand Trade Association roadmap: per-lane EDR 25, HDR 50, NDR 100, XDR 200, GDR 400 Gbit/s; "
    "latency EDR 0.5 us, HDR 0.6 us (ml-engineering-networking)";
}  // namespace detail

/// @brief An InfiniBand port of `Width` lanes at rate `R`, per direction: Width x lane rate
/// (e.g. NDR 4x = 400 Gbit/s = 50 GB/s; GDR 8x = 3200 Gbit/s). EDR uses 64b/66b line coding.
template <ib_rate R, int Width> requires ib_width<Width>
inline constexpr link infiniband{
    .name = detail::ib_name_v<R, Width>.view(),
    .family = link_family::infiniband,
    .kind = link_kind::scale_out,
    .rdma = true,
    .per_direction = static_cast<double>(Width) * ib_lane_rate(R),
    .lanes = Width,
    .links = 1,
    .per_lane = ib_lane_rate(R),
    .encoding = ib_generations[static_cast<std::size_t>(R)].encoding,
    .latency = ib_latency(R),
    .source = detail::ib_source,
};

// ---------------------------------------------------------------------------------------------
// Named links
// ---------------------------------------------------------------------------------------------

/// @brief One AMD MI250X Infinity Fabric (xGMI) link: 16 lanes x 25 Gbit/s = 50 GB/s per direction
/// (AMD Instinct MI250X datasheet: 100 GB/s peak per link, both directions).
inline constexpr link xgmi_mi250x_link{
    .name = "xgmi-mi250x-link", .family = link_family::xgmi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = bytes_per_second(50.0 * giga), .lanes = 16, .links = 1,
    .per_lane = bytes_per_second(25.0 * giga / 8.0), .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "AMD Instinct MI250X datasheet: Infinity Fabric link 100 GB/s peak (50 per direction)"};

/// @brief One MI250X's xGMI complement toward the other GPUs of the node: 7 links x 50 GB/s = 350
/// GB/s per direction, 700 duplex (ml-engineering-networking; AMD MI250X datasheet).
inline constexpr link xgmi_mi250x{
    .name = "xgmi-mi250x", .family = link_family::xgmi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = 7.0 * xgmi_mi250x_link.per_direction, .lanes = 16, .links = 7,
    .per_lane = xgmi_mi250x_link.per_lane, .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "AMD Instinct MI250X datasheet; ml-engineering-networking: 7 xGMI links x 50 GB/s = 350 GB/s per direction"};

/// @brief One AMD MI300X xGMI link: 16 lanes x 32 Gbit/s = 64 GB/s per direction (AMD Instinct
/// MI300X datasheet: 128 GB/s per link both directions).
inline constexpr link xgmi_mi300x_link{
    .name = "xgmi-mi300x-link", .family = link_family::xgmi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = bytes_per_second(64.0 * giga), .lanes = 16, .links = 1,
    .per_lane = bytes_per_second(32.0 * giga / 8.0), .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "AMD Instinct MI300X datasheet: Infinity Fabric link 128 GB/s peak (64 per direction)"};

/// @brief One MI300X's complement: 7 links x 64 GB/s = 448 GB/s per direction, 896 duplex
/// (AMD Instinct MI300X datasheet: "896 GB/s aggregate peak Infinity Fabric bandwidth").
inline constexpr link xgmi_mi300x{
    .name = "xgmi-mi300x", .family = link_family::xgmi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = 7.0 * xgmi_mi300x_link.per_direction, .lanes = 16, .links = 7,
    .per_lane = xgmi_mi300x_link.per_lane, .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "AMD Instinct MI300X datasheet: 7 xGMI links x 64 GB/s = 448 GB/s per direction (896 aggregate)"};

/// @brief One AMD MI355X Infinity Fabric link: 153.6 GB/s peak both directions = 76.8 GB/s per
/// direction, 16 lanes x 38.4 Gbit/s (AMD Instinct MI355X datasheet: "153.6 GB/s" per link).
inline constexpr link xgmi_mi355x_link{
    .name = "xgmi-mi355x-link", .family = link_family::xgmi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = bytes_per_second(76.8 * giga), .lanes = 16, .links = 1,
    .per_lane = bytes_per_second(38.4 * giga / 8.0), .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "AMD Instinct MI355X datasheet: Infinity Fabric link 153.6 GB/s peak (76.8 per direction)"};

/// @brief One MI355X's complement: 7 links x 76.8 GB/s = 537.6 GB/s per direction, 1,075.2 GB/s
/// aggregate (AMD Instinct MI355X datasheet: 7 Infinity Fabric links, 1,075 GB/s peak).
inline constexpr link xgmi_mi355x{
    .name = "xgmi-mi355x", .family = link_family::xgmi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = 7.0 * xgmi_mi355x_link.per_direction, .lanes = 16, .links = 7,
    .per_lane = xgmi_mi355x_link.per_lane, .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "AMD Instinct MI355X datasheet: 7 Infinity Fabric links x 76.8 GB/s = 537.6 GB/s per direction"};

/// @brief One Gaudi2 card's scale-up complement: 21 of its 24 integrated 100 GbE RoCE v2 ports go to
/// the other 7 cards (3 each): 21 x 100 Gbit/s = 2.1 Tbit/s = 262.5 GB/s per direction.
/// Source: Intel Habana Gaudi2 whitepaper / HLS-Gaudi2 datasheet; ml-engineering-networking.
inline constexpr link gaudi2_scaleup{
    .name = "gaudi2-scaleup", .family = link_family::gaudi, .kind = link_kind::scale_up, .rdma = true,
    .per_direction = 21.0 * bytes_per_second(100.0 * giga / 8.0), .lanes = 1, .links = 21,
    .per_lane = bytes_per_second(100.0 * giga / 8.0), .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "Intel Gaudi2 whitepaper: 24 x 100 GbE RoCE v2 per card, 21 to the 7 peer cards = 2.1 Tbit/s"};

/// @brief One Gaudi2 card's scale-out ports: the remaining 3 x 100 GbE RoCE = 300 Gbit/s per card
/// per direction. This is the catalog entry "gaudi2-scaleout" (a link name denotes one card's
/// NIC complement, CLI.md); an 8-card HLS-Gaudi2 node has 8 of them = 24 x 100 GbE = 2.4 Tbit/s.
inline constexpr link gaudi2_scaleout{
    .name = "gaudi2-scaleout", .family = link_family::gaudi, .kind = link_kind::scale_out, .rdma = true,
    .per_direction = 3.0 * bytes_per_second(100.0 * giga / 8.0), .lanes = 1, .links = 3,
    .per_lane = bytes_per_second(100.0 * giga / 8.0), .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "Intel Gaudi2 whitepaper / HLS-Gaudi2: 3 x 100 GbE RoCE v2 scale-out ports per card (24 per 8-card node)"};

/// @brief A whole HLS-Gaudi2 node's scale-out bandwidth: 24 x 100 GbE = 2.4 Tbit/s = 300 GB/s per
/// direction (ml-engineering-networking; Intel HLS-Gaudi2 datasheet). Use with nics_per_node = 1.
inline constexpr link gaudi2_scaleout_node{
    .name = "gaudi2-scaleout-node", .family = link_family::gaudi, .kind = link_kind::scale_out, .rdma = true,
    .per_direction = 24.0 * bytes_per_second(100.0 * giga / 8.0), .lanes = 1, .links = 24,
    .per_lane = bytes_per_second(100.0 * giga / 8.0), .encoding = line_encoding::none, .latency = std::nullopt,
    .source = "Intel HLS-Gaudi2 datasheet: 24 x 100 GbE RoCE v2 scale-out ports per 8-card node = 2.4 Tbit/s"};

namespace detail {
/// A single-port scale-out NIC of `gbps` Gbit/s per direction.
[[nodiscard]] constexpr link nic(std::string_view name, link_family family, bool rdma, double gbps, int lanes,
                                 std::string_view source) {
    return link{.name = name, .family = family, .kind = link_kind::scale_out, .rdma = rdma,
                .per_direction = bytes_per_second(gbps * giga / 8.0), .lanes = lanes, .links = 1,
                .per_lane = bytes_per_second(gbps / lanes * giga / 8.0), .encoding = line_encoding::none,
                .latency = std::nullopt, .source = source};
}
}  // namespace detail

/// @brief One AWS EFA (first generation) interface: 100 Gbit/s per direction, SRD transport with
/// GPUDirect RDMA. A p4d.24xlarge has 4 = 400 Gbit/s (AWS p4d instance page). Latency unpublished.
inline constexpr link efa_v1 = detail::nic("efa-v1", link_family::efa, true, 100.0, 1,
    "AWS EC2 p4d: 4 x 100 Gbit/s EFA interfaces = 400 Gbit/s per instance");
/// @brief One AWS EFA v2 interface: 100 Gbit/s; a p5.48xlarge has 32 = 3200 Gbit/s (AWS p5 page).
inline constexpr link efa_v2 = detail::nic("efa-v2", link_family::efa, true, 100.0, 1,
    "AWS EC2 p5: 32 x 100 Gbit/s EFA v2 interfaces = 3200 Gbit/s per instance");

/// @brief RoCE v2 NICs (e.g. NVIDIA ConnectX-6/7/8, Broadcom Thor) at 100/200/400/800 Gbit/s per port.
inline constexpr link roce_100 = detail::nic("roce-100", link_family::roce, true, 100.0, 4,
    "IEEE 802.3 100GBASE (4 x 25G lanes), RoCE v2 (IBTA Annex A17)");
inline constexpr link roce_200 = detail::nic("roce-200", link_family::roce, true, 200.0, 4,
    "IEEE 802.3cd 200GBASE (4 x 50G lanes), RoCE v2 (IBTA Annex A17), e.g. ConnectX-6");
inline constexpr link roce_400 = detail::nic("roce-400", link_family::roce, true, 400.0, 4,
    "IEEE 802.3ck 400GBASE (4 x 100G lanes), RoCE v2 (IBTA Annex A17), e.g. ConnectX-7");
inline constexpr link roce_800 = detail::nic("roce-800", link_family::roce, true, 800.0, 8,
    "IEEE 802.3df 800GBASE (8 x 100G lanes), RoCE v2 (IBTA Annex A17), e.g. ConnectX-8");

/// @brief Plain Ethernet with TCP sockets (no RDMA) at 100/200/400/800 Gbit/s per port (IEEE 802.3).
inline constexpr link eth_100 = detail::nic("eth-100", link_family::ethernet, false, 100.0, 4,
    "IEEE 802.3 100GBASE Ethernet, TCP sockets (no RDMA)");
inline constexpr link eth_200 = detail::nic("eth-200", link_family::ethernet, false, 200.0, 4,
    "IEEE 802.3cd 200GBASE Ethernet, TCP sockets (no RDMA)");
inline constexpr link eth_400 = detail::nic("eth-400", link_family::ethernet, false, 400.0, 4,
    "IEEE 802.3ck 400GBASE Ethernet, TCP sockets (no RDMA)");
inline constexpr link eth_800 = detail::nic("eth-800", link_family::ethernet, false, 800.0, 8,
    "IEEE 802.3df 800GBASE Ethernet (8 x 100G lanes), TCP sockets (no RDMA)");

/// @brief HPE Slingshot 11 NIC (Cassini): 200 Gbit/s per port; Frontier/LUMI nodes have 4 = 800.
inline constexpr link slingshot_200 = detail::nic("slingshot-200", link_family::slingshot, true, 200.0, 4,
    "HPE Slingshot 11 (Cassini NIC) 200 Gbit/s per port; ml-engineering-networking: 4 links = 800 Gbit/s");

/// @brief Intel/Cornelis Omni-Path: OPA 100 (4 x 25 Gbit/s) and Omni-Path Express 200 Gbit/s.
inline constexpr link opa_100 = detail::nic("opa-100", link_family::omnipath, true, 100.0, 4,
    "Intel Omni-Path Architecture 100 Series: 100 Gbit/s per port (4 x 25G lanes)");
inline constexpr link opa_200 = detail::nic("opa-200", link_family::omnipath, true, 200.0, 4,
    "Cornelis Omni-Path CN5000 / OPA 200: 200 Gbit/s per port; ml-engineering-networking");

/// @brief Google Cloud GPUDirect-TCPX (A3): one 200 Gbit/s gVNIC; an a3-highgpu-8g has 4 for GPU
/// traffic = 800 Gbit/s (Google Cloud A3 documentation). GPU-direct receive over TCP, not RDMA.
inline constexpr link tcpx = detail::nic("tcpx", link_family::tcpx, false, 200.0, 4,
    "Google Cloud A3 (a3-highgpu-8g): 4 x 200 Gbit/s NICs with GPUDirect-TCPX = 800 Gbit/s");
/// @brief Google Cloud GPUDirect-TCPXO (A3 Mega): one 200 Gbit/s NIC; an a3-megagpu-8g has 8 =
/// 1600 Gbit/s (Google Cloud A3 Mega documentation). Not RDMA.
inline constexpr link tcpxo = detail::nic("tcpxo", link_family::tcpx, false, 200.0, 4,
    "Google Cloud A3 Mega (a3-megagpu-8g): 8 x 200 Gbit/s NICs with GPUDirect-TCPXO = 1600 Gbit/s");

// ---------------------------------------------------------------------------------------------
// Runtime catalog
// ---------------------------------------------------------------------------------------------

namespace detail {
template <int Gen>
inline constexpr auto pcie_all = std::to_array({pcie<Gen, 1>, pcie<Gen, 2>, pcie<Gen, 4>, pcie<Gen, 8>,
                                                 pcie<Gen, 16>});
template <ib_rate R>
inline constexpr auto ib_all = std::to_array({infiniband<R, 1>, infiniband<R, 4>, infiniband<R, 8>,
                                               infiniband<R, 12>});
template <std::size_t... N>
constexpr auto concat(const std::array<link, N>&... parts) {
    std::array<link, (N + ...)> out{};
    std::size_t i = 0;
    ((
         [&] {
             for (const link& l : parts) out[i++] = l;
         }()),
     ...);
    return out;
}
/// The sub-bundles of generation Gen: nvlink_bundle_sizes below its full complement, in order.
template <int Gen, std::size_t... I>
constexpr auto nvlink_bundles_of(std::index_sequence<I...>) {
    constexpr int full = nvlink_links_per_gpu<Gen>;
    constexpr std::size_t n = ((nvlink_bundle_sizes[I] < full ? std::size_t{1} : std::size_t{0}) + ...);
    std::array<link, n> out{};
    std::size_t k = 0;
    // the bundle template is instantiated at most at the full complement (sizes above it skipped)
    ((nvlink_bundle_sizes[I] < full ? void(out[k++] = nvlink_bundle<Gen, (nvlink_bundle_sizes[I] < full ? nvlink_bundle_sizes[I] : full)>)
                                    : void()),
     ...);
    return out;
}
/// Every PCIe entry: each generation's widths, generation by generation.
template <std::size_t... R>
constexpr auto pcie_generations_all(std::index_sequence<R...>) {
    return concat(pcie_all<pcie_generations[R].generation>...);
}
/// Every NVLink entry: each generation's full complement, then each generation's sub-bundles.
template <std::size_t... R>
constexpr auto nvlink_all(std::index_sequence<R...>) {
    return concat(std::array<link, sizeof...(R)>{nvlink<nvlink_generations[R].generation>...},
                  nvlink_bundles_of<nvlink_generations[R].generation>(std::make_index_sequence<nvlink_bundle_sizes.size()>{})...);
}
}  // namespace detail

/// @brief Every catalog link, in a stable order: NVLink (full complements, then the NV# bundles
/// that `nvidia-smi topo -m` reports), PCIe, xGMI, Gaudi2, InfiniBand, EFA, RoCE, Ethernet,
/// Slingshot, Omni-Path, TCPX.
inline constexpr auto link_catalog = detail::concat(
    detail::nvlink_all(std::make_index_sequence<nvlink_generations.size()>{}),
    detail::pcie_generations_all(std::make_index_sequence<pcie_generations.size()>{}),
    std::array<link, 6>{xgmi_mi250x, xgmi_mi250x_link, xgmi_mi300x, xgmi_mi300x_link, xgmi_mi355x,
                        xgmi_mi355x_link},
    std::array<link, 3>{gaudi2_scaleup, gaudi2_scaleout, gaudi2_scaleout_node},
    detail::ib_all<ib_rate::edr>, detail::ib_all<ib_rate::hdr>, detail::ib_all<ib_rate::ndr>,
    detail::ib_all<ib_rate::xdr>, detail::ib_all<ib_rate::gdr>,
    std::array<link, 2>{efa_v1, efa_v2},
    std::array<link, 4>{roce_100, roce_200, roce_400, roce_800},
    std::array<link, 4>{eth_100, eth_200, eth_400, eth_800},
    std::array<link, 4>{slingshot_200, opa_100, opa_200, tcpx},
    std::array<link, 1>{tcpxo});

/// @brief The names of all catalog links, in catalog order.
inline constexpr auto link_names = [] {
    std::array<std::string_view, link_catalog.size()> names{};
    for (std::size_t i = 0; i < link_catalog.size(); ++i) names[i] = link_catalog[i].name;
    return names;
}();

/// @brief All catalog links (see link_catalog).
[[nodiscard]] constexpr std::span<const link> all_links() { return link_catalog; }

/// @brief The catalog link called `name` (exact, lower-case, as in CLI.md), or nullopt.
/// The full NVLink complement is also found as "nvlinkG-nvK" with K = links per GPU ("nvlink4-nv18").
[[nodiscard]] constexpr std::optional<link> find_link(std::string_view name) {
    for (const link& l : link_catalog)
        if (l.name == name) return l;
    // "nvlinkG-nvK" with K the full complement: the generation's plain entry
    for (const nvlink_generation_facts& g : nvlink_generations) {
        detail::catalog_name alias;
        alias += "nvlink";
        alias += g.generation;
        alias += "-nv";
        alias += g.links_per_gpu;
        if (alias.view() == name) {
            detail::catalog_name plain;
            plain += "nvlink";
            plain += g.generation;
            return find_link(plain.view());
        }
    }
    return std::nullopt;
}

/// @brief The catalog link called `name`; throws input_error naming `field`, the value and the
/// closest known names ("did you mean ...") if there is none.
[[nodiscard]] inline link link_by_name(std::string_view name, std::string_view field = "link") {
    if (auto l = find_link(name)) return *l;
    throw unknown_name(std::string(field), name, link_names);
}

}  // namespace commscale
