#include "core/convert_stats.h"

namespace shardkit {

size_t length_bucket(uint64_t length) {
  size_t b = 0;
  while (length >= 2 && b + 1 < kLengthBuckets) {
    length >>= 1;
    ++b;
  }
  return b;
}

void ConvertStats::add(const ConvertStats& o) {
  examples += o.examples;
  records += o.records;
  tokens += o.tokens;
  truncated += o.truncated;
  skipped += o.skipped;
  qa_unanswerable_windows += o.qa_unanswerable_windows;
  dropped += o.dropped;
  loss_tokens += o.loss_tokens;
  for (size_t i = 0; i < kLengthBuckets; ++i) length_histogram[i] += o.length_histogram[i];
}

}  // namespace shardkit
