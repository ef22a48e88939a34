// JSON round trip is the identity for every value type: for random links, accelerators, clusters
// (with random calibration) and models, from_json(to_json(x)) gives x back field by field.
// Integers, booleans, enums and names must match exactly. Real numbers must match to a relative
// 1e-15: the writer uses display units (GB/s, us, GiB, TFLOPS as CLI.md fixes them) and
// x / 1e9 * 1e9 may differ from x in the last bit (one rounding each way, < 2^-52 each), while
// nlohmann::json itself prints doubles with round-trip precision. Catalog links and accelerators
// round-trip bit for bit (checked at the end). Fixed seed; 100,000 values per type, a tenth under
// sanitizers (see properties.cpp).
#include "catch_shim.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/hardware/links.hpp>
#include <commscale/io/cluster_json.hpp>
#include <commscale/io/hardware_json.hpp>
#include <commscale/io/model_json.hpp>
#include <commscale/workload/models.hpp>

using namespace commscale;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COMMSCALE_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define COMMSCALE_TEST_SANITIZED 1
#endif

namespace {

#ifdef COMMSCALE_TEST_SANITIZED
constexpr int samples = 10'000;
#else
constexpr int samples = 100'000;
#endif

class rng {
public:
    explicit rng(std::uint64_t seed) : g_(seed) {}
    int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
    double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g_); }
    double log_uniform(double lo, double hi) { return std::exp(real(std::log(lo), std::log(hi))); }
    bool coin() { return integer(0, 1) == 1; }
    template <class T, std::size_t N>
    T pick(const std::array<T, N>& a) { return a[static_cast<std::size_t>(integer(0, static_cast<int>(N) - 1))]; }

private:
    std::mt19937_64 g_;
};

// A few fixed names (names are interned for the process lifetime, so not one per sample).
constexpr std::array<std::string_view, 3> sample_names{"my-nic", "lab-fabric", "x"};
constexpr std::array<std::string_view, 3> sources{"user-supplied", "measured 2024-06 with nccl-tests", "vendor sheet"};

bool close(double a, double b) { return a == b || std::fabs(a - b) <= 1e-15 * std::max(std::fabs(a), std::fabs(b)); }

commscale::link random_link(rng& r) {
    commscale::link l{};
    l.name = r.pick(sample_names);
    l.kind = static_cast<link_kind>(r.integer(0, 2));
    l.family = static_cast<link_family>(r.integer(0, 10));
    l.rdma = r.coin();
    l.lanes = r.integer(1, 32);
    l.links = r.integer(1, 18);
    l.per_direction = bytes_per_second(r.log_uniform(1e6, 1e15));
    l.per_lane = r.coin() ? l.per_direction / static_cast<double>(l.lanes * l.links) : bytes_per_second(r.log_uniform(1e6, 1e14));
    l.encoding = static_cast<line_encoding>(r.integer(0, 4));
    if (r.coin()) l.latency = seconds(r.log_uniform(1e-9, 1e-3));
    l.source = r.pick(sources);
    return l;
}

void check_link(const commscale::link& a, const commscale::link& b) {
    CHECK(a.name == b.name);
    CHECK(a.kind == b.kind);
    CHECK(a.family == b.family);
    CHECK(a.rdma == b.rdma);
    CHECK(a.lanes == b.lanes);
    CHECK(a.links == b.links);
    CHECK(close(a.per_direction.value(), b.per_direction.value()));
    CHECK(close(a.per_lane.value(), b.per_lane.value()));
    CHECK(a.encoding == b.encoding);
    REQUIRE(a.latency.has_value() == b.latency.has_value());
    if (a.latency) CHECK(close(a.latency->value(), b.latency->value()));
    CHECK(a.source == b.source);
}

link_class_params random_class(rng& r) {
    link_class_params p{};
    for (auto& d : p.step_latency) d = seconds(r.log_uniform(1e-8, 1e-4));
    p.efficiency = r.real(0.05, 1.0);
    p.half_size = bytes(r.coin() ? 0.0 : r.log_uniform(1.0, 1e12));
    p.exponent = r.real(0.01, 4.0);
    return p;
}

void check_class(const link_class_params& a, const link_class_params& b) {
    for (std::size_t i = 0; i < protocol_count; ++i) CHECK(close(a.step_latency[i].value(), b.step_latency[i].value()));
    CHECK(close(a.efficiency, b.efficiency));
    CHECK(close(a.half_size.value(), b.half_size.value()));
    CHECK(close(a.exponent, b.exponent));
}

}  // namespace

TEST_CASE("link JSON round trip is the identity on random links") {
    rng r(0x11'4c);
    for (int i = 0; i < samples; ++i) {
        const commscale::link l = random_link(r);
        INFO("sample " << i << ": " << link_to_json(l).dump());
        check_link(link_from_json(link_to_json(l), "link"), l);
    }
}

TEST_CASE("accelerator JSON round trip is the identity on random accelerators") {
    rng r(0xacc);
    constexpr std::array<std::string_view, 3> names{"my-gpu", "h100-sxm", "prototype"};
    constexpr std::array<std::string_view, 4> scale_up{"nvlink4", "nvlink3", "xgmi-mi300x", "pcie5-x16"};
    for (int i = 0; i < samples; ++i) {
        accelerator a{};
        a.name = r.pick(names);
        a.display_name = r.pick(sources);
        a.memory = bytes(r.log_uniform(1e6, 1e15));
        a.memory_bandwidth = bytes_per_second(r.log_uniform(1e9, 1e15));
        for (auto& p : a.dense_peak)
            if (r.coin()) p = flops_per_second(r.log_uniform(1e9, 1e18));
        if (!a.dense_peak[2]) a.dense_peak[2] = flops_per_second(989e12);  // at least one dtype
        a.scale_up_link = r.pick(scale_up);
        a.compute_efficiency = r.real(0.01, 1.0);
        a.source = r.pick(sources);
        INFO("sample " << i << ": " << accelerator_to_json(a).dump());
        const accelerator b = accelerator_from_json(accelerator_to_json(a), "accelerator");
        CHECK(b.name == a.name);
        CHECK(b.display_name == a.display_name);
        CHECK(close(b.memory.value(), a.memory.value()));
        CHECK(close(b.memory_bandwidth.value(), a.memory_bandwidth.value()));
        for (std::size_t k = 0; k < dtype_count; ++k) {
            REQUIRE(b.dense_peak[k].has_value() == a.dense_peak[k].has_value());
            if (a.dense_peak[k]) CHECK(close(b.dense_peak[k]->value(), a.dense_peak[k]->value()));
        }
        CHECK(b.scale_up_link == a.scale_up_link);
        CHECK(b.compute_efficiency == a.compute_efficiency);
        CHECK(b.source == a.source);
    }
}

TEST_CASE("cluster JSON round trip is the identity on random clusters with random calibration") {
    rng r(0xc105);
    constexpr std::array<std::string_view, 3> accs{"h100-sxm", "mi300x", ""};
    for (int i = 0; i < samples; ++i) {
        cluster c{};
        c.name = r.pick(sample_names);
        c.nodes = r.integer(1, 1'000'000);
        c.node.gpus = r.integer(1, 1024);
        c.node.accelerator = r.pick(accs);
        c.node.intra = r.coin() ? nvlink<4> : random_link(r);
        c.node.fabric = static_cast<intra_fabric>(r.integer(0, 2));
        c.node.in_switch_reduction = r.coin();
        c.node.pcie_p2p = r.coin();
        c.node.inter = r.coin() ? infiniband<ib_rate::ndr, 4> : random_link(r);
        c.node.nics = r.integer(1, 1024);
        c.node.gpudirect_rdma = r.coin();
        c.oversubscription = r.coin() ? 1.0 : r.real(1.0, 1000.0);
        c.nodes_per_leaf = r.integer(1, 1'000'000);
        c.rail_optimized = r.coin();
        c.in_network_reduction = r.coin();
        c.source = r.pick(sources);
        if (r.coin()) {
            comm_params& p = c.comm;
            for (auto& d : p.base_latency) d = seconds(r.log_uniform(1e-8, 1e-3));
            for (auto& f : p.protocol_bandwidth) f = r.real(0.01, 1.0);
            p.nvlink = random_class(r);
            p.pci = random_class(r);
            p.net = random_class(r);
            p.nvls_efficiency = r.real(0.01, 10.0);
            p.sharp_efficiency = r.real(0.01, 10.0);
            p.channels = r.integer(0, 1024);
            for (auto& b : p.channel_bandwidth) b = bytes_per_second(r.coin() ? 0.0 : r.log_uniform(1e6, 1e14));
        }
        const nlohmann::json j = io::cluster_to_json(c);
        INFO("sample " << i << ": " << j.dump());
        const cluster b = io::cluster_from_json(j, "cluster");
        CHECK(b.name == c.name);
        CHECK(b.nodes == c.nodes);
        CHECK(b.node.gpus == c.node.gpus);
        CHECK(b.node.accelerator == c.node.accelerator);
        check_link(b.node.intra, c.node.intra);
        CHECK(b.node.fabric == c.node.fabric);
        CHECK(b.node.in_switch_reduction == c.node.in_switch_reduction);
        CHECK(b.node.pcie_p2p == c.node.pcie_p2p);
        check_link(b.node.inter, c.node.inter);
        CHECK(b.node.nics == c.node.nics);
        CHECK(b.node.gpudirect_rdma == c.node.gpudirect_rdma);
        CHECK(b.oversubscription == c.oversubscription);
        CHECK(b.nodes_per_leaf == c.nodes_per_leaf);
        CHECK(b.rail_optimized == c.rail_optimized);
        CHECK(b.in_network_reduction == c.in_network_reduction);
        CHECK(b.source == c.source);
        for (std::size_t k = 0; k < protocol_count; ++k) {
            CHECK(close(b.comm.base_latency[k].value(), c.comm.base_latency[k].value()));
            CHECK(b.comm.protocol_bandwidth[k] == c.comm.protocol_bandwidth[k]);
            CHECK(close(b.comm.channel_bandwidth[k].value(), c.comm.channel_bandwidth[k].value()));
        }
        check_class(b.comm.nvlink, c.comm.nvlink);
        check_class(b.comm.pci, c.comm.pci);
        check_class(b.comm.net, c.comm.net);
        CHECK(b.comm.nvls_efficiency == c.comm.nvls_efficiency);
        CHECK(b.comm.sharp_efficiency == c.comm.sharp_efficiency);
        CHECK(b.comm.channels == c.comm.channels);
    }
}

TEST_CASE("model JSON round trip is the identity on random models") {
    rng r(0x0de1);
    constexpr std::array<std::string_view, 2> names{"my-model", "llama3-8b"};
    for (int i = 0; i < samples; ++i) {
        transformer m{};
        m.name = r.pick(names);
        m.kv_heads = 1 << r.integer(0, 4);
        m.heads = m.kv_heads * r.integer(1, 16);
        m.hidden = m.heads * r.integer(1, 256);
        m.layers = r.integer(1, 512);
        m.ffn = r.integer(1, 1 << 20);
        m.vocab = r.integer(1, 1 << 20);
        m.max_seq = r.integer(1, 1 << 20);
        m.experts = r.coin() ? 1 : r.integer(2, 256);
        m.experts_per_token = r.integer(1, m.experts);
        m.gated_mlp = r.coin();
        m.tied_embeddings = r.coin();
        m.learned_positions = r.coin();
        m.biases = r.coin();
        m.source = r.pick(sources);
        if (m.experts > 1) {
            m.expert_ffn = r.coin() ? 0 : r.integer(1, 1 << 16);
            m.shared_experts = r.integer(0, 4);
            m.dense_layers = r.integer(0, m.layers - 1);
            m.mtp_layers = r.integer(0, 2);
            if (m.mtp_layers > 0 && r.coin()) m.mtp_depths = m.mtp_layers + r.integer(0, 2);
            if (r.coin()) m.moe_latent = r.integer(1, 1 << 14);  // LatentMoE
        }
        if (r.coin()) {  // multi-head latent attention
            m.kv_lora_rank = r.integer(1, 1024);
            m.q_lora_rank = r.coin() ? 0 : r.integer(1, 2048);
            m.qk_nope_head_dim = r.integer(0, 256);
            m.qk_rope_head_dim = r.integer(m.qk_nope_head_dim == 0 ? 1 : 0, 128);
            m.v_head_dim = r.integer(1, 256);
        }
        if (r.coin()) {
            m.sliding_layers = r.integer(1, m.layers);
            m.sliding_window = r.integer(1, 1 << 16);
        }
        m.attention_sinks = r.coin();
        m.attention_output_gate = !m.is_mla() && r.coin();
        m.qk_layernorm = !m.is_mla() && r.coin();
        if (r.coin()) m.rope_attention_factor = r.real(0.5, 3.0);
        m.post_norms = r.coin();
        if (r.coin()) m.attn_logit_softcapping = r.real(1.0, 100.0);
        if (r.coin()) m.final_logit_softcapping = r.real(1.0, 100.0);
        // stay within validate's 1e15 parameters (MoE shapes with huge FFNs exceed it)
        while (total_parameters(m) > max_model_parameters) {
            m.ffn = std::max(1, m.ffn / 2);
            m.expert_ffn = m.expert_ffn / 2;
        }
        INFO("sample " << i << ": " << io::model_to_json(m).dump());
        const transformer b = io::model_from_json(io::model_to_json(m), "model");
        CHECK(b.name == m.name);
        CHECK(b.layers == m.layers);
        CHECK(b.hidden == m.hidden);
        CHECK(b.heads == m.heads);
        CHECK(b.kv_heads == m.kv_heads);
        CHECK(b.ffn == m.ffn);
        CHECK(b.vocab == m.vocab);
        CHECK(b.max_seq == m.max_seq);
        CHECK(b.experts == m.experts);
        CHECK(b.experts_per_token == m.experts_per_token);
        CHECK(b.gated_mlp == m.gated_mlp);
        CHECK(b.tied_embeddings == m.tied_embeddings);
        CHECK(b.learned_positions == m.learned_positions);
        CHECK(b.biases == m.biases);
        CHECK(b.source == m.source);
        CHECK(b.expert_width() == m.expert_width());
        CHECK(b.shared_experts == m.shared_experts);
        CHECK(b.dense_layers == m.dense_layers);
        CHECK(b.mtp_layers == m.mtp_layers);
        CHECK(b.mtp_depths == m.mtp_depths);
        CHECK(b.moe_latent == m.moe_latent);
        CHECK(b.kv_lora_rank == m.kv_lora_rank);
        CHECK(b.q_lora_rank == m.q_lora_rank);
        CHECK(b.qk_nope_head_dim == m.qk_nope_head_dim);
        CHECK(b.qk_rope_head_dim == m.qk_rope_head_dim);
        CHECK(b.v_head_dim == m.v_head_dim);
        CHECK(b.sliding_layers == m.sliding_layers);
        CHECK(b.sliding_window == m.sliding_window);
        CHECK(b.attention_sinks == m.attention_sinks);
        CHECK(b.attention_output_gate == m.attention_output_gate);
        CHECK(b.qk_layernorm == m.qk_layernorm);
        CHECK(b.rope_attention_factor == m.rope_attention_factor);
        CHECK(b.post_norms == m.post_norms);
        CHECK(b.attn_logit_softcapping == m.attn_logit_softcapping);
        CHECK(b.final_logit_softcapping == m.final_logit_softcapping);
        CHECK(total_parameters(b) == total_parameters(m));
    }
}

TEST_CASE("catalog links and accelerators round-trip bit for bit, cluster presets to 1e-15") {
    for (const commscale::link& l : all_links()) {
        INFO(l.name);
        const commscale::link b = link_from_json(link_to_json(l), "link");
        CHECK(b.per_direction == l.per_direction);
        CHECK(b.per_lane == l.per_lane);
        CHECK(b.latency == l.latency);
    }
    for (const accelerator& a : all_accelerators()) {
        INFO(a.name);
        const accelerator b = accelerator_from_json(accelerator_to_json(a), "accelerator");
        CHECK(b.memory == a.memory);
        CHECK(b.memory_bandwidth == a.memory_bandwidth);
        CHECK(b.dense_peak == a.dense_peak);
    }
    // Cluster calibration blocks are written in us / GB/s in full (all fields), so a preset with a
    // non-default block (dgx-b200: nvls_efficiency 0.74) goes through 0.6e-6 s -> 0.6 us -> s,
    // which may change the last bit: compared to 1e-15 here, the fields that are not scaled exactly.
    for (const cluster& c : all_clusters()) {
        INFO(c.name);
        const cluster b = io::cluster_from_json(io::cluster_to_json(c), "cluster");
        for (std::size_t k = 0; k < protocol_count; ++k) CHECK(close(b.comm.base_latency[k].value(), c.comm.base_latency[k].value()));
        check_class(b.comm.nvlink, c.comm.nvlink);
        check_class(b.comm.net, c.comm.net);
        CHECK(b.comm.nvls_efficiency == c.comm.nvls_efficiency);
        CHECK(b.comm.sharp_efficiency == c.comm.sharp_efficiency);
    }
}

TEST_CASE("data/clusters/*.json carry the presets' calibration parameters exactly") {
    // The preset comparison in clusters.cpp covers the topology fields; this covers `comm`
    // (a partial "calibration" block in the file must reproduce the header's comm_params).
    for (const cluster& c : all_clusters()) {
        INFO(c.name);
        const cluster f = io::load_cluster_file(std::string(COMMSCALE_DATA_DIR) + "/clusters/" + std::string(c.name) + ".json");
        CHECK(io::same_comm_params(f.comm, c.comm));
        CHECK(f.node.accelerator == c.node.accelerator);
        CHECK(f.node.in_switch_reduction == c.node.in_switch_reduction);
        CHECK(f.node.pcie_p2p == c.node.pcie_p2p);
        CHECK(f.node.fabric == c.node.fabric);
    }
}
