#include "core/remote/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "core/checksum.h"
#include "core/error.h"
#include "core/owned_files.h"

namespace shardkit::remote {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view kTmpPrefix = ".tmp-";
// The first line is the Cache Directory Tagging signature that backup tools look for; the
// second is what tells shardkit the directory is its own.
constexpr std::string_view kTagSignature = "Signature: 8a477f597d28d172789f06886806bc55\n";
constexpr std::string_view kTagOwner = "# shardkit block cache\n";
constexpr std::string_view kTagText =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# shardkit block cache\n"
    "# Blocks of remote datasets fetched by shardkit's loader (cache_dir). shardkit removes\n"
    "# only the files here that it named itself; deleting this directory is always safe.\n";
// Temporary names are unique per process (pid) and, across the caches of one process, by this.
// It starts at a random number: processes in different PID namespaces (containers on one node
// sharing a cache_dir) may have the same pid, and counting from 0 they would take the same names.
uint64_t random_start() {
  std::random_device device;
  return ((uint64_t(device()) << 32) | device()) >> 16;  // room to count up in 20 digits
}
std::atomic<uint64_t> tmp_counter{random_start()};

// Consumed stamps lie in 1973..2001, far below any real time: epoch e takes the day-long span
// that ends kConsumedBase - e days, so a later epoch's reads sort before an earlier epoch's; in
// an epoch they count nanoseconds from its start, so the earliest read goes first.
constexpr int64_t kNs = 1000000000;
constexpr int64_t kConsumedBase = 1000000000 * kNs;  // 2001-09-09
constexpr int64_t kEpochSpan = 86400 * kNs;
constexpr uint64_t kMaxEpoch = 10000;

int64_t now_ns() {
  struct timespec t {};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return int64_t(t.tv_sec) * kNs + t.tv_nsec;
}

std::string unique_suffix() {
  return std::to_string(::getpid()) + "-" + std::to_string(tmp_counter.fetch_add(1));
}

bool all_of_class(std::string_view s, size_t n, bool (*in_class)(char)) {
  return s.size() >= n && std::all_of(s.begin(), s.begin() + n, in_class);
}
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Consumes "DIGITS" then `sep` (or the end when sep is 0); false when `s` does not start so.
bool take_number(std::string_view* s, char sep) {
  size_t n = 0;
  while (n < s->size() && is_digit((*s)[n])) ++n;
  if (n == 0 || n > 20) return false;
  s->remove_prefix(n);
  if (sep == 0) return s->empty();
  if (s->empty() || s->front() != sep) return false;
  s->remove_prefix(1);
  return true;
}

bool write_all(int fd, const unsigned char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, unsigned char* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Opens a regular file of `dir_fd` for reading; -1 for anything else (a link, a FIFO, a device:
// O_NONBLOCK keeps a FIFO from blocking the open).
int open_regular(int dir_fd, const char* name) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

[[noreturn]] void refuse(const std::string& dir, const std::string& why) {
  throw Error(ErrorCode::kIo, dir, why);
}

bool has_owner_tag(int dir_fd) {
  const int fd = open_regular(dir_fd, DiskCache::kTagFile);
  if (fd < 0) return false;
  char text[512];
  const ssize_t n = ::pread(fd, text, sizeof text, 0);
  ::close(fd);
  const std::string_view got(text, n > 0 ? size_t(n) : 0);
  return got.substr(0, kTagSignature.size()) == kTagSignature &&
         got.find(kTagOwner) != std::string_view::npos;
}

// A full disk, or a full quota: the cache is skipped, as a write that fails so later is.
bool disk_full(int err) { return err == ENOSPC || err == EDQUOT; }

// Writes `data` under a temporary name, then renames it to `key`: rename() publishes the file
// whole, so a reader sees the old name's file or the new one. 0, or the errno of the step that
// failed (the temporary file then removed).
int write_whole(int dir_fd, const std::string& key, const unsigned char* data, size_t size) {
  const std::string tmp = std::string(kTmpPrefix) + unique_suffix();
  const int fd =
      ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return errno;
  int err = 0;
  errno = 0;
  if (!write_all(fd, data, size)) err = errno ? errno : EIO;  // a write of 0 bytes: no errno
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::renameat(dir_fd, tmp.c_str(), dir_fd, key.c_str()) != 0) err = errno;
  if (err != 0) ::unlinkat(dir_fd, tmp.c_str(), 0);
  return err;
}

// Writes the tag into the staging directory; 0, or the errno of what failed.
int write_tag(int parent_fd, const std::string& staging) {
  const int staging_fd = ::openat(parent_fd, staging.c_str(), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (staging_fd < 0) return errno;
  int err = 0;
  const int tag = ::openat(staging_fd, DiskCache::kTagFile,
                           O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (tag < 0) {
    err = errno;
  } else {
    errno = 0;
    if (!write_all(tag, reinterpret_cast<const unsigned char*>(kTagText.data()), kTagText.size()))
      err = errno ? errno : EIO;
    if (::close(tag) != 0 && err == 0) err = errno;
  }
  ::close(staging_fd);
  return err;
}

// Makes parent/shardkit-cache whole: the directory and its tag are built under a temporary name
// and renamed into place, so another process never sees the directory without its tag. Losing
// the race to another process is fine: its directory is used. False, with nothing left behind,
// when the disk is full: the caller runs without a cache.
bool create_owned_dir(int parent_fd, const std::string& parent) {
  const std::string staging = std::string(".") + DiskCache::kOwnedDir + ".new-" + unique_suffix();
  if (::mkdirat(parent_fd, staging.c_str(), 0755) != 0) {
    if (disk_full(errno)) return false;
    refuse(parent, std::string("cannot create the remote cache directory: ") + strerror(errno));
  }
  const int err = write_tag(parent_fd, staging);
  if (err == 0 && ::renameat(parent_fd, staging.c_str(), parent_fd, DiskCache::kOwnedDir) == 0)
    return true;
  // Undo exactly what was made here: the tag, then the empty staging directory.
  const std::string tag_path = staging + "/" + DiskCache::kTagFile;
  ::unlinkat(parent_fd, tag_path.c_str(), 0);
  ::unlinkat(parent_fd, staging.c_str(), AT_REMOVEDIR);
  if (disk_full(err)) return false;
  if (err != 0)
    refuse(parent, std::string("cannot write the remote cache's tag: ") + strerror(err));
  return true;  // the rename lost to another process's directory, opened next
}

// The descriptor of parent/shardkit-cache, or -1 when the disk is full before it exists.
int open_owned_dir(const std::string& parent) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec && disk_full(ec.value())) return -1;
  // Why it could not be made (a read-only file system, no permission), not the open's ENOENT.
  if (ec) refuse(parent, "cannot create the remote cache directory: " + ec.message());
  // The user's own cache_dir may be a link (to a larger disk); what is inside is not followed.
  const int parent_fd = ::open(parent.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (parent_fd < 0)
    refuse(parent, std::string("cannot open the remote cache directory: ") + strerror(errno));
  int fd = ::openat(parent_fd, DiskCache::kOwnedDir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    bool created = false;
    try {
      created = create_owned_dir(parent_fd, parent);
    } catch (...) {
      ::close(parent_fd);
      throw;
    }
    if (!created) {
      ::close(parent_fd);
      return -1;
    }
    fd = ::openat(parent_fd, DiskCache::kOwnedDir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  const int saved = errno;
  ::close(parent_fd);
  const std::string owned = parent + "/" + DiskCache::kOwnedDir;
  if (fd < 0)
    refuse(owned, saved == ELOOP || saved == ENOTDIR
                      ? "is a symbolic link or not a directory; the remote cache uses only a "
                        "directory it created itself (choose another cache_dir)"
                      : std::string("cannot open the remote cache directory: ") + strerror(saved));
  if (!has_owner_tag(fd)) {
    ::close(fd);
    refuse(owned, std::string("exists but was not created by shardkit (no ") + DiskCache::kTagFile +
                      " of shardkit's in it); the remote cache never writes into a directory "
                      "it does not own (choose another cache_dir)");
  }
  return fd;
}

// The regular files of the cache's directory that have one of its own names.
std::vector<OwnedFile> list_owned(int dir_fd) {
  return list_owned_files(dir_fd, DiskCache::is_own_name);
}

// A file being written (by this process or another), not yet renamed to its block's name.
bool is_temporary(const OwnedFile& f) {
  return std::string_view(f.name).substr(0, kTmpPrefix.size()) == kTmpPrefix;
}
}  // namespace

bool DiskCache::is_own_name(std::string_view name) {
  if (name.substr(0, kTmpPrefix.size()) == kTmpPrefix) {
    name.remove_prefix(kTmpPrefix.size());
    return take_number(&name, '-') && take_number(&name, 0);
  }
  // HEX16-HEX16-OFFSET-SIZE
  for (int part = 0; part < 2; ++part) {
    if (!all_of_class(name, 16, is_hex) || name.size() < 17 || name[16] != '-') return false;
    name.remove_prefix(17);
  }
  return take_number(&name, '-') && take_number(&name, 0);
}

DiskCache::DiskCache(std::string dir, uint64_t limit_bytes)
    : dir_(dir + "/" + kOwnedDir), dir_fd_(open_owned_dir(dir)), limit_(limit_bytes) {
  approx_bytes_ = owned_bytes();
  epoch_started_ = now_ns();
}

DiskCache::~DiskCache() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

uint64_t DiskCache::owned_bytes() const {
  if (dir_fd_ < 0) return 0;
  uint64_t total = 0;
  for (const OwnedFile& f : list_owned(dir_fd_)) total += f.bytes;
  return total;
}

void DiskCache::set_epoch(uint64_t epoch) {
  epoch_ = std::min(epoch, kMaxEpoch);
  epoch_started_ = now_ns();
}

struct timespec DiskCache::consumed_stamp() const {
  const int64_t into = std::clamp<int64_t>(now_ns() - epoch_started_, 0, kEpochSpan - 1);
  const int64_t stamp = kConsumedBase - int64_t(epoch_.load() + 1) * kEpochSpan + into;
  struct timespec t {};
  t.tv_sec = static_cast<time_t>(stamp / kNs);
  t.tv_nsec = static_cast<long>(stamp % kNs);
  return t;
}

void DiskCache::mark_consumed(const std::string& key) {
  if (dir_fd_ < 0 || !is_own_name(key)) return;
  const struct timespec times[2] = {{0, UTIME_OMIT}, consumed_stamp()};
  ::utimensat(dir_fd_, key.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

std::string DiskCache::key(const std::string& url, uint64_t version, uint64_t offset, size_t size) {
  return checksum_hex(xxh3_64(url.data(), url.size())) + "-" + checksum_hex(version) + "-" +
         std::to_string(offset) + "-" + std::to_string(size);
}

bool DiskCache::get(const std::string& key, size_t size, unsigned char* out, bool consumed) {
  if (dir_fd_ < 0 || !is_own_name(key)) return false;
  const int fd = open_regular(dir_fd_, key.c_str());
  if (fd < 0) return false;
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && uint64_t(st.st_size) == size && read_all(fd, out, size);
  if (ok) {
    if (consumed) {
      const struct timespec times[2] = {{0, UTIME_OMIT}, consumed_stamp()};
      ::futimens(fd, times);
    } else {
      ::futimens(fd, nullptr);  // wanted soon: evicted last
    }
    hits_.fetch_add(1, std::memory_order_relaxed);
  }
  ::close(fd);
  return ok;
}

void DiskCache::put(const std::string& key, const unsigned char* data, size_t size, bool consumed) {
  if (size > limit_ || !is_own_name(key)) return;
  if (dir_fd_ < 0) {  // the disk was full when the cache was first used: skipped
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (const int err = write_whole(dir_fd_, key, data, size); err != 0) {
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    // A full disk or quota: free half of what the cache holds for the next writes. Any other
    // failure (an I/O error, a file system remounted read-only) is not cured by evicting: the
    // block is only not cached, and the blocks cached before are kept.
    if (disk_full(err))
      evict(std::min(limit_, approx_bytes_.load()) / 2);
    else
      warn_write_failed(err);
    return;
  }
  // Stamped after the rename: a temporary file with an old time would look abandoned.
  if (consumed) mark_consumed(key);
  writes_.fetch_add(1, std::memory_order_relaxed);
  if (approx_bytes_.fetch_add(size) + size > limit_) evict(limit_ / 10 * 9);
}

void DiskCache::warn_write_failed(int err) {
  if (warned_write_failure_.exchange(true)) return;
  std::fprintf(stderr,
               "shardkit: cannot write to the remote cache %s (%s): blocks not cached are read "
               "from the server each time they are needed; what the cache holds is kept\n",
               dir_.c_str(), std::strerror(err));
}

void DiskCache::evict(uint64_t target_bytes) {
  // A writer that asks while the pass runs may have renamed its file after the pass listed the
  // directory: the evicting thread passes again. (The flag is cleared before the listing, so a
  // request that comes earlier is covered by it.)
  for (;;) {
    std::unique_lock lock(evict_mu_, std::try_to_lock);
    if (!lock.owns_lock()) {
      evict_again_.store(true);
      return;
    }
    evict_again_.store(false);
    evict_pass(target_bytes);
    lock.unlock();
    if (!evict_again_.load() || approx_bytes_.load() <= limit_) return;
  }
}

void DiskCache::evict_pass(uint64_t target_bytes) {
  if (dir_fd_ < 0) return;
  const uint64_t counted_before = approx_bytes_.load();
  std::vector<OwnedFile> files = list_owned(dir_fd_);
  uint64_t total = 0;
  for (const OwnedFile& f : files) total += f.bytes;
  // Another process's temporary file is its business, unless it was abandoned long ago; an
  // abandoned one goes first.
  const int64_t abandoned_before = now_ns() - 600 * kNs;
  std::erase_if(files, [&](const OwnedFile& f) {
    return is_temporary(f) && f.modified_ns > abandoned_before;
  });
  for (OwnedFile& f : files)
    if (is_temporary(f)) f.modified_ns = 0;
  std::sort(files.begin(), files.end(),
            [](const OwnedFile& a, const OwnedFile& b) { return a.modified_ns < b.modified_ns; });
  for (const OwnedFile& f : files) {
    if (total <= target_bytes) break;
    if (::unlinkat(dir_fd_, f.name.c_str(), 0) == 0) {
      total -= f.bytes;
      evicted_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // What the scan found, plus what this process's other threads wrote meanwhile.
  approx_bytes_.fetch_add(total - counted_before);
}

CacheStats DiskCache::stats() const {
  return {hits_.load(), writes_.load(), write_failures_.load(), evicted_.load()};
}

}  // namespace shardkit::remote
