// `shardify merge OUT PART_DIRS...`: the datasets of a --part i/N fan-out become the dataset one
// run would have written, byte for byte. Each part's blocks are read in order (checksums
// verified) and their records re-encoded with the parts' recorded block, shard and zstd
// settings, so that blocks and shards fall where a single run puts them; the statistics are
// summed and the directory is published atomically.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace shardkit::shardify {

struct MergeResult {
  uint64_t parts = 0;
  uint64_t shards = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;

  std::string to_json() const;
};

// Parts may be given in any order; they must be all parts 0..N-1 of one conversion (same
// schema, tokenizer, task, labels, inputs and encoding). Throws Error naming the part that
// disagrees, or the shard and block that fails its checksum. `threads` encode blocks.
// `progress`, if set, hears the records merged so far and the total after each part block.
MergeResult merge_parts(const std::string& out, const std::vector<std::string>& parts, bool force,
                        unsigned threads = 1,
                        const std::function<void(uint64_t records, uint64_t total)>& progress = {});

}  // namespace shardkit::shardify
