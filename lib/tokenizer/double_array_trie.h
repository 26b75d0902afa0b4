// A byte trie in a double array (as SentencePiece's Darts keeps its pieces): the child of node s
// on byte c is t = base[s] + c when check[t] == s. One array read per byte, no hashing and no
// per-node allocation; built once from the keys (in linear time: free slots are kept in a list).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace shardkit::tok {

class DoubleArrayTrie {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // `keys`: distinct byte strings and their values (not kNone). An empty key is never reported.
  void build(std::vector<std::pair<std::string_view, uint32_t>> keys) {
    std::sort(keys.begin(), keys.end());
    units_.assign(1, Unit{});
    units_[0].check = kRoot;
    next_.assign(1, 0);  // slot 0 (the root) is the free list's sentinel
    prev_.assign(1, 0);
    fails_.assign(1, 0);
    listed_.assign(1, 0);
    grow(1 + 512);
    max_base_ = 0;
    if (!keys.empty()) place(0, keys, 0, keys.size(), 0);
    // Every base + byte stays inside the array, so a lookup needs no bounds check.
    units_.resize(std::max<size_t>(units_.size(), size_t{max_base_} + 256 + 1));
    units_.shrink_to_fit();
    for (auto* v : {&next_, &prev_}) std::vector<uint32_t>().swap(*v);
    std::vector<uint8_t>().swap(fails_);
    std::vector<uint8_t>().swap(listed_);
  }

  // Calls f(length, value) for every key that is a prefix of [p, end), shortest first.
  template <typename F>
  void prefixes(const unsigned char* p, const unsigned char* end, F&& f) const {
    const Unit* u = units_.data();
    uint32_t node = 0;
    for (const unsigned char* q = p; q < end; ++q) {
      const uint32_t t = static_cast<uint32_t>(u[node].base) + *q;
      if (u[t].check != static_cast<int32_t>(node)) return;
      node = t;
      if (u[t].value != kNone) f(static_cast<size_t>(q + 1 - p), u[t].value);
    }
  }

  size_t units() const { return units_.size(); }

 private:
  static constexpr int32_t kFree = -1, kRoot = -2;
  struct Unit {
    int32_t base = 0;
    int32_t check = kFree;  // the parent node, kFree, or kRoot
    uint32_t value = kNone;
  };

  // Appends free slots up to `size`, at the end of the free list.
  void grow(size_t size) {
    for (size_t i = units_.size(); i < size; ++i) {
      units_.push_back(Unit{});
      const uint32_t last = prev_[0];
      next_.push_back(0);
      prev_.push_back(last);
      next_[last] = static_cast<uint32_t>(i);
      prev_[0] = static_cast<uint32_t>(i);
      fails_.push_back(0);
      listed_.push_back(1);
    }
  }
  void unlist(uint32_t i) {
    if (!listed_[i]) return;
    next_[prev_[i]] = next_[i];
    prev_[next_[i]] = prev_[i];
    listed_[i] = 0;
  }

  // Places the children of `node`: keys[lo, hi) share their first `depth` bytes. Bases are
  // tried at the free slots in order; a slot that fails too often as a first child's place
  // leaves the list (it may still take a later child), which keeps building linear.
  void place(uint32_t node, const std::vector<std::pair<std::string_view, uint32_t>>& keys,
             size_t lo, size_t hi, size_t depth) {
    if (keys[lo].first.size() == depth) units_[node].value = keys[lo++].second;
    if (lo == hi) return;
    labels_.clear();
    for (size_t k = lo; k < hi; ++k) {
      auto c = static_cast<unsigned char>(keys[k].first[depth]);
      if (labels_.empty() || labels_.back() != c) labels_.push_back(c);
    }
    uint32_t base = 0;
    for (uint32_t f = next_[0];;) {
      if (f == 0) {  // the list is exhausted: more slots
        const size_t old = units_.size();
        grow(old + 256 + old / 4);
        f = static_cast<uint32_t>(old);
      }
      if (size_t{f} + 256 >= units_.size()) grow(size_t{f} + 257 + units_.size() / 4);
      const uint32_t after = next_[f];
      if (f > labels_[0]) {
        base = f - labels_[0];
        bool fits = true;
        for (unsigned char c : labels_)
          if (units_[base + c].check != kFree) {
            fits = false;
            break;
          }
        if (fits) break;
        if (++fails_[f] >= kMaxFails) unlist(f);
      }
      f = after;
    }
    units_[node].base = static_cast<int32_t>(base);
    max_base_ = std::max(max_base_, base);
    for (unsigned char c : labels_) {
      units_[base + c].check = static_cast<int32_t>(node);
      unlist(base + c);
    }
    // Children in order; labels_ is reused by the recursion, so walk the keys again.
    for (size_t k = lo; k < hi;) {
      auto c = static_cast<unsigned char>(keys[k].first[depth]);
      size_t e = k + 1;
      while (e < hi && static_cast<unsigned char>(keys[e].first[depth]) == c) ++e;
      place(base + c, keys, k, e, depth + 1);
      k = e;
    }
  }

  static constexpr uint8_t kMaxFails = 16;
  std::vector<uint32_t> next_, prev_;  // the doubly linked list of free slots, while building
  std::vector<uint8_t> fails_, listed_;
  std::vector<Unit> units_;
  std::vector<unsigned char> labels_;
  uint32_t max_base_ = 0;
};

}  // namespace shardkit::tok
