// One declaration per options struct, after RocksDB's OptionTypeInfo: each entry names an option
// and says how its value is read, written, shown and checked. Every front-end loops over a table
// (shardify's and shard-inspect's flags, the Python keywords, their docstrings and type stubs),
// and the tables also give serialization (to_json), comparison (differences) and suggestions
// for misspelt names. Adding an option is one entry.
//
// An entry reaches its field through an accessor, a generic lambda such as
//   [](auto& o) -> auto& { return o.task.max_len; }
// from which the field's type, and so the option's kind, is deduced.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"

namespace shardkit::options {

// What kind of value an option takes; front-ends read, check and show values by kind.
enum class Kind { kBool, kInt, kUInt, kReal, kText, kPath, kChoice, kTextList, kIntList };
// "bool", "int", "uint", "real", "text", "path", "choice", "text list", "int list".
const char* kind_name(Kind kind);

// A value as it crosses a front-end. std::monostate: not given (Python's None, or a flag left
// out), which leaves the option at its default.
using Value = std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string,
                           std::vector<std::string>, std::vector<int64_t>>;

// Which front-ends offer an option.
enum Surface : unsigned { kCli = 1, kPython = 2, kEverywhere = 3 };

// A former name that still works and warns (negated: --no-pack for pack).
struct Alias {
  std::string name;
  bool negated = false;
};

// A refused value or an unknown name. what() is "NAME: REASON"; front-ends put the name their
// own way (--max-len, max_len=) in front of reason().
class OptionError : public Error {
 public:
  OptionError(std::string option, std::string why);
  const std::string& option() const { return option_; }
  // What is wrong, without the name: "must be from 2 to 1048576, not 1".
  const std::string& why() const { return why_; }

 private:
  std::string option_;
  std::string why_;
};

template <class S>
struct Option {
  std::string name;  // snake_case: the Python keyword; the flag is --name with '-' for '_'
  Kind kind = Kind::kText;
  std::string help;
  std::function<Value(const S&)> get;         // the value now (monostate: unset)
  std::function<void(S&, const Value&)> put;  // a value check() accepted
  std::vector<std::string> choices;           // kChoice
  std::optional<double> min, max;             // numbers, inclusive
  // Further checks of a value of the right kind; returns why it is refused, or nothing.
  std::function<std::optional<std::string>(const Value&)> validate;
  bool nullable = false;     // an optional field: None / unset is a value of its own
  std::string default_text;  // the default as help shows it, when it is not get(S{})
  std::vector<Alias> aliases;
  std::string short_flag;  // "-i"
  unsigned surfaces = kEverywhere;
  std::string unavailable_in_python;  // why Python refuses an option that is only a flag
  bool multi_token = false;           // CLI: several values after one flag (--input a b c)
  bool order = false;                 // loader: changes which records a batch holds
  std::string group;                  // a heading for help and docstrings
  // The value an option left unset takes, given the others (max_len by task); resolve()
  // applies it. default_text says it in words.
  std::function<Value(const S&)> automatic;
  // Where the option means something (a task, say); set elsewhere it would be ignored, so
  // check_applies() refuses it, saying `applies_text` ("is for --task cls and pair").
  std::function<bool(const S&)> applies;
  std::string applies_text;

  Option&& range(double lo, double hi) && {
    min = lo, max = hi;
    return std::move(*this);
  }
  Option&& at_least(double lo) && {
    min = lo;
    return std::move(*this);
  }
  Option&& defaults_to(std::string text) && {
    default_text = std::move(text);
    return std::move(*this);
  }
  Option&& alias(std::string old_name, bool negated = false) && {
    aliases.push_back({std::move(old_name), negated});
    return std::move(*this);
  }
  // A switch a command line can also turn off, as --no-NAME: one that may be on by default.
  bool has_negated_flag() const {
    return kind == Kind::kBool && (nullable || get(S{}) == Value(true));
  }
  Option&& flag(std::string short_name) && {
    short_flag = std::move(short_name);
    return std::move(*this);
  }
  Option&& cli_only(std::string why_not_python) && {
    surfaces = kCli;
    unavailable_in_python = std::move(why_not_python);
    return std::move(*this);
  }
  Option&& python_only() && {
    surfaces = kPython;
    return std::move(*this);
  }
  Option&& several() && {
    multi_token = true;
    return std::move(*this);
  }
  Option&& affects_order() && {
    order = true;
    return std::move(*this);
  }
  Option&& in_group(std::string name) && {
    group = std::move(name);
    return std::move(*this);
  }
  Option&& check(std::function<std::optional<std::string>(const Value&)> f) && {
    validate = std::move(f);
    return std::move(*this);
  }
  Option&& only_for(std::function<bool(const S&)> f, std::string text) && {
    applies = std::move(f);
    applies_text = std::move(text);
    return std::move(*this);
  }
  Option&& automatically(std::function<Value(const S&)> f, std::string text) && {
    automatic = std::move(f);
    default_text = std::move(text);
    nullable = true;
    return std::move(*this);
  }
};

// {name, value} pairs of an enum from its name function: named(task_name, {Task::kLm, ...}).
template <class E, class NameFn>
std::vector<std::pair<std::string, E>> named(NameFn name, std::initializer_list<E> values) {
  std::vector<std::pair<std::string, E>> out;
  for (E v : values) out.emplace_back(std::string(name(v)), v);
  return out;
}

// Checks a value against an entry's kind, range, choices and validate(); returns it in the
// entry's own representation (an int64 for a uint option becomes uint64, a number a double).
// Throws OptionError.
Value checked_value(const std::string& name, Kind kind, const std::vector<std::string>& choices,
                    std::optional<double> min, std::optional<double> max, const Value& value);
// Reads a flag's text as a value of `kind` (lists split at commas unless `multi_token`).
Value parse_text(const std::string& name, Kind kind, const std::vector<std::string>& texts,
                 bool multi_token = false);
// How help and docstrings show a value: 512, true, "text", [a, b], "none" for unset.
std::string format_value(const Value& value);
// Known names close to `unknown` (edit distance), closest first.
std::vector<std::string> closest_names(std::string_view unknown,
                                       const std::vector<std::string>& known);
// "--max-len" for "max_len".
std::string flag_name(std::string_view name);

namespace detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
constexpr Kind kind_of() {
  if constexpr (std::is_same_v<T, bool>)
    return Kind::kBool;
  else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
    return Kind::kUInt;
  else if constexpr (std::is_integral_v<T>)
    return Kind::kInt;
  else if constexpr (std::is_floating_point_v<T>)
    return Kind::kReal;
  else if constexpr (std::is_same_v<T, std::string>)
    return Kind::kText;
  else if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return Kind::kTextList;
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return Kind::kIntList;
  else
    static_assert(!sizeof(T), "an option's field type needs a Kind");
}

template <class T>
Value to_value(const T& v) {
  if constexpr (is_optional<T>::value) {
    return v ? to_value(*v) : Value{};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return uint64_t(v);
  } else if constexpr (std::is_integral_v<T>) {
    return int64_t(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return double(v);
  } else {
    return v;
  }
}

template <class T>
void from_value(T& field, const Value& v) {
  if constexpr (is_optional<T>::value) {
    if (std::holds_alternative<std::monostate>(v)) {
      field.reset();
    } else {
      typename T::value_type inner{};
      from_value(inner, v);
      field = std::move(inner);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    field = std::get<bool>(v);
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    field = static_cast<T>(std::get<uint64_t>(v));
  } else if constexpr (std::is_integral_v<T>) {
    field = static_cast<T>(std::get<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    field = static_cast<T>(std::get<double>(v));
  } else {
    field = std::get<T>(v);
  }
}

template <class T>
struct value_type {
  using type = T;
};
template <class T>
struct value_type<std::optional<T>> {
  using type = T;
};
}  // namespace detail

// An option stored in a field of S (or of a member of S) that `access` returns.
template <class S, class Access>
Option<S> option(std::string name, std::string help, Access access) {
  using Field = std::remove_cvref_t<std::invoke_result_t<Access, S&>>;
  using T = typename detail::value_type<Field>::type;
  Option<S> o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.kind = detail::kind_of<T>();
  o.nullable = detail::is_optional<Field>::value;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    o.min = double(std::numeric_limits<T>::min());
    o.max = double(std::numeric_limits<T>::max());
  }
  o.get = [access](const S& s) { return detail::to_value(access(s)); };
  o.put = [access](S& s, const Value& v) { detail::from_value(access(s), v); };
  return o;
}

// A path option: a text field that Python also accepts as an os.PathLike (a list of paths
// stays a text list).
template <class S, class Access>
Option<S> path_option(std::string name, std::string help, Access access) {
  Option<S> o = option<S>(std::move(name), std::move(help), access);
  if (o.kind == Kind::kText) o.kind = Kind::kPath;
  return o;
}

// An option with named values stored as an enum (or any type with ==).
template <class S, class Access, class E = std::remove_cvref_t<std::invoke_result_t<Access, S&>>>
Option<S> choice_option(std::string name, std::string help, Access access,
                        std::vector<std::pair<std::string, E>> names) {
  Option<S> o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.kind = Kind::kChoice;
  for (const auto& [text, value] : names) o.choices.push_back(text);
  o.get = [access, names](const S& s) -> Value {
    for (const auto& [text, value] : names)
      if (access(s) == value) return text;
    return Value{};
  };
  o.put = [access, names](S& s, const Value& v) {
    for (const auto& [text, value] : names)
      if (text == std::get<std::string>(v)) access(s) = value;
  };
  return o;
}

// An option whose value is computed from, and stored into, S by hand (a unit conversion, a
// field that two options share).
template <class S>
Option<S> computed_option(std::string name, Kind kind, std::string help,
                          std::function<Value(const S&)> get,
                          std::function<void(S&, const Value&)> put) {
  Option<S> o;
  o.name = std::move(name);
  o.kind = kind;
  o.help = std::move(help);
  o.get = std::move(get);
  o.put = std::move(put);
  return o;
}

template <class S>
class OptionTable {
 public:
  explicit OptionTable(std::vector<Option<S>> entries) : entries_(std::move(entries)) {}

  // The options of `inner` (a table of a member of S that `access` returns), added at the end.
  template <class M, class Access>
  OptionTable&& with(const OptionTable<M>& inner, Access access) && {
    for (const Option<M>& e : inner.entries()) {
      Option<S> o;
      o.name = e.name, o.kind = e.kind, o.help = e.help, o.choices = e.choices;
      o.min = e.min, o.max = e.max, o.validate = e.validate, o.nullable = e.nullable;
      o.default_text = e.default_text, o.aliases = e.aliases, o.short_flag = e.short_flag;
      o.surfaces = e.surfaces, o.unavailable_in_python = e.unavailable_in_python;
      o.multi_token = e.multi_token, o.order = e.order, o.group = e.group;
      o.applies_text = e.applies_text;
      if (e.automatic) o.automatic = [f = e.automatic, access](const S& s) { return f(access(s)); };
      if (e.applies) o.applies = [f = e.applies, access](const S& s) { return f(access(s)); };
      o.get = [get = e.get, access](const S& s) { return get(access(s)); };
      o.put = [put = e.put, access](S& s, const Value& v) { put(access(s), v); };
      entries_.push_back(std::move(o));
    }
    return std::move(*this);
  }

  const std::vector<Option<S>>& entries() const { return entries_; }

  // The entry named `name`, or that has it as an alias (then *alias points at the alias).
  const Option<S>* find(std::string_view name, const Alias** alias = nullptr) const {
    for (const Option<S>& e : entries_) {
      if (e.name == name) return &e;
      for (const Alias& a : e.aliases)
        if (a.name == name) {
          if (alias) *alias = &a;
          return &e;
        }
    }
    return nullptr;
  }

  // Checks `value` and stores it under `name` (or an alias). monostate leaves a non-nullable
  // option at its default. Throws OptionError for an unknown name (with suggestions) or a
  // refused value.
  void set(S& s, std::string_view name, const Value& value) const {
    const Alias* alias = nullptr;
    const Option<S>& e = entry(name, &alias);
    if (std::holds_alternative<std::monostate>(value) && !e.nullable) return;
    Value v = value;
    if (alias && alias->negated && std::holds_alternative<bool>(v)) v = !std::get<bool>(v);
    v = checked_value(std::string(name), e.kind, e.choices, e.min, e.max, v);
    if (e.validate && !std::holds_alternative<std::monostate>(v))
      if (auto why = e.validate(v)) throw OptionError(std::string(name), *why);
    e.put(s, v);
    if constexpr (requires { s.options_given.push_back(e.name); })
      s.options_given.push_back(e.name);
  }
  void set_text(S& s, std::string_view name, const std::vector<std::string>& texts) const {
    const Option<S>& e = entry(name, nullptr);
    set(s, name, parse_text(std::string(name), e.kind, texts, e.multi_token));
  }
  Value get(const S& s, std::string_view name) const { return entry(name, nullptr).get(s); }

  // Every option's value, in table order: {"name": value, ...} (JSON text).
  std::string to_json(const S& s) const;
  // The names of the options whose values differ.
  std::vector<std::string> differences(const S& a, const S& b) const {
    std::vector<std::string> names;
    for (const Option<S>& e : entries_)
      if (e.get(a) != e.get(b)) names.push_back(e.name);
    return names;
  }
  // Refuses an option set where it does not apply (Option::only_for): one a front-end set (S's
  // `options_given`, which set() fills where S has one), or one whose value is neither its
  // default nor its automatic value (so that options resolve() filled pass again).
  void check_applies(const S& s) const {
    const S defaults{};
    for (const Option<S>& e : entries_) {
      if (!e.applies || e.applies(s)) continue;
      const Value v = e.get(s);
      bool given = v != e.get(defaults) && !(e.automatic && v == e.automatic(s));
      if constexpr (requires { s.options_given; })
        for (const std::string& name : s.options_given) given = given || name == e.name;
      // Named as given: a switch set false is --no-pack (pack=False), not --pack.
      if (given)
        throw OptionError(e.has_negated_flag() && v == Value(false) ? "no_" + e.name : e.name,
                          e.applies_text);
    }
  }
  // Gives every unset option with an automatic value that value.
  void resolve(S& s) const {
    for (const Option<S>& e : entries_)
      if (e.automatic && std::holds_alternative<std::monostate>(e.get(s))) e.put(s, e.automatic(s));
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Option<S>& e : entries_) out.push_back(e.name);
    return out;
  }
  // The default as help shows it: default_text, else the value in a default-constructed S.
  std::string default_text(const Option<S>& e) const {
    return e.default_text.empty() ? format_value(e.get(S{})) : e.default_text;
  }

 private:
  const Option<S>& entry(std::string_view name, const Alias** alias) const {
    if (const Option<S>* e = find(name, alias)) return *e;
    std::vector<std::string> known = names();
    for (const Option<S>& e : entries_)
      for (const Alias& a : e.aliases) known.push_back(a.name);
    const auto close = closest_names(name, known);
    throw OptionError(
        std::string(name),
        "is not an option" + (close.empty() ? std::string() : "; did you mean " + close[0] + "?"));
  }

  std::vector<Option<S>> entries_;
};

std::string values_to_json(const std::vector<std::pair<std::string, Value>>& values);

template <class S>
std::string OptionTable<S>::to_json(const S& s) const {
  std::vector<std::pair<std::string, Value>> values;
  for (const Option<S>& e : entries_) values.emplace_back(e.name, e.get(s));
  return values_to_json(values);
}

}  // namespace shardkit::options
