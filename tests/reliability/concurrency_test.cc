// Concurrency: many threads sharing one Dataset (and its block cache, kept small so blocks are
// evicted and decoded again all the time), several processes mapping the same shards, and readers
// running while other datasets are written beside theirs or their own is replaced. Every record
// any of them returns is compared with what was written.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <thread>

#include "core/verify.h"
#include "process_util.h"
#include "reliability_util.h"

namespace shardkit::reliability {
namespace {

constexpr uint64_t kRecords = 20000;

SmallDatasetOptions big_enough() {
  return {.records = kRecords, .records_per_block = 64, .shard_bytes = 64 * 1024};
}

// Reads `reads` random records of `ds` and returns how many differed from what was written.
uint64_t random_reads(const Dataset& ds, uint64_t reads, uint64_t seed, uint8_t data_seed = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> pick(0, ds.size() - 1);
  std::vector<unsigned char> got(ds.schema().record_size()), want(got.size());
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < reads; ++i) {
    const uint64_t index = pick(rng);
    ds.read(index, got.data());
    expected_record(ds.schema(), index, kRecords, want.data(), data_seed);
    if (got != want) ++wrong;
  }
  return wrong;
}

TEST_CASE("eight threads read one dataset through one small cache") {
  testing::TempDir tmp("conc");
  const Manifest m = write_small_dataset(tmp / "ds", big_enough());
  REQUIRE(m.shards.size() >= 3);
  // 16 KiB of cache against 20000 * 36 bytes of records: constant eviction and re-decoding.
  const Dataset ds = Dataset::open(tmp / "ds", DatasetOptions{16 * 1024});
  std::atomic<uint64_t> wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        wrong += random_reads(ds, 20000, 1000 + t);
      } catch (const std::exception&) {
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(errors == 0);
  CHECK(ds.cache().resident_bytes() <= 16 * 1024);
  std::printf("concurrency: 8 threads x 20000 random reads, %llu wrong, %llu errors\n",
              static_cast<unsigned long long>(wrong.load()),
              static_cast<unsigned long long>(errors.load()));
}

TEST_CASE("four processes read one dataset at once, each with two threads") {
  testing::TempDir tmp("conc");
  write_small_dataset(tmp / "ds", big_enough());
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        const Dataset ds = Dataset::open(tmp / "ds", DatasetOptions{64 * 1024});
        std::atomic<uint64_t> wrong{0};
        std::thread other([&] { wrong += random_reads(ds, 10000, 77 + p); });
        wrong += random_reads(ds, 10000, 99 + p);
        other.join();
        if (ds.size() != kRecords || wrong) code = 1;
      } catch (...) {
        code = 2;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    const int status = wait_for(pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("readers are undisturbed while other datasets are written beside theirs") {
  testing::TempDir tmp("conc");
  write_small_dataset(tmp / "ds", big_enough());
  const std::string writer =
      (fs::path(SHARDKIT_BINARY_DIR) / "tests" / "reliability" / "reliability_crash_writer")
          .string();
  REQUIRE(fs::exists(writer));
  std::atomic<bool> done{false};
  std::atomic<uint64_t> wrong{0}, errors{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&, t] {
      uint64_t round = 0;
      while (!done) {
        try {
          // Reopen every round, so that opening races with the writers' renames too.
          const Dataset ds = Dataset::open(tmp / "ds", DatasetOptions{32 * 1024});
          wrong += random_reads(ds, 2000, round++ * 2 + t);
          reads += 2000;
        } catch (const std::exception&) {
          ++errors;
        }
      }
    });
  // A writer process and a writer thread, publishing (and replacing) datasets in the same
  // parent directory, including one whose name extends the readers' ("ds2").
  int written = 0;
  for (int round = 0; round < 3; ++round) {
    const pid_t pid = spawn({writer, (tmp / "ds2").string(), "50000", "3", "--overwrite"});
    write_small_dataset(tmp / "other",
                        {.records = 5000, .records_per_block = 64, .overwrite = true});
    CHECK(WIFEXITED(wait_for(pid)));
    written += 2;
  }
  done = true;
  for (auto& t : readers) t.join();
  CHECK(verify_dataset(tmp / "ds2").ok());
  CHECK(verify_dataset(tmp / "other").ok());
  CHECK(wrong == 0);
  CHECK(errors == 0);
  CHECK(reads > 0);
  std::printf(
      "concurrency: %d datasets published beside a dataset read %llu times, %llu wrong, "
      "%llu errors\n",
      written, static_cast<unsigned long long>(reads.load()),
      static_cast<unsigned long long>(wrong.load()),
      static_cast<unsigned long long>(errors.load()));
}

TEST_CASE("a dataset replaced under an open reader: old records or an error, never a mix") {
  testing::TempDir tmp("conc");
  const fs::path dir = tmp / "ds";
  write_small_dataset(dir, big_enough());
  // `touched` has every shard mapped before the replacement; `lazy` only its manifest read.
  const Dataset touched = Dataset::open(dir, DatasetOptions{16 * 1024});
  for (uint32_t s = 0; s < touched.manifest().shards.size(); ++s) touched.shard(s);
  const Dataset lazy = Dataset::open(dir, DatasetOptions{16 * 1024});

  // The replacement: same shape and shard names, every byte different (seed 0x5a).
  {
    const Schema schema = small_schema();
    WriterOptions w;
    w.block_bytes = static_cast<uint32_t>(64 * schema.record_size());
    w.shard_bytes = 64 * 1024;
    w.overwrite = true;
    DatasetWriter writer(dir, schema, w);
    std::vector<unsigned char> rec(schema.record_size());
    for (uint64_t i = 0; i < kRecords; ++i) {
      expected_record(schema, i, kRecords, rec.data(), 0x5a);
      writer.append(rec.data());
    }
    writer.finish();
  }
  // Mapped shards outlive their unlinking: the old reader keeps reading the old records.
  CHECK(random_reads(touched, 20000, 5) == 0);
  // A reader that opens shards after the swap meets files its manifest does not describe.
  try {
    const uint64_t wrong = random_reads(lazy, 20000, 6);
    CHECK(wrong == 0);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kCorrupt);
    CHECK(std::string(e.what()).find("manifest") != std::string::npos);
  }
  // A new reader sees the new dataset.
  const Dataset fresh = Dataset::open(dir);
  CHECK(random_reads(fresh, 5000, 7, 0x5a) == 0);
}

}  // namespace
}  // namespace shardkit::reliability
