// A mixture's shares as they change over an epoch: a weight schedule in fixed point. Between
// breakpoints (in samples) the shares are constant, or linear from one breakpoint's to the
// next's; after the last they stay. At every sample they sum to kOne. J_i(x), source i's share
// integrated over the samples [0, x), is a rational with a small denominator, compared exactly
// in 128-bit integers, so every machine schedules the same stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardkit::loader {

class WeightCurve {
 public:
  static constexpr uint64_t kOne = uint64_t{1} << 32;
  // Breakpoints and epochs stay below this many samples (so J's products fit in 128 bits).
  static constexpr uint64_t kMaxSamples = uint64_t{1} << 40;
  static constexpr uint64_t kNever = UINT64_MAX;

  struct Point {
    uint64_t at = 0;               // sample
    std::vector<uint64_t> shares;  // per source, summing to kOne
  };
  // points[0].at == 0, `at` strictly increasing and below kMaxSamples. Throws
  // Error(kInvalidArgument) otherwise.
  WeightCurve(std::vector<Point> points, bool linear);

  size_t sources() const { return sources_; }
  // The sign of J_i(x) - target, with target in 1/kOne samples.
  int compare(size_t source, uint64_t x, unsigned __int128 target) const;
  // The first x with J_i(x) >= target (strict: > target), or kNever.
  uint64_t first_reaching(size_t source, unsigned __int128 target, bool strict) const;
  // ceil(J_i(x)): the most samples source i can have among the first x (count < J_i(x) + 1).
  uint64_t ceil_integral(size_t source, uint64_t x) const;
  // J_i(x) in samples, rounded (for display).
  double integral(size_t source, uint64_t x) const;

  // J at consecutive positions for one add per source and sample: excess(i, target) has the
  // sign of J_i(x + 1) - target, and its values compare across sources (one positive scale).
  class Walk {
   public:
    Walk(const WeightCurve& curve, uint64_t x);
    uint64_t position() const { return x_; }
    __int128 excess(size_t source, unsigned __int128 target) const;
    void advance();  // to x + 1

   private:
    void enter(size_t segment);
    const WeightCurve* curve_;
    size_t segment_ = 0;
    uint64_t x_ = 0, d_ = 0;             // position, and its offset in the segment
    __int128 scale_ = 1;                 // the segment's factor: 2L for a linear one, 2 otherwise
    std::vector<__int128> next_, step_;  // scaled J_i(x + 1), and its next increment
  };

 private:
  struct Segment {
    uint64_t start = 0;
    uint64_t length = 0;                 // 0: the last segment, open-ended
    std::vector<uint64_t> share;         // at the start
    std::vector<int64_t> delta;          // end share - start share (linear, not last), else 0
    std::vector<__int128> twice_before;  // 2 x J_i(start)
  };
  size_t segment_of(uint64_t x) const;
  // 2L x (J_i(start + d) - target) in a segment of length L, 2 x (...) in the open last one:
  // one positive scale for every source at a position.
  __int128 scaled_excess(const Segment& s, size_t source, uint64_t d,
                         unsigned __int128 target) const;
  uint64_t first_in_segment(const Segment& s, size_t source, unsigned __int128 target,
                            bool strict) const;

  size_t sources_ = 0;
  std::vector<Segment> segments_;
};

// Relative weights as fixed-point shares summing to exactly WeightCurve::kOne (the rounding
// remainder goes to the largest). Throws Error(kInvalidArgument), the message starting with
// `what`, unless every weight is finite and >= 0, some is > 0 and their sum is finite.
std::vector<uint64_t> fixed_point_shares(const std::vector<double>& weights,
                                         const std::string& what = "mixture");

}  // namespace shardkit::loader
