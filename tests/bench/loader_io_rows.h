// bench_loader's I/O rows (issues 13 and 17), also run alone with `bench_loader --io-only`:
//  - pread vs mmap, cold and hot page cache: samples/s and peak RSS (anonymous and file) per
//    shuffled epoch;
//  - one shuffled epoch over nginx on loopback and over s3rver against the same dataset on
//    local disk: samples/s, ratio to local, bytes fetched per epoch (range reads) beside a
//    whole-shard download, and time to first batch for 10,000 remote shards.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "../remote/servers.h"
#include "core/dataset.h"
#include "loader/loader.h"

namespace bench_io {

namespace fs = std::filesystem;
using namespace shardkit;
using namespace shardkit::loader;
using Clock = std::chrono::steady_clock;

inline size_t status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()));
  return 0;
}

// Drops the dataset's pages from the page cache (clean pages: no privilege needed).
inline void evict_page_cache(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const int fd = ::open(e.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

struct EpochFigures {
  double samples_per_s = 0;
  double seconds = 0;
  size_t peak_anon_kib = 0, peak_file_kib = 0;  // growth over the process before the loader
  IoStats io;
};

inline EpochFigures one_epoch(const std::string& location, LoaderOptions o, uint64_t epoch = 0) {
  const size_t anon0 = status_kib("RssAnon:"), file0 = status_kib("RssFile:");
  EpochFigures f;
  const auto t0 = Clock::now();
  uint64_t samples = 0, batches = 0;
  {
    Loader loader(location, o);
    loader.set_epoch(epoch);
    while (auto b = loader.next()) {
      samples += b->size();
      if (++batches % 4 == 0) {
        f.peak_anon_kib = std::max(
            f.peak_anon_kib, status_kib("RssAnon:") - std::min(anon0, status_kib("RssAnon:")));
        f.peak_file_kib = std::max(
            f.peak_file_kib, status_kib("RssFile:") - std::min(file0, status_kib("RssFile:")));
      }
    }
    f.io = loader.dataset().io_stats();
  }
  f.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  f.samples_per_s = double(samples) / f.seconds;
  return f;
}

// The server's own ceiling for one epoch's reads: `requests` range GETs of equal size spread
// over the shard (as many and as large as the loader's block reads), `parallel` in flight, by
// one curl process (libcurl's multi interface), without decoding. Returns the seconds taken.
inline double server_ceiling(const fs::path& work, const std::string& shard_url, uint64_t bytes,
                             uint64_t requests, unsigned parallel, bool s3) {
  const fs::path config = work / "ceiling.curl";
  {
    std::ofstream out(config);
    const uint64_t chunk = bytes / requests;
    for (uint64_t i = 0; i < requests; ++i) {
      const uint64_t at = (i * 97 % requests) * chunk;  // not in file order
      out << "url = \"" << shard_url << "\"\nrange = \"" << at << "-" << at + chunk - 1
          << "\"\noutput = \"/dev/null\"\n";
      if (s3)
        out << "aws-sigv4 = \"aws:amz:us-east-1:s3\"\nuser = \"S3RVER:S3RVER\"\n"
               "header = \"x-amz-content-sha256: UNSIGNED-PAYLOAD\"\n";
      if (i + 1 < requests) out << "next\n";
    }
  }
  const auto t0 = Clock::now();
  const std::string cmd = "curl -sS -f --parallel --parallel-max " + std::to_string(parallel) +
                          " -K " + config.string() + " 2>&1";
  if (std::system(cmd.c_str()) != 0) std::printf("FAILED: %s\n", cmd.c_str());
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline void run(const fs::path& work, const fs::path& ds_dir, uint64_t shuffle_seed) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines in order with the servers' and curl's
  const Dataset ds = Dataset::open(ds_dir);
  const double dataset_bytes = double(ds.manifest().bytes_on_disk());
  const size_t budget = 64u << 20;
  LoaderOptions o;
  o.batch_size = 256;
  o.seed = shuffle_seed;
  o.threads = 2;
  o.memory_budget = budget;
  o.int_output = IntOutput::kKeep;

  std::printf(
      "\n== I/O: pread vs mmap (one shuffled epoch, 2 threads, memory_budget %zu MiB, "
      "dataset %.1f MB) ==\n",
      budget >> 20, dataset_bytes / 1e6);
  std::printf("%-6s %-5s %12s %14s %14s\n", "mode", "cache", "samples/s", "peak anon MiB",
              "peak file MiB");
  double sps[2][2] = {};
  for (int cold = 1; cold >= 0; --cold) {
    for (ReadMode mode : {ReadMode::kPread, ReadMode::kMmap}) {
      LoaderOptions m = o;
      m.source.read_mode = mode;
      if (cold)
        evict_page_cache(ds_dir);
      else
        one_epoch(ds_dir.string(), m);  // warm the page cache
      const EpochFigures f = one_epoch(ds_dir.string(), m);
      sps[mode == ReadMode::kMmap][cold] = f.samples_per_s;
      std::printf("%-6s %-5s %12.0f %14.1f %14.1f\n", read_mode_name(mode), cold ? "cold" : "hot",
                  f.samples_per_s, f.peak_anon_kib / 1024.0, f.peak_file_kib / 1024.0);
    }
  }
  std::printf("RATIO pread / mmap samples/s: cold %.2f, hot %.2f\n", sps[0][1] / sps[1][1],
              sps[0][0] / sps[1][0]);

  // Remote: nginx and s3rver on loopback, the same dataset.
  std::printf("\n== Remote: one shuffled epoch over loopback vs local disk (hot page cache) ==\n");
  const fs::path www = work / "www";
  fs::remove_all(www);
  fs::create_directories(www);
  fs::copy(ds_dir, www / "ds");
  shardkit::testing::Nginx nginx(www, work / "nginx");
  const fs::path s3data = work / "s3data";
  fs::remove_all(s3data);
  shardkit::testing::S3rver s3(s3data);
  auto curl = [&](const std::string& args) {
    const std::string cmd = shardkit::testing::s3rver_curl(args) + " > /dev/null";
    if (std::system(cmd.c_str()) != 0) std::printf("FAILED: %s\n", cmd.c_str());
  };
  curl("-X PUT " + s3.endpoint() + "/bench");
  for (const auto& e : fs::directory_iterator(ds_dir))
    curl("-T " + e.path().string() + " " + s3.endpoint() + "/bench/ds/" +
         e.path().filename().string());
  ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
  ::setenv("AWS_ENDPOINT_URL", s3.endpoint().c_str(), 1);

  one_epoch(ds_dir.string(), o);  // hot page cache for the local row
  const EpochFigures local = one_epoch(ds_dir.string(), o, 1);
  std::printf("%-22s %12s %9s %14s %10s %9s\n", "source", "samples/s", "vs local", "fetched/size",
              "requests", "retries");
  std::printf("%-22s %12.0f %9.2f %14s %10s %9s\n", "local disk (pread)", local.samples_per_s, 1.0,
              "-", "-", "-");
  for (const auto& [name, url] :
       {std::pair<std::string, std::string>{"nginx (http, loopback)", nginx.url("ds")},
        {"s3rver (s3, loopback)", std::string("s3://bench/ds")}}) {
    const EpochFigures f = one_epoch(url, o, 1);
    // What the server itself delivers for the same number of reads of the same size, as many
    // in flight as the loader keeps (remote_concurrency): the loader cannot beat it.
    const bool over_s3 = url.rfind("s3://", 0) == 0;
    const ShardEntry& shard = ds.manifest().shards.front();
    const uint64_t blocks = ds.block_count();
    const double ceiling_s = server_ceiling(
        work, (over_s3 ? s3.endpoint() + "/bench/ds/" : nginx.url("ds/")) + shard.name, shard.bytes,
        blocks, o.source.remote_concurrency, over_s3);
    std::printf(
        "%s by curl alone: %llu range GETs of %.0f KB, %u in flight: %.3f s = %.1f MB/s, "
        "%.0f requests/s (the loader's epoch: %.3f s = %.1f MB/s)\n",
        name.c_str(), (unsigned long long)blocks, double(shard.bytes) / double(blocks) / 1e3,
        o.source.remote_concurrency, ceiling_s, double(shard.bytes) / 1e6 / ceiling_s,
        double(blocks) / ceiling_s, f.seconds, double(f.io.bytes_fetched) / 1e6 / f.seconds);
    std::printf("%-22s %12.0f %9.2f %14.3f %10llu %9llu\n", name.c_str(), f.samples_per_s,
                f.samples_per_s / local.samples_per_s, double(f.io.bytes_fetched) / dataset_bytes,
                (unsigned long long)f.io.requests, (unsigned long long)f.io.retries);
    std::printf(
        "RATIO %s / local disk: %.2f   [goal >= 0.70]; bytes fetched %.3fx the dataset "
        "[goal <= 1.05x]; peak RSS anon %.1f MiB, file %.1f MiB\n",
        name.c_str(), f.samples_per_s / local.samples_per_s,
        double(f.io.bytes_fetched) / dataset_bytes, f.peak_anon_kib / 1024.0,
        f.peak_file_kib / 1024.0);
  }
  // The whole-shard anchor: what a reader that downloads every shard it touches fetches before
  // its first batch, beside what range reads fetched for it.
  {
    LoaderOptions first = o;
    Loader loader(nginx.url("ds"), first);
    const auto t0 = Clock::now();
    auto b = loader.next();
    const double ttfb = std::chrono::duration<double>(Clock::now() - t0).count();
    std::set<uint32_t> shards;
    for (uint64_t r : b->records) shards.insert(loader.dataset().locate(r).shard);
    double whole = 0;
    for (uint32_t s : shards) whole += double(loader.dataset().manifest().shards[s].bytes);
    std::printf(
        "first batch over nginx: %.3f s, %.2f MB fetched by range reads (two windows "
        "asked ahead); downloading the %zu whole shards its rows sit in: %.2f MB\n",
        ttfb, loader.dataset().io_stats().bytes_fetched / 1e6, shards.size(), whole / 1e6);
    const auto t1 = Clock::now();
    std::string cmd = "curl -sS -f";
    for (const auto& e : fs::directory_iterator(ds_dir))
      cmd += " -o /dev/null " + nginx.url("ds/" + e.path().filename().string());
    std::system(cmd.c_str());
    std::printf("whole-shard download of the dataset (curl, one connection): %.2f s, %.1f MB/s\n",
                std::chrono::duration<double>(Clock::now() - t1).count(),
                dataset_bytes / 1e6 / std::chrono::duration<double>(Clock::now() - t1).count());
  }
  ::unsetenv("AWS_ENDPOINT_URL");
}

// Time to first batch, opening 10,000 remote shards' dataset over nginx.
inline void many_shards_ttfb(const fs::path& work, const fs::path& sdir, uint64_t batch) {
  const fs::path www = work / "www-many";
  fs::remove_all(www);
  fs::create_directories(www);
  fs::copy(sdir, www / "many");
  shardkit::testing::Nginx nginx(www, work / "nginx-many");
  std::vector<double> times;
  size_t shards = 0;
  for (int trial = 0; trial < 5; ++trial) {
    const auto t0 = Clock::now();
    LoaderOptions o;
    o.batch_size = batch;
    o.seed = static_cast<uint64_t>(trial);
    Loader loader(nginx.url("many"), o);
    auto b = loader.next();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    shards = loader.dataset().manifest().shards.size();
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "remote time to first batch (nginx, open + first shuffled batch of %llu), %zu shards: "
      "median %.3f s, max %.3f s   [goal <= 1 s]\n",
      (unsigned long long)batch, shards, times[times.size() / 2], times.back());
}

}  // namespace bench_io
