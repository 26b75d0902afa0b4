#include "core/block_cache.h"

namespace shardkit {

BlockCache::Claim BlockCache::claim_locked(uint64_t id, const Pin* pin) {
  auto [it, fresh] = entries_.try_emplace(id);
  Entry& e = it->second;
  Claim c;
  if (fresh) {
    c.promise = std::make_shared<std::promise<BlockPtr>>();
    e.loading = c.promise;
    e.future = c.promise->get_future().share();
  }
  if (pin) {
    if (e.in_lru) {
      lru_.erase(e.lru_pos);
      e.in_lru = false;
      lru_bytes_ -= e.block->bytes.size();
      pinned_bytes_ += e.block->bytes.size();
      e.pinned = true;
      e.pin = *pin;
    } else if (!e.pinned) {
      e.pinned = true;
      e.pin = *pin;
      if (e.block) pinned_bytes_ += e.block->bytes.size();
    } else if (e.pin.generation != pin->generation || e.pin.window < pin->window) {
      e.pin = *pin;
    }
  } else if (e.in_lru) {
    lru_.splice(lru_.begin(), lru_, e.lru_pos);
  }
  c.block = e.future;
  return c;
}

BlockCache::BlockPtr BlockCache::get(uint64_t id, const Loader& load) {
  Claim c;
  {
    std::lock_guard lock(mu_);
    c = claim_locked(id, nullptr);
  }
  if (!c.mine()) return c.block.get();
  BlockPtr block;
  try {
    block = load();
  } catch (...) {
    finish(id, c, std::current_exception());
    throw;
  }
  finish(id, c, block);
  return block;
}

BlockCache::BlockPtr BlockCache::find(uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second.block) return nullptr;
  if (it->second.in_lru) lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
  return it->second.block;
}

BlockCache::Claim BlockCache::claim(uint64_t id, Pin pin) {
  std::lock_guard lock(mu_);
  return claim_locked(id, &pin);
}

void BlockCache::finish(uint64_t id, const Claim& claim, BlockPtr block) {
  std::lock_guard lock(mu_);
  claim.promise->set_value(block);
  store_locked(id, claim.promise, std::move(block));
}

void BlockCache::finish(uint64_t id, const Claim& claim, std::exception_ptr error) {
  std::lock_guard lock(mu_);
  claim.promise->set_exception(error);
  auto it = entries_.find(id);
  if (it != entries_.end() && it->second.loading == claim.promise) entries_.erase(it);
}

void BlockCache::store_locked(uint64_t id, const std::shared_ptr<std::promise<BlockPtr>>& promise,
                              BlockPtr block) {
  auto it = entries_.find(id);
  // Gone (or claimed again) when released while loading: the waiters have it, nobody keeps it.
  if (it == entries_.end() || it->second.loading != promise) return;
  Entry& e = it->second;
  e.loading.reset();
  e.block = std::move(block);
  if (e.pinned)
    pinned_bytes_ += e.block->bytes.size();
  else
    to_lru_locked(it);
}

void BlockCache::to_lru_locked(Map::iterator it) {
  Entry& e = it->second;
  const size_t size = e.block->bytes.size();
  if (size > capacity_) {  // larger than the whole budget: used once, never kept
    entries_.erase(it);
    return;
  }
  lru_.push_front(it->first);
  e.lru_pos = lru_.begin();
  e.in_lru = true;
  lru_bytes_ += size;
  trim_locked();
}

void BlockCache::trim_locked() {
  while (lru_bytes_ > capacity_ && !lru_.empty()) {
    auto it = entries_.find(lru_.back());
    lru_.pop_back();
    lru_bytes_ -= it->second.block->bytes.size();
    entries_.erase(it);
  }
}

void BlockCache::release_below(uint64_t generation, uint64_t window) {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> released;
  for (auto& [id, e] : entries_)
    if (e.pinned && (e.pin.generation != generation || e.pin.window < window))
      released.push_back(id);
  // Demoting may trim the LRU, which erases entries: so not while iterating over them.
  for (uint64_t id : released) {
    auto it = entries_.find(id);
    Entry& e = it->second;
    e.pinned = false;
    if (e.block) {
      pinned_bytes_ -= e.block->bytes.size();
      to_lru_locked(it);
    } else {
      // Still loading: forget it, so that a stale load leaves nothing behind.
      entries_.erase(it);
    }
  }
}

size_t BlockCache::resident_bytes() const {
  std::lock_guard lock(mu_);
  return lru_bytes_ + pinned_bytes_;
}

size_t BlockCache::pinned_bytes() const {
  std::lock_guard lock(mu_);
  return pinned_bytes_;
}

}  // namespace shardkit
