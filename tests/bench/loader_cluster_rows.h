// bench_loader's cluster rows (issue 32), run with `bench_loader --nodes 1,2,4,8,16`: a cluster
// simulated on one machine, partition="nodes" against the rows plan (the baseline) in the same
// run:
//  - bytes: N node processes (fork), one rank each with a cache directory of its own, read one
//    shuffled epoch from nginx on loopback; the total bytes they fetched over the dataset's size;
//  - decode CPU: 8 rank processes of one node read one epoch of the local dataset; their total
//    CPU time (user + sys) over one process's reading the whole epoch at world size 1, and the
//    blocks they decoded over the dataset's blocks;
//  - shuffle quality: the mean deviation of the label share of each global batch (B x W rows)
//    on a label-sorted dataset, over a uniform shuffle's (order arithmetic only, no data read),
//    and of one rank's own batch.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../remote/servers.h"
#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "loader/loader.h"
#include "loader/plan.h"

namespace bench_cluster {

namespace fs = std::filesystem;
using namespace shardkit;
using namespace shardkit::loader;

constexpr uint32_t kTokens = 512;

// What a rank process reports: bytes fetched, blocks decoded.
struct RankFigures {
  uint64_t bytes = 0, decoded = 0;
};

inline LoaderOptions rank_options(Partition plan, uint32_t rank, uint32_t world,
                                  uint32_t per_node) {
  LoaderOptions o;
  o.batch_size = 32;
  o.seed = 1;
  o.rank = rank;
  o.world_size = world;
  o.ranks_per_node = per_node;
  o.partition = plan;
  o.threads = 1;
  o.int_output = IntOutput::kKeep;
  return o;
}

// Runs `ranks` processes, rank r reading one epoch of `location` with rank_options(plan, r,
// world, per_node) (and cache_dir work/cache-r, fresh, for a remote dataset). Returns their
// figures and adds their CPU seconds to *cpu.
inline std::vector<RankFigures> run_ranks(const std::string& location, Partition plan,
                                          uint32_t world, uint32_t per_node, const fs::path& work,
                                          double* cpu) {
  rusage before{}, after{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  std::vector<pid_t> pids;
  for (uint32_t r = 0; r < world; ++r) {
    const fs::path cache = work / ("cache-" + std::to_string(r));
    fs::remove_all(cache);
    fs::create_directories(cache);
    const pid_t pid = ::fork();
    if (pid == 0) {
      RankFigures f;
      try {
        LoaderOptions o = rank_options(plan, r, world, per_node);
        o.source.cache_dir = cache.string();
        Loader loader(location, o);
        while (loader.next()) {
        }
        f.bytes = loader.dataset().io_stats().bytes_fetched;
        f.decoded = loader.stats().blocks_decoded;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %u: %s\n", r, e.what());
        ::_exit(1);
      }
      std::ofstream(work / ("figures-" + std::to_string(r))) << f.bytes << ' ' << f.decoded;
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::printf("FAILED: a rank process\n");
  }
  ::getrusage(RUSAGE_CHILDREN, &after);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  *cpu += seconds(after.ru_utime) - seconds(before.ru_utime) + seconds(after.ru_stime) -
          seconds(before.ru_stime);
  std::vector<RankFigures> out(world);
  for (uint32_t r = 0; r < world; ++r)
    std::ifstream(work / ("figures-" + std::to_string(r))) >> out[r].bytes >> out[r].decoded;
  return out;
}

inline uint64_t directory_bytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) total += fs::file_size(e.path());
  return total;
}

// `samples` rows of 512 Zipf-like uint16 tokens, in blocks of 16 KiB (32 rows).
inline void write_dataset(const fs::path& dir, uint64_t samples) {
  fs::remove_all(dir);
  std::mt19937_64 rng(7);
  WriterOptions wo;
  wo.threads = 2;
  wo.block_bytes = 16 << 10;
  DatasetWriter w(dir, Schema({{"input_ids", DType::kU16, {kTokens}}}), wo);
  std::vector<uint16_t> row(kTokens);
  for (uint64_t i = 0; i < samples; ++i) {
    for (auto& id : row)
      id = static_cast<uint16_t>(
          1000 + std::min(29000.0, std::pow(30000.0, std::uniform_real_distribution<>(0, 1)(rng))));
    w.append(reinterpret_cast<const unsigned char*>(row.data()));
  }
  w.finish();
}

inline void bytes_rows(const fs::path& work, const fs::path& ds, const std::vector<uint32_t>& ns) {
  const fs::path www = work / "www-cluster";
  fs::remove_all(www);
  fs::create_directories(www);
  fs::copy(ds, www / "ds");
  shardkit::testing::Nginx nginx(www, work / "nginx-cluster");
  const double size = double(directory_bytes(ds));
  std::printf(
      "\n== Cluster: bytes fetched per epoch, N node processes (one rank each, a cache each) "
      "over nginx, dataset %.1f MB ==\n",
      size / 1e6);
  for (uint32_t n : ns) {
    double total[2] = {0, 0}, cpu = 0;
    for (Partition plan : {Partition::kNodes, Partition::kRows}) {
      for (const RankFigures& f : run_ranks(nginx.url("ds"), plan, n, 1, work, &cpu))
        total[plan == Partition::kRows] += double(f.bytes);
    }
    std::printf(
        "cluster bytes, %2u nodes: partition=nodes %.3fx the dataset, rows %.3fx   RATIO "
        "nodes/dataset: %.3f   [goal <= 1.10]\n",
        n, total[0] / size, total[1] / size, total[0] / size);
  }
}

inline void decode_rows(const fs::path& work, const fs::path& ds) {
  const uint64_t blocks = Dataset::open(ds).block_count();
  std::printf(
      "\n== Cluster: decode CPU, world size 8 on one node (8 rank processes, local dataset, "
      "best of 3) ==\n");
  double one = 1e30, best[2] = {1e30, 1e30};
  uint64_t decoded[2] = {0, 0}, one_decoded = 0;
  for (int round = 0; round < 3; ++round) {
    double cpu = 0;
    one_decoded = run_ranks(ds.string(), Partition::kRows, 1, 1, work, &cpu)[0].decoded;
    one = std::min(one, cpu);
    for (Partition plan : {Partition::kNodes, Partition::kRows}) {
      cpu = 0;
      uint64_t sum = 0;
      for (const RankFigures& f : run_ranks(ds.string(), plan, 8, 8, work, &cpu)) sum += f.decoded;
      const int i = plan == Partition::kRows;
      best[i] = std::min(best[i], cpu);
      decoded[i] = sum;
    }
  }
  std::printf("one process, world size 1: %.3f s CPU, %.2fx the dataset's blocks decoded\n", one,
              double(one_decoded) / double(blocks));
  std::printf(
      "decode CPU, world size 8: partition=nodes %.3f s (%.2fx the blocks), rows %.3f s (%.2fx)"
      "   RATIO nodes / one process: %.2f, rows / one process: %.2f   [goal <= 1.30]\n",
      best[0], double(decoded[0]) / double(blocks), best[1], double(decoded[1]) / double(blocks),
      best[0] / one, best[1] / one);
}

// Mean |share of label 1 - 1/2| over consecutive runs of `batch` positions of `records`.
inline double deviation(const std::vector<uint64_t>& records, uint64_t n, uint64_t batch) {
  double sum = 0;
  uint64_t runs = 0;
  for (size_t i = 0; i + batch <= records.size(); i += batch, ++runs) {
    uint64_t ones = 0;
    for (size_t j = i; j < i + batch; ++j) ones += records[j] < n / 2;
    sum += std::abs(double(ones) / double(batch) - 0.5);
  }
  return sum / double(runs);
}

inline void quality_rows() {
  // The label-sorted dataset of the loader's quality rows: 2^20 records, 170 to a 4 KiB block.
  const uint64_t n = 1 << 20;
  const Geometry geo(170, {n});
  const uint32_t world = 8;
  const uint64_t batch = 32, global = batch * world;
  std::printf(
      "\n== Cluster: shuffle quality of the global batch (%u ranks x %llu = %llu rows), %llu "
      "records sorted by label, %llu blocks, 6 epochs ==\n",
      world, (unsigned long long)batch, (unsigned long long)global, (unsigned long long)n,
      (unsigned long long)geo.blocks());
  std::printf(
      "  window blocks | rows: global / ideal | nodes: global / ideal | nodes: a rank's batch "
      "/ ideal\n");
  double at512 = 0;
  for (uint64_t k : {256, 512, 1024}) {
    double dev[2] = {}, rank_dev = 0, ideal = 0, rank_ideal = 0;
    for (uint64_t epoch = 0; epoch < 6; ++epoch) {
      for (Partition plan : {Partition::kRows, Partition::kNodes}) {
        LoaderOptions o = rank_options(plan, 0, 1, 1);
        o.window_blocks = k;
        o.batch_size = n;
        // The global batches are runs of B x W positions of the order, whatever the topology.
        const EpochPlan order(geo, 1, o, epoch, 0);
        const std::vector<uint64_t> all = order.records(0);
        dev[plan == Partition::kNodes] += deviation(all, n, global);
        if (plan == Partition::kRows) {
          std::vector<uint64_t> shuffled = all;
          std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(epoch + 100));
          ideal += deviation(shuffled, n, global);
          rank_ideal += deviation(shuffled, n, batch);
          continue;
        }
        // Rank 0's own batches of a run at 8 ranks.
        o = rank_options(plan, 0, world, 1);
        o.window_blocks = k;
        const EpochPlan rank0(geo, 1, o, epoch, 0);
        std::vector<uint64_t> mine;
        for (uint64_t b = 0; b < rank0.batches(); ++b) {
          const std::vector<uint64_t> r = rank0.records(b);
          mine.insert(mine.end(), r.begin(), r.end());
        }
        rank_dev += deviation(mine, n, batch);
      }
    }
    std::printf("  %13llu | %20.2f | %21.2f | %30.2f\n", (unsigned long long)k, dev[0] / ideal,
                dev[1] / ideal, rank_dev / rank_ideal);
    if (k == 512) at512 = dev[1] / ideal;
  }
  std::printf(
      "RATIO partition=nodes global batch / ideal, window 512 blocks: %.2f   [goal <= 1.25]\n",
      at512);
}

inline void run(const fs::path& work, uint64_t samples, const std::vector<uint32_t>& nodes) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const fs::path ds = work / "cluster_ds";
  write_dataset(ds, samples);
  {
    const Dataset d = Dataset::open(ds);
    std::printf("cluster dataset: %llu samples x %u tokens, %llu blocks, %zu shards, %.1f MB\n",
                (unsigned long long)d.size(), kTokens, (unsigned long long)d.block_count(),
                d.manifest().shards.size(), double(directory_bytes(ds)) / 1e6);
  }
  bytes_rows(work, ds, nodes);
  decode_rows(work, ds);
  quality_rows();
}

}  // namespace bench_cluster
