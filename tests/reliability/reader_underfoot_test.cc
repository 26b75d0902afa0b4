// Shards truncated, extended and replaced under a running loader (issue 13): with the default
// pread source the process never dies by a signal (mmap raised SIGBUS here), and every batch it
// yields equals the undisturbed run's, or next() throws an Error naming the shard.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "../loader/loader_fixture.h"
#include "core/error.h"
#include "loader/loader.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
using shardkit::testing::TempDir;
namespace fs = std::filesystem;
namespace t = shardkit::testing;

namespace {

// A batch as comparable values: records, then every column's bytes.
std::vector<std::string> flatten(const Batch& b) {
  std::vector<std::string> out;
  out.emplace_back(reinterpret_cast<const char*>(b.records.data()),
                   b.records.size() * sizeof(uint64_t));
  for (const Column& c : b.columns)
    out.emplace_back(reinterpret_cast<const char*>(c.data()), c.bytes());
  return out;
}

LoaderOptions options(uint64_t seed) {
  LoaderOptions o;
  o.batch_size = 16;
  o.seed = seed;
  o.threads = 2;
  o.memory_budget = 256 << 10;  // small windows: blocks are read all through the epoch
  return o;
}

// Mutates random shards until told to stop, restoring each afterwards from `pristine`.
void mutate(const fs::path& dir, const fs::path& pristine, std::atomic<bool>& stop, uint64_t seed,
            uint64_t& mutations) {
  std::vector<fs::path> shards;
  for (const auto& e : fs::directory_iterator(pristine))
    if (e.path().filename() != "manifest.json") shards.push_back(e.path().filename());
  std::mt19937_64 rng(seed);
  while (!stop.load()) {
    const fs::path name = shards[rng() % shards.size()];
    const fs::path live = dir / name;
    const std::string original = t::read_file(pristine / name);
    switch (rng() % 4) {
      case 0:  // truncate in place
        fs::resize_file(live, rng() % original.size());
        break;
      case 1: {  // extend in place
        std::FILE* f = std::fopen(live.c_str(), "ab");
        std::string junk(1 + rng() % 5000, static_cast<char>(rng()));
        std::fwrite(junk.data(), 1, junk.size(), f);
        std::fclose(f);
        break;
      }
      case 2: {  // replace by rename with other bytes (a different shard's)
        const fs::path other = pristine / shards[rng() % shards.size()];
        fs::copy_file(other, dir / "incoming.tmp", fs::copy_options::overwrite_existing);
        fs::rename(dir / "incoming.tmp", live);
        break;
      }
      default: {  // overwrite in place with flipped bytes
        std::string bytes = original;
        for (int i = 0; i < 8; ++i) bytes[rng() % bytes.size()] ^= 0x5a;
        std::FILE* f = std::fopen(live.c_str(), "r+b");
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
      }
    }
    ++mutations;
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    t::write_file(dir / "restore.tmp", original);
    fs::rename(dir / "restore.tmp", live);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
  }
}

}  // namespace

TEST_CASE(
    "shards truncated, extended and replaced underfoot: never a signal, never a wrong batch") {
  TempDir tmp("underfoot");
  t::write_fixture(tmp / "pristine",
                   {.records = 12000, .block_bytes = 4096, .shard_bytes = 64 << 10});
  uint64_t total_batches = 0, total_errors = 0, total_mutations = 0;
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    // The undisturbed stream.
    std::vector<std::vector<std::string>> expected;
    {
      Loader reference(tmp / "pristine", options(seed));
      while (auto b = reference.next()) expected.push_back(flatten(*b));
    }
    fs::remove_all(tmp / "live");
    fs::copy(tmp / "pristine", tmp / "live");
    std::atomic<bool> stop{false};
    uint64_t mutations = 0;
    std::thread mutator(
        [&] { mutate(tmp / "live", tmp / "pristine", stop, seed * 7919, mutations); });
    uint64_t delivered = 0, errors = 0;
    // Two passes over the epoch. After an error the reader starts again from the last good
    // state with a fresh Loader: a shard truncated in place stays short for the file it had
    // open, while a new open sees the restored file.
    for (int pass = 0; pass < 2; ++pass) {
      LoaderState state{seed, 0, 0};
      for (int attempts = 0; attempts < 500;) {
        Loader loader(tmp / "live", options(seed));
        loader.restore(state);
        uint64_t next_batch = state.samples_consumed / 16;
        bool failed = false;
        for (;;) {
          std::shared_ptr<Batch> b;
          try {
            b = loader.next();
          } catch (const Error& e) {
            ++errors, ++attempts;
            // The error names a shard file of this dataset.
            CHECK(e.file().find((tmp / "live").string()) == 0);
            state = loader.state();
            failed = true;
            break;
          }
          if (!b) break;
          REQUIRE(next_batch < expected.size());
          REQUIRE(flatten(*b) == expected[next_batch]);
          ++next_batch, ++delivered;
        }
        if (!failed) break;
      }
    }
    stop = true;
    mutator.join();
    std::printf("seed %llu: %llu batches delivered, all equal; %llu errors; %llu mutations\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(delivered),
                static_cast<unsigned long long>(errors),
                static_cast<unsigned long long>(mutations));
    total_batches += delivered, total_errors += errors, total_mutations += mutations;
  }
  CHECK(total_errors > 0);  // the mutations did reach the reader
  CHECK(total_batches > 0);
  std::printf(
      "reader underfoot: %llu batches equal to the undisturbed run, %llu errors, %llu "
      "mutations, 0 signals\n",
      static_cast<unsigned long long>(total_batches), static_cast<unsigned long long>(total_errors),
      static_cast<unsigned long long>(total_mutations));
}
