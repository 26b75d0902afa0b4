#include "core/buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

namespace shardkit {

PooledBuffer::PooledBuffer(PooledBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      home_(std::move(other.home_)) {}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    home_ = std::move(other.home_);
  }
  return *this;
}

PooledBuffer::~PooledBuffer() { release(); }

void PooledBuffer::release() {
  if (!data_) return;
  const std::shared_ptr<BufferPool> pool = home_.lock();
  if (!pool || !pool->keep(data_, capacity_)) std::free(data_);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

std::shared_ptr<BufferPool> BufferPool::create(size_t max_idle_bytes) {
  return std::shared_ptr<BufferPool>(new BufferPool(max_idle_bytes));
}

PooledBuffer BufferPool::allocate(size_t bytes) {
  PooledBuffer b;
  b.size_ = bytes;
  b.capacity_ = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  b.data_ = std::aligned_alloc(64, b.capacity_);
  if (!b.data_) throw std::bad_alloc();
  return b;
}

PooledBuffer BufferPool::take(const std::shared_ptr<BufferPool>& pool, size_t bytes) {
  if (!pool || bytes < kMinPooledBytes) return allocate(bytes);
  {
    std::lock_guard lock(pool->mu_);
    // The smallest idle buffer that fits, unless it would waste more than a quarter of itself
    // (a dynamically padded batch asks for many sizes).
    const auto it = pool->idle_.lower_bound(bytes);
    if (it != pool->idle_.end() && it->first - bytes <= it->first / 4) {
      PooledBuffer b;
      b.data_ = it->second;
      b.size_ = bytes;
      b.capacity_ = it->first;
      b.home_ = pool;
      pool->idle_bytes_ -= it->first;
      pool->idle_.erase(it);
      return b;
    }
  }
  PooledBuffer b = allocate(bytes);
  b.home_ = pool;
  return b;
}

bool BufferPool::keep(void* data, size_t capacity) {
  std::lock_guard lock(mu_);
  if (idle_bytes_ + capacity > max_idle_bytes_) return false;
  idle_.emplace(capacity, data);
  idle_bytes_ += capacity;
  return true;
}

size_t BufferPool::idle_bytes() const {
  std::lock_guard lock(mu_);
  return idle_bytes_;
}

BufferPool::~BufferPool() {
  for (const auto& [capacity, data] : idle_) std::free(data);
}

}  // namespace shardkit
