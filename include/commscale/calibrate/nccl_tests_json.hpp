#pragma once
/// @file calibrate/nccl_tests_json.hpp
/// @brief The nccl-tests JSON reader (`-J`, util.cu JSON_FILE_VERSION 2, and the key spellings of
/// other versions), used by `parse_measurements` (calibrate/nccl_tests.hpp).

#include "nccl_tests_common.hpp"

namespace commscale {

namespace detail::nccl {

/// nccl-tests `-J` output (util.cu, JSON_FILE_VERSION 2): {"version", "args": [argv...],
/// "nccl_version", "config": {"nthreads", "ngpus", ..., "devices": [{"rank", "hostname",
/// "device_info", ...}]}, "results": [{"size", "count", "type", "redop", "root": "    -1",
/// "out_of_place": {"time" | "cpu_time", "alg_bw", "bus_bw", "nwrong"}, "in_place": {...}}],
/// "average_bus_bandwidth": {"bandwidth", "okay"}}. Booleans are strings, NaN is "nan". Key
/// spellings of other versions (algbw, busbw, time_us, bytes, ...) are accepted too.
[[nodiscard]] inline measurement_set read_nccl_tests_json(const nlohmann::json& j, const std::string& source,
                                                          std::optional<collective_op> default_op, std::string_view text) {
    measurement_set m;
    m.tool = "nccl-tests";
    const auto* cfg = json_find(j, {"config", "configuration"});
    const nlohmann::json& config = cfg && cfg->is_object() ? *cfg : j;
    if (const auto* v = json_find(j, {"nccl_tests_version", "tests_version"})) m.version = json_string(v);
    // The op: the binary in args[0], else "experiment_name"/"test"/"collective", else the default.
    std::optional<collective_op> op;
    std::string unsupported;
    if (const auto* args = json_find(j, {"args", "argv"}); args && args->is_array() && !args->empty()) {
        const auto a0 = json_string(&(*args)[0]);
        op = op_from_name(a0);
        if (!op && contains(a0, "_perf")) unsupported = a0;
    }
    const auto* results = json_find(j, {"results", "rows"});
    if (!op) {
        for (const char* k : {"collective", "test", "op", "experiment_name"})
            if (const auto* v = json_find(j, {k}); v && !op) op = op_from_name(json_string(v));
        if (!op && results && results->is_array() && !results->empty())
            if (const auto* v = json_find((*results)[0], {"experiment_name", "collective", "op"})) op = op_from_name(json_string(v));
    }
    if (!op && !unsupported.empty())
        throw parse_error(source, 1, "a JSON report of " + unsupported, "a report of a test commscale models");
    if (!op) op = default_op;
    if (!op) op = op_in_source_name(source);
    if (!op)
        throw parse_error(source, 1, "a JSON report that does not name its collective",
                          "\"args\": [\"<path>/<test>_perf\", ...] in the report, or the op given explicitly (--op)");
    m.op = *op;

    // Devices.
    const auto* devs = json_find(config, {"devices"});
    if (!devs) devs = json_find(j, {"devices"});
    std::vector<long long> ids;
    long long max_id = -1;
    if (devs && devs->is_array()) {
        for (const auto& d : *devs) {
            const auto rank = json_find(d, {"rank"});
            const auto rv = rank ? json_number(*rank) : std::nullopt;
            if (rv && std::isfinite(*rv) && *rv >= 0 && *rv < 16777216.0) {
                const auto id = static_cast<long long>(*rv);
                if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
                max_id = std::max(max_id, id);
            }
            const auto host = json_string(json_find(d, {"hostname", "host"}));
            if (!host.empty() && std::find(m.hosts.begin(), m.hosts.end(), host) == m.hosts.end()) m.hosts.push_back(host);
            const auto gpu = json_string(json_find(d, {"device_info", "name", "gpu"}));
            if (!gpu.empty() && !contains(m.gpu, gpu)) m.gpu += (m.gpu.empty() ? "" : ", ") + gpu;
        }
    }
    m.nodes = static_cast<int>(m.hosts.size());

    if (!results || !results->is_array())
        throw parse_error(source, 1, "a JSON document without a \"results\" array", std::string(accepted_formats));
    std::vector<std::size_t> skipped;
    for (std::size_t i = 0; i < results->size(); ++i) {
        const auto& r = (*results)[i];
        const std::string at = "results[" + std::to_string(i) + "]";
        if (!r.is_object()) {
            skipped.push_back(i);
            continue;
        }
        measured_row row;
        const auto size = json_find(r, {"size", "bytes"});
        const auto count = json_find(r, {"count", "elements"});
        const auto sz = size ? json_number(*size) : std::nullopt;
        if (!sz) {
            skipped.push_back(i);
            continue;
        }
        row.bytes = bytes(*sz);
        if (count)
            if (const auto c = json_number(*count)) row.count = *c;
        if (m.dtype.empty()) m.dtype = json_string(json_find(r, {"type", "dtype"}));
        if (m.redop.empty()) m.redop = json_string(json_find(r, {"redop", "op"}));
        struct vals {
            double t, a, b;
        };
        auto block = [&](const nlohmann::json* o) -> std::optional<vals> {
            if (!o || !o->is_object()) return std::nullopt;
            const auto* t = json_find(*o, {"time", "time_us", "cpu_time", "cputime"});
            const auto* a = json_find(*o, {"alg_bw", "algbw", "algbw_GBps"});
            const auto* b = json_find(*o, {"bus_bw", "busbw", "busbw_GBps"});
            if (!t || !a || !b) return std::nullopt;
            const auto tv = json_number(*t), av = json_number(*a), bv = json_number(*b);
            if (!tv || !av || !bv) return std::nullopt;
            return vals{*tv, *av, *bv};
        };
        const auto oop = block(json_find(r, {"out_of_place", "out-of-place", "outOfPlace"}));
        const auto ip = block(json_find(r, {"in_place", "in-place", "inPlace"}));
        if (!oop && !ip) {
            skipped.push_back(i);
            continue;
        }
        const vals p = oop ? *oop : *ip;
        row.time = time_as_read{p.t}, row.algbw = from_GBps(p.a), row.busbw = from_GBps(p.b);
        if (ip) row.inplace_time = time_as_read{ip->t}, row.inplace_algbw = from_GBps(ip->a), row.inplace_busbw = from_GBps(ip->b);
        if (!usable(row)) {
            m.warnings.push_back(source + ": " + at + ": skipped a row with a NaN, infinite, negative or zero value");
            continue;
        }
        m.rows.push_back(row);
    }
    if (!skipped.empty())
        m.warnings.push_back(source + ": skipped " + std::to_string(skipped.size()) + " unreadable result(s): " + line_list(skipped) +
                             " (indices into \"results\")");
    if (m.rows.empty())
        throw parse_error(source, line_of(text, text.find("\"results\"")), "a \"results\" array without usable rows",
                          "results with size, out_of_place/in_place time, alg_bw and bus_bw");
    std::stable_sort(m.rows.begin(), m.rows.end(), [](const measured_row& a, const measured_row& b) { return a.bytes < b.bytes; });
    if (const auto* avg = json_find(j, {"average_bus_bandwidth", "avg_bus_bandwidth"})) {
        const auto v = avg->is_object() ? (json_find(*avg, {"bandwidth"}) ? json_number(*json_find(*avg, {"bandwidth"})) : std::nullopt)
                                        : json_number(*avg);
        if (v && std::isfinite(*v) && *v >= 0) m.avg_busbw = from_GBps(*v);
    }
    const int from_factor = ranks_from_bus_factor(m.op, m.rows);
    if (!ids.empty()) m.ranks = static_cast<int>(std::max<long long>(static_cast<long long>(ids.size()), max_id + 1));
    else if (from_factor > 0) {
        m.ranks = from_factor;
        m.warnings.push_back(source + ": no devices listed: " + std::to_string(m.ranks) + " ranks inferred from busbw/algbw");
    } else {
        const auto nt = json_find(config, {"nthreads"}), ng = json_find(config, {"ngpus"});
        double a = 0.0, b = 0.0;
        if (nt) {
            if (const auto x = json_number(*nt); x.has_value()) a = *x;
        }
        if (ng) {
            if (const auto x = json_number(*ng); x.has_value()) b = *x;
        }
        if (a >= 1 && b >= 1 && a * b < 16777216.0) {  // false for NaN too
            m.ranks = static_cast<int>(a * b);
            m.warnings.push_back(source + ": no devices listed: assumed " + std::to_string(m.ranks) + " ranks (nthreads x ngpus)");
        }
    }
    return m;
}

}  // namespace detail::nccl

}  // namespace commscale
