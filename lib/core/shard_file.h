// One shard, memory-mapped read-only and validated before anything in it is believed: header
// and footer checksums, the index checksum, contiguous blocks that end exactly at the index,
// and agreement with the manifest. No access reads outside the mapping, whatever the file says.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/block_codec.h"
#include "core/manifest.h"
#include "core/schema.h"
#include "format/shard_format.h"

namespace shardkit {

class ShardFile {
 public:
  // Throws Error naming the file: kIo when it cannot be opened or mapped (symbolic links are
  // refused), kCorrupt when a structural check fails or it disagrees with `expected`.
  static std::unique_ptr<ShardFile> open(const std::filesystem::path& path, const Schema& schema,
                                         uint32_t records_per_block, const ShardEntry& expected);
  ~ShardFile();
  ShardFile(const ShardFile&) = delete;
  ShardFile& operator=(const ShardFile&) = delete;

  const std::string& path() const { return path_; }
  const format::ShardHeader& header() const { return header_; }
  uint64_t block_count() const { return index_.size(); }
  uint32_t block_records(uint64_t block) const;
  const format::IndexEntry& index_entry(uint64_t block) const { return index_[block]; }
  // The stored (encoded) bytes of a block, inside the mapping.
  std::span<const unsigned char> stored_block(uint64_t block) const;

  // Throws Error(kCorrupt, path, ..., block) when the stored bytes do not match their checksum.
  void verify_block(uint64_t block) const;
  // Verifies, then decodes into `out` (block_records(block) * record_size bytes).
  void read_block(uint64_t block, BlockDecoder& decoder, unsigned char* out) const;
  // Asks the kernel to start reading a block's bytes (readahead) without waiting.
  void prefetch_block(uint64_t block) const;

 private:
  ShardFile() = default;

  std::string path_;
  const Schema* schema_ = nullptr;
  const unsigned char* map_ = nullptr;
  size_t size_ = 0;
  format::ShardHeader header_;
  std::vector<format::IndexEntry> index_;
};

}  // namespace shardkit
