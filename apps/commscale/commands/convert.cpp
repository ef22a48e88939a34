// `commscale convert VALUE UNIT`: unit conversion, e.g. `convert 400Gbps GB/s` prints 50.
#include <fmt/format.h>

#include "../cli.hpp"

namespace {
// Named inside the anonymous namespace so that the commands compile as one unity translation unit.
namespace convert_command {
cli::registrar reg{cli::command{
    "convert",
    "convert a quantity to another unit of the same kind (convert 400Gbps GB/s -> 50)",
    "usage: commscale convert VALUE UNIT [--json]\n"
    "  VALUE  a quantity with its unit: 400Gbps, 1.32GiB, 450GB/s, 0.6us, 312TFLOPS\n"
    "  UNIT   the target unit of the same kind: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, GB/s, GBps,\n"
    "         Gbps, Tbps, ns, us, ms, s, TFLOP, TFLOPS\n"
    "A value of another kind than the unit (a rate converted to a size) is an error.",
    {},
    [](const cli::args& a, std::ostream& out) {
        const double v = commscale::convert(a.positional[0], a.positional[1]);
        if (a.flag("json")) {
            cli::print_json(out, {{"value", a.positional[0]}, {"unit", a.positional[1]}, {"result", v}});
        } else {
            out << fmt::format("{:.10g}", v) << "\n";
        }
        return 0;
    },
    2, 2}};
}  // namespace convert_command
}  // namespace
