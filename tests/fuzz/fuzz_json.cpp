// Fuzz target: every JSON loader (links, accelerators, clusters incl. calibration, Hugging Face
// model configs, the result documents of io/result_json.hpp). Input: a JSON document. Each loader must either return a value that passes its
// own validation and survives a write/read round trip, or throw commscale::input_error. The round
// trip is compared on the written JSON with a relative tolerance of 1e-14 on numbers: the writer
// scales to display units (GB/s, us, GiB), and x / 1e9 * 1e9 may differ from x in the last bit.
// The result documents read back to values that write the same numbers: their round trip is exact.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <commscale/io/cluster_json.hpp>
#include <commscale/io/hardware_json.hpp>
#include <commscale/io/model_json.hpp>
#include <commscale/io/result_json.hpp>

namespace {

/// True if two JSON values are equal, numbers within a relative 1e-14.
bool near(const nlohmann::json& a, const nlohmann::json& b) {
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        return std::fabs(x - y) <= 1e-14 * std::max(std::fabs(x), std::fabs(y));
    }
    if (a.type() != b.type() || a.size() != b.size()) return false;
    if (a.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it)
            if (!b.contains(it.key()) || !near(it.value(), b.at(it.key()))) return false;
        return true;
    }
    if (a.is_array()) {
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!near(a[i], b[i])) return false;
        return true;
    }
    return a == b;
}

template <class F>
void expect_value_or_input_error(F&& f) {
    try {
        f();
    } catch (const commscale::input_error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 65536) return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json j;
    try {
        j = commscale::io::parse_json(text, "fuzz");
    } catch (const commscale::input_error&) {
        return 0;
    }
    using namespace commscale;
    expect_value_or_input_error([&] {
        const commscale::link l = link_from_json(j, "link");
        if (!(l.per_direction.value() > 0) || !std::isfinite(l.per_direction.value())) std::abort();
        const nlohmann::json once = link_to_json(l);
        if (!near(link_to_json(link_from_json(once, "link")), once)) std::abort();
    });
    expect_value_or_input_error([&] { (void)links_from_json(j, "links"); });
    expect_value_or_input_error([&] {
        const accelerator a = accelerator_from_json(j, "accelerator");
        if (!(a.memory.value() > 0) || !(a.memory_bandwidth.value() > 0)) std::abort();
        const nlohmann::json once = accelerator_to_json(a);
        if (!near(accelerator_to_json(accelerator_from_json(once, "accelerator")), once)) std::abort();
    });
    expect_value_or_input_error([&] { (void)accelerators_from_json(j, "accelerators"); });
    expect_value_or_input_error([&] {
        const cluster c = io::cluster_from_json(j, "cluster");
        const nlohmann::json once = io::cluster_to_json(c);
        const cluster back = io::cluster_from_json(once, "cluster");
        if (back.nodes != c.nodes || back.node.gpus != c.node.gpus || !near(io::cluster_to_json(back), once)) std::abort();
    });
    // results: what a reader accepts writes a document that reads back to the same document
    auto exact = [&](auto tag, const char* path) {
        using T = decltype(tag);
        expect_value_or_input_error([&] {
            const nlohmann::json once = io::to_json(io::from_json<T>(j, path));
            if (io::to_json(io::from_json<T>(once, path)) != once) std::abort();
        });
    };
    exact(collective_result{}, "collective");
    exact(step_breakdown{}, "step");
    exact(planned{}, "plan");
    exact(search_result{}, "search");
    exact(search_report{}, "search");
    expect_value_or_input_error([&] {
        const plan p = io::plan_from_json(j, "plan");
        int layers = 0;  // the counts plan_from_json accepted
        for (const auto& x : j.at("stage_layers")) layers += x.get<int>();
        const nlohmann::json once = io::plan_to_json(p, layers);
        if (io::plan_to_json(io::plan_from_json(once, "plan"), layers) != once) std::abort();
    });
    expect_value_or_input_error([&] {
        const transformer m = io::model_from_json(j, "model");
        const nlohmann::json once = io::model_to_json(m);
        if (io::model_to_json(io::model_from_json(once, "model")) != once) std::abort();
    });
    return 0;
}
