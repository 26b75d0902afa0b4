// The loader trainers link: streams a dataset as batches in the order EpochPlan defines, built
// ahead by background threads, within a memory budget, resumable from a LoaderState.
//
//   Loader loader(dir, options);
//   for (uint64_t epoch = 0; epoch < epochs; ++epoch) {
//     loader.set_epoch(epoch);
//     while (auto batch = loader.next()) train(*batch);
//   }
//
// next() rethrows, in the consumer, any error a loader thread met (a shardkit::Error naming the
// shard file and block for damaged data), and throws Error(kTimeout) when options.timeout passes
// without a batch. One consumer thread at a time. Its threads do not survive fork(): in a child
// process next(), set_epoch() and restore() throw Error(kUnsupported), and destroying it there
// leaves the parent's state alone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "core/dataset.h"
#include "loader/batch.h"
#include "loader/loader_options.h"
#include "loader/mixture.h"
#include "loader/plan.h"

namespace shardkit::loader {

struct LoaderStats {
  uint64_t blocks_decoded = 0;
  uint64_t batches_built = 0;
  size_t resident_block_bytes = 0;  // decoded blocks held right now
};

class Loader {
 public:
  explicit Loader(const std::filesystem::path& dir, LoaderOptions options = {});
  // A mixture: each source's samples in its own order, interleaved by MixtureSchedule, with
  // weight/repeat/choose as mixture.h says. The first source's schema and DatasetInfo define
  // the batch; the others must hold the fields it reads, for the same task and tokenizer
  // (RowLayout), else Error(kInvalidArgument) names both datasets and the difference. One
  // source with no weight, repeat or choose is the same as Loader(dir, options).
  explicit Loader(const std::vector<MixtureSource>& sources, LoaderOptions options = {});
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  const Dataset& dataset(size_t source = 0) const;
  size_t sources() const;
  // Samples (global, all ranks) in an epoch: the sources' shares, cut to max_samples.
  uint64_t epoch_samples() const;
  const LoaderOptions& options() const;
  unsigned threads() const;
  uint64_t window_blocks() const;  // of the first source

  // Starts `epoch` from its beginning (discarding batches built ahead).
  void set_epoch(uint64_t epoch);
  uint64_t epoch() const;
  // Batches this rank gets in the current epoch, counted from the epoch's (or restore's) start;
  // with max_tokens, an upper bound (the epoch may end sooner).
  uint64_t batches() const;
  // Batches this rank has still to get in the current epoch (0 once it ended; with max_tokens,
  // an upper bound).
  uint64_t batches_left() const;
  // Batches this rank gets in a whole epoch (with max_tokens, an upper bound).
  uint64_t epoch_batches() const;
  // The next batch, or nullptr once the epoch is exhausted.
  std::shared_ptr<Batch> next();
  // The same, calling `while_waiting` every 50 ms while no batch is ready, outside the loader's
  // lock: an exception it throws (Python's KeyboardInterrupt) leaves next() with nothing
  // consumed.
  std::shared_ptr<Batch> next(const std::function<void()>& while_waiting);

  // What to save to resume after the last batch next() returned.
  LoaderState state() const;
  // Continues from `state`, at any thread count, world size and batch size: the ranks together
  // read the positions the saved run had not, in order (README, "Resume at any world size and
  // batch size"). Throws Error(kInvalidArgument) naming samples_consumed when it is past the
  // epoch's end, and naming both when the state's fingerprint or seed is not this loader's (a
  // state without a fingerprint, saved before they were recorded, brings its seed instead).
  void restore(const LoaderState& state);

  // The records of batch `batch` (counted like batches()) without reading any data.
  std::vector<uint64_t> planned_records(uint64_t batch) const;
  // Also each row's source.
  PlannedRows planned_rows(uint64_t batch) const;
  LoaderStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardkit::loader
