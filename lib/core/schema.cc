#include "core/schema.h"

#include <charconv>
#include <set>

#include "core/error.h"
#include "format/shard_format.h"

namespace shardkit {
namespace {

constexpr size_t kMaxFieldName = 64;

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxFieldName) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

[[noreturn]] void bad(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "", "schema: " + what);
}

}  // namespace

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kU8:
      return 1;
    case DType::kU16:
      return 2;
    case DType::kU32:
      return 4;
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kF32:
      return 4;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kU8:
      return "u8";
    case DType::kU16:
      return "u16";
    case DType::kU32:
      return "u32";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kF32:
      return "f32";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType d : {DType::kU8, DType::kU16, DType::kU32, DType::kI32, DType::kI64, DType::kF32})
    if (dtype_name(d) == name) return d;
  bad("unknown dtype '" + std::string(name) + "' (expected u8, u16, u32, i32, i64 or f32)");
}

size_t Field::element_count() const {
  size_t n = 1;
  for (uint32_t d : shape) n *= d;
  return n;
}

Schema::Schema(std::vector<Field> fields) : fields_(std::move(fields)) {
  if (fields_.empty()) bad("a schema needs at least one field");
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (Field& f : fields_) {
    if (!valid_name(f.name)) bad("invalid field name '" + f.name + "'");
    if (!seen.insert(f.name).second) bad("duplicate field '" + f.name + "'");
    uint64_t elements = 1;
    for (uint32_t d : f.shape) {
      if (d == 0) bad("field '" + f.name + "' has a zero dimension");
      elements *= d;
      if (elements > format::kMaxRecordSize) bad("field '" + f.name + "' is too large");
    }
    f.offset = static_cast<size_t>(offset);
    offset += elements * dtype_size(f.dtype);
    if (offset > format::kMaxRecordSize)
      bad("record size exceeds " + std::to_string(format::kMaxRecordSize) + " bytes");
  }
  record_size_ = static_cast<size_t>(offset);
}

std::string Schema::canonical() const {
  std::string s;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (i) s += ';';
    s += f.name;
    s += ':';
    s += dtype_name(f.dtype);
    s += '[';
    for (size_t j = 0; j < f.shape.size(); ++j) {
      if (j) s += ',';
      s += std::to_string(f.shape[j]);
    }
    s += ']';
  }
  return s;
}

Schema Schema::parse(std::string_view text) {
  std::vector<Field> fields;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    size_t colon = item.find(':');
    size_t open = item.find('[');
    if (colon == std::string_view::npos || open == std::string_view::npos || open < colon ||
        item.back() != ']')
      bad("malformed field '" + std::string(item) + "'");
    Field f;
    f.name = std::string(item.substr(0, colon));
    f.dtype = parse_dtype(item.substr(colon + 1, open - colon - 1));
    std::string_view dims = item.substr(open + 1, item.size() - open - 2);
    size_t dpos = 0;
    while (!dims.empty() && dpos <= dims.size()) {
      size_t dend = dims.find(',', dpos);
      if (dend == std::string_view::npos) dend = dims.size();
      uint32_t d = 0;
      auto [ptr, ec] = std::from_chars(dims.data() + dpos, dims.data() + dend, d);
      if (ec != std::errc() || ptr != dims.data() + dend || dend == dpos)
        bad("malformed shape in '" + std::string(item) + "'");
      f.shape.push_back(d);
      dpos = dend + 1;
    }
    fields.push_back(std::move(f));
    pos = end + 1;
  }
  Schema s(std::move(fields));
  if (s.canonical() != text) bad("schema text is not canonical: '" + std::string(text) + "'");
  return s;
}

const Field* Schema::find(std::string_view name) const {
  for (const Field& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

const Field& Schema::at(std::string_view name) const {
  const Field* f = find(name);
  if (!f) bad("no field named '" + std::string(name) + "'");
  return *f;
}

}  // namespace shardkit
