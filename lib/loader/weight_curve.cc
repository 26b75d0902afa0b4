#include "loader/weight_curve.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace shardkit::loader {

namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "", "mixture schedule: " + why);
}

int sign(__int128 v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

}  // namespace

std::vector<uint64_t> fixed_point_shares(const std::vector<double>& weights,
                                         const std::string& what) {
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0)
      throw Error(ErrorCode::kInvalidArgument, "",
                  what + ": weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                      ": weights must be finite and not negative");
    total += weights[i];
  }
  if (weights.empty() || !(total > 0))
    throw Error(ErrorCode::kInvalidArgument, "", what + ": needs a source with a positive weight");
  if (!std::isfinite(total))
    throw Error(ErrorCode::kInvalidArgument, "",
                what +
                    ": the weights sum to more than the largest double; weights are relative, "
                    "so scale them down");
  std::vector<uint64_t> shares;
  uint64_t sum = 0;
  size_t largest = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    shares.push_back(static_cast<uint64_t>(
        std::llround(weights[i] / total * static_cast<double>(WeightCurve::kOne))));
    sum += shares.back();
    if (weights[i] > weights[largest]) largest = i;
  }
  shares[largest] += WeightCurve::kOne - sum;  // wraps as intended when sum > kOne
  return shares;
}

WeightCurve::WeightCurve(std::vector<Point> points, bool linear) {
  if (points.empty() || points[0].at != 0) refuse("the first point must be at 0");
  sources_ = points[0].shares.size();
  for (size_t m = 0; m < points.size(); ++m) {
    const Point& p = points[m];
    if (p.shares.size() != sources_) refuse("every point needs a share for every source");
    unsigned __int128 sum = 0;
    for (uint64_t s : p.shares) sum += s;
    if (sum != kOne) refuse("shares must sum to 2^32");
    if (p.at >= kMaxSamples) refuse("a point lies past 2^40 samples");
    if (m > 0 && p.at <= points[m - 1].at) refuse("points must be in increasing order");
  }
  for (size_t m = 0; m < points.size(); ++m) {
    Segment s;
    s.start = points[m].at;
    const bool last = m + 1 == points.size();
    s.length = last ? 0 : points[m + 1].at - s.start;
    s.share = points[m].shares;
    s.delta.assign(sources_, 0);
    if (linear && !last)
      for (size_t i = 0; i < sources_; ++i)
        s.delta[i] = static_cast<int64_t>(points[m + 1].shares[i]) -
                     static_cast<int64_t>(points[m].shares[i]);
    s.twice_before.assign(sources_, 0);
    if (m > 0) {
      const Segment& prev = segments_.back();
      for (size_t i = 0; i < sources_; ++i) {
        // Twice a segment's integral: (start + end share) x length, exact.
        const __int128 ends = 2 * static_cast<__int128>(prev.share[i]) + prev.delta[i];
        s.twice_before[i] = prev.twice_before[i] + ends * prev.length;
      }
    }
    segments_.push_back(std::move(s));
  }
}

size_t WeightCurve::segment_of(uint64_t x) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), x,
                             [](uint64_t v, const Segment& s) { return v < s.start; });
  return static_cast<size_t>(it - segments_.begin()) - 1;
}

__int128 WeightCurve::scaled_excess(const Segment& s, size_t i, uint64_t d,
                                    unsigned __int128 target) const {
  const __int128 before = s.twice_before[i] - 2 * static_cast<__int128>(target);
  const __int128 a = s.share[i];
  if (s.length == 0) return before + 2 * a * d;
  // 2L x J over a closed segment: L x twice_before + 2 L a d + delta d^2 (below 2^116 in
  // magnitude for points and positions under 2^40); 2 x J over the open last one.
  const __int128 len = s.length;
  return len * before + 2 * len * a * d + static_cast<__int128>(s.delta[i]) * d * d;
}

int WeightCurve::compare(size_t source, uint64_t x, unsigned __int128 target) const {
  const Segment& s = segments_[segment_of(x)];
  return sign(scaled_excess(s, source, x - s.start, target));
}

uint64_t WeightCurve::first_in_segment(const Segment& s, size_t i, unsigned __int128 target,
                                       bool strict) const {
  auto reached = [&](uint64_t d) {
    const __int128 e = scaled_excess(s, i, d, target);
    return strict ? e > 0 : e >= 0;
  };
  // Not reached at d = 0. scaled_excess is A d^2 + B d + C, non-decreasing in d over the
  // segment: a root estimated in double, then set exactly by the integer test.
  const double a = static_cast<double>(s.share[i]);
  const double before = static_cast<double>(s.twice_before[i]) - 2.0 * static_cast<double>(target);
  const double len = s.length ? static_cast<double>(s.length) : 1.0;
  const double qa = s.length ? static_cast<double>(s.delta[i]) : 0.0;
  const double qb = 2.0 * len * a, qc = len * before;  // qc <= 0
  double root;
  if (qa == 0.0) {
    if (qb <= 0.0) return kNever;  // a constant share of 0 never gets there
    root = -qc / qb;
  } else {
    const double disc = std::max(0.0, qb * qb - 4.0 * qa * qc);
    const double den = qb + std::sqrt(disc);
    root = den > 0.0 ? -2.0 * qc / den : static_cast<double>(s.length);
  }
  const uint64_t cap = s.length ? s.length : uint64_t{1} << 62;
  if (!(root < static_cast<double>(cap))) root = static_cast<double>(cap);
  uint64_t d = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(root)));
  if (reached(d)) {
    while (d > 1 && reached(d - 1)) --d;
    return s.start + d;
  }
  while (d < cap)
    if (reached(++d)) return s.start + d;
  return kNever;
}

uint64_t WeightCurve::first_reaching(size_t i, unsigned __int128 target, bool strict) const {
  auto reached_at_start = [&](size_t m) {
    const __int128 e = segments_[m].twice_before[i] - 2 * static_cast<__int128>(target);
    return strict ? e > 0 : e >= 0;
  };
  if (reached_at_start(0)) return 0;
  // The last segment whose start is not yet reached holds the answer.
  size_t lo = 0, hi = segments_.size();  // reached_at_start is false at lo, true from hi on
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (reached_at_start(mid))
      hi = mid;
    else
      lo = mid;
  }
  return first_in_segment(segments_[lo], i, target, strict);
}

uint64_t WeightCurve::ceil_integral(size_t i, uint64_t x) const {
  uint64_t lo = 0, hi = x;  // J_i(x) <= x
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (compare(i, x, static_cast<unsigned __int128>(mid) * kOne) <= 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

double WeightCurve::integral(size_t i, uint64_t x) const {
  const Segment& s = segments_[segment_of(x)];
  const long double d = static_cast<long double>(x - s.start);
  long double twice =
      static_cast<long double>(s.twice_before[i]) + 2.0L * static_cast<long double>(s.share[i]) * d;
  if (s.length) twice += static_cast<long double>(s.delta[i]) * d * d / s.length;
  return static_cast<double>(twice / 2.0L / static_cast<long double>(kOne));
}

WeightCurve::Walk::Walk(const WeightCurve& curve, uint64_t x) : curve_(&curve), x_(x) {
  enter(curve.segment_of(x));
}

void WeightCurve::Walk::enter(size_t segment) {
  segment_ = segment;
  const Segment& s = curve_->segments_[segment];
  d_ = x_ - s.start;
  const bool closed = s.length != 0;
  scale_ = closed ? 2 * static_cast<__int128>(s.length) : 2;
  next_.resize(curve_->sources_);
  step_.resize(curve_->sources_);
  for (size_t i = 0; i < curve_->sources_; ++i) {
    // scaled_excess(s, i, d, 0) is scale_ x J_i; its increment from d to d + 1 is
    // 2 L a + delta (2d + 1) in a closed segment (2a in the open one), growing by 2 delta.
    next_[i] = curve_->scaled_excess(s, i, d_ + 1, 0);
    const __int128 delta = closed ? s.delta[i] : 0;
    const __int128 len = closed ? s.length : 1;
    step_[i] = 2 * len * static_cast<__int128>(s.share[i]) + delta * (2 * (d_ + 1) + 1);
  }
}

__int128 WeightCurve::Walk::excess(size_t i, unsigned __int128 target) const {
  return next_[i] - scale_ * static_cast<__int128>(target);
}

void WeightCurve::Walk::advance() {
  ++x_;
  ++d_;
  const Segment& s = curve_->segments_[segment_];
  if (s.length != 0 && d_ + 1 > s.length) return enter(segment_ + 1);
  for (size_t i = 0; i < next_.size(); ++i) {
    next_[i] += step_[i];
    if (s.length != 0) step_[i] += 2 * static_cast<__int128>(s.delta[i]);
  }
}

}  // namespace shardkit::loader
