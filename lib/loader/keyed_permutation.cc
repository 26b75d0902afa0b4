#include "loader/keyed_permutation.h"

#include <bit>

namespace shardkit::loader {

uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t hash_combine(uint64_t a, uint64_t b) {
  return mix64(a ^ mix64(b + 0x632BE59BD9B4E019ull));
}

namespace {
uint64_t low_mask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
}  // namespace

KeyedPermutation::KeyedPermutation(uint64_t n, uint64_t key) : n_(n) {
  bits_ = n <= 1 ? 0 : static_cast<unsigned>(std::bit_width(n - 1));
  low_bits_ = bits_ / 2;
  for (int r = 0; r < kRounds; ++r) round_keys_[r] = hash_of(key, static_cast<uint64_t>(r));
}

// An unbalanced Feistel network: the halves swap widths every round, so any bit count works
// and cycle-walking visits fewer than two values per output on average.
uint64_t KeyedPermutation::encrypt(uint64_t x) const {
  unsigned lo_bits = low_bits_;
  for (int r = 0; r < kRounds; ++r) {
    const unsigned hi_bits = bits_ - lo_bits;
    const uint64_t lo = x & low_mask(lo_bits);
    const uint64_t hi = lo_bits >= 64 ? 0 : x >> lo_bits;
    const uint64_t new_lo = (hi ^ mix64(lo ^ round_keys_[r])) & low_mask(hi_bits);
    x = (hi_bits >= 64 ? 0 : lo << hi_bits) | new_lo;
    lo_bits = hi_bits;
  }
  return x;
}

uint64_t KeyedPermutation::decrypt(uint64_t x) const {
  // Round r leaves a low half of width (bits_ - lo_bits_r); undo the rounds in reverse.
  for (int r = kRounds - 1; r >= 0; --r) {
    const unsigned lo_bits = (r % 2 == 0) ? low_bits_ : bits_ - low_bits_;
    const unsigned hi_bits = bits_ - lo_bits;
    const uint64_t new_lo = x & low_mask(hi_bits);
    const uint64_t lo = hi_bits >= 64 ? 0 : x >> hi_bits;
    const uint64_t hi = (new_lo ^ mix64(lo ^ round_keys_[r])) & low_mask(hi_bits);
    x = (lo_bits >= 64 ? 0 : hi << lo_bits) | lo;
  }
  return x;
}

uint64_t KeyedPermutation::operator()(uint64_t i) const {
  if (n_ <= 1) return i;
  uint64_t x = encrypt(i);
  while (x >= n_) x = encrypt(x);
  return x;
}

uint64_t KeyedPermutation::inverse(uint64_t v) const {
  if (n_ <= 1) return v;
  uint64_t x = decrypt(v);
  while (x >= n_) x = decrypt(x);
  return x;
}

}  // namespace shardkit::loader
