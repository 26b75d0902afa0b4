// One shard, read through a BlockSource (pread, a mapping, or a remote range reader) and
// validated before anything in it is believed: header and footer checksums, the index checksum,
// contiguous blocks that end exactly at the index, and agreement with the manifest. The header,
// the footer and the index are read once, at open; afterwards only blocks are read. No access
// reads outside the file, whatever the file says.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/block_codec.h"
#include "core/block_source.h"
#include "core/manifest.h"
#include "core/schema.h"
#include "format/shard_format.h"

namespace shardkit {

class ShardFile {
 public:
  // Throws Error naming the file: kIo when it cannot be opened or mapped (symbolic links are
  // refused), kCorrupt when a structural check fails or it disagrees with `expected`.
  static std::unique_ptr<ShardFile> open(const std::filesystem::path& path, const Schema& schema,
                                         uint32_t records_per_block, const ShardEntry& expected,
                                         ReadMode mode = ReadMode::kPread);
  static std::unique_ptr<ShardFile> open(std::unique_ptr<BlockSource> source, const Schema& schema,
                                         uint32_t records_per_block, const ShardEntry& expected);
  ~ShardFile();
  ShardFile(const ShardFile&) = delete;
  ShardFile& operator=(const ShardFile&) = delete;

  const std::string& path() const { return path_; }
  const format::ShardHeader& header() const { return header_; }
  uint64_t block_count() const { return index_.size(); }
  uint32_t block_records(uint64_t block) const;
  const format::IndexEntry& index_entry(uint64_t block) const { return index_[block]; }
  // The stored (encoded) bytes of a block, unverified: in place for a mapped file, else read
  // into a buffer of the calling thread, valid until its next call.
  std::span<const unsigned char> stored_block(uint64_t block) const;
  const BlockSource& source() const { return *source_; }

  // Throws Error(kCorrupt, path, ..., block) when the stored bytes do not match their checksum.
  void verify_block(uint64_t block) const;
  void verify_stored(uint64_t block, std::span<const unsigned char> bytes) const;
  // Verifies, then decodes into `out` (block_records(block) * record_size bytes).
  void read_block(uint64_t block, BlockDecoder& decoder, unsigned char* out) const;
  // Asks the kernel to start reading a block's bytes (readahead) without waiting.
  void prefetch_block(uint64_t block) const;

 private:
  ShardFile() = default;
  // Reads and checks the header, footer and index; on success takes `source`. With `refetch`
  // every read goes to the origin, past any cache.
  static std::unique_ptr<ShardFile> open_once(std::unique_ptr<BlockSource>& source,
                                              const Schema& schema, uint32_t records_per_block,
                                              const ShardEntry& expected, bool refetch);

  std::string path_;
  const Schema* schema_ = nullptr;
  std::unique_ptr<BlockSource> source_;
  format::ShardHeader header_;
  std::vector<format::IndexEntry> index_;
};

}  // namespace shardkit
