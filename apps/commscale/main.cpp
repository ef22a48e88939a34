// commscale: command-line front end of the library. Each command is in commands/*.cpp;
// the dispatcher is cli::run (app.hpp, app.cpp). Contract: CLI.md (commands, flags, JSON keys, exit codes).
#include <iostream>

#include "app.hpp"

int main(int argc, char** argv) {
    const std::vector<std::string> all(argv + 1, argv + argc);
    return cli::run(all, std::cout, std::cerr);
}
