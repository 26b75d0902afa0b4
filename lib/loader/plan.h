// Which records each of this rank's batches holds in one epoch, from a starting point: the
// order (EpochOrder) cut into batches (RankSchedule). Pure arithmetic, no data read: the loader
// and `shard-inspect order` both use it, so they cannot disagree.
#pragma once

#include <cstdint>
#include <vector>

#include "core/geometry.h"
#include "core/manifest.h"
#include "loader/epoch_order.h"
#include "loader/loader_options.h"
#include "loader/rank_schedule.h"

namespace shardkit::loader {

// The shuffle window, in blocks: options.window_blocks, or else what fits twice (the window
// being read and the next one) into three quarters of the memory budget.
uint64_t window_blocks_for(const Geometry& geometry, size_t record_size,
                           const LoaderOptions& options);

class EpochPlan {
 public:
  EpochPlan(const Geometry& geometry, size_t record_size, const LoaderOptions& options,
            uint64_t epoch, uint64_t start);

  uint64_t epoch() const { return epoch_; }
  uint64_t seed() const { return seed_; }
  uint64_t batches() const { return schedule_.batches(); }
  uint64_t batch_size(uint64_t batch) const { return schedule_.batch_size(batch); }
  uint64_t position(uint64_t batch, uint64_t row) const { return schedule_.position(batch, row); }
  std::vector<uint64_t> records(uint64_t batch) const;
  uint64_t consumed_after(uint64_t batch) const { return schedule_.consumed_after(batch); }
  uint64_t start() const { return schedule_.params().start; }
  const EpochOrder& order() const { return order_; }
  const RankSchedule& schedule() const { return schedule_; }

 private:
  uint64_t epoch_;
  uint64_t seed_;
  EpochOrder order_;
  RankSchedule schedule_;
};

}  // namespace shardkit::loader
