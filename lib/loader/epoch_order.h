// The order in which one epoch visits a dataset's records: a pure function of (seed, epoch,
// position), computed point by point with O(shards) set-up and no per-record state.
//
// Shuffled: the blocks are permuted by a keyed permutation, the permuted sequence is cut into
// windows of `window_blocks` consecutive blocks, and the records of each window are permuted by
// a second keyed permutation. Consecutive positions therefore read from one window of blocks (so
// each block is decoded about once per epoch), while windows are random draws of blocks from the
// whole dataset. Unshuffled: position i is record i.
#pragma once

#include <cstdint>
#include <vector>

#include "core/geometry.h"
#include "loader/keyed_permutation.h"

namespace shardkit::loader {

struct OrderParams {
  bool shuffle = true;
  uint64_t seed = 0;
  uint64_t epoch = 0;
  uint64_t window_blocks = 1;  // blocks mixed together; >= blocks() means one global shuffle
};

class EpochOrder {
 public:
  EpochOrder(const Geometry& geometry, OrderParams params);

  uint64_t size() const { return geometry_.records(); }
  const Geometry& geometry() const { return geometry_; }
  uint64_t window_blocks() const { return k_; }
  uint64_t window_count() const;

  // The record at `position` (< size()).
  uint64_t record_at(uint64_t position) const;
  // Records at positions first, first+1, ..., first+count-1 (all < size()).
  void records(uint64_t first, uint64_t count, uint64_t* out) const;
  // The window that position belongs to; non-decreasing in position.
  uint64_t window_of(uint64_t position) const;
  // The blocks a window reads (for readahead).
  std::vector<uint64_t> blocks_of_window(uint64_t window) const;

 private:
  uint64_t window_start(uint64_t window) const;  // first position of a window
  uint64_t records_before(uint64_t block_position) const;
  uint64_t record_of_unwindowed(uint64_t u) const;  // u-th record of the permuted block sequence

  Geometry geometry_;
  OrderParams params_;
  uint64_t k_ = 1;
  KeyedPermutation block_perm_;
  // Short blocks by their position in the permuted block sequence: position, records, and the
  // sum of (records_per_block - records) over the entries before each one.
  std::vector<uint64_t> short_pos_;
  std::vector<uint32_t> short_records_;
  std::vector<uint64_t> short_deficit_before_;
};

}  // namespace shardkit::loader
