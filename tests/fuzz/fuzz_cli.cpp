// Fuzz target: the CLI argument parser and every command, through cli::run. Input: NUL- or
// newline-separated arguments. Options that write files are dropped so the fuzzer never writes.
// Any input must end with exit code 0 or 2 (invalid input): 1 (internal error) or a crash is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;
    std::vector<std::string> args;
    std::string cur;
    for (std::size_t i = 0; i < size; ++i) {
        const char c = static_cast<char>(data[i]);
        if (c == '\0' || c == '\n') {
            args.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    args.push_back(cur);
    for (const auto& a : args)
        if (a.rfind("--svg", 0) == 0 || a.rfind("--out", 0) == 0 || a == "-") return 0;
    std::ostringstream out, err;
    const int rc = cli::run(args, out, err);
    if (rc != 0 && rc != 2) std::abort();
    return 0;
}
