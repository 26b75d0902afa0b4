// Large buffers that come back for reuse. A freed allocation of a megabyte or so goes back to
// the kernel (glibc unmaps it, or trims the heap under it), and the next one is faulted in again
// page by page, each page zeroed by the kernel. The loader allocates such buffers for every
// batch's columns and every decoded block; on this project's virtual machines the faults made
// loader epochs vary twofold (BENCHMARKS.md). A pool keeps the buffers that come back, up to a
// byte limit, and hands them out again uninitialised.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace shardkit {

class BufferPool;

// An uninitialised, 64-byte-aligned buffer. When destroyed it goes back to the pool it came
// from, if that pool still exists and has room; otherwise it is freed.
class PooledBuffer {
 public:
  PooledBuffer() = default;
  PooledBuffer(PooledBuffer&& other) noexcept;
  PooledBuffer& operator=(PooledBuffer&& other) noexcept;
  ~PooledBuffer();

  unsigned char* data() const { return static_cast<unsigned char*>(data_); }
  size_t size() const { return size_; }  // the bytes asked for
  size_t capacity() const { return capacity_; }

 private:
  friend class BufferPool;
  void release();

  void* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  std::weak_ptr<BufferPool> home_;
};

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  // Buffers smaller than this come from malloc and are never kept: glibc serves them from its
  // heap without faults.
  static constexpr size_t kMinPooledBytes = size_t{64} << 10;

  // Keeps at most `max_idle_bytes` of returned buffers.
  static std::shared_ptr<BufferPool> create(size_t max_idle_bytes);
  // A buffer of at least `bytes`, from `pool` when it is not null.
  static PooledBuffer take(const std::shared_ptr<BufferPool>& pool, size_t bytes);

  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  size_t idle_bytes() const;

 private:
  friend class PooledBuffer;
  explicit BufferPool(size_t max_idle_bytes) : max_idle_bytes_(max_idle_bytes) {}
  static PooledBuffer allocate(size_t bytes);
  // Keeps `data` when there is room; false when the caller must free it.
  bool keep(void* data, size_t capacity);

  const size_t max_idle_bytes_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> idle_;  // by capacity
  size_t idle_bytes_ = 0;
};

}  // namespace shardkit
