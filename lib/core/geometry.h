// Where records and blocks are in a dataset, from its manifest alone: records_per_block and
// each shard's record count. Every block is full except possibly the last one of a shard, so
// the geometry is described by O(shards) numbers, never O(records) or O(blocks). The one place
// that maps a global record or block number to a shard: Dataset, the loader's order and
// `shard-inspect` all use it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/manifest.h"

namespace shardkit {

struct RecordLocation {
  uint32_t shard = 0;
  uint64_t block_in_shard = 0;
  uint64_t global_block = 0;
  uint32_t slot = 0;  // record within the block
};

struct BlockRef {
  uint32_t shard = 0;
  uint64_t block_in_shard = 0;
  uint64_t first_record = 0;  // global index of the block's first record
  uint32_t records = 0;
};

class Geometry {
 public:
  Geometry() = default;
  Geometry(uint32_t records_per_block, const std::vector<uint64_t>& shard_records);
  static Geometry of(const Manifest& manifest);

  uint64_t records() const { return record_start_.empty() ? 0 : record_start_.back(); }
  uint64_t blocks() const { return block_start_.empty() ? 0 : block_start_.back(); }
  uint32_t records_per_block() const { return rpb_; }
  uint32_t shards() const {
    return record_start_.empty() ? 0 : static_cast<uint32_t>(record_start_.size() - 1);
  }
  uint64_t shard_blocks(uint32_t shard) const {
    return block_start_[shard + 1] - block_start_[shard];
  }

  uint64_t block_first_record(uint64_t block) const;
  uint32_t block_records(uint64_t block) const;
  uint64_t block_of_record(uint64_t record) const;
  // Preconditions: record < records(), block < blocks().
  RecordLocation locate(uint64_t record) const;
  BlockRef block_ref(uint64_t block) const;

  // Blocks holding fewer than records_per_block records, ascending, with their record counts.
  const std::vector<uint64_t>& short_blocks() const { return short_blocks_; }
  const std::vector<uint32_t>& short_block_records() const { return short_records_; }

 private:
  uint32_t shard_of_block(uint64_t block) const;
  uint32_t shard_of_record(uint64_t record) const;

  uint32_t rpb_ = 1;
  std::vector<uint64_t> record_start_;  // per shard, plus the total
  std::vector<uint64_t> block_start_;   // per shard, plus the total
  std::vector<uint64_t> short_blocks_;
  std::vector<uint32_t> short_records_;
};

}  // namespace shardkit
