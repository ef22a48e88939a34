// Compile-time checks of the spelling layer (detail/names.hpp): every enum's table names each
// enumerator once, the spellings read back to the same value, and the aliases read as their
// enumerators (compiled, never run).
#include <commscale/commscale.hpp>

namespace {
using namespace commscale;

/// Every value of the table reads back from its spelling, and no two spellings coincide.
template <named_enum E>
constexpr bool round_trips() {
    const auto& table = name_table(E{});
    for (std::size_t i = 0; i < table.size(); ++i) {
        if (from_name<E>(table[i].name) != table[i].value) return false;
        if (to_string(table[i].value) != table[i].name) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (table[j].name == table[i].name) return false;
    }
    return true;
}

static_assert(round_trips<collective_op>());
static_assert(round_trips<algorithm>());
static_assert(round_trips<protocol>());
static_assert(round_trips<dtype>());
static_assert(round_trips<link_kind>());
static_assert(round_trips<link_family>());
static_assert(round_trips<line_encoding>());
static_assert(round_trips<ib_rate>());
static_assert(round_trips<intra_fabric>());
static_assert(round_trips<framework>());
static_assert(round_trips<attention_kernel>());
static_assert(round_trips<pipeline_schedule>());
static_assert(round_trips<recompute>());
static_assert(round_trips<step_bottleneck>());
static_assert(round_trips<link_class>());
static_assert(round_trips<bottleneck_kind>());

// The aliases read as their enumerators; the '-' variants and "automatic" are not suggested.
static_assert(from_name<collective_op>("all-to-all") == collective_op::all_to_all);
static_assert(from_name<algorithm>("automatic") == algorithm::automatic);
static_assert(from_name<algorithm>("double-binary-tree") == algorithm::double_binary_tree);
static_assert(suggested_names_of<collective_op>().size() == name_table(collective_op{}).size());
static_assert(suggested_names_of<efficiency_mode>().back() == "default");

// The spellings CLI.md documents.
static_assert(to_string(collective_op::all_to_all) == "all_to_all");
static_assert(to_string(algorithm::automatic) == "auto");
static_assert(to_string(protocol::ll128) == "LL128");
static_assert(to_string(pipeline_schedule::one_f_one_b) == "1f1b");
static_assert(to_string(intra_fabric::switched) == "switch");
static_assert(to_string(framework::megatron_core) == "megatron-core");
static_assert(to_string(line_encoding::b128b130b) == "128b/130b");
static_assert(!from_name<dtype>("bfloat16").has_value());

// The limits are what the messages print.
static_assert(cluster_limits::nodes == 1'000'000 && cluster_limits::scale_up_domain == cluster_limits::nodes);
static_assert(plan_limits::degree == 1 << 20 && plan_limits::global_batch == 1 << 30);
}  // namespace
