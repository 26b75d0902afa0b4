#include "loader/plan.h"

#include <algorithm>

#include "loader/distributed_env.h"

namespace shardkit::loader {

uint64_t window_blocks_for(const Geometry& geometry, size_t record_size,
                           const LoaderOptions& options) {
  if (options.window_blocks) return options.window_blocks;
  const size_t block_bytes = std::max<size_t>(1, geometry.records_per_block() * record_size);
  return std::max<uint64_t>(1, options.memory_budget / 4 * 3 / 2 / block_bytes);
}

EpochPlan::EpochPlan(const Geometry& geometry, size_t record_size, const LoaderOptions& options,
                     uint64_t epoch, uint64_t start)
    : epoch_(epoch),
      seed_(options.seed),
      order_(geometry, OrderParams{options.shuffle, options.seed, epoch,
                                   window_blocks_for(geometry, record_size, options)}),
      schedule_(ScheduleParams{geometry.records(), start, options.batch_size,
                               effective_rank(options), effective_world_size(options),
                               options.drop_last}) {}

std::vector<uint64_t> EpochPlan::records(uint64_t batch) const {
  const uint64_t n = schedule_.batch_size(batch);
  std::vector<uint64_t> out(n);
  // Rows are consecutive positions except where the last batch wraps around.
  uint64_t j = 0;
  while (j < n) {
    const uint64_t first = schedule_.position(batch, j);
    uint64_t run = 1;
    while (j + run < n && schedule_.position(batch, j + run) == first + run) ++run;
    order_.records(first, run, out.data() + j);
    j += run;
  }
  return out;
}

}  // namespace shardkit::loader
