// The models' word memo: a word's tokens depend on the word alone and real text repeats its
// words, so most words are looked up rather than tokenized again (HF tokenizers caches words for
// the same reason). Each thread keeps its own table per model, so lookups take no lock.
//
// One open-addressing table over two arenas (key bytes, values), with no per-entry allocation.
// It is cleared when half full, which bounds it at kSlots / 2 entries: 6 MiB of slots and a
// 128 KiB filter of the hashes stored, mapped whole at construction (core/zeroed_pages.h says
// why), plus the arenas, per thread and model.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/zeroed_pages.h"
#include "tokenizer/hot_word_table.h"
#include "tokenizer/string_map.h"

namespace shardkit::tok {

// One bit per hash of the keys set (a Bloom filter with one hash): 2^20 bits, 128 KiB, small
// enough for a core's L2 cache. With n keys set, an absent key passes for a present one with a
// probability of about n / 2^20: 12% at n = 2^17.
class HashBits {
 public:
  static constexpr size_t kBits = size_t{1} << 20;
  HashBits() : words_(kBits / 64) {}
  bool test(uint64_t h) const { return (words_[word(h)] & bit(h)) != 0; }
  void set(uint64_t h) { words_[word(h)] |= bit(h); }
  void clear() { std::fill(words_.begin(), words_.end(), uint64_t{0}); }

 private:
  static size_t word(uint64_t h) { return (h >> 44) / 64; }  // the hash's top 20 bits
  static uint64_t bit(uint64_t h) { return uint64_t{1} << ((h >> 44) % 64); }
  ZeroedPages<uint64_t> words_;
};

template <typename Value>
class ByteKeyCache {
 public:
  ByteKeyCache() : slots_(kSlots) {}

  // The values stored for `key`, or false.
  bool find(std::string_view key, std::span<const Value>* values) const {
    const uint64_t h = hash_bytes(key.data(), key.size()) | 1;
    if (!seen_.test(h)) {
      // A word never stored: its insert follows, once it is tokenized, so its slot is requested
      // from memory now and arrives while the word is tokenized.
      __builtin_prefetch(&slots_[h & kMask]);
      return false;
    }
    for (size_t i = h & kMask;; i = (i + 1) & kMask) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return false;
      if (matches(s, h, key)) {
        *values = {values_.data() + s.value_offset, s.value_count};
        return true;
      }
    }
  }

  void insert(std::string_view key, std::span<const Value> values) {
    if (entries_ >= kSlots / 2 || keys_.size() + key.size() > kMaxKeyBytes ||
        values_.size() + values.size() > kMaxValues)
      clear();
    const uint64_t h = hash_bytes(key.data(), key.size()) | 1;
    size_t i = h & kMask;
    for (; slots_[i].hash != 0; i = (i + 1) & kMask)
      if (matches(slots_[i], h, key)) return;
    slots_[i] = {h, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(key.size()),
                 static_cast<uint32_t>(values_.size()), static_cast<uint32_t>(values.size())};
    seen_.set(h);
    keys_.append(key);
    values_.insert(values_.end(), values.begin(), values.end());
    ++entries_;
  }

 private:
  static constexpr size_t kSlots = size_t{1} << 18;
  static constexpr size_t kMask = kSlots - 1;
  // Bounds on what the entries hold, far above what kSlots / 2 words of prose take (English:
  // 0.4 MB of keys), for models that store long keys (bpe_model.cc, up to 1 KiB).
  static constexpr size_t kMaxKeyBytes = size_t{8} << 20;
  static constexpr size_t kMaxValues = size_t{2} << 20;
  struct Slot {
    uint64_t hash = 0;  // 0 marks an empty slot; stored hashes have the low bit set
    uint32_t key_offset = 0, key_size = 0, value_offset = 0, value_count = 0;
  };

  bool matches(const Slot& s, uint64_t h, std::string_view key) const {
    return s.hash == h && s.key_size == key.size() &&
           std::memcmp(keys_.data() + s.key_offset, key.data(), key.size()) == 0;
  }
  void clear() {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    seen_.clear();
    keys_.clear();
    values_.clear();
    entries_ = 0;
  }

  ZeroedPages<Slot> slots_;  // an all-zero slot is empty
  // The hashes of the words stored: on a first pass over a text most lookups are of new words,
  // and each probe of the slots (6 MiB) was a load from memory that the word's tokenizing then
  // waited for. With at most kSlots / 2 words, an absent word passes for a stored one at most
  // 12% of the time, and is then probed as before.
  HashBits seen_;
  std::string keys_;
  std::vector<Value> values_;
  size_t entries_ = 0;
};

// Both levels of a model's word memo (one per thread and model, through thread_cache): the hot
// table of short words in front of the bounded map of all of them.
template <typename Value, size_t kHotValues>
struct WordMemo {
  using Hot = HotWordTable<Value, kHotValues>;
  Hot hot;
  ByteKeyCache<Value> all;
};

// Ids gathered in a fixed buffer and appended to the output vector together: a hot-table hit
// writes its slot's every value here unconditionally (HotWordTable::copy_to) and counts only
// its own, which a vector cannot take without a branch per id.
template <typename Value, size_t kCapacity>
struct StagedIds {
  static constexpr size_t kSlack = 8;  // room for one copy_to past the last counted value
  Value ids[kCapacity + kSlack];
  size_t size = 0;

  void flush(std::vector<Value>& out) {
    out.insert(out.end(), ids, ids + size);
    size = 0;
  }
  // Flushes unless `more` ids fit.
  void make_room(size_t more, std::vector<Value>& out) {
    if (size + more > kCapacity) [[unlikely]]
      flush(out);
  }
  // Stages the values `table` (a HotWordTable) holds for `key`; false when it holds none.
  template <typename Table>
  [[gnu::always_inline]] bool take_hit(const Table& table, const typename Table::Key& key,
                                       std::vector<Value>& out) {
    make_room(Table::kSlotValues, out);
    const size_t found = table.copy_to(key, ids + size);
    size += found;
    return found != 0;
  }
};

// Room for `more` values at the end of `v` without a reallocation, growing geometrically (a
// reservation of exactly what one call needs would copy a batch's ids once per call).
template <typename T>
void reserve_more(std::vector<T>& v, size_t more) {
  if (v.capacity() - v.size() < more) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

// A number naming one model for thread_cache(); never reused, unlike an address.
inline uint64_t new_cache_owner() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

// The calling thread's cache for the model numbered `owner`. Models come and go (a test loads
// hundreds): once a thread holds caches for 16 owners it drops all but the current one.
template <typename Cache>
Cache& thread_cache(uint64_t owner) {
  thread_local uint64_t last_owner = 0;
  thread_local Cache* last = nullptr;
  if (last_owner == owner) return *last;
  thread_local std::unordered_map<uint64_t, std::unique_ptr<Cache>> caches;
  std::unique_ptr<Cache>& slot = caches[owner];
  if (!slot) {
    if (caches.size() > 16)
      for (auto it = caches.begin(); it != caches.end();)
        it = it->first == owner ? std::next(it) : caches.erase(it);
    slot = std::make_unique<Cache>();
  }
  last_owner = owner;
  last = slot.get();
  return *last;
}

}  // namespace shardkit::tok
