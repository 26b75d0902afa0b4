// The converter's ordered pipeline on shardkit's own WorkerPool against oneTBB's
// parallel_pipeline (Debian libtbb-dev), on the same work: read batches of documents in order,
// tokenize them in parallel, pack the ids into fixed lm rows in order, compress full blocks in
// parallel, and consume the blocks in order. Both variants must yield the same blocks (a chained
// XXH3 over them); the table gives wall and CPU seconds and the TBB / pool ratio.
//
//   build/tests/bench/bench_pipelines TOKENIZER TEXT_FILE [max_len=512] [runs=3]
#include <time.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/block_codec.h"
#include "core/schema.h"
#include "core/worker_pool.h"
#include "tokenizer/tokenizer.h"

using namespace shardkit;
using Clock = std::chrono::steady_clock;

namespace {

// The converter's batch limits (shardify/convert.cc) and writer defaults.
constexpr size_t kBatchDocs = 512;
constexpr size_t kBatchTextBytes = 256 * 1024;
constexpr size_t kBlockBytes = 256 * 1024;

double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Batch {
  size_t first = 0, end = 0;  // documents [first, end)
  std::vector<uint32_t> ids;  // every document's ids, each followed by the separator
};

struct Work {
  const tok::Tokenizer& tokenizer;
  const std::vector<std::string>& docs;
  uint32_t max_len, separator;
  Schema schema;
  size_t rows_per_block;

  // Hands out the next batch of documents; false at the end.
  bool next(size_t& cursor, Batch& batch) const {
    if (cursor >= docs.size()) return false;
    batch.first = cursor;
    size_t bytes = 0;
    while (cursor < docs.size() && cursor - batch.first < kBatchDocs && bytes < kBatchTextBytes)
      bytes += docs[cursor++].size();
    batch.end = cursor;
    return true;
  }
  void tokenize(Batch& batch) const {
    std::vector<uint32_t> ids;
    for (size_t i = batch.first; i < batch.end; ++i) {
      ids.clear();
      tokenizer.encode_ids(docs[i], ids);
      batch.ids.insert(batch.ids.end(), ids.begin(), ids.end());
      batch.ids.push_back(separator);
    }
  }
};

// Packs ids into rows of max_len u32 and cuts full blocks, in input order.
class Packer {
 public:
  explicit Packer(const Work& w) : w_(w) {}
  void add(const std::vector<uint32_t>& ids, std::vector<std::vector<unsigned char>>& blocks) {
    for (uint32_t id : ids) {
      row_.push_back(id);
      if (row_.size() == w_.max_len) end_row(blocks);
    }
  }
  void finish(std::vector<std::vector<unsigned char>>& blocks) {
    if (!row_.empty()) {
      row_.resize(w_.max_len, 0);
      end_row(blocks);
    }
    if (!block_.empty()) blocks.push_back(std::move(block_));
  }

 private:
  void end_row(std::vector<std::vector<unsigned char>>& blocks) {
    const auto* p = reinterpret_cast<const unsigned char*>(row_.data());
    block_.insert(block_.end(), p, p + row_.size() * sizeof(uint32_t));
    row_.clear();
    if (block_.size() == w_.rows_per_block * w_.max_len * sizeof(uint32_t))
      blocks.push_back(std::move(block_)), block_.clear();
  }
  const Work& w_;
  std::vector<uint32_t> row_;
  std::vector<unsigned char> block_;
};

EncodedBlock compress(const Work& w, const std::vector<unsigned char>& block) {
  thread_local std::unique_ptr<BlockEncoder> encoder;
  if (!encoder) encoder = std::make_unique<BlockEncoder>(w.schema, format::BlockFilter::kNone, 3);
  return encoder->encode(block.data(), block.size() / w.schema.record_size());
}

struct Sink {
  uint64_t hash = 0, bytes = 0, blocks = 0;
  void take(const EncodedBlock& b) {
    hash = XXH3_64bits_withSeed(&b.checksum, sizeof b.checksum, hash);
    bytes += b.bytes.size();
    ++blocks;
  }
};

// As shardify does it: one pool; tokenize futures and block futures consumed in submit order.
Sink run_pool(const Work& w, unsigned threads) {
  WorkerPool pool(threads);
  Packer packer(w);
  Sink sink;
  std::deque<std::future<EncodedBlock>> encoding;
  const size_t max_blocks = 2 * size_t{pool.threads()};
  auto submit_blocks = [&](std::vector<std::vector<unsigned char>>& blocks) {
    for (auto& b : blocks) {
      encoding.push_back(pool.submit([&w, b = std::move(b)] { return compress(w, b); }));
      while (encoding.size() > max_blocks || (pool.runs_inline() && !encoding.empty())) {
        sink.take(pool.get(encoding.front()));
        encoding.pop_front();
      }
    }
    blocks.clear();
  };
  std::vector<std::vector<unsigned char>> blocks;
  auto consume = [&](Batch batch) {
    packer.add(batch.ids, blocks);
    submit_blocks(blocks);
  };
  std::deque<std::future<Batch>> tokenizing;
  const size_t max_batches = 2 * size_t{pool.threads()} + 2;
  size_t cursor = 0;
  for (Batch batch; w.next(cursor, batch); batch = Batch{}) {
    tokenizing.push_back(pool.submit([&w, batch = std::move(batch)]() mutable {
      w.tokenize(batch);
      return std::move(batch);
    }));
    while (tokenizing.size() > max_batches || (pool.runs_inline() && !tokenizing.empty())) {
      consume(pool.get(tokenizing.front()));
      tokenizing.pop_front();
    }
  }
  for (; !tokenizing.empty(); tokenizing.pop_front()) consume(pool.get(tokenizing.front()));
  packer.finish(blocks);
  submit_blocks(blocks);
  for (; !encoding.empty(); encoding.pop_front()) sink.take(pool.get(encoding.front()));
  return sink;
}

// The same stages as TBB filters: serial_in_order input, parallel tokenize, serial_in_order
// pack, parallel compress of the blocks a batch completed, serial_in_order sink.
Sink run_tbb(const Work& w, unsigned threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  Packer packer(w);
  Sink sink;
  size_t cursor = 0;
  bool finished = false;
  using Blocks = std::vector<std::vector<unsigned char>>;
  using Encoded = std::vector<EncodedBlock>;
  tbb::parallel_pipeline(
      2 * threads + 2,
      tbb::make_filter<void, std::shared_ptr<Batch>>(
          tbb::filter_mode::serial_in_order,
          [&](tbb::flow_control& fc) -> std::shared_ptr<Batch> {
            auto batch = std::make_shared<Batch>();
            if (!w.next(cursor, *batch)) {
              if (finished) {
                fc.stop();
                return nullptr;
              }
              finished = true;  // one empty batch flushes the packer
            }
            return batch;
          }) &
          tbb::make_filter<std::shared_ptr<Batch>, std::shared_ptr<Batch>>(
              tbb::filter_mode::parallel,
              [&](std::shared_ptr<Batch> batch) {
                w.tokenize(*batch);
                return batch;
              }) &
          tbb::make_filter<std::shared_ptr<Batch>, std::shared_ptr<Blocks>>(
              tbb::filter_mode::serial_in_order,
              [&](std::shared_ptr<Batch> batch) {
                auto blocks = std::make_shared<Blocks>();
                packer.add(batch->ids, *blocks);
                if (batch->first == batch->end) packer.finish(*blocks);
                return blocks;
              }) &
          tbb::make_filter<std::shared_ptr<Blocks>, std::shared_ptr<Encoded>>(
              tbb::filter_mode::parallel,
              [&](std::shared_ptr<Blocks> blocks) {
                auto encoded = std::make_shared<Encoded>();
                for (const auto& b : *blocks) encoded->push_back(compress(w, b));
                return encoded;
              }) &
          tbb::make_filter<std::shared_ptr<Encoded>, void>(tbb::filter_mode::serial_in_order,
                                                           [&](std::shared_ptr<Encoded> encoded) {
                                                             for (const EncodedBlock& b : *encoded)
                                                               sink.take(b);
                                                           }));
  return sink;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER TEXT_FILE [max_len=512] [runs=3]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> docs;
  uint64_t bytes = 0;
  {
    std::ifstream in(argv[2]);
    for (std::string line; std::getline(in, line);) {
      bytes += line.size() + 1;
      if (line.find_first_not_of(" \t\r") != std::string::npos) docs.push_back(std::move(line));
    }
  }
  const uint32_t max_len = argc > 3 ? std::stoul(argv[3]) : 512;
  const int runs = argc > 4 ? std::stoi(argv[4]) : 3;
  const auto tokenizer = tok::Tokenizer::from_file(argv[1]);
  Schema schema = Schema::parse("input_ids:u32[" + std::to_string(max_len) + "]");
  const Work work{*tokenizer, docs,   max_len,
                  0,          schema, std::max<size_t>(1, kBlockBytes / schema.record_size())};
  std::printf("input %s: %.2f MB, %zu documents; lm rows of %u u32 ids; best of %d runs\n\n",
              argv[2], bytes / 1e6, docs.size(), max_len, runs);
  std::printf("%-10s %8s %10s %10s %10s %10s %10s\n", "threads", "", "pool s", "tbb s", "pool cpu",
              "tbb cpu", "tbb/pool");
  for (unsigned threads : {1u, 2u}) {
    double wall[2] = {1e30, 1e30}, cpu[2] = {1e30, 1e30};
    Sink out[2];
    for (int r = 0; r < runs; ++r)
      for (int v = 0; v < 2; ++v) {
        const auto t0 = Clock::now();
        const double c0 = cpu_now();
        out[v] = v == 0 ? run_pool(work, threads) : run_tbb(work, threads);
        wall[v] = std::min(wall[v], std::chrono::duration<double>(Clock::now() - t0).count());
        cpu[v] = std::min(cpu[v], cpu_now() - c0);
      }
    if (out[0].hash != out[1].hash || out[0].blocks != out[1].blocks) {
      std::fprintf(stderr, "the two pipelines produced different blocks\n");
      return 1;
    }
    std::printf("%-10u %8s %10.3f %10.3f %10.3f %10.3f %9.2fx\n", threads, "", wall[0], wall[1],
                cpu[0], cpu[1], wall[1] / wall[0]);
  }
  std::printf("\n(tbb/pool < 1: TBB is faster; MB/s = %.2f MB / seconds)\n", bytes / 1e6);
  return 0;
}
