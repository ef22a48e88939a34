// Writes the hardware catalog files under a data directory from the headers
// (io/catalog_json.hpp): links.json, accelerators.json and clusters/<name>.json.
// The `catalog` build target runs it on the source tree's data/; tests/unit/io/catalog.cpp checks
// that the checked-in files are what it writes.
//   usage: commscale_catalog DATA_DIR
#include <cstdio>
#include <exception>

#include <commscale/io/catalog_json.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: commscale_catalog DATA_DIR\n");
        return 2;
    }
    try {
        commscale::io::write_catalog(argv[1]);
        for (const auto& f : commscale::io::catalog_files()) std::printf("%s/%s\n", argv[1], f.path.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "commscale_catalog: %s\n", e.what());
        return 1;
    }
    return 0;
}
