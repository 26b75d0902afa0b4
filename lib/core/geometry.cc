#include "core/geometry.h"

#include <algorithm>

#include "core/error.h"

namespace shardkit {

Geometry::Geometry(uint32_t records_per_block, const std::vector<uint64_t>& shard_records)
    : rpb_(records_per_block) {
  if (rpb_ == 0) throw Error(ErrorCode::kInvalidArgument, "", "records_per_block is 0");
  uint64_t records = 0, blocks = 0;
  for (uint64_t n : shard_records) {
    record_start_.push_back(records);
    block_start_.push_back(blocks);
    const uint64_t shard_blocks = (n + rpb_ - 1) / rpb_;
    if (n % rpb_ != 0) {
      short_blocks_.push_back(blocks + shard_blocks - 1);
      short_records_.push_back(static_cast<uint32_t>(n % rpb_));
    }
    records += n;
    blocks += shard_blocks;
  }
  record_start_.push_back(records);
  block_start_.push_back(blocks);
}

Geometry Geometry::of(const Manifest& manifest) {
  std::vector<uint64_t> counts;
  counts.reserve(manifest.shards.size());
  for (const ShardEntry& s : manifest.shards) counts.push_back(s.records);
  return Geometry(manifest.records_per_block, counts);
}

// upper_bound skips empty shards, whose start equals the next one's.
uint32_t Geometry::shard_of_block(uint64_t block) const {
  auto it = std::upper_bound(block_start_.begin(), block_start_.end(), block);
  return static_cast<uint32_t>(it - block_start_.begin() - 1);
}

uint32_t Geometry::shard_of_record(uint64_t record) const {
  auto it = std::upper_bound(record_start_.begin(), record_start_.end(), record);
  return static_cast<uint32_t>(it - record_start_.begin() - 1);
}

uint64_t Geometry::block_first_record(uint64_t block) const {
  const uint32_t s = shard_of_block(block);
  return record_start_[s] + (block - block_start_[s]) * rpb_;
}

uint32_t Geometry::block_records(uint64_t block) const {
  const uint32_t s = shard_of_block(block);
  const uint64_t first = record_start_[s] + (block - block_start_[s]) * rpb_;
  return static_cast<uint32_t>(std::min<uint64_t>(rpb_, record_start_[s + 1] - first));
}

uint64_t Geometry::block_of_record(uint64_t record) const {
  const uint32_t s = shard_of_record(record);
  return block_start_[s] + (record - record_start_[s]) / rpb_;
}

RecordLocation Geometry::locate(uint64_t record) const {
  RecordLocation loc;
  loc.shard = shard_of_record(record);
  const uint64_t local = record - record_start_[loc.shard];
  loc.block_in_shard = local / rpb_;
  loc.slot = static_cast<uint32_t>(local % rpb_);
  loc.global_block = block_start_[loc.shard] + loc.block_in_shard;
  return loc;
}

BlockRef Geometry::block_ref(uint64_t block) const {
  BlockRef ref;
  ref.shard = shard_of_block(block);
  ref.block_in_shard = block - block_start_[ref.shard];
  ref.first_record = record_start_[ref.shard] + ref.block_in_shard * rpb_;
  ref.records = static_cast<uint32_t>(
      std::min<uint64_t>(rpb_, record_start_[ref.shard + 1] - ref.first_record));
  return ref;
}

}  // namespace shardkit
