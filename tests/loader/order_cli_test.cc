// `shard-inspect order` prints what the loader delivers, for several ranks, options and ranges.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/geometry.h"
#include "core/manifest.h"
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

TEST_CASE("shard-inspect order --mixture prints the mixture loader's stream") {
  TempDir tmp("ordmix");
  const uint64_t sizes[3] = {500, 260, 90};
  for (int i = 0; i < 3; ++i)
    t::write_fixture(tmp / ("d" + std::to_string(i)),
                     {.records = sizes[i], .block_bytes = 3000, .shard_bytes = 20000});
  // Relative paths are relative to the spec's directory.
  t::write_file(tmp / "weights.json", R"({"seed": 41, "sources": [
      {"path": "d0", "weight": 0.6}, {"path": "d1", "weight": 0.3}, {"path": "d2", "weight": 0.1}]})");
  t::write_file(tmp / "counts.json", R"({"sources": [{"path": "d0", "choose": 120},
      {"path": "d1", "repeat": 0.5}, {"path": "d2", "repeat": 3}], "max_samples": 600})");
  struct Case {
    std::string spec;
    std::vector<MixtureSource> sources;
    uint64_t seed, epoch, max_samples;
    uint32_t rank, world;
    uint64_t batch;
    bool drop_last;
  };
  const std::string d0 = (tmp / "d0").string(), d1 = (tmp / "d1").string(),
                    d2 = (tmp / "d2").string();
  const std::vector<MixtureSource> weights = {
      {d0, 0.6, {}, {}}, {d1, 0.3, {}, {}}, {d2, 0.1, {}, {}}};
  const std::vector<MixtureSource> counts = {
      {d0, {}, {}, 120}, {d1, {}, 0.5, {}}, {d2, {}, 3.0, {}}};
  const Case cases[] = {{"weights.json", weights, 41, 0, 0, 0, 1, 32, false},
                        {"weights.json", weights, 41, 2, 0, 1, 3, 10, true},
                        {"weights.json", weights, 41, 1, 2000, 2, 3, 16, false},
                        {"counts.json", counts, 0, 5, 600, 0, 2, 7, false}};
  for (const Case& c : cases) {
    LoaderOptions o;
    o.seed = c.seed;
    o.rank = c.rank;
    o.world_size = c.world;
    o.batch_size = c.batch;
    o.drop_last = c.drop_last;
    o.max_samples = c.max_samples;
    o.threads = 2;
    Loader loader(c.sources, o);
    loader.set_epoch(c.epoch);
    std::vector<uint64_t> expect;
    while (auto b = loader.next())
      for (size_t r = 0; r < b->size(); ++r) {
        expect.push_back(b->sources[r]);
        expect.push_back(b->records[r]);
      }
    std::string cmd = t::tool_path("shard-inspect") + " order --mixture " +
                      (tmp / c.spec).string() + " --epoch " + std::to_string(c.epoch) + " --rank " +
                      std::to_string(c.rank) + " --world-size " + std::to_string(c.world) +
                      " --batch-size " + std::to_string(c.batch) +
                      (c.drop_last ? " --drop-last" : "") +
                      (c.max_samples && c.spec == "weights.json"
                           ? " --max-samples " + std::to_string(c.max_samples)
                           : "");
    std::string out;
    REQUIRE(t::run_command(cmd, &out) == 0);
    CAPTURE(cmd);
    CHECK(parse_lines(out) == expect);
    CHECK(expect.size() > 20);
  }
  // A misspelt key is refused, naming the file and the key.
  t::write_file(tmp / "typo.json", R"({"sources": [{"path": "d0", "wieght": 1}]})");
  std::string out;
  CHECK(t::run_command(t::tool_path("shard-inspect") + " order --mixture " +
                           (tmp / "typo.json").string() + " 2>&1",
                       &out) != 0);
  CHECK(out.find("wieght") != std::string::npos);
  CHECK(out.find("typo.json") != std::string::npos);
}

TEST_CASE("shard-inspect order: the nodes plan's ranks, and --blocks, each node's blocks") {
  TempDir tmp("ordnodes");
  t::write_fixture(tmp / "ds", {.records = 3000, .block_bytes = 3000, .shard_bytes = 20000});
  const shardkit::Geometry geo = shardkit::Geometry::of(shardkit::Manifest::load(tmp / "ds"));
  const uint32_t world = 8, per_node = 2;
  std::vector<std::set<uint64_t>> node_blocks(world / per_node);
  for (uint32_t rank = 0; rank < world; ++rank) {
    LoaderOptions o;
    o.seed = 3;
    o.rank = rank;
    o.world_size = world;
    o.ranks_per_node = per_node;
    o.batch_size = 12;
    o.partition = Partition::kNodes;
    o.partitions = 16;
    o.window_blocks = 32;
    o.threads = 2;
    Loader loader(tmp / "ds", o);
    std::vector<uint64_t> delivered;
    while (auto b = loader.next())
      for (uint64_t r : b->records) {
        delivered.push_back(r);
        node_blocks[rank / per_node].insert(geo.block_of_record(r));
      }
    // The dataset after the flags: a flag takes one word, the positional stays positional.
    const std::string cmd = t::tool_path("shard-inspect") + " order --seed 3 --rank " +
                            std::to_string(rank) + " --world-size 8 --ranks-per-node 2 " +
                            "--batch-size 12 --partition nodes --partitions 16 " +
                            "--window-blocks 32 " + (tmp / "ds").string();
    std::string out;
    REQUIRE(t::run_command(cmd, &out) == 0);
    CAPTURE(cmd);
    CHECK(parse_lines(out) == delivered);
  }
  std::string out;
  REQUIRE(t::run_command(t::tool_path("shard-inspect") + " order " + (tmp / "ds").string() +
                             " --blocks --seed 3 --world-size 8 --ranks-per-node 2 "
                             "--batch-size 12 --partition nodes --partitions 16 "
                             "--window-blocks 32",
                         &out) == 0);
  std::vector<std::set<uint64_t>> printed(node_blocks.size());
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<uint64_t> v = parse_lines(line);
    REQUIRE(v.size() >= 3);
    printed.at(v[0]).insert(v.begin() + 2, v.end());
  }
  CHECK(printed == node_blocks);
  uint64_t total = 0;
  for (const auto& blocks : node_blocks) total += blocks.size();
  CHECK(total <= geo.blocks() + 3);  // four nodes' shares meet in at most three blocks
  CHECK(out.find("# node 3 reads ") != std::string::npos);
}

TEST_CASE("shard-inspect order: --start and --count apply to --resume-from, or are refused") {
  TempDir tmp("ordrange");
  t::write_fixture(tmp / "ds", {.records = 300, .block_bytes = 3000, .shard_bytes = 20000});
  {
    std::ofstream state(tmp / "state.json");
    state << R"({"seed": 5, "epoch": 1, "samples_consumed": 40})";
  }
  const std::string order = t::tool_path("shard-inspect") + " order " + (tmp / "ds").string();
  const std::string resume =
      order + " --resume-from " + (tmp / "state.json").string() + " --world-size 2 --batch-size 8";
  std::string all, some;
  REQUIRE(t::run_command(resume, &all) == 0);
  REQUIRE(t::run_command(resume + " --start 3 --count 4", &some) == 0);
  // Each rank's lines from its 4th sample on, 4 of them.
  std::vector<std::string> expect;
  std::map<std::string, int> seen;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string rank = line.substr(0, line.find(' '));
    const int k = seen[rank]++;
    if (k >= 3 && k < 7) expect.push_back(line);
  }
  std::vector<std::string> printed;
  std::istringstream got(some);
  for (std::string line; std::getline(got, line);)
    if (!line.empty() && line[0] != '#') printed.push_back(line);
  CHECK(expect.size() == 8);
  CHECK(printed == expect);

  std::string out;
  CHECK(t::run_command(order + " --blocks --count 1 --start 3", &out) != 0);
  CHECK_MESSAGE(out.find("--blocks shows each node's blocks over the whole epoch: --start and "
                         "--count do not apply") != std::string::npos,
                out);
  CHECK(t::run_command(resume + " --epoch 2", &out) != 0);
  CHECK_MESSAGE(out.find("--epoch does not apply") != std::string::npos, out);
  CHECK(t::run_command(resume + " --blocks", &out) != 0);
  CHECK_MESSAGE(out.find("give one") != std::string::npos, out);
}

TEST_CASE("shard-inspect order --resume-from a state at its epoch's end prints the next epoch") {
  TempDir tmp("ordend");
  t::write_fixture(tmp / "ds", {.records = 300, .block_bytes = 3000, .shard_bytes = 20000});
  // What each rank's loader yields in epoch 2, as "RANK BATCH RECORD" lines.
  auto next_epoch = [&](bool drop_last) {
    std::vector<std::string> lines;
    for (uint32_t rank = 0; rank < 2; ++rank) {
      LoaderOptions o;
      o.seed = 5, o.rank = rank, o.world_size = 2, o.batch_size = 8, o.drop_last = drop_last;
      Loader loader(tmp / "ds", o);
      loader.set_epoch(2);
      while (auto b = loader.next())
        for (uint64_t r : b->records)
          lines.push_back(std::to_string(rank) + " " + std::to_string(b->index) + " " +
                          std::to_string(r));
    }
    return lines;
  };
  // The whole epoch read; and, with drop_last, fewer samples left than one step takes.
  for (const auto& [consumed, drop_last] : {std::pair{300, false}, std::pair{291, true}}) {
    CAPTURE(consumed);
    {
      std::ofstream state(tmp / "state.json");
      state << R"({"seed": 5, "epoch": 1, "samples_consumed": )" << consumed << "}";
    }
    std::string out;
    REQUIRE(t::run_command(t::tool_path("shard-inspect") + " order " + (tmp / "ds").string() +
                               " --resume-from " + (tmp / "state.json").string() +
                               " --world-size 2 --batch-size 8" + (drop_last ? " --drop-last" : ""),
                           &out) == 0);
    std::vector<std::string> printed;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') printed.push_back(line);
    CHECK_MESSAGE(out.find("reads the next epoch from its start") != std::string::npos, out);
    CHECK(printed.size() == (drop_last ? 288u : 300u));  // all 300, or 18 whole steps of 16
    CHECK(printed == next_epoch(drop_last));
  }
}

TEST_CASE("shard-inspect order with neither a dataset nor a mixture says what is missing") {
  std::string out;
  CHECK(t::run_command(t::tool_path("shard-inspect") + " order --count 4", &out) != 0);
  CHECK_MESSAGE(out.find("no data: give a dataset DIR or --mixture SPEC.json") != std::string::npos,
                out);
  CHECK(out.find("not both") == std::string::npos);
}

TEST_CASE(
    "shard-inspect order --resume-from: a state's skipped_blocks are read, bad ones refused") {
  TempDir tmp("ordskipped");
  t::write_fixture(tmp / "ds", {.records = 300, .block_bytes = 3000});
  const std::filesystem::path state = tmp / "state.json";
  const std::string resume = t::tool_path("shard-inspect") + " order " + (tmp / "ds").string() +
                             " --resume-from " + state.string() + " --batch-size 8";
  const auto run_with = [&](const std::string& fields, std::string* out) {
    std::ofstream(state) << R"({"seed": 5, "epoch": 0, "samples_consumed": 40)" << fields << "}";
    return t::run_command(resume, out);
  };
  std::string before, out;
  REQUIRE(run_with("", &before) == 0);  // a state saved before skipped_blocks was recorded
  CHECK(run_with(R"(, "blocks_skipped": 1, "skipped_blocks": [[0, 2]])", &out) == 0);
  CHECK(out == before);
  for (const char* bad : {"[[0]]", "[[0, -1]]", R"([["0", 1]])", "{}", "[[4294967296, 0]]"}) {
    CAPTURE(bad);
    CHECK(run_with(std::string(R"(, "skipped_blocks": )") + bad, &out) != 0);
    CHECK_MESSAGE(
        out.find("\"skipped_blocks\" must be a list of [source, block] pairs") != std::string::npos,
        out);
  }
}
