#include "shardify/json_wide_numbers.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace shardkit::shardify {
namespace {

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// The characters of a number or a literal: a token is all of them in a row, so that NaNx or
// 1e400x is one token, which nothing sets aside.
bool token_char(char c) { return digit(c) || letter(c) || c == '-' || c == '+' || c == '.'; }
// Where a number or one of the non-finite literals may start.
bool token_start(char c) { return digit(c) || c == '-' || c == 'N' || c == 'I'; }

// Python's json.dumps spellings of the non-finite floats, which json.loads reads back; Python
// refuses every other spelling (nan, inf, +Infinity, -NaN), and so do we.
bool non_finite_literal(std::string_view token) {
  return token == "NaN" || token == "Infinity" || token == "-Infinity";
}

// The index just past the string that opens at `open`, or the end when it never closes.
size_t string_end(std::string_view json, size_t open) {
  for (size_t i = json.find_first_of("\"\\", open + 1); i != std::string_view::npos;
       i = json.find_first_of("\"\\", i + 2)) {
    if (json[i] == '"') return i + 1;
  }
  return json.size();
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool json_number(std::string_view s) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && digit(s[i])) ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0')
    ++i;
  else if (!digits())
    return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// Whether json[begin, end) stands where only a value may stand: a string there changes nothing
// of the document's structure, while one where a key stands ({1e400: 1}) would make it valid.
bool in_value_place(std::string_view json, size_t begin, size_t end) {
  while (begin > 0 && json_space(json[begin - 1])) --begin;
  while (end < json.size() && json_space(json[end])) ++end;
  const bool after_value_start =
      begin == 0 || json[begin - 1] == ':' || json[begin - 1] == '[' || json[begin - 1] == ',';
  const bool before_value_end =
      end == json.size() || json[end] == ',' || json[end] == ']' || json[end] == '}';
  return after_value_start && before_value_end;
}

// Every integer of up to 18 digits, and every number below 10^18 written without an exponent,
// fits simdjson: only longer tokens or exponents need asking.
bool may_be_wide(std::string_view token) {
  return token.size() > 18 || token.find_first_of("eE") != std::string_view::npos;
}

bool simdjson_refuses(std::string_view token, simdjson::dom::parser& probe, std::string& padded) {
  padded.assign(token);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element e;
  return probe.parse(padded.data(), token.size(), false).get(e) == simdjson::NUMBER_ERROR;
}

// Collects the first bytes of the strings at given places in document order.
class StringsAt {
 public:
  explicit StringsAt(const std::vector<size_t>& ordinals) : ordinals_(ordinals) {}

  void visit(simdjson::dom::element e) {
    if (done()) return;
    std::string_view text;
    simdjson::dom::array items;
    simdjson::dom::object fields;
    if (e.get_string().get(text) == simdjson::SUCCESS) {
      string(text);
    } else if (e.get_array().get(items) == simdjson::SUCCESS) {
      for (simdjson::dom::element item : items) visit(item);
    } else if (e.get_object().get(fields) == simdjson::SUCCESS) {
      for (simdjson::dom::key_value_pair field : fields) {
        string(field.key);
        visit(field.value);
      }
    }
  }

  std::vector<const char*> found() && { return std::move(found_); }

 private:
  bool done() const { return found_.size() == ordinals_.size(); }
  void string(std::string_view s) {
    if (!done() && ordinals_[found_.size()] == seen_) found_.push_back(s.data());
    ++seen_;
  }

  const std::vector<size_t>& ordinals_;
  std::vector<const char*> found_;
  size_t seen_ = 0;
};

}  // namespace

bool quote_numbers_simdjson_refuses(std::string_view json, simdjson::dom::parser& probe,
                                    std::string& out, std::vector<size_t>& string_ordinals) {
  out.clear();
  string_ordinals.clear();
  std::string padded_token;
  size_t strings = 0, copied = 0, i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      i = string_end(json, i);
      ++strings;
      continue;
    }
    if (!token_start(c)) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < json.size() && token_char(json[end])) ++end;
    const std::string_view token = json.substr(i, end - i);
    const bool wide = may_be_wide(token) && json_number(token);
    if ((wide || non_finite_literal(token)) && in_value_place(json, i, end) &&
        (!wide || simdjson_refuses(token, probe, padded_token))) {
      out.append(json.substr(copied, i - copied));
      out.append(1, '"').append(token).append(1, '"');
      copied = end;
      string_ordinals.push_back(strings++);
    }
    i = end;
  }
  if (string_ordinals.empty()) return false;
  out.append(json.substr(copied));
  out.append(simdjson::SIMDJSON_PADDING, '\0');
  return true;
}

std::string described_set_aside(std::string_view number) {
  return std::string(number) + (non_finite_literal(number)
                                    ? " (a non-finite number)"
                                    : " (a number beyond 64-bit integers and doubles)");
}

bool may_hold_numbers_simdjson_refuses(simdjson::error_code error) {
  return error == simdjson::NUMBER_ERROR || error == simdjson::TAPE_ERROR;
}

simdjson::error_code parse_with_numbers_set_aside(std::string_view json,
                                                  simdjson::error_code first_error,
                                                  simdjson::dom::parser& parser,
                                                  std::string& quoted, simdjson::dom::element& root,
                                                  std::vector<const char*>& set_aside) {
  set_aside.clear();
  std::vector<size_t> ordinals;
  if (!quote_numbers_simdjson_refuses(json, parser, quoted, ordinals)) return first_error;
  const auto error =
      parser.parse(quoted.data(), quoted.size() - simdjson::SIMDJSON_PADDING, false).get(root);
  if (!error) set_aside = strings_at(root, ordinals);
  return error;
}

std::optional<std::string_view> number_set_aside(const std::vector<const char*>& set_aside,
                                                 simdjson::dom::element e) {
  std::string_view s;
  if (set_aside.empty() || e.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  if (!std::binary_search(set_aside.begin(), set_aside.end(), s.data(), std::less<>()))
    return std::nullopt;
  return s;
}

std::vector<const char*> strings_at(simdjson::dom::element root,
                                    const std::vector<size_t>& ordinals) {
  StringsAt walk(ordinals);
  walk.visit(root);
  return std::move(walk).found();
}

}  // namespace shardkit::shardify
