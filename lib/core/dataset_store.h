// Where a dataset lives: a local directory, or a remote prefix (http://, https://, s3://). The
// store reads the manifest and opens each shard as a BlockSource; everything above it (Dataset,
// verify, the loader, the tools) is the same for both.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/block_source.h"
#include "core/location.h"
#include "core/manifest.h"

namespace shardkit {

// What a remote store fetched; all zero for a local directory.
struct IoStats {
  uint64_t requests = 0;
  uint64_t bytes_fetched = 0;
  uint64_t retries = 0;
  uint64_t cache_hits = 0;
  uint64_t cache_write_failures = 0;
  uint64_t cache_evictions = 0;
};

class DatasetStore {
 public:
  virtual ~DatasetStore() = default;
  // The location as given (a directory or URL), as errors name it.
  virtual const std::string& location() const = 0;
  virtual Manifest load_manifest() const = 0;
  virtual std::unique_ptr<BlockSource> open_shard(const ShardEntry& shard) const = 0;
  // Runs work that may wait on the network (opening a shard to prefetch one of its blocks)
  // off the caller's thread; a local store runs it at once.
  virtual void run_async(std::function<void()> task) const { task(); }
  virtual IoStats io_stats() const { return {}; }
  // The loader starts reading `epoch`: a remote store's disk cache evicts the blocks read in
  // it before those still to be read (remote/disk_cache.h).
  virtual void begin_epoch(uint64_t epoch) const { (void)epoch; }
};

// A local directory or a remote dataset; throws Error(kUnsupported) for an unknown URL scheme.
std::shared_ptr<DatasetStore> open_store(const std::string& location,
                                         const SourceOptions& options = {});

}  // namespace shardkit
