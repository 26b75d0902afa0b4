#include "core/option_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace shardkit::options {
namespace {

std::string describe_kind(Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "true or false";
    case Kind::kInt:
      return "an integer";
    case Kind::kUInt:
      return "a non-negative integer";
    case Kind::kReal:
      return "a number";
    case Kind::kText:
      return "a string";
    case Kind::kPath:
      return "a path";
    case Kind::kChoice:
      return "one of the names listed";
    case Kind::kTextList:
      return "a list of strings";
    case Kind::kIntList:
      return "a list of integers";
  }
  return "a value";
}

std::string number_text(double v) {
  // The largest uint64 is 2^64 as a double, past what the cast below may take.
  if (v == double(UINT64_MAX)) return std::to_string(UINT64_MAX);
  if (v == double(INT64_MAX)) return std::to_string(INT64_MAX);  // 2^63, as the int64 bound
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e19) {
    char buf[32];
    if (v < 0) return std::to_string(int64_t(v));
    std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_text(std::optional<double> min, std::optional<double> max) {
  if (min && max) return "from " + number_text(*min) + " to " + number_text(*max);
  if (min) return "at least " + number_text(*min);
  return "at most " + number_text(*max);
}

[[noreturn]] void refuse(const std::string& name, Kind kind, const Value& got) {
  throw OptionError(name, "must be " + describe_kind(kind) + ", not " + format_value(got));
}

// A number of any representation, as a double (for range checks) and exactly.
bool as_number(const Value& v, double* d) {
  if (auto* i = std::get_if<int64_t>(&v)) return *d = double(*i), true;
  if (auto* u = std::get_if<uint64_t>(&v)) return *d = double(*u), true;
  if (auto* r = std::get_if<double>(&v)) return *d = *r, true;
  return false;
}

void check_range(const std::string& name, double d, std::optional<double> min,
                 std::optional<double> max, const Value& got) {
  // Written so that NaN fails both comparisons.
  if ((min && !(d >= *min)) || (max && !(d <= *max)) || std::isnan(d))
    throw OptionError(name, "must be " + (min || max ? range_text(min, max) : "a number") +
                                ", not " + format_value(got));
}

Value checked_integer(const std::string& name, Kind kind, std::optional<double> min,
                      std::optional<double> max, const Value& v) {
  const bool integral = std::holds_alternative<int64_t>(v) || std::holds_alternative<uint64_t>(v);
  if (!integral) refuse(name, kind, v);
  double d = 0;
  as_number(v, &d);
  check_range(name, d, min, max, v);
  if (kind == Kind::kUInt) {
    if (auto* i = std::get_if<int64_t>(&v)) {
      if (*i < 0) check_range(name, -1, 0.0, max, v);
      return uint64_t(*i);
    }
    return v;
  }
  if (auto* u = std::get_if<uint64_t>(&v)) {
    // Compared as integers: 2^63 rounds to INT64_MAX as a double.
    if (*u > uint64_t(INT64_MAX))
      throw OptionError(name, "must be " + range_text(min, max ? max : double(INT64_MAX)) +
                                  ", not " + format_value(v));
    return int64_t(*u);
  }
  return v;
}

Value checked_choice(const std::string& name, const std::vector<std::string>& choices,
                     const Value& v) {
  const auto* text = std::get_if<std::string>(&v);
  if (text && std::find(choices.begin(), choices.end(), *text) != choices.end()) return v;
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  std::string reason = "must be one of " + list + ", not " + format_value(v);
  if (text)
    if (auto close = closest_names(*text, choices); !close.empty())
      reason += "; did you mean " + close[0] + "?";
  throw OptionError(name, reason);
}

bool parse_integer(std::string_view t, Value* out) {
  if (t.empty()) return false;
  if (t[0] == '-') {
    int64_t i = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), i);
    if (ec != std::errc() || end != t.data() + t.size()) return false;
    *out = i;
    return true;
  }
  uint64_t u = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), u);
  if (ec != std::errc() || end != t.data() + t.size()) return false;
  *out = u;
  return true;
}

std::vector<std::string> split_commas(const std::vector<std::string>& texts, bool multi_token) {
  if (multi_token) return texts;
  std::vector<std::string> out;
  for (const std::string& t : texts) {
    size_t start = 0;
    for (size_t comma; (comma = t.find(',', start)) != std::string::npos; start = comma + 1)
      out.push_back(t.substr(start, comma - start));
    out.push_back(t.substr(start));
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string normalized(std::string_view name) {
  std::string s(name);
  while (!s.empty() && s[0] == '-') s.erase(0, 1);
  for (char& c : s)
    c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

nlohmann::json to_json_value(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return nullptr;
        else
          return x;
      },
      v);
}

}  // namespace

OptionError::OptionError(std::string option, std::string why)
    : Error(ErrorCode::kInvalidArgument, "", option + " " + why),
      option_(std::move(option)),
      why_(std::move(why)) {}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUInt:
      return "uint";
    case Kind::kReal:
      return "real";
    case Kind::kText:
      return "text";
    case Kind::kPath:
      return "path";
    case Kind::kChoice:
      return "choice";
    case Kind::kTextList:
      return "text list";
    case Kind::kIntList:
      return "int list";
  }
  return "?";
}

Value checked_value(const std::string& name, Kind kind, const std::vector<std::string>& choices,
                    std::optional<double> min, std::optional<double> max, const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return v;
  switch (kind) {
    case Kind::kBool:
      if (!std::holds_alternative<bool>(v)) refuse(name, kind, v);
      return v;
    case Kind::kInt:
    case Kind::kUInt:
      return checked_integer(name, kind, min, max, v);
    case Kind::kReal: {
      double d = 0;
      if (!as_number(v, &d)) refuse(name, kind, v);
      check_range(name, d, min, max, v);
      return d;
    }
    case Kind::kText:
    case Kind::kPath:
      if (!std::holds_alternative<std::string>(v)) refuse(name, kind, v);
      return v;
    case Kind::kChoice:
      return checked_choice(name, choices, v);
    case Kind::kTextList:
      if (!std::holds_alternative<std::vector<std::string>>(v)) refuse(name, kind, v);
      return v;
    case Kind::kIntList:
      if (!std::holds_alternative<std::vector<int64_t>>(v)) refuse(name, kind, v);
      return v;
  }
  return v;
}

Value parse_text(const std::string& name, Kind kind, const std::vector<std::string>& texts,
                 bool multi_token) {
  const std::string text = texts.empty() ? std::string() : texts.back();
  switch (kind) {
    case Kind::kBool:
      if (text == "true" || text == "1" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "no") return false;
      throw OptionError(name, "must be true or false, not '" + text + "'");
    case Kind::kInt:
    case Kind::kUInt: {
      Value v;
      if (!parse_integer(text, &v))
        throw OptionError(name, "must be " + describe_kind(kind) + ", not '" + text + "'");
      return v;
    }
    case Kind::kReal: {
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != 0)
        throw OptionError(name, "must be a number, not '" + text + "'");
      return d;
    }
    case Kind::kText:
    case Kind::kPath:
    case Kind::kChoice:
      return text;
    case Kind::kTextList:
      return split_commas(texts, multi_token);
    case Kind::kIntList: {
      std::vector<int64_t> ids;
      for (const std::string& t : split_commas(texts, false)) {
        Value v;
        if (!parse_integer(t, &v))
          throw OptionError(name, "must be a list of integers, not '" + t + "'");
        ids.push_back(std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v)
                                                         : int64_t(std::get<uint64_t>(v)));
      }
      return ids;
    }
  }
  return text;
}

std::string format_value(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "none";
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (auto* s = std::get_if<std::string>(&v)) return "'" + *s + "'";
  double d = 0;
  if (auto* r = std::get_if<double>(&v)) {
    if (std::isnan(*r)) return "nan";
    if (std::isinf(*r)) return *r > 0 ? "inf" : "-inf";
  }
  if (as_number(v, &d)) {
    if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
    return number_text(d);
  }
  std::string out = "[";
  if (auto* list = std::get_if<std::vector<std::string>>(&v))
    for (const std::string& s : *list) out += (out.size() > 1 ? ", '" : "'") + s + "'";
  if (auto* ids = std::get_if<std::vector<int64_t>>(&v))
    for (int64_t i : *ids) out += (out.size() > 1 ? ", " : "") + std::to_string(i);
  return out + "]";
}

std::vector<std::string> closest_names(std::string_view unknown,
                                       const std::vector<std::string>& known) {
  const std::string u = normalized(unknown);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& k : known) {
    const std::string n = normalized(k);
    const size_t d = edit_distance(u, n);
    // One name begins the other: --max-length for --max-len, "inf" for "info".
    const bool prefix =
        std::min(u.size(), n.size()) >= 3 && (n.rfind(u, 0) == 0 || u.rfind(n, 0) == 0);
    if (d <= std::max<size_t>(2, std::max(u.size(), n.size()) / 4) || prefix)
      scored.emplace_back(prefix ? 0 : d, k);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, k] : scored) out.push_back(k);
  return out;
}

std::string flag_name(std::string_view name) {
  std::string s = "--";
  for (char c : name) s += c == '_' ? '-' : c;
  return s;
}

std::string values_to_json(const std::vector<std::pair<std::string, Value>>& values) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : values) j[name] = to_json_value(v);
  return json_text(j);
}

}  // namespace shardkit::options
