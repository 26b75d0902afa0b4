// Python keywords made from an option table (core/option_table.h): values converted by the
// option's kind, checked by the table, and every refusal naming the option: an unknown or
// unavailable keyword or a value of the wrong type is a TypeError, a value out of range a
// shardkit.OptionError (a ShardkitError and a ValueError). A deprecated name warns
// (FutureWarning) and still works. option_specs() describes a table for the docstrings and the
// type stub (shardkit/_stubs.py).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/option_table.h"

namespace shardkit::python {

namespace py = pybind11;

// Registers shardkit.OptionError (after ShardkitError) in module `m`.
void register_option_error(py::module_& m);

// `value` as a value of `kind`; throws py::type_error("CALLER: NAME must be ..., not TYPE").
options::Value value_from_python(const std::string& caller, const std::string& name,
                                 options::Kind kind, py::handle value);
[[noreturn]] void throw_unknown_keyword(const std::string& caller, const std::string& name,
                                        const std::vector<std::string>& known);
[[noreturn]] void throw_refused(const std::string& caller, const options::OptionError& error);
void warn_deprecated(const std::string& caller, const options::Alias& alias,
                     const std::string& name);
// {name, kind, help, default, choices, nullable, group, order, applies} for one entry.
struct OptionSpec {
  std::string name;
  options::Kind kind;
  std::string help, default_text;
  std::vector<std::string> choices;
  std::optional<double> min, max;
  bool nullable, order, cli;
  std::string group;
  std::string applies;  // where it applies ("is for --task qa"); empty: everywhere
};
py::dict option_spec(const OptionSpec& spec);

// Stores every keyword of `kw` (but those in `skip`) in `s`.
template <class S>
void apply_kwargs(const options::OptionTable<S>& table, S& s, const py::dict& kw,
                  const std::string& caller) {
  std::map<std::string, std::string> given;  // option -> the keyword that set it
  for (auto [key, value] : kw) {
    const std::string name = py::str(key);
    const options::Alias* alias = nullptr;
    const options::Option<S>* e = table.find(name, &alias);
    if (!e) throw_unknown_keyword(caller, name, table.names());
    // An option and its deprecated name together: which one wins would be a guess.
    if (const auto [it, fresh] = given.emplace(e->name, name); !fresh)
      throw py::type_error(caller + ": '" + it->second + "' and '" + name +
                           "' set the same option; give only '" + e->name + "'");
    if (!(e->surfaces & options::kPython))
      throw py::type_error(caller + ": '" + name + "' " + e->unavailable_in_python);
    if (alias) warn_deprecated(caller, *alias, e->name);
    const options::Value v = value_from_python(caller, name, e->kind, value);
    try {
      table.set(s, name, v);
    } catch (const options::OptionError& error) {
      throw_refused(caller, error);
    }
  }
}

template <class S>
py::list option_specs(const options::OptionTable<S>& table) {
  py::list out;
  for (const options::Option<S>& e : table.entries())
    if (e.surfaces & options::kPython)
      out.append(option_spec({e.name, e.kind, e.help, table.default_text(e), e.choices, e.min,
                              e.max, e.nullable, e.order, bool(e.surfaces & options::kCli), e.group,
                              e.applies_text}));
  return out;
}

}  // namespace shardkit::python
