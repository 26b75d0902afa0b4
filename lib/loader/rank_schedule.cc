#include "loader/rank_schedule.h"

#include <algorithm>

#include "core/error.h"

namespace shardkit::loader {

RankSchedule::RankSchedule(ScheduleParams params) : p_(params) {
  if (p_.batch_size == 0) throw Error(ErrorCode::kInvalidArgument, "", "batch_size must be > 0");
  if (p_.world_size == 0 || p_.rank >= p_.world_size)
    throw Error(ErrorCode::kInvalidArgument, "",
                "rank " + std::to_string(p_.rank) + " is not below world_size " +
                    std::to_string(p_.world_size));
  if (p_.groups == 1) p_.member = p_.rank;  // one group: the rows plan's split
  if (p_.groups == 0 || p_.world_size % p_.groups != 0 || p_.group >= p_.groups ||
      p_.member >= p_.world_size / p_.groups)
    throw Error(ErrorCode::kInvalidArgument, "",
                "reading group " + std::to_string(p_.group) + " of " + std::to_string(p_.groups) +
                    ", member " + std::to_string(p_.member) + ", does not fit world_size " +
                    std::to_string(p_.world_size));
  global_batch_ = p_.batch_size * p_.world_size;
  const uint64_t remaining = p_.start >= p_.epoch_size ? 0 : p_.epoch_size - p_.start;
  full_ = remaining / global_batch_;
  const uint64_t rest = remaining % global_batch_;
  if (rest && !p_.drop_last) last_size_ = (rest + p_.world_size - 1) / p_.world_size;
}

uint64_t RankSchedule::position(uint64_t batch, uint64_t j) const {
  const uint64_t first = step_first(batch);
  const uint64_t run = batch < full_ ? p_.batch_size : last_size_;
  // The group's first position at or after the step's first, then every groups-th.
  const uint64_t g = p_.groups;
  const uint64_t pos = first + (p_.group + g - first % g) % g + g * (p_.member * run + j);
  return pos < p_.epoch_size ? pos : pos % p_.epoch_size;
}

uint64_t RankSchedule::step_first(uint64_t batch) const {
  return p_.start + std::min(batch, full_) * global_batch_;
}

uint64_t RankSchedule::step_size(uint64_t batch) const {
  return batch < full_ ? global_batch_ : last_size_ * p_.world_size;
}

uint64_t RankSchedule::consumed_after(uint64_t batch) const {
  if (batch + 1 >= batches()) return std::max(p_.epoch_size, p_.start);
  return p_.start + (batch + 1) * global_batch_;
}

}  // namespace shardkit::loader
