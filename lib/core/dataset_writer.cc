#include "core/dataset_writer.h"

#include <oneapi/tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/ordered_pipeline.h"
#include "core/shard_file_writer.h"
#include "core/staged_directory.h"
#include "core/version.h"

#include <nlohmann/json.hpp>

namespace shardkit {
namespace fs = std::filesystem;

std::string default_producer() { return std::string("shardkit ") + kVersion; }

namespace {

// Blocks append_many cuts per thread before it runs them through encode and store: enough to keep
// every thread busy, few enough to bound memory (4 * threads * block_bytes).
constexpr size_t kQueuedBlocksPerThread = 4;

}  // namespace

struct DatasetWriter::Impl {
  Impl(DatasetWriter& owner, fs::path dir, Schema s, WriterOptions o)
      : owner(owner),
        staged(std::move(dir), o.overwrite),
        schema(std::move(s)),
        options(std::move(o)),
        arena(pipeline_arena(options.threads)) {
    if (options.producer.empty()) options.producer = default_producer();
    if (options.zstd_level < 1 || options.zstd_level > 22)
      throw Error(ErrorCode::kInvalidArgument, "", "zstd level must be in 1..22");
    records_per_block =
        static_cast<uint32_t>(std::max<size_t>(1, options.block_bytes / schema.record_size()));
    if (uint64_t{records_per_block} * schema.record_size() > format::kMaxBlockRawSize)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "block size is too large: a block holds at most " +
                      std::to_string(format::kMaxBlockRawSize) + " bytes");
    manifest.info = DatasetInfo::infer(schema);
    pending.reserve(size_t{records_per_block} * schema.record_size());
  }

  void cut(const unsigned char* p, size_t count, std::vector<RawBlock>& full) {
    if (finished) throw Error(ErrorCode::kInvalidArgument, "", "append after finish()");
    const size_t rs = schema.record_size();
    while (count > 0) {
      const size_t take = std::min<size_t>(count, records_per_block - pending_count);
      pending.insert(pending.end(), p, p + take * rs);
      pending_count += take;
      appended += take;
      p += take * rs;
      count -= take;
      if (pending_count == records_per_block) cut_pending(full);
    }
  }

  // The pending records, a full block or the short last one, become a block of `out`.
  void cut_pending(std::vector<RawBlock>& out) {
    if (pending_count == 0) return;
    out.push_back({std::move(pending), static_cast<uint32_t>(pending_count), {}});
    pending_count = 0;
    pending = {};
    pending.reserve(size_t{records_per_block} * schema.record_size());
  }

  // Compressing a block with a fresh zstd context costs more than reusing one, so each thread
  // keeps an encoder for this writer.
  void encode(RawBlock& block) {
    std::unique_ptr<BlockEncoder>& encoder = encoders.local();
    if (!encoder)
      encoder = std::make_unique<BlockEncoder>(schema, options.filter, options.zstd_level);
    block.encoded = encoder->encode(block.records.data(), block.count);
    block.records = {};
  }

  void store(const RawBlock& block) {
    if (!shard) {
      current_name = shard_file_name(manifest.shards.size());
      shard = std::make_unique<ShardFileWriter>(staged.staging() / current_name, schema,
                                                records_per_block, options.filter);
    }
    shard->add_block(block.encoded, block.count);
    // A short block ends its shard: only a shard's last block may be short.
    if (shard->bytes_written() >= options.shard_bytes || block.count < records_per_block)
      close_shard();
  }

  // append_many's blocks through encode and store, on the writer's arena.
  void run_queued() {
    if (queued.empty()) return;
    size_t next = 0;
    PipelineItems<RawBlocks> items;
    const auto read = tbb::make_filter<void, WriterBlocks>(
        tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> WriterBlocks {
          if (next == queued.size()) {
            fc.stop();
            return nullptr;
          }
          WriterBlocks one = items.make();
          one->push_back(std::move(queued[next++]));
          return one;
        });
    run_ordered_pipeline(arena, read & encode_and_store(owner, items));
    queued.clear();
  }

  void close_shard() {
    if (!shard) return;
    ShardSummary s = shard->finish();
    shard.reset();
    manifest.shards.push_back({current_name, s.records, s.bytes, s.footer_checksum});
  }

  DatasetWriter& owner;
  StagedDirectory staged;
  Schema schema;
  WriterOptions options;
  uint32_t records_per_block = 0;
  tbb::task_arena arena;
  tbb::enumerable_thread_specific<std::unique_ptr<BlockEncoder>> encoders;
  std::vector<RawBlock> queued;  // cut by append_many, not yet encoded
  std::vector<unsigned char> pending;
  size_t pending_count = 0;
  uint64_t appended = 0;
  std::unique_ptr<ShardFileWriter> shard;
  std::string current_name;
  Manifest manifest;
  bool finished = false;
};

DatasetWriter::DatasetWriter(fs::path dir, Schema schema, WriterOptions options)
    : impl_(std::make_unique<Impl>(*this, std::move(dir), std::move(schema), std::move(options))) {}

// Every stage has returned by the time any member function does: nothing runs on in the
// background, and without finish() the staging directory is simply removed.
DatasetWriter::~DatasetWriter() = default;

const Schema& DatasetWriter::schema() const { return impl_->schema; }
uint32_t DatasetWriter::records_per_block() const { return impl_->records_per_block; }
uint64_t DatasetWriter::records_appended() const { return impl_->appended; }

void DatasetWriter::append(const void* record) { append_many(record, 1); }

void DatasetWriter::append_many(const void* records, size_t count) {
  Impl& w = *impl_;
  w.cut(static_cast<const unsigned char*>(records), count, w.queued);
  if (w.queued.size() >= kQueuedBlocksPerThread * std::max(1u, w.options.threads)) w.run_queued();
}

void DatasetWriter::cut(const void* records, size_t count, std::vector<RawBlock>& full) {
  impl_->run_queued();  // blocks append_many cut before go first
  impl_->cut(static_cast<const unsigned char*>(records), count, full);
}

void DatasetWriter::encode(RawBlock& block) const { impl_->encode(block); }

void DatasetWriter::store(RawBlock& block) { impl_->store(block); }

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
  w.cut_pending(w.queued);
  w.run_queued();
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
