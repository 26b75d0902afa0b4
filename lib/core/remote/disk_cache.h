// The on-disk cache of fetched byte ranges (cache_dir, cache_limit), shared by every loader
// process on a node. A file appears only complete (written under a unique temporary name, then
// renamed), so a reader never sees a torn one; and every block is checked against its checksum
// after the cache hands it out anyway, so a damaged file is refetched, not delivered.
//
// The cache owns only what it wrote. Its files live in one subdirectory of cache_dir,
// `shardkit-cache/`, which it creates with a CACHEDIR.TAG (https://bford.info/cachedir/) naming
// shardkit; it refuses a subdirectory of that name that lacks the tag. Inside it, only regular
// files whose names have the cache's own form (a key, or a temporary name) are ever read,
// counted or removed, all through the directory's descriptor and never through a symbolic link:
// the user's files beside the cache, or a link planted inside it, are never touched.
//
// Eviction follows the loader's schedule. In a shuffled epoch every block is read once (per
// rank, and the ranks of a node read the same windows at about the same time), so a block read
// in the current epoch will not be needed again until the next one: those go first. A file's
// modification time says where it stands, so that every process sharing the directory agrees:
//   - read in the current epoch: a stamp below every other (the older the read, the lower);
//   - read only in earlier epochs (still needed in this one): stamps above those;
//   - fetched ahead and not yet read (needed within a window or two): the real time, last.
// A write that fails is skipped: the bytes are still delivered. A full disk or quota (ENOSPC,
// EDQUOT) also evicts half the cache to make room; any other failure (EIO, EROFS, EACCES) keeps
// what is cached, and the first is said once on stderr. A disk (or quota) already full when the
// cache is first used, before shardkit-cache/ and its tag exist, skips caching for this cache's
// life the same way: every put counts a write failure.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace shardkit::remote {

struct CacheStats {
  uint64_t hits = 0;
  uint64_t writes = 0;
  uint64_t write_failures = 0;  // skipped, bytes served from memory (ENOSPC also evicts)
  uint64_t evicted_files = 0;
};

class DiskCache {
 public:
  // The subdirectory of cache_dir the cache owns, and the tag file that marks it as shardkit's.
  static constexpr const char* kOwnedDir = "shardkit-cache";
  static constexpr const char* kTagFile = "CACHEDIR.TAG";

  // Opens (creating when missing) `dir`/shardkit-cache; throws Error(kIo, dir) when it cannot
  // (a missing or read-only parent, no permission), and when a subdirectory of that name exists
  // that shardkit did not create. ENOSPC or EDQUOT while creating it is no error: the cache
  // then holds nothing and skips every write.
  DiskCache(std::string dir, uint64_t limit_bytes);
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // The key of a range of an object whose content is pinned by `version` (a checksum).
  static std::string key(const std::string& url, uint64_t version, uint64_t offset, size_t size);
  // Whether `name` has the form of a file the cache writes: a key, or a temporary name.
  static bool is_own_name(std::string_view name);
  // The epoch the loader reads now (the same number in every process sharing the directory).
  void set_epoch(uint64_t epoch);
  // Fills `out` with `size` bytes when the cache holds them. `consumed`: the loader reads them
  // now (evicted first from here on); otherwise they were fetched ahead (kept).
  bool get(const std::string& key, size_t size, unsigned char* out, bool consumed);
  void put(const std::string& key, const unsigned char* data, size_t size, bool consumed);
  // Bytes the loader read from memory (fetched ahead): their file is now consumed.
  void mark_consumed(const std::string& key);
  CacheStats stats() const;
  // The directory the files are in: cache_dir/shardkit-cache.
  const std::string& dir() const { return dir_; }

 private:
  // Evicts until the cache holds target_bytes or less. A caller that finds another thread
  // evicting leaves the work to it, and that thread passes again for the files written meanwhile.
  void evict(uint64_t target_bytes);
  void evict_pass(uint64_t target_bytes);
  uint64_t owned_bytes() const;
  // Says on stderr, once per cache, that a write failed for another reason than a full disk.
  void warn_write_failed(int err);
  // The modification time that marks a file consumed in the current epoch, now.
  struct timespec consumed_stamp() const;

  std::string dir_;
  int dir_fd_ = -1;  // every file operation is relative to it: the path is resolved once; -1:
                     // the disk was full when the directory was to be created (no cache)
  uint64_t limit_;
  std::mutex evict_mu_;
  std::atomic<bool> evict_again_{false};
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int64_t> epoch_started_{0};  // nanoseconds (CLOCK_REALTIME)
  std::atomic<uint64_t> approx_bytes_{0};
  std::atomic<uint64_t> hits_{0}, writes_{0}, write_failures_{0}, evicted_{0};
  std::atomic<bool> warned_write_failure_{false};
};

}  // namespace shardkit::remote
