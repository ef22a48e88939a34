#pragma once
/// @file calibrate/probe_json.hpp
/// @brief The reader of the commscale probe's JSON (format "commscale-probe", version 1; the
/// document is shown at `parse_measurements`, calibrate/nccl_tests.hpp).

#include "nccl_tests_common.hpp"

namespace commscale {

namespace detail::nccl {

/// The commscale probe's JSON (format "commscale-probe", version 1); see parse_measurements.
[[nodiscard]] inline std::vector<measurement_set> read_probe_json(const nlohmann::json& j, const std::string& source) {
    auto fail = [&](const std::string& field, const std::string& value, const std::string& expected) -> input_error {
        return input_error(source + ": " + field, value, expected);
    };
    auto describe = [](const nlohmann::json* v) { return v ? v->dump() : std::string("nothing (missing)"); };
    const auto* ver = json_find(j, {"version"});
    if (!ver || !ver->is_number_integer() || ver->get<long long>() != 1)
        throw fail("version", describe(ver), "1 (the probe format this reader knows)");
    const auto* machine = json_find(j, {"machine"});
    if (!machine || !machine->is_object()) throw fail("machine", describe(machine), "an object");
    const auto* settings = json_find(j, {"settings"});
    const auto* collectives = json_find(j, {"collectives"});
    if (!collectives || !collectives->is_array() || collectives->empty())
        throw fail("collectives", describe(collectives), "a non-empty array of {\"op\", \"rows\"}");

    measurement_set base;
    base.tool = "commscale-probe";
    base.version = json_string(json_find(*machine, {"nccl_version"}));
    base.gpu = json_string(json_find(*machine, {"gpu"}));
    auto int_field = [&](const nlohmann::json& o, const char* key, const std::string& path, int lo) {
        const auto* v = json_find(o, {key});
        const auto d = v ? json_number(*v) : std::nullopt;
        if (!d || !std::isfinite(*d) || *d != std::floor(*d) || *d < lo || *d > 16777216.0)
            throw fail(path, describe(v), "an integer >= " + std::to_string(lo));
        return static_cast<int>(*d);
    };
    base.ranks = int_field(*machine, "ranks", "machine.ranks", 1);
    base.nodes = int_field(*machine, "nodes", "machine.nodes", 1);
    if (const auto* hosts = json_find(*machine, {"hosts"}); hosts && hosts->is_array())
        for (const auto& h : *hosts) {
            const auto s = json_string(&h);
            if (!s.empty() && std::find(base.hosts.begin(), base.hosts.end(), s) == base.hosts.end()) base.hosts.push_back(s);
        }
    if (!base.hosts.empty() && static_cast<int>(base.hosts.size()) != base.nodes)
        base.warnings.push_back(source + ": machine.nodes is " + std::to_string(base.nodes) + " but machine.hosts lists " +
                                std::to_string(base.hosts.size()) + " hosts");
    if (settings && settings->is_object()) base.dtype = json_string(json_find(*settings, {"dtype"}));

    std::vector<measurement_set> out;
    for (std::size_t c = 0; c < collectives->size(); ++c) {
        const auto& col = (*collectives)[c];
        const std::string at = "collectives[" + std::to_string(c) + "]";
        if (!col.is_object()) throw fail(at, col.dump(), "an object {\"op\", \"rows\"}");
        const auto* opv = json_find(col, {"op"});
        const auto name = json_string(opv);
        const auto op = op_from_name(name);
        if (!op)
            throw unknown_name(source + ": " + at + ".op", name,
                               std::vector<std::string>{"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce",
                                                        "all_to_all", "send_recv"});
        measurement_set m = base;
        m.op = *op;
        m.redop = json_string(json_find(col, {"redop"}));
        if (m.redop.empty())
            m.redop = (*op == collective_op::all_reduce || *op == collective_op::reduce_scatter || *op == collective_op::reduce) ? "sum" : "none";
        const auto* rows = json_find(col, {"rows"});
        if (!rows || !rows->is_array()) throw fail(at + ".rows", describe(rows), "an array of rows");
        for (std::size_t i = 0; i < rows->size(); ++i) {
            const auto& r = (*rows)[i];
            const std::string rat = at + ".rows[" + std::to_string(i) + "]";
            if (!r.is_object()) throw fail(rat, r.dump(), "an object");
            auto num = [&](const char* key, bool required) -> std::optional<double> {
                const auto* v = json_find(r, {key});
                if (!v) {
                    if (required) throw fail(rat + "." + key, "nothing (missing)", "a number");
                    return std::nullopt;
                }
                const auto d = json_number(*v);
                if (!d) throw fail(rat + "." + key, v->dump(), "a number");
                return d;
            };
            measured_row row;
            auto time = [&](const char* key) -> std::optional<duration> {
                if (const auto v = num(key, false)) return from_us(*v);
                return std::nullopt;
            };
            auto rate = [&](const char* key) -> std::optional<byte_rate> {
                if (const auto v = num(key, false)) return from_GBps(*v);
                return std::nullopt;
            };
            row.bytes = bytes(*num("bytes", true));
            row.count = num("count", false).value_or(0);
            row.time = time_as_read{*num("time_us", true)};
            row.algbw = from_GBps(*num("algbw_GBps", true));
            row.busbw = from_GBps(*num("busbw_GBps", true));
            if (const auto v = num("inplace_time_us", false)) row.inplace_time = time_as_read{*v};
            row.inplace_algbw = rate("inplace_algbw_GBps");
            row.inplace_busbw = rate("inplace_busbw_GBps");
            row.nccl_predicted = time("nccl_predicted_us");
            if (!usable(row)) {
                m.warnings.push_back(source + ": " + rat + ": skipped a row with a NaN, infinite, negative or zero value");
                continue;
            }
            m.rows.push_back(row);
        }
        if (m.rows.empty()) throw fail(at + ".rows", "no usable row", "at least one row with finite, positive values");
        std::stable_sort(m.rows.begin(), m.rows.end(), [](const measured_row& a, const measured_row& b) { return a.bytes < b.bytes; });
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace detail::nccl

}  // namespace commscale
