// The order in which one epoch visits a dataset's records under the rows plan (the default
// `partition`): a pure function of (seed, epoch, position), computed point by point with
// O(shards) set-up and no per-record state.
//
// Shuffled: the blocks are permuted by a keyed permutation (BlockSequence), the permuted sequence
// is cut into windows of `window_blocks` consecutive blocks, and the records of each window are
// permuted by a second keyed permutation. Consecutive positions therefore read from one window of
// blocks (so each block is decoded about once per epoch), while windows are random draws of
// blocks from the whole dataset. Unshuffled: position i is record i.
#pragma once

#include <cstdint>
#include <vector>

#include "loader/block_sequence.h"
#include "loader/record_order.h"

namespace shardkit::loader {

class EpochOrder : public RecordOrder {
 public:
  EpochOrder(const Geometry& geometry, OrderParams params);

  const Geometry& geometry() const override { return sequence_.geometry(); }
  uint64_t window_blocks() const { return k_; }
  uint64_t window_count() const override;

  void records(uint64_t first, uint64_t count, uint64_t* out) const override;
  uint64_t window_of(uint64_t position) const override;
  std::vector<uint64_t> blocks_of_window(uint64_t window) const override;
  std::vector<uint64_t> blocks_of_window(uint64_t window, uint32_t, uint32_t) const override {
    return blocks_of_window(window);
  }
  uint64_t last_window_of(uint64_t, uint64_t window) const override { return window; }
  std::vector<uint64_t> substitute_candidates(uint64_t, uint64_t window) const override {
    return blocks_of_window(window);
  }

 private:
  uint64_t window_start(uint64_t window) const;  // first position of a window

  OrderParams params_;
  uint64_t k_ = 1;
  BlockSequence sequence_;
};

}  // namespace shardkit::loader
