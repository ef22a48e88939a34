// commscale: command-line front end of the library. Each command is in commands/*.cpp.
#include <algorithm>
#include <exception>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include <commscale/version.hpp>

namespace {

void print_overview(std::ostream& out) {
    out << "commscale " << COMMSCALE_VERSION_STRING
        << " - analytical model of distributed training on GPU clusters\n\n"
           "usage: commscale COMMAND [options] [--json] [--help]\n\ncommands:\n";
    auto cmds = cli::registry();
    std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const auto& c : cmds) {
        out << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ') << c.summary << "\n";
    }
    out << "\nValues: sizes in bytes with B, KB..TB or KiB..TiB; rates GB/s, GBps, Gbps, Tbps; times ns, us, ms, s.\n"
           "Exit codes: 0 success, 2 invalid input, 1 internal error.\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> all(argv + 1, argv + argc);
    try {
        if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
            print_overview(std::cout);
            return all.empty() ? 2 : 0;
        }
        if (all[0] == "--version") {
            std::cout << COMMSCALE_VERSION_STRING << "\n";
            return 0;
        }
        const auto& reg = cli::registry();
        auto it = std::find_if(reg.begin(), reg.end(), [&](const auto& c) { return c.name == all[0]; });
        if (it == reg.end()) {
            std::vector<std::string> names;
            for (const auto& c : reg) names.push_back(c.name);
            throw commscale::unknown_name("command", all[0], names);
        }
        const std::vector<std::string> rest(all.begin() + 1, all.end());
        const cli::args a = cli::parse_args(*it, rest);
        if (a.flag("help")) {
            std::cout << it->usage << "\n";
            return 0;
        }
        // Buffer the output so an error midway never leaves partial output on stdout.
        std::ostringstream out;
        const int rc = it->run(a, out);
        std::cout << out.str();
        std::cout.flush();
        return rc;
    } catch (const commscale::input_error& e) {
        std::cerr << "commscale: " << e.what() << "\n";
        return 2;
    } catch (const nlohmann::json::exception& e) {
        std::cerr << "commscale: invalid JSON: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "commscale: internal error: " << e.what() << "\n";
        return 1;
    }
}
