// Which records each of this rank's batches holds in one epoch, from a starting point: the
// sources' interleaving (MixtureStream), each source's order (SourceOrder) and the cut into
// batches (RankSchedule). Pure arithmetic, no data read: the loader and `shard-inspect order`
// both use it, so they cannot disagree.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/geometry.h"
#include "core/manifest.h"
#include "loader/loader_options.h"
#include "loader/mixture.h"
#include "loader/rank_schedule.h"
#include "loader/reading_groups.h"
#include "loader/source_order.h"

namespace shardkit::loader {

// The shuffle window, in blocks: options.window_blocks, or else what fits twice (the window
// being read and the next one) into three quarters of `memory_budget` (for the nodes plan, with
// room for the block each partition window may span beyond its share: a multiple of the
// partitions, at least their number).
uint64_t window_blocks_for(const Geometry& geometry, size_t record_size,
                           const LoaderOptions& options, size_t memory_budget);
uint64_t window_blocks_for(const Geometry& geometry, size_t record_size,
                           const LoaderOptions& options);

// The nodes plan: the most decoded bytes a rank of `reading` holds, two windows of each of its
// partitions.
size_t nodes_resident_bytes(const Geometry& geometry, size_t record_size,
                            const LoaderOptions& options, size_t memory_budget,
                            const ReadingGroups& reading);

// The tokens a sample counts as on a schedule in tokens, unless the schedule says: the row length
// of the dataset's token ids (0 when it has none).
uint64_t row_tokens(const Schema& schema, const DatasetInfo& info);

// max_tokens: of positions with these tokens, how many the epoch keeps given the tokens counted
// before them: through the one whose tokens reach `budget`, or all of them.
size_t positions_within_budget(const std::vector<uint64_t>& lengths, uint64_t before,
                               uint64_t budget);

// Throws Error(kInvalidArgument) saying why, when options ask for the nodes plan over what it
// cannot partition: a mixture of several sources, a source read more than once per epoch, or a
// max_tokens budget (which needs every row's length on every rank).
void check_partition_plan(const MixtureStream& stream, const LoaderOptions& options);

// What the plan needs of each source.
struct SourceShape {
  Geometry geometry;
  size_t record_size = 0;
};

// Rows of a batch: source, record within that source, and the record's window in its source.
struct PlannedRows {
  std::vector<uint32_t> sources;
  std::vector<uint64_t> records;
  std::vector<uint64_t> windows;
  // Which pass over its source each row belongs to (0 unless a mixture repeats the source).
  std::vector<uint32_t> passes;
  size_t size() const { return records.size(); }
};

class EpochPlan {
 public:
  // `whole_steps`: the loader reads every rank's rows of a step (max_tokens counts them), so
  // the windows a batch reaches are those of its whole step. `end`: the epoch ends at that
  // position instead of the stream's size (max_tokens reached there); the last step's rows
  // wrap to the epoch's first positions as at any end.
  EpochPlan(std::shared_ptr<const MixtureStream> stream, const std::vector<SourceShape>& sources,
            const LoaderOptions& options, uint64_t epoch, uint64_t start, bool whole_steps = false,
            uint64_t end = UINT64_MAX);
  // One dataset, read once per epoch (cut to options.max_samples).
  EpochPlan(const Geometry& geometry, size_t record_size, const LoaderOptions& options,
            uint64_t epoch, uint64_t start);

  uint64_t epoch() const { return epoch_; }
  uint64_t seed() const { return seed_; }
  size_t sources() const { return orders_.size(); }
  uint64_t size() const { return stream_->size(); }               // samples per epoch
  uint64_t end() const { return schedule_.params().epoch_size; }  // size(), or where cut
  uint64_t batches() const { return schedule_.batches(); }
  uint64_t batch_size(uint64_t batch) const { return schedule_.batch_size(batch); }
  uint64_t position(uint64_t batch, uint64_t row) const { return schedule_.position(batch, row); }
  uint64_t consumed_after(uint64_t batch) const { return schedule_.consumed_after(batch); }
  uint64_t start() const { return schedule_.params().start; }
  const RankSchedule& schedule() const { return schedule_; }

  PlannedRows rows(uint64_t batch) const;
  // Every rank's rows of the step of this rank's batch `batch`.
  PlannedRows step_rows(uint64_t batch) const;
  std::vector<uint64_t> records(uint64_t batch) const { return rows(batch).records; }

  // Per source, the window of its first sample at or after the first position the batch reads.
  // `cursor` (MixtureStream::counts_before) speeds up a caller asking for increasing batches.
  std::vector<uint64_t> windows_from(uint64_t batch, MixtureStream::Cursor* cursor = nullptr) const;
  // Per source, the window of the last sample the batch reads from it (wrapped rows of an
  // epoch's last batch aside); 0 when it reads none.
  std::vector<uint64_t> windows_upto(uint64_t batch, MixtureStream::Cursor* cursor = nullptr) const;
  const SourceOrder& order(size_t source) const { return *orders_[source]; }
  // Which positions of each step this rank reads (ReadingGroups).
  const ReadingGroups& reading() const { return reading_; }
  // The blocks of `window` that this rank's reading group reads (every block of the window under
  // the rows plan): what to ask for ahead.
  std::vector<uint64_t> blocks_read(size_t source, uint64_t window) const;
  // Those of blocks_read(source, window) that window - 1 does not read: what to ask for ahead
  // once window - 1 has been (a block asked for twice would be fetched twice).
  std::vector<uint64_t> blocks_new_in(size_t source, uint64_t window) const;
  const MixtureStream& stream() const { return *stream_; }
  // Windows source `source` reads this epoch (an upper bound: one more when its sample count
  // is not known exactly and the extra sample would start a window).
  uint64_t window_count(size_t source) const;

 private:
  PlannedRows rows_of(const std::vector<std::pair<uint64_t, uint64_t>>& runs) const;
  std::pair<uint64_t, uint64_t> read_range(uint64_t batch) const;  // [first, last] unwrapped

  uint64_t epoch_;
  uint64_t seed_;
  bool whole_steps_;
  bool partitioned_ = false;  // the nodes plan
  std::shared_ptr<const MixtureStream> stream_;
  ReadingGroups reading_;
  std::vector<std::unique_ptr<SourceOrder>> orders_;
  RankSchedule schedule_;
};

}  // namespace shardkit::loader
