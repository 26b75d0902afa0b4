// A dataset's blocks in a keyed shuffled order, laid end to end: the u-th record of the sequence
// is a pure function of (seed, epoch, u), computed with O(shards) set-up. Both orders of an
// epoch read it: `EpochOrder` cuts it into windows of blocks, `PartitionedOrder` into canonical
// partitions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/geometry.h"
#include "loader/keyed_permutation.h"

namespace shardkit::loader {

class BlockSequence {
 public:
  BlockSequence() = default;
  // `shuffle` false: the blocks in their stored order.
  BlockSequence(const Geometry& geometry, bool shuffle, uint64_t seed, uint64_t epoch);

  const Geometry& geometry() const { return geometry_; }
  uint64_t records() const { return geometry_.records(); }
  uint64_t blocks() const { return geometry_.blocks(); }
  // The block at permuted position `position` (< blocks()).
  uint64_t block_at(uint64_t position) const { return shuffle_ ? perm_(position) : position; }
  // The permuted position of `block` (< blocks()): block_at(position_of_block(b)) == b.
  uint64_t position_of_block(uint64_t block) const {
    return shuffle_ ? perm_.inverse(block) : block;
  }
  // Records of the sequence before block position `position` (<= blocks()).
  uint64_t records_before(uint64_t position) const;
  // The block position holding the sequence's u-th record (u < records()).
  uint64_t position_of(uint64_t u) const;
  // The u-th record of the sequence, as a global record index.
  uint64_t record(uint64_t u) const;

 private:
  // The block position and slot of the u-th record.
  std::pair<uint64_t, uint64_t> locate(uint64_t u) const;

  Geometry geometry_;
  bool shuffle_ = false;
  KeyedPermutation perm_;
  // Short blocks by their position in the sequence: position, records, and the sum of
  // (records_per_block - records) over the entries before each one.
  std::vector<uint64_t> short_pos_;
  std::vector<uint32_t> short_records_;
  std::vector<uint64_t> short_deficit_before_;
};

}  // namespace shardkit::loader
