// Writes a dataset: records appended in order are grouped into blocks, blocks are encoded
// (on `threads` workers; the output is byte-identical for any thread count), shards roll at a
// target size, and finish() publishes the directory atomically with the manifest inside.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/manifest.h"
#include "core/schema.h"
#include "format/shard_format.h"

namespace shardkit {

class WorkerPool;

struct WriterOptions {
  // Target uncompressed bytes per block; records_per_block = max(1, block_bytes / record_size).
  uint32_t block_bytes = 256 * 1024;
  // A shard is closed after the first block that brings it to this many stored bytes.
  uint64_t shard_bytes = 256ull << 20;
  int zstd_level = 3;
  // Byte planes help synthetic i.i.d. ids a little but cost ~11% on real packed text
  // (BENCHMARKS.md, shardify section), so records are stored as they are by default.
  format::BlockFilter filter = format::BlockFilter::kNone;
  bool overwrite = false;
  unsigned threads = 1;        // encoding threads of the writer's own pool (1: the caller's)
  WorkerPool* pool = nullptr;  // or blocks are encoded on this pool, shared with the caller
  std::string producer;        // defaults to "shardkit <version>"
};

class DatasetWriter {
 public:
  DatasetWriter(std::filesystem::path dir, Schema schema, WriterOptions options = {});
  // Without finish(), nothing is published and the staging directory is removed.
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  const Schema& schema() const;
  uint32_t records_per_block() const;

  // `record` points at schema().record_size() bytes in the schema's layout.
  void append(const void* record);
  void append_many(const void* records, size_t count);
  // What the records mean (the manifest's "dataset"); by default inferred from field names.
  // Throws Error(kInvalidArgument... kCorrupt) unless info.fields matches the schema.
  void set_info(DatasetInfo info);
  const DatasetInfo& info() const;
  // A program's own top-level metadata key with a raw JSON value (validated); later calls
  // replace earlier ones.
  void set_metadata(const std::string& key, const std::string& raw_json);
  uint64_t records_appended() const;

  // Flushes, writes the manifest last, publishes. Returns the manifest written.
  Manifest finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "shardkit 0.1.0"
std::string default_producer();

}  // namespace shardkit
