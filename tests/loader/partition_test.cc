// The nodes plan (partition = "nodes"): the partitioned order is a permutation of the records
// whose position p reads partition p mod C's slice of the shuffled block sequence, the reading
// groups split every step exactly at any topology and start, and each group (so each node)
// reads only its partitions' blocks: node shares overlap in at most nodes - 1 blocks.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"
#include "loader/block_sequence.h"
#include "loader/distributed_env.h"
#include "loader/partitioned_order.h"
#include "loader/rank_schedule.h"
#include "loader/reading_groups.h"

using namespace shardkit::loader;
using shardkit::Geometry;

namespace {

Geometry random_geometry(std::mt19937_64& rng, uint64_t most = 400) {
  const uint32_t rpb = 1 + static_cast<uint32_t>(rng() % 40);
  std::vector<uint64_t> shards(1 + rng() % 12);
  for (auto& s : shards) s = (rng() % 5 == 0) ? 0 : rng() % most;  // empty shards too
  return Geometry(rpb, shards);
}

std::vector<uint64_t> whole_order(const RecordOrder& order) {
  std::vector<uint64_t> all(order.size());
  if (!all.empty()) order.records(0, all.size(), all.data());
  return all;
}

// The sequence offset of every record (the inverse of BlockSequence::record).
std::vector<uint64_t> offsets(const BlockSequence& sequence) {
  std::vector<uint64_t> at(sequence.records());
  for (uint64_t u = 0; u < sequence.records(); ++u) at[sequence.record(u)] = u;
  return at;
}

}  // namespace

TEST_CASE("partition slots: a bijection that keeps each node's partitions next to each other") {
  for (uint32_t c : {1u, 2u, 6u, 12u, 64u, 96u, 256u, 1000u}) {
    CAPTURE(c);
    std::vector<uint32_t> slots(c);
    for (uint32_t p = 0; p < c; ++p) slots[p] = partition_slot(p, c);
    std::vector<uint32_t> sorted = slots;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t j = 0; j < c; ++j) REQUIRE(sorted[j] == j);
    // For every power of two N dividing C, the partitions p = n mod N fill one run of slots.
    for (uint32_t n_count = 1; c % n_count == 0; n_count *= 2) {
      for (uint32_t n = 0; n < n_count; ++n) {
        std::vector<uint32_t> run;
        for (uint32_t p = n; p < c; p += n_count) run.push_back(slots[p]);
        std::sort(run.begin(), run.end());
        CHECK(run.back() - run.front() + 1 == run.size());
      }
      if (n_count > c) break;
    }
  }
  CHECK(partition_slot(1, 8) == 4);  // bit reversal for a power of two
  CHECK(partition_slot(3, 8) == 6);
}

TEST_CASE("the partitioned order visits every record once, each position in its partition") {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 80; ++trial) {
    const Geometry g = random_geometry(rng);
    const uint32_t c = std::vector<uint32_t>{1, 2, 3, 4, 8, 12, 64, 500}[rng() % 8];
    const OrderParams params{trial % 6 != 0, rng(), rng() % 5, 1 + rng() % 40, c};
    CAPTURE(trial);
    CAPTURE(c);
    CAPTURE(params.window_blocks);
    const PartitionedOrder order(g, params);
    const BlockSequence sequence(g, params.shuffle, params.seed, params.epoch);
    const std::vector<uint64_t> at = offsets(sequence);
    const std::vector<uint64_t> all = whole_order(order);
    std::vector<char> seen(g.records(), 0);
    uint64_t last_window = 0;
    std::map<uint64_t, std::set<uint64_t>> blocks_of_window;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> windows_of_block;  // first, last
    for (uint64_t p = 0; p < all.size(); ++p) {
      const uint64_t r = all[p];
      REQUIRE(r < g.records());
      auto [it, fresh] = windows_of_block.try_emplace(g.block_of_record(r), order.window_of(p),
                                                      order.window_of(p));
      it->second.second = order.window_of(p);
      REQUIRE(!seen[r]);
      seen[r] = 1;
      // Partition p mod C's slice, in its window: (p div C) div m records into the stream.
      const uint32_t part = static_cast<uint32_t>(p % c);
      const uint64_t t = p / c, m = order.window_records();
      const uint64_t begin = order.slice_start(part), n = order.slice_size(part);
      REQUIRE(at[r] >= begin);
      REQUIRE(at[r] < begin + n);
      const uint64_t index = at[r] - begin;
      const uint64_t stream = order.slot(part) % 2 ? n - 1 - index : index;
      REQUIRE(stream / m == t / m);
      REQUIRE(order.window_of(p) == t / m);
      REQUIRE(order.window_of(p) >= last_window);
      last_window = order.window_of(p);
      blocks_of_window[last_window].insert(g.block_of_record(r));
      // The window's blocks for the partition's group hold the record's block.
      const std::vector<uint64_t> mine = order.blocks_of_window(last_window, c, part);
      REQUIRE(std::count(mine.begin(), mine.end(), g.block_of_record(r)) == 1);
    }
    // Slices are consecutive runs of the sequence, in slot order, floor(n / C) (+1) records.
    uint64_t next = 0;
    for (uint32_t j = 0; j < c; ++j)
      for (uint32_t part = 0; part < c; ++part)
        if (order.slot(part) == j) {
          CHECK(order.slice_start(part) == next);
          CHECK(order.slice_size(part) == g.records() / c + (part < g.records() % c));
          next += order.slice_size(part);
        }
    CHECK(next == g.records());
    for (const auto& [w, blocks] : blocks_of_window) {
      const std::vector<uint64_t> listed = order.blocks_of_window(w);
      CHECK(std::set<uint64_t>(listed.begin(), listed.end()) == blocks);
    }
    // The loader keeps a block until the last window that reads it.
    for (const auto& [block, windows] : windows_of_block)
      REQUIRE(order.last_window_of(block, windows.first) == windows.second);
  }
}

TEST_CASE("the partitioned order is the same for the same seed and epoch, else another") {
  const Geometry g(16, {1000, 500, 37});
  auto order_of = [&](uint64_t seed, uint64_t epoch, uint32_t c) {
    return whole_order(PartitionedOrder(g, {true, seed, epoch, 8, c}));
  };
  CHECK(order_of(1, 0, 8) == order_of(1, 0, 8));
  CHECK(order_of(1, 0, 8) != order_of(1, 1, 8));
  CHECK(order_of(1, 0, 8) != order_of(2, 0, 8));
  CHECK(order_of(1, 0, 8) != order_of(1, 0, 16));
}

TEST_CASE("reading groups split every step exactly, at any start, topology and drop_last") {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t c = std::vector<uint32_t>{1, 8, 12, 64}[rng() % 4];
    const uint32_t per_node = 1 + static_cast<uint32_t>(rng() % 4);
    const uint32_t nodes = 1 + static_cast<uint32_t>(rng() % 6);
    const uint32_t world = per_node * nodes;
    const uint64_t batch = 1 + rng() % 7, size = rng() % 500;
    const uint64_t start = size ? rng() % (size + 1) : 0;
    const bool drop_last = rng() % 2;
    CAPTURE(c);
    CAPTURE(per_node);
    CAPTURE(nodes);
    CAPTURE(batch);
    CAPTURE(size);
    CAPTURE(start);
    std::vector<RankSchedule> ranks;
    for (uint32_t r = 0; r < world; ++r) {
      const ReadingGroups g = reading_groups(Partition::kNodes, c, r, world, per_node);
      REQUIRE(c % g.groups == 0);
      REQUIRE(world % g.groups == 0);
      REQUIRE(g.nodes_apart() == (c % nodes == 0));
      ranks.emplace_back(
          ScheduleParams{size, start, batch, r, world, drop_last, g.groups, g.group, g.member});
    }
    // Step by step, the ranks' positions are exactly the step's (the last short step's wrap
    // aside), each rank's in its group's residue class, each node's in its own when apart.
    for (uint64_t b = 0; b < ranks[0].batches(); ++b) {
      std::multiset<uint64_t> got;
      for (uint32_t r = 0; r < world; ++r) {
        REQUIRE(ranks[r].batches() == ranks[0].batches());
        const ReadingGroups g = reading_groups(Partition::kNodes, c, r, world, per_node);
        for (uint64_t j = 0; j < ranks[r].batch_size(b); ++j) {
          const uint64_t unwrapped =
              ranks[r].step_first(b) +
              (g.group + g.groups - ranks[r].step_first(b) % g.groups) % g.groups +
              g.groups * (g.member * ranks[r].batch_size(b) + j);
          const uint64_t p = ranks[r].position(b, j);
          REQUIRE(p == unwrapped % size);
          if (unwrapped < size) {
            got.insert(p);
            REQUIRE(p % g.groups == g.group);
            if (g.nodes_apart()) REQUIRE(p % nodes == r / per_node);
          }
        }
      }
      const uint64_t first = ranks[0].step_first(b);
      const uint64_t last = std::min(size, first + ranks[0].step_size(b));
      std::multiset<uint64_t> want;
      for (uint64_t p = first; p < last; ++p) want.insert(p);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("reading groups: rank-local when the world size divides C, else node-local") {
  // 4 nodes x 2 ranks over 64 partitions: every rank its own residue mod 8, node n = p mod 4.
  for (uint32_t r = 0; r < 8; ++r) {
    const ReadingGroups g = reading_groups(Partition::kNodes, 64, r, 8, 2);
    CHECK(g.groups == 8);
    CHECK(g.member == 0);
    CHECK(g.group % 4 == r / 2);
  }
  // 16 nodes x 8 ranks over 64: node-local groups of two ranks (gcd(8, 64 / 16) = 4 per node).
  const ReadingGroups g = reading_groups(Partition::kNodes, 64, 13, 128, 8);
  CHECK(g.groups == 64);
  CHECK(g.group == 1 + 16 * (5 % 4));
  CHECK(g.member == 5 / 4);
  // 3 nodes over 64 partitions: one group, the rows plan's split.
  const ReadingGroups three = reading_groups(Partition::kNodes, 64, 4, 6, 2);
  CHECK(three.groups == 1);
  CHECK(three.member == 4);
  CHECK_FALSE(three.nodes_apart());
  CHECK_THROWS_AS(reading_groups(Partition::kNodes, 64, 0, 6, 4), shardkit::Error);
  CHECK(reading_groups(Partition::kRows, 64, 5, 8, 2).groups == 1);
}

TEST_CASE("each node reads its share of the blocks: shares overlap in at most nodes - 1") {
  std::mt19937_64 rng(47);
  for (int trial = 0; trial < 12; ++trial) {
    const Geometry g(8 + static_cast<uint32_t>(rng() % 8), {3000 + rng() % 2000, 2500, 777});
    const uint32_t c = 64, per_node = 1 + static_cast<uint32_t>(rng() % 3);
    const uint32_t nodes = 1u << (rng() % 4);
    const uint32_t world = nodes * per_node;
    const PartitionedOrder order(g, {true, rng(), 0, 1 + rng() % 300, c});
    CAPTURE(nodes);
    CAPTURE(per_node);
    std::vector<std::set<uint64_t>> node_blocks(nodes);
    for (uint32_t r = 0; r < world; ++r) {
      const ReadingGroups rg = reading_groups(Partition::kNodes, c, r, world, per_node);
      const RankSchedule s({g.records(), 0, 5, r, world, true, rg.groups, rg.group, rg.member});
      std::map<uint64_t, std::set<uint64_t>> by_window;
      for (uint64_t b = 0; b < s.batches(); ++b)
        for (uint64_t j = 0; j < s.batch_size(b); ++j) {
          const uint64_t p = s.position(b, j);
          const uint64_t block = g.block_of_record(order.record_at(p));
          node_blocks[r / per_node].insert(block);
          by_window[order.window_of(p)].insert(block);
        }
      // What the rank asks for ahead covers what it reads.
      for (const auto& [w, blocks] : by_window) {
        const std::vector<uint64_t> ahead = order.blocks_of_window(w, rg.groups, rg.group);
        for (uint64_t b : blocks) CHECK(std::count(ahead.begin(), ahead.end(), b) == 1);
      }
    }
    uint64_t total = 0;
    for (const auto& blocks : node_blocks) total += blocks.size();
    CHECK(total <= g.blocks() + nodes - 1);
    CHECK(total >= g.blocks() - (world * 5 - 1));  // drop_last leaves fewer than a step
  }
}

TEST_CASE("ranks per node come from LOCAL_WORLD_SIZE, checked against torchrun's numbering") {
  LoaderOptions o;
  o.partition = Partition::kNodes;
  o.partitions = 64;
  ::setenv("RANK", "5", 1);
  ::setenv("WORLD_SIZE", "8", 1);
  ::setenv("LOCAL_WORLD_SIZE", "2", 1);
  ::setenv("GROUP_RANK", "2", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  const ReadingGroups g = reading_groups(o);
  CHECK(g.nodes == 4);
  CHECK(g.ranks_per_node == 2);
  CHECK(g.group == 2 + 4 * 1);  // node 2, local rank 1
  CHECK_NOTHROW(check_node_numbering(o));
  // Nodes of different sizes: rank 5 is not node 2's local rank 0 of 2.
  ::setenv("LOCAL_RANK", "0", 1);
  CHECK_THROWS_WITH_AS(check_node_numbering(o), doctest::Contains("GROUP_RANK=2"), shardkit::Error);
  o.ranks_per_node = 4;  // given: the caller's numbering, the environment's aside
  CHECK_NOTHROW(check_node_numbering(o));
  CHECK(reading_groups(o).nodes == 2);
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "LOCAL_RANK"})
    ::unsetenv(name);
  o.ranks_per_node = LoaderOptions::kFromEnvironment;
  CHECK(reading_groups(o).nodes == 1);  // neither given nor set: one node
}
