// The Python module `commscale` (its native part, commscale._core): runs the CLI's commands
// in-process and returns each command's --json document as Python objects, so that Python and the
// command line share one contract (CLI.md): the same keys, the same values, the same error messages.
// The pure-Python layer (commscale/__init__.py) turns keyword arguments into the command's flags.
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "app.hpp"
#include <commscale/version.hpp>
#include "cli.hpp"

namespace py = pybind11;

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

/// A command's options that are flags (no value), for turning True/False keywords into flags.
std::vector<std::string> options_of(const std::string& name, bool flags) {
    std::vector<std::string> out;
    for (const auto& c : cli::registry())
        if (c.name == name)
            for (const auto& o : c.options)
                if (o.takes_value != flags) out.push_back(o.name);
    return out;
}

/// Runs `commscale ARGV... --json`. Returns the JSON document as Python objects; raises ValueError
/// with the CLI's one-line message on invalid input (exit 2) and RuntimeError on an internal error.
py::object run(std::vector<std::string> argv) {
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
        rc = cli::run(argv, out, err);
    }
    std::string message = err.str();
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
    if (rc == 2) throw py::value_error(message);
    if (rc != 0) throw std::runtime_error(message.empty() ? "commscale: internal error" : message);
    if (doc.is_null() && !out.str().empty()) doc = nlohmann::json::parse(out.str());
    return to_python(doc);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "commscale's commands run in-process: run(['step', '--tp', '8', ...]) returns the --json document";
    m.def("run", &run, py::arg("argv"),
          "Runs one commscale command line (without the program name; --json is added) and returns its JSON "
          "document as dicts and lists. Invalid input raises ValueError with the CLI's message.");
    m.def("flags", [](const std::string& name) { return options_of(name, true); }, py::arg("command"),
          "The options of a command that take no value (flags), without the leading '--'.");
    m.def("options", [](const std::string& name) { return options_of(name, false); }, py::arg("command"),
          "The options of a command that take a value, without the leading '--'.");
    m.attr("version") = COMMSCALE_VERSION_STRING;
}
