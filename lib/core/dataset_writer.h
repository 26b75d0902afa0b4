// Writes a dataset: records appended in order are cut into blocks, blocks are encoded (on
// `threads` threads; the output is byte-identical for any thread count), stored in order into
// shards that roll at a target size, and finish() publishes the directory atomically with the
// manifest inside. The three steps are stages of shardkit's ordered pipeline
// (core/ordered_pipeline.h): append_many and finish run them on the writer's own task arena, and
// a caller with a pipeline of its own (shardify's convert and merge) runs cut, encode and store
// among its stages instead.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/block_codec.h"
#include "core/manifest.h"
#include "core/schema.h"
#include "format/shard_format.h"

namespace shardkit {

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
  // Threads of append_many and finish, the caller's included (1: only the caller's). A caller
  // running the stages in its own pipeline sets the threads of that pipeline instead.
  unsigned threads = 1;
  std::string producer;  // defaults to "shardkit <version>"
};

// One block between the writer's stages: cut (its records), then encoded, then stored.
struct RawBlock {
  std::vector<unsigned char> records;  // `count` records, the schema's layout
  uint32_t count = 0;
  EncodedBlock encoded;  // set by DatasetWriter::encode, which frees `records`
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

  // The stages append_many and finish run, for a caller that schedules them in its own ordered
  // pipeline (core/ordered_pipeline.h, encode_and_store). A caller uses these or append_many.
  // cut: in order, one call at a time. Appends records as append_many does, moving each block
  // they fill to `full`; the short last block stays here until finish() stores it.
  void cut(const void* records, size_t count, std::vector<RawBlock>& full);
  // encode: on any thread, several at once (each thread keeps its own zstd context).
  void encode(RawBlock& block) const;
  // store: in cut order, one call at a time. Writes the block to the current shard, starting a
  // shard before it and closing the shard after it by the shard size rules.
  void store(RawBlock& block);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "shardkit 0.3.0"
std::string default_producer();

}  // namespace shardkit
