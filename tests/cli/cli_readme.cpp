// The listings of the README and of docs/*.md cannot drift from what the commands print: every
// fenced block of README.md and of docs/*.md whose first line is `$ commscale ARGS` is run, and
// its output must equal the rest of the block (trailing spaces aside). A block whose first line is
// `$ commscale ARGS   # excerpt` must appear in the output as consecutive lines. In a `sh` block,
// every line `commscale ARGS` (a `# comment` after it aside) is run and must exit 0. Blocks of
// other kinds (cpp, cmake, yaml, python: tests/python runs those) are not run. The listings run
// in order, README.md first, then docs/*.md by name, in a scratch directory where `data` is the
// repository's data/ and `docs/img` an empty directory, so relative paths work as from the
// repository root and the files a listing writes (`--out my-a100.json`) are there for the next one.
#include "cli_runner.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

struct listing {
    std::string file;         // README.md or docs/NAME.md
    std::size_t line = 0;     // 1-based line of the command in the file
    std::string args;         // after "$ commscale "
    bool excerpt = false;     // "# excerpt" after the command
    bool exit_only = false;   // a line of a `sh` block: must exit 0, output not compared
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

void file_listings(const fs::path& path, const std::string& name, std::vector<listing>& out) {
    std::ifstream in(path);
    std::string l;
    std::size_t n = 0;
    bool in_block = false, plain = false, sh = false;
    listing cur;
    while (std::getline(in, l)) {
        ++n;
        l = rtrim(l);
        if (l.rfind("```", 0) == 0) {
            if (!in_block) {
                in_block = true;
                plain = l == "```";
                sh = l == "```sh";
                cur = listing{};
                cur.file = name;
            } else {
                in_block = false;
                if (!cur.args.empty()) out.push_back(cur);
            }
            continue;
        }
        if (in_block && sh && l.rfind("commscale ", 0) == 0) {
            listing cmd;
            cmd.file = name;
            cmd.line = n;
            cmd.args = l.substr(std::string("commscale ").size());
            cmd.exit_only = true;
            const auto hash = cmd.args.find(" #");
            if (hash != std::string::npos) cmd.args = rtrim(cmd.args.substr(0, hash));
            out.push_back(cmd);
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
}

/// The listings of README.md, then of docs/*.md by name.
std::vector<listing> readme_listings() {
    const fs::path readme = repo_root() / "README.md";
    REQUIRE(fs::exists(readme));
    std::vector<listing> out;
    file_listings(readme, "README.md", out);
    std::vector<fs::path> docs;
    for (const auto& e : fs::directory_iterator(repo_root() / "docs"))
        if (e.is_regular_file() && e.path().extension() == ".md") docs.push_back(e.path());
    std::sort(docs.begin(), docs.end());
    REQUIRE(!docs.empty());
    for (const fs::path& d : docs) file_listings(d, "docs/" + d.filename().string(), out);
    return out;
}

}  // namespace

TEST_CASE("README listings are what the commands print") {
    const auto listings = readme_listings();
    // The README and docs/ show at least the step, collective, sweep, fit and fit-step listings.
    REQUIRE(listings.size() >= 7);
    const fs::path work = scratch() / "readme";
    fs::create_directories(work / "docs" / "img");
    fs::create_directory_symlink(repo_root() / "data", work / "data");
    fs::current_path(work);
    for (const auto& x : listings) {
        INFO(x.file << ":" << x.line << ": commscale " << x.args);
        const run_result r = run(x.args);
        INFO("stderr: " << r.err);
        REQUIRE(r.rc == 0);
        if (x.exit_only) continue;
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
