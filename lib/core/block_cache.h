// Decoded blocks shared between threads, bounded by a byte budget and evicted least recently
// used. A block in use stays alive (shared_ptr) after eviction; two threads asking for the same
// block at once decode it once.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace shardkit {

struct DecodedBlock {
  uint64_t id = 0;  // global block number in the dataset
  uint32_t records = 0;
  uint32_t record_size = 0;
  std::vector<unsigned char> bytes;

  const unsigned char* record(uint32_t slot) const {
    return bytes.data() + size_t{slot} * record_size;
  }
};

class BlockCache {
 public:
  explicit BlockCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  using Loader = std::function<std::shared_ptr<const DecodedBlock>()>;
  // Returns the cached block or calls `load` (outside the lock). A loader's exception reaches
  // every thread waiting on that block and nothing is cached.
  std::shared_ptr<const DecodedBlock> get(uint64_t id, const Loader& load);
  size_t resident_bytes() const;
  size_t capacity() const { return capacity_; }

 private:
  using Entry = std::shared_future<std::shared_ptr<const DecodedBlock>>;
  void insert_locked(uint64_t id, std::shared_ptr<const DecodedBlock> block);

  size_t capacity_;
  mutable std::mutex mu_;
  std::list<uint64_t> lru_;  // front = most recent
  struct Slot {
    std::shared_ptr<const DecodedBlock> block;
    std::list<uint64_t>::iterator pos;
  };
  std::unordered_map<uint64_t, Slot> resident_;
  std::unordered_map<uint64_t, Entry> loading_;
  size_t bytes_ = 0;
};

}  // namespace shardkit
