// Reads a dataset: opens the manifest, opens shards lazily on first touch, maps a global record
// index to (shard, block, slot) through its Geometry, and serves decoded blocks through the
// dataset's BlockCache. Safe to use from many threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/block_cache.h"
#include "core/block_source.h"
#include "core/dataset_store.h"
#include "core/geometry.h"
#include "core/manifest.h"
#include "core/schema.h"

namespace shardkit {

class ShardFile;

struct DatasetOptions {
  size_t cache_bytes = 256ull << 20;  // decoded blocks kept resident for random access
  SourceOptions source;               // pread or mmap; remote transport and cache
  // Buffers of dropped blocks kept for the next decodes (core/buffer_pool.h); 0 keeps none.
  // The loader keeps a window's worth, so that it never holds more than its two windows.
  size_t idle_block_bytes = 0;
};

class Dataset {
 public:
  // Reads and validates the manifest of a directory, or of a remote dataset (http://,
  // https://, s3://). Shards are opened when first touched.
  static Dataset open(const std::filesystem::path& dir, DatasetOptions options = {});
  static Dataset open(const std::string& location, DatasetOptions options = {});
  static Dataset open(const char* location, DatasetOptions options = {});
  Dataset(Dataset&&) noexcept;
  Dataset& operator=(Dataset&&) noexcept;
  ~Dataset();

  const std::filesystem::path& path() const;  // the location as given
  const Manifest& manifest() const;
  const Schema& schema() const;
  // What the records mean (field roles, tokenizer and special ids, task, labels).
  const DatasetInfo& info() const;
  uint64_t size() const;  // records
  uint32_t records_per_block() const;
  uint64_t block_count() const;  // over all shards
  const Geometry& geometry() const;

  RecordLocation locate(uint64_t record) const;  // throws kInvalidArgument when out of range
  BlockRef block_ref(uint64_t global_block) const;

  // The decoded block, through the cache; checksum verified before decoding.
  std::shared_ptr<const DecodedBlock> block(uint64_t global_block) const;
  // Reads, verifies and decodes a block, bypassing the cache (the loader claims blocks in the
  // cache itself, pinned to its windows).
  std::shared_ptr<const DecodedBlock> decode_block(uint64_t global_block) const;
  // Copies record `index` (schema().record_size() bytes) to `out`.
  void read(uint64_t index, void* out) const;
  // The same when its block is decoded and held already (nothing to wait for); false otherwise.
  bool read_resident(uint64_t index, void* out) const;
  // Starts the kernel reading a block's bytes ahead of use.
  void prefetch(uint64_t global_block) const;

  // The shard, opened (and validated) on first use.
  const ShardFile& shard(uint32_t index) const;
  // Requests and bytes fetched so far (remote datasets; zero for a local one).
  IoStats io_stats() const;
  // Tells the store which epoch the loader reads (remote: the cache's eviction order).
  void begin_epoch(uint64_t epoch) const;
  // Stops the dataset's network waits from another thread: while set, a remote read waiting
  // now or started later throws Error(kCancelled) within Interrupt::kPoll. It watches
  // options.source.interrupt. A loader sets it as it closes; Python on Ctrl-C.
  Interrupt& interrupt() const;
  // A metadata value as raw JSON, if the manifest has the key.
  std::optional<std::string> metadata(const std::string& key) const;
  BlockCache& cache() const;

 private:
  struct Impl;
  explicit Dataset(std::unique_ptr<Impl> impl);
  enum class Opener { kRead, kPrefetch };
  // The shard, opened on first use; a prefetch gets nullptr for a shard whose open a prefetch
  // saw fail, until a read has reported that failure.
  static const ShardFile* open_shard(Impl& impl, uint32_t index, Opener opener);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardkit
