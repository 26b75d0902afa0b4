// The order is a permutation of the records for every geometry, mixes within bounded windows,
// and splits across ranks into disjoint, covering, equally long shares.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "loader/epoch_order.h"
#include "loader/keyed_permutation.h"
#include "loader/rank_schedule.h"

using namespace shardkit::loader;
using shardkit::Geometry;

TEST_CASE("keyed permutation is a bijection with a matching inverse") {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> sizes = {1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 1000, 4097};
  for (int i = 0; i < 20; ++i) sizes.push_back(1 + rng() % 5000);
  for (uint64_t n : sizes) {
    CAPTURE(n);
    const KeyedPermutation p(n, rng());
    std::vector<char> seen(n, 0);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = p(i);
      REQUIRE(v < n);
      REQUIRE(!seen[v]);
      seen[v] = 1;
      REQUIRE(p.inverse(v) == i);
    }
  }
  // Large domains: spot checks of the inverse only.
  const KeyedPermutation big((1ull << 40) + 12345, 99);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = rng() % big.size();
    CHECK(big.inverse(big(x)) == x);
  }
}

TEST_CASE("keyed permutation: each position takes each value about equally often over keys") {
  // A uniform random permutation puts value v at position 0 with probability 1/n.
  const uint64_t n = 10, keys = 20000;
  std::vector<std::vector<int>> count(n, std::vector<int>(n, 0));
  for (uint64_t key = 0; key < keys; ++key) {
    const KeyedPermutation p(n, key);
    for (uint64_t i = 0; i < n; ++i) ++count[i][p(i)];
  }
  // Expected 2000 each, sd = sqrt(2000 * 0.9) ~ 42; allow 5 sd.
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t v = 0; v < n; ++v) CHECK(std::abs(count[i][v] - 2000) < 212);
}

namespace {

Geometry random_geometry(std::mt19937_64& rng) {
  const uint32_t rpb = 1 + static_cast<uint32_t>(rng() % 50);
  std::vector<uint64_t> shards(1 + rng() % 20);
  for (auto& s : shards) s = (rng() % 5 == 0) ? 0 : rng() % 400;  // empty shards too
  return Geometry(rpb, shards);
}

}  // namespace

TEST_CASE("an epoch visits every record once, for any geometry, window and epoch") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const Geometry g = random_geometry(rng);
    const OrderParams params{trial % 5 != 0, rng(), rng() % 10, 1 + rng() % 12};
    CAPTURE(trial);
    const EpochOrder order(g, params);
    REQUIRE(order.size() == g.records());
    std::vector<char> seen(g.records(), 0);
    std::vector<uint64_t> all(g.records());
    if (!all.empty()) order.records(0, all.size(), all.data());
    uint64_t last_window = 0;
    std::map<uint64_t, std::set<uint64_t>> blocks_of_window;
    for (uint64_t pos = 0; pos < all.size(); ++pos) {
      const uint64_t r = all[pos];
      REQUIRE(r < g.records());
      REQUIRE(!seen[r]);
      seen[r] = 1;
      REQUIRE(order.record_at(pos) == r);
      const uint64_t w = order.window_of(pos);
      REQUIRE(w >= last_window);
      last_window = w;
      blocks_of_window[w].insert(g.block_of_record(r));
    }
    // Locality: one window's positions read at most window_blocks blocks.
    for (const auto& [w, blocks] : blocks_of_window) CHECK(blocks.size() <= order.window_blocks());
    if (!params.shuffle)
      for (uint64_t pos = 0; pos < all.size(); ++pos) REQUIRE(all[pos] == pos);
  }
}

TEST_CASE("different epochs and seeds give different orders; the same ones the same") {
  const Geometry g(16, {1000, 500, 37});
  auto order_of = [&](uint64_t seed, uint64_t epoch) {
    const EpochOrder o(g, {true, seed, epoch, 8});
    std::vector<uint64_t> v(g.records());
    o.records(0, v.size(), v.data());
    return v;
  };
  CHECK(order_of(1, 0) == order_of(1, 0));
  CHECK(order_of(1, 0) != order_of(1, 1));
  CHECK(order_of(1, 0) != order_of(2, 0));
}

TEST_CASE("ranks get disjoint shares that cover the epoch, with equal batch counts") {
  std::mt19937_64 rng(5);
  for (uint32_t world : {1u, 2u, 3u, 8u}) {
    for (bool drop_last : {false, true}) {
      for (int trial = 0; trial < 8; ++trial) {
        const Geometry g = random_geometry(rng);
        const uint64_t batch = 1 + rng() % 9;
        CAPTURE(world);
        CAPTURE(drop_last);
        CAPTURE(batch);
        CAPTURE(g.records());
        const EpochOrder order(g, {true, rng(), 0, 1 + rng() % 6});
        std::map<uint64_t, int> times_seen;
        uint64_t rows = 0;
        std::set<uint64_t> batch_counts;
        for (uint32_t rank = 0; rank < world; ++rank) {
          const RankSchedule s({g.records(), 0, batch, rank, world, drop_last});
          batch_counts.insert(s.batches());
          for (uint64_t b = 0; b < s.batches(); ++b) {
            // Every batch is full except the last step's, which is the same size on all ranks.
            if (b + 1 < s.batches()) REQUIRE(s.batch_size(b) == batch);
            for (uint64_t j = 0; j < s.batch_size(b); ++j) {
              ++times_seen[order.record_at(s.position(b, j))];
              ++rows;
            }
          }
        }
        REQUIRE(batch_counts.size() == 1);
        const uint64_t n = g.records(), global = batch * world;
        if (drop_last) {
          // Disjoint, and all but the remainder of fewer than one global batch.
          CHECK(rows == n / global * global);
          for (const auto& [r, k] : times_seen) CHECK(k == 1);
        } else {
          // Everything, padded by fewer than `world` repeats.
          CHECK(times_seen.size() == n);
          CHECK(rows >= n);
          CHECK(rows - n < world);
          CHECK(*batch_counts.begin() == (n + global - 1) / global);
          for (const auto& [r, k] : times_seen) CHECK(k <= 2);
        }
      }
    }
  }
}

TEST_CASE("a resumed schedule continues the same global steps with another world size") {
  const Geometry g(10, {997});
  const EpochOrder order(g, {true, 3, 2, 4});
  // Global batch 24 as 2 x 12 and as 8 x 3: the concatenation of ranks' batches per step.
  auto steps = [&](uint32_t world, uint64_t batch, uint64_t start) {
    std::vector<std::vector<uint64_t>> out;
    std::vector<RankSchedule> ranks;
    for (uint32_t r = 0; r < world; ++r)
      ranks.emplace_back(ScheduleParams{g.records(), start, batch, r, world, false});
    for (uint64_t b = 0; b < ranks[0].batches(); ++b) {
      std::vector<uint64_t> step;
      for (const RankSchedule& s : ranks)
        for (uint64_t j = 0; j < s.batch_size(b); ++j)
          step.push_back(order.record_at(s.position(b, j)));
      out.push_back(step);
    }
    return out;
  };
  const auto whole = steps(2, 12, 0);
  const auto resumed = steps(8, 3, 24 * 10);
  REQUIRE(resumed.size() + 10 == whole.size());
  for (size_t i = 0; i + 1 < resumed.size(); ++i) CHECK(resumed[i] == whole[i + 10]);
  // The final short step holds the same records (padding differs with the world size).
  std::set<uint64_t> a(whole.back().begin(), whole.back().end());
  std::set<uint64_t> b(resumed.back().begin(), resumed.back().end());
  const uint64_t tail_first = 24 * (whole.size() - 1);
  for (uint64_t pos = tail_first; pos < g.records(); ++pos) {
    CHECK(a.count(order.record_at(pos)));
    CHECK(b.count(order.record_at(pos)));
  }
}
