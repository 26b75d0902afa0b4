// Where a shard's bytes come from. A ShardFile reads its header, footer and index once through
// a BlockSource, then each block's stored bytes by (offset, size). Local files are read with
// pread (the default) or through a read-only mapping; remote sources (remote/) fetch byte
// ranges. Every failure is an Error naming the source (path or URL) and, for a block, the block:
// a file truncated or replaced underfoot is a short read, never a signal (with pread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/interrupt.h"

namespace shardkit {

class BlockSource {
 public:
  virtual ~BlockSource() = default;

  // The path or URL, as errors name it.
  virtual const std::string& name() const = 0;
  // The size found when the source was opened.
  virtual uint64_t size() const = 0;
  // Reads exactly `size` bytes at `offset` into `out`. Throws Error naming the source (and
  // `block`, when given) on a short read or an I/O failure.
  virtual void read(uint64_t offset, size_t size, unsigned char* out,
                    std::optional<uint64_t> block = {}) const = 0;
  // The bytes in place, valid while the source lives, for a memory-mapped source; nullptr
  // when they must be read().
  virtual const unsigned char* view(uint64_t offset, size_t size) const {
    (void)offset, (void)size;
    return nullptr;
  }
  // A hint that [offset, offset + size) will be read soon (kernel readahead, a remote fetch).
  virtual void prefetch(uint64_t offset, size_t size) const { (void)offset, (void)size; }
  // Reads the bytes again from their origin, past any cache, after they failed their checksum;
  // false when there is nowhere else to read them from (a local file).
  virtual bool refetch(uint64_t offset, size_t size, unsigned char* out,
                       std::optional<uint64_t> block) const {
    (void)offset, (void)size, (void)out, (void)block;
    return false;
  }
};

enum class ReadMode {
  kPread,  // read blocks into the process: RSS bounded by the cache, no SIGBUS (default)
  kMmap,   // map the file: file pages count in RSS; a file truncated underfoot raises SIGBUS
};

const char* read_mode_name(ReadMode mode);
// "pread" or "mmap"; throws Error(kInvalidArgument) otherwise.
ReadMode parse_read_mode(const std::string& name);

// How a dataset's bytes are read, local or remote.
struct SourceOptions {
  ReadMode read_mode = ReadMode::kPread;  // local files
  // Remote datasets (http://, https://, s3://):
  unsigned remote_concurrency = 8;     // range requests in flight at once
  std::string cache_dir;               // on-disk cache of fetched bytes; empty: none
  uint64_t cache_limit = 4ull << 30;   // bytes the cache may hold (eviction: disk_cache.h)
  unsigned remote_retries = 5;         // per request, after timeouts, 5xx and short reads
  unsigned remote_timeout_ms = 30000;  // per request
  // Remote bytes fetched ahead and held in memory until read; 0: 256 MiB (a Loader: half its
  // memory_budget). Past it, blocks are fetched when read.
  size_t prefetch_bytes = 0;
  // The largest remote manifest.json read (it is held in memory whole, parsed once): a larger
  // one is refused with an error naming this option, before its body is read when the server
  // sends its size. 0: no limit.
  uint64_t max_manifest_bytes = 256ull << 20;
  // Stops this source's network waits when set from another thread (Python sets it on Ctrl-C);
  // each throws Error(kCancelled). Empty: nothing outside stops them.
  std::shared_ptr<Interrupt> interrupt;
};

// Opens a regular local file (symbolic links and non-regular files are refused, a FIFO without
// blocking). Throws Error(kIo) or Error(kCorrupt) naming the file as `name` (default: `path`).
// A relative path is made absolute now: the process may change directory later. With pread
// the process's open shard descriptors are bounded (half the soft RLIMIT_NOFILE): the least
// recently read is closed, and opened again when read, refused if it is no longer the same file.
std::unique_ptr<BlockSource> open_file_source(const std::filesystem::path& path, ReadMode mode,
                                              const std::string& name = {});

}  // namespace shardkit
