#include "shardify/first_row_fields.h"

#include <simdjson.h>

#include "shardify/byte_source.h"
#include "shardify/json_wide_numbers.h"
#include "shardify/line_reader.h"

namespace shardkit::shardify {
namespace {

// `line` as a JSON object, read as the JSONL reader reads it: a number simdjson refuses (1e400,
// NaN) is set aside, not a reason to call the line something else. `parser` and `quoted` hold
// what `object` refers to.
bool parse_object(std::string_view line, simdjson::dom::parser& parser, std::string& quoted,
                  simdjson::dom::object& object) {
  simdjson::dom::element root;
  simdjson::error_code error = parser.parse(line.data(), line.size(), true).get(root);
  if (error && may_hold_numbers_simdjson_refuses(error)) {
    std::vector<const char*> set_aside;
    error = parse_with_numbers_set_aside(line, error, parser, quoted, root, set_aside);
  }
  return !error && !root.get_object().get(object);
}

std::vector<std::string> json_keys(std::string_view line) {
  std::vector<std::string> keys;
  simdjson::dom::parser parser;
  std::string quoted;
  simdjson::dom::object object;
  if (!parse_object(line, parser, quoted, object)) return keys;
  for (auto field : object) keys.emplace_back(field.key);
  return keys;
}

std::vector<std::string> header_columns(std::string_view line, char separator) {
  std::vector<std::string> columns;
  size_t start = 0;
  for (size_t end; (end = line.find(separator, start)) != std::string_view::npos; start = end + 1)
    columns.emplace_back(line.substr(start, end - start));
  columns.emplace_back(line.substr(start));
  for (std::string& c : columns)
    if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = c.substr(1, c.size() - 2);
  return columns;
}

bool is_json_object(std::string_view line) {
  simdjson::dom::parser parser;
  std::string quoted;
  simdjson::dom::object object;
  return parse_object(line, parser, quoted, object);
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

bool starts_as_json_lines(std::string_view text) {
  const size_t end = text.find('\n');
  return end != std::string_view::npos && !blank(text.substr(end)) &&
         is_json_object(text.substr(0, end));
}

bool file_starts_as_json_lines(const std::string& path) {
  try {
    LineReader lines(ByteSource::open(path));
    std::string_view line;
    while (lines.next(line) && blank(line)) {
    }
    if (blank(line) || !is_json_object(line)) return false;
    while (lines.next(line))
      if (!blank(line)) return true;
  } catch (const std::exception&) {
  }
  return false;
}

std::vector<std::string> first_row_fields(const std::string& path, InputFormat format) {
  if (format != InputFormat::kJsonl && format != InputFormat::kCsv && format != InputFormat::kTsv)
    return {};
  try {
    LineReader lines(ByteSource::open(path));
    std::string_view line;
    while (lines.next(line)) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (format == InputFormat::kJsonl) return json_keys(line);
      return header_columns(line, format == InputFormat::kCsv ? ',' : '\t');
    }
  } catch (const std::exception&) {
  }
  return {};
}

}  // namespace shardkit::shardify
