// Reading helpers for tokenizer files: whole-file reads and simdjson access that names the file
// and the JSON path in every error (kInput for malformed, kUnsupported for valid but unsupported).
#pragma once

#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/regular_file.h"

namespace shardkit::tok {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// The file's bytes, read once into a string with room for simdjson's padding after them (see
// padded()): a 33 MB tokenizer.json is not copied again to be parsed.
inline std::string read_all(const std::filesystem::path& path) {
  check_regular_file(path, "tokenizer file",
                     "the tokenizer.json, vocab.txt, encoder.json or .model file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ErrorCode::kIo, path.string(), "cannot open tokenizer file");
  const std::streamoff size = in.tellg();
  std::string out;
  if (size > 0) {
    out.reserve(static_cast<size_t>(size) + simdjson::SIMDJSON_PADDING);
    out.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(out.data(), size);
    if (in.gcount() != size) out.resize(static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(ErrorCode::kIo, path.string(), "cannot read tokenizer file");
  return out;
}

// A string as simdjson input: without a copy when read_all left room for the padding.
inline simdjson::padded_string_view padded(const std::string& s, simdjson::padded_string& copy) {
  if (s.capacity() >= s.size() + simdjson::SIMDJSON_PADDING)
    return simdjson::padded_string_view(s.data(), s.size(), s.capacity());
  copy = simdjson::padded_string(s);
  return copy;
}

// Reading helpers that name the file and the JSON path in their errors.
class Json {
 public:
  explicit Json(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::kInput, source_, what);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(ErrorCode::kUnsupported, source_, what);
  }
  bool has(object o, std::string_view key) const {
    element e;
    return !o.at_key(key).get(e) && !e.is_null();
  }
  element get(object o, std::string_view key, const std::string& where) const {
    element e;
    if (o.at_key(key).get(e)) fail(where + ": missing \"" + std::string(key) + "\"");
    return e;
  }
  object obj(element e, const std::string& where) const {
    object o;
    if (e.get(o)) fail(where + " must be a JSON object");
    return o;
  }
  array arr(element e, const std::string& where) const {
    array a;
    if (e.get(a)) fail(where + " must be a JSON array");
    return a;
  }
  std::string str(element e, const std::string& where) const {
    std::string_view s;
    if (e.get(s)) fail(where + " must be a string");
    return std::string(s);
  }
  uint64_t uint(element e, const std::string& where) const {
    uint64_t v;
    if (e.get(v)) fail(where + " must be a non-negative integer");
    return v;
  }
  bool boolean(object o, std::string_view key, bool fallback, const std::string& where) const {
    element e;
    if (o.at_key(key).get(e) || e.is_null()) return fallback;
    bool b;
    if (e.get(b)) fail(where + "." + std::string(key) + " must be true or false");
    return b;
  }
  std::optional<std::string> opt_str(object o, std::string_view key,
                                     const std::string& where) const {
    element e;
    if (o.at_key(key).get(e) || e.is_null()) return std::nullopt;
    return str(e, where + "." + std::string(key));
  }
  double number(element e, const std::string& where) const {
    double d;
    if (e.get(d)) fail(where + " must be a number");
    return d;
  }
  std::string type_of(element e, const std::string& where) const {
    return str(get(obj(e, where), "type", where), where + ".type");
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

inline std::vector<std::string> vocab_by_id(const Json& j, element vocab_el,
                                            const std::string& where) {
  std::vector<std::string> vocab;
  object entries = j.obj(vocab_el, where);
  // Ids index a table: refuse sparse ids far beyond the number of entries.
  const uint64_t limit = uint64_t{entries.size()} * 4 + 65536;
  for (auto [key, value] : entries) {
    uint64_t id = j.uint(value, where + "[\"" + std::string(key) + "\"]");
    if (id >= limit)
      j.fail(where + ": id " + std::to_string(id) + " of '" + std::string(key) +
             "' is far beyond the vocabulary's " + std::to_string(entries.size()) + " entries");
    if (id >= vocab.size()) vocab.resize(id + 1);
    vocab[id] = std::string(key);
  }
  return vocab;
}

}  // namespace shardkit::tok
