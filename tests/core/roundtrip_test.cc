// Whatever is written comes back, record for record, across blocks and shards, for random
// schemas and block sizes; and the bytes do not depend on the number of encoding threads.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/error.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;

namespace {

Schema random_schema(std::mt19937_64& rng) {
  const DType dtypes[] = {DType::kU8,  DType::kU16, DType::kU32,
                          DType::kI32, DType::kI64, DType::kF32};
  std::vector<Field> fields;
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    Field f;
    f.name = "f" + std::to_string(i);
    f.dtype = dtypes[rng() % 6];
    const int dims = static_cast<int>(rng() % 3);
    for (int d = 0; d < dims; ++d) f.shape.push_back(1 + static_cast<uint32_t>(rng() % 40));
    fields.push_back(f);
  }
  return Schema(fields);
}

// Compressible but not trivial: small numbers with runs, like token ids with padding.
std::vector<unsigned char> random_records(std::mt19937_64& rng, size_t count, size_t size) {
  std::vector<unsigned char> data(count * size);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = (rng() % 3 == 0) ? 0 : static_cast<unsigned char>(rng() % 64);
  return data;
}

// Records read at random by `threads` threads that differ from `data`, what was written.
int mismatched_reads(const Dataset& ds, const std::vector<unsigned char>& data, int threads,
                     int reads_each) {
  const size_t size = ds.schema().record_size();
  const uint64_t n = data.size() / size;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937_64 r(t);
      std::vector<unsigned char> rec(size);
      for (int k = 0; k < reads_each; ++k) {
        const uint64_t i = r() % n;
        ds.read(i, rec.data());
        if (std::memcmp(rec.data(), data.data() + i * size, size)) ++mismatches;
      }
    });
  for (auto& w : workers) w.join();
  return mismatches;
}

}  // namespace

TEST_CASE("random schemas and block sizes round-trip through random access") {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 12; ++trial) {
    TempDir tmp("rt");
    const Schema schema = random_schema(rng);
    const size_t count = rng() % 3000;
    auto data = random_records(rng, count, schema.record_size());
    WriterOptions opt;
    opt.block_bytes = 64 + static_cast<uint32_t>(rng() % 20000);
    opt.shard_bytes = 1 + rng() % 40000;  // forces many shard boundaries
    opt.filter = (trial % 2) ? format::BlockFilter::kBytePlanes : format::BlockFilter::kNone;
    opt.zstd_level = 1 + static_cast<int>(rng() % 9);
    opt.threads = 1 + trial % 3;
    CAPTURE(schema.canonical());
    CAPTURE(count);
    {
      DatasetWriter w(tmp / "ds", schema, opt);
      // Appended in uneven chunks to exercise block filling.
      size_t i = 0;
      while (i < count) {
        size_t take = std::min<size_t>(count - i, 1 + rng() % 50);
        w.append_many(data.data() + i * schema.record_size(), take);
        i += take;
      }
      Manifest m = w.finish();
      CHECK(m.record_count() == count);
    }
    Dataset ds = Dataset::open(tmp / "ds", {.cache_bytes = 1 << 16});
    REQUIRE(ds.size() == count);
    CHECK(ds.schema() == schema);
    std::vector<unsigned char> rec(schema.record_size());
    // Random order, so the cache evicts and reloads.
    std::vector<uint64_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (uint64_t i : order) {
      ds.read(i, rec.data());
      REQUIRE(std::memcmp(rec.data(), data.data() + i * schema.record_size(), rec.size()) == 0);
    }
    uint64_t blocks_records = 0;
    for (uint64_t b = 0; b < ds.block_count(); ++b) {
      BlockRef ref = ds.block_ref(b);
      CHECK(ref.first_record == blocks_records);
      blocks_records += ref.records;
    }
    CHECK(blocks_records == count);
    CHECK_THROWS_AS(ds.read(count, rec.data()), Error);
  }
}

TEST_CASE("output is byte-identical for any number of encoding threads") {
  std::mt19937_64 rng(7);
  const Schema schema({{"input_ids", DType::kU16, {128}}, {"length", DType::kU16, {}}});
  auto data = random_records(rng, 5000, schema.record_size());
  std::vector<std::string> manifests;
  std::vector<std::string> shard0;
  TempDir tmp("det");
  for (unsigned threads : {1u, 2u, 5u}) {
    const auto dir = tmp / ("t" + std::to_string(threads));
    WriterOptions opt;
    opt.block_bytes = 4096;
    opt.shard_bytes = 100000;
    opt.threads = threads;
    DatasetWriter w(dir, schema, opt);
    w.append_many(data.data(), 5000);
    w.set_metadata("note", "{\"k\":[1,2]}");
    w.finish();
    manifests.push_back(testing::read_file(dir / "manifest.json"));
    shard0.push_back(testing::read_file(dir / "shard-00000.shard"));
  }
  CHECK(manifests[0] == manifests[1]);
  CHECK(manifests[0] == manifests[2]);
  CHECK(shard0[0] == shard0[1]);
  CHECK(shard0[0] == shard0[2]);
}

TEST_CASE("reads from many threads agree with what was written") {
  std::mt19937_64 rng(99);
  TempDir tmp("mt");
  const Schema schema({{"x", DType::kI32, {33}}});
  auto data = random_records(rng, 20000, schema.record_size());
  {
    WriterOptions opt;
    opt.block_bytes = 2048;
    opt.shard_bytes = 50000;
    DatasetWriter w(tmp / "ds", schema, opt);
    w.append_many(data.data(), 20000);
    w.finish();
  }
  Dataset ds = Dataset::open(tmp / "ds", {.cache_bytes = 64 << 10});
  CHECK(mismatched_reads(ds, data, 4, 5000) == 0);
  CHECK(ds.cache().resident_bytes() <= ds.cache().capacity());
}

TEST_CASE("blocks decoded into reused buffers read back as written") {
  // Blocks of 128 KiB in a cache of two: most decodes land in a buffer that held another block,
  // uninitialised, so a decoder that left any byte unwritten would show stale records here.
  std::mt19937_64 rng(7);
  TempDir tmp("reuse");
  const Schema schema({{"x", DType::kI32, {33}}});
  const uint64_t n = 20000;
  auto data = random_records(rng, n, schema.record_size());
  {
    WriterOptions opt;
    opt.block_bytes = 128 << 10;
    DatasetWriter w(tmp / "ds", schema, opt);
    w.append_many(data.data(), n);
    w.finish();
  }
  Dataset ds = Dataset::open(tmp / "ds", {.cache_bytes = 256 << 10, .idle_block_bytes = 1 << 20});
  REQUIRE(ds.block_count() > 10);
  CHECK(mismatched_reads(ds, data, 2, 3000) == 0);
  CHECK(ds.cache().resident_bytes() <= ds.cache().capacity());
}

TEST_CASE("metadata, empty datasets and publication rules") {
  TempDir tmp("pub");
  const Schema schema({{"labels", DType::kI64, {}}});
  {
    DatasetWriter w(tmp / "empty", schema);
    w.set_metadata("label_map", "[\"neg\",\"pos\"]");
    w.finish();
  }
  Dataset empty = Dataset::open(tmp / "empty");
  CHECK(empty.size() == 0);
  CHECK(empty.block_count() == 0);
  CHECK(empty.metadata("label_map").value() == "[\"neg\",\"pos\"]");
  CHECK_FALSE(empty.metadata("absent").has_value());

  // Existing datasets are not overwritten unless asked.
  CHECK_THROWS_AS(DatasetWriter(tmp / "empty", schema), Error);
  int64_t v = 42;
  {
    WriterOptions opt;
    opt.overwrite = true;
    DatasetWriter w(tmp / "empty", schema, opt);
    w.append(&v);
    w.finish();
  }
  Dataset replaced = Dataset::open(tmp / "empty");
  REQUIRE(replaced.size() == 1);
  int64_t got = 0;
  replaced.read(0, &got);
  CHECK(got == 42);

  // An abandoned writer publishes nothing and leaves no staging directory behind.
  {
    DatasetWriter w(tmp / "abandoned", schema);
    w.append(&v);
  }
  CHECK_FALSE(std::filesystem::exists(tmp / "abandoned"));
  for (auto& e : std::filesystem::directory_iterator(tmp.path()))
    CHECK(e.path().filename().string().find("partial") == std::string::npos);
}

TEST_CASE("a manifest that cannot be written says why (disk full)") {
  Manifest m;
  m.producer = "test";
  m.schema = Schema({{"a", DType::kU8, {}}});
  m.info = DatasetInfo::infer(m.schema);
  m.records_per_block = 1;
  // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
  try {
    m.write_to("/dev/full");
    FAIL("wrote to /dev/full");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIo);
    CHECK_MESSAGE(std::string(e.what()).find("No space left on device") != std::string::npos,
                  e.what());
  }
}
