// The Python module `commscale` (its native part, commscale._core): runs the CLI's commands
// in-process and returns each command's --json document as Python objects, so that Python and the
// command line share one contract (CLI.md): the same keys, the same values, the same error messages.
// The pure-Python layer (commscale/__init__.py) turns keyword arguments into the command's flags.
//
// `step` and `collective` take their keywords without a command line: each keyword is a cell of a
// row (rows.hpp) that the CLI's own option readers read, so a call gives what the command prints
// for the same flags. `steps` and `collectives` evaluate many rows (a column of values per
// keyword) without the GIL, on several threads, into one buffer per result key; models and
// clusters are parsed once per call, or once for good as handles (ModelValue, ClusterValue).
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "app.hpp"
#include <commscale/version.hpp>
#include "cli.hpp"
#include "model.hpp"
#include "rows.hpp"
#include "step_args.hpp"
#include "topology.hpp"

namespace py = pybind11;

namespace commscale_python {

/// A model parsed once (the handle inside cs.model()'s result): the inline JSON it was parsed from
/// (the model dict without the keys `model --json` adds) and the value.
struct model_value {
    std::string text;
    commscale::transformer value;
};

/// A cluster parsed once (the handle inside cs.cluster()'s result).
struct cluster_value {
    std::string text;
    commscale::cluster value;
};

namespace {

/// The Python string of a JSON key. Commands print the same few hundred keys again and again, so
/// each is made once and kept (called with the GIL held).
py::handle key_of(const std::string& key) {
    static std::unordered_map<std::string, PyObject*> made;
    auto it = made.find(key);
    if (it == made.end()) {
        PyObject* s = PyUnicode_FromStringAndSize(key.data(), static_cast<Py_ssize_t>(key.size()));
        if (!s) throw py::error_already_set();
        PyUnicode_InternInPlace(&s);
        it = made.emplace(key, s).first;  // kept for the life of the process
    }
    return it->second;
}

/// nlohmann::json -> Python: objects become dicts, arrays lists, numbers int or float, null None.
py::object to_python(const nlohmann::json& j) {
    using t = nlohmann::json::value_t;
    switch (j.type()) {
        case t::null:
        case t::discarded: return py::none();
        case t::boolean: return py::bool_(j.get<bool>());
        case t::number_integer: return py::int_(j.get<std::int64_t>());
        case t::number_unsigned: return py::int_(j.get<std::uint64_t>());
        case t::number_float: return py::float_(j.get<double>());
        case t::string: return py::str(j.get_ref<const std::string&>());
        case t::binary: return py::none();  // never produced by a command
        case t::array: {
            py::list l(j.size());
            std::size_t i = 0;
            for (const auto& v : j) l[i++] = to_python(v);
            return l;
        }
        case t::object: {
            py::dict d;
            for (auto it = j.begin(); it != j.end(); ++it)
                if (PyDict_SetItem(d.ptr(), key_of(it.key()).ptr(), to_python(it.value()).ptr()) != 0)
                    throw py::error_already_set();
            return d;
        }
    }
    return py::none();
}

/// Raises a failure as the module does: ValueError for invalid input, RuntimeError otherwise.
[[noreturn]] void raise(const cli::failure& f) {
    if (f.invalid_input) throw py::value_error(f.message);
    throw std::runtime_error(f.message);
}

/// A registered command (they register before the module is imported).
const cli::command& command_named(const std::string& name) {
    const cli::command* c = cli::find_command(name);
    if (!c) throw std::logic_error("commscale: no command '" + name + "'");
    return *c;
}

/// A command's options that are flags (no value), for turning True/False keywords into flags.
std::vector<std::string> options_of(const std::string& name, bool flags) {
    std::vector<std::string> out;
    for (const auto& o : command_named(name).options)
        if (o.takes_value != flags) out.push_back(o.name);
    return out;
}

/// Runs `commscale ARGV... --json`. Returns the JSON document as Python objects; raises ValueError
/// with the CLI's one-line message on invalid input (exit 2) and RuntimeError on an internal error.
/// `model` and `cluster` (handles or None): an argument equal to a handle's text is not parsed again.
py::object run(std::vector<std::string> argv, const model_value* model, const cluster_value* cluster) {
    argv.emplace_back("--json");
    nlohmann::json doc;
    // reused across calls (constructing a stream costs about as much as a collective prediction)
    thread_local std::ostringstream out, err;
    out.str(std::string());
    out.clear();
    err.str(std::string());
    err.clear();
    int rc = 0;
    {
        py::gil_scoped_release unlocked;  // commands never touch Python objects (plan runs threads)
        const cli::capture_json capture(doc);
        cli::parsed_model_slot() = model ? cli::parsed_model{model->text, &model->value} : cli::parsed_model{};
        cli::parsed_cluster_slot() = cluster ? cli::parsed_cluster{cluster->text, &cluster->value} : cli::parsed_cluster{};
        rc = cli::run(argv, out, err);
        cli::parsed_model_slot() = {};
        cli::parsed_cluster_slot() = {};
    }
    std::string message = err.str();
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
    if (rc == 2) throw py::value_error(message);
    if (rc != 0) throw std::runtime_error(message.empty() ? "commscale: internal error" : message);
    if (doc.is_null() && !out.str().empty()) doc = nlohmann::json::parse(out.str());
    return to_python(doc);
}

// ---------------------------------------------------------------- Python values -> rows

/// Python values as cells of a column: ints (64-bit), floats, bools and None as they are; strings
/// and anything else (through commscale._cell: NumPy's bool as a bool, else the text a command line
/// would get) as texts held by the column, each distinct string object once.
class converter {
public:
    explicit converter(py::handle text_of) : text_of_(text_of) {}

    [[nodiscard]] cell operator()(PyObject* o, column& into) const {
        cell c;
        if (o == Py_None) return c;
        if (PyBool_Check(o)) {
            c.k = cell::kind::boolean;
            c.boolean = o == Py_True;
            return c;
        }
        if (PyLong_CheckExact(o)) {
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
            if (overflow == 0) {
                c.k = cell::kind::integer;
                c.integer = v;
                return c;
            }
            return text(into, py::str(o).cast<std::string>());
        }
        if (PyFloat_Check(o)) {  // float subclasses too (NumPy's float64): written as repr(float(x))
            c.k = cell::kind::real;
            c.real = PyFloat_AsDouble(o);
            return c;
        }
        if (PyUnicode_CheckExact(o)) {
            // a column of strings repeats a few objects (or a few texts): each is held once
            if (seen_column_ != &into) {
                seen_column_ = &into;
                seen_.clear();
            }
            for (const auto& [object, known] : seen_)
                if (object == o) return known;
            Py_ssize_t size = 0;
            const char* data = PyUnicode_AsUTF8AndSize(o, &size);
            if (!data) throw py::error_already_set();
            const std::string_view t(data, static_cast<std::size_t>(size));
            const cell found = seen_text(into, t);
            if (seen_.size() < 16) seen_.emplace_back(o, found);
            return found;
        }
        const py::object v = text_of_(py::handle(o));
        if (PyBool_Check(v.ptr())) return (*this)(v.ptr(), into);
        return text(into, v.cast<std::string>());
    }

    /// The cells of a contiguous one-dimensional buffer of int64 ('l'/'q'), float64 ('d'), bool
    /// ('?') or fixed-width string ('Nw') values (a NumPy array's memoryview); false for any other
    /// buffer.
    bool buffer(const Py_buffer& view, column& into) const {
        if (view.ndim != 1 || view.format == nullptr || view.itemsize <= 0) return false;
        const std::string_view format(view.format);
        const auto n = static_cast<std::size_t>(view.len / view.itemsize);
        into.cells.resize(n);
        if ((format == "l" || format == "q") && view.itemsize == sizeof(long long)) {
            const auto* v = static_cast<const long long*>(view.buf);
            for (std::size_t i = 0; i < n; ++i) {
                into.cells[i].k = cell::kind::integer;
                into.cells[i].integer = v[i];
            }
        } else if (format == "d" && view.itemsize == sizeof(double)) {
            const auto* v = static_cast<const double*>(view.buf);
            for (std::size_t i = 0; i < n; ++i) {
                into.cells[i].k = cell::kind::real;
                into.cells[i].real = v[i];
            }
        } else if (format == "?" && view.itemsize == 1) {
            const auto* v = static_cast<const unsigned char*>(view.buf);
            for (std::size_t i = 0; i < n; ++i) {
                into.cells[i].k = cell::kind::boolean;
                into.cells[i].boolean = v[i] != 0;
            }
        } else if (!format.empty() && format.back() == 'w' && view.itemsize % 4 == 0) {
            // NumPy's fixed-width strings (UCS-4, NUL-padded): each distinct run of text held once
            const auto width = static_cast<std::size_t>(view.itemsize) / 4;
            const auto* v = static_cast<const char32_t*>(view.buf);
            std::u32string_view previous;
            cell previous_cell;
            for (std::size_t i = 0; i < n; ++i) {
                std::u32string_view code_points(v + i * width, width);
                while (!code_points.empty() && code_points.back() == U'\0') code_points.remove_suffix(1);
                if (i == 0 || code_points != previous) {
                    previous = code_points;
                    previous_cell = seen_text(into, utf8(code_points));
                }
                into.cells[i] = previous_cell;
            }
        } else {
            into.cells.clear();
            return false;
        }
        return true;
    }

private:
    static cell text(column& into, std::string t) {
        cell c;
        c.k = cell::kind::text;
        c.text = &into.texts.emplace_back(std::move(t));
        return c;
    }
    /// UTF-8 of code points (NumPy's strings hold valid ones; anything else becomes U+FFFD).
    [[nodiscard]] static std::string utf8(std::u32string_view code_points) {
        std::string out;
        for (char32_t c : code_points) {
            if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
            if (c < 0x80) {
                out += static_cast<char>(c);
            } else if (c < 0x800) {
                out += static_cast<char>(0xC0 | (c >> 6));
                out += static_cast<char>(0x80 | (c & 0x3F));
            } else if (c < 0x10000) {
                out += static_cast<char>(0xE0 | (c >> 12));
                out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
                out += static_cast<char>(0x80 | (c & 0x3F));
            } else {
                out += static_cast<char>(0xF0 | (c >> 18));
                out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
                out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
                out += static_cast<char>(0x80 | (c & 0x3F));
            }
        }
        return out;
    }
    py::handle text_of_;  // commscale._cell
    /// A text cell for `t`: the column's earlier cell of the same text, among its last few texts.
    [[nodiscard]] cell seen_text(column& into, std::string_view t) const {
        const std::size_t n = into.texts.size();
        for (std::size_t i = n; i > 0 && i + 8 > n; --i)
            if (into.texts[i - 1] == t) {
                cell c;
                c.k = cell::kind::text;
                c.text = &into.texts[i - 1];
                return c;
            }
        return text(into, std::string(t));
    }
    mutable const column* seen_column_ = nullptr;
    mutable std::vector<std::pair<PyObject*, cell>> seen_;
};

/// The models or clusters of a call, each distinct one parsed once.
template <class T, class Handle>
class parser {
public:
    parser(std::vector<parsed<T>>& into, T (*load)(const std::string&, const std::string&), const char* field)
        : into_(&into), load_(load), field_(field) {}

    [[nodiscard]] cell operator()(PyObject* o, const converter& text, column& into) {
        if (o == Py_None) return {};
        cell c;
        c.k = cell::kind::parsed;
        if (auto it = by_object_.find(o); it != by_object_.end()) {
            c.integer = it->second;
            return c;
        }
        const py::handle h(o);
        parsed<T> p;
        std::string key;
        if (py::isinstance<Handle>(h)) {
            p.value = h.cast<const Handle&>().value;
        } else {
            key = text(o, into).as_text();
            if (auto it = by_text_.find(key); it != by_text_.end()) {
                by_object_.emplace(o, it->second);
                c.integer = it->second;
                return c;
            }
            try {
                p.value = load_(key, field_);
            } catch (...) {
                p.error = cli::current_failure();
            }
        }
        c.integer = static_cast<long long>(into_->size());
        into_->push_back(std::move(p));
        by_object_.emplace(o, c.integer);
        if (!key.empty()) by_text_.emplace(std::move(key), c.integer);
        return c;
    }

private:
    std::vector<parsed<T>>* into_;
    T (*load_)(const std::string&, const std::string&);
    const char* field_;
    std::unordered_map<PyObject*, long long> by_object_;
    std::map<std::string, long long> by_text_;
};

/// A keyword that stands for an option of another name (cs.collectives' `sizes` for --bytes).
struct alias {
    std::string_view keyword, option;
};

/// The keywords of a call as a batch of rows of `cmd`'s options: each value a scalar, or (where
/// `columns`) a list of one value per row, every list as long as the others. An unknown keyword is
/// the command line's unknown-option error.
batch make_batch(const cli::command& cmd, py::handle model, py::handle cluster, const py::dict& keywords, bool columns,
                 const converter& text, std::initializer_list<alias> aliases) {
    batch b;
    b.command = &cmd;
    std::string first_sequence;
    bool sized = false;
    b.columns.reserve(keywords.size() + 2);  // the columns stay where they are while others are added
    auto add = [&](const std::string& keyword, py::handle value, auto&& convert) {
        std::string name = keyword;
        std::replace(name.begin(), name.end(), '_', '-');
        for (const alias& a : aliases)
            if (a.keyword == keyword) name = a.option;
        const cli::option_spec* spec = nullptr;
        for (const cli::option_spec& o : cmd.options)
            if (o.name == name) spec = &o;
        if (!spec) throw cli::unknown_option_error(cmd, name);
        for (const column& other : b.columns)
            if (other.name == name)
                throw commscale::input_error(keyword, "given with another keyword for --" + name, "one of the two");
        column& c = b.columns.emplace_back(column{std::move(name), spec, false, {}, {}});
        std::size_t count = 0;
        if (columns && PyList_CheckExact(value.ptr())) {
            const Py_ssize_t n = PyList_GET_SIZE(value.ptr());
            c.cells.reserve(static_cast<std::size_t>(n));
            for (Py_ssize_t i = 0; i < n; ++i) c.cells.push_back(convert(PyList_GET_ITEM(value.ptr(), i), c));
            count = c.cells.size();
            c.sequence = true;
        } else if (columns && PyMemoryView_Check(value.ptr())) {
            if (!text.buffer(*PyMemoryView_GET_BUFFER(value.ptr()), c))
                throw commscale::input_error(keyword, "an array of another type", "a sequence of values (int64, float64, bool or str array)");
            count = c.cells.size();
            c.sequence = true;
        } else {
            c.cells.push_back(convert(value.ptr(), c));
        }
        if (c.sequence) {
            if (!sized) {
                b.rows = count;
                sized = true;
                first_sequence = keyword;
            } else if (count != b.rows) {
                throw commscale::input_error(keyword, std::to_string(count) + " values",
                                             std::to_string(b.rows) + " values, one per row, as " + first_sequence + " has");
            }
        }
    };
    auto plain = [&](PyObject* o, column& c) { return text(o, c); };
    parser<commscale::transformer, model_value> models(b.models, &cli::load_model_value, "--model");
    parser<commscale::cluster, cluster_value> clusters(b.clusters, &cli::load_cluster_value, "--cluster");
    if (!model.is_none()) add("model", model, [&](PyObject* o, column& c) { return models(o, text, c); });
    if (!cluster.is_none()) add("cluster", cluster, [&](PyObject* o, column& c) { return clusters(o, text, c); });
    for (const auto& [k, v] : keywords) add(k.cast<std::string>(), v, plain);
    b.index();
    return b;
}

/// Builds a batch, turning its input errors into ValueError.
batch batch_of(const cli::command& cmd, py::handle model, py::handle cluster, const py::dict& keywords, bool columns,
               py::handle text_of, std::initializer_list<alias> aliases = {}) {
    try {
        return make_batch(cmd, model, cluster, keywords, columns, converter(text_of), aliases);
    } catch (const commscale::input_error& e) {
        throw py::value_error("commscale: " + std::string(e.what()));
    }
}

// ---------------------------------------------------------------- one row

py::object step_one(py::handle model, py::handle cluster, const py::dict& options, py::handle text_of) {
    const batch b = batch_of(command_named("step"), model, cluster, options, false, text_of);
    nlohmann::json doc;
    try {
        const row_source a(b, 0);
        a.check();
        doc = cli::step_document(cli::predict_step_of(request_rows(b, cli::step_options(false)).of(0)));
    } catch (...) {
        raise(current_row_failure());
    }
    return to_python(doc);
}

py::object collective_one(py::handle cluster, const py::dict& options, py::handle text_of) {
    const batch b = batch_of(command_named("collective"), py::none(), cluster, options, false, text_of);
    nlohmann::json doc;
    try {
        const row_source a(b, 0);
        a.check();
        doc = commscale::io::collective_result_to_json(cli::predict_collective_of(request_rows(b, cli::collective_command_options()).of(0)).result);
    } catch (...) {
        raise(current_row_failure());
    }
    return to_python(doc);
}

// ---------------------------------------------------------------- many rows

/// A bytearray of `size` bytes (uninitialised) and where its bytes are.
std::pair<py::object, char*> buffer(std::size_t size) {
    PyObject* a = PyByteArray_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
    if (!a) throw py::error_already_set();
    return {py::reinterpret_steal<py::object>(a), PyByteArray_AS_STRING(a)};
}

const char* type_name(cli::column_type t) {
    switch (t) {
        case cli::column_type::real: return "real";
        case cli::column_type::integer: return "integer";
        case cli::column_type::boolean: return "boolean";
    }
    return "real";
}

/// The table of a batch's results, in Python's hands: a bytearray per number column (float64,
/// int64 or bool, by row) and per label column (uint32 codes: 0 for a failed row, else 1 + the
/// index into the column's names).
template <class Prediction, std::size_t N, class Text, std::size_t L>
struct python_table {
    table t;
    py::list numbers, labels;

    python_table(std::size_t rows, const std::array<cli::number_column<Prediction>, N>& number_columns,
                 const std::array<cli::label_column<Prediction, Text>, L>& label_columns) {
        for (const auto& c : number_columns) {
            const std::size_t width = c.type == cli::column_type::real ? sizeof(double)
                                      : c.type == cli::column_type::integer ? sizeof(long long) : 1;
            auto [object, bytes] = buffer(rows * width);
            switch (c.type) {
                case cli::column_type::real: t.reals.push_back(reinterpret_cast<double*>(bytes)); break;
                case cli::column_type::integer: t.integers.push_back(reinterpret_cast<long long*>(bytes)); break;
                case cli::column_type::boolean: t.booleans.push_back(reinterpret_cast<unsigned char*>(bytes)); break;
            }
            numbers.append(py::make_tuple(std::string(c.key), type_name(c.type), object));
        }
        for (const auto& c : label_columns) {
            auto [object, bytes] = buffer(rows * sizeof(std::uint32_t));
            t.labels.push_back(reinterpret_cast<std::uint32_t*>(bytes));
            labels.append(py::make_tuple(std::string(c.key), object));
        }
        t.label_names.resize(L);
    }

    /// (rows, [(key, type, bytearray)], [(key, names, bytearray)], [(row, message)])
    [[nodiscard]] py::tuple result(std::size_t rows) {
        py::list named;
        for (std::size_t k = 0; k < labels.size(); ++k) {
            py::tuple l = labels[k].cast<py::tuple>();
            named.append(py::make_tuple(l[0], py::cast(t.label_names[k]), l[1]));
        }
        py::list failed;
        for (const auto& [row, f] : t.failures) failed.append(py::make_tuple(row, f.message));
        return py::make_tuple(rows, numbers, named, failed);
    }
};

/// The failure of the batch's scalars (the same in every row: checked once), if any.
std::optional<cli::failure> scalar_failure(const batch& b) {
    try {
        row_source(b, 0).check_scalars();
    } catch (...) {
        return current_row_failure();
    }
    return std::nullopt;
}

/// Threads to use: `threads`, or the hardware's where 0.
unsigned thread_count(unsigned threads) {
    if (threads > 0) return threads;
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? n : 1;
}

py::tuple steps(py::handle model, py::handle cluster, const py::dict& columns, unsigned threads, py::handle text_of) {
    const batch b = batch_of(command_named("step"), model, cluster, columns, true, text_of);
    python_table out(b.rows, cli::step_number_columns, cli::step_label_columns);
    {
        py::gil_scoped_release unlocked;
        const request_rows requests(b, cli::step_options(false));
        const cli::step_request first = b.rows > 0 ? requests.of(0) : cli::step_request{};
        const auto read_cluster = [&first](const row_source&) { return cli::step_cluster(first); };
        const auto read_model = [&first](const row_source&) { return cli::step_model(first); };
        const auto clusters = find_invariant<commscale::cluster>(b, read_cluster, step_cluster_options());
        const auto models = find_invariant<commscale::transformer>(b, read_model, step_cluster_options());
        const auto scalars = scalar_failure(b);
        for_each_row(b.rows, thread_count(threads), out.t, [&](std::size_t i, table_writer& w) {
            try {
                if (scalars) throw row_failure{*scalars};
                const row_source a(b, i);
                a.check_sequences();
                const cli::step_request request = requests.of(i);
                const commscale::cluster c = clusters.get(a, [&request](const row_source&) { return cli::step_cluster(request); });
                const commscale::transformer m = models.get(a, [&request](const row_source&) { return cli::step_model(request); });
                const cli::step_prediction x = cli::predict_step_on(request, cli::is_demo(request), c, m);
                write_numbers<cli::step_number_columns>(out.t, i, x);
                for (std::size_t k = 0; k < cli::step_label_columns.size(); ++k)
                    w.label(k, i, cli::step_label_columns[k].value(x), true);  // catalog and interned names
            } catch (...) {
                w.fail(i, current_row_failure());
            }
        });
    }
    return out.result(b.rows);
}

py::tuple collectives(py::handle cluster, const py::dict& columns, unsigned threads, py::handle text_of) {
    const batch b = batch_of(command_named("collective"), py::none(), cluster, columns, true, text_of, {{"sizes", "bytes"}});
    python_table out(b.rows, cli::collective_number_columns, cli::collective_label_columns);
    {
        py::gil_scoped_release unlocked;
        const request_rows requests(b, cli::collective_command_options());
        const cli::collective_command_request first = b.rows > 0 ? requests.of(0) : cli::collective_command_request{};
        const auto read_cluster = [&first](const row_source&) { return cli::resolve_cluster_gpus(first.topology); };
        const auto clusters = find_invariant<commscale::cluster>(b, read_cluster, cluster_options());
        const auto scalars = scalar_failure(b);
        for_each_row(b.rows, thread_count(threads), out.t, [&](std::size_t i, table_writer& w) {
            try {
                if (scalars) throw row_failure{*scalars};
                const row_source a(b, i);
                a.check_sequences();
                const cli::collective_command_request request = requests.of(i);
                const cli::collective_prediction x = cli::predict_collective_on(
                    request.collective, clusters.get(a, [&](const row_source&) { return cli::resolve_cluster_gpus(request.topology); }));
                write_numbers<cli::collective_number_columns>(out.t, i, x);
                for (std::size_t k = 0; k < cli::collective_label_columns.size(); ++k)
                    w.label(k, i, cli::collective_label_columns[k].value(x), false);
            } catch (...) {
                w.fail(i, current_row_failure());
            }
        });
    }
    return out.result(b.rows);
}

/// The columns of a batch's result: [(key, type)] with type real, integer, boolean or label.
template <class Prediction, std::size_t N, class Text, std::size_t L>
py::list column_keys(const std::array<cli::number_column<Prediction>, N>& numbers,
                     const std::array<cli::label_column<Prediction, Text>, L>& labels) {
    py::list out;
    for (const auto& c : numbers) out.append(py::make_tuple(std::string(c.key), type_name(c.type)));
    for (const auto& c : labels) out.append(py::make_tuple(std::string(c.key), "label"));
    return out;
}

template <class Handle, class T>
Handle parse_handle(const std::string& text, T (*load)(const std::string&, const std::string&), const char* field) {
    try {
        return Handle{text, load(text, field)};
    } catch (...) {
        raise(cli::current_failure());
    }
}

}  // namespace
}  // namespace commscale_python

PYBIND11_MODULE(_core, m) {
    using namespace commscale_python;
    m.doc() = "commscale's commands run in-process: run(['step', '--tp', '8', ...]) returns the --json document";
    py::class_<model_value>(m, "ModelValue", "A model parsed once: the value inside cs.model()'s result.")
        .def_readonly("text", &model_value::text, "The model's JSON (without the keys `model --json` derives).");
    py::class_<cluster_value>(m, "ClusterValue", "A cluster parsed once: the value inside cs.cluster()'s result.")
        .def_readonly("text", &cluster_value::text, "The cluster's JSON (without `derived`).");
    m.def("parse_model", [](const std::string& text) { return parse_handle<model_value>(text, &cli::load_model_value, "--model"); },
          py::arg("text"), "Parses a model (preset name, config.json file or inline JSON) once, as --model reads it.");
    m.def("parse_cluster", [](const std::string& text) { return parse_handle<cluster_value>(text, &cli::load_cluster_value, "--cluster"); },
          py::arg("text"), "Parses a cluster (preset name, cluster JSON file or inline JSON) once, as --cluster reads it.");
    m.def("run", &run, py::arg("argv"), py::arg("model") = nullptr, py::arg("cluster") = nullptr,
          "Runs one commscale command line (without the program name; --json is added) and returns its JSON "
          "document as dicts and lists. Invalid input raises ValueError with the CLI's message. `model` and "
          "`cluster` are handles whose text stands in the line: they are not parsed again.");
    m.def("step", &step_one, py::arg("model"), py::arg("cluster"), py::arg("options"), py::arg("text_of"),
          "`step --json` for the keywords `options` (option names with '_' for '-'), without a command line.");
    m.def("collective", &collective_one, py::arg("cluster"), py::arg("options"), py::arg("text_of"),
          "`collective --json` for the keywords `options`, without a command line.");
    m.def("steps", &steps, py::arg("model"), py::arg("cluster"), py::arg("columns"), py::arg("threads"), py::arg("text_of"),
          "Many steps: each keyword a value or a list (one value per row). Returns (rows, numbers, labels, failures).");
    m.def("collectives", &collectives, py::arg("cluster"), py::arg("columns"), py::arg("threads"), py::arg("text_of"),
          "Many collectives, as steps.");
    m.def("columns", [](const std::string& command) {
              if (command == "step") return column_keys(cli::step_number_columns, cli::step_label_columns);
              if (command == "collective") return column_keys(cli::collective_number_columns, cli::collective_label_columns);
              throw py::value_error("commscale: columns: expected step or collective, got '" + command + "'");
          },
          py::arg("command"), "The result columns of steps ('step') or collectives ('collective'): [(key, type)].");
    m.def("flags", [](const std::string& name) { return options_of(name, true); }, py::arg("command"),
          "The options of a command that take no value (flags), without the leading '--'.");
    m.def("options", [](const std::string& name) { return options_of(name, false); }, py::arg("command"),
          "The options of a command that take a value, without the leading '--'.");
    m.def("float_text", &float_text, py::arg("value"), "Python's repr() of a float, as the module writes floats for the CLI.");
    m.attr("version") = COMMSCALE_VERSION_STRING;
}
