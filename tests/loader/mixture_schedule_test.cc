// The greedy-error mixture schedule: after every prefix each source's count is within one sample
// of weight x prefix (checked against the weights as given, in double, and exactly against the
// fixed-point shares), zero weights are never drawn, seek() equals replay. Scheduled weights
// (earliest deadline first): every prefix within one sample of the schedule's integral, exactly
// and against the weights as given, for steps, ramps and abrupt swaps among up to eight sources.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/error.h"
#include "loader/mixture_schedule.h"

using shardkit::Error;
using shardkit::loader::MixtureSchedule;

namespace {

void check_prefixes(const std::vector<double>& weights, uint64_t samples) {
  MixtureSchedule s(weights);
  double total = 0;
  for (double w : weights) total += w;
  uint64_t share_sum = 0;
  for (uint64_t share : s.shares()) share_sum += share;
  REQUIRE(share_sum == MixtureSchedule::kOne);
  std::vector<uint64_t> counts(weights.size(), 0);
  for (uint64_t k = 1; k <= samples; ++k) {
    const uint32_t i = s.next();
    REQUIRE(i < weights.size());
    ++counts[i];
    for (size_t j = 0; j < weights.size(); ++j) {
      const double lag = std::abs(double(counts[j]) - weights[j] / total * double(k));
      // Exact in fixed point; in double within the rounding of the shares (k x 2^-32).
      const __int128 fixed = static_cast<__int128>(counts[j]) * MixtureSchedule::kOne -
                             static_cast<__int128>(s.shares()[j]) * k;
      if (!(fixed < static_cast<__int128>(MixtureSchedule::kOne) &&
            -fixed < static_cast<__int128>(MixtureSchedule::kOne) && lag < 1 + 1e-4)) {
        FAIL("source " << j << " has " << counts[j] << " of " << k << " samples (lag " << lag
                       << ")");
      }
    }
  }
  CHECK(s.counts() == counts);
}

}  // namespace

TEST_CASE("every prefix holds each source's share to within one sample") {
  check_prefixes({0.5, 0.3, 0.2}, 100000);
  check_prefixes({1, 1, 1}, 30000);
  check_prefixes({0.999, 0.001}, 30000);
  check_prefixes({7}, 1000);
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> w(2 + rng() % 6);
    for (double& x : w) x = std::uniform_real_distribution<double>(0.0, 10.0)(rng);
    check_prefixes(w, 20000);
  }
}

TEST_CASE("a zero weight is never drawn; seek equals replay; bad weights are refused") {
  MixtureSchedule s({0.0, 2.0, 1.0});
  std::vector<uint32_t> seq;
  for (int k = 0; k < 3000; ++k) seq.push_back(s.next());
  CHECK(s.counts()[0] == 0);
  CHECK(s.counts()[1] == 2000);
  CHECK(s.counts()[2] == 1000);
  for (uint64_t at : {0u, 1u, 17u, 1234u, 2999u}) {
    MixtureSchedule r({0.0, 2.0, 1.0});
    r.seek(at);
    CHECK(r.position() == at);
    for (uint64_t k = at; k < 3000; ++k) REQUIRE(r.next() == seq[k]);
  }
  CHECK_THROWS_AS(MixtureSchedule({}), Error);
  CHECK_THROWS_AS(MixtureSchedule({0.0, 0.0}), Error);
  CHECK_THROWS_AS(MixtureSchedule({1.0, -0.5}), Error);
  CHECK_THROWS_AS(MixtureSchedule({1.0, NAN}), Error);
}

namespace {

using shardkit::loader::fixed_point_shares;
using shardkit::loader::WeightCurve;

// Every prefix of a scheduled stream: each count within one sample of the curve's exact
// integral J, and (in double) of the integral of the weights as given.
void check_curve(const std::vector<std::pair<uint64_t, std::vector<double>>>& points, bool linear,
                 uint64_t samples) {
  std::vector<WeightCurve::Point> fixed;
  for (const auto& [at, w] : points) fixed.push_back({at, fixed_point_shares(w)});
  auto curve = std::make_shared<const WeightCurve>(fixed, linear);
  MixtureSchedule s = MixtureSchedule::following(curve);
  const size_t n = points[0].second.size();
  // The weights' integral, sample by sample: the share at the sample's start and end averaged
  // (exact for a linear piece), from the normalised weights.
  auto share = [&](size_t i, double x) {
    size_t m = 0;
    while (m + 1 < points.size() && double(points[m + 1].first) <= x) ++m;
    auto norm = [&](size_t p) {
      double total = 0;
      for (double w : points[p].second) total += w;
      return points[p].second[i] / total;
    };
    if (!linear || m + 1 == points.size()) return norm(m);
    const double t = (x - double(points[m].first)) / double(points[m + 1].first - points[m].first);
    return norm(m) + (norm(m + 1) - norm(m)) * t;
  };
  std::vector<double> integral(n, 0);
  std::vector<uint64_t> counts(n, 0);
  for (uint64_t k = 0; k < samples; ++k) {
    ++counts[s.next()];
    for (size_t i = 0; i < n; ++i) {
      integral[i] += (share(i, double(k)) + share(i, double(k) + 1 - 1e-9)) / 2;
      const unsigned __int128 c = counts[i];
      const bool below = curve->compare(i, k + 1, (c + 1) * WeightCurve::kOne) < 0;
      const bool above = c == 0 || curve->compare(i, k + 1, (c - 1) * WeightCurve::kOne) > 0;
      const double lag = std::abs(double(counts[i]) - integral[i]);
      if (!(below && above && lag < 1 + 1e-4))
        FAIL("after " << k + 1 << " samples source " << i << " has " << counts[i]
                      << "; the schedule's integral is " << curve->integral(i, k + 1)
                      << " (weights as given: " << integral[i] << ")");
    }
  }
  CHECK(s.counts() == counts);
}

}  // namespace

TEST_CASE("scheduled weights: every prefix within one sample of the schedule's integral") {
  // The curriculum, on a sample axis: 0.9/0.1 ramping to 0.5/0.5, then held.
  check_curve({{0, {0.9, 0.1}}, {40000, {0.5, 0.5}}}, true, 100000);
  check_curve({{0, {0.9, 0.1}}, {40000, {0.5, 0.5}}}, false, 100000);
  // Three sources, steps and ramps, a source switched off and on again.
  check_curve(
      {{0, {0.6, 0.3, 0.1}}, {20000, {0.1, 0.1, 0.8}}, {50000, {0, 0.5, 0.5}}, {70000, {1, 1, 1}}},
      true, 100000);
  check_curve(
      {{0, {0.6, 0.3, 0.1}}, {20000, {0.1, 0.1, 0.8}}, {50000, {0, 0.5, 0.5}}, {70000, {1, 1, 1}}},
      false, 100000);
  // Abrupt swaps between many sources, where a greedy rule drifts past one sample.
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 12; ++trial) {
    const size_t n = 2 + rng() % 7;
    std::vector<std::pair<uint64_t, std::vector<double>>> points;
    uint64_t at = 0;
    for (int p = 0; p < 6; ++p) {
      std::vector<double> w(n);
      for (double& x : w)
        x = rng() % 4 == 0 ? 0.0 : std::uniform_real_distribution<double>(0, 5)(rng);
      w[rng() % n] += 1;  // never all zero
      points.push_back({at, w});
      at += 1 + rng() % 3000;
    }
    check_curve(points, trial % 2 == 0, 20000);
  }
}

TEST_CASE("a scheduled stream resumes from its counts; bad schedules are refused") {
  auto curve = std::make_shared<const WeightCurve>(
      std::vector<WeightCurve::Point>{{0, fixed_point_shares({3, 1, 1})},
                                      {5000, fixed_point_shares({1, 1, 8})}},
      true);
  MixtureSchedule whole = MixtureSchedule::following(curve);
  std::vector<uint32_t> seq;
  for (int k = 0; k < 9000; ++k) seq.push_back(whole.next());
  for (uint64_t at : {1u, 777u, 4999u, 5000u, 6123u}) {
    MixtureSchedule from = MixtureSchedule::following(curve);
    from.seek(at);
    MixtureSchedule resumed = MixtureSchedule::following(curve);
    resumed.resume(at, from.counts());
    for (uint64_t k = at; k < 9000; ++k) REQUIRE(resumed.next() == seq[k]);
  }
  using Points = std::vector<WeightCurve::Point>;
  CHECK_THROWS_AS(WeightCurve(Points{{5, fixed_point_shares({1, 1})}}, false), Error);
  CHECK_THROWS_AS(
      WeightCurve(Points{{0, fixed_point_shares({1, 1})}, {0, fixed_point_shares({1, 2})}}, true),
      Error);
  CHECK_THROWS_AS(WeightCurve(Points{{0, fixed_point_shares({1, 1})},
                                     {uint64_t{1} << 41, fixed_point_shares({1, 2})}},
                              true),
                  Error);
}

TEST_CASE("weights whose sum overflows are refused, not read as one source") {
  CHECK_THROWS_WITH_AS(MixtureSchedule({1e308, 1e308}), doctest::Contains("scale them down"),
                       Error);
  CHECK_THROWS_AS(fixed_point_shares({1e308, 1e308, 1.0}), Error);
  CHECK_NOTHROW(MixtureSchedule({1e307, 1e307}));
}
