// Shards truncated, extended and replaced under a running loader (issue 13): with the default
// pread source the process never dies by a signal (mmap raised SIGBUS here), and every batch it
// yields equals the undisturbed run's, or next() throws an Error naming the shard.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "../loader/loader_fixture.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/shard_file.h"
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
            std::atomic<uint64_t>& mutations) {
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
    std::atomic<uint64_t> mutations{0};
    std::thread mutator(
        [&] { mutate(tmp / "live", tmp / "pristine", stop, seed * 7919, mutations); });
    uint64_t delivered = 0, errors = 0;
    // Two passes over the epoch. After an error the reader starts again from the last good
    // state with a fresh Loader: a shard truncated in place stays short for the file it had
    // open, while a new open sees the restored file.
    // Passes go on until the files have changed underfoot at least 150 times.
    for (int pass = 0; pass < 2 || (mutations < 150 && pass < 100); ++pass) {
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
                static_cast<unsigned long long>(mutations.load()));
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

TEST_CASE("a shard truncated under an open reader: pread gives an Error naming it, mmap SIGBUS") {
  TempDir tmp("underfoot-one");
  t::write_fixture(tmp / "ds", {.records = 4000, .block_bytes = 4096, .shard_bytes = 64 << 10});
  // In a child, so that the mapped case can die: open, truncate the first shard to 100 bytes,
  // read its last block (several pages in).
  const uint64_t last = Dataset::open(tmp / "ds").geometry().shard_blocks(0) - 1;
  REQUIRE(Dataset::open(tmp / "ds").shard(0).index_entry(last).offset > 2 * 4096);
  auto probe = [&](ReadMode mode) {
    fs::remove_all(tmp / "live");
    fs::copy(tmp / "ds", tmp / "live");
    const pid_t pid = ::fork();
    if (pid == 0) {
      try {
        DatasetOptions o;
        o.source.read_mode = mode;
        const Dataset ds = Dataset::open(tmp / "live", o);
        const ShardFile& shard = ds.shard(0);
        fs::resize_file(shard.path(), 100);
        ds.block(last);  // pages past the new end of the file
        ::_exit(0);
      } catch (const Error& e) {
        const bool named = e.file() == (tmp / "live" / "shard-00000.shard").string() &&
                           e.block() == std::optional<uint64_t>(last);
        ::_exit(named ? 3 : 4);
      }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  };
  const int pread_status = probe(ReadMode::kPread);
  CHECK(WIFEXITED(pread_status));
  CHECK(WEXITSTATUS(pread_status) == 3);  // an Error naming the shard and the block
  const int mmap_status = probe(ReadMode::kMmap);
  INFO("mmap child status ", mmap_status);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer handles the SIGBUS itself: it reports "BUS" and exits 1.
  CHECK(WIFEXITED(mmap_status));
  CHECK(WEXITSTATUS(mmap_status) == 1);
#else
  CHECK(WIFSIGNALED(mmap_status));
  CHECK(WTERMSIG(mmap_status) == SIGBUS);  // what every reader of shardkit 0.1 did
#endif
}
