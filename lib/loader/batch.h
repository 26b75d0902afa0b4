// One batch: a contiguous, typed, 64-byte-aligned buffer per field, row-major with the batch
// as the first dimension, plus the global record indices it was gathered from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/buffer_pool.h"
#include "core/schema.h"

namespace shardkit::loader {

class Column {
 public:
  // Uninitialised; the buffer comes from `pool` when given (see Batch::buffers).
  Column(std::string name, DType dtype, std::vector<int64_t> shape,
         const std::shared_ptr<BufferPool>& pool = nullptr);

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t elements() const { return elements_; }
  size_t bytes() const { return elements_ * dtype_size(dtype_); }
  void* data() { return buffer_.data(); }
  const void* data() const { return buffer_.data(); }
  template <typename T>
  T* as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data());
  }
  // Element i converted to int64 (any dtype); for tests and transforms that do not care.
  int64_t get(size_t i) const;
  void set(size_t i, int64_t value);

 private:
  std::string name_;
  DType dtype_;
  std::vector<int64_t> shape_;
  size_t elements_ = 0;
  PooledBuffer buffer_;
};

struct Batch {
  uint64_t epoch = 0;
  uint64_t index = 0;             // this rank's batch number within the epoch
  std::vector<uint64_t> records;  // record index of each row in its source's dataset
  std::vector<uint32_t> sources;  // the source of each row (all 0 for one dataset)
  uint64_t step_tokens = 0;       // with max_tokens: every rank's tokens of this global step
  std::vector<Column> columns;
  // Where the large column buffers come from and go back to when the batch is dropped (the
  // loader's pool); null: plain allocations.
  std::shared_ptr<BufferPool> buffers;

  size_t size() const { return records.size(); }
  // nullptr when absent.
  Column* find(std::string_view name);
  const Column* find(std::string_view name) const;
  // Throws Error(kInvalidArgument) when absent.
  Column& at(std::string_view name);
  const Column& at(std::string_view name) const;
  size_t bytes() const;
};

}  // namespace shardkit::loader
