#include "core/dataset_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "core/block_codec.h"
#include "core/error.h"
#include "core/shard_file_writer.h"
#include "core/staged_directory.h"
#include "core/version.h"
#include "core/worker_pool.h"

#include <nlohmann/json.hpp>

namespace shardkit {
namespace fs = std::filesystem;

std::string default_producer() { return std::string("shardkit ") + kVersion; }

namespace {

std::atomic<uint64_t> next_writer_id{1};

// Compressing a block with a fresh zstd context costs more than reusing one, so each pool thread
// keeps the encoder of the writer it last served.
EncodedBlock encode_on_this_thread(uint64_t writer_id, const Schema& schema,
                                   const WriterOptions& options, const unsigned char* records,
                                   size_t count) {
  thread_local uint64_t owner = 0;
  thread_local std::unique_ptr<BlockEncoder> encoder;
  if (owner != writer_id) {
    encoder = std::make_unique<BlockEncoder>(schema, options.filter, options.zstd_level);
    owner = writer_id;
  }
  return encoder->encode(records, count);
}

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
    pool = options.pool;
    if (!pool) {
      own_pool = std::make_unique<WorkerPool>(options.threads);
      pool = own_pool.get();
    }
    manifest.info = DatasetInfo::infer(schema);
    pending.reserve(size_t{records_per_block} * schema.record_size());
  }

  void flush_block() {
    if (pending_count == 0) return;
    size_t count = pending_count;
    pending_count = 0;
    auto records = std::make_shared<std::vector<unsigned char>>(std::move(pending));
    in_flight.push_back({pool->submit([this, records, count] {
                           return encode_on_this_thread(id, schema, options, records->data(),
                                                        count);
                         }),
                         static_cast<uint32_t>(count)});
    pending = {};
    pending.reserve(size_t{records_per_block} * schema.record_size());
    while (in_flight.size() > 2 * size_t{pool->threads()}) drain_one();
  }

  void drain_one() {
    auto [future, count] = std::move(in_flight.front());
    in_flight.pop_front();
    store(pool->get(future), count);
  }

  void store(const EncodedBlock& block, uint32_t count) {
    if (!shard) {
      current_name = shard_file_name(manifest.shards.size());
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
  const uint64_t id = next_writer_id++;
  std::unique_ptr<WorkerPool> own_pool;
  WorkerPool* pool = nullptr;
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
  if (!nlohmann::json::accept(raw_json))
    throw Error(ErrorCode::kInvalidArgument, "",
                "metadata '" + key + "' is not one valid JSON value");
  impl_->manifest.metadata[key] = raw_json;
}

void DatasetWriter::set_info(DatasetInfo info) {
  info.check_against(impl_->schema, "DatasetWriter::set_info");
  impl_->manifest.info = std::move(info);
}

const DatasetInfo& DatasetWriter::info() const { return impl_->manifest.info; }

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
  w.manifest.write_to(w.staged.staging() / format::kManifestName);
  w.staged.publish();
  return w.manifest;
}

}  // namespace shardkit
