#include "option_kwargs.h"

#include <pybind11/stl.h>

#include "core/error.h"

namespace shardkit::python {
namespace {

py::object& option_error() {
  static py::object type;
  return type;
}

std::string type_name(py::handle v) { return py::str(py::type::of(v).attr("__name__")); }

[[noreturn]] void wrong_type(const std::string& caller, const std::string& name,
                             const char* expected, py::handle v) {
  throw py::type_error(caller + ": " + name + " must be " + expected + ", not " + type_name(v));
}

bool is_bool(py::handle v) {
  return PyBool_Check(v.ptr()) || type_name(v) == "bool_";  // numpy.bool_
}

// An int (or anything with __index__, such as numpy's integers), but not a bool.
bool integer(py::handle v, options::Value* out) {
  if (is_bool(v) || !PyIndex_Check(v.ptr())) return false;
  const auto i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  const long long s = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow == 0) return *out = int64_t(s), true;
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (!PyErr_Occurred()) return *out = uint64_t(u), true;
    PyErr_Clear();
  }
  // Past 64 bits: its digits, which an integer option refuses quoting them as given.
  PyErr_Clear();
  *out = py::str(i).cast<std::string>();
  return true;
}

bool beyond_64_bits(const options::Value& v) { return std::holds_alternative<std::string>(v); }

// A list, a tuple, a range, an array: any sequence the type stub's Sequence admits, but text.
bool is_sequence(py::handle v) {
  return PySequence_Check(v.ptr()) && !py::isinstance<py::str>(v) && !py::isinstance<py::bytes>(v);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t c; (c = s.find(',', start)) != std::string::npos; start = c + 1)
    out.push_back(s.substr(start, c - start));
  out.push_back(s.substr(start));
  return out;
}

options::Value text_list(const std::string& caller, const std::string& name, py::handle v) {
  if (py::isinstance<py::str>(v)) return split_commas(v.cast<std::string>());
  if (!is_sequence(v)) wrong_type(caller, name, "a list of str", v);
  // Integers name themselves (labels=[0, 1] are the labels "0" and "1").
  std::vector<std::string> items;
  for (py::handle item : v) {
    options::Value n;
    if (py::isinstance<py::str>(item))
      items.push_back(item.cast<std::string>());
    else if (integer(item, &n) && !beyond_64_bits(n))
      items.push_back(py::str(item).cast<std::string>());
    else
      wrong_type(caller, name, "a list of str", item);
  }
  return items;
}

options::Value int_list(const std::string& caller, const std::string& name, py::handle v) {
  if (!is_sequence(v)) wrong_type(caller, name, "a list of int", v);
  std::vector<int64_t> items;
  for (py::handle item : v) {
    options::Value n;
    if (!integer(item, &n) || beyond_64_bits(n)) wrong_type(caller, name, "a list of int", item);
    items.push_back(std::holds_alternative<int64_t>(n) ? std::get<int64_t>(n)
                                                       : int64_t(std::get<uint64_t>(n)));
  }
  return items;
}

}  // namespace

void register_option_error(py::module_& m) {
  const py::tuple bases = py::make_tuple(m.attr("ShardkitError"), py::handle(PyExc_ValueError));
  option_error() = py::reinterpret_steal<py::object>(
      PyErr_NewException("shardkit._shardkit.OptionError", bases.ptr(), nullptr));
  m.attr("OptionError") = option_error();
}

options::Value value_from_python(const std::string& caller, const std::string& name,
                                 options::Kind kind, py::handle v) {
  using options::Kind;
  if (v.is_none()) return {};
  options::Value out;
  switch (kind) {
    case Kind::kBool:
      if (!is_bool(v)) wrong_type(caller, name, "a bool", v);
      return PyObject_IsTrue(v.ptr()) == 1;
    case Kind::kInt:
    case Kind::kUInt:
      if (!integer(v, &out)) wrong_type(caller, name, "an int", v);
      if (beyond_64_bits(out))
        throw_refused(caller, options::OptionError(name, "must be an integer within 64 bits, not " +
                                                             std::get<std::string>(out)));
      return out;
    case Kind::kReal:
      if (integer(v, &out))
        return beyond_64_bits(out) ? options::Value(PyLong_AsDouble(v.ptr())) : out;
      if (!py::isinstance<py::float_>(v)) wrong_type(caller, name, "a float", v);
      return v.cast<double>();
    case Kind::kText:
    case Kind::kChoice:
      if (!py::isinstance<py::str>(v)) wrong_type(caller, name, "a str", v);
      return v.cast<std::string>();
    case Kind::kPath: {
      if (py::isinstance<py::str>(v)) return v.cast<std::string>();
      const auto fspath = py::module_::import("os").attr("fspath");
      if (!py::hasattr(v, "__fspath__")) wrong_type(caller, name, "a str or os.PathLike", v);
      const py::object p = fspath(v);
      if (!py::isinstance<py::str>(p)) wrong_type(caller, name, "a str path", p);
      return p.cast<std::string>();
    }
    case Kind::kTextList:
      return text_list(caller, name, v);
    case Kind::kIntList:
      return int_list(caller, name, v);
  }
  return out;
}

void throw_unknown_keyword(const std::string& caller, const std::string& name,
                           const std::vector<std::string>& known) {
  const auto close = options::closest_names(name, known);
  throw py::type_error(caller + "() got an unexpected keyword argument '" + name + "'" +
                       (close.empty() ? "" : "; did you mean '" + close[0] + "'?"));
}

void throw_refused(const std::string& caller, const options::OptionError& error) {
  const std::string message = caller + ": " + error.option() + " " + error.why();
  PyErr_SetString(option_error().ptr(), message.c_str());
  throw py::error_already_set();
}

void warn_deprecated(const std::string& caller, const options::Alias& alias,
                     const std::string& name) {
  const std::string message = caller + ": '" + alias.name + "' is deprecated; use " + name +
                              (alias.negated ? "= with the opposite value" : "=");
  if (PyErr_WarnEx(PyExc_FutureWarning, message.c_str(), 2) != 0) throw py::error_already_set();
}

py::dict option_spec(const OptionSpec& spec) {
  py::dict d;
  d["name"] = spec.name;
  d["kind"] = options::kind_name(spec.kind);
  d["help"] = spec.help;
  d["default"] = spec.default_text;
  d["choices"] = spec.choices;
  d["min"] = spec.min ? py::object(py::float_(*spec.min)) : py::none();
  d["max"] = spec.max ? py::object(py::float_(*spec.max)) : py::none();
  d["nullable"] = spec.nullable;
  d["order"] = spec.order;
  d["cli"] = spec.cli;
  d["group"] = spec.group;
  d["applies"] = spec.applies;
  return d;
}

}  // namespace shardkit::python
