// `commscale accelerators` and `commscale accelerator NAME`: the accelerator catalog (CLI.md "Catalog").
#include <commscale/hardware/accelerators.hpp>
#include <commscale/io/catalog_json.hpp>
#include <commscale/io/hardware_json.hpp>

#include "../cli.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace accelerators_command {

std::string peak_text(const commscale::accelerator& a, commscale::dtype d) {
    const auto p = a.peak(d);
    return p ? cli::num(commscale::in_tflops(*p), 1) : std::string("-");
}

std::vector<std::string> row(const commscale::accelerator& a) {
    using namespace commscale;
    return {std::string(a.name),
            cli::num(in_bytes(a.memory) / gibi, 1),
            cli::num(in_GBps(a.memory_bandwidth), 1),
            peak_text(a, dtype::fp32),
            peak_text(a, dtype::tf32),
            peak_text(a, dtype::bf16),
            peak_text(a, dtype::fp16),
            peak_text(a, dtype::fp8),
            peak_text(a, dtype::mxfp8),
            peak_text(a, dtype::nvfp4),
            peak_text(a, dtype::fp4),
            a.power ? cli::num(*a.power, 0) : std::string("-"),
            cli::num(a.compute_efficiency, 3) + (a.compute_efficiency_basis == efficiency_basis::assumed  ? " a"
                                                 : a.compute_efficiency_basis == efficiency_basis::fitted ? " f"
                                                                                                          : ""),
            std::string(a.scale_up_link)};
}

const std::vector<std::string> header = {"name", "memory GiB", "mem GB/s", "fp32", "tf32", "bf16", "fp16", "fp8",
                                         "mxfp8", "nvfp4", "fp4", "power W", "gemm eff", "scale-up link"};

cli::registrar reg_accelerators{cli::command{
    "accelerators",
    "list the accelerator catalog (dense peak TFLOPS per dtype, memory, scale-up link)",
    "usage: commscale accelerators [--json]\n"
    "Peaks are dense TFLOPS (vendors' sparsity figures halved); '-' / null where unsupported.\n"
    "JSON: {\"accelerators\": [{name, memory_GiB, memory_bandwidth_GBps, peak_tflops: {fp32, tf32, bf16, fp16, fp8},\n"
    "       scale_up_link, compute_efficiency, compute_efficiency_basis (measured|assumed|fitted), source, ...}]}",
    {},
    [](const cli::args& a, std::ostream& out) {
        using namespace commscale;
        if (a.flag("json")) {
            cli::print_json(out, io::accelerators_catalog_json());
        } else {
            std::vector<std::vector<std::string>> rows;
            for (const accelerator& x : all_accelerators()) rows.push_back(row(x));
            out << "dense peak TFLOPS; gemm eff = achievable fraction of the bf16 peak on large matmuls, measured\n"
                   "(a: assumed, no measurement; f: fitted to published runs, commscale fit-compute)\n";
            cli::print_table(out, header, rows);
        }
        return 0;
    },
    0, 0}};

cli::registrar reg_accelerator{cli::command{
    "accelerator",
    "show one catalog accelerator (commscale accelerator h100-sxm)",
    "usage: commscale accelerator NAME [--json]\n"
    "NAME: a catalog accelerator (`commscale accelerators` lists them).\n"
    "JSON: {name, memory_GiB, memory_bandwidth_GBps, peak_tflops: {fp32, tf32, bf16, fp16, fp8, mxfp8, nvfp4, fp4},\n"
    "       scale_up_link, power_W, source, ...}",
    {},
    [](const cli::args& a, std::ostream& out) {
        using namespace commscale;
        const accelerator x = accelerator_by_name(a.positional[0], "accelerator");
        if (a.flag("json")) {
            cli::print_json(out, accelerator_to_json(x));
        } else {
            out << "name              " << x.name << " (" << x.display_name << ")\n"
                << "memory            " << cli::num(in_bytes(x.memory) / gibi, 1) << " GiB, "
                << cli::num(in_GBps(x.memory_bandwidth), 1) << " GB/s\n"
                << "dense peak TFLOPS ";
            for (std::size_t i = 0; i < dtype_count; ++i) {
                const auto d = static_cast<dtype>(i);
                out << (i ? ", " : "") << to_string(d) << " " << peak_text(x, d);
            }
            out << "\n"
                << "gemm efficiency   " << cli::num(x.compute_efficiency, 3) << " of the bf16 peak ("
                << (x.compute_efficiency_basis == efficiency_basis::measured ? "measured"
                    : x.compute_efficiency_basis == efficiency_basis::fitted ? "fitted to published runs"
                                                                             : "assumed: no measurement")
                << ")\n"
                << "scale-up link     " << x.scale_up_link << "\n"
                << "power             " << (x.power ? cli::num(*x.power, 0) + " W" : std::string("not published")) << "\n"
                << "source            " << x.source << "\n";
        }
        return 0;
    },
    1, 1}};

}  // namespace accelerators_command
}  // namespace
