// The order of an epoch under the nodes plan (`partition = "nodes"`): the dataset's records in
// C canonical partitions, so that the ranks reading a partition read its blocks and no others,
// while the order stays a pure function of (seed, epoch, position) whatever the topology.
//
//  - The block sequence (BlockSequence: the blocks permuted by (seed, epoch), laid end to end) is
//    cut into C slices of consecutive records, n_c = floor(records / C) records each, plus one
//    for partitions c < records mod C. Slices lie in the sequence in slot order, partition c at
//    slot(c), the digit reversal of c over C's prime factors (smallest first), so that for every
//    N made of C's smallest factors (any power of two dividing C) the partitions c = n mod N lie
//    next to each other: node n's share of the sequence is one run. A partition at an odd slot
//    reads its slice backwards, so that a block that two neighbouring slices share is read by
//    both at the same end of the epoch.
//  - Position p holds partition c = p mod C's t-th record, t = p div C. Each partition's stream
//    is cut into windows of m records (m = max(1, floor(window_blocks / C)) x records_per_block,
//    or the whole slice when window_blocks covers the dataset), each permuted by a keyed
//    permutation of (seed, epoch, c, window); position p is in window (p div C) div m, the same
//    for every partition.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "loader/block_sequence.h"
#include "loader/record_order.h"

namespace shardkit::loader {

class PartitionedOrder : public RecordOrder {
 public:
  PartitionedOrder(const Geometry& geometry, OrderParams params);

  const Geometry& geometry() const override { return sequence_.geometry(); }
  uint32_t partitions() const { return c_; }
  uint64_t window_records() const { return m_; }  // m: records per partition and window
  uint64_t window_count() const override;
  uint32_t slot(uint32_t partition) const { return slot_[partition]; }
  uint64_t slice_start(uint32_t partition) const { return start_[partition]; }
  uint64_t slice_size(uint32_t partition) const { return q_ + (partition < r0_ ? 1 : 0); }

  void records(uint64_t first, uint64_t count, uint64_t* out) const override;
  uint64_t window_of(uint64_t position) const override;
  std::vector<uint64_t> blocks_of_window(uint64_t window) const override {
    return blocks_of_window(window, 1, 0);
  }
  std::vector<uint64_t> blocks_of_window(uint64_t window, uint32_t groups,
                                         uint32_t group) const override;
  uint64_t last_window_of(uint64_t block, uint64_t window) const override;
  // The candidates of the partition window holding the block's first record: every block of
  // that window, in slot order.
  std::vector<uint64_t> substitute_candidates(uint64_t block, uint64_t window) const override;

 private:
  // Sequence offsets [begin, end) of partition c's window w (empty past its last window).
  std::pair<uint64_t, uint64_t> window_range(uint32_t c, uint64_t w) const;
  // The slot whose slice holds sequence offset u (< records).
  uint32_t slot_of_offset(uint64_t u) const;
  // The window of partition c's stream that reads sequence offset u of its slice.
  uint64_t window_of_offset(uint32_t c, uint64_t u) const;

  OrderParams params_;
  BlockSequence sequence_;
  uint32_t c_ = 1;
  uint64_t q_ = 0, r0_ = 0;  // records = q x C + r0
  uint64_t m_ = 1;
  std::vector<uint32_t> slot_;     // by partition
  std::vector<uint32_t> at_slot_;  // partition by slot
  std::vector<uint64_t> start_;    // first sequence offset of each partition's slice
};

// slot(c): c's digits over the prime factors of `partitions` (smallest first, least
// significant first) read in reverse order.
uint32_t partition_slot(uint32_t partition, uint32_t partitions);

}  // namespace shardkit::loader
