// Which source each sample of a weighted mixture comes from.
//
// Constant weights: Megatron's greedy-error schedule. Sample k goes to the source whose count
// lags its share the most (weight x (k + 1) - count, ties to the lowest index), so after every
// prefix of k samples each source's count is within one sample of weight x k with up to three
// sources (the argument below); with more it can drift further (1.05 samples at four sources and
// 1.32 at sixteen, the worst of random weights), but it stays, since runs saved with it resume
// in its order. Weights are
// fixed-point (2^-32 units, summing to exactly 1) and the errors integers, so the stream is the
// same on every machine. exact() takes integer counts instead (weight i = counts[i] / sum):
// after sum samples source i has exactly counts[i].
//
// Scheduled weights (a WeightCurve), whose shares change from sample to sample. With up to
// three sources the same greedy rule, taken against each source's integral J_i, keeps every
// count within one sample of J_i whatever the shares do: two sources a sample or more behind
// would need the others at least a sample ahead in sum, which one or none cannot be. From four
// sources on the greedy rule can drift past one sample when the shares move, so the rule is
// earliest deadline first: source i's next sample may come once J_i passes its count (release)
// and must come before J_i reaches count + 1 (deadline); sample k goes to the released source
// with the earliest deadline (ties to the lowest index). Tijdeman's chairman assignment theorem
// says some order keeps every count within 1 - 1/(2n - 2) of J_i at every prefix, and earliest
// deadline first finds such an order whenever one exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "loader/weight_curve.h"

namespace shardkit::loader {

class MixtureSchedule {
 public:
  // Throws Error(kInvalidArgument) unless every weight is finite and >= 0, some is > 0 and
  // their sum is finite.
  explicit MixtureSchedule(const std::vector<double>& weights);
  // Weights counts[i] / sum(counts), exactly. Throws unless some count is > 0 and the sum is
  // below 2^63.
  static MixtureSchedule exact(const std::vector<uint64_t>& counts);
  // Shares that follow a schedule.
  static MixtureSchedule following(std::shared_ptr<const WeightCurve> curve);

  static constexpr uint64_t kOne = WeightCurve::kOne;
  // Constant weights: source i's share of every denominator() samples (kOne for weights).
  const std::vector<uint64_t>& shares() const { return shares_; }
  uint64_t denominator() const { return denominator_; }
  size_t sources() const { return counts_.size(); }
  // The most samples source i can have among the first `samples`.
  uint64_t most(size_t source, uint64_t samples) const;
  // Source i's share integrated over the first `samples` (what its count stays within one of).
  double integral(size_t source, uint64_t samples) const;
  const WeightCurve* curve() const { return curve_.get(); }

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
  uint32_t next_greedy();
  uint32_t next_on_curve();
  uint64_t deadline(size_t source) const;

  uint64_t denominator_ = kOne;
  std::vector<uint64_t> shares_;
  std::shared_ptr<const WeightCurve> curve_;
  std::optional<WeightCurve::Walk> walk_;  // J at position_ + 1, stepped along
  // Four or more scheduled sources: per source, the last sample its next one may take.
  std::vector<uint64_t> deadline_;
  std::vector<uint64_t> counts_;
  uint64_t position_ = 0;
};

}  // namespace shardkit::loader
