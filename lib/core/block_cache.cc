#include "core/block_cache.h"

namespace shardkit {

std::shared_ptr<const DecodedBlock> BlockCache::get(uint64_t id, const Loader& load) {
  std::promise<std::shared_ptr<const DecodedBlock>> promise;
  {
    std::unique_lock lock(mu_);
    if (auto it = resident_.find(id); it != resident_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.pos);
      return it->second.block;
    }
    if (auto it = loading_.find(id); it != loading_.end()) {
      Entry pending = it->second;
      lock.unlock();
      return pending.get();
    }
    loading_.emplace(id, promise.get_future().share());
  }
  std::shared_ptr<const DecodedBlock> block;
  try {
    block = load();
  } catch (...) {
    std::lock_guard lock(mu_);
    promise.set_exception(std::current_exception());
    loading_.erase(id);
    throw;
  }
  std::lock_guard lock(mu_);
  promise.set_value(block);
  loading_.erase(id);
  insert_locked(id, block);
  return block;
}

void BlockCache::insert_locked(uint64_t id, std::shared_ptr<const DecodedBlock> block) {
  const size_t size = block->bytes.size();
  if (size > capacity_) return;  // larger than the whole budget: used once, never kept
  while (bytes_ + size > capacity_ && !lru_.empty()) {
    uint64_t victim = lru_.back();
    lru_.pop_back();
    auto it = resident_.find(victim);
    bytes_ -= it->second.block->bytes.size();
    resident_.erase(it);
  }
  lru_.push_front(id);
  resident_.emplace(id, Slot{std::move(block), lru_.begin()});
  bytes_ += size;
}

size_t BlockCache::resident_bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace shardkit
