// A simulated cluster against a real nginx on 127.0.0.1: node processes (fork) each run their
// ranks' Loaders with partition="nodes" and a cache directory of their own. At 4 nodes x 2
// ranks each node fetches about a quarter of the dataset (under the rows plan, all of it); the
// ranks' records over an epoch are exactly the epoch's; a run saved at 4 x 2 and resumed at
// 2 x 4 with another batch size reads exactly the records the saved run had not, step by step
// the same as a single process reading the same order.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "../remote/servers.h"
#include "loader/loader.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

constexpr uint64_t kRecords = 20000;
constexpr uint64_t kSeed = 5;

struct Topology {
  uint32_t nodes = 1, per_node = 1;
  uint64_t batch = 1;
  Partition partition = Partition::kNodes;
  uint32_t world() const { return nodes * per_node; }
};

// What one node process read: per rank, per batch, the records; the bytes its ranks fetched;
// the state after each global step.
struct NodeRun {
  std::map<uint32_t, std::vector<std::vector<uint64_t>>> batches;
  uint64_t bytes = 0;
  std::vector<LoaderState> states;
};

LoaderOptions options_for(const Topology& topo, uint32_t rank, const fs::path& cache) {
  LoaderOptions o;
  o.batch_size = topo.batch;
  o.seed = kSeed;
  o.rank = rank;
  o.world_size = topo.world();
  o.ranks_per_node = topo.per_node;
  o.partition = topo.partition;
  o.window_blocks = 64;
  o.threads = 1;
  o.source.cache_dir = cache.string();
  return o;
}

// The body of a node process: its ranks step in lockstep to the epoch's end; written to `out`
// as "R rank rec..." per batch, "S samples_consumed" per step and "B bytes".
void node_main(const std::string& url, const Topology& topo, uint32_t node, const fs::path& cache,
               const LoaderState* resume, const fs::path& out) {
  std::vector<std::unique_ptr<Loader>> ranks;
  for (uint32_t l = 0; l < topo.per_node; ++l) {
    ranks.push_back(
        std::make_unique<Loader>(url, options_for(topo, node * topo.per_node + l, cache)));
    if (resume) ranks.back()->restore(*resume);
  }
  std::ofstream f(out);
  for (;;) {
    bool any = false;
    for (uint32_t l = 0; l < topo.per_node; ++l) {
      auto b = ranks[l]->next();
      if (!b) continue;
      any = true;
      f << "R " << node * topo.per_node + l;
      for (uint64_t r : b->records) f << ' ' << r;
      f << '\n';
    }
    if (!any) break;
    f << "S " << ranks[0]->state().samples_consumed << ' ' << ranks[0]->state().fingerprint << '\n';
  }
  uint64_t bytes = 0;
  for (const auto& r : ranks) bytes += r->dataset().io_stats().bytes_fetched;
  f << "B " << bytes << '\n';
}

NodeRun parse(const fs::path& file, uint64_t epoch) {
  NodeRun run;
  std::istringstream in(t::read_file(file));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "R") {
      uint32_t rank;
      words >> rank;
      std::vector<uint64_t> records;
      for (uint64_t r; words >> r;) records.push_back(r);
      run.batches[rank].push_back(records);
    } else if (tag == "S") {
      LoaderState s(kSeed, epoch);
      words >> s.samples_consumed >> s.fingerprint;
      run.states.push_back(s);
    } else if (tag == "B") {
      words >> run.bytes;
    }
  }
  return run;
}

// Runs every node as a process of its own (fresh caches under `work`), all at once.
std::vector<NodeRun> run_cluster(const std::string& url, const Topology& topo, const fs::path& work,
                                 const LoaderState* resume = nullptr) {
  std::vector<pid_t> pids;
  for (uint32_t n = 0; n < topo.nodes; ++n) {
    fs::create_directories(work / ("cache" + std::to_string(n)));
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        node_main(url, topo, n, work / ("cache" + std::to_string(n)), resume,
                  work / ("node" + std::to_string(n)));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "node %u: %s\n", n, e.what());
        code = 1;
      }
      std::fflush(stderr);  // not stdout: it holds the parent's unwritten output too
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  std::vector<NodeRun> runs;
  for (uint32_t n = 0; n < topo.nodes; ++n)
    runs.push_back(parse(work / ("node" + std::to_string(n)), resume ? resume->epoch : 0));
  return runs;
}

// Per global step, the records of every rank's batch of that step.
std::vector<std::multiset<uint64_t>> steps_of(const std::vector<NodeRun>& runs) {
  std::vector<std::multiset<uint64_t>> steps;
  for (const NodeRun& n : runs)
    for (const auto& [rank, batches] : n.batches) {
      if (steps.size() < batches.size()) steps.resize(batches.size());
      for (size_t b = 0; b < batches.size(); ++b)
        steps[b].insert(batches[b].begin(), batches[b].end());
    }
  return steps;
}

uint64_t dataset_bytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) total += fs::file_size(e.path());
  return total;
}

}  // namespace

TEST_CASE("4 node processes x 2 ranks over HTTP: a quarter each, the epoch exactly, resumable") {
  TempDir tmp{"cluster"};
  t::write_fixture(tmp / "www/data",
                   {.records = kRecords, .block_bytes = 8192, .shard_bytes = 256 << 10});
  t::Nginx nginx(tmp / "www", tmp / "nginx");
  const std::string url = nginx.url("data");
  const double size = double(dataset_bytes(tmp / "www/data"));

  // Local, one process, world size 1: the epoch's order, the reference for every step.
  std::vector<uint64_t> order;
  {
    LoaderOptions o = options_for({1, 1, 1000}, 0, tmp / "unused");
    Loader one((tmp / "www/data").string(), o);
    while (auto b = one.next()) order.insert(order.end(), b->records.begin(), b->records.end());
    REQUIRE(order.size() == kRecords);
  }

  const Topology four{4, 2, 16};  // 128 a step
  const std::vector<NodeRun> runs = run_cluster(url, four, tmp / "four");
  std::multiset<uint64_t> all;
  for (const NodeRun& n : runs) {
    MESSAGE("node fetched " << n.bytes << " bytes of " << size << ": " << n.bytes / size);
    CHECK(n.bytes > 0.23 * size);
    CHECK(n.bytes <
          0.29 *
              size);  // a quarter, plus the manifest, shard indexes and the blocks two nodes share
    for (const auto& [rank, batches] : n.batches)
      for (const auto& b : batches) all.insert(b.begin(), b.end());
  }
  // The union of all ranks' records over the epoch is the epoch: every record, once.
  CHECK(all.size() == kRecords);
  CHECK(std::set<uint64_t>(all.begin(), all.end()).size() == kRecords);
  const std::vector<std::multiset<uint64_t>> steps = steps_of(runs);
  for (size_t s = 0; s < steps.size(); ++s) {
    const auto first = order.begin() + static_cast<ptrdiff_t>(s * 128);
    const auto last = order.begin() + static_cast<ptrdiff_t>(std::min(kRecords, s * 128 + 128));
    REQUIRE(steps[s] == std::multiset<uint64_t>(first, last));
  }

  // Saved after step 60 at 4 x 2 (batch 16), resumed at 2 x 4 (batch 12, 96 a step).
  const LoaderState saved = runs[0].states[59];
  REQUIRE(saved.samples_consumed == 60 * 128);
  for (const NodeRun& n : runs) CHECK(n.states[59] == saved);
  const Topology two{2, 4, 12};
  const std::vector<NodeRun> rest = run_cluster(url, two, tmp / "two", &saved);
  std::multiset<uint64_t> before;
  for (const NodeRun& n : runs)
    for (const auto& [rank, batches] : n.batches)
      for (size_t b = 0; b < 60; ++b) before.insert(batches[b].begin(), batches[b].end());
  std::multiset<uint64_t> after;
  for (const NodeRun& n : rest) {
    MESSAGE("resumed node fetched " << n.bytes / size << " of the dataset");
    CHECK(n.bytes < 0.5 * size);
    for (const auto& [rank, batches] : n.batches)
      for (const auto& b : batches) after.insert(b.begin(), b.end());
  }
  // None lost, none twice: the saved run's records and the resumed run's are the epoch.
  std::multiset<uint64_t> union_ = before;
  union_.insert(after.begin(), after.end());
  CHECK(union_.size() == kRecords);
  CHECK(std::set<uint64_t>(union_.begin(), union_.end()).size() == kRecords);
  // And in the same order: step j of the resumed run holds positions 7680 + 96j .. + 95.
  const std::vector<std::multiset<uint64_t>> resumed = steps_of(rest);
  const uint64_t left = kRecords - saved.samples_consumed;
  REQUIRE(resumed.size() == (left + 95) / 96);
  for (size_t s = 0; s < resumed.size(); ++s) {
    const uint64_t from = saved.samples_consumed + s * 96;
    const auto first = order.begin() + static_cast<ptrdiff_t>(from);
    const auto last = order.begin() + static_cast<ptrdiff_t>(std::min(kRecords, from + 96));
    REQUIRE(resumed[s] == std::multiset<uint64_t>(first, last));
  }
}

TEST_CASE("the rows plan over the same cluster fetches the whole dataset on every node") {
  TempDir tmp{"cluster-rows"};
  t::write_fixture(tmp / "www/data",
                   {.records = 4000, .block_bytes = 4096, .shard_bytes = 64 << 10});
  t::Nginx nginx(tmp / "www", tmp / "nginx");
  const double size = double(dataset_bytes(tmp / "www/data"));
  const std::vector<NodeRun> runs =
      run_cluster(nginx.url("data"), {2, 2, 16, Partition::kRows}, tmp / "rows");
  for (const NodeRun& n : runs) CHECK(n.bytes > 0.9 * size);
}

TEST_CASE("one rank of the nodes plan fetches and decodes each block once, without a cache") {
  // Windows of one block's worth of records per partition: most blocks lie across two windows
  // of their partition, and the block two slices share is read by both.
  TempDir tmp{"cluster-once"};
  t::write_fixture(tmp / "www/data",
                   {.records = kRecords, .block_bytes = 8192, .shard_bytes = 256 << 10});
  t::Nginx nginx(tmp / "www", tmp / "nginx");
  const double size = double(dataset_bytes(tmp / "www/data"));
  for (uint32_t world : {1u, 2u}) {
    CAPTURE(world);
    uint64_t bytes = 0, decoded = 0, blocks = 0;
    for (uint32_t r = 0; r < world; ++r) {
      LoaderOptions o = options_for({1, world, 16}, r, "");
      o.source.cache_dir.clear();
      Loader loader(nginx.url("data"), o);
      while (loader.next()) {
      }
      bytes += loader.dataset().io_stats().bytes_fetched;
      decoded += loader.stats().blocks_decoded;
      blocks = loader.dataset().block_count();
    }
    MESSAGE(world << " ranks fetched " << bytes / size << " of the dataset, decoded " << decoded
                  << " blocks of " << blocks);
    CHECK(bytes < 1.03 * size);
    CHECK(decoded <= blocks + world);
  }
}
