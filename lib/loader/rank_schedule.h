// How one rank's batches cut the epoch's positions. The epoch is consumed in global batches of
// batch_size * world_size positions; in each, position p goes to reading group p mod `groups`,
// and the group's positions, in order, are cut into runs of batch_size, member i taking the
// i-th (ReadingGroups; with one group, the rows plan's split: rank r takes the r-th run of
// batch_size positions). A run has always read a prefix of the epoch's positions (`start` on
// resume), so a run resumed at any world size and batch size reads exactly the positions after
// it.
//
// The remainder (fewer than one global batch) follows DistributedSampler: drop_last drops it;
// otherwise every rank gets ceil(remainder / world_size) samples, the shortfall filled by
// wrapping around to the start of the epoch's order, so all ranks run the same number of steps.
#pragma once

#include <cstdint>
#include <vector>

namespace shardkit::loader {

struct ScheduleParams {
  uint64_t epoch_size = 0;  // positions in the epoch (records)
  uint64_t start = 0;       // global positions already consumed (resume point)
  uint64_t batch_size = 1;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  bool drop_last = false;
  // The reading groups (a divisor of world_size), this rank's group and its member index in it
  // (with one group, the member is the rank: the rows plan).
  uint32_t groups = 1;
  uint32_t group = 0;
  uint32_t member = 0;
};

class RankSchedule {
 public:
  explicit RankSchedule(ScheduleParams params);

  uint64_t batches() const { return full_ + (last_size_ ? 1 : 0); }
  uint64_t batch_size(uint64_t batch) const { return batch < full_ ? p_.batch_size : last_size_; }
  // The epoch position of sample j of this rank's batch (wrapped into [0, epoch_size)).
  uint64_t position(uint64_t batch, uint64_t j) const;
  // Global positions consumed once this rank's batch `batch` (and the same step on every other
  // rank) is done: the resume point to store.
  uint64_t consumed_after(uint64_t batch) const;
  // The global step of this rank's batch `batch`: every rank's rows are the positions
  // step_first + i (wrapped into the epoch) for i < step_size.
  uint64_t step_first(uint64_t batch) const;
  uint64_t step_size(uint64_t batch) const;
  const ScheduleParams& params() const { return p_; }

 private:
  ScheduleParams p_;
  uint64_t global_batch_;
  uint64_t full_ = 0;       // full global steps
  uint64_t last_size_ = 0;  // per-rank size of the final short step, 0 when none
};

}  // namespace shardkit::loader
