// Core read path: block decode throughput and random record reads, printed beside the same
// machine's plain zstd decompression and memcpy of the same bytes, in one run.
//
//   build/tests/bench/bench_core_read [records=200000] [seq_len=512]
//
// Data: synthetic token records (Zipf-distributed ids over a 30,522-token vocabulary, lengths
// uniform in [64, seq_len], zero padding), so the figures do not depend on files outside the repo.
#include <xxhash.h>
#include <zstd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/shard_file.h"

using namespace shardkit;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<unsigned char> make_records(size_t n, uint32_t seq_len, size_t record_size) {
  std::mt19937_64 rng(1);
  // Zipf(1.1) over the vocabulary via an inverse-CDF table.
  const int vocab = 30522;
  std::vector<double> cdf(vocab);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) cdf[i] = (sum += 1.0 / std::pow(i + 1, 1.1));
  std::uniform_real_distribution<double> u(0, sum);
  std::vector<unsigned char> data(n * record_size, 0);
  for (size_t r = 0; r < n; ++r) {
    uint16_t len = static_cast<uint16_t>(64 + rng() % (seq_len - 63));
    auto* ids = reinterpret_cast<uint16_t*>(data.data() + r * record_size);
    for (uint16_t i = 0; i < len; ++i)
      ids[i] =
          static_cast<uint16_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
    std::memcpy(data.data() + r * record_size + seq_len * 2, &len, 2);
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::stoull(argv[1]) : 200000;
  const uint32_t seq_len = argc > 2 ? static_cast<uint32_t>(std::stoul(argv[2])) : 512;
  const Schema schema({{"input_ids", DType::kU16, {seq_len}}, {"length", DType::kU16, {}}});
  const size_t rs = schema.record_size();
  std::printf("records %zu x %zu bytes = %.1f MB raw\n", n, rs, n * rs / 1e6);
  const auto data = make_records(n, seq_len, rs);
  const fs::path root =
      fs::temp_directory_path() / ("shardkit-bench-core-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);

  // memcpy of the same bytes: the ceiling for anything that produces them.
  std::vector<unsigned char> sink(data.size());
  auto t0 = Clock::now();
  for (int rep = 0; rep < 3; ++rep) std::memcpy(sink.data(), data.data(), data.size());
  const double memcpy_gbs = 3 * data.size() / seconds_since(t0) / 1e9;
  std::printf("baseline memcpy: %.2f GB/s\n\n", memcpy_gbs);

  std::printf("%-8s %-7s %7s %9s %10s %10s %8s %8s %12s %12s\n", "block", "filter", "ratio",
              "write", "decode", "zstd-only", "ours/zstd", "ours/mcpy", "rand-hot/s",
              "rand-cold/s");
  for (uint32_t block_kib : {64u, 256u, 1024u}) {
    for (auto filter : {format::BlockFilter::kNone, format::BlockFilter::kBytePlanes}) {
      const fs::path dir =
          root / ("b" + std::to_string(block_kib) + "f" + std::to_string(int(filter)));
      WriterOptions opt;
      opt.block_bytes = block_kib * 1024;
      opt.filter = filter;
      opt.threads = 1;
      t0 = Clock::now();
      {
        DatasetWriter w(dir, schema, opt);
        w.append_many(data.data(), n);
        w.finish();
      }
      const double write_mbs = data.size() / seconds_since(t0) / 1e6;
      Dataset ds = Dataset::open(dir, {.cache_bytes = 0});
      const double ratio = double(data.size()) / ds.manifest().bytes_on_disk();

      // Every block through the library: checksum, zstd, un-filter (no cache reuse).
      BlockDecoder decoder;
      std::vector<unsigned char> out(size_t{ds.records_per_block()} * rs);
      t0 = Clock::now();
      size_t bytes = 0;
      for (uint64_t b = 0; b < ds.block_count(); ++b) {
        BlockRef ref = ds.block_ref(b);
        ds.shard(ref.shard).read_block(ref.block_in_shard, decoder, out.data());
        bytes += size_t{ref.records} * rs;
      }
      const double ours = bytes / seconds_since(t0) / 1e9;

      // The same stored frames through plain ZSTD_decompress (no checksum, no filter).
      ZSTD_DCtx* dctx = ZSTD_createDCtx();
      t0 = Clock::now();
      for (uint64_t b = 0; b < ds.block_count(); ++b) {
        BlockRef ref = ds.block_ref(b);
        const ShardFile& s = ds.shard(ref.shard);
        auto stored = s.stored_block(ref.block_in_shard);
        if (s.index_entry(ref.block_in_shard).encoding == format::BlockEncoding::kZstd)
          ZSTD_decompressDCtx(dctx, out.data(), out.size(), stored.data(), stored.size());
        else
          std::memcpy(out.data(), stored.data(), stored.size());
      }
      const double zstd_only = bytes / seconds_since(t0) / 1e9;
      ZSTD_freeDCtx(dctx);

      // Random record reads: hot (cache holds everything) and cold (cache of one block).
      std::mt19937_64 rng(2);
      std::vector<unsigned char> rec(rs);
      Dataset hot = Dataset::open(dir, {.cache_bytes = size_t{1} << 34});
      for (uint64_t b = 0; b < hot.block_count(); ++b) hot.block(b);
      const int hot_reads = 1000000;
      t0 = Clock::now();
      for (int i = 0; i < hot_reads; ++i) hot.read(rng() % n, rec.data());
      const double hot_rate = hot_reads / seconds_since(t0);
      Dataset cold = Dataset::open(dir, {.cache_bytes = out.size()});
      const int cold_reads = 3000;
      t0 = Clock::now();
      for (int i = 0; i < cold_reads; ++i) cold.read(rng() % n, rec.data());
      const double cold_rate = cold_reads / seconds_since(t0);

      std::printf("%4uKiB  %-7s %6.2fx %6.0fMB/s %6.2fGB/s %7.2fGB/s %8.2f %9.2f %12.0f %12.0f\n",
                  block_kib, filter == format::BlockFilter::kNone ? "none" : "planes", ratio,
                  write_mbs, ours, zstd_only, ours / zstd_only, ours / memcpy_gbs, hot_rate,
                  cold_rate);
    }
  }
  fs::remove_all(root);
  return 0;
}
