// The one harness the CLI tests share: runs the built `commscale` binary (COMMSCALE_CLI_PATH) the
// way a script would, with stdout and stderr captured apart, and checks the CLI.md contract for
// invalid input (exit 2, nothing on stdout, one line on stderr naming the option or JSON field).
#pragma once

#include "catch_shim.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

namespace cli_test {

namespace fs = std::filesystem;

struct run_result {
    int rc = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A scratch directory for this test process (named after the process id so that ctest -j runs
/// do not share one), removed when the process exits.
inline const fs::path& scratch() {
    struct scratch_dir {
        fs::path path;
        scratch_dir() : path(fs::temp_directory_path() / ("commscale_cli_test_" + std::to_string(::getpid()))) {
            fs::remove_all(path);
            fs::create_directories(path);
        }
        scratch_dir(const scratch_dir&) = delete;
        scratch_dir& operator=(const scratch_dir&) = delete;
        ~scratch_dir() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    };
    static const scratch_dir dir;
    return dir.path;
}

/// Writes `content` to scratch()/name and returns the path.
inline fs::path write(const std::string& name, const std::string& content) {
    const fs::path p = scratch() / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
}

/// The path in double quotes, for a shell word.
inline std::string q(const fs::path& p) { return "\"" + p.string() + "\""; }

inline std::size_t count_lines(const std::string& s) {
    return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

/// Runs `commscale ARGS` (shell words, already quoted where needed) with stdin from `stdin_file`.
inline run_result run(const std::string& args, const std::string& stdin_file = "/dev/null") {
    REQUIRE(fs::exists(COMMSCALE_CLI_PATH));
    static int n = 0;
    const fs::path out = scratch() / ("stdout" + std::to_string(n) + ".txt");
    const fs::path err = scratch() / ("stderr" + std::to_string(n++) + ".txt");
    const std::string cmd =
        q(COMMSCALE_CLI_PATH) + " " + args + " <" + q(stdin_file) + " >" + q(out) + " 2>" + q(err);
    const int status = std::system(cmd.c_str());
    run_result r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

/// Runs a command that must succeed with --json added and returns the document.
inline nlohmann::json run_json(const std::string& args) {
    const run_result r = run(args + " --json");
    INFO("commscale " << args << " --json\nstderr: " << r.err);
    REQUIRE(r.rc == 0);
    return nlohmann::json::parse(r.out);
}

/// The contract for invalid input: exit 2, no stdout, exactly one stderr line that starts with
/// "commscale: " and contains `field` (the option, JSON field or suggestion expected).
inline void require_invalid(const std::string& args, const std::string& field) {
    INFO("commscale " << args);
    const run_result r = run(args);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.rfind("commscale: ", 0) == 0);
    CHECK(r.err.find(field) != std::string::npos);
    CHECK(r.err.find("internal error") == std::string::npos);
}

inline std::set<std::string> keys(const nlohmann::json& j) {
    std::set<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
    return k;
}

/// Minimal XML well-formedness check: every element opened is closed in order, attributes quoted,
/// one root element.
inline bool well_formed_xml(const std::string& s, std::string& why) {
    std::vector<std::string> stack;
    int roots = 0;
    std::size_t i = 0;
    while ((i = s.find('<', i)) != std::string::npos) {
        const std::size_t end = s.find('>', i);
        if (end == std::string::npos) return why = "unterminated tag", false;
        const std::string tag = s.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.empty()) return why = "empty tag", false;
        if (tag[0] == '?' || tag[0] == '!') continue;
        if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return why = "unbalanced quotes in <" + tag + ">", false;
        if (tag[0] == '/') {
            const std::string name = tag.substr(1);
            if (stack.empty() || stack.back() != name) return why = "mismatched </" + name + ">", false;
            stack.pop_back();
            continue;
        }
        const std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
        if (stack.empty()) ++roots;
        if (tag.back() != '/') stack.push_back(name);
    }
    if (!stack.empty()) return why = "unclosed <" + stack.back() + ">", false;
    if (roots != 1) return why = std::to_string(roots) + " root elements", false;
    return true;
}


}  // namespace cli_test
