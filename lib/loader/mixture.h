// A loader's sources and how an epoch draws from them, after MosaicML Streaming's Stream
// (proportion / repeat / choose) with Megatron's greedy-error interleaving (MixtureSchedule).
//
// Each source gives at most one of:
//   weight    its share of the epoch's samples (relative: every source gives one, or none does);
//   schedule  its weight as it changes over the epoch (every source gives one, or none does);
//   repeat    how many times its samples are used per epoch (fractional allowed: 0.5 takes half);
//   choose    its samples per epoch, absolute.
// With weights or schedules, an epoch has max_samples samples (LoaderOptions), or the sources'
// total size when unset, and source i's count at every prefix of k samples is within one sample
// (constant weights over four or more sources: 1.3, mixture_schedule.h) of its share integrated
// over those k samples (weight_i / sum(weights) x k for constant
// weights). Without, source i contributes choose_i = choose, else round(repeat x size), else its
// size (repeat 1); the epoch has sum(choose_i) samples (cut to max_samples when set)
// interleaved by weights choose_i / sum exactly, so a full epoch holds exactly choose_i of each.
//
// Samples past a source's size wrap into its next pass. Pass 0 of every source is the order the
// dataset alone would have at (seed, epoch); pass p uses a seed derived from (seed, p), a fresh
// permutation. One source with weight 1 (or repeat 1) is therefore today's single-dataset stream.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loader/mixture_schedule.h"

namespace shardkit::loader {

enum class ScheduleAxis { kSamples, kTokens };

struct WeightPoint {
  uint64_t at = 0;  // samples or tokens consumed (all ranks), as the schedule's axis says
  double weight = 0;
};

// One source's weight over an epoch. Every source of a scheduled mixture gives one, with the
// same axis, interpolation and tokens_per_sample; their points may differ. At each point of any
// source the weights are normalised to shares; between points the shares hold (step) or move
// linearly to the next point's (linear); after the last point they stay.
struct WeightSchedule {
  ScheduleAxis axis = ScheduleAxis::kSamples;
  bool linear = false;
  // kTokens: the tokens one sample counts as, so that the schedule, like the order, is a pure
  // function of position; 0: the row length of the first source's token ids (what a packed row
  // holds). A point at T tokens is sample ceil(T / tokens_per_sample).
  uint64_t tokens_per_sample = 0;
  std::vector<WeightPoint> points;  // `at` strictly increasing, the first at 0
};

struct MixtureSource {
  std::string path;  // a dataset directory or URL (http://, https://, s3://)
  std::optional<double> weight;
  std::optional<double> repeat;
  std::optional<uint64_t> choose;
  std::optional<WeightSchedule> schedule;

  // So that {path, weight, repeat, choose} keeps meaning what it did before schedules.
  MixtureSource(std::string path_ = {}, std::optional<double> weight_ = {},
                std::optional<double> repeat_ = {}, std::optional<uint64_t> choose_ = {},
                std::optional<WeightSchedule> schedule_ = {})
      : path(std::move(path_)),
        weight(weight_),
        repeat(repeat_),
        choose(choose_),
        schedule(std::move(schedule_)) {}
};

// Which source and which of its samples each position of an epoch holds: a pure function of
// the sources' sizes and weights (not of seed or epoch). Safe to share between threads.
class MixtureStream {
 public:
  // `sizes[i]`: records of sources[i]; `row_tokens`: the default tokens_per_sample of a schedule
  // in tokens. Throws Error(kInvalidArgument) naming the source for a malformed combination (two
  // of weight/schedule/repeat/choose, weights on some sources only, a negative or non-finite
  // value, a weighted source without records).
  MixtureStream(const std::vector<MixtureSource>& sources, const std::vector<uint64_t>& sizes,
                uint64_t max_samples, uint64_t row_tokens = 0);

  size_t sources() const { return sizes_.size(); }
  uint64_t size() const { return size_; }  // samples per epoch
  uint64_t source_size(size_t source) const { return sizes_[source]; }
  // At least the samples source `source` has in the epoch, and at most one more (exact when its
  // share of the epoch is a whole number of samples).
  uint64_t samples_bound(size_t source) const;
  // For positions first .. first + count - 1: the source and that source's sample number (its
  // count of samples before this one in the epoch; >= its size once it wraps).
  void locate(uint64_t first, uint64_t count, uint32_t* source, uint64_t* sample) const;
  // Samples each source has before `position`. A caller asking for nearby positions keeps a
  // cursor (empty at first), which holds the part of the stream it last read.
  struct Chunk;
  using Cursor = std::shared_ptr<const Chunk>;
  std::vector<uint64_t> counts_before(uint64_t position, Cursor* cursor = nullptr) const;
  // The interleaving rule; absent for one source.
  const MixtureSchedule* schedule() const { return schedule_ ? &*schedule_ : nullptr; }

 private:
  static constexpr uint64_t kStride = 4096;  // positions per chunk
  static constexpr uint64_t kMark = 64;      // positions between a chunk's stored counts
  static constexpr size_t kChunksKept = 16;  // 16 KiB and the counts each
  void init_weighted(const std::vector<MixtureSource>& sources, uint64_t max_samples);
  void init_scheduled(const std::vector<MixtureSource>& sources, uint64_t max_samples,
                      uint64_t row_tokens);
  void init_counted(const std::vector<MixtureSource>& sources, uint64_t max_samples);
  std::shared_ptr<const Chunk> chunk(uint64_t index) const;
  std::shared_ptr<const Chunk> compute_chunk_locked(uint64_t index) const;

  std::vector<uint64_t> sizes_;
  uint64_t size_ = 0;
  std::optional<MixtureSchedule> schedule_;  // absent for one source
  mutable std::mutex mu_;
  // Counts before chunk j (flattened, j x sources), computed as far as asked.
  mutable std::vector<uint64_t> checkpoints_;
  // Chunks read recently, with the use that last touched them.
  mutable std::map<uint64_t, std::pair<std::shared_ptr<const Chunk>, uint64_t>> chunks_;
  mutable uint64_t uses_ = 0;
};

// A chunk of kStride positions: each one's source, and each source's count before every kMark-th.
struct MixtureStream::Chunk {
  uint64_t index = 0;
  std::vector<uint32_t> source;
  std::vector<uint64_t> marks;  // (kStride / kMark) x sources, absolute counts
};

}  // namespace shardkit::loader
