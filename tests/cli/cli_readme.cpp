// The README's listings cannot drift from what the commands print: every fenced block of
// README.md whose first line is `$ commscale ARGS` is run, and its output must equal the rest of
// the block (trailing spaces aside). A block whose first line is `$ commscale ARGS   # excerpt`
// must appear in the output as consecutive lines. Blocks of other kinds (sh, cpp, cmake, yaml)
// are not run. The listings run in README order in a scratch directory where `data` is the
// repository's data/, so relative paths work as from the repository root and the files a
// listing writes (`--out my-a100.json`) are there for the next one.
#include "cli_runner.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

struct listing {
    std::size_t line = 0;     // 1-based line of the command in README.md
    std::string args;         // after "$ commscale "
    bool excerpt = false;     // "# excerpt" after the command
    std::vector<std::string> expected;
};

std::string rtrim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
    return s;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) v.push_back(rtrim(l));
    while (!v.empty() && v.back().empty()) v.pop_back();
    return v;
}

fs::path repo_root() { return fs::path(COMMSCALE_TEST_DATA_DIR).parent_path().parent_path(); }

std::vector<listing> readme_listings() {
    const fs::path readme = repo_root() / "README.md";
    REQUIRE(fs::exists(readme));
    std::ifstream in(readme);
    std::vector<listing> out;
    std::string l;
    std::size_t n = 0;
    bool in_block = false, plain = false;
    listing cur;
    while (std::getline(in, l)) {
        ++n;
        l = rtrim(l);
        if (l.rfind("```", 0) == 0) {
            if (!in_block) {
                in_block = true;
                plain = l == "```";
                cur = listing{};
            } else {
                in_block = false;
                if (!cur.args.empty()) out.push_back(cur);
            }
            continue;
        }
        if (!in_block || !plain) continue;
        if (cur.line == 0 && cur.args.empty() && cur.expected.empty()) {
            const std::string prompt = "$ commscale ";
            if (l.rfind(prompt, 0) == 0) {
                cur.line = n;
                cur.args = l.substr(prompt.size());
                const auto hash = cur.args.find("   # excerpt");
                if (hash != std::string::npos) {
                    cur.excerpt = true;
                    cur.args = rtrim(cur.args.substr(0, hash));
                }
                continue;
            }
            cur.line = n;  // a plain block that is not a command listing: remembered, never run
        }
        if (!cur.args.empty()) cur.expected.push_back(l);
    }
    return out;
}

}  // namespace

TEST_CASE("README listings are what the commands print") {
    const auto listings = readme_listings();
    // The README shows at least the step, collective, sweep, fit and fit-step listings.
    REQUIRE(listings.size() >= 7);
    const fs::path work = scratch() / "readme";
    fs::create_directories(work);
    fs::create_directory_symlink(repo_root() / "data", work / "data");
    fs::current_path(work);
    for (const auto& x : listings) {
        INFO("README.md:" << x.line << ": commscale " << x.args);
        const run_result r = run(x.args);
        INFO("stderr: " << r.err);
        REQUIRE(r.rc == 0);
        const auto got = lines_of(r.out);
        if (!x.excerpt) {
            CHECK(got == x.expected);
            continue;
        }
        bool found = false;
        for (std::size_t i = 0; !found && i + x.expected.size() <= got.size(); ++i)
            found = std::equal(x.expected.begin(), x.expected.end(), got.begin() + static_cast<std::ptrdiff_t>(i));
        INFO("output:\n" << r.out);
        CHECK(found);
    }
}
