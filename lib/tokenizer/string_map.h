// Open-addressing hash tables for the hot paths: vocabulary lookups by byte string and BPE merge
// lookups by id pair. Read-only after construction, so concurrent lookups need no locking.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/blob.h"

namespace shardkit::tok {

inline uint64_t hash_bytes(const char* p, size_t n) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  uint64_t h = 0x243F6A8885A308D3ULL ^ (n * kMul);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    // The last n < 8 bytes as one little-endian word, read as two overlapping loads (or three
    // bytes) rather than copied into a zeroed word: the byte copy's 8-byte reload waited for
    // the copy's stores, which was half of the hashing when a WordPiece vocabulary's prefixes
    // were set (the same words as the copy, so the same hashes).
    uint64_t w;
    if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      w = lo | (uint64_t{hi} << (8 * (n - 4)));
    } else {
      const auto byte = [&](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
      w = byte(0) | (byte(n / 2) << (8 * (n / 2))) | (byte(n - 1) << (8 * (n - 1)));
    }
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 32);
}

inline uint64_t hash_u64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  return x ^ (x >> 33);
}

// Byte string -> uint32 id. Slots are 16 bytes (a 32-bit hash tag, id, key offset, length) so
// large vocabularies stay cache-friendly.
class StringIdMap {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    if (cap > slots_.size()) rehash(cap);
  }
  // Inserts or overwrites.
  void set(std::string_view key, uint32_t id) { set(key, id, hash_bytes(key.data(), key.size())); }
  void set(std::string_view key, uint32_t id, uint64_t h) {
    if ((count_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    std::vector<Slot>& slots = slots_.edit();
    std::vector<char>& arena = arena_.edit();
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t mask = slots.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (s.id == kNone) {
        s.tag = tag;
        s.offset = static_cast<uint32_t>(arena.size());
        s.len = static_cast<uint32_t>(key.size());
        s.id = id;
        arena.insert(arena.end(), key.begin(), key.end());
        arena_.publish();
        ++count_;
        return;
      }
      if (s.tag == tag && key_at(s) == key) {
        s.id = id;
        return;
      }
    }
  }
  uint32_t find(const char* p, size_t n) const { return find(p, n, hash_bytes(p, n)); }
  uint32_t find(const char* p, size_t n, uint64_t h) const {
    if (slots_.empty()) return kNone;
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id == kNone) return kNone;
      if (s.tag == tag && key_at(s) == std::string_view(p, n)) return s.id;
    }
  }
  uint32_t find(std::string_view key) const { return find(key.data(), key.size()); }
  size_t size() const { return count_; }

  // The table as it is (compiled_cache.h); load() refuses one whose shape is not a table's (its
  // slots not a power of two, a key outside the arena).
  void save(BlobWriter& w) const {
    slots_.save(w);
    arena_.save(w);
    w.value<uint64_t>(count_);
  }
  // Whether every id stored is below n.
  bool all_ids_below(size_t n) const {
    bool outside = false;  // no branch a slot: the loop runs at memory speed
    for (const Slot& s : slots_) outside |= (s.id != kNone) & (s.id >= n);
    return !outside;
  }
  bool load(BlobReader& r) {
    if (!slots_.restore(r) || !arena_.restore(r)) return false;
    count_ = r.value<uint64_t>();
    if (!r.ok() || (slots_.size() & (slots_.size() - 1)) != 0) return false;
    size_t used = 0;  // a probe must always reach an empty slot
    bool outside = false;
    const uint64_t arena = arena_.size();
    for (const Slot& s : slots_) {
      const bool taken = s.id != kNone;
      used += taken;
      outside |= taken & ((s.offset > arena) | (s.len > arena - s.offset));
    }
    return !outside && used == count_ && used * 2 <= slots_.size();
  }

  // Many lookups or insertions, in groups whose slots are all requested from memory before the
  // first is probed: a large vocabulary's table is far larger than the caches, and lookups that
  // wait for one another were most of a tokenizer's load time. key_at(i) is the i-th key;
  // found(i, id) gets each answer (kNone when absent), in order.
  template <typename KeyAt, typename Found>
  void find_each(size_t count, KeyAt&& key_at, Found&& found) const {
    for_each_group(count, key_at, [&](size_t i, std::string_view key, uint64_t h) {
      found(i, find(key.data(), key.size(), h));
    });
  }
  // Inserts (or overwrites) key_at(i) -> id_at(i) for i < count, in order.
  template <typename KeyAt, typename IdAt>
  void set_each(size_t count, KeyAt&& key_at, IdAt&& id_at) {
    reserve(count_ + count);
    for_each_group(count, key_at,
                   [&](size_t i, std::string_view key, uint64_t h) { set(key, id_at(i), h); });
  }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t id = kNone;
    uint32_t offset = 0;
    uint32_t len = 0;
  };
  // The key a slot holds (an empty arena has no data pointer to compare against).
  std::string_view key_at(const Slot& s) const { return {arena_.data() + s.offset, s.len}; }
  template <typename KeyAt, typename Each>
  void for_each_group(size_t count, KeyAt& key_at, Each&& each) const {
    constexpr size_t kGroup = 32;
    uint64_t hashes[kGroup];
    for (size_t first = 0; first < count; first += kGroup) {
      const size_t n = std::min(kGroup, count - first);
      for (size_t k = 0; k < n; ++k) {
        const std::string_view key = key_at(first + k);
        hashes[k] = hash_bytes(key.data(), key.size());
        if (!slots_.empty()) __builtin_prefetch(&slots_[hashes[k] & (slots_.size() - 1)]);
      }
      for (size_t k = 0; k < n; ++k) each(first + k, key_at(first + k), hashes[k]);
    }
  }
  void rehash(size_t cap) {
    const std::vector<Slot> old = std::move(slots_.edit());
    std::vector<Slot>& slots = slots_.owned;
    slots.assign(cap, Slot{});
    slots_.publish();
    size_t mask = cap - 1;
    for (const Slot& s : old) {
      if (s.id == kNone) continue;
      const std::string_view key = key_at(s);
      size_t i = hash_bytes(key.data(), key.size()) & mask;
      while (slots[i].id != kNone) i = (i + 1) & mask;
      slots[i] = s;
    }
  }
  TableArray<Slot> slots_;
  TableArray<char> arena_;
  size_t count_ = 0;
};

// uint64 key -> uint64 value, key ~0 reserved. A key and its value share a slot, so that a hit
// reads one cache line: a new word's merges look up pairs at random in a table larger than L2.
class U64Map {
 public:
  static constexpr uint64_t kEmpty = ~0ULL;
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    if (cap > slots_.size()) rehash(cap);
  }
  // Keeps the first value set for a key.
  void insert(uint64_t key, uint64_t value) {
    if ((count_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    std::vector<Slot>& slots = slots_.edit();
    size_t mask = slots.size() - 1;
    for (size_t i = hash_u64(key) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == kEmpty) {
        slots[i] = {key, value};
        ++count_;
        return;
      }
      if (slots[i].key == key) return;
    }
  }
  // insert(key_at(i), value_at(i)) for i < count, in groups whose slots are requested from
  // memory first (as StringIdMap::set_each).
  template <typename KeyAt, typename ValueAt>
  void insert_each(size_t count, KeyAt&& key_at, ValueAt&& value_at) {
    reserve(count_ + count);
    constexpr size_t kGroup = 32;
    for (size_t first = 0; first < count; first += kGroup) {
      const size_t n = std::min(kGroup, count - first);
      for (size_t k = 0; k < n; ++k)
        __builtin_prefetch(&slots_[hash_u64(key_at(first + k)) & (slots_.size() - 1)]);
      for (size_t k = 0; k < n; ++k) insert(key_at(first + k), value_at(first + k));
    }
  }
  void save(BlobWriter& w) const {
    slots_.save(w);
    w.value<uint64_t>(count_);
  }
  template <typename Check>
  bool all_values(Check&& check) const {
    bool failed = false;  // no branch a slot, as in StringIdMap::all_ids_below
    for (const Slot& s : slots_) failed |= (s.key != kEmpty) & !check(s.value);
    return !failed;
  }
  bool load(BlobReader& r) {
    if (!slots_.restore(r)) return false;
    count_ = r.value<uint64_t>();
    if (!r.ok() || (slots_.size() & (slots_.size() - 1)) != 0) return false;
    const size_t used = static_cast<size_t>(
        std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.key != kEmpty; }));
    return used == count_ && used * 2 <= slots_.size();
  }
  // Returns kEmpty when absent.
  uint64_t find(uint64_t key) const {
    if (slots_.empty()) return kEmpty;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash_u64(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == kEmpty) return kEmpty;
    }
  }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    uint64_t value = 0;
  };

  void rehash(size_t cap) {
    const std::vector<Slot> old = std::move(slots_.edit());
    std::vector<Slot>& slots = slots_.owned;
    slots.assign(cap, Slot{});
    slots_.publish();
    size_t mask = cap - 1;
    for (const Slot& s : old) {
      if (s.key == kEmpty) continue;
      size_t i = hash_u64(s.key) & mask;
      while (slots[i].key != kEmpty) i = (i + 1) & mask;
      slots[i] = s;
    }
  }
  TableArray<Slot> slots_;
  size_t count_ = 0;
};

}  // namespace shardkit::tok
