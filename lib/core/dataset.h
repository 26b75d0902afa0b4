// Reads a dataset: opens the manifest, maps shards lazily on first touch, maps a global record
// index to (shard, block, slot) by binary search, and serves decoded blocks through a shared
// cache with a byte budget. Safe to use from many threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/block_cache.h"
#include "core/manifest.h"
#include "core/schema.h"

namespace shardkit {

class ShardFile;

struct DatasetOptions {
  size_t cache_bytes = 256ull << 20;  // decoded blocks kept resident
};

struct RecordLocation {
  uint32_t shard = 0;
  uint64_t block_in_shard = 0;
  uint64_t global_block = 0;
  uint32_t slot = 0;  // record within the block
};

struct BlockRef {
  uint32_t shard = 0;
  uint64_t block_in_shard = 0;
  uint64_t first_record = 0;  // global index of the block's first record
  uint32_t records = 0;
};

class Dataset {
 public:
  // Reads and validates the manifest. Shards are opened when first touched.
  static Dataset open(const std::filesystem::path& dir, DatasetOptions options = {});
  Dataset(Dataset&&) noexcept;
  Dataset& operator=(Dataset&&) noexcept;
  ~Dataset();

  const std::filesystem::path& path() const;
  const Manifest& manifest() const;
  const Schema& schema() const;
  // What the records mean (field roles, tokenizer and special ids, task, labels).
  const DatasetInfo& info() const;
  uint64_t size() const;  // records
  uint32_t records_per_block() const;
  uint64_t block_count() const;  // over all shards

  RecordLocation locate(uint64_t record) const;  // throws kInvalidArgument when out of range
  BlockRef block_ref(uint64_t global_block) const;

  // The decoded block, through the cache; checksum verified before decoding.
  std::shared_ptr<const DecodedBlock> block(uint64_t global_block) const;
  // Copies record `index` (schema().record_size() bytes) to `out`.
  void read(uint64_t index, void* out) const;
  // Starts the kernel reading a block's bytes ahead of use.
  void prefetch(uint64_t global_block) const;

  // The shard, opened (and validated) on first use.
  const ShardFile& shard(uint32_t index) const;
  // A metadata value as raw JSON, if the manifest has the key.
  std::optional<std::string> metadata(const std::string& key) const;
  const BlockCache& cache() const;

 private:
  struct Impl;
  explicit Dataset(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardkit
