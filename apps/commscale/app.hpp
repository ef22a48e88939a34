#pragma once
// The CLI's dispatcher (used by main.cpp, the Python module and the CLI fuzz target): runs one
// command line, writes its output to `out` only on success, its one-line error to `err`. Defined
// in app.cpp, the one file that includes CLI11 (grammar.hpp), compiled once with the commands.
#include <ostream>
#include <string>
#include <vector>

namespace cli {

/// Prints the usage line and the list of commands.
void print_overview(std::ostream& out);

/// Runs `commscale ARGS...`; returns the exit code (0 success, 2 invalid input, 1 internal error).
int run(const std::vector<std::string>& all, std::ostream& out, std::ostream& err);

}  // namespace cli
