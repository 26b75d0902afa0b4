// Anonymous memory stays within the configured budget however large the dataset: RssAnon from
// /proc/self/status, sampled while a dataset eight times the budget streams through.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "core/buffer_pool.h"
#include "core/error.h"
#include "loader/loader.h"
#include "loader/loader_option_table.h"
#include "loader_fixture.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace t = shardkit::testing;

namespace {

// AddressSanitizer's shadow memory and quarantine are anonymous memory the loader does not
// control; under it only the loader's own accounting is checked.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kRssMeaningful = false;
#else
constexpr bool kRssMeaningful = true;
#endif
#else
constexpr bool kRssMeaningful = true;
#endif

size_t status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
  return 0;
}

size_t rss_anon_bytes() { return status_bytes("RssAnon:"); }
// Anonymous plus file-backed pages: what a container's memory limit counts.
size_t rss_anon_file_bytes() { return status_bytes("RssAnon:") + status_bytes("RssFile:"); }

LoaderOptions streaming_options(size_t budget) {
  LoaderOptions o;
  o.batch_size = 64;
  o.threads = 3;
  o.memory_budget = budget;
  o.int_output = IntOutput::kKeep;
  return o;
}

// One epoch of `dir`: what it delivered and held, and how far RssAnon grew meanwhile.
struct Streamed {
  uint64_t rows = 0, window_blocks = 0, decoded = 0, blocks = 0;
  size_t resident = 0, peak_growth = 0;
};

Streamed stream(const std::filesystem::path& dir, const LoaderOptions& o) {
  const size_t baseline = rss_anon_bytes();
  size_t peak = baseline;
  Streamed s;
  {
    Loader loader(dir, o);
    s.window_blocks = loader.window_blocks();
    while (auto b = loader.next()) {
      s.rows += b->size();
      peak = std::max(peak, rss_anon_bytes());
      s.resident = std::max(s.resident, loader.stats().resident_block_bytes);
    }
    s.decoded = loader.stats().blocks_decoded;
    s.blocks = loader.dataset().block_count();
  }
  s.peak_growth = peak - baseline;
  return s;
}

// 64 MiB of records (record = 96 + 2 + 8 bytes) in blocks of `block_bytes`, shards of 16 MiB:
// larger than the budgets below. Returns the record count.
uint64_t write_64_mib(const std::filesystem::path& dir, uint32_t block_bytes = 256 << 10) {
  const uint64_t records = (64u << 20) / 106;
  t::write_fixture(dir, {.records = records, .block_bytes = block_bytes, .shard_bytes = 16 << 20});
  return records;
}

}  // namespace

TEST_CASE("RssAnon stays within the memory budget while streaming a larger dataset") {
  TempDir tmp("mem");
  const uint64_t records = write_64_mib(tmp / "ds");
  const size_t budget = 8u << 20;
  const Streamed s = stream(tmp / "ds", streaming_options(budget));
  CHECK(s.window_blocks >= 8);
  CHECK(s.resident <= budget);
  // Each block decoded about once: the window scheme, not a cache, keeps memory bounded.
  CHECK(s.decoded <= s.blocks + s.blocks / 10);
  CHECK(s.rows == records);
  MESSAGE("RssAnon growth " << s.peak_growth / 1024 << " KiB");
  // Budget, plus allocator slack and per-thread zstd contexts; holding the dataset would need 64
  // MiB.
  if (kRssMeaningful) CHECK(s.peak_growth <= budget + (8u << 20));
}

TEST_CASE("more threads than the budget's quarter holds batches: still within the budget") {
  TempDir tmp("mem");
  const uint64_t records = write_64_mib(tmp / "ds");
  const size_t budget = 8u << 20;
  LoaderOptions o = streaming_options(budget);
  // A batch of 4096 rows is at least its input_ids, length and labels (96 + 2 + 8 bytes a row):
  // 424 KiB, so the 2 MiB quarter holds at most 4 batches, fewer than the 6 threads. The 64
  // batches asked for ahead would hold all of two windows' rows (about 14 batches) at once.
  o.batch_size = 4096;
  o.threads = 6;
  o.prefetch_batches = 64;
  const Streamed s = stream(tmp / "ds", o);
  CHECK(s.rows == records);
  CHECK(s.resident <= budget);
  MESSAGE("6 threads, 64 batches ahead asked for: RssAnon growth " << s.peak_growth / 1024
                                                                   << " KiB");
  if (kRssMeaningful) CHECK(s.peak_growth <= budget + (8u << 20));
}

TEST_CASE("window_blocks set overrides memory_budget for decoded blocks, and the help says so") {
  TempDir tmp("mem");
  const uint64_t records = write_64_mib(tmp / "ds");
  const size_t budget = 8u << 20;
  LoaderOptions o = streaming_options(budget);
  // One window alone is 12 MiB of 256 KiB blocks, past the 8 MiB budget: by a window's last
  // batches nearly all its blocks have been read, and they stay until it ends.
  o.window_blocks = 48;
  const Streamed s = stream(tmp / "ds", o);
  CHECK(s.rows == records);
  CHECK(s.window_blocks == 48);
  CHECK(s.resident > budget);
  CHECK(s.resident <= 2 * 48 * (size_t{256} << 10));
  const auto& table = loader_option_table();
  CHECK(table.find("memory_budget")->help.find("window_blocks") != std::string::npos);
  CHECK(table.find("window_blocks")->help.find("overrides memory_budget") != std::string::npos);
}

TEST_CASE("partition=nodes: one rank holding every partition stays within the budget") {
  TempDir tmp("mem");
  // 64 MiB of records in blocks of 64 KiB; the budget is 32 MiB: the window is derived so that
  // each of the 64 partitions' windows, one block longer than its share, fits.
  const uint64_t records = write_64_mib(tmp / "ds", 64 << 10);
  const size_t budget = 32u << 20;
  LoaderOptions o = streaming_options(budget);
  o.partition = Partition::kNodes;
  const Streamed s = stream(tmp / "ds", o);
  CHECK(s.window_blocks % 64 == 0);
  CHECK(s.decoded <= s.blocks + 64);
  CHECK(s.rows == records);
  CHECK(s.resident <= budget / 4 * 3);
  MESSAGE("nodes plan: resident blocks at most " << s.resident / 1024 << " KiB, RssAnon growth "
                                                 << s.peak_growth / 1024 << " KiB");
  if (kRssMeaningful) CHECK(s.peak_growth <= budget + (8u << 20));
  // A budget that cannot hold a block of each of 64 partitions twice is refused for one rank,
  // saying why; 64 ranks hold a partition each.
  LoaderOptions small;
  small.memory_budget = 2u << 20;
  small.partition = Partition::kNodes;
  small.rank = 0;
  small.world_size = 1;
  try {
    Loader refused(tmp / "ds", small);
    FAIL("a budget too small for the partitions' windows was taken");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("memory_budget") != std::string::npos);
  }
  small.world_size = 64;
  Loader fits(tmp / "ds", small);
  CHECK(fits.next() != nullptr);
}

TEST_CASE("with pread, RSS (anonymous plus file pages) stays within the memory budget") {
  TempDir tmp("mem");
  const uint64_t records = write_64_mib(tmp / "ds");
  const size_t budget = 8u << 20;
  size_t peak_pread = 0, peak_mmap = 0;
  for (ReadMode mode : {ReadMode::kPread, ReadMode::kMmap}) {
    const size_t baseline = rss_anon_file_bytes();
    size_t peak = baseline;
    uint64_t rows = 0;
    {
      LoaderOptions o;
      o.batch_size = 64;
      o.threads = 3;
      o.memory_budget = budget;
      o.int_output = IntOutput::kKeep;
      o.source.read_mode = mode;
      Loader loader(tmp / "ds", o);
      while (auto b = loader.next()) {
        rows += b->size();
        peak = std::max(peak, rss_anon_file_bytes());
      }
    }
    CHECK(rows == records);
    (mode == ReadMode::kPread ? peak_pread : peak_mmap) = peak - baseline;
  }
  MESSAGE("RSS anon+file growth: pread " << peak_pread / 1024 << " KiB, mmap " << peak_mmap / 1024
                                         << " KiB (dataset 64 MiB, budget 8 MiB)");
  // Budget plus allocator slack and per-thread zstd contexts; file pages are the page cache's,
  // not the process's. A mapped read counts the pages it touched (most of the 64 MiB here).
  if (kRssMeaningful) CHECK(peak_pread <= budget + (8u << 20));
}

TEST_CASE("a dropped batch's buffers serve the next batch, within the pool's byte limit") {
  const size_t big = size_t{1} << 20;
  auto pool = BufferPool::create(2 * big);
  void* first = nullptr;
  {
    loader::Column c("x", DType::kI64, {static_cast<int64_t>(big / 8)}, pool);
    first = c.data();
    CHECK(reinterpret_cast<uintptr_t>(first) % 64 == 0);
  }
  CHECK(pool->idle_bytes() == big);
  {
    loader::Column again("y", DType::kI64, {static_cast<int64_t>(big / 8)}, pool);
    CHECK(again.data() == first);  // reused, not faulted in afresh
    CHECK(pool->idle_bytes() == 0);
    // Much smaller: not served by the big buffer (it would waste most of it).
    auto other = BufferPool::take(pool, big / 2);
    CHECK(other.data() != first);
  }
  CHECK(pool->idle_bytes() == big + big / 2);
  {
    // Three at once: the third does not fit in the limit when they come back, and is freed.
    auto a = BufferPool::take(pool, big), b = BufferPool::take(pool, big),
         c = BufferPool::take(pool, big);
  }
  CHECK(pool->idle_bytes() <= 2 * big);
  // Small buffers are plain allocations, never kept.
  { auto small = BufferPool::take(pool, 1000); }
  CHECK(pool->idle_bytes() <= 2 * big);
  // A buffer that outlives its pool is freed, not returned (AddressSanitizer checks the rest).
  auto orphan = BufferPool::take(pool, big);
  pool.reset();
  orphan = {};
}
