// A pseudo-random permutation of [0, n) chosen by a 64-bit key, computed point by point: a
// Feistel network over the smallest power-of-two domain that holds n, with cycle-walking for
// values that fall outside [0, n). Nothing of size n is ever stored, and the inverse is as cheap
// as the forward map.
#pragma once

#include <cstdint>

namespace shardkit::loader {

class KeyedPermutation {
 public:
  KeyedPermutation() = default;
  KeyedPermutation(uint64_t n, uint64_t key);

  uint64_t size() const { return n_; }
  // The value at position i (i < size()).
  uint64_t operator()(uint64_t i) const;
  // The position of value v: inverse(p(i)) == i.
  uint64_t inverse(uint64_t v) const;

 private:
  static constexpr int kRounds = 6;
  uint64_t encrypt(uint64_t x) const;
  uint64_t decrypt(uint64_t x) const;

  uint64_t n_ = 0;
  unsigned bits_ = 0;      // domain is [0, 2^bits_)
  unsigned low_bits_ = 0;  // width of the right half in round 0
  uint64_t round_keys_[kRounds] = {};
};

// A 64-bit mix of several integers (splitmix64 finaliser chained); used to derive keys and
// random draws that are pure functions of their inputs.
uint64_t mix64(uint64_t x);
uint64_t hash_combine(uint64_t a, uint64_t b);
inline uint64_t hash_of(uint64_t a, uint64_t b) { return hash_combine(mix64(a), b); }
inline uint64_t hash_of(uint64_t a, uint64_t b, uint64_t c) {
  return hash_combine(hash_of(a, b), c);
}
inline uint64_t hash_of(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return hash_combine(hash_of(a, b, c), d);
}

}  // namespace shardkit::loader
