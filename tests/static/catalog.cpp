// Compile-time checks of the interconnect catalog: every figure is a constant expression and
// matches the vendors' published numbers (compiled, never run).
#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/links.hpp>

namespace {
using namespace commscale;
using namespace commscale::literals;

// NVLink per-GPU complements, per direction (NVIDIA V100/A100/H100 whitepapers, B200 datasheet).
static_assert(nvlink<2>.per_direction == 150_GBps);
static_assert(nvlink<3>.per_direction == 300_GBps);
static_assert(nvlink<4>.per_direction == 450_GBps);
static_assert(nvlink<5>.per_direction == 900_GBps);
static_assert(nvlink<4>.duplex().both_directions == 900_GBps);
static_assert(nvlink_bundle<3, 12>.name == "nvlink3");
static_assert(nvlink_bundle<4, 2>.name == "nvlink4-nv2");
static_assert(nvlink_bundle<4, 2>.per_direction == 50_GBps);

// Names follow CLI.md.
static_assert(pcie<5, 16>.name == "pcie5-x16");
static_assert(pcie<7, 1>.name == "pcie7-x1");
static_assert(infiniband<ib_rate::ndr, 4>.name == "ib-ndr-4x");
static_assert(infiniband<ib_rate::gdr, 12>.name == "ib-gdr-12x");

// InfiniBand NDR 4x = 400 Gbit/s; GDR 8x = 3200 Gbit/s (IBTA roadmap).
static_assert(infiniband<ib_rate::ndr, 4>.per_direction == 400_Gbps);
static_assert(infiniband<ib_rate::gdr, 8>.per_direction == 3200_Gbps);
static_assert(infiniband<ib_rate::hdr, 4>.latency.has_value());
static_assert(!infiniband<ib_rate::ndr, 4>.latency.has_value());

// Runtime lookup yields the same constexpr values.
static_assert(find_link("nvlink4")->per_direction == nvlink<4>.per_direction);
static_assert(find_link("nvlink3-nv12")->links == 12);
static_assert(find_link("ib-hdr-4x")->per_direction == infiniband<ib_rate::hdr, 4>.per_direction);
static_assert(!find_link("nvlink9").has_value());
static_assert(all_links().size() == link_names.size());

// Accelerators: dense peaks (vendors' sparse figures halved), and every scale-up link resolves.
static_assert(h100_sxm.peak(dtype::fp8) == 1979_TFLOPS);
static_assert(a100_80gb_sxm.peak(dtype::bf16) == 312_TFLOPS);
static_assert(!a100_80gb_sxm.peak(dtype::fp8).has_value());
static_assert(find_accelerator("mi300x")->memory == 192_GiB);
static_assert(find_link(find_accelerator("a800-80gb-sxm")->scale_up_link)->per_direction == 200_GBps);
static_assert([] {
    for (const accelerator& a : all_accelerators())
        if (!find_link(a.scale_up_link) || !(a.compute_efficiency > 0.0 && a.compute_efficiency <= 1.0)) return false;
    return true;
}());

// Spellings outside the catalog do not name a link.
template <int G>
concept has_nvlink = requires { nvlink<G>; };
static_assert(has_nvlink<4> && !has_nvlink<9> && !has_nvlink<1>);
template <int G, int W>
concept has_pcie = requires { pcie<G, W>; };
static_assert(has_pcie<5, 16> && !has_pcie<3, 16> && !has_pcie<5, 3>);
}  // namespace
