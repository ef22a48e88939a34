// The catalog files under data/ are generated from the headers (io/catalog_json.hpp; regenerate
// with `cmake --build build --target catalog`): the checked-in files must be exactly what the
// generator writes, every preset must have its file and no file may lack its preset.
#include "catch_shim.hpp"

#include <filesystem>
#include <set>
#include <string>

#include <commscale/io/catalog_json.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/io/file.hpp>
#include <commscale/io/hardware_json.hpp>
#include <commscale/io/result_json.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

TEST_CASE("data/ holds exactly what the catalog headers generate (golden files)") {
    const std::string dir = COMMSCALE_DATA_DIR;
    const auto files = io::catalog_files();
    REQUIRE(files.size() == 2 + all_clusters().size());
    for (const io::catalog_file& f : files) {
        INFO(f.path << " differs from the headers: run `cmake --build build --target catalog` and review the diff");
        const std::string on_disk = io::read_file(dir + "/" + f.path);
        CHECK(on_disk == f.text);
    }
    // no cluster file without its preset
    std::set<std::string> generated;
    for (const io::catalog_file& f : files) generated.insert(f.path);
    for (const auto& e : std::filesystem::directory_iterator(dir + "/clusters")) {
        INFO(e.path().string());
        CHECK(generated.count("clusters/" + e.path().filename().string()) == 1);
    }
}

TEST_CASE("preset files omit the fields cluster_from_json assumes and still read back to the preset") {
    for (const cluster& c : all_clusters()) {
        INFO(c.name);
        const nlohmann::ordered_json j = io::cluster_preset_json(c);
        const cluster back = io::cluster_from_json(nlohmann::json::parse(j.dump()), "cluster");
        CHECK(io::cluster_to_json(back) == io::cluster_to_json(c));
        // defaults are left out: a switched fabric, one NIC per GPU, no oversubscription
        if (c.node.fabric == intra_fabric::switched) CHECK_FALSE(j["intra"].contains("fabric"));
        if (c.node.nics == c.node.gpus) CHECK_FALSE(j["inter"].contains("nics_per_node"));
        if (c.oversubscription == 1.0) CHECK_FALSE(j["inter"].contains("oversubscription"));
    }
    // what is particular to a system stays: Baskerville's one NIC for 4 GPUs without GPUDirect
    // RDMA, its point-to-point NVLink mesh, and the NVL72 rack's 72-GPU NVLink domain
    const auto bask = io::cluster_preset_json(cluster_by_name("baskerville"));
    CHECK(bask["inter"]["nics_per_node"] == 1);
    CHECK(bask["inter"]["gpudirect_rdma"] == false);
    CHECK(bask["intra"]["fabric"] == "mesh");
    CHECK(io::cluster_preset_json(cluster_by_name("gb200-nvl72"))["scale_up_domain"] == 72);
}

TEST_CASE("write_catalog writes every file and names a directory it cannot create") {
    const std::filesystem::path tmp = std::filesystem::temp_directory_path() / "commscale_catalog_test";
    std::filesystem::remove_all(tmp);
    io::write_catalog(tmp.string());
    for (const io::catalog_file& f : io::catalog_files()) CHECK(io::read_file((tmp / f.path).string()) == f.text);
    std::filesystem::remove_all(tmp);
    // a regular file where the directory should be
    const std::filesystem::path blocker = std::filesystem::temp_directory_path() / "commscale_catalog_blocker";
    io::write_file_atomic(blocker.string(), "x");
    CHECK_THROWS_AS(io::write_catalog((blocker / "sub").string()), input_error);
    std::filesystem::remove(blocker);
}

TEST_CASE("an accelerator read from data/accelerators.json predicts the same step as the built-in one") {
    // Renamed so that no field comes from the catalog entry of the same name
    // (accelerator_from_json starts from it): whatever the compute model reads of an accelerator
    // must be in the JSON, so that adding one is a header edit plus the catalog's regeneration.
    nlohmann::json file = nlohmann::json::parse(io::read_file(std::string(COMMSCALE_DATA_DIR) + "/accelerators.json"));
    for (auto& e : file.at("accelerators")) e["name"] = "json-" + e.at("name").get<std::string>();
    const std::vector<accelerator> read = accelerators_from_json(file, "accelerators.json");
    REQUIRE(read.size() == all_accelerators().size());
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 4;
    for (std::size_t i = 0; i < read.size(); ++i) {
        const accelerator& built_in = all_accelerators()[i];
        REQUIRE(read[i].name == "json-" + std::string(built_in.name));
        for (const dtype d : {dtype::bf16, dtype::fp16, dtype::fp8}) {
            if (!built_in.peak(d)) continue;
            // a dense model and an MoE model, long sequences (the softmax exponentials), fp8 (its
            // matmul efficiency), on 32 GPUs
            const plan dense{.tp = 2, .pp = 2, .dp = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192, .precision = d};
            const plan moe{.tp = 2, .pp = 2, .dp = 8, .ep = 8, .micro_batch = 1, .global_batch = 64, .seq = 4096, .precision = d};
            for (const auto& [m, p] : {std::pair{&models::llama3_8b, dense}, std::pair{&models::mixtral_8x7b, moe}}) {
                INFO(built_in.name << " " << to_string(d) << " " << m->layers << " layers");
                const step_breakdown want = predict_step(*m, c, built_in, p);
                const step_breakdown got = predict_step(*m, c, read[i], p);
                CHECK(io::step_breakdown_to_json(got).dump() == io::step_breakdown_to_json(want).dump());
                CHECK(got.step.value() > 0.0);
            }
        }
    }
}
