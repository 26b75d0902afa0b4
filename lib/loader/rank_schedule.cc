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
  global_batch_ = p_.batch_size * p_.world_size;
  const uint64_t remaining = p_.start >= p_.epoch_size ? 0 : p_.epoch_size - p_.start;
  full_ = remaining / global_batch_;
  const uint64_t rest = remaining % global_batch_;
  if (rest && !p_.drop_last) last_size_ = (rest + p_.world_size - 1) / p_.world_size;
}

uint64_t RankSchedule::position(uint64_t batch, uint64_t j) const {
  uint64_t pos;
  if (batch < full_)
    pos = p_.start + batch * global_batch_ + p_.rank * p_.batch_size + j;
  else
    pos = p_.start + full_ * global_batch_ + p_.rank * last_size_ + j;
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
