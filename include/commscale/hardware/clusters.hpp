#pragma once
/// @file hardware/clusters.hpp
/// @brief Cluster presets: real systems as constexpr `cluster` values, each with its sources.
/// The same presets live in data/clusters/<name>.json (a test proves the two agree field by
/// field). Product presets (DGX/HGX servers, cloud instances) describe ONE node; scale them with
/// `--nodes N` (CLI) or by setting `.nodes`. The rack-scale presets (gb200-nvl72, gb300-nvl72)
/// describe one rack: 18 compute-tray nodes in one 72-GPU NVLink domain (`scale_up_domain`).
/// `baskerville` is a named installation and carries its real node count (57).
///
/// Lookup: `all_clusters()`, `find_cluster(name)` (constexpr, nullopt if unknown) and
/// `cluster_by_name(name, field)` (throws input_error with "did you mean").

#include <array>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <string_view>

#include "../error.hpp"
#include "accelerators.hpp"
#include "links.hpp"
#include "topology.hpp"

namespace commscale {

namespace presets {

// Each preset states only what differs from the defaults of `node_spec` and `cluster`
// (hardware/topology.hpp): one node of 8 GPUs and 8 NICs on a switched fabric with GPUDirect RDMA
// and PCIe peer-to-peer, in-switch reduction where the fabric is switched and the NVLink
// generation has it (NVLink4 and later: links.hpp nvlink_switch_reduces), a non-blocking (1:1)
// rail-optimized network of 32 nodes per leaf without in-network reduction. Where a vendor
// reference architecture gives the nodes per leaf, the preset cites it.

/// @brief dgx-a100: see `.source`.
inline constexpr cluster dgx_a100{
    .name = "dgx-a100",
    .node = {.accelerator = "a100-80gb-sxm",
             .intra = nvlink<3>,
             .inter = infiniband<ib_rate::hdr, 4>},
    .nodes_per_leaf = 20,
    .source =
        "NVIDIA DGX A100 datasheet (640GB system): 8x A100 80GB SXM4, 6x NVSwitch, 600 GB/s NVLink3 "
        "per GPU (duplex), 8x single-port ConnectX-6 VPI HDR 200 Gb/s compute NICs (one per GPU); DGX "
        "SuperPOD A100 reference architecture: scalable unit of 20 nodes per rail leaf (QM8790, 40 "
        "ports, 20 down / 20 up, non-blocking). Second-generation NVSwitch has no in-switch "
        "reduction."};

/// @brief dgx-h100: see `.source`.
inline constexpr cluster dgx_h100{
    .name = "dgx-h100",
    .node = {.accelerator = "h100-sxm",
             .intra = nvlink<4>,
             .inter = infiniband<ib_rate::ndr, 4>},
    .source =
        "NVIDIA DGX H100 datasheet: 8x H100 SXM5 80GB, 4x third-generation NVSwitch (NVLink4, 900 "
        "GB/s per GPU duplex, in-switch reduction NVLS), 8x ConnectX-7 400 Gb/s NDR compute ports "
        "(one per GPU, 4x OSFP 800G cages); DGX SuperPOD H100 reference architecture: scalable unit "
        "of 32 nodes per rail leaf (QM9700, 64 ports, 32 down / 32 up, non-blocking)."};

/// @brief hgx-h200: see `.source`.
inline constexpr cluster hgx_h200{
    .name = "hgx-h200",
    .node = {.accelerator = "h200-sxm",
             .intra = nvlink<4>,
             .inter = infiniband<ib_rate::ndr, 4>},
    .source =
        "NVIDIA HGX H200 8-GPU board (H200 SXM 141GB, NVLink4 900 GB/s per GPU duplex through "
        "third-generation NVSwitch with NVLS); NVIDIA HGX reference server configuration: one 400 "
        "Gb/s ConnectX-7 NDR (or BlueField-3 SuperNIC) per GPU; rail leaf as in the DGX SuperPOD H100 "
        "reference architecture (32 nodes per leaf)."};

/// @brief dgx-b200: see `.source`.
inline constexpr cluster dgx_b200{
    .name = "dgx-b200",
    .node = {.accelerator = "b200",
             .intra = nvlink<5>,
             .inter = infiniband<ib_rate::ndr, 4>},
    .source =
        "NVIDIA DGX B200 datasheet: 8x B200, 2x fifth-generation NVLink switch chips (NVLink5, 1.8 "
        "TB/s per GPU duplex, 14.4 TB/s total, NVLS), 8x single-port ConnectX-7 VPI up to 400 Gb/s "
        "InfiniBand compute ports (4x OSFP); DGX SuperPOD B200 reference architecture: 32 nodes per "
        "scalable unit rail leaf."};

/// @brief dgx-b300: see `.source`.
inline constexpr cluster dgx_b300{
    .name = "dgx-b300",
    .node = {.accelerator = "b300",
             .intra = nvlink<5>,
             .inter = infiniband<ib_rate::xdr, 4>},
    .source =
        "NVIDIA DGX B300 datasheet: 8x B300 (Blackwell Ultra), NVLink5 through NVLink switch chips "
        "(1.8 TB/s per GPU duplex, 14.4 TB/s total, NVLS), 8x OSFP ports serving 8x single-port "
        "ConnectX-8 VPI, up to 800 Gb/s InfiniBand per GPU; rail leaf as in the DGX SuperPOD reference "
        "architecture (32 nodes per scalable unit)."};

/// @brief gb200-nvl72: one rack of 18 compute trays (nodes) of 4 GPUs, one NVLink domain of 72
/// GPUs across them (every GPU reaches every other through the NVLink switch trays at its full
/// 1.8 TB/s), one NIC per GPU; `--nodes` / `--gpus` count trays / GPUs (36 trays = 2 racks); see
/// `.source`.
inline constexpr cluster gb200_nvl72{
    .name = "gb200-nvl72",
    .nodes = 18,
    .node = {.gpus = 4,
             .accelerator = "gb200",
             .intra = nvlink<5>,
             .inter = infiniband<ib_rate::ndr, 4>,
             .nics = 4},
    .scale_up_domain = 72,
    .source =
        "NVIDIA GB200 NVL72 product page: 72 Blackwell GPUs and 36 Grace CPUs in 18 compute trays of "
        "4 GPUs, 9 NVLink switch trays, one NVLink domain of 130 TB/s (NVLink5, 1.8 TB/s per GPU "
        "duplex) with SHARP in-switch reduction (NVLS); NVIDIA GB200 NVL72 reference architecture: one "
        "400 Gb/s ConnectX-7 per GPU (4 per compute tray) on the InfiniBand compute fabric, rail leaf "
        "as in the DGX SuperPOD reference architecture. A node here is the compute tray (4 GPUs, 4 "
        "NICs); the NVLink domain (scale_up_domain) is the rack's 72 GPUs; nodes 18 = one rack; "
        "nodes_per_leaf is the library default (in trays)."};

/// @brief gb300-nvl72: as gb200-nvl72 (18 trays of 4 GPUs, a 72-GPU NVLink domain) with
/// Blackwell Ultra GPUs and 800G NICs; see `.source`.
inline constexpr cluster gb300_nvl72{
    .name = "gb300-nvl72",
    .nodes = 18,
    .node = {.gpus = 4,
             .accelerator = "gb300",
             .intra = nvlink<5>,
             .inter = infiniband<ib_rate::xdr, 4>,
             .nics = 4},
    .scale_up_domain = 72,
    .source =
        "NVIDIA GB300 NVL72 product page: 72 Blackwell Ultra GPUs and 36 Grace CPUs in 18 compute "
        "trays of 4 GPUs, one NVLink domain of 130 TB/s (NVLink5, 1.8 TB/s per GPU duplex, NVLink "
        "switch with SHARP), 72 ConnectX-8 SuperNICs (800 Gb/s, one per GPU) on Quantum-X800 "
        "InfiniBand or Spectrum-X Ethernet. A node here is the compute tray (4 GPUs, 4 NICs); the "
        "NVLink domain (scale_up_domain) is the rack's 72 GPUs; nodes 18 = one rack; nodes_per_leaf "
        "is the library default (in trays)."};

/// @brief aws-p4d: see `.source`.
inline constexpr cluster aws_p4d{
    .name = "aws-p4d",
    .node = {.accelerator = "a100-40gb-sxm",
             .intra = nvlink<3>,
             .inter = efa_v1,
             .nics = 4},
    .rail_optimized = false,
    .source =
        "AWS EC2 P4d instance page (p4d.24xlarge): 8x A100 40GB, NVSwitch NVLink3 600 GB/s per GPU "
        "duplex, 400 Gbps EFA networking = 4x 100 Gbps EFA interfaces with GPUDirect RDMA "
        "(ml-engineering-networking: EFA v1 0.4 Tbps, ~340 Gbps measured all-reduce); the EC2 "
        "UltraCluster fabric layout is not published (nodes_per_leaf is the library default, not "
        "rail-optimized)."};

/// @brief aws-p5: see `.source`.
inline constexpr cluster aws_p5{
    .name = "aws-p5",
    .node = {.accelerator = "h100-sxm",
             .intra = nvlink<4>,
             .inter = efa_v2,
             .nics = 32},
    .rail_optimized = false,
    .source =
        "AWS EC2 P5 instance page (p5.48xlarge): 8x H100 80GB, NVSwitch NVLink4 900 GB/s per GPU "
        "duplex, 3200 Gbps EFA v2 = 32x 100 Gbps interfaces (4 per GPU) with GPUDirect RDMA "
        "(ml-engineering-networking: EFA v2 3.2 Tbps, 32 NICs); the UltraCluster fabric layout is not "
        "published (nodes_per_leaf is the library default, not rail-optimized)."};

/// @brief gcp-a3-mega: see `.source`.
inline constexpr cluster gcp_a3_mega{
    .name = "gcp-a3-mega",
    .node = {.accelerator = "h100-sxm",
             .intra = nvlink<4>,
             .inter = tcpxo},
    .source =
        "Google Cloud GPU machine types, a3-megagpu-8g: 8x H100 80GB, NVLink4 900 GB/s per GPU "
        "duplex, 8x 200 Gbps NICs (1600 Gbps) for GPU traffic with GPUDirect-TCPXO (NIC to GPU memory "
        "without a host copy); A3 Mega cluster documentation describes rail-aligned GPU NICs."};

/// @brief mi300x-roce: see `.source`.
inline constexpr cluster mi300x_roce{
    .name = "mi300x-roce",
    .node = {.accelerator = "mi300x",
             .intra = xgmi_mi300x,
             .fabric = intra_fabric::mesh,
             .inter = roce_400},
    .source =
        "AMD Instinct MI300X Platform datasheet: 8x MI300X on a fully connected Infinity Fabric "
        "(xGMI) mesh, 7 links x 64 GB/s = 448 GB/s per GPU per direction (ml-engineering-networking); "
        "AMD reference cluster design: one 400 Gb/s RoCEv2 NIC per GPU (e.g. Broadcom Thor2 or AMD "
        "Pollara 400) on a rail-optimized Ethernet fabric."};

/// @brief mi355x-roce: see `.source`.
inline constexpr cluster mi355x_roce{
    .name = "mi355x-roce",
    .node = {.accelerator = "mi355x",
             .intra = xgmi_mi355x,
             .fabric = intra_fabric::mesh,
             .inter = roce_400},
    .source =
        "AMD Instinct MI355X platform datasheet: 8x MI355X OAM on a fully connected Infinity Fabric "
        "mesh, 7 links x 153.6 GB/s (76.8 per direction) per GPU; AMD Pensando Pollara 400 AI NIC "
        "product brief: 400 Gb/s RoCEv2 (UEC-ready), one per GPU in AMD's MI355X rack reference "
        "designs (Broadcom Thor2 400G the alternative), rail-optimized Ethernet fabric."};

/// @brief gaudi2-hls: see `.source`.
inline constexpr cluster gaudi2_hls{
    .name = "gaudi2-hls",
    .node = {.accelerator = "gaudi2",
             .intra = gaudi2_scaleup,
             .fabric = intra_fabric::mesh,
             .inter = gaudi2_scaleout},
    .source =
        "Intel Gaudi2 HLS-Gaudi2 server: each Gaudi2 has 24 integrated 100 GbE RoCEv2 ports, 21 of "
        "them wired all-to-all to the other 7 cards (3 per peer, 2.1 Tbps = 262.5 GB/s per card) and "
        "3 to the scale-out fabric (the catalog link gaudi2-scaleout is one card's 3 x 100 GbE), 8 x "
        "3 = 24 x 100 GbE = 2.4 Tbps per node (ml-engineering-networking, Gaudi2 spec)."};

/// @brief baskerville: see `.source`.
inline constexpr cluster baskerville{
    .name = "baskerville",
    .nodes = 57,
    .node = {.gpus = 4,
             .accelerator = "a100-40gb-sxm",
             .intra = nvlink<3>,
             .fabric = intra_fabric::mesh,
             .inter = infiniband<ib_rate::hdr, 4>,
             .nics = 1,
             .gpudirect_rdma = false},
    .nodes_per_leaf = 20,
    .rail_optimized = false,
    .source =
        "impact-of-gpu-networking-part2, Appendix A (Baskerville, University of Birmingham): 57 "
        "Lenovo SD650-N V2 nodes, each 4x NVIDIA A100 (40GB on 46 nodes, 80GB on 11) on an HGX A100 "
        "4-GPU planar (NVLink3 point-to-point mesh, 4 links between each pair), ONE HDR 200 Gb/s "
        "ConnectX-6 (PCIe Gen4) InfiniBand port per node shared by all 4 GPUs, HDR fat tree of QM8790 "
        "switches providing a full 200 Gb connection (non-blocking; 40-port leaf, 20 down). "
        "gpudirect_rdma false: the NIC is a PCIe adapter on a CPU root port, sharing no PCIe switch "
        "with the GPUs (Lenovo SD650-N V2 product guide), and NCCL uses GPUDirect RDMA by default only "
        "when GPU and NIC share a PCIe switch (NCCL_NET_GDR_LEVEL default PXB): NIC traffic is "
        "host-staged, as the measured 2x2 vs 4x1 all-reduce times show."};

}  // namespace presets

/// @brief Every preset, in a stable order (NVIDIA servers, cloud instances, AMD, Intel, installations).
inline constexpr auto cluster_presets = std::to_array<cluster>({
    presets::dgx_a100,    presets::dgx_h100,    presets::hgx_h200,    presets::dgx_b200,    presets::dgx_b300,
    presets::gb200_nvl72, presets::gb300_nvl72, presets::aws_p4d,     presets::aws_p5,      presets::gcp_a3_mega,
    presets::mi300x_roce, presets::mi355x_roce, presets::gaudi2_hls,  presets::baskerville});

/// @brief The names of all presets, in `cluster_presets` order.
inline constexpr auto cluster_names = [] {
    std::array<std::string_view, cluster_presets.size()> names{};
    for (std::size_t i = 0; i < cluster_presets.size(); ++i) names[i] = cluster_presets[i].name;
    return names;
}();

/// @brief The preset used when a command is given no cluster: one DGX A100 (8 x A100 on NVLink3),
/// the node of ml-engineering-networking's published nccl-tests all-reduce table.
inline constexpr std::string_view default_cluster_name = "dgx-a100";

/// @brief All presets (see `cluster_presets`).
[[nodiscard]] constexpr std::span<const cluster> all_clusters() { return cluster_presets; }

/// @brief The preset called `name` (exact, lower-case, as in CLI.md), or nullopt.
[[nodiscard]] constexpr std::optional<cluster> find_cluster(std::string_view name) {
    for (const cluster& c : cluster_presets)
        if (c.name == name) return c;
    return std::nullopt;
}

/// @brief The preset for a GPU model as CUDA / ROCm name it in nccl-tests' and rccl-tests' device
/// lines ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA GB200", "AMD Instinct MI300X"):
/// the `reference_cluster` of the accelerator the name belongs to (accelerator_for_device);
/// `default_cluster_name` (DGX A100) for a part without one and for anything unknown.
[[nodiscard]] constexpr std::string_view preset_for_gpu(std::string_view gpu) {
    const auto a = accelerator_for_device(gpu);
    return a && !a->reference_cluster.empty() ? a->reference_cluster : default_cluster_name;
}

/// @brief The preset called `name`; throws input_error naming `field`, the value and the closest
/// preset names ("did you mean ...") if there is none.
[[nodiscard]] inline cluster cluster_by_name(std::string_view name, std::string_view field = "cluster") {
    if (auto c = find_cluster(name)) return *c;
    throw unknown_name(std::string(field), name, cluster_names);
}

}  // namespace commscale
