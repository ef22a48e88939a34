#pragma once
/// @file io/hardware_json.hpp
/// @brief JSON for the hardware value types `link` and `accelerator` (nlohmann adl_serializer), with
/// validation errors that name the field path.
///
/// Output keys follow CLI.md:
/// * link: {name, kind, family, rdma, per_direction_GBps, duplex_GBps, per_lane_GBps, latency_us
///   (null if unpublished), lanes, links, encoding, source}
/// * accelerator: {name, display_name, memory_GiB, memory_bandwidth_GBps, peak_tflops: {fp32, tf32,
///   bf16, fp16, fp8, mxfp8, nvfp4, fp4} (dense, null where unsupported), scale_up_link, compute_efficiency,
///   compute_efficiency_basis (measured, assumed: the default 0.8, or fitted: to published runs; an
///   object that gives compute_efficiency without it: measured), source, power_W (board power in watts, null if unpublished), compute_units (SMs / CUs, 0 if
///   unknown), fp8_mamf_ratio (FP8 over BF16 best-shape matmul fraction), fp4_gemm_ratio (FP4 over BF16
///   GEMM fraction of peak), mxfp8_gemm_time_ratio (MXFP8 over per-tensor FP8 GEMM time),
///   flash_attention_2_ratio (FlashAttention-2's fraction of peak over the
///   A100's), exponentials_per_bf16_flop
///   (softmax exponentials per dense BF16 FLOP, 0 if unknown), host_bandwidth_GBps (the link to host
///   memory per direction; PCIe Gen5 x16, 63.0, where an object gives none), non_tn_fp8_gemm (FP8
///   GEMMs in every operand layout, Blackwell: no transposed FP8 copies; false where an object gives
///   none), device_names (parts of the names CUDA
///   and ROCm report, lower-case), reference_cluster (the preset a log of it defaults to; null: the
///   default cluster)}
///
/// Input: a catalog name as a string ("nvlink4"), or an object. An object whose "name" is a catalog
/// entry starts from that entry and overrides the fields it gives; any other object must give the
/// bandwidth (and, for a link, its kind). Rates and sizes may also be given as strings with units
/// under the unit-free keys ("per_direction": "400Gbps", "latency": "0.6us", "memory": "80GiB",
/// "memory_bandwidth": "3.35TB/s"); a duplex figure enters only through "duplex_GBps"/"duplex".
/// Unknown keys are rejected with "did you mean".

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../detail/intern.hpp"
#include "../error.hpp"
#include "../hardware/accelerators.hpp"
#include "../hardware/clusters.hpp"
#include "../hardware/links.hpp"
#include "../units.hpp"
#include "json_reader.hpp"

namespace commscale {

namespace detail {

/// The enumerator spelled by the string at `key` (its name table, detail/names.hpp).
template <named_enum Enum>
[[nodiscard]] Enum enum_from_name(const io::json_reader& r, const std::string& key) {
    return parse<Enum>(r.string(key), r.field(key));
}

/// Two figures of the same rate (e.g. per_direction_GBps and duplex_GBps / 2) must agree.
inline void require_consistent(const std::string& field, double given, double implied, const std::string& what) {
    if (std::fabs(given - implied) > 1e-9 * std::max(std::fabs(given), std::fabs(implied)))
        throw input_error(field, detail::number_text(given), what + " (" + detail::number_text(implied) + ")");
}

}  // namespace detail

/// @brief The JSON object of a link (keys in the file comment; bandwidths in GB/s = 1e9 B/s).
[[nodiscard]] inline nlohmann::json link_to_json(const link& l) {
    nlohmann::json j;
    j["name"] = std::string(l.name);
    j["kind"] = std::string(to_string(l.kind));
    j["family"] = std::string(to_string(l.family));
    j["rdma"] = l.rdma;
    j["per_direction_GBps"] = in_GBps(l.per_direction);
    j["duplex_GBps"] = in_GBps(l.duplex().both_directions);
    j["per_lane_GBps"] = in_GBps(l.per_lane);
    j["latency_us"] = l.latency ? nlohmann::json(in_us(*l.latency)) : nlohmann::json(nullptr);
    j["lanes"] = l.lanes;
    j["links"] = l.links;
    j["encoding"] = std::string(to_string(l.encoding));
    j["source"] = std::string(l.source);
    return j;
}

/// @brief Reads a link from a catalog name (string) or an object, reporting errors under `path`
/// (e.g. "cluster.inter.link"). Names and sources read at run time are interned.
[[nodiscard]] inline link link_from_json(const nlohmann::json& j, const std::string& path) {
    if (j.is_string()) return link_by_name(j.get<std::string>(), path);
    io::json_reader r(j, path);
    const std::string name = r.string("name");
    if (name.empty()) throw input_error(r.field("name"), "an empty string", "a link name");
    const std::optional<link> base = find_link(name);
    link l = base.value_or(link{});
    l.name = detail::intern(name);

    if (r.has("kind"))
        l.kind = detail::enum_from_name<link_kind>(r, "kind");
    else if (!base)
        throw input_error(r.field("kind"), "nothing (missing)", "scale_up, host_bus or scale_out");
    if (r.has("family"))
        l.family = detail::enum_from_name<link_family>(r, "family");
    else if (!base)
        l.family = l.kind == link_kind::scale_up   ? link_family::nvlink
                   : l.kind == link_kind::host_bus ? link_family::pcie
                                                   : link_family::roce;
    if (r.has("rdma")) l.rdma = r.boolean("rdma");
    else if (!base) l.rdma = l.family != link_family::ethernet && l.family != link_family::tcpx;

    // Bandwidth: per direction, or a duplex figure that says so; both must agree if both are given.
    std::optional<double> per_dir, dup;
    std::string per_dir_key, dup_key;
    for (const char* k : {"per_direction_GBps", "per_direction"}) {
        if (!r.has(k)) continue;
        if (per_dir) throw input_error(r.field(k), "a second per-direction figure", "one of per_direction_GBps, per_direction");
        per_dir = std::string(k) == "per_direction_GBps" ? r.number(k, 0, link_limits::per_direction_GBps) * giga : r.quantity(k, quantity_kind::rate);
        per_dir_key = k;
    }
    for (const char* k : {"duplex_GBps", "duplex"}) {
        if (!r.has(k)) continue;
        if (dup) throw input_error(r.field(k), "a second duplex figure", "one of duplex_GBps, duplex");
        dup = std::string(k) == "duplex_GBps" ? r.number(k, 0, link_limits::duplex_GBps) * giga : r.quantity(k, quantity_kind::rate);
        dup_key = k;
    }
    if (per_dir && dup)
        detail::require_consistent(r.field(dup_key), *dup / giga, 2.0 * *per_dir / giga,
                                   "twice " + per_dir_key + " (duplex = both directions)");
    if (per_dir) l.per_direction = bytes_per_second(*per_dir);
    else if (dup) l.per_direction = duplex(bytes_per_second(*dup)).per_direction();
    else if (!base)
        throw input_error(r.field("per_direction_GBps"), "nothing (missing)",
                          "the per-direction bandwidth in GB/s (or per_direction with a unit, or duplex_GBps)");
    // Below 1 MB/s (8 Mbit/s) per direction a figure is a unit slip (Gbps written as GB/s x 1e-9),
    // not an interconnect, and collective times would overflow.
    if (!(l.per_direction.value() >= min_hardware_rate))
        throw input_error(r.field(per_dir ? per_dir_key : dup_key), detail::number_text(in_GBps(l.per_direction)) + " GB/s",
                          "a bandwidth of at least 0.001 GB/s (1 MB/s) per direction");

    if (r.has("lanes")) l.lanes = r.int32("lanes", 1, link_limits::lanes);
    if (r.has("links")) l.links = r.int32("links", 1, link_limits::links);
    if (r.has("per_lane_GBps")) l.per_lane = bytes_per_second(r.number("per_lane_GBps", 0, link_limits::per_lane_GBps) * giga);
    else if (r.has("per_lane")) l.per_lane = r.rate("per_lane");
    else if (!base || per_dir || dup)
        l.per_lane = l.per_direction / static_cast<double>(l.lanes * l.links);
    if (r.has("encoding"))
        l.encoding = detail::enum_from_name<line_encoding>(r, "encoding");

    const bool has_us = r.has("latency_us"), has_t = r.has("latency");
    if (has_us && has_t) throw input_error(r.field("latency"), "a second latency", "one of latency_us, latency");
    if (has_us) l.latency = seconds(r.number("latency_us", 0, link_limits::latency_us) * 1e-6);
    else if (has_t) {
        l.latency = r.time("latency");
        if (in_seconds(*l.latency) > 1.0)
            throw input_error(r.field("latency"), detail::number_text(in_us(*l.latency)) + " us", "a latency of at most 1 s");
    }
    else if (j.contains("latency_us") || j.contains("latency")) l.latency = std::nullopt;  // explicit null
    if (r.has("source")) l.source = detail::intern(r.string("source"));
    else if (!base) l.source = "user-supplied";
    r.finish();
    return l;
}

/// @brief The JSON object of an accelerator (keys in the file comment; memory in GiB, bandwidth in
/// GB/s, peaks in TFLOPS, null where unsupported).
[[nodiscard]] inline nlohmann::json accelerator_to_json(const accelerator& a) {
    nlohmann::json j;
    j["name"] = std::string(a.name);
    j["display_name"] = std::string(a.display_name);
    j["memory_GiB"] = in_bytes(a.memory) / gibi;
    j["memory_bandwidth_GBps"] = in_GBps(a.memory_bandwidth);
    nlohmann::json peaks = nlohmann::json::object();
    for (std::size_t i = 0; i < dtype_count; ++i) {
        const auto d = static_cast<dtype>(i);
        const auto p = a.peak(d);
        peaks[std::string(to_string(d))] = p ? nlohmann::json(in_tflops(*p)) : nlohmann::json(nullptr);
    }
    j["peak_tflops"] = std::move(peaks);
    j["scale_up_link"] = std::string(a.scale_up_link);
    j["compute_efficiency"] = a.compute_efficiency;
    j["compute_efficiency_basis"] = std::string(to_string(a.compute_efficiency_basis));
    j["source"] = std::string(a.source);
    j["power_W"] = a.power ? nlohmann::json(*a.power) : nlohmann::json(nullptr);
    j["compute_units"] = a.compute_units;
    j["fp8_mamf_ratio"] = a.fp8_mamf_ratio;
    j["fp4_gemm_ratio"] = a.fp4_gemm_ratio;
    j["mxfp8_gemm_time_ratio"] = a.mxfp8_gemm_time_ratio;
    j["flash_attention_2_ratio"] = a.flash_attention_2_ratio;
    j["exponentials_per_bf16_flop"] = a.exponentials_per_bf16_flop;
    j["host_bandwidth_GBps"] = in_GBps(a.host_bandwidth);
    j["non_tn_fp8_gemm"] = a.non_tn_fp8_gemm;
    nlohmann::json names = nlohmann::json::array();
    for (const std::string_view d : a.device_names)
        if (!d.empty()) names.push_back(std::string(d));
    j["device_names"] = std::move(names);
    j["reference_cluster"] = a.reference_cluster.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(a.reference_cluster));
    return j;
}

/// @brief Reads an accelerator from a catalog name (string) or an object, reporting errors under
/// `path`. `scale_up_link` must name a catalog link.
[[nodiscard]] inline accelerator accelerator_from_json(const nlohmann::json& j, const std::string& path) {
    if (j.is_string()) return accelerator_by_name(j.get<std::string>(), path);
    io::json_reader r(j, path);
    const std::string name = r.string("name");
    if (name.empty()) throw input_error(r.field("name"), "an empty string", "an accelerator name");
    const std::optional<accelerator> base = find_accelerator(name);
    accelerator a = base.value_or(accelerator{});
    a.name = detail::intern(name);
    if (r.has("display_name")) a.display_name = detail::intern(r.string("display_name"));
    else if (!base) a.display_name = a.name;

    if (r.has("memory_GiB") && r.has("memory"))
        throw input_error(r.field("memory"), "a second memory size", "one of memory_GiB, memory");
    if (r.has("memory_GiB")) a.memory = bytes(r.number("memory_GiB", 0, accelerator_limits::memory_GiB) * gibi);
    else if (r.has("memory")) a.memory = r.size("memory");
    else if (!base) throw input_error(r.field("memory_GiB"), "nothing (missing)", "the memory capacity in GiB");
    // At least 1 MB (1e6 B): smaller is a unit slip, not an accelerator's memory.
    if (!(a.memory.value() >= 1e6))
        throw input_error(r.field(r.has("memory") ? "memory" : "memory_GiB"), detail::number_text(in_bytes(a.memory) / gibi) + " GiB",
                          "a memory of at least 1 MB (0.00093 GiB)");

    if (r.has("memory_bandwidth_GBps") && r.has("memory_bandwidth"))
        throw input_error(r.field("memory_bandwidth"), "a second memory bandwidth",
                          "one of memory_bandwidth_GBps, memory_bandwidth");
    if (r.has("memory_bandwidth_GBps")) a.memory_bandwidth = bytes_per_second(r.number("memory_bandwidth_GBps", 0, accelerator_limits::memory_bandwidth_GBps) * giga);
    else if (r.has("memory_bandwidth")) a.memory_bandwidth = r.rate("memory_bandwidth");
    else if (!base)
        throw input_error(r.field("memory_bandwidth_GBps"), "nothing (missing)", "the memory bandwidth in GB/s");
    (void)require_hardware_rate(r.field(r.has("memory_bandwidth") ? "memory_bandwidth" : "memory_bandwidth_GBps"),
                                a.memory_bandwidth.value(), detail::number_text(in_GBps(a.memory_bandwidth)) + " GB/s");

    if (r.has("peak_tflops")) {
        const io::json_reader p = r.object("peak_tflops");
        for (std::size_t i = 0; i < dtype_count; ++i) {
            const std::string key(to_string(static_cast<dtype>(i)));
            if (p.has(key)) {
                // a slower "peak" than accelerator_limits::min_peak_tflops is a unit slip
                const double t = p.number(key, 0, accelerator_limits::max_peak_tflops);
                if (!(t >= accelerator_limits::min_peak_tflops))
                    throw input_error(p.field(key), detail::number_text(t), "TFLOPS in [0.001, 1e9], or null if unsupported");
                a.dense_peak[i] = flops_per_second(t * tera);
            } else if (j.at("peak_tflops").contains(key)) {
                a.dense_peak[i] = std::nullopt;  // explicit null: unsupported
            }
        }
        p.finish();
    } else if (!base) {
        throw input_error(r.field("peak_tflops"), "nothing (missing)", "an object {fp32, tf32, bf16, fp16, fp8, mxfp8, nvfp4, fp4} in TFLOPS");
    }
    bool any = false;
    for (const auto& p : a.dense_peak) any = any || p.has_value();
    if (!any) throw input_error(r.field("peak_tflops"), "no data type with a peak", "at least one dense peak in TFLOPS");

    if (r.has("scale_up_link")) {
        const std::string l = r.string("scale_up_link");
        a.scale_up_link = link_by_name(l, r.field("scale_up_link")).name;
    } else if (!base) {
        throw input_error(r.field("scale_up_link"), "nothing (missing)", "a catalog link name, e.g. nvlink4");
    }
    if (r.has("compute_efficiency")) {
        a.compute_efficiency = r.number("compute_efficiency", accelerator_limits::min_compute_efficiency,
                                        accelerator_limits::max_compute_efficiency);
        a.compute_efficiency_basis = efficiency_basis::measured;  // the user's figure
    } else if (!base) {
        a.compute_efficiency = default_compute_efficiency;
        a.compute_efficiency_basis = efficiency_basis::assumed;
    }
    if (r.has("compute_efficiency_basis"))
        a.compute_efficiency_basis = detail::enum_from_name<efficiency_basis>(r, "compute_efficiency_basis");
    if (r.has("source")) a.source = detail::intern(r.string("source"));
    else if (!base) a.source = "user-supplied";
    if (r.has("power_W")) {
        if (j.at("power_W").is_null()) a.power = std::nullopt;
        else a.power = r.number("power_W", accelerator_limits::min_power_W, accelerator_limits::max_power_W);
    }
    // Absent on an object that is not a catalog entry: 0 units (no wave quantization), ratios 1,
    // 0 exponentials (not priced apart), the accelerator struct's defaults.
    a.compute_units = r.int32_or("compute_units", a.compute_units, 0, accelerator_limits::compute_units);
    a.fp8_mamf_ratio = r.number_or("fp8_mamf_ratio", a.fp8_mamf_ratio, accelerator_limits::min_fp8_mamf_ratio,
                                   accelerator_limits::max_fp8_mamf_ratio);
    a.fp4_gemm_ratio = r.number_or("fp4_gemm_ratio", a.fp4_gemm_ratio, accelerator_limits::min_fp4_gemm_ratio,
                                   accelerator_limits::max_fp4_gemm_ratio);
    a.mxfp8_gemm_time_ratio = r.number_or("mxfp8_gemm_time_ratio", a.mxfp8_gemm_time_ratio,
                                          accelerator_limits::min_mxfp8_gemm_time_ratio,
                                          accelerator_limits::max_mxfp8_gemm_time_ratio);
    a.flash_attention_2_ratio = r.number_or("flash_attention_2_ratio", a.flash_attention_2_ratio,
                                            accelerator_limits::min_flash_attention_2_ratio,
                                            accelerator_limits::max_flash_attention_2_ratio);
    a.exponentials_per_bf16_flop = r.number_or("exponentials_per_bf16_flop", a.exponentials_per_bf16_flop, 0.0,
                                                 accelerator_limits::max_exponentials_per_bf16_flop);
    a.non_tn_fp8_gemm = r.boolean_or("non_tn_fp8_gemm", a.non_tn_fp8_gemm);
    if (r.has("host_bandwidth_GBps"))
        a.host_bandwidth = bytes_per_second(r.number("host_bandwidth_GBps", accelerator_limits::min_host_bandwidth_GBps,
                                                     accelerator_limits::max_host_bandwidth_GBps) * giga);
    if (r.has("device_names")) {
        const nlohmann::json& names = r.array("device_names");
        if (names.size() > a.device_names.size())
            throw input_error(r.field("device_names"), "an array of " + std::to_string(names.size()),
                              "at most " + std::to_string(a.device_names.size()) + " device names");
        a.device_names = {};
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!names[i].is_string() || names[i].get_ref<const std::string&>().empty())
                throw input_error(r.field("device_names") + "[" + std::to_string(i) + "]", names[i].dump(),
                                  "a non-empty lower-case part of a device name, e.g. \"h100\"");
            std::string d = names[i].get<std::string>();
            for (char& ch : d) ch = commscale::detail::ascii_lower(ch);
            a.device_names[i] = detail::intern(d);
        }
    }
    if (r.has("reference_cluster"))
        a.reference_cluster = j.at("reference_cluster").is_null()
                                  ? std::string_view{}
                                  : cluster_by_name(r.string("reference_cluster"), r.field("reference_cluster")).name;
    r.finish();
    return a;
}

/// @brief Reads a list of links: an array, or an object {"links": [...]} as data/links.json and
/// `commscale links --json` write it. Errors name the element ("links[3].kind").
[[nodiscard]] inline std::vector<link> links_from_json(const nlohmann::json& j, const std::string& path) {
    const nlohmann::json* arr = &j;
    std::string base = path;
    if (j.is_object()) {
        io::json_reader r(j, path);
        arr = &r.array("links");
        base = r.field("links");
        r.finish();
    } else if (!j.is_array()) {
        throw input_error(path, io::json_type_name(j), "an array of links or an object {\"links\": [...]}");
    }
    std::vector<link> out;
    for (std::size_t i = 0; i < arr->size(); ++i)
        out.push_back(link_from_json((*arr)[i], base + "[" + std::to_string(i) + "]"));
    return out;
}

/// @brief Reads a list of accelerators: an array, or an object {"accelerators": [...]} as
/// data/accelerators.json and `commscale accelerators --json` write it.
[[nodiscard]] inline std::vector<accelerator> accelerators_from_json(const nlohmann::json& j, const std::string& path) {
    const nlohmann::json* arr = &j;
    std::string base = path;
    if (j.is_object()) {
        io::json_reader r(j, path);
        arr = &r.array("accelerators");
        base = r.field("accelerators");
        r.finish();
    } else if (!j.is_array()) {
        throw input_error(path, io::json_type_name(j), "an array of accelerators or an object {\"accelerators\": [...]}");
    }
    std::vector<accelerator> out;
    for (std::size_t i = 0; i < arr->size(); ++i)
        out.push_back(accelerator_from_json((*arr)[i], base + "[" + std::to_string(i) + "]"));
    return out;
}

}  // namespace commscale

namespace nlohmann {

/// JSON for commscale::link: `json j = l;` and `j.get<commscale::link>()` (errors under "link").
template <>
struct adl_serializer<commscale::link> {
    static void to_json(json& j, const commscale::link& l) { j = commscale::link_to_json(l); }
    static commscale::link from_json(const json& j) { return commscale::link_from_json(j, "link"); }
};

/// JSON for commscale::accelerator (errors under "accelerator").
template <>
struct adl_serializer<commscale::accelerator> {
    static void to_json(json& j, const commscale::accelerator& a) { j = commscale::accelerator_to_json(a); }
    static commscale::accelerator from_json(const json& j) { return commscale::accelerator_from_json(j, "accelerator"); }
};

}  // namespace nlohmann
