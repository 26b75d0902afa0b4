// The records of the reliability tests' datasets: each a pure function of its index, so that a
// read can be checked without keeping what was written. No test framework here: the crash-test
// writer program uses it too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/schema.h"

namespace shardkit::reliability {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// 12 token ids, a label and two floats: 36 bytes per record.
inline Schema small_schema() {
  return Schema({{"input_ids", DType::kU16, {12}, 0},
                 {"labels", DType::kI32, {}, 0},
                 {"score", DType::kF32, {2}, 0}});
}

// Record `index`: the first half of a dataset is small, repetitive ids (zstd shrinks those
// blocks), the second half random bytes (stored raw), so both block encodings are exercised.
// A non-zero `seed` XORs every byte, giving a second dataset of the same shape.
inline void expected_record(const Schema& schema, uint64_t index, uint64_t total,
                            unsigned char* out, uint8_t seed = 0) {
  const size_t n = schema.record_size();
  if (index < total / 2) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>((index * 7 + i) % 5);
  } else {
    for (size_t i = 0; i < n; i += 8) {
      uint64_t r = splitmix64(index * 1000003 + i);
      std::memcpy(out + i, &r, std::min<size_t>(8, n - i));
    }
  }
  if (seed)
    for (size_t i = 0; i < n; ++i) out[i] ^= seed;
}

}  // namespace shardkit::reliability
