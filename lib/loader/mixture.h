// A loader's sources and how an epoch draws from them, after MosaicML Streaming's Stream
// (proportion / repeat / choose) with Megatron's greedy-error interleaving (MixtureSchedule).
//
// Each source gives at most one of:
//   weight  its share of the epoch's samples (relative: every source gives one, or none does);
//   repeat  how many times its samples are used per epoch (fractional allowed: 0.5 takes half);
//   choose  its samples per epoch, absolute.
// With weights, an epoch has max_samples samples (LoaderOptions), or the sources' total size
// when unset, and source i's count at every prefix of k samples is within one sample of
// weight_i / sum(weights) x k. Without, source i contributes choose_i = choose, else
// round(repeat x size), else its size (repeat 1); the epoch has sum(choose_i) samples (cut to
// max_samples when set) interleaved by weights choose_i / sum exactly, so a full epoch holds
// exactly choose_i of each.
//
// Samples past a source's size wrap into its next pass. Pass 0 of every source is the order the
// dataset alone would have at (seed, epoch); pass p uses a seed derived from (seed, p), a fresh
// permutation. One source with weight 1 (or repeat 1) is therefore today's single-dataset stream.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loader/mixture_schedule.h"

namespace shardkit::loader {

struct MixtureSource {
  std::string path;  // a dataset directory or URL (http://, https://, s3://)
  std::optional<double> weight;
  std::optional<double> repeat;
  std::optional<uint64_t> choose;
};

// Which source and which of its samples each position of an epoch holds: a pure function of
// the sources' sizes and weights (not of seed or epoch). Safe to share between threads.
class MixtureStream {
 public:
  // `sizes[i]`: records of sources[i]. Throws Error(kInvalidArgument) naming the source for a
  // malformed combination (two of weight/repeat/choose, weights on some sources only, a negative
  // or non-finite value, a weighted source without records).
  MixtureStream(const std::vector<MixtureSource>& sources, const std::vector<uint64_t>& sizes,
                uint64_t max_samples);

  size_t sources() const { return sizes_.size(); }
  uint64_t size() const { return size_; }  // samples per epoch
  uint64_t source_size(size_t source) const { return sizes_[source]; }
  // At least the samples source `source` has in the epoch, and at most one more (exact when its
  // share of the epoch is a whole number of samples).
  uint64_t samples_bound(size_t source) const;
  // For positions first .. first + count - 1: the source and that source's sample number (its
  // count of samples before this one in the epoch; >= its size once it wraps).
  void locate(uint64_t first, uint64_t count, uint32_t* source, uint64_t* sample) const;
  // Samples each source has before `position`. A caller asking for increasing positions keeps
  // a cursor (empty at first): each call then steps on from the last instead of from a stored
  // state.
  using Cursor = std::optional<MixtureSchedule>;
  std::vector<uint64_t> counts_before(uint64_t position, Cursor* cursor = nullptr) const;

 private:
  static constexpr uint64_t kStride = 4096;  // positions between stored schedule states
  MixtureSchedule at(uint64_t position) const;

  std::vector<uint64_t> sizes_;
  uint64_t size_ = 0;
  std::optional<MixtureSchedule> schedule_;  // absent for one source
  // counts_before(j x kStride), flattened, computed as far as asked.
  mutable std::mutex mu_;
  mutable std::vector<uint64_t> checkpoints_;
};

}  // namespace shardkit::loader
