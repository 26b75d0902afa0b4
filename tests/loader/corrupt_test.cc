// Damaged data under both on_corrupt policies, in a local shard and over HTTP from a real nginx
// serving the damaged files: "fail" names the shard (or URL) and block; "skip" gives the same
// global stream at world sizes 1, 2 and 4, with none of the damaged records, the undamaged
// run's batch shapes and step counts, a log line and a count per damaged block; a run resumed
// after a skip continues exactly; `shard-inspect verify --json` lists the blocks it replaces.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "../remote/servers.h"
#include "core/error.h"
#include "core/geometry.h"
#include "core/manifest.h"
#include "core/shard_file.h"
#include "loader/loader.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

// Flips one byte in the middle of the stored bytes of `block` of shard `shard` of `dir`.
void flip_byte(const fs::path& dir, const Manifest& m, uint32_t shard, uint64_t block) {
  const fs::path file = dir / m.shards[shard].name;
  uint64_t offset;
  {
    auto s = ShardFile::open(file, m.schema, m.records_per_block, m.shards[shard]);
    offset = s->index_entry(block).offset + s->index_entry(block).stored_size / 2;
  }
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  const char c = static_cast<char>(f.get());
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

// A clean dataset and a copy with bytes flipped in two blocks, both served by nginx.
struct Damaged {
  TempDir tmp{"corrupt"};
  fs::path root = tmp / "www";
  std::vector<std::pair<std::string, uint64_t>> blocks;  // shard file, block in it
  std::set<uint64_t> global_blocks, records;
  std::unique_ptr<t::Nginx> nginx;

  Damaged() {
    t::write_fixture(root / "clean", {.records = 2000, .block_bytes = 3000, .shard_bytes = 9000});
    fs::copy(root / "clean", root / "damaged");
    const Manifest m = Manifest::load(root / "damaged");
    const Geometry g = Geometry::of(m);
    REQUIRE(g.shards() >= 3);
    flip(m, g, 0, 1);
    flip(m, g, g.shards() - 1, 0);
    nginx = std::make_unique<t::Nginx>(root, tmp / "nginx");
  }
  void flip(const Manifest& m, const Geometry& g, uint32_t shard, uint64_t block) {
    flip_byte(root / "damaged", m, shard, block);
    blocks.emplace_back(m.shards[shard].name, block);
    uint64_t global = block;
    for (uint32_t s = 0; s < shard; ++s) global += g.shard_blocks(s);
    global_blocks.insert(global);
    for (uint32_t r = 0; r < g.block_records(global); ++r)
      records.insert(g.block_first_record(global) + r);
  }
  std::string local(const char* name = "damaged") const { return (root / name).string(); }
  std::string url() const { return nginx->url("damaged"); }
};

LoaderOptions options(uint32_t world, uint32_t rank, uint64_t batch, bool skip,
                      Partition plan = Partition::kRows) {
  LoaderOptions o;
  o.partition = plan;
  o.batch_size = batch;
  o.world_size = world;
  o.rank = rank;
  o.seed = 5;
  o.window_blocks = 6;
  o.threads = 2;
  o.include_metadata = true;
  o.on_corrupt = skip ? OnCorrupt::kSkip : OnCorrupt::kFail;
  return o;
}

struct Run {
  std::vector<std::vector<uint64_t>> steps;  // every rank's records of each global step
  std::vector<size_t> widths;                // the sequence length of each step's batches
  LoaderState state;                         // rank 0's, after the last step read
  uint64_t skipped = 0;                      // summed over ranks
};

// `world` ranks over `where`, each batch's labels checked against its records (labels = record
// index), for at most `steps` global steps, from `from` if given.
Run run(const std::string& where, uint32_t world, uint64_t batch, bool skip,
        const LoaderState* from = nullptr, size_t steps = SIZE_MAX,
        Partition plan = Partition::kRows) {
  std::vector<std::unique_ptr<Loader>> ranks;
  for (uint32_t r = 0; r < world; ++r) {
    ranks.push_back(std::make_unique<Loader>(where, options(world, r, batch, skip, plan)));
    if (from) ranks.back()->restore(*from);
  }
  Run out;
  while (out.steps.size() < steps) {
    std::vector<uint64_t> step;
    size_t ended = 0;
    for (auto& l : ranks) {
      auto b = l->next();
      if (!b) {
        ++ended;
        continue;
      }
      for (size_t i = 0; i < b->size(); ++i)
        REQUIRE(b->at("labels").get(i) == static_cast<int64_t>(b->records[i]));
      out.widths.push_back(static_cast<size_t>(b->at("input_ids").shape()[1]));
      step.insert(step.end(), b->records.begin(), b->records.end());
    }
    REQUIRE((ended == 0 || ended == ranks.size()));  // every rank runs the same steps
    if (ended) break;
    out.steps.push_back(step);
  }
  out.state = ranks[0]->state();
  for (auto& l : ranks) out.skipped += l->state().blocks_skipped;
  return out;
}

// What fd 2 receives while `f` runs.
template <typename F>
std::string capture_stderr(const fs::path& file, F&& f) {
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 2);
  ::close(fd);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  return t::read_file(file);
}

}  // namespace

TEST_CASE("on_corrupt=fail names the shard file or URL and the damaged block") {
  Damaged d;
  for (const std::string& where : {d.local(), d.url()}) {
    CAPTURE(where);
    Loader loader(where, options(1, 0, 16, false));
    try {
      while (loader.next()) {
      }
      FAIL("a damaged block was read without an error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kCorrupt);
      REQUIRE(e.block().has_value());
      bool named = false;
      for (const auto& [shard, block] : d.blocks)
        named |= e.file() == where + "/" + shard && *e.block() == block;
      CHECK(named);
      CHECK(std::string(e.what()).find(where + "/") != std::string::npos);
    }
  }
}

TEST_CASE("on_corrupt=skip: the same stream on every world size, none of the damaged records") {
  Damaged d;
  const Run clean = run(d.local("clean"), 1, 24, true);
  REQUIRE(clean.steps.size() == (2000 + 23) / 24);
  CHECK(clean.skipped == 0);
  Run reference;
  const std::string log =
      capture_stderr(d.tmp / "stderr", [&] { reference = run(d.local(), 1, 24, true); });
  // One line per damaged block, naming its shard and block.
  for (const auto& [shard, block] : d.blocks)
    CHECK(log.find(shard + ": block " + std::to_string(block) + ": block checksum mismatch") !=
          std::string::npos);
  CHECK(std::count(log.begin(), log.end(), '\n') == 2);
  CHECK(reference.state.blocks_skipped == 2);
  REQUIRE(reference.steps.size() == clean.steps.size());
  size_t replaced = 0;
  for (size_t s = 0; s < clean.steps.size(); ++s) {
    REQUIRE(reference.steps[s].size() == clean.steps[s].size());  // shapes unchanged
    for (size_t i = 0; i < clean.steps[s].size(); ++i) {
      const uint64_t got = reference.steps[s][i], want = clean.steps[s][i];
      CHECK(d.records.count(got) == 0);
      if (d.records.count(want))
        ++replaced;
      else
        CHECK(got == want);  // every intact record where it was
    }
  }
  CHECK(replaced == d.records.size());
  for (const std::string& where : {d.local(), d.url()})
    for (uint32_t world : {1u, 2u, 4u}) {
      CAPTURE(where);
      CAPTURE(world);
      const Run r = run(where, world, 24 / world, true);
      CHECK(r.steps == reference.steps);
      CHECK(r.skipped >= 2);  // each rank counts the damaged blocks its rows needed
    }
}

namespace {

// Flips a byte in global block `block` of the dataset at `dir`.
void flip_global_block(const fs::path& dir, uint64_t block) {
  const Manifest m = Manifest::load(dir);
  const Geometry g = Geometry::of(m);
  uint32_t shard = 0;
  while (block >= g.shard_blocks(shard)) block -= g.shard_blocks(shard++);
  flip_byte(dir, m, shard, block);
}

// The labels (= record indices, as read) of every batch of one source read twice per epoch
// (repeat 2) at world size 1, shuffle windows of two blocks.
std::vector<uint64_t> read_twice(const std::string& dir, uint64_t batch) {
  LoaderOptions o = options(1, 0, batch, true);
  o.window_blocks = 2;
  Loader loader(std::vector<MixtureSource>{MixtureSource{dir, {}, 2.0}}, o);
  std::vector<uint64_t> labels;
  while (auto b = loader.next())
    for (size_t i = 0; i < b->size(); ++i)
      labels.push_back(static_cast<uint64_t>(b->at("labels").get(i)));
  return labels;
}

// The blocks of each shuffle window of a pass, from the pass's records in order: a window is a
// run of consecutive positions holding every record of `k` blocks (the last one may hold fewer).
std::vector<std::vector<uint64_t>> windows_of(const std::vector<uint64_t>& pass, const Geometry& g,
                                              size_t k) {
  std::vector<std::vector<uint64_t>> windows;
  std::vector<uint64_t> positions;  // of each window
  for (uint64_t rec : pass) {
    const uint64_t block = g.block_of_record(rec);
    const bool known =
        !windows.empty() && std::count(windows.back().begin(), windows.back().end(), block) > 0;
    if (!known && (windows.empty() || windows.back().size() == k)) {
      windows.emplace_back();
      positions.push_back(0);
    }
    if (!known) windows.back().push_back(block);
    ++positions.back();
  }
  // Each window holds every record of its blocks: the cut is where the windows are.
  for (size_t w = 0; w < windows.size(); ++w) {
    uint64_t records = 0;
    for (uint64_t b : windows[w]) records += g.block_records(b);
    REQUIRE(positions[w] == records);
  }
  return windows;
}

// The other block of `block`'s two-block window, or none when its window holds it alone.
std::optional<uint64_t> partner(const std::vector<std::vector<uint64_t>>& windows, uint64_t block) {
  for (const auto& w : windows)
    if (w.size() == 2 && (w[0] == block || w[1] == block)) return w[0] == block ? w[1] : w[0];
  return std::nullopt;
}

}  // namespace

TEST_CASE("on_corrupt=skip: a block read by two passes in one batch gets each pass's substitute") {
  // One source read twice per epoch: its damaged block lies in a different shuffle window in
  // each pass, so each pass replaces it by the other block of that pass's window (the next one
  // after it, cyclically, in a window of two). A batch holding the whole epoch reads the block
  // from both passes and must give what batches of one row give.
  TempDir tmp{"corrupt-passes"};
  t::write_fixture(tmp / "clean", {.records = 400, .block_bytes = 3000});
  const Geometry g = Geometry::of(Manifest::load(tmp / "clean"));
  REQUIRE(g.blocks() >= 8);
  const std::vector<uint64_t> clean = read_twice((tmp / "clean").string(), 1);
  const uint64_t n = g.records();
  REQUIRE(clean.size() == 2 * n);
  std::vector<std::vector<std::vector<uint64_t>>> windows;  // per pass
  for (uint64_t p = 0; p < 2; ++p)
    windows.push_back(windows_of(
        std::vector<uint64_t>(clean.begin() + p * n, clean.begin() + (p + 1) * n), g, 2));
  // A block whose window partner differs between the passes.
  std::optional<uint64_t> damaged;
  for (uint64_t b = 0; b < g.blocks() && !damaged; ++b) {
    const auto first = partner(windows[0], b), second = partner(windows[1], b);
    if (first && second && *first != *second) damaged = b;
  }
  REQUIRE(damaged);
  const uint64_t subs[2] = {*partner(windows[0], *damaged), *partner(windows[1], *damaged)};
  std::vector<uint64_t> want = clean;
  for (uint64_t q = 0; q < want.size(); ++q) {
    if (g.block_of_record(clean[q]) != *damaged) continue;
    const uint64_t slot = clean[q] - g.block_first_record(*damaged), sub = subs[q / n];
    want[q] = g.block_first_record(sub) + slot % g.block_records(sub);
  }
  fs::copy(tmp / "clean", tmp / "damaged");
  flip_global_block(tmp / "damaged", *damaged);
  for (uint64_t batch : {uint64_t{1}, 2 * n}) {
    CAPTURE(batch);
    std::vector<uint64_t> got;
    capture_stderr(tmp / "stderr", [&] { got = read_twice((tmp / "damaged").string(), batch); });
    CHECK(got == want);
  }
}

TEST_CASE("on_corrupt=skip under partition=nodes: one stream at every world size") {
  // Each damaged block is read by the ranks of its partitions only; its substitute comes from
  // the partition window holding its first record, so every reader picks the same.
  Damaged d;
  const auto nodes = [&](const std::string& where, uint32_t world) {
    Run r;
    capture_stderr(d.tmp / "stderr", [&] {
      r = run(where, world, 24 / world, true, nullptr, SIZE_MAX, Partition::kNodes);
    });
    return r;
  };
  const Run clean = nodes(d.local("clean"), 1);
  const Run reference = nodes(d.local(), 1);
  CHECK(reference.skipped == 2);
  REQUIRE(reference.steps.size() == clean.steps.size());
  size_t replaced = 0;
  for (size_t s = 0; s < clean.steps.size(); ++s) {
    REQUIRE(reference.steps[s].size() == clean.steps[s].size());
    for (size_t i = 0; i < clean.steps[s].size(); ++i) {
      CHECK(d.records.count(reference.steps[s][i]) == 0);
      if (d.records.count(clean.steps[s][i]))
        ++replaced;
      else
        CHECK(reference.steps[s][i] == clean.steps[s][i]);
    }
  }
  CHECK(replaced == d.records.size());
  for (const std::string& where : {d.local(), d.url()})
    for (uint32_t world : {2u, 4u}) {
      CAPTURE(where);
      CAPTURE(world);
      const Run r = nodes(where, world);
      std::vector<std::multiset<uint64_t>> got, want;  // a step's rows, in rank order by group
      for (const auto& step : r.steps) got.emplace_back(step.begin(), step.end());
      for (const auto& step : reference.steps) want.emplace_back(step.begin(), step.end());
      CHECK(got == want);
      CHECK(r.skipped >= 1);
    }
}

TEST_CASE("a run resumed after a skip continues exactly, at another world size") {
  Damaged d;
  const Run whole = run(d.local(), 2, 12, true);
  // The first step after which a damaged block has been replaced.
  size_t cut = 1;
  while (run(d.local(), 2, 12, true, nullptr, cut).skipped == 0) ++cut;
  REQUIRE(cut + 2 < whole.steps.size());
  for (size_t at : {cut, cut + 1}) {
    const Run head = run(d.local(), 2, 12, true, nullptr, at);
    CHECK(head.skipped >= 1);
    for (auto [world, batch] : {std::pair{4u, 6u}, std::pair{3u, 8u}, std::pair{1u, 24u}}) {
      CAPTURE(world);
      const Run tail = run(d.url(), world, batch, true, &head.state);
      // The rest of the epoch in order; only the last step's padding (fewer than `world` rows
      // wrapped to the epoch's start) depends on the world size.
      std::vector<uint64_t> want, got;
      for (size_t s = at; s < whole.steps.size(); ++s)
        want.insert(want.end(), whole.steps[s].begin(), whole.steps[s].end());
      for (const auto& step : tail.steps) got.insert(got.end(), step.begin(), step.end());
      const size_t rest = 2000 - at * 24;
      REQUIRE(got.size() >= rest);
      CHECK(got.size() - rest < world);
      CHECK(std::vector<uint64_t>(got.begin(), got.begin() + rest) ==
            std::vector<uint64_t>(want.begin(), want.begin() + rest));
      CHECK(tail.state.blocks_skipped >= head.state.blocks_skipped);
    }
  }
}

TEST_CASE("shard-inspect verify --json lists the damaged blocks a skip replaces") {
  Damaged d;
  std::string out;
  CHECK(t::run_command(t::tool_path("shard-inspect") + " verify --json " + d.local(), &out) != 0);
  const auto report = nlohmann::json::parse(out);
  CHECK(report["ok"] == false);
  CHECK(report["skip_replaces_all"] == true);
  std::set<uint64_t> listed, records;
  for (const auto& b : report["damaged_blocks"]) {
    listed.insert(b["global_block"].get<uint64_t>());
    for (uint64_t r = 0; r < b["records"].get<uint64_t>(); ++r)
      records.insert(b["first_record"].get<uint64_t>() + r);
    CHECK(b["file"].get<std::string>().find(d.local()) == 0);
  }
  CHECK(listed == d.global_blocks);
  CHECK(records == d.records);
  CHECK(t::run_command(t::tool_path("shard-inspect") + " verify --json " + d.local("clean"),
                       &out) == 0);
  CHECK(nlohmann::json::parse(out)["damaged_blocks"].empty());
}
