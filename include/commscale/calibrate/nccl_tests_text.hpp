#pragma once
/// @file calibrate/nccl_tests_text.hpp
/// @brief The nccl-tests / rccl-tests text log reader (`detail::nccl::text_reader`), used by
/// `parse_measurements` (calibrate/nccl_tests.hpp) for any input that is not JSON.
///
/// Text format facts used here come from NVIDIA/nccl-tests (src/common.cu, src/util.cu) and from
/// real logs kept under tests/data/nccl-tests/ (see ORIGIN.md there):
/// * header lines `# nThread 1 nGpus 8 minBytes 8 maxBytes ... step: 2(factor) ...`, since 2.18
///   preceded by `# nccl-tests version 2.20.0 (hash) nccl-headers=N nccl-library=N` and
///   `# Collective test starting: all_reduce_perf`;
/// * device lines `#  Rank  0 Group  0 Pid 43 on host device  0 [0x0f] NVIDIA A100-SXM4-40GB`
///   (older: no `Group`; bus id `[0x0f]`, since 2.15 `[0000:0f:00]`, rccl-tests `[0000:05:00.0]`);
/// * the column header (`size count type redop root time algbw busbw #wrong time ...`; before
///   2.13 `error` instead of `#wrong` and no `root`; `-C` prints `cputime`; `-I` adds per-iteration
///   columns `i_min i_max i_p99 i_cv%`; timestamps add a `timestamp` column printed as two tokens).
///   Columns are located by name, never by position;
/// * rows whose numbers may be printed in exponent form (`1.3e+05`), `#wrong` = `N/A`;
/// * footers `# Out of bounds values : 0 OK`, `# Avg bus bandwidth : 66.48`.
/// OpenMPI `--tag-output` prefixes (`[1,0]<stdout>:`) and Slurm `srun -l` prefixes (`0: `) are
/// removed; header lines whose leading `#` was lost in a paste are recognised by their words.
///
/// Unreadable rows inside an otherwise readable table, and rows with NaN or negative values, are
/// skipped and named in the set's warnings.

#include "nccl_tests_common.hpp"

namespace commscale {

namespace detail::nccl {

/// Removes launcher prefixes: OpenMPI `[1,0]<stdout>:` / `[job,rank]<stderr>:`, Slurm `12: `.
[[nodiscard]] inline std::string_view strip_launcher_prefix(std::string_view s) {
    std::string_view t = s;
    while (!t.empty() && is_space(t.front())) t.remove_prefix(1);
    if (!t.empty() && t.front() == '[') {
        const auto close = t.find("]<std");
        if (close != std::string_view::npos && close < 48) {
            const auto colon = t.find(':', close);
            if (colon != std::string_view::npos && colon < close + 12) {
                t.remove_prefix(colon + 1);
                return t;
            }
        }
    }
    std::size_t i = 0;
    while (i < t.size() && i < 8 && t[i] >= '0' && t[i] <= '9') ++i;
    if (i > 0 && i < t.size() && t[i] == ':' && (i + 1 == t.size() || is_space(t[i + 1]))) {
        t.remove_prefix(i + 1);
        return t;
    }
    return s;
}

/// Column positions of one results table, found from its header line.
struct block_columns {
    int time = -1, algbw = -1, busbw = -1, wrong = -1;
    int first = -1;  ///< first column of the block
    bool cputime = false;
};
struct column_layout {
    int size = -1, count = -1, type = -1, redop = -1, root = -1;
    std::vector<block_columns> blocks;  ///< in header order
    std::size_t columns = 0;
    bool first_is_in_place = false;  ///< a single block labelled "in-place" (rccl-tests -O 0)
    bool assumed = false;            ///< no header: positions assumed from the token count
    std::vector<std::string> names;  ///< column names (for messages)

    friend bool operator==(const column_layout& a, const column_layout& b) {
        return a.names == b.names && a.first_is_in_place == b.first_is_in_place;
    }
};

[[nodiscard]] inline bool is_wrong_column(std::string_view t) {
    return t == "#wrong" || iequals(t, "wrong") || iequals(t, "error") || iequals(t, "errors") || t == "#error" ||
           t == "#errors";
}

/// Builds a layout from the header tokens; nullopt unless it names size and a time or bandwidth.
[[nodiscard]] inline std::optional<column_layout> layout_from_header(const std::vector<std::string_view>& t,
                                                                     bool marker_in_place_only) {
    column_layout l;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const int idx = static_cast<int>(i);
        const std::string_view w = t[i];
        l.names.emplace_back(w);
        auto cur = [&]() -> block_columns& {
            if (l.blocks.empty()) l.blocks.push_back(block_columns{.first = idx});
            return l.blocks.back();
        };
        if (iequals(w, "size") && l.size < 0) l.size = idx;
        else if (iequals(w, "count") && l.count < 0) l.count = idx;
        else if (iequals(w, "type") && l.type < 0) l.type = idx;
        else if (iequals(w, "redop") && l.redop < 0) l.redop = idx;
        else if (iequals(w, "root") && l.root < 0) l.root = idx;
        else if (iequals(w, "time") || iequals(w, "cputime")) {
            if (l.blocks.empty() || l.blocks.back().time >= 0) l.blocks.push_back(block_columns{.first = idx});
            l.blocks.back().time = idx;
            l.blocks.back().cputime = iequals(w, "cputime");
        } else if (iequals(w, "algbw")) {
            if (!l.blocks.empty() && l.blocks.back().algbw >= 0) l.blocks.push_back(block_columns{.first = idx});
            cur().algbw = idx;
        } else if (iequals(w, "busbw")) {
            if (!l.blocks.empty() && l.blocks.back().busbw >= 0) l.blocks.push_back(block_columns{.first = idx});
            cur().busbw = idx;
        } else if (is_wrong_column(w)) {
            if (!l.blocks.empty()) l.blocks.back().wrong = idx;
        }
        // Any other name (i_min, i_max, i_p99, i_cv%, timestamp, ...) is a column we skip.
    }
    l.columns = t.size();
    if (l.size < 0 || l.blocks.empty()) return std::nullopt;
    for (const auto& b : l.blocks)
        if (b.time < 0 || b.algbw < 0 || b.busbw < 0) return std::nullopt;
    if (l.blocks.size() > 2) l.blocks.resize(2);
    l.first_is_in_place = l.blocks.size() == 1 && marker_in_place_only;
    return l;
}

/// The layout nccl-tests prints when the header is missing, chosen by the row's token count:
/// 13 = size count type redop root + 2 x (time algbw busbw #wrong); 12 = the same without root
/// (nccl-tests before 2.13); 9 and 8: one block.
[[nodiscard]] inline std::optional<column_layout> assumed_layout(std::size_t n) {
    std::vector<std::string_view> h;
    if (n == 13) h = {"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"};
    else if (n == 12) h = {"size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"};
    else if (n == 9) h = {"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"};
    else if (n == 8) h = {"size", "count", "type", "redop", "time", "algbw", "busbw", "error"};
    else return std::nullopt;
    auto l = layout_from_header(h, false);
    if (l) l->assumed = true;
    return l;
}

struct device_line {
    long long rank = 0;
    std::string pid, host, gpu;
};

/// `Rank  0 [Group  0] Pid 43 on host device  0 [busid] GPU name...` (the '#' already removed).
[[nodiscard]] inline std::optional<device_line> parse_device(const std::vector<std::string_view>& t) {
    if (t.size() < 2 || t[0] != "Rank") return std::nullopt;
    const auto rank = integer(t[1]);
    if (!rank || *rank < 0 || *rank > (1LL << 24)) return std::nullopt;
    device_line d;
    d.rank = *rank;
    std::size_t i = 2;
    for (; i < t.size(); ++i) {
        if (t[i] == "Pid" && i + 1 < t.size()) d.pid = std::string(t[i + 1]);
        if (t[i] == "on" && i + 1 < t.size()) {
            d.host = std::string(t[i + 1]);
            ++i;
        }
        if (t[i] == "device") break;
    }
    if (d.host.empty()) return std::nullopt;
    // After "device N": the bus id in brackets, then the GPU name (several words).
    for (; i < t.size(); ++i) {
        if (!t[i].empty() && t[i].front() == '[') {
            std::size_t j = i;
            while (j < t.size() && (t[j].empty() || t[j].back() != ']')) ++j;  // "[0000:05:00.0]" is one token
            for (std::size_t k = j + 1; k < t.size(); ++k) {
                if (!d.gpu.empty()) d.gpu += ' ';
                d.gpu += t[k];
            }
            break;
        }
    }
    return d;
}

/// The collective named by a `*_perf` token in a line (binary name in a command line), if any.
/// Sets `unsupported` to the name when the test exists in nccl-tests but not in commscale.
[[nodiscard]] inline std::optional<collective_op> op_in_line(const std::vector<std::string_view>& t,
                                                             std::string& unsupported) {
    for (auto w : t) {
        while (!w.empty() && (w.back() == ':' || w.back() == ',' || w.back() == '"' || w.back() == '\'' || w.back() == ';'))
            w.remove_suffix(1);
        while (!w.empty() && (w.front() == '"' || w.front() == '\'')) w.remove_prefix(1);
        if (w.size() < 6 || w.substr(w.size() - 5) != "_perf") continue;
        if (auto op = op_from_name(w)) return op;
        const auto slash = w.find_last_of('/');
        unsupported = std::string(slash == std::string_view::npos ? w : w.substr(slash + 1));
    }
    return std::nullopt;
}

/// Information met before a report's table (version lines, test name, rccl block).
struct preamble {
    std::optional<collective_op> op;       ///< from "Collective test starting: X"
    std::optional<collective_op> binary;   ///< from a `*_perf` token elsewhere
    std::string unsupported;               ///< a *_perf test commscale does not model
    std::string tool, version;
    std::string host_hint;                 ///< rccl-tests "Hostname : x"
};

struct row_entry {
    measured_row row;
    std::size_t line = 0;
    std::string type, redop, root;
    bool inplace_only = false;
};

struct report {
    std::size_t first_line = 0;
    preamble pre;
    std::string header;  ///< the nThread line (duplicates are recognised by it)
    long long nthread = 0, ngpus = 0;
    int duplicate_headers = 1;
    std::vector<device_line> devices;
    std::optional<column_layout> layout;
    std::size_t layout_line = 0;
    bool in_table = false;
    bool concluded = false;
    std::vector<row_entry> rows;
    std::vector<std::size_t> garbled, bad_values;
    std::size_t first_bad_line = 0;
    std::string first_bad_text, first_bad_expected;
    std::size_t first_bad_value_line = 0;  ///< first row skipped for its values
    std::string first_bad_value;
    std::vector<std::string> notes;  ///< warnings collected while reading
    std::vector<double> averages;
};

[[nodiscard]] inline std::string layout_text(const column_layout& l) {
    std::string s;
    for (std::size_t i = 0; i < l.names.size(); ++i) s += (i ? " " : "") + l.names[i];
    return s;
}

/// Reads one result row with `l`; nullopt when the tokens do not fit the layout.
/// `bad` receives a description when a value is NaN, infinite or negative.
[[nodiscard]] inline std::optional<row_entry> read_row(std::vector<std::string_view> t, const column_layout& l,
                                                       std::string& bad) {
    // A timestamp column prints as two tokens ("2025-06-01 12:00:00"): join them.
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        const auto a = t[i], b = t[i + 1];
        if (a.size() == 10 && a[4] == '-' && a[7] == '-' && b.size() == 8 && b[2] == ':' && b[5] == ':') {
            t.erase(t.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
    }
    while (!t.empty() && t.back() == "*") t.pop_back();  // a detached rccl-tests error marker

    column_layout in_place_only;
    const column_layout* use = &l;
    bool only_in_place = l.first_is_in_place;
    if (t.size() != l.columns) {
        // nccl-tests prints blanks for the out-of-place block when it is disabled: the row then
        // lacks the first block's columns.
        if (l.blocks.size() == 2 && l.blocks[1].first > l.blocks[0].first &&
            t.size() + static_cast<std::size_t>(l.blocks[1].first - l.blocks[0].first) == l.columns) {
            in_place_only = l;
            const int shift = l.blocks[1].first - l.blocks[0].first;
            auto sh = [&](int& c) {
                if (c >= l.blocks[1].first) c -= shift;
                else if (c >= l.blocks[0].first) c = -1;
            };
            sh(in_place_only.size), sh(in_place_only.count), sh(in_place_only.type), sh(in_place_only.redop),
                sh(in_place_only.root);
            block_columns b = l.blocks[1];
            sh(b.time), sh(b.algbw), sh(b.busbw), sh(b.wrong), sh(b.first);
            in_place_only.blocks = {b};
            in_place_only.columns = t.size();
            use = &in_place_only;
            only_in_place = true;
        } else {
            return std::nullopt;
        }
    }
    const column_layout& L = *use;
    auto at = [&](int c) -> std::string_view { return c >= 0 && static_cast<std::size_t>(c) < t.size() ? t[static_cast<std::size_t>(c)] : std::string_view{}; };
    row_entry e;
    const auto size = number(at(L.size));
    if (!size) return std::nullopt;
    e.row.bytes = bytes(*size);
    if (L.count >= 0) {
        const auto c = number(at(L.count));
        if (!c) return std::nullopt;
        e.row.count = *c;
    }
    e.type = std::string(at(L.type));
    e.redop = std::string(at(L.redop));
    e.root = std::string(at(L.root));
    if (L.type >= 0 && (e.type.empty() || number(e.type))) return std::nullopt;  // a type is a word

    struct vals {
        double time, algbw, busbw;
    };
    std::vector<vals> blocks;
    for (const auto& b : L.blocks) {
        const auto ti = number(at(b.time)), al = number(at(b.algbw)), bu = number(at(b.busbw));
        if (!ti || !al || !bu) return std::nullopt;
        blocks.push_back({*ti, *al, *bu});
        if (b.wrong >= 0) {
            const auto w = at(b.wrong);
            if (w != "N/A" && w != "n/a" && w != "-" && !number(w)) return std::nullopt;
        }
    }
    const bool two = blocks.size() == 2;
    const vals primary = blocks[0];
    e.row.time = time_as_read{primary.time};
    e.row.algbw = from_GBps(primary.algbw);
    e.row.busbw = from_GBps(primary.busbw);
    if (two || only_in_place) {
        const vals ip = two ? blocks[1] : blocks[0];
        e.row.inplace_time = time_as_read{ip.time};
        e.row.inplace_algbw = from_GBps(ip.algbw);
        e.row.inplace_busbw = from_GBps(ip.busbw);
    }
    e.inplace_only = only_in_place;

    // Plausible magnitudes: a buffer up to 1 PiB, a time up to 1e9 us (17 minutes for one
    // collective), bandwidths up to 1e7 GB/s, and no time so short that size / time exceeds
    // 1e7 GB/s (1e-300 us). Beyond them a row is corrupt, not a measurement. `bad` names the
    // column (and for two result blocks which one) and the value.
    std::string block;  // " (out-of-place column)" etc. where a row has two result blocks
    auto check = [&](std::string_view what, double v, double limit, std::string_view unit) {
        if (!bad.empty()) return;
        const std::string shown = std::string(what) + " " + detail::number_text(v);
        if (!std::isfinite(v) || v < 0) bad = shown + block;
        else if (v > limit)
            bad = shown + (block.empty() ? " (" : " (" + block.substr(2, block.size() - 3) + ", ") + "over " +
                  detail::number_text(limit) + std::string(unit) + ")";
    };
    check("size", *size, max_row_bytes, " B"), check("count", e.row.count, max_row_bytes, "");
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (blocks.size() == 2 || only_in_place)
            block = only_in_place || i == 1 ? " (in-place column)" : " (out-of-place column)";
        check("time", blocks[i].time, max_row_time_us, " us"), check("algbw", blocks[i].algbw, max_row_GBps, " GB/s"),
            check("busbw", blocks[i].busbw, max_row_GBps, " GB/s");
        if (bad.empty() && blocks[i].time == 0) bad = "time 0" + block;
        if (bad.empty() && *size / (blocks[i].time * 1e-6) > max_row_GBps * 1e9)
            bad = "time " + detail::number_text(blocks[i].time) + " us for " + detail::number_text(*size) +
                  " bytes" + (block.empty() ? " (" : " (" + block.substr(2, block.size() - 3) + ", ") + "over 1e7 GB/s)";
    }
    return e;
}

/// Wrong-element counts of a row (sum of the #wrong / error columns that hold numbers > 0).
[[nodiscard]] inline double wrong_elements(std::vector<std::string_view> t, const column_layout& l) {
    if (t.size() != l.columns) return 0;
    double sum = 0;
    for (const auto& b : l.blocks) {
        if (b.wrong < 0 || static_cast<std::size_t>(b.wrong) >= t.size()) continue;
        const auto w = t[static_cast<std::size_t>(b.wrong)];
        const auto v = number(w);
        if (v && std::isfinite(*v) && *v > 0) {
            // The pre-2.13 "error" column is a maximum relative error (1e-7 is fine for floats);
            // the #wrong column counts elements. Both are bad only above float rounding.
            if (*v >= 1e-3) sum += *v;
        }
    }
    return sum;
}

/// The nccl-tests / rccl-tests text reader. See the file comment for what it accepts.
class text_reader {
public:
    text_reader(std::string_view source, std::optional<collective_op> default_op)
        : source_(source), default_op_(default_op) {}

    [[nodiscard]] std::vector<measurement_set> read(std::string_view text) {
        std::size_t line_no = 0;
        std::size_t pos = 0;
        while (pos < text.size()) {
            std::size_t end = pos;
            while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
            ++line_no;
            line(text.substr(pos, end - pos), line_no);
            if (end >= text.size()) break;
            pos = end + ((text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ? 2 : 1);
        }
        last_line_ = std::max<std::size_t>(line_no, 1);
        return finish();
    }

private:
    std::string source_;
    std::optional<collective_op> default_op_;
    std::vector<report> reports_;
    preamble pending_;
    bool pending_any_ = false;
    std::size_t last_line_ = 0;
    std::string marker_;  ///< the last "out-of-place / in-place" line
    std::optional<collective_op> last_binary_;  ///< the binary of the last command line seen

    [[nodiscard]] std::string where(std::size_t line) const { return source_ + ":" + std::to_string(line) + ": "; }

    report* current() { return reports_.empty() ? nullptr : &reports_.back(); }

    report& start_report(std::size_t line) {
        report r;
        r.first_line = line;
        r.pre = pending_;
        // A command line names the binary once; every copy of its report that follows (one per
        // process of a binary without MPI support) ran that binary.
        if (!r.pre.binary && !r.pre.op) r.pre.binary = last_binary_;
        pending_ = preamble{};
        pending_any_ = false;
        reports_.push_back(std::move(r));
        return reports_.back();
    }

    /// Where preamble information goes: the open report while it is still in its header (no
    /// table yet), else the next report.
    preamble& pre_target() {
        report* r = current();
        if (r && r->rows.empty() && !r->concluded && !r->layout) return r->pre;
        pending_any_ = true;
        return pending_;
    }

    /// Moves what was met before a report's first header line into it.
    void adopt_pending(report& r) {
        if (!pending_any_) return;
        if (pending_.op) r.pre.op = pending_.op;
        if (pending_.binary) r.pre.binary = pending_.binary;
        if (!pending_.unsupported.empty()) r.pre.unsupported = pending_.unsupported;
        if (!pending_.tool.empty()) r.pre.tool = pending_.tool;
        if (!pending_.version.empty()) r.pre.version = pending_.version;
        if (!pending_.host_hint.empty()) r.pre.host_hint = pending_.host_hint;
        pending_ = preamble{};
        pending_any_ = false;
    }

    void line(std::string_view raw, std::size_t n) {
        // Binary data: NUL or other control bytes (tab, CR, form feed, vertical tab are text).
        for (char ch : raw) {
            const auto c = static_cast<unsigned char>(ch);
            if (is_binary_byte(c)) {
                binary_line(raw, n);
                return;
            }
        }
        std::string_view s = trim(strip_launcher_prefix(raw));
        if (s.empty()) return;
        bool hashed = false;
        while (!s.empty() && s.front() == '#') {
            hashed = true;
            s.remove_prefix(1);
        }
        s = trim(s);
        if (s.empty()) return;
        const auto t = tokens(s);

        if (contains(s, "nccl-tests version") || contains(s, "rccl-tests: Version") || contains(s, "rccl-tests version")) {
            auto& p = pre_target();
            const bool rccl = contains(s, "rccl-tests");
            p.tool = rccl ? "rccl-tests" : "nccl-tests";
            for (std::size_t i = 0; i + 1 < t.size(); ++i)
                if (iequals(t[i], "version") || iequals(t[i], "Version")) {
                    p.version = std::string(t[i + 1]);
                    break;
                }
            return;
        }
        if (const auto k = s.find(':'); k != std::string_view::npos) {
            const std::string_view key = trim(s.substr(0, k)), value = trim(s.substr(k + 1));
            if (key == "RCCL version" || key == "HIP version" || key == "ROCm version" || key == "Librccl path" ||
                key == "Hostname") {
                auto& p = pre_target();
                p.tool = "rccl-tests";
                if (key == "Hostname" && !value.empty()) p.host_hint = std::string(value);
                return;
            }
        }
        if (contains(s, "Collective test starting:")) {
            std::string unsupported;
            auto& p = pre_target();
            const auto op = op_in_line(tokens(s.substr(s.find(':') + 1)), unsupported);
            if (op) p.op = op;
            else {
                const auto name = trim(s.substr(s.find(':') + 1));
                if (!name.empty()) p.unsupported = std::string(name);
            }
            return;
        }
        if (contains(s, "Collective test concluded")) {
            if (report* r = current()) {
                r->concluded = true;
                r->in_table = false;
            }
            return;
        }
        if (!t.empty() && t[0] == "nThread") {
            header_line(s, t, n);
            return;
        }
        if (!t.empty() && t[0] == "Rank") {
            if (auto d = parse_device(t)) {
                report* r = current();
                if (!r || !r->rows.empty() || r->concluded) r = &start_report(n);
                r->devices.push_back(std::move(*d));
                return;
            }
        }
        if (contains(s, "out-of-place") || (contains(s, "in-place") && !contains(s, "size"))) {
            marker_ = std::string(s);
            return;
        }
        if (!t.empty() && iequals(t[0], "size") && t.size() >= 3) {
            if (column_header(t, n)) return;
        }
        if (!t.empty() && t[0].front() == '(') return;  // the units line "(B) (elements) (us) ..."
        if (contains(s, "Avg bus bandwidth")) {
            footer_average(s);
            return;
        }
        if (contains(s, "Out of bounds values")) {
            if (report* r = current()) {
                const auto v = s.find(':');
                const auto tv = v == std::string_view::npos ? std::vector<std::string_view>{} : tokens(s.substr(v + 1));
                const auto count = tv.empty() ? std::nullopt : number(tv[0]);
                if ((count && *count > 0) || contains(s, "FAILED"))
                    r->notes.push_back(where(n) + "the data check failed (" + excerpt(s) + "): timings kept");
            }
            return;
        }
        if (contains(s, "Errors with asterisks")) {
            pre_target().tool = "rccl-tests";
            return;
        }
        // A result row?
        if (!hashed && !t.empty() && number(t[0])) {
            data_row(s, t, n);
            return;
        }
        // Anything else: a command line naming the binary, NCCL INFO lines, notes.
        std::string unsupported;
        if (auto op = op_in_line(t, unsupported)) {
            pre_target().binary = op;
            last_binary_ = op;
        } else if (!unsupported.empty()) {
            pre_target().unsupported = unsupported;
        }
    }

    /// Control bytes that text logs never hold (tab, form feed, vertical tab and ESC of terminal
    /// colours are text; CR and LF end lines).
    [[nodiscard]] static bool is_binary_byte(unsigned char c) {
        return c == 0 || (c < 0x20 && c != '\t' && c != '\f' && c != '\v' && c != 0x1b) || c == 0x7f;
    }

    void binary_line(std::string_view raw, std::size_t n) {
        // After readable rows, a corrupted line is skipped like any garbled row.
        const bool have_rows = std::any_of(reports_.begin(), reports_.end(), [](const report& r) { return !r.rows.empty(); });
        if (have_rows) {
            report& r = reports_.back();
            if (r.in_table) r.garbled.push_back(n);
            else r.notes.push_back(where(n) + "skipped a line holding binary data");
            return;
        }
        // Find the offending byte for the message.
        std::size_t i = 0;
        while (i < raw.size()) {
            if (is_binary_byte(static_cast<unsigned char>(raw[i]))) break;
            ++i;
        }
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(i < raw.size() ? raw[i] : 0)));
        throw parse_error(source_, n, std::string("binary data (byte ") + hex + " in column " + std::to_string(i + 1) + ")",
                          std::string(accepted_formats));
    }

    void header_line(std::string_view s, const std::vector<std::string_view>& t, std::size_t n) {
        report* r = current();
        const std::string h(s);
        if (r && r->rows.empty() && !r->concluded && !r->layout && r->header == h) {
            ++r->duplicate_headers;  // the same header again: another process printing the same test
            return;
        }
        if (!r || !r->rows.empty() || r->concluded || !r->header.empty() || r->layout) r = &start_report(n);
        else adopt_pending(*r);
        r->header = h;
        for (std::size_t i = 0; i + 1 < t.size(); ++i) {
            if (t[i] == "nThread") r->nthread = integer(t[i + 1]).value_or(0);
            if (t[i] == "nGpus") r->ngpus = integer(t[i + 1]).value_or(0);
        }
    }

    bool column_header(const std::vector<std::string_view>& t, std::size_t n) {
        const bool in_place_only = contains(marker_, "in-place") && !contains(marker_, "out-of-place");
        auto l = layout_from_header(t, in_place_only);
        marker_.clear();
        if (!l) return false;
        report* r = current();
        if (r && r->rows.empty() && !r->concluded && r->layout) {
            if (*r->layout == *l) return true;  // a duplicated header line
        }
        if (!r || !r->rows.empty() || r->concluded) r = &start_report(n);
        r->layout = std::move(l);
        r->layout_line = n;
        r->in_table = true;
        return true;
    }

    void footer_average(std::string_view s) {
        report* r = current();
        if (!r) return;
        const auto k = s.find(':');
        if (k != std::string_view::npos) {
            const auto tv = tokens(s.substr(k + 1));
            if (!tv.empty())
                if (const auto v = number(tv[0]); v && std::isfinite(*v) && *v >= 0) r->averages.push_back(*v);
        }
        // With several interleaved copies of a test, rows of the others may still follow.
        if (static_cast<int>(r->averages.size()) >= r->duplicate_headers) r->in_table = false;
    }

    void data_row(std::string_view s, const std::vector<std::string_view>& t, std::size_t n) {
        report* r = current();
        if (!r || !r->in_table || !r->layout) {
            // A table pasted without its header: only rows that look exactly like nccl-tests rows.
            const auto l = assumed_layout(t.size());
            if (!l || t.size() < 3 || number(t[2])) return;
            if (!r || !r->rows.empty() || r->concluded || (r->layout && !r->in_table)) r = &start_report(n);
            r->layout = l;
            r->layout_line = n;
            r->in_table = true;
            r->notes.push_back(where(n) + "no column header before the first row: assumed the nccl-tests columns '" +
                               layout_text(*l) + "'");
        }
        std::string bad;
        auto e = read_row(t, *r->layout, bad);
        if (!e) {
            r->garbled.push_back(n);
            if (r->first_bad_line == 0) {
                r->first_bad_line = n;
                r->first_bad_text = excerpt(s);
            }
            return;
        }
        if (!bad.empty()) {
            r->bad_values.push_back(n);
            if (r->first_bad_value_line == 0) {
                r->first_bad_value_line = n;
                r->first_bad_value = bad;
            }
            r->notes.push_back(where(n) + "skipped a row with " + bad + " (NaN, infinite, negative or implausible values cannot be fitted)");
            return;
        }
        if (const double w = wrong_elements(t, *r->layout); w > 0)
            r->notes.push_back(where(n) + "the row for " + detail::number_text(in_bytes(e->row.bytes)) +
                               " bytes reports wrong results (" + detail::number_text(w) + "): timing kept");
        e->line = n;
        r->rows.push_back(std::move(*e));
    }

    [[nodiscard]] std::vector<measurement_set> finish() {
        std::vector<measurement_set> out;
        std::vector<std::size_t> out_lines;
        std::size_t reports_with_rows = 0;
        const report* first_empty_table = nullptr;
        const report* first_garbled = nullptr;
        const report* first_all_bad = nullptr;  ///< a table whose every row had unusable values
        std::string unsupported;
        for (const auto& r : reports_) {
            if (r.rows.empty()) {
                if (r.first_bad_line && !first_garbled) first_garbled = &r;
                if (r.first_bad_value_line && !first_all_bad) first_all_bad = &r;
                if (r.layout && !first_empty_table) first_empty_table = &r;
                continue;
            }
            ++reports_with_rows;
            const auto op = resolve_op(r, unsupported);
            if (!op) continue;
            for (auto& set : build(r, *op)) {
                // Deduplicate identical reports (one copy per process of a binary without MPI).
                bool dup = false;
                for (std::size_t i = 0; i < out.size(); ++i) {
                    if (out[i].op == set.op && out[i].rows == set.rows && out[i].dtype == set.dtype &&
                        out[i].redop == set.redop) {
                        out[i].warnings.push_back(
                            where(r.first_line) + "an identical copy of this report was dropped (each process of a "
                            "binary built without MPI support, run under mpirun, prints its own copy)");
                        dup = true;
                        break;
                    }
                }
                if (!dup) {
                    out.push_back(std::move(set));
                    out_lines.push_back(r.first_line);
                }
            }
        }
        if (!out.empty()) return out;
        if (reports_with_rows > 0 && !unsupported.empty())
            throw parse_error(source_, reports_.front().first_line, "a log of " + unsupported,
                              "a log of a test commscale models (all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
                              "broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf)");
        if (first_garbled) {
            const auto& l = *first_garbled->layout;
            throw parse_error(source_, first_garbled->first_bad_line, first_garbled->first_bad_text,
                              "a result row with the " + std::to_string(l.columns) + " columns of the header at line " +
                                  std::to_string(first_garbled->layout_line) + " ('" + layout_text(l) +
                                  "'); the line is truncated or garbled");
        }
        if (first_all_bad)
            throw parse_error(source_, first_all_bad->first_bad_value_line, first_all_bad->first_bad_value,
                              "result rows with finite, non-negative values of plausible size (size <= 1 PiB, "
                              "0 < time <= 1e9 us, bandwidths and size / time <= 1e7 GB/s); every row of the table at line " +
                                  std::to_string(first_all_bad->layout_line) + " has such a value");
        if (first_empty_table)
            throw parse_error(source_, last_line_, "the end of the input",
                              "result rows after the column header at line " +
                                  std::to_string(first_empty_table->layout_line) + " (the log is truncated)");
        throw parse_error(source_, last_line_, "the end of the input without a results table",
                          std::string(accepted_formats) + " with at least one result row");
    }

    [[nodiscard]] std::optional<collective_op> resolve_op(const report& r, std::string& unsupported) {
        if (r.pre.op) return r.pre.op;
        if (r.pre.binary) return r.pre.binary;
        if (!r.pre.unsupported.empty()) {
            unsupported = r.pre.unsupported;
            return std::nullopt;
        }
        if (default_op_) return default_op_;
        if (auto op = op_in_source_name(source_)) return op;
        throw parse_error(source_, r.layout_line ? r.layout_line : r.first_line, "a results table that does not name its collective",
                          "a '# Collective test starting: <test>_perf' line or the binary name in the log, a file name "
                          "naming the collective, or the op given explicitly (--op)");
    }

    /// One set per (type, redop, root) and per interleaved copy of the report.
    [[nodiscard]] std::vector<measurement_set> build(const report& r, collective_op op) const {
        // Partition rows: a size seen again in the same partition starts another copy.
        struct copy {
            std::vector<const row_entry*> rows;
            std::set<double> sizes;
        };
        struct part {
            std::string type, redop, root;
            std::vector<copy> copies;
        };
        std::vector<part> parts;
        for (const auto& e : r.rows) {
            part* p = nullptr;
            for (auto& q : parts)
                if (q.type == e.type && q.redop == e.redop && q.root == e.root) p = &q;
            if (!p) {
                parts.push_back(part{e.type, e.redop, e.root, {}});
                p = &parts.back();
            }
            bool placed = false;
            for (auto& c : p->copies) {
                if (c.sizes.insert(in_bytes(e.row.bytes)).second) {
                    c.rows.push_back(&e);
                    placed = true;
                    break;
                }
            }
            if (!placed) p->copies.push_back(copy{{&e}, {in_bytes(e.row.bytes)}});
        }

        // Devices: ranks, hosts, GPU model.
        std::vector<long long> ids;
        long long max_id = -1;
        bool duplicate_ids = false;
        std::vector<std::string> hosts, gpus;
        for (const auto& d : r.devices) {
            if (std::find(ids.begin(), ids.end(), d.rank) != ids.end()) {
                duplicate_ids = true;
                continue;  // a second process claiming the same rank: independent runs
            }
            ids.push_back(d.rank);
            max_id = std::max(max_id, d.rank);
            if (std::find(hosts.begin(), hosts.end(), d.host) == hosts.end()) hosts.push_back(d.host);
            if (!d.gpu.empty() && std::find(gpus.begin(), gpus.end(), d.gpu) == gpus.end()) gpus.push_back(d.gpu);
        }
        std::vector<std::string> all_hosts;
        for (const auto& d : r.devices)
            if (std::find(all_hosts.begin(), all_hosts.end(), d.host) == all_hosts.end()) all_hosts.push_back(d.host);
        const bool independent = duplicate_ids || r.duplicate_headers > 1;

        std::vector<measurement_set> sets;
        std::size_t copies_total = 0;
        for (const auto& p : parts) copies_total += p.copies.size();
        for (const auto& p : parts) {
            for (std::size_t ci = 0; ci < p.copies.size(); ++ci) {
                measurement_set m;
                m.op = op;
                m.tool = r.pre.tool.empty() ? "nccl-tests" : r.pre.tool;
                m.version = r.pre.version;
                m.dtype = p.type;
                m.redop = p.redop;
                bool inplace_only = false;
                for (const auto* e : p.copies[ci].rows) {
                    m.rows.push_back(e->row);
                    inplace_only = inplace_only || e->inplace_only;
                }
                std::stable_sort(m.rows.begin(), m.rows.end(), [](const measured_row& a, const measured_row& b) { return a.bytes < b.bytes; });
                m.warnings = r.notes;
                if (r.pre.op && r.pre.binary && *r.pre.op != *r.pre.binary)
                    m.warnings.push_back(where(r.first_line) + "the log names two tests; used the one in 'Collective test starting'");
                if (default_op_ && *default_op_ != op)
                    m.warnings.push_back(where(r.first_line) + "the log measures " + std::string(nccl_tests_binary(op)) +
                                         "; the requested " + std::string(to_string(*default_op_)) + " was not used");
                if (!r.garbled.empty())
                    m.warnings.push_back(source_ + ": skipped " + std::to_string(r.garbled.size()) +
                                         " unreadable row(s) (truncated or garbled) at line(s) " + line_list(r.garbled));
                for (const auto& b : r.layout->blocks)
                    if (b.cputime) {
                        m.warnings.push_back(where(r.layout_line) + "times are CPU wall-clock times (nccl-tests -C), not GPU times");
                        break;
                    }
                if (inplace_only)
                    m.warnings.push_back(where(r.layout_line) + "the log holds in-place results only (-O 0): the primary columns are the in-place ones");
                if (parts.size() == 1 && ci < r.averages.size()) m.avg_busbw = from_GBps(r.averages[ci]);

                // Ranks: device lines (the highest rank id + 1 also covers device lists that were
                // trimmed or cut at nccl-tests' 2048-byte line buffer), else busbw/algbw.
                const int from_factor = ranks_from_bus_factor(op, m.rows);
                if (!ids.empty()) {
                    const long long n = std::max<long long>(static_cast<long long>(ids.size()), max_id + 1);
                    m.ranks = static_cast<int>(std::min<long long>(n, 1LL << 24));
                    if (from_factor > 0 && from_factor != m.ranks && !independent)
                        m.warnings.push_back(where(r.first_line) + "busbw/algbw implies " + std::to_string(from_factor) +
                                             " ranks but the device lines list " + std::to_string(m.ranks) + ": used " +
                                             std::to_string(m.ranks));
                    m.hosts = hosts;
                } else if (from_factor > 0) {
                    m.ranks = from_factor;
                    m.warnings.push_back(where(r.first_line) + "no device lines: " + std::to_string(m.ranks) +
                                         " ranks inferred from busbw/algbw");
                } else if (r.nthread > 0 && r.ngpus > 0) {
                    m.ranks = static_cast<int>(std::min<long long>(r.nthread * r.ngpus, 1LL << 24));
                    m.warnings.push_back(where(r.first_line) + "no device lines: assumed " + std::to_string(m.ranks) +
                                         " ranks (nThread x nGpus of one process)");
                } else {
                    m.warnings.push_back(where(r.first_line) + "no device lines: the number of ranks is unknown");
                }
                if (m.hosts.empty() && !r.pre.host_hint.empty()) m.hosts.push_back(r.pre.host_hint);
                m.nodes = static_cast<int>(m.hosts.size());
                if (!gpus.empty()) {
                    for (std::size_t i = 0; i < gpus.size(); ++i) m.gpu += (i ? ", " : "") + gpus[i];
                    if (gpus.size() > 1) m.warnings.push_back(where(r.first_line) + "the ranks use different GPU models: " + m.gpu);
                }
                if (independent) {
                    std::string hs;
                    for (std::size_t i = 0; i < all_hosts.size(); ++i) hs += (i ? ", " : "") + all_hosts[i];
                    m.warnings.push_back(where(r.first_line) +
                                         "several processes each ran this test alone (repeated headers or rank ids; a binary "
                                         "built without MPI support run under mpirun?): ranks " + std::to_string(m.ranks) +
                                         " per process" + (hs.empty() ? std::string() : ", hosts " + hs));
                }
                if (copies_total > 1 && p.copies.size() > 1)
                    m.warnings.push_back(where(r.first_line) + "copy " + std::to_string(ci + 1) + " of " +
                                         std::to_string(p.copies.size()) + " interleaved copies of this table");
                check_consistency(m);
                sets.push_back(std::move(m));
            }
        }
        return sets;
    }

    /// Warns when algbw is not size / time (a sign of misread columns). nccl-tests computes
    /// algbw = size / time (doc/PERFORMANCE.md); printed values carry 2 decimals, 3-4 digits.
    void check_consistency(measurement_set& m) const {
        std::size_t off = 0;
        for (const auto& r : m.rows) {
            const double time_us = in_us(r.time);
            if (time_us <= 0) continue;
            const double expect = in_bytes(r.bytes) / time_us / 1e3;
            if (std::fabs(expect - in_GBps(r.algbw)) > 0.02 * expect + 0.011) ++off;
        }
        if (off > 0)
            m.warnings.push_back(source_ + ": algbw differs from size/time on " + std::to_string(off) + " of " +
                                 std::to_string(m.rows.size()) + " rows (columns misread, or a modified log?)");
    }
};

}  // namespace detail::nccl

}  // namespace commscale
