#include "loader/plan.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "loader/distributed_env.h"

namespace shardkit::loader {

uint64_t window_blocks_for(const Geometry& geometry, size_t record_size,
                           const LoaderOptions& options, size_t memory_budget) {
  if (options.window_blocks) return options.window_blocks;
  const size_t block_bytes = std::max<size_t>(1, geometry.records_per_block() * record_size);
  const uint64_t k = std::max<uint64_t>(1, memory_budget / 4 * 3 / 2 / block_bytes);
  if (options.partition == Partition::kRows) return k;
  // The nodes plan's partition windows hold floor(k / C) blocks' worth of records and may span
  // one block more: C x (floor(k / C) + 1) blocks must fit where the rows plan holds k.
  const uint64_t c = std::max<uint32_t>(1, options.partitions);
  return k >= 2 * c ? (k / c - 1) * c : c;
}

size_t nodes_resident_bytes(const Geometry& geometry, size_t record_size,
                            const LoaderOptions& options, size_t memory_budget,
                            const ReadingGroups& reading) {
  const uint64_t c = std::max<uint32_t>(1, options.partitions);
  const uint64_t k = window_blocks_for(geometry, record_size, options, memory_budget);
  const uint64_t mine = (c + reading.groups - 1) / reading.groups;
  const uint64_t spans = std::max<uint64_t>(1, k / c) + 1;  // blocks a partition window spans
  return 2 * mine * spans * geometry.records_per_block() * record_size;
}

uint64_t window_blocks_for(const Geometry& geometry, size_t record_size,
                           const LoaderOptions& options) {
  return window_blocks_for(geometry, record_size, options, options.memory_budget);
}

uint64_t row_tokens(const Schema& schema, const DatasetInfo& info) {
  const std::string* ids = info.field(FieldRole::kTokenIds);
  const Field* f = ids ? schema.find(*ids) : nullptr;
  return f && f->shape.size() == 1 ? static_cast<uint64_t>(f->shape[0]) : 0;
}

size_t positions_within_budget(const std::vector<uint64_t>& lengths, uint64_t before,
                               uint64_t budget) {
  uint64_t total = before;
  for (size_t i = 0; i < lengths.size(); ++i) {
    total += lengths[i];
    if (total >= budget) return i + 1;
  }
  return lengths.size();
}

void check_partition_plan(const MixtureStream& stream, const LoaderOptions& options) {
  if (options.partition == Partition::kRows) return;
  const auto refuse = [](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument, "", "partition='nodes' " + why);
  };
  if (stream.sources() != 1)
    refuse("reads one dataset, but this loader mixes " + std::to_string(stream.sources()) +
           ": a mixture interleaves its sources by position, which the nodes plan does not "
           "partition yet; use partition='rows'");
  if (stream.size() > stream.source_size(0))
    refuse("reads each record at most once per epoch, but this epoch has " +
           std::to_string(stream.size()) + " samples of a dataset of " +
           std::to_string(stream.source_size(0)) +
           " (a weight or repeat wraps it); use partition='rows'");
  if (options.max_tokens)
    refuse(
        "cannot end an epoch at max_tokens: finding where the budget ends takes every row's "
        "length, so every rank would read every block; use max_samples, or "
        "partition='rows'");
}

namespace {

ScheduleParams schedule_params(uint64_t end, uint64_t start, const LoaderOptions& options,
                               const ReadingGroups& groups) {
  return ScheduleParams{end,
                        start,
                        options.batch_size,
                        effective_rank(options),
                        effective_world_size(options),
                        options.drop_last,
                        groups.groups,
                        groups.group,
                        groups.member};
}

}  // namespace

EpochPlan::EpochPlan(std::shared_ptr<const MixtureStream> stream,
                     const std::vector<SourceShape>& sources, const LoaderOptions& options,
                     uint64_t epoch, uint64_t start, bool whole_steps, uint64_t end)
    : epoch_(epoch),
      seed_(options.seed),
      whole_steps_(whole_steps),
      stream_(std::move(stream)),
      reading_(reading_groups(options)),
      schedule_(schedule_params(std::min(end, stream_->size()), start, options, reading_)) {
  check_partition_plan(*stream_, options);
  // Each source's windows get an equal part of the budget.
  const size_t budget = options.memory_budget / std::max<size_t>(1, sources.size());
  partitioned_ = options.partition == Partition::kNodes;
  const uint32_t partitions = partitioned_ ? options.partitions : 0;
  for (const SourceShape& s : sources)
    orders_.push_back(std::make_unique<SourceOrder>(
        s.geometry,
        OrderParams{options.shuffle, options.seed, epoch,
                    window_blocks_for(s.geometry, s.record_size, options, budget), partitions}));
}

EpochPlan::EpochPlan(const Geometry& geometry, size_t record_size, const LoaderOptions& options,
                     uint64_t epoch, uint64_t start)
    : EpochPlan(std::make_shared<const MixtureStream>(std::vector<MixtureSource>{MixtureSource{}},
                                                      std::vector<uint64_t>{geometry.records()},
                                                      options.max_samples),
                {SourceShape{geometry, record_size}}, options, epoch, start) {}

PlannedRows EpochPlan::rows_of(const std::vector<std::pair<uint64_t, uint64_t>>& runs) const {
  PlannedRows out;
  size_t n = 0;
  for (const auto& [first, count] : runs) n += count;
  out.sources.resize(n);
  out.records.resize(n);
  out.windows.resize(n);
  out.passes.resize(n);
  std::vector<uint64_t> samples(n);
  size_t j = 0;
  for (const auto& [first, count] : runs) {
    stream_->locate(first, count, out.sources.data() + j, samples.data() + j);
    j += count;
  }
  // Each source's samples are consecutive except where the last batch wraps: read them in runs.
  std::vector<size_t> rows;
  std::vector<uint64_t> got;
  for (uint32_t s = 0; s < orders_.size(); ++s) {
    rows.clear();
    for (size_t r = 0; r < n; ++r)
      if (out.sources[r] == s) rows.push_back(r);
    const SourceOrder& order = *orders_[s];
    size_t i = 0;
    while (i < rows.size()) {
      const uint64_t first = samples[rows[i]];
      size_t run = 1;
      while (i + run < rows.size() && samples[rows[i + run]] == first + run) ++run;
      got.resize(run);
      order.records(first, run, got.data());
      const uint64_t w_first = order.window_of(first);
      const bool one_window = order.window_of(first + run - 1) == w_first;
      const uint64_t size = stream_->source_size(s);
      for (size_t k = 0; k < run; ++k) {
        out.records[rows[i + k]] = got[k];
        out.passes[rows[i + k]] = static_cast<uint32_t>((first + k) / size);
        out.windows[rows[i + k]] = one_window ? w_first : order.window_of(first + k);
      }
      i += run;
    }
  }
  return out;
}

PlannedRows EpochPlan::rows(uint64_t batch) const {
  const uint64_t n = schedule_.batch_size(batch);
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  // Rows are consecutive positions except where the last batch wraps around.
  uint64_t j = 0;
  while (j < n) {
    const uint64_t first = schedule_.position(batch, j);
    uint64_t run = 1;
    while (j + run < n && schedule_.position(batch, j + run) == first + run) ++run;
    runs.emplace_back(first, run);
    j += run;
  }
  return rows_of(runs);
}

PlannedRows EpochPlan::step_rows(uint64_t batch) const {
  const uint64_t first = schedule_.step_first(batch), count = schedule_.step_size(batch);
  const uint64_t n = end();
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  if (count > 0 && n > 0) {
    uint64_t at = first % n, left = count;
    while (left > 0) {
      const uint64_t run = std::min(left, n - at);
      runs.emplace_back(at, run);
      left -= run;
      at = 0;
    }
  }
  return rows_of(runs);
}

std::pair<uint64_t, uint64_t> EpochPlan::read_range(uint64_t batch) const {
  const uint64_t n = end();
  if (n == 0) return {0, 0};
  uint64_t first, count;
  if (whole_steps_) {
    first = schedule_.step_first(batch);
    count = schedule_.step_size(batch);
  } else {
    first = schedule_.position(batch, 0);
    count = schedule_.batch_size(batch);
  }
  if (first >= n) first %= n;
  return {first, std::min(first + std::max<uint64_t>(count, 1), n) - 1};
}

std::vector<uint64_t> EpochPlan::windows_from(uint64_t batch, MixtureStream::Cursor* cursor) const {
  const std::vector<uint64_t> before = stream_->counts_before(read_range(batch).first, cursor);
  std::vector<uint64_t> out(orders_.size());
  for (size_t s = 0; s < orders_.size(); ++s) out[s] = orders_[s]->window_of(before[s]);
  return out;
}

std::vector<uint64_t> EpochPlan::windows_upto(uint64_t batch, MixtureStream::Cursor* cursor) const {
  const auto [first, last] = read_range(batch);
  if (orders_.size() == 1) return {orders_[0]->window_of(last)};
  const std::vector<uint64_t> before = stream_->counts_before(first, cursor);
  const std::vector<uint64_t> through = stream_->counts_before(last + 1, cursor);
  std::vector<uint64_t> out(orders_.size(), 0);
  for (size_t s = 0; s < orders_.size(); ++s)
    if (through[s] > before[s]) out[s] = orders_[s]->window_of(through[s] - 1);
  return out;
}

std::vector<uint64_t> EpochPlan::blocks_read(size_t source, uint64_t window) const {
  return orders_[source]->blocks_of_window(window, reading_.groups, reading_.group);
}

std::vector<uint64_t> EpochPlan::blocks_new_in(size_t source, uint64_t window) const {
  std::vector<uint64_t> blocks = blocks_read(source, window);
  // Under the rows plan windows hold whole blocks: nothing to take out.
  if (window == 0 || !partitioned_) return blocks;
  const std::vector<uint64_t> before = blocks_read(source, window - 1);
  const std::unordered_set<uint64_t> asked(before.begin(), before.end());
  std::erase_if(blocks, [&](uint64_t b) { return asked.count(b) > 0; });
  return blocks;
}

uint64_t EpochPlan::window_count(size_t source) const {
  const uint64_t samples = stream_->samples_bound(source);
  return samples == 0 ? 0 : orders_[source]->window_of(samples - 1) + 1;
}

}  // namespace shardkit::loader
