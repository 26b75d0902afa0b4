#include "loader/batch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace shardkit::loader {

Column::Column(std::string name, DType dtype, std::vector<int64_t> shape,
               const std::shared_ptr<BufferPool>& pool)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {
  elements_ = 1;
  for (int64_t d : shape_) elements_ *= static_cast<size_t>(d);
  buffer_ = BufferPool::take(pool, bytes());
}

int64_t Column::get(size_t i) const {
  const void* p = data();
  switch (dtype_) {
    case DType::kU8:
      return static_cast<const uint8_t*>(p)[i];
    case DType::kU16:
      return static_cast<const uint16_t*>(p)[i];
    case DType::kU32:
      return static_cast<const uint32_t*>(p)[i];
    case DType::kI32:
      return static_cast<const int32_t*>(p)[i];
    case DType::kI64:
      return static_cast<const int64_t*>(p)[i];
    case DType::kF32:
      return static_cast<int64_t>(static_cast<const float*>(p)[i]);
  }
  return 0;
}

void Column::set(size_t i, int64_t v) {
  void* p = data();
  switch (dtype_) {
    case DType::kU8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v);
      break;
    case DType::kU16:
      static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v);
      break;
    case DType::kU32:
      static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v);
      break;
    case DType::kI32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
      break;
    case DType::kI64:
      static_cast<int64_t*>(p)[i] = v;
      break;
    case DType::kF32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
  }
}

Column* Batch::find(std::string_view name) {
  for (Column& c : columns)
    if (c.name() == name) return &c;
  return nullptr;
}

const Column* Batch::find(std::string_view name) const {
  return const_cast<Batch*>(this)->find(name);
}

Column& Batch::at(std::string_view name) {
  if (Column* c = find(name)) return *c;
  throw Error(ErrorCode::kInvalidArgument, "", "batch has no field '" + std::string(name) + "'");
}

const Column& Batch::at(std::string_view name) const { return const_cast<Batch*>(this)->at(name); }

size_t Batch::bytes() const {
  size_t total = 0;
  for (const Column& c : columns) total += c.bytes();
  return total;
}

}  // namespace shardkit::loader
