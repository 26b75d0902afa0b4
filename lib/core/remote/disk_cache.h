// The on-disk cache of fetched byte ranges (cache_dir, cache_limit), shared by every loader
// process on a node. A file appears only complete (written under a unique temporary name, then
// renamed), so a reader never sees a torn one; and every block is checked against its checksum
// after the cache hands it out anyway, so a damaged file is refetched, not delivered. When the
// directory outgrows cache_limit the least recently used files go (a hit refreshes a file's
// time); a write that fails (disk full) evicts and is skipped: the bytes are still delivered.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace shardkit::remote {

struct CacheStats {
  uint64_t hits = 0;
  uint64_t writes = 0;
  uint64_t write_failures = 0;  // e.g. ENOSPC: evicted, skipped, bytes served from memory
  uint64_t evicted_files = 0;
};

class DiskCache {
 public:
  // Creates `dir` when missing; throws Error(kIo, dir) when it cannot.
  DiskCache(std::string dir, uint64_t limit_bytes);

  // The key of a range of an object whose content is pinned by `version` (a checksum).
  static std::string key(const std::string& url, uint64_t version, uint64_t offset, size_t size);
  // Fills `out` with `size` bytes when the cache holds them.
  bool get(const std::string& key, size_t size, unsigned char* out);
  void put(const std::string& key, const unsigned char* data, size_t size);
  CacheStats stats() const;
  const std::string& dir() const { return dir_; }

 private:
  void evict(uint64_t target_bytes);

  std::string dir_;
  uint64_t limit_;
  std::mutex evict_mu_;
  std::atomic<uint64_t> approx_bytes_{0};
  std::atomic<uint64_t> hits_{0}, writes_{0}, write_failures_{0}, evicted_{0};
};

}  // namespace shardkit::remote
