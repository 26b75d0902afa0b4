// Which source each sample of a weighted mixture comes from: Megatron's greedy-error schedule.
// Sample k goes to the source whose count lags its share the most (weight x (k + 1) - count,
// ties to the lowest index), so after every prefix of k samples each source's count is within
// one sample of weight x k. Weights are fixed-point (2^-32 units, summing to exactly 1) and the
// errors integers, so the stream is the same on every machine. exact() takes integer counts
// instead (weight i = counts[i] / sum): after sum samples source i has exactly counts[i].
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardkit::loader {

class MixtureSchedule {
 public:
  // Throws Error(kInvalidArgument) unless every weight is finite and >= 0 and some is > 0.
  explicit MixtureSchedule(const std::vector<double>& weights);
  // Weights counts[i] / sum(counts), exactly. Throws unless some count is > 0 and the sum is
  // below 2^63.
  static MixtureSchedule exact(const std::vector<uint64_t>& counts);

  static constexpr uint64_t kOne = uint64_t{1} << 32;
  // Source i's share of every denominator() samples (kOne for weights); they sum to it.
  const std::vector<uint64_t>& shares() const { return shares_; }
  uint64_t denominator() const { return denominator_; }
  size_t sources() const { return shares_.size(); }

  // The source of sample position(), then moves past it.
  uint32_t next();
  // Samples scheduled so far, and of them those from each source.
  uint64_t position() const { return position_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  // Back to sample 0, then past `samples` samples (O(samples x sources)).
  void seek(uint64_t samples);
  // Continues from a state seen before: `counts` per source after `position` samples.
  void resume(uint64_t position, const std::vector<uint64_t>& counts);

 private:
  uint64_t denominator_ = kOne;
  std::vector<uint64_t> shares_;
  std::vector<uint64_t> counts_;
  uint64_t position_ = 0;
};

}  // namespace shardkit::loader
