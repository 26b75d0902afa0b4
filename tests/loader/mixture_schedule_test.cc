// The greedy-error mixture schedule: after every prefix each source's count is within one sample
// of weight x prefix (checked against the weights as given, in double, and exactly against the
// fixed-point shares), zero weights are never drawn, seek() equals replay.
#include <doctest/doctest.h>

#include <cmath>
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
