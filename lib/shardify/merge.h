// `shardify merge OUT PART_DIRS...`: the datasets of a --part i/N fan-out become one dataset
// whose records are a single run's records in the same order. Shards are hard-linked (copied
// across file systems) under new sequential names with their checksums kept; the manifest is
// rebuilt with the parts' statistics summed; the directory is published atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardkit::shardify {

struct MergeResult {
  uint64_t parts = 0;
  uint64_t shards = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t shards_copied = 0;  // not hard-linked

  std::string to_json() const;
};

// Parts may be given in any order; they must be all parts 0..N-1 of one conversion (same
// schema, tokenizer, task, labels and inputs). Throws Error naming the part that disagrees.
MergeResult merge_parts(const std::string& out, const std::vector<std::string>& parts, bool force);

}  // namespace shardkit::shardify
