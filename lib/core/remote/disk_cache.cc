#include "core/remote/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/checksum.h"
#include "core/error.h"

namespace shardkit::remote {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTmpPrefix = ".tmp-";
// Temporary names are unique per process (pid) and, across the caches of one process, by this.
std::atomic<uint64_t> tmp_counter{0};

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
}  // namespace

DiskCache::DiskCache(std::string dir, uint64_t limit_bytes)
    : dir_(std::move(dir)), limit_(limit_bytes) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_))
    throw Error(ErrorCode::kIo, dir_, "cannot create the remote cache directory: " + ec.message());
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  approx_bytes_ = total;
  epoch_started_ = now_ns();
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
  const struct timespec times[2] = {{0, UTIME_OMIT}, consumed_stamp()};
  ::utimensat(AT_FDCWD, (dir_ + "/" + key).c_str(), times, AT_SYMLINK_NOFOLLOW);
}

std::string DiskCache::key(const std::string& url, uint64_t version, uint64_t offset, size_t size) {
  return checksum_hex(xxh3_64(url.data(), url.size())) + "-" + checksum_hex(version) + "-" +
         std::to_string(offset) + "-" + std::to_string(size);
}

bool DiskCache::get(const std::string& key, size_t size, unsigned char* out, bool consumed) {
  const std::string path = dir_ + "/" + key;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) == size;
  size_t done = 0;
  while (ok && done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      ok = false;
    else
      done += static_cast<size_t>(n);
  }
  if (ok) {
    if (consumed) {
      const struct timespec times[2] = {{0, UTIME_OMIT}, consumed_stamp()};
      ::futimens(fd, times);
    } else {
      ::futimens(fd, nullptr);  // wanted soon: evicted last
    }
  }
  ::close(fd);
  if (ok) hits_.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

void DiskCache::put(const std::string& key, const unsigned char* data, size_t size, bool consumed) {
  if (size > limit_) return;
  const std::string tmp = dir_ + "/" + kTmpPrefix + std::to_string(::getpid()) + "-" +
                          std::to_string(tmp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  size_t done = 0;
  while (ok && done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      ok = false;
    else
      done += static_cast<size_t>(n);
  }
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  // rename() publishes the file whole; a reader sees the old name's file or the new one.
  if (ok && ::rename(tmp.c_str(), (dir_ + "/" + key).c_str()) != 0) ok = false;
  if (!ok) {
    ::unlink(tmp.c_str());
    write_failures_.fetch_add(1, std::memory_order_relaxed);
    // Most likely the disk is full: free half of what the cache holds for the next writes.
    evict(std::min(limit_, approx_bytes_.load()) / 2);
    return;
  }
  // Stamped after the rename: a temporary file with an old time would look abandoned.
  if (consumed) mark_consumed(key);
  writes_.fetch_add(1, std::memory_order_relaxed);
  if (approx_bytes_.fetch_add(size) + size > limit_) evict(limit_ / 10 * 9);
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
  struct File {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<File> files;
  uint64_t total = 0;
  const uint64_t counted_before = approx_bytes_.load();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec)) continue;
    const uint64_t bytes = e.file_size(ec);
    if (ec) continue;
    total += bytes;
    // Another process's temporary file is its business, unless it was abandoned long ago.
    if (name.rfind(kTmpPrefix, 0) == 0) {
      const auto age = fs::file_time_type::clock::now() - e.last_write_time(ec);
      if (!ec && age > std::chrono::minutes(10)) files.push_back({e.path(), bytes, {}});
      continue;
    }
    files.push_back({e.path(), bytes, e.last_write_time(ec)});
  }
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.used < b.used; });
  for (const File& f : files) {
    if (total <= target_bytes) break;
    if (fs::remove(f.path, ec)) {
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
