// A typed schema of named, fixed-shape fields. Every record of a dataset has the same size, so
// record i of a block lives at i * record_size, and each field at a fixed offset inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit {

enum class DType : uint8_t { kU8, kU16, kU32, kI32, kI64, kF32 };

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // "u8", "u16", "u32", "i32", "i64", "f32"
// Throws Error(kInvalidArgument) for an unknown name.
DType parse_dtype(std::string_view name);

struct Field {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<uint32_t> shape;  // empty for a scalar
  size_t offset = 0;            // byte offset inside a record, set by Schema

  size_t element_count() const;
  size_t byte_size() const { return element_count() * dtype_size(dtype); }
};

class Schema {
 public:
  Schema() = default;
  // Validates names (identifier characters, unique), shapes and the total record size;
  // throws Error(kInvalidArgument) naming the offending field.
  explicit Schema(std::vector<Field> fields);

  // "name:dtype[d0,d1];name:dtype[]" — the text stored in every shard header.
  std::string canonical() const;
  static Schema parse(std::string_view canonical);

  const std::vector<Field>& fields() const { return fields_; }
  size_t record_size() const { return record_size_; }
  // nullptr when absent.
  const Field* find(std::string_view name) const;
  const Field& at(std::string_view name) const;  // throws when absent
  bool operator==(const Schema& other) const { return canonical() == other.canonical(); }

 private:
  std::vector<Field> fields_;
  size_t record_size_ = 0;
};

}  // namespace shardkit
