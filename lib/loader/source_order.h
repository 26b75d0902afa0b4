// One source's samples in an epoch, pass after pass. Sample q of the epoch is position q % size
// of pass q / size; pass 0 is the dataset's own order at (seed, epoch) (EpochOrder, or
// PartitionedOrder for the nodes plan), a later pass p the same order with a seed derived from
// (seed, p), so a source used more than once per epoch is reshuffled each time. Windows are
// numbered across passes (pass x windows per pass + window), so they never decrease along the
// samples, as the loader's eviction needs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "loader/record_order.h"

namespace shardkit::loader {

class SourceOrder {
 public:
  SourceOrder(const Geometry& geometry, OrderParams params);

  uint64_t size() const { return first_->size(); }
  const RecordOrder& pass0() const { return *first_; }
  // Records of samples first .. first + count - 1.
  void records(uint64_t first, uint64_t count, uint64_t* out) const;
  uint64_t window_of(uint64_t sample) const;
  std::vector<uint64_t> blocks_of_window(uint64_t window) const;
  // The blocks of `window` that the samples s with s mod `groups` == `group` read (all of them
  // under the rows plan); see RecordOrder.
  std::vector<uint64_t> blocks_of_window(uint64_t window, uint32_t groups, uint32_t group) const;
  std::vector<uint64_t> substitute_candidates(uint64_t block, uint64_t window) const;
  // The last window (numbered across passes) of the pass of `window` that reads `block`.
  uint64_t last_window_of(uint64_t block, uint64_t window) const;

 private:
  std::shared_ptr<const RecordOrder> pass(uint64_t p) const;
  // The pass that `window` (numbered across passes) belongs to, and the window within it.
  std::pair<std::shared_ptr<const RecordOrder>, uint64_t> pass_window(uint64_t window) const;

  OrderParams params_;
  std::shared_ptr<const RecordOrder> first_;
  mutable std::mutex mu_;
  mutable std::map<uint64_t, std::shared_ptr<const RecordOrder>> later_;  // the last few passes
};

}  // namespace shardkit::loader
