#pragma once
// Rows of keyword values for the Python module's step and collective functions: what cs.step and
// cs.collective receive (one row) and what cs.steps and cs.collectives receive (a column of values
// per keyword, scalars broadcast). A row fills the command's request as its options would
// (request_rows: step's cli::step_request, collective's cli::collective_command_request), so a row
// gives exactly what the command line gives for the same options, defaults and derivations included,
// without text: a Python int or float is read as the number the CLI reads from its text, and
// where the CLI would refuse the text the row refuses the same text with the same message
// (cli::given_value, cli::reads).
// No Python here: module.cpp turns Python objects into cells.
#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <commscale/error.hpp>
#include <commscale/hardware/topology.hpp>
#include <commscale/units/parse.hpp>
#include <commscale/workload/transformer.hpp>

#include "cli.hpp"
#include "options.hpp"

namespace commscale_python {

using cli::float_text;  // Python's repr() of a float: how the module writes a float for the command line

/// One keyword value of one row (16 bytes: a batch holds one per row of each sequence).
struct cell {
    enum class kind : unsigned char {
        none,     ///< None: the option is left out
        boolean,  ///< True / False
        integer,  ///< a Python int that fits in 64 bits
        real,     ///< a Python float
        text,     ///< a string, or the text the module writes for any other value
        parsed,   ///< a model or cluster parsed before the rows (`integer`: index into the batch's)
    };
    kind k = kind::none;
    bool boolean = false;
    union {
        long long integer = 0;
        double real;
        const std::string* text;  ///< held by the column (texts)
    };

    /// The text the command line would receive for the value (Python's str() of it).
    [[nodiscard]] std::string as_text() const {
        switch (k) {
            case kind::boolean: return boolean ? "True" : "False";
            case kind::integer: return std::to_string(integer);
            case kind::real: return float_text(real);
            case kind::text: return *text;
            default: return std::string();
        }
    }
    /// The value as an error message shows it: texts quoted, as the CLI quotes what it was given.
    [[nodiscard]] std::string shown() const { return k == kind::text ? "'" + *text + "'" : as_text(); }
};

/// One keyword of a call: the option it stands for and its value, one cell for every row or one
/// for all (a scalar).
struct column {
    std::string name;                         ///< the option, without "--" (micro-batch)
    const cli::option_spec* spec = nullptr;   ///< the command's option
    bool sequence = false;                    ///< one cell per row (else one cell, broadcast)
    std::vector<cell> cells;
    std::deque<std::string> texts;            ///< the text cells' texts (stable addresses)

    [[nodiscard]] const cell& at(std::size_t row) const { return sequence ? cells[row] : cells.front(); }
};

/// A model or cluster given to a call, parsed once before the rows: the value or why not.
using cli::parsed;

/// What a call evaluates: its keywords, the models and clusters they name, and the row count.
struct batch {
    const cli::command* command = nullptr;
    std::vector<column> columns;
    std::vector<parsed<commscale::transformer>> models;
    std::vector<parsed<commscale::cluster>> clusters;
    std::size_t rows = 1;
    std::uint64_t given = ~std::uint64_t{0};  ///< index()'s bits of the columns' names (all: not indexed)

    /// The column of option `name`, or nullptr. Rows ask for dozens of options each, most of them
    /// not given: a bit per (length, first and last letter) rules most out before any comparison.
    [[nodiscard]] bool may_have(std::string_view name) const { return !name.empty() && (given & bit(name)) != 0; }
    [[nodiscard]] const column* find(std::string_view name) const {
        if (!may_have(name)) return nullptr;
        for (const column& c : columns)
            if (same(c.name, name)) return &c;
        return nullptr;
    }
    /// Records the columns' names for find (after the columns are added).
    void index() {
        given = 0;
        for (const column& c : columns)
            if (!c.name.empty()) given |= bit(c.name);
    }
    [[nodiscard]] static constexpr std::uint64_t bit(std::string_view name) {
        const auto h = name.size() * 31u + static_cast<unsigned char>(name.front()) * 7u + static_cast<unsigned char>(name.back());
        return std::uint64_t{1} << (h & 63u);
    }
    [[nodiscard]] static bool same(std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i] != b[i]) return false;
        return true;
    }
};

/// A row that failed: the message and kind of failure the command line reports (also what an
/// option's reader throws for a model or cluster whose parse failed).
using row_failure = cli::parse_failed;

/// One row of a batch: the checks of its values (request_rows fills the command's request from
/// them).
class row_source {
public:
    row_source(const batch& b, std::size_t row) : b_(&b), row_(row) {}

    /// A cell as the value an option is given: an int or float as the number, anything else as its
    /// text.
    [[nodiscard]] static cli::given_value given(const cell& v) {
        switch (v.k) {
            case cell::kind::integer: return cli::given_value::of_integer(v.integer);
            case cell::kind::real: return cli::given_value::of_real(v.real);
            case cell::kind::text: return cli::given_value::of_text(*v.text);
            default: break;
        }
        return cli::given_value::of_text(v.k == cell::kind::boolean ? (v.boolean ? "True" : "False") : "");
    }

    /// Throws the failure of a value the row cannot take: a flag given anything but True, False or
    /// None, an option that takes a value given True (which the command line cannot spell). The
    /// scalars first (a batch checks them once), then the sequences.
    void check() const {
        check_scalars();
        check_sequences();
    }
    void check_scalars() const {
        for (const column& c : b_->columns)
            if (!c.sequence) check(c);
    }
    void check_sequences() const {
        for (const column& c : b_->columns)
            if (c.sequence) check(c);
    }

    [[nodiscard]] const batch& source() const { return *b_; }
    [[nodiscard]] std::size_t row() const { return row_; }

private:
    void check(const column& c) const {
        const cell& v = c.at(row_);
        if (v.k == cell::kind::none || v.k == cell::kind::parsed) return;
        if (!c.spec->takes_value && v.k != cell::kind::boolean)
            throw commscale::input_error("--" + c.name, v.shown(), "True, False or None (a flag)");
        if (c.spec->takes_value && v.k == cell::kind::boolean && v.boolean)
            throw commscale::input_error("--" + c.name, "True", "a value: " + (c.spec->help.empty() ? std::string("see --help") : c.spec->help));
    }
    const batch* b_;
    std::size_t row_;
};

/// A batch's keywords as the options of a command bound to its request `R` (options.hpp), each
/// column bound once to its option: the request of a row holds what the command line's would for
/// the same options. A flag given True sets it; a flag X given False sets no-X where the command
/// has it (as the command line's no-X would); None and False leave a value out.
template <class R>
class request_rows {
public:
    request_rows(const batch& b, const std::vector<cli::bound_option<R>>& options) : b_(&b) {
        const auto named = [&](std::string_view name) -> const cli::bound_option<R>* {
            for (const cli::bound_option<R>& o : options)
                if (o.take && batch::same(o.spec.name, name)) return &o;
            return nullptr;
        };
        for (const column& c : b.columns) {
            const cli::bound_option<R>* on = named(c.name);
            const cli::bound_option<R>* off = !c.spec->takes_value ? named("no-" + c.name) : nullptr;
            if (on || off) bindings_.push_back({&c, on, off, parsed_of(c.name)});
        }
    }

    /// The request of row `row` (whose values row_source::check has accepted).
    [[nodiscard]] R of(std::size_t row) const {
        R r{};
        for (const binding& x : bindings_) {
            const cell& v = x.c->at(row);
            if (v.k == cell::kind::none) continue;
            if (v.k == cell::kind::parsed) {
                if (x.on && x.parsed != parsed_kind::none) x.on->take(r, value_of_parsed(x, v));
            } else if (v.k == cell::kind::boolean) {
                const cli::bound_option<R>* o = v.boolean ? x.on : x.off;
                if (o && !o->spec.takes_value) o->take(r, cli::given_value{});
            } else if (x.on && x.on->spec.takes_value) {
                x.on->take(r, row_source::given(v));
            }
        }
        return r;
    }

private:
    /// Which of the batch's parsed values a column's parsed cells index.
    enum class parsed_kind : unsigned char { none, model, cluster };
    struct binding {
        const column* c;
        const cli::bound_option<R>* on;   ///< the column's option
        const cli::bound_option<R>* off;  ///< no-X of a flag X, given False
        parsed_kind parsed = parsed_kind::none;
    };
    [[nodiscard]] static parsed_kind parsed_of(std::string_view name) {
        if (batch::same(name, "model")) return parsed_kind::model;
        if (batch::same(name, "cluster")) return parsed_kind::cluster;
        return parsed_kind::none;
    }
    /// The value of parsed cell `v` of binding `x`: the batch's model or cluster it indexes.
    [[nodiscard]] cli::given_value value_of_parsed(const binding& x, const cell& v) const {
        const auto i = static_cast<std::size_t>(v.integer);
        if (x.parsed == parsed_kind::model) return cli::given_value::of_parsed(b_->models.at(i));
        return cli::given_value::of_parsed(b_->clusters.at(i));
    }
    const batch* b_;
    std::vector<binding> bindings_;
};

/// The options a cluster depends on (cli::resolve_cluster_gpus): the topology flags and --gpus.
[[nodiscard]] inline const std::vector<std::string>& cluster_options() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const cli::option_spec& o : cli::topology_options()) out.push_back(o.name);
        out.push_back("gpus");
        return out;
    }();
    return names;
}

/// The options step's cluster and model depend on: the cluster's and --model (which, with them,
/// picks the demo: cli::is_demo).
[[nodiscard]] inline const std::vector<std::string>& step_cluster_options() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out = cluster_options();
        out.push_back("model");
        return out;
    }();
    return names;
}

/// The failure of the exception being handled, rows' own included.
[[nodiscard]] inline cli::failure current_row_failure() {
    try {
        throw;
    } catch (const row_failure& f) {
        return f.what;
    } catch (...) {
        return cli::current_failure();
    }
}

/// What `read` gives for a batch where no row changes it (the options it reads are scalars or
/// absent): read once, for the first row; else nothing, and each row reads it.
template <class T>
struct invariant {
    bool holds = false;
    std::optional<T> value;
    cli::failure error;

    /// The value, or the row's own when it varies; throws the failure where reading fails.
    template <class Read>
    [[nodiscard]] T get(const row_source& a, Read&& read) const {
        if (!holds) return read(a);
        if (!value) throw row_failure{error};
        return *value;
    }
};

/// `read` (of the first row's request) depends on the options `depends_on` only.
template <class T, class Read>
[[nodiscard]] invariant<T> find_invariant(const batch& b, Read&& read, const std::vector<std::string>& depends_on) {
    invariant<T> out;
    if (b.rows == 0) return out;
    const row_source first(b, 0);
    try {
        out.value = read(first);
    } catch (...) {
        out.error = current_row_failure();
    }
    out.holds = std::none_of(depends_on.begin(), depends_on.end(), [&](const std::string& name) {
        const column* c = b.find(name);
        return c != nullptr && c->sequence && b.rows > 1;
    });
    return out;
}

// ---------------------------------------------------------------- outputs

/// Where the rows write their numbers and texts: one buffer per column, owned by the caller (the
/// module hands Python's bytearrays), written by row index from any thread.
struct table {
    std::vector<double*> reals;              ///< per number column of type real (NaN for failed rows)
    std::vector<long long*> integers;        ///< per number column of type integer (0 for failed rows)
    std::vector<unsigned char*> booleans;    ///< per number column of type boolean (0 for failed rows)
    std::vector<std::uint32_t*> labels;      ///< per label column: 1 + the index into label_names
    std::vector<std::vector<std::string>> label_names;  ///< per label column, in order of first use
    std::mutex label_mutex;
    std::vector<std::pair<std::size_t, cli::failure>> failures;  ///< failed rows (any order)
    std::mutex failure_mutex;
};

/// One thread's view of a table: its cache of label codes (a few distinct texts per column).
class table_writer {
public:
    explicit table_writer(table& t) : t_(&t), cache_(t.labels.size()) {}

    /// Writes a label: 1 + its index in the table's names (0 is a failed row's). `lasting`: the
    /// text lives as long as the process (a catalog or interned name), so the same address is the
    /// same text, found without comparing the texts.
    void label(std::size_t column, std::size_t row, std::string_view text, bool lasting) {
        std::vector<entry>& cache = cache_[column];
        if (lasting)
            for (const entry& e : cache)
                if (e.address == text.data() && e.size == text.size()) {
                    t_->labels[column][row] = e.code;
                    return;
                }
        std::uint32_t code = 0;
        for (const entry& e : cache)
            if (batch::same(e.text, text)) {
                code = e.code;
                break;
            }
        if (code == 0) {
            const std::lock_guard<std::mutex> lock(t_->label_mutex);
            auto& names = t_->label_names[column];
            const auto it = std::find(names.begin(), names.end(), text);
            code = static_cast<std::uint32_t>(it - names.begin()) + 1;
            if (it == names.end()) names.emplace_back(text);
        }
        if (cache.size() < 64) cache.push_back({std::string(text), lasting ? text.data() : nullptr, text.size(), code});
        t_->labels[column][row] = code;
    }
    /// Marks a row failed: NaN, 0 and no label in every column, the failure kept.
    void fail(std::size_t row, cli::failure f) {
        for (double* c : t_->reals) c[row] = std::numeric_limits<double>::quiet_NaN();
        for (long long* c : t_->integers) c[row] = 0;
        for (unsigned char* c : t_->booleans) c[row] = 0;
        for (std::uint32_t* c : t_->labels) c[row] = 0;
        const std::lock_guard<std::mutex> lock(t_->failure_mutex);
        t_->failures.emplace_back(row, std::move(f));
    }

private:
    struct entry {
        std::string text;
        const char* address;  ///< of a lasting text (else nullptr)
        std::size_t size;
        std::uint32_t code;
    };
    table* t_;
    std::vector<std::vector<entry>> cache_;  ///< per label column, the texts this thread has seen
};

/// Where number column I of `Columns` goes among the table's columns of its type.
template <const auto& Columns, std::size_t I>
[[nodiscard]] constexpr std::size_t slot_of() {
    std::size_t n = 0;
    for (std::size_t k = 0; k < I; ++k)
        if (Columns[k].type == Columns[I].type) ++n;
    return n;
}

template <const auto& Columns, std::size_t I, class Prediction>
void write_number(table& t, std::size_t row, const Prediction& x) {
    constexpr auto c = Columns[I];
    constexpr std::size_t slot = slot_of<Columns, I>();
    if constexpr (c.type == cli::column_type::real) t.reals[slot][row] = c.value(x);
    else if constexpr (c.type == cli::column_type::integer) t.integers[slot][row] = static_cast<long long>(c.value(x));
    else t.booleans[slot][row] = c.value(x) != 0 ? 1 : 0;
}

template <const auto& Columns, class Prediction, std::size_t... I>
void write_numbers(table& t, std::size_t row, const Prediction& x, std::index_sequence<I...>) {
    (write_number<Columns, I>(t, row, x), ...);
}

/// Writes a prediction's numbers into the table's number columns (made from `Columns` in order:
/// the reals, integers and booleans each in the order of the array). Unrolled, so that each
/// column's reader is inlined.
template <const auto& Columns, class Prediction>
void write_numbers(table& t, std::size_t row, const Prediction& x) {
    write_numbers<Columns>(t, row, x, std::make_index_sequence<Columns.size()>{});
}

/// Runs `row(index, writer)` for every row on `threads` threads (fewer for small batches), each
/// taking blocks of rows in turn.
template <class Row>
void for_each_row(std::size_t rows, unsigned threads, table& t, Row&& row) {
    constexpr std::size_t block = 512;
    const std::size_t blocks = (rows + block - 1) / block;
    const unsigned n = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, blocks)));
    std::atomic<std::size_t> next{0};
    auto work = [&] {  // `row` handles its own failures
        table_writer w(t);
        for (std::size_t k; (k = next.fetch_add(1)) < blocks;)
            for (std::size_t i = k * block, end = std::min(rows, i + block); i < end; ++i) row(i, w);
    };
    std::vector<std::thread> pool;
    pool.reserve(n - 1);
    for (unsigned i = 1; i < n; ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
}

}  // namespace commscale_python
