// What a conversion counted: examples read, records and tokens written, truncations, skips and
// the untruncated length histogram. Counts add up over batches, --part runs and merges.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace shardkit {

// Token-length buckets: bucket k counts lengths in [2^k, 2^(k+1)); bucket 0 also counts 0.
inline constexpr size_t kLengthBuckets = 25;
size_t length_bucket(uint64_t length);

struct ConvertStats {
  uint64_t examples = 0;  // documents, texts, pairs or questions read
  uint64_t records = 0;
  uint64_t tokens = 0;                   // real (non-pad) tokens stored
  uint64_t truncated = 0;                // examples cut at max_len (qa: contexts needing windows)
  uint64_t skipped = 0;                  // examples dropped by --on-error skip
  uint64_t qa_unanswerable_windows = 0;  // qa windows labelled 0/0
  uint64_t dropped = 0;      // sft: conversations longer than max_len left out (--truncation)
  uint64_t loss_tokens = 0;  // sft: stored tokens the loss is computed on
  std::array<uint64_t, kLengthBuckets> length_histogram{};  // untruncated example lengths

  void add(const ConvertStats& other);
  bool operator==(const ConvertStats&) const = default;
};

}  // namespace shardkit
