// The first level of the models' word memo, in front of ByteKeyCache: a small direct-mapped
// table of short words (up to 16 bytes) whose few ids are held in the slot itself. A frequent
// word costs two 8-byte loads, a multiply, one slot compare and a copy of its ids: no probing,
// no separate key arena, no memcmp call, no allocation. Each thread keeps its own (per model,
// byte_key_cache.h's thread_cache), so it is shared by every document the thread tokenizes.
//
// A word that does not fit (longer, or more ids) lives only in the second level; a slot taken
// by another word is simply overwritten (the second level still holds the old one).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/zeroed_pages.h"

namespace shardkit::tok {

template <typename Value, size_t kMaxValues>
class HotWordTable {
 public:
  static constexpr size_t kMaxKeyBytes = 16;
  static constexpr size_t kSlotValues = kMaxValues;  // the most a slot holds (and copy_to copies)

  // A word as the table compares it: its bytes, zero-padded, and its length.
  struct Key {
    uint64_t lo = 0, hi = 0;
    uint64_t len = 0;
  };

  // Mapped whole when made (core/zeroed_pages.h): taken lazily instead, page by page, the memos
  // cost a thread 30% of its first pass over a text while a second thread tokenized beside it.
  HotWordTable() : sets_(kSets) {}

  // The key of p[0, n) for n <= kMaxKeyBytes; `limit` is the end of the readable bytes after p,
  // so that 16 bytes are loaded at once when they may be.
  [[gnu::always_inline]] static Key key(const char* p, size_t n, const char* limit) {
    Key k;
    k.len = n;
    if (limit - p >= 16) {
      // Masked by table, not by a branch on n: words of under and over 8 bytes alternate at
      // random, and a branch on it costs a misprediction every few words.
      std::memcpy(&k.lo, p, 8);
      std::memcpy(&k.hi, p + 8, 8);
      k.lo &= kKeptBytes[n].lo;
      k.hi &= kKeptBytes[n].hi;
    } else {
      // Near the end of the text: loads inside [p, p + n), overlapping where n is not a power
      // of two. A memcpy of n bytes here was a library call for each of a line's last words,
      // a third of the time of a 20-byte line.
      if (n > 8) {
        k.lo = load<uint64_t>(p);
        k.hi = load<uint64_t>(p + n - 8) >> (8 * (16 - n));
      } else if (n >= 4) {
        k.lo = load<uint32_t>(p) | uint64_t{load<uint32_t>(p + n - 4)} << (8 * (n - 4));
      } else if (n > 0) {
        const auto* u = reinterpret_cast<const unsigned char*>(p);
        k.lo = u[0] | uint64_t{u[n / 2]} << (8 * (n / 2)) | uint64_t{u[n - 1]} << (8 * (n - 1));
      }
    }
    return k;
  }

  // The values stored for `k`, or an empty span. The way is chosen without a branch: on English
  // text a third of the hits are in the second way, and a branch on it missed about as often.
  [[gnu::always_inline]] std::span<const Value> find(const Key& k) const {
    const Slot& s = candidate(k);
    if (!holds(s, k)) return {};
    return {s.values, s.count};
  }

  // Starts loading the set `k` would be in, for a caller with work to do before it looks k up.
  [[gnu::always_inline]] void prefetch(const Key& k) const {
    const auto* set = reinterpret_cast<const char*>(&sets_[index(k)]);
    __builtin_prefetch(set);
    if constexpr (sizeof(Set) > 64) __builtin_prefetch(set + 64);
  }

  // Copies kMaxValues values from the slot `k` would be in to `out`, whatever that slot holds,
  // and returns how many of them are k's: 0 when k is absent. No branch depends on the word's
  // id count, which varies from word to word as unpredictably as its length.
  [[gnu::always_inline]] size_t copy_to(const Key& k, Value* out) const {
    const Slot& s = candidate(k);
    std::memcpy(out, s.values, sizeof s.values);
    return holds(s, k) ? s.count : 0;
  }

  // The new word takes its set's first slot; the words there move one slot on, and the last
  // one leaves the table.
  void insert(const Key& k, std::span<const Value> values) {
    if (values.empty() || values.size() > kMaxValues) return;
    Slot* set = sets_[index(k)].ways;
    for (size_t w = kWays - 1; w > 0; --w) set[w] = set[w - 1];
    Slot& s = set[0];
    s.lo = k.lo;
    s.hi = k.hi;
    s.len = static_cast<uint8_t>(k.len);
    s.count = static_cast<uint8_t>(values.size());
    std::memcpy(s.values, values.data(), values.size() * sizeof(Value));
  }

 private:
  template <typename T>
  static T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }

  // 65,536 sets of two slots: with three 32-bit values a set is one 64-byte cache line, and the
  // table 4 MiB. A miss costs the second level's probe and key compare, two loads from memory;
  // on 12 MB of English with GPT-2, 512 KiB (16,384 words) missed often enough to cost 13% of
  // the ids-only speed, and 4 MiB lookups are served from the L3 cache. With up to seven values
  // (the Unigram's) a set takes two cache lines and the table 8 MiB.
  static constexpr int kBits = 16;
  static constexpr size_t kSets = size_t{1} << kBits;
  static constexpr size_t kWays = 2;

  // kKeptBytes[n]: the masks that keep a key's first n bytes.
  struct Masks {
    uint64_t lo, hi;
  };
  static constexpr std::array<Masks, kMaxKeyBytes + 1> kKeptBytes = [] {
    std::array<Masks, kMaxKeyBytes + 1> m{};
    for (size_t n = 0; n <= kMaxKeyBytes; ++n) {
      m[n].lo = n >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
      m[n].hi = n >= 16 ? ~uint64_t{0} : n <= 8 ? 0 : (uint64_t{1} << (8 * (n - 8))) - 1;
    }
    return m;
  }();

  struct Slot {
    uint64_t lo = 0, hi = 0;
    uint8_t len = 0;
    uint8_t count = 0;  // 0: an empty slot (a key that matches it finds no values: a miss)
    Value values[kMaxValues];
  };

  // The slot of k's set that holds k if either does: the way chosen by index from the first
  // compare, without a branch.
  [[gnu::always_inline]] const Slot& candidate(const Key& k) const {
    const Slot* set = sets_[index(k)].ways;
    return set[!holds(set[0], k)];
  }

  [[gnu::always_inline]] static bool holds(const Slot& s, const Key& k) {
    return ((s.lo ^ k.lo) | (s.hi ^ k.hi) | (s.len ^ k.len)) == 0;
  }

  [[gnu::always_inline]] static size_t index(const Key& k) {
    const uint64_t h = (k.lo ^ (k.hi * 0xC2B2AE3D27D4EB4FULL) ^ k.len) * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(h >> (64 - kBits));
  }

  // A set in one cache line when it fits one.
  struct alignas(64) Set {
    Slot ways[kWays];
  };

  ZeroedPages<Set> sets_;  // an all-zero slot is empty
};

}  // namespace shardkit::tok
