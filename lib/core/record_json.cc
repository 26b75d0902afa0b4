#include "core/record_json.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace shardkit {
namespace {

using nlohmann::ordered_json;

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

ordered_json value(DType dtype, const unsigned char* p) {
  switch (dtype) {
    case DType::kU8:
      return *p;
    case DType::kU16:
      return load<uint16_t>(p);
    case DType::kU32:
      return load<uint32_t>(p);
    case DType::kI32:
      return load<int32_t>(p);
    case DType::kI64:
      return load<int64_t>(p);
    case DType::kF32: {
      const float v = load<float>(p);
      if (!std::isfinite(v)) return nullptr;  // JSON has no NaN or infinity
      return v;
    }
  }
  return nullptr;
}

// Nested lists following the shape, innermost dimension last.
ordered_json dims(const Field& f, size_t dim, const unsigned char*& p) {
  if (dim == f.shape.size()) {
    ordered_json v = value(f.dtype, p);
    p += dtype_size(f.dtype);
    return v;
  }
  ordered_json list = ordered_json::array();
  for (uint32_t i = 0; i < f.shape[dim]; ++i) list.push_back(dims(f, dim + 1, p));
  return list;
}

}  // namespace

nlohmann::ordered_json field_json(const Field& field, const unsigned char* record) {
  const unsigned char* p = record + field.offset;
  return dims(field, 0, p);
}

nlohmann::ordered_json record_json(const Schema& schema, const unsigned char* record,
                                   uint64_t index) {
  ordered_json out;
  out["index"] = index;
  for (const Field& f : schema.fields()) out[f.name] = field_json(f, record);
  return out;
}

}  // namespace shardkit
