#include "core/dataset_writer.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "core/block_codec.h"
#include "core/error.h"
#include "core/shard_file_writer.h"
#include "core/staged_directory.h"
#include "core/version.h"

namespace shardkit {
namespace fs = std::filesystem;

std::string default_producer() { return std::string("shardkit ") + kVersion; }

namespace {

// A fixed set of threads, each with its own encoder, taking blocks in FIFO order. Results come
// back through futures that the writer consumes in submission order, so output order never
// depends on which thread finished first.
class EncodePool {
 public:
  EncodePool(const Schema& schema, format::BlockFilter filter, int level, unsigned threads) {
    for (unsigned i = 0; i < threads; ++i)
      workers_.emplace_back([this, &schema, filter, level] {
        BlockEncoder encoder(schema, filter, level);
        for (;;) {
          Job job;
          {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            job = std::move(jobs_.front());
            jobs_.pop_front();
          }
          try {
            job.result.set_value(encoder.encode(job.records.data(), job.count));
          } catch (...) {
            job.result.set_exception(std::current_exception());
          }
        }
      });
  }
  ~EncodePool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  std::future<EncodedBlock> submit(std::vector<unsigned char> records, size_t count) {
    Job job{std::move(records), count, {}};
    auto f = job.result.get_future();
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
    return f;
  }

 private:
  struct Job {
    std::vector<unsigned char> records;
    size_t count = 0;
    std::promise<EncodedBlock> result;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

struct DatasetWriter::Impl {
  Impl(fs::path dir, Schema s, WriterOptions o)
      : staged(std::move(dir), o.overwrite), schema(std::move(s)), options(std::move(o)) {
    if (options.producer.empty()) options.producer = default_producer();
    if (options.zstd_level < 1 || options.zstd_level > 22)
      throw Error(ErrorCode::kInvalidArgument, "", "zstd level must be in 1..22");
    records_per_block =
        static_cast<uint32_t>(std::max<size_t>(1, options.block_bytes / schema.record_size()));
    if (uint64_t{records_per_block} * schema.record_size() > format::kMaxBlockRawSize)
      throw Error(ErrorCode::kInvalidArgument, "", "block size is too large");
    if (options.threads > 1)
      pool =
          std::make_unique<EncodePool>(schema, options.filter, options.zstd_level, options.threads);
    else
      encoder = std::make_unique<BlockEncoder>(schema, options.filter, options.zstd_level);
    pending.reserve(size_t{records_per_block} * schema.record_size());
  }

  void flush_block() {
    if (pending_count == 0) return;
    size_t count = pending_count;
    pending_count = 0;
    if (pool) {
      in_flight.push_back({pool->submit(std::move(pending), count), static_cast<uint32_t>(count)});
      pending = {};
      pending.reserve(size_t{records_per_block} * schema.record_size());
      while (in_flight.size() > 2 * options.threads) drain_one();
    } else {
      store(encoder->encode(pending.data(), count), static_cast<uint32_t>(count));
      pending.clear();
    }
  }

  void drain_one() {
    auto [future, count] = std::move(in_flight.front());
    in_flight.pop_front();
    store(future.get(), count);
  }

  void store(const EncodedBlock& block, uint32_t count) {
    if (!shard) {
      char name[32];
      std::snprintf(name, sizeof name, "shard-%05zu.shard", manifest.shards.size());
      current_name = name;
      shard = std::make_unique<ShardFileWriter>(staged.staging() / current_name, schema,
                                                records_per_block, options.filter);
    }
    shard->add_block(block, count);
    // A short block ends its shard: only a shard's last block may be short.
    if (shard->bytes_written() >= options.shard_bytes || count < records_per_block) close_shard();
  }

  void close_shard() {
    if (!shard) return;
    ShardSummary s = shard->finish();
    shard.reset();
    manifest.shards.push_back({current_name, s.records, s.bytes, s.footer_checksum});
  }

  StagedDirectory staged;
  Schema schema;
  WriterOptions options;
  uint32_t records_per_block = 0;
  std::unique_ptr<EncodePool> pool;
  std::unique_ptr<BlockEncoder> encoder;
  std::deque<std::pair<std::future<EncodedBlock>, uint32_t>> in_flight;
  std::vector<unsigned char> pending;
  size_t pending_count = 0;
  uint64_t appended = 0;
  std::unique_ptr<ShardFileWriter> shard;
  std::string current_name;
  Manifest manifest;
  bool finished = false;
};

DatasetWriter::DatasetWriter(fs::path dir, Schema schema, WriterOptions options)
    : impl_(std::make_unique<Impl>(std::move(dir), std::move(schema), std::move(options))) {}

DatasetWriter::~DatasetWriter() {
  if (!impl_) return;
  // Abandoned: let in-flight encodes finish before the pool and staging go away.
  for (auto& [future, count] : impl_->in_flight)
    if (future.valid()) future.wait();
}

const Schema& DatasetWriter::schema() const { return impl_->schema; }
uint32_t DatasetWriter::records_per_block() const { return impl_->records_per_block; }
uint64_t DatasetWriter::records_appended() const { return impl_->appended; }

void DatasetWriter::append(const void* record) { append_many(record, 1); }

void DatasetWriter::append_many(const void* records, size_t count) {
  Impl& w = *impl_;
  if (w.finished) throw Error(ErrorCode::kInvalidArgument, "", "append after finish()");
  const size_t rs = w.schema.record_size();
  const auto* p = static_cast<const unsigned char*>(records);
  while (count > 0) {
    size_t take = std::min<size_t>(count, w.records_per_block - w.pending_count);
    w.pending.insert(w.pending.end(), p, p + take * rs);
    w.pending_count += take;
    w.appended += take;
    p += take * rs;
    count -= take;
    if (w.pending_count == w.records_per_block) w.flush_block();
  }
}

void DatasetWriter::set_metadata(const std::string& key, const std::string& raw_json) {
  impl_->manifest.metadata[key] = raw_json;
}

Manifest DatasetWriter::finish() {
  Impl& w = *impl_;
  if (w.finished) throw Error(ErrorCode::kInvalidArgument, "", "finish() called twice");
  w.flush_block();
  while (!w.in_flight.empty()) w.drain_one();
  w.close_shard();
  w.finished = true;
  w.manifest.producer = w.options.producer;
  w.manifest.schema = w.schema;
  w.manifest.records_per_block = w.records_per_block;
  const std::string text = w.manifest.serialize();
  const fs::path path = w.staged.staging() / format::kManifestName;
  {
    std::ofstream out(path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw Error(ErrorCode::kIo, path.string(), "cannot write manifest");
  }
  {
    // Durability of the manifest's bytes before the rename that makes them visible.
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f) {
      ::fsync(fileno(f));
      std::fclose(f);
    }
  }
  w.staged.publish();
  return w.manifest;
}

}  // namespace shardkit
