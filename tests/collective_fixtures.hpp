#pragma once
// Test topologies built from struct link fields, with the vendors' per-direction figures.

#include <optional>
#include <string_view>

#include <commscale/collective/model.hpp>

namespace collective_test {

using namespace commscale;

inline commscale::link make_link(std::string_view name, link_family family, link_kind kind, byte_rate per_direction,
                                 std::optional<duration> latency = std::nullopt) {
    return commscale::link{.name = name, .family = family, .kind = kind, .rdma = kind == link_kind::scale_out,
                           .per_direction = per_direction, .lanes = 1, .links = 1, .per_lane = per_direction,
                           .encoding = line_encoding::none, .latency = latency, .source = "test"};
}

// NVLink 3: 12 links x 25 GB/s = 300 GB/s per direction (A100); NVLink 4: 18 x 25 = 450 (H100).
inline commscale::link nvlink3() { return make_link("nvlink3", link_family::nvlink, link_kind::scale_up, 300.0_GBps); }
inline commscale::link nvlink4() { return make_link("nvlink4", link_family::nvlink, link_kind::scale_up, 450.0_GBps); }
// InfiniBand HDR 4x = 200 Gbps (25 GB/s), port latency 0.6 us; NDR 4x = 400 Gbps (50 GB/s).
inline commscale::link ib_hdr() {
    return make_link("ib-hdr-4x", link_family::infiniband, link_kind::scale_out, 200.0_Gbps, 0.6_us);
}
inline commscale::link ib_ndr() { return make_link("ib-ndr-4x", link_family::infiniband, link_kind::scale_out, 400.0_Gbps); }

// DGX A100: 8 x A100 on NVSwitch (NVLink 3), 8 x ConnectX-6 HDR 200 Gbps (one per GPU).
inline cluster dgx_a100(int nodes = 1) {
    cluster c;
    c.name = "dgx-a100";
    c.nodes = nodes;
    c.node = node_spec{.gpus = 8, .accelerator = "a100-80gb-sxm", .intra = nvlink3(), .fabric = intra_fabric::switched,
                       .in_switch_reduction = false, .pcie_p2p = true, .inter = ib_hdr(), .nics = 8,
                       .gpudirect_rdma = true};
    return c;
}

// DGX H100: 8 x H100 on NVSwitch (NVLink 4, NVLS), 8 x ConnectX-7 400 Gbps.
inline cluster dgx_h100(int nodes = 1) {
    cluster c;
    c.name = "dgx-h100";
    c.nodes = nodes;
    c.node = node_spec{.gpus = 8, .accelerator = "h100-sxm", .intra = nvlink4(), .fabric = intra_fabric::switched,
                       .in_switch_reduction = true, .pcie_p2p = true, .inter = ib_ndr(), .nics = 8,
                       .gpudirect_rdma = true};
    return c;
}

// Baskerville (impact-of-gpu-networking-part2, appendix A): 4 x A100 on an HGX 4-GPU board
// (NVLink 3 point-to-point: 4 links between each pair, 12 per GPU), one HDR 200 Gbps NIC per node
// on a CPU root port, so NIC traffic is host-staged (as the preset: no GPUDirect RDMA path).
inline cluster baskerville(int nodes = 4) {
    cluster c;
    c.name = "baskerville";
    c.nodes = nodes;
    c.node = node_spec{.gpus = 4, .accelerator = "a100-40gb-sxm", .intra = nvlink3(), .fabric = intra_fabric::mesh,
                       .in_switch_reduction = false, .pcie_p2p = true, .inter = ib_hdr(), .nics = 1,
                       .gpudirect_rdma = false};
    return c;
}

}  // namespace collective_test
