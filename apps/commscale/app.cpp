// The CLI's dispatcher (app.hpp): finds the command, parses its options with the grammar
// (CLI11, grammar.hpp), runs it, and turns exceptions into the CLI's exit codes and messages.
#include "app.hpp"

#include <algorithm>
#include <exception>
#include <sstream>

#include "cli.hpp"
#include "grammar.hpp"
#include <commscale/version.hpp>

namespace cli {

void print_overview(std::ostream& out) {
    out << "commscale " << COMMSCALE_VERSION_STRING
        << " - analytical model of distributed training on GPU clusters\n\n"
           "usage: commscale COMMAND [options] [--json] [--help]\n\ncommands:\n";
    auto cmds = registry();
    std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const auto& c : cmds)
        out << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ') << c.summary << "\n";
    out << "\nValues: sizes in bytes with B, KB..TB or KiB..TiB; rates GB/s, GBps, Gbps, Tbps; times ns, us, ms, s.\n"
           "Exit codes: 0 success, 2 invalid input, 1 internal error.\n";
}

int run(const std::vector<std::string>& all, std::ostream& out, std::ostream& err) {
    try {
        if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
            print_overview(all.empty() ? err : out);
            return all.empty() ? 2 : 0;
        }
        if (all[0] == "--version") {
            out << COMMSCALE_VERSION_STRING << "\n";
            return 0;
        }
        const auto& reg = registry();
        auto it = std::find_if(reg.begin(), reg.end(), [&](const auto& c) { return c.name == all[0]; });
        if (it == reg.end()) {
            std::vector<std::string> names;
            for (const auto& c : reg) names.push_back(c.name);
            throw commscale::unknown_name("command", all[0], names);
        }
        const args a = parse_args(*it, all);
        if (a.flag("help")) {
            out << help_text(*it);
            return 0;
        }
        // A captured JSON document (the Python module) bypasses the output: nothing to buffer.
        if (json_capture()) return it->run(a, out);
        // Buffer the output so an error midway never leaves partial output.
        std::ostringstream buf;
        const int rc = it->run(a, buf);
        out << buf.str();
        out.flush();
        return rc;
    } catch (...) {
        const failure f = current_failure();
        err << f.message << "\n";
        return f.invalid_input ? 2 : 1;
    }
}

}  // namespace cli
