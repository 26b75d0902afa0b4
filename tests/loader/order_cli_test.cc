// `shard-inspect order` prints what the loader delivers, for several ranks, options and ranges.
#include <doctest/doctest.h>

#include <sstream>

#include "loader/loader.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace t = shardkit::testing;

namespace {

std::vector<uint64_t> parse_lines(const std::string& text) {
  std::vector<uint64_t> v;
  std::istringstream in(text);
  uint64_t x;
  while (in >> x) v.push_back(x);
  return v;
}

}  // namespace

TEST_CASE("shard-inspect order matches the loader's stream") {
  TempDir tmp("ord");
  t::write_fixture(tmp / "ds", {.records = 900, .block_bytes = 3000, .shard_bytes = 20000});
  struct Case {
    uint64_t seed, epoch;
    uint32_t rank, world;
    uint64_t batch, start, count;
    bool shuffle, drop_last;
  };
  const Case cases[] = {{1, 0, 0, 1, 32, 0, 100000, true, false},
                        {7, 3, 1, 3, 10, 25, 57, true, false},
                        {7, 3, 2, 3, 10, 0, 100000, true, true},
                        {0, 1, 5, 8, 4, 13, 40, false, false}};
  for (const Case& c : cases) {
    LoaderOptions o;
    o.seed = c.seed;
    o.rank = c.rank;
    o.world_size = c.world;
    o.batch_size = c.batch;
    o.shuffle = c.shuffle;
    o.drop_last = c.drop_last;
    o.threads = 2;
    Loader loader(tmp / "ds", o);
    loader.set_epoch(c.epoch);
    std::vector<uint64_t> delivered;
    while (auto b = loader.next())
      delivered.insert(delivered.end(), b->records.begin(), b->records.end());
    const uint64_t from = std::min<uint64_t>(c.start, delivered.size());
    const uint64_t to = std::min<uint64_t>(from + c.count, delivered.size());
    std::vector<uint64_t> expect(delivered.begin() + from, delivered.begin() + to);

    std::string cmd = t::tool_path("shard-inspect") + " order " + (tmp / "ds").string() +
                      " --seed " + std::to_string(c.seed) + " --epoch " + std::to_string(c.epoch) +
                      " --rank " + std::to_string(c.rank) + " --world-size " +
                      std::to_string(c.world) + " --batch-size " + std::to_string(c.batch) +
                      " --start " + std::to_string(c.start) + " --count " +
                      std::to_string(c.count) + (c.shuffle ? "" : " --no-shuffle") +
                      (c.drop_last ? " --drop-last" : "");
    std::string out;
    REQUIRE(t::run_command(cmd, &out) == 0);
    CAPTURE(cmd);
    CHECK(parse_lines(out) == expect);
    CHECK(!expect.empty());
  }
}
