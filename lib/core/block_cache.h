// Decoded blocks shared between threads: the one block cache of shardkit. Two kinds of
// residency share one table, so a block is decoded once whoever asks:
//  - random access (Dataset::block, `shard-inspect`): least recently used blocks within
//    `capacity_bytes`;
//  - window access (the loader): a block claimed for a shuffle window is pinned, outside the
//    LRU budget, until the loader releases that window (the loader bounds pinned bytes by its
//    memory budget: at most the window being read and the next one).
// A block in use stays alive (shared_ptr) after eviction; two threads asking for the same block
// at once decode it once, and a loader's exception reaches every thread waiting on that block.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/buffer_pool.h"

namespace shardkit {

struct DecodedBlock {
  uint64_t id = 0;  // global block number in the dataset
  uint32_t records = 0;
  uint32_t record_size = 0;
  // Exactly records x record_size bytes: a block that decodes short is an error, never stored.
  // Left uninitialised before decoding (zeroing each 256 KB block was 14% of a loader epoch),
  // and back to the dataset's pool when the block is dropped (DatasetOptions::idle_block_bytes).
  PooledBuffer bytes;

  const unsigned char* record(uint32_t slot) const {
    return bytes.data() + size_t{slot} * record_size;
  }
};

class BlockCache {
 public:
  using BlockPtr = std::shared_ptr<const DecodedBlock>;
  using Loader = std::function<BlockPtr()>;

  // The window a block is pinned for; `generation` tells an abandoned epoch's windows apart.
  struct Pin {
    uint64_t generation = 0;
    uint64_t window = 0;
  };
  // The result of claim(): the block's future, and a promise when this caller must load it.
  struct Claim {
    std::shared_future<BlockPtr> block;
    std::shared_ptr<std::promise<BlockPtr>> promise;  // null: present or loaded by another
    bool mine() const { return promise != nullptr; }
  };

  explicit BlockCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Random access: the cached block, or `load` called outside the lock. Nothing is cached when
  // `load` throws.
  BlockPtr get(uint64_t id, const Loader& load);

  // The block when it is loaded and held, without waiting and without loading it; nullptr
  // otherwise.
  BlockPtr find(uint64_t id);

  // Window access: the block's future, pinned to `pin` (a later pin of the same generation
  // extends it). When nobody has it, the caller gets the promise and must finish() it.
  Claim claim(uint64_t id, Pin pin);
  // Completes a claim with a block, or with the exception a failed load threw (then nothing is
  // cached and the next claim tries again).
  void finish(uint64_t id, const Claim& claim, BlockPtr block);
  void finish(uint64_t id, const Claim& claim, std::exception_ptr error);
  // Unpins every block pinned for another generation or for a window below `window`; they
  // become ordinary LRU entries (dropped at once when capacity is 0).
  void release_below(uint64_t generation, uint64_t window);

  size_t resident_bytes() const;  // decoded bytes held, pinned or not
  size_t pinned_bytes() const;
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::shared_future<BlockPtr> future;
    std::shared_ptr<std::promise<BlockPtr>> loading;  // set while the block is being loaded
    BlockPtr block;                                   // set once loaded
    bool pinned = false;
    Pin pin;
    bool in_lru = false;
    std::list<uint64_t>::iterator lru_pos;
  };
  using Map = std::unordered_map<uint64_t, Entry>;

  Claim claim_locked(uint64_t id, const Pin* pin);
  void store_locked(uint64_t id, const std::shared_ptr<std::promise<BlockPtr>>& promise,
                    BlockPtr block);
  void to_lru_locked(Map::iterator it);
  void trim_locked();

  size_t capacity_;
  mutable std::mutex mu_;
  Map entries_;
  std::list<uint64_t> lru_;  // front = most recent; only loaded, unpinned blocks
  size_t lru_bytes_ = 0;
  size_t pinned_bytes_ = 0;
};

}  // namespace shardkit
