#include "core/record_json.h"

#include <charconv>
#include <cstring>

namespace shardkit {
namespace {

void append_value(std::string& out, DType dtype, const unsigned char* p) {
  char buf[32];
  char* end = buf;
  switch (dtype) {
    case DType::kU8:
      end = std::to_chars(buf, buf + 32, *p).ptr;
      break;
    case DType::kU16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      end = std::to_chars(buf, buf + 32, v).ptr;
      break;
    }
    case DType::kU32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      end = std::to_chars(buf, buf + 32, v).ptr;
      break;
    }
    case DType::kI32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      end = std::to_chars(buf, buf + 32, v).ptr;
      break;
    }
    case DType::kI64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      end = std::to_chars(buf, buf + 32, v).ptr;
      break;
    }
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, 4);
      if (v != v || v - v != 0) {
        out += "null";
        return;
      }  // JSON has no NaN or infinity
      end = std::to_chars(buf, buf + 32, v).ptr;
      break;
    }
  }
  out.append(buf, end);
}

// Nested lists following the shape, innermost dimension last.
void append_dims(std::string& out, const Field& f, size_t dim, const unsigned char*& p) {
  if (dim == f.shape.size()) {
    append_value(out, f.dtype, p);
    p += dtype_size(f.dtype);
    return;
  }
  out += '[';
  for (uint32_t i = 0; i < f.shape[dim]; ++i) {
    if (i) out += ',';
    append_dims(out, f, dim + 1, p);
  }
  out += ']';
}

}  // namespace

std::string field_to_json(const Field& field, const unsigned char* record) {
  std::string out;
  const unsigned char* p = record + field.offset;
  append_dims(out, field, 0, p);
  return out;
}

std::string record_to_json(const Schema& schema, const unsigned char* record, uint64_t index) {
  std::string out = "{\"index\":" + std::to_string(index);
  for (const Field& f : schema.fields()) {
    out += ",\"" + f.name + "\":";
    out += field_to_json(f, record);
  }
  out += '}';
  return out;
}

}  // namespace shardkit
