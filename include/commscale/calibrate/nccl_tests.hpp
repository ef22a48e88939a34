#pragma once
/// @file calibrate/nccl_tests.hpp
/// @brief Readers for measured collective timings: nccl-tests / rccl-tests text logs (every
/// format since nccl-tests 2.0), nccl-tests JSON (`-J`), and the commscale probe's JSON.
/// `parse_measurements` detects the format and returns one `measurement_set` per report.
///
/// Errors: empty input, binary data, a log without any result row, a JSON syntax error throw
/// `commscale::parse_error(source, line, value, expected)` with the 1-based line. Unreadable rows
/// inside an otherwise readable table, and rows with NaN or negative values, are skipped and named
/// in the set's warnings.
///
/// The readers live one per format: calibrate/nccl_tests_text.hpp (text logs),
/// calibrate/nccl_tests_json.hpp (nccl-tests JSON), calibrate/probe_json.hpp (probe JSON), with
/// the shared pieces in calibrate/nccl_tests_common.hpp; this header detects the format.

#include <cstddef>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../error.hpp"
#include "../io/file.hpp"
#include "measurements.hpp"
#include "nccl_tests_common.hpp"
#include "nccl_tests_json.hpp"
#include "nccl_tests_text.hpp"
#include "probe_json.hpp"

namespace commscale {

namespace detail::nccl {

/// Deepest bracket nesting of a JSON text (outside strings); guards the parser against inputs
/// built to exhaust the stack.
[[nodiscard]] inline std::size_t json_depth(std::string_view s, std::size_t& where) {
    std::size_t depth = 0, max = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '{' || c == '[') {
            if (++depth > max) {
                max = depth;
                where = i;
            }
        } else if ((c == '}' || c == ']') && depth > 0) --depth;
    }
    return max;
}

[[nodiscard]] inline std::vector<measurement_set> read_json(std::string_view text, const std::string& source,
                                                            std::optional<collective_op> default_op) {
    std::size_t deep_at = 0;
    if (json_depth(text, deep_at) > 64)
        throw parse_error(source, line_of(text, deep_at), "JSON nested more than 64 levels deep", std::string(accepted_formats));
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
        throw parse_error(source, line_of(text, byte), "invalid JSON (" + std::string(e.what()) + ")", std::string(accepted_formats));
    } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range: a number too large for a double
        throw parse_error(source, 1, "invalid JSON (" + std::string(e.what()) + ")", std::string(accepted_formats));
    }
    auto one = [&](const nlohmann::json& doc) -> std::vector<measurement_set> {
        if (!doc.is_object()) throw parse_error(source, 1, "a JSON " + std::string(doc.is_array() ? "array" : "value"), std::string(accepted_formats));
        const auto* fmt = json_find(doc, {"format"});
        if (fmt && json_string(fmt) == "commscale-probe") return read_probe_json(doc, source);
        if (fmt) throw parse_error(source, 1, "a JSON document of format " + fmt->dump(), std::string(accepted_formats));
        if (json_find(doc, {"results"}) || json_find(doc, {"config"})) return {read_nccl_tests_json(doc, source, default_op, text)};
        throw parse_error(source, 1, "a JSON document without \"format\" or \"results\"", std::string(accepted_formats));
    };
    if (j.is_array()) {
        std::vector<measurement_set> out;
        for (const auto& doc : j)
            for (auto& m : one(doc)) out.push_back(std::move(m));
        if (out.empty()) throw parse_error(source, 1, "an empty JSON array", std::string(accepted_formats));
        return out;
    }
    return one(j);
}

}  // namespace detail::nccl

/// @brief Reads every report in `text`, detecting the format: nccl-tests / rccl-tests text output
/// (any version; several tests in one log; OpenMPI/Slurm prefixes; pasted tables), nccl-tests
/// JSON (`-J`), or the commscale probe's JSON:
/// ```
/// {"format": "commscale-probe", "version": 1,
///  "machine": {"gpu": "...", "ranks": 8, "nodes": 1, "hosts": ["h1"], "nccl_version": "2.28.9", "cuda_runtime": 13000},
///  "settings": {"min_bytes": 8, "max_bytes": 1073741824, "factor": 2, "warmup": 5, "iters": 20,
///               "nccl_algo": null, "nccl_proto": null, "dtype": "float"},
///  "collectives": [{"op": "all_reduce", "rows": [{"bytes": 8, "count": 2, "time_us": 12.3,
///                   "algbw_GBps": 0.0, "busbw_GBps": 0.0, "nccl_predicted_us": 10.1}]}]}
/// ```
/// (rows may also carry inplace_time_us / inplace_algbw_GBps / inplace_busbw_GBps; unknown keys
/// are ignored so that newer probes stay readable).
///
/// Returns one set per distinct report, rows sorted by size. The collective comes from the log
/// ("# Collective test starting: X_perf", or an `X_perf` binary name in a command line), else
/// `default_op`, else a collective named in `source_name`. Identical copies of a report (each
/// process of a binary built without MPI support prints one) are returned once, with a warning.
/// Ranks come from the device lines (highest rank id + 1), else from busbw/algbw (nccl-tests
/// bus factor), else nThread x nGpus; nodes are the distinct hosts.
/// @throws parse_error (source_name, 1-based line) for empty input, binary data, a log without a
/// result row, truncated or garbled rows with no readable row beside them, invalid JSON, a table
/// whose collective cannot be determined; input_error for invalid probe JSON fields.
[[nodiscard]] inline std::vector<measurement_set> parse_measurements(std::string_view text, std::string_view source_name,
                                                                   std::optional<collective_op> default_op = std::nullopt) {
    const std::string source = source_name.empty() ? std::string("input") : std::string(source_name);
    std::string_view body = text;
    if (body.size() >= 3 && static_cast<unsigned char>(body[0]) == 0xEF && static_cast<unsigned char>(body[1]) == 0xBB &&
        static_cast<unsigned char>(body[2]) == 0xBF)
        body.remove_prefix(3);  // UTF-8 byte order mark
    std::size_t first = 0;
    while (first < body.size() && (detail::nccl::is_space(body[first]) || body[first] == '\n' || body[first] == '\r')) ++first;
    if (first == body.size()) throw parse_error(source, 1, "an empty input", std::string(detail::nccl::accepted_formats));
    const char c = body[first];
    bool json = c == '{';
    if (c == '[') {
        std::size_t k = first + 1;
        while (k < body.size() && (detail::nccl::is_space(body[k]) || body[k] == '\n' || body[k] == '\r')) ++k;
        json = k < body.size() && (body[k] == '{' || body[k] == '[' || body[k] == ']');
    }
    if (json) return detail::nccl::read_json(body, source, default_op);
    detail::nccl::text_reader reader(source, default_op);
    return reader.read(body);
}

/// @brief Reads a measurement file (`-` = standard input) and parses it with
/// `parse_measurements`, naming the file (or "stdin") in every error and warning.
/// @throws input_error (field `field`) for a missing or unreadable file; parse errors as above.
[[nodiscard]] inline std::vector<measurement_set> read_measurements(const std::string& path,
                                                                  std::optional<collective_op> default_op = std::nullopt,
                                                                  std::string_view field = "log") {
    if (path == "-") {
        // bounded like a file (io/file.hpp: 256 MiB), so an endless pipe is an error, not an OOM
        return parse_measurements(io::read_stream(std::cin, "standard input", field), "stdin", default_op);
    }
    return parse_measurements(io::read_file(path, field), path, default_op);
}

}  // namespace commscale
