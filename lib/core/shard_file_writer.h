// Writes one shard file: header and schema, encoded blocks in order, the block index, the
// footer. The caller encodes blocks (possibly on other threads) and hands them over in order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/block_codec.h"
#include "core/schema.h"
#include "format/shard_format.h"

namespace shardkit {

struct ShardSummary {
  uint64_t records = 0;
  uint64_t bytes = 0;            // file size
  uint64_t footer_checksum = 0;  // what the manifest records
};

class ShardFileWriter {
 public:
  ShardFileWriter(std::filesystem::path path, const Schema& schema, uint32_t records_per_block,
                  format::BlockFilter filter);
  ~ShardFileWriter();
  ShardFileWriter(const ShardFileWriter&) = delete;
  ShardFileWriter& operator=(const ShardFileWriter&) = delete;

  // Every block but the last must hold exactly records_per_block records.
  void add_block(const EncodedBlock& block, uint32_t record_count);
  uint64_t bytes_written() const { return offset_; }
  // Writes index, footer and the final header, fsyncs and closes.
  ShardSummary finish();

 private:
  void write_at(const void* data, size_t size, uint64_t offset);

  std::filesystem::path path_;
  std::string schema_text_;
  uint32_t record_size_;
  uint32_t records_per_block_;
  format::BlockFilter filter_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  uint64_t records_ = 0;
  bool saw_short_block_ = false;
  std::vector<format::IndexEntry> index_;
};

}  // namespace shardkit
