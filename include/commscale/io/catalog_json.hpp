#pragma once
/// @file io/catalog_json.hpp
/// @brief The hardware catalog as the JSON files under `data/`: the headers
/// (hardware/links.hpp, accelerators.hpp, clusters.hpp) are the one source; these functions
/// write what `data/links.json`, `data/accelerators.json` and `data/clusters/<name>.json` hold.
/// The `catalog` build target regenerates the files (tools/generate_catalog.cpp) and
/// a test compares the generated files with the checked-in ones byte for byte, so a header edit
/// without the regenerated data fails the suite.
///
/// Cluster preset files omit every field that equals what `cluster_from_json` assumes when the
/// field is missing (io/cluster_json.hpp: fabric "switch", no in-switch reduction, PCIe
/// peer-to-peer on, one NIC per GPU, no oversubscription, 32 nodes per leaf, rail-optimized, no
/// in-network reduction, GPUDirect RDMA on, no calibration), so a file shows what is particular
/// to its system. Model files (`data/models/`) are not generated: they are the published
/// Hugging Face `config.json` documents, whose keys (rope_theta, hidden_act, ...) the library
/// does not model; tests/unit/io/model_json.cpp checks them against the model presets instead.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../hardware/accelerators.hpp"
#include "../hardware/clusters.hpp"
#include "../hardware/links.hpp"
#include "cluster_json.hpp"
#include "file.hpp"
#include "hardware_json.hpp"

namespace commscale::io {

/// @brief `{"links": [...]}`: every catalog link (`all_links()`) as io/hardware_json.hpp writes
/// it; what `commscale links --json` prints and `data/links.json` holds.
[[nodiscard]] inline nlohmann::json links_catalog_json() {
    nlohmann::json list = nlohmann::json::array();
    for (const link& l : all_links()) list.push_back(link_to_json(l));
    return {{"links", std::move(list)}};
}

/// @brief `{"accelerators": [...]}`: every catalog accelerator; what `commscale accelerators
/// --json` prints and `data/accelerators.json` holds.
[[nodiscard]] inline nlohmann::json accelerators_catalog_json() {
    nlohmann::json list = nlohmann::json::array();
    for (const accelerator& a : all_accelerators()) list.push_back(accelerator_to_json(a));
    return {{"accelerators", std::move(list)}};
}

/// @brief A cluster as a preset file: the keys in reading order (name, size, accelerator, intra,
/// inter, source), every field that equals cluster_from_json's default for a missing key left
/// out. `cluster_from_json(cluster_preset_json(c))` equals `c`.
[[nodiscard]] inline nlohmann::ordered_json cluster_preset_json(const cluster& c) {
    nlohmann::ordered_json j;
    j["name"] = std::string(c.name);
    j["nodes"] = c.nodes;
    j["gpus_per_node"] = c.node.gpus;
    if (c.domain_spans_nodes()) j["scale_up_domain"] = c.scale_up_domain;
    if (!c.node.accelerator.empty()) j["accelerator"] = std::string(c.node.accelerator);
    nlohmann::ordered_json intra;
    intra["link"] = detail::link_json(c.node.intra);
    if (c.node.fabric != intra_fabric::switched) intra["fabric"] = std::string(to_string(c.node.fabric));
    if (c.node.in_switch_reduction) intra["in_switch_reduction"] = true;
    if (!c.node.pcie_p2p) intra["pcie_p2p"] = false;
    j["intra"] = std::move(intra);
    if (has_scale_out(c)) {
        nlohmann::ordered_json inter;
        inter["link"] = detail::link_json(c.node.inter);
        if (c.node.nics != c.node.gpus) inter["nics_per_node"] = c.node.nics;
        if (c.oversubscription != 1.0) inter["oversubscription"] = c.oversubscription;
        if (c.nodes_per_leaf != cluster{}.nodes_per_leaf) inter["nodes_per_leaf"] = c.nodes_per_leaf;
        if (!c.rail_optimized) inter["rail_optimized"] = false;
        if (c.in_network_reduction) inter["in_network_reduction"] = true;
        if (!c.node.gpudirect_rdma) inter["gpudirect_rdma"] = false;
        j["inter"] = std::move(inter);
    }
    if (!c.source.empty()) j["source"] = std::string(c.source);
    if (!same_comm_params(c.comm, comm_params{})) j["calibration"] = comm_params_to_json(c.comm);
    return j;
}

/// @brief A generated catalog file: its path under the data directory and its text.
struct catalog_file {
    std::string path;  ///< relative to the data directory ("links.json", "clusters/dgx-a100.json")
    std::string text;  ///< the document, indented by 2, with a final newline
};

/// @brief Every generated file of the data directory, in a fixed order: links.json,
/// accelerators.json, then clusters/<name>.json for each preset.
[[nodiscard]] inline std::vector<catalog_file> catalog_files() {
    std::vector<catalog_file> out;
    out.push_back({"links.json", links_catalog_json().dump(2) + "\n"});
    out.push_back({"accelerators.json", accelerators_catalog_json().dump(2) + "\n"});
    for (const cluster& c : all_clusters())
        out.push_back({"clusters/" + std::string(c.name) + ".json", cluster_preset_json(c).dump(2) + "\n"});
    return out;
}

/// @brief Writes catalog_files() under `dir` (creating `dir/clusters`), each file atomically;
/// input_error naming the path when a file cannot be written.
inline void write_catalog(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir) / "clusters", ec);
    if (ec) throw input_error("catalog directory", dir, "a directory that can be created and written (" + ec.message() + ")");
    for (const catalog_file& f : catalog_files())
        write_file_atomic((std::filesystem::path(dir) / f.path).string(), f.text, "catalog file");
}

}  // namespace commscale::io
