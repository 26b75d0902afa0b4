// The remote cache owns only what it wrote: a cache_dir that holds the user's own files (beside
// the cache, behind a symbolic link, named like cache files, planted inside the cache as links or
// FIFOs) keeps every one of them through epochs, eviction and a full disk, and no planted file
// makes a reader hang. The full-disk case runs under enospc_shim.c (CMakeLists.txt). A write that
// fails for another reason than a full disk keeps what the cache holds.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/manifest.h"
#include "core/remote/disk_cache.h"
#include "remote_test_util.h"

using namespace shardkit;
using namespace shardkit::loader;
namespace fs = std::filesystem;
namespace t = shardkit::testing;
using remote::DiskCache;

namespace {

// Files of a user's, all dated 2000-01-01: older than anything the cache writes, so a cache that
// evicted the oldest files of its folder would take them first.
std::map<fs::path, std::string> plant_user_files(const fs::path& dir,
                                                 const std::vector<std::string>& names,
                                                 size_t bytes = 3000) {
  std::map<fs::path, std::string> files;
  std::mt19937 rng(7);
  for (const std::string& name : names) {
    std::string content(bytes, '\0');
    for (char& c : content) c = static_cast<char>(rng());
    fs::create_directories((dir / name).parent_path());
    t::write_file(dir / name, content);
    const struct timeval old[2] = {{946684800, 0}, {946684800, 0}};
    ::utimes((dir / name).c_str(), old);
    files[dir / name] = content;
  }
  return files;
}

void check_intact(const std::map<fs::path, std::string>& files) {
  for (const auto& [path, content] : files) {
    CHECK_MESSAGE(fs::is_regular_file(path), path << " is gone");
    if (fs::is_regular_file(path)) CHECK_MESSAGE(t::read_file(path) == content, path);
  }
}

LoaderOptions cached_options(const fs::path& cache_dir, uint64_t limit) {
  LoaderOptions o = t::remote_options(3);
  o.source.cache_dir = cache_dir.string();
  o.source.cache_limit = limit;
  return o;
}

// Three epochs from the URL equal to the local copy's; the evictions they caused.
uint64_t run_epochs(const t::ServedDataset& s, const LoaderOptions& o) {
  Loader local(s.local(), o);
  Loader remote(s.url(), o);
  for (uint64_t epoch : {0u, 1u, 2u}) {
    local.set_epoch(epoch);
    remote.set_epoch(epoch);
    REQUIRE(t::all_batches(remote) == t::all_batches(local));
  }
  return remote.dataset().io_stats().cache_evictions;
}

// Ends the process when the body runs past `seconds`: a hang fails the test instead of stalling
// the suite.
class Watchdog {
 public:
  Watchdog(int seconds, std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      for (int i = 0; i < seconds * 10 && !done_; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!done_) {
        fprintf(stderr, "FAILED: hung for %d s: %s\n", seconds, what_.c_str());
        std::_Exit(3);
      }
    });
  }
  ~Watchdog() {
    done_ = true;
    thread_.join();
  }

 private:
  std::string what_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("a cache_dir holding the user's files keeps every one of them through eviction") {
  t::ServedDataset s;
  const fs::path mine = s.tmp / "my-folder";
  const auto files =
      plant_user_files(mine, {"vm-disk.img", "notes.txt", "todo.md", "photos/cat.jpg",
                              // a name of the cache's own form, outside the cache's directory
                              "0123456789abcdef-0123456789abcdef-0-4096"});
  const uint64_t evicted = run_epochs(s, cached_options(mine, 64 << 10));
  MESSAGE(evicted << " cache files evicted");
  CHECK(evicted > 0);
  check_intact(files);
  CHECK(fs::is_regular_file(mine / DiskCache::kOwnedDir / DiskCache::kTagFile));
  // Nothing of the cache's lies outside its own directory.
  std::set<std::string> top;
  for (const auto& e : fs::directory_iterator(mine)) top.insert(e.path().filename().string());
  CHECK(top == std::set<std::string>{"0123456789abcdef-0123456789abcdef-0-4096", "notes.txt",
                                     "photos", DiskCache::kOwnedDir, "todo.md", "vm-disk.img"});
}

TEST_CASE("a cache_dir that is a symbolic link: the files in the folder it names are kept") {
  t::ServedDataset s;
  const fs::path thesis = s.tmp / "thesis";
  std::vector<std::string> names;
  for (int i = 1; i <= 10; ++i) names.push_back("thesis_chapter_" + std::to_string(i) + ".docx");
  const auto files = plant_user_files(thesis, names);
  fs::create_directory_symlink(thesis, s.tmp / "cache-link");
  CHECK(run_epochs(s, cached_options(s.tmp / "cache-link", 64 << 10)) > 0);
  check_intact(files);
}

TEST_CASE("links and FIFOs planted in the cache's directory are neither followed nor waited on") {
  t::ServedDataset s;
  const fs::path cache_dir = s.tmp / "c";
  const LoaderOptions o = cached_options(cache_dir, 64 << 20);
  {
    Loader filler(s.url(), o);
    t::all_batches(filler);
  }
  // Every cached block replaced: even ones by links to the user's files, odd ones by FIFOs.
  const fs::path owned = cache_dir / DiskCache::kOwnedDir;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(owned))
    if (DiskCache::is_own_name(e.path().filename().string()))
      names.push_back(e.path().filename().string());
  REQUIRE(names.size() > 10);
  std::vector<std::string> targets;
  for (size_t i = 0; i < names.size(); ++i) targets.push_back("doc" + std::to_string(i) + ".txt");
  const auto files = plant_user_files(s.tmp / "docs", targets);
  for (size_t i = 0; i < names.size(); ++i) {
    fs::remove(owned / names[i]);
    if (i % 2 == 0)
      fs::create_symlink(s.tmp / "docs" / targets[i], owned / names[i]);
    else
      REQUIRE(::mkfifo((owned / names[i]).c_str(), 0644) == 0);
  }
  {
    Watchdog watchdog(120, "a loader over a cache holding FIFOs");
    CHECK(run_epochs(s, cached_options(cache_dir, 64 << 10)) > 0);
  }
  check_intact(files);
}

TEST_CASE("a directory named like the cache's that the cache did not create is refused") {
  t::ServedDataset s;
  // A folder of the user's that happens to have the name.
  const fs::path taken = s.tmp / "taken";
  const auto files = plant_user_files(taken / DiskCache::kOwnedDir, {"mine.txt"});
  try {
    Loader l(s.url(), cached_options(taken, 64 << 10));
    FAIL("a directory without shardkit's tag was used");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIo);
    CHECK(e.file() == (taken / DiskCache::kOwnedDir).string());
    CHECK(std::string(e.what()).find("not created by shardkit") != std::string::npos);
  }
  // A link of that name, to a folder of the user's.
  const fs::path linked = s.tmp / "linked";
  fs::create_directories(linked);
  const auto more = plant_user_files(s.tmp / "elsewhere", {"a.txt", "b.txt"});
  fs::create_directory_symlink(s.tmp / "elsewhere", linked / DiskCache::kOwnedDir);
  try {
    Loader l(s.url(), cached_options(linked, 64 << 10));
    FAIL("a symbolic link was followed into the user's folder");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("symbolic link") != std::string::npos);
  }
  check_intact(files);
  check_intact(more);
  CHECK(fs::directory_iterator(s.tmp / "elsewhere") != fs::directory_iterator());
  CHECK(!fs::exists(s.tmp / "elsewhere" / DiskCache::kTagFile));
}

TEST_CASE("the cache's names: keys and temporary files, nothing else") {
  CHECK(DiskCache::is_own_name(DiskCache::key("http://h/x", 9, 4096, 512)));
  CHECK(DiskCache::is_own_name(".tmp-1234-7"));
  for (const char* other : {"notes.txt", "CACHEDIR.TAG", "0123456789abcdef-0123456789abcdef-1",
                            "0123456789abcdeF-0123456789abcdef-1-2", ".tmp-12", ".tmp-1-2.swp",
                            "0123456789abcdef-0123456789abcdef-1-2-3", ""})
    CHECK_MESSAGE(!DiskCache::is_own_name(other), other);
}

TEST_CASE("eviction leaves another process's temporary file, and takes an abandoned one first") {
  t::TempDir dir("cache-tmp");
  DiskCache cache(dir.path().string(), 64 << 10);
  const fs::path own = dir.path() / DiskCache::kOwnedDir;
  // Another process is writing a large block now; one died writing, long ago.
  const std::string writing(256 << 10, 'w');
  t::write_file(own / ".tmp-4242-1", writing);
  t::write_file(own / ".tmp-4243-1", std::string(1000, 'a'));
  const struct timeval old[2] = {{946684800, 0}, {946684800, 0}};
  ::utimes((own / ".tmp-4243-1").c_str(), old);
  const std::vector<unsigned char> block(8 << 10, 7);
  for (uint64_t k = 0; k < 24; ++k)
    cache.put(DiskCache::key("http://h/x", 1, k * block.size(), block.size()), block.data(),
              block.size(), true);
  CHECK(cache.stats().evicted_files > 0);
  CHECK_MESSAGE(fs::is_regular_file(own / ".tmp-4242-1"), "a live temporary file was evicted");
  if (fs::is_regular_file(own / ".tmp-4242-1")) CHECK(t::read_file(own / ".tmp-4242-1") == writing);
  CHECK_MESSAGE(!fs::exists(own / ".tmp-4243-1"), "an abandoned temporary file was kept");
}

// Run in a process of its own (CMakeLists.txt), as the first cache of its process. Processes in
// different PID namespaces (pods or containers on one node sharing a hostPath cache_dir) can have
// the same process ID; the names such a process is writing under now, planted here, must not be
// taken. Before, each process counted its temporary names from 0: the first cache of a process
// could not be created (`File exists`), and every colliding write failed and evicted half the
// cache.
TEST_CASE("another process with the same process ID writing to the cache: no name is shared") {
  t::TempDir dir("cache-same-pid");
  const std::string pid = std::to_string(::getpid());
  const std::string other = "another process's bytes";
  std::vector<fs::path> planted;
  for (int k = 0; k < 64; ++k)
    planted.push_back(dir.path() / (std::string(".") + DiskCache::kOwnedDir + ".new-" + pid + "-" +
                                    std::to_string(k)));
  for (const fs::path& p : planted) fs::create_directories(p);
  DiskCache cache(dir.path().string(), 1 << 20);
  const fs::path own = dir.path() / DiskCache::kOwnedDir;
  for (int k = 0; k < 64; ++k) {
    planted.push_back(own / (".tmp-" + pid + "-" + std::to_string(k)));
    t::write_file(planted.back(), other);
  }
  const std::vector<unsigned char> block(4096, 7);
  std::vector<unsigned char> back(block.size());
  for (uint64_t k = 0; k < 32; ++k) {
    const std::string key = DiskCache::key("http://h/x", 1, k * block.size(), block.size());
    cache.put(key, block.data(), block.size(), false);
    CHECK(cache.get(key, back.size(), back.data(), true));
  }
  CHECK(cache.stats().write_failures == 0);
  CHECK(cache.stats().evicted_files == 0);
  for (const fs::path& p : planted) {
    INFO(p);
    if (p.filename().string()[1] == 't') CHECK(t::read_file(p) == other);
    CHECK(fs::exists(p));
  }
}

namespace {

// One epoch of a served dataset through a loader caching in `dir`, checked batch for batch
// against the local copy; its I/O counts.
IoStats remote_epoch_cached_in(const fs::path& dir) {
  t::ServedDataset s;
  LoaderOptions o = cached_options(dir, 4ull << 30);
  Loader local(s.local(), o);
  Loader remote(s.url(), o);
  CHECK(t::all_batches(remote) == t::all_batches(local));
  return remote.dataset().io_stats();
}

}  // namespace

// Run with enospc_shim.c preloaded and SHARDKIT_TEST_FULL_DIR / SHARDKIT_TEST_FULL_BYTES set
// (CMakeLists.txt): the directory behaves as a file system that is full past that many bytes.
TEST_CASE("a full disk: caching is skipped, batches are unchanged and the user's files stay") {
  const char* full_dir = std::getenv("SHARDKIT_TEST_FULL_DIR");
  const char* full_bytes = std::getenv("SHARDKIT_TEST_FULL_BYTES");
  REQUIRE_MESSAGE(full_dir != nullptr, "run by CTest with the ENOSPC shim preloaded");
  REQUIRE(full_bytes != nullptr);
  const fs::path full = full_dir;
  fs::remove_all(full);
  fs::create_directories(full);
  // The shim is active: a write past the capacity fails.
  {
    FILE* f = fopen((full / "probe").c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string big(std::strtoull(full_bytes, nullptr, 10) + 1, 'x');
    CHECK(::write(fileno(f), big.data(), big.size()) < 0);
    CHECK(errno == ENOSPC);
    fclose(f);
    fs::remove(full / "probe");
  }
  const auto files = plant_user_files(full, {"keep.txt", "0123456789abcdef-0123456789abcdef-0-9"});
  const IoStats io = remote_epoch_cached_in(full);
  MESSAGE("full disk: " << io.cache_write_failures << " failed writes, " << io.cache_evictions
                        << " evictions");
  CHECK(io.cache_write_failures > 0);
  CHECK(io.cache_evictions > 0);
  check_intact(files);
  fs::remove_all(full);
}

// Run under the shim as above, and on a real full tmpfs (on_full_tmpfs.sh, as root): cache_dir
// is already full when the cache is first used, before shardkit-cache/ and its tag exist.
TEST_CASE("a full disk when the cache is first used: caching is skipped, batches are unchanged") {
  const char* full_dir = std::getenv("SHARDKIT_TEST_FULL_DIR");
  REQUIRE_MESSAGE(full_dir != nullptr, "run by CTest on a full directory");
  const fs::path full = full_dir;
  // Emptied, not removed: it may be a mount point.
  fs::create_directories(full);
  for (const auto& e : fs::directory_iterator(full)) fs::remove_all(e.path());
  uint64_t filled = 0;
  {
    FILE* f = fopen((full / "filler").c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string chunk(4096, 'f');
    for (size_t size : {chunk.size(), size_t{1}})
      while (::write(fileno(f), chunk.data(), size) == ssize_t(size)) filled += size;
    CHECK(errno == ENOSPC);
    fclose(f);
  }
  MESSAGE("filled with " << filled << " bytes");
  const IoStats io = remote_epoch_cached_in(full);
  MESSAGE("first use on a full disk: " << io.cache_write_failures << " skipped writes");
  CHECK(io.cache_write_failures > 0);
  CHECK(io.cache_hits == 0);
  // Nothing left behind but the user's file, whole.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(full)) left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"filler"});
  CHECK(fs::file_size(full / "filler") == filled);
  for (const auto& e : fs::directory_iterator(full)) fs::remove_all(e.path());
}

// Run on a real read-only tmpfs (on_full_tmpfs.sh with TMPFS_OPTIONS=ro, as root): a cache_dir
// that cannot be created there is an error naming it and why. Before, the reason given was the
// open that followed: "No such file or directory".
TEST_CASE("a cache_dir on a read-only file system: the error says so") {
  const char* dir = std::getenv("SHARDKIT_TEST_FULL_DIR");
  REQUIRE_MESSAGE(dir != nullptr, "run by CTest on a read-only tmpfs");
  const fs::path cache_dir = fs::path(dir) / "cache";
  try {
    DiskCache cache(cache_dir.string(), 1 << 20);
    FAIL("a cache was made on a read-only file system");
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.file() == cache_dir.string());
    CHECK(message.find("cannot create the remote cache directory: Read-only file system") !=
          std::string::npos);
  }
  CHECK_FALSE(fs::exists(cache_dir));
}

namespace {

// What the code under test writes to stderr while this lives (file descriptor 2, redirected to a
// file).
class CapturedStderr {
 public:
  explicit CapturedStderr(fs::path file) : file_(std::move(file)) {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~CapturedStderr() { restore(); }
  std::string text() {
    restore();
    return t::read_file(file_);
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  fs::path file_;
  int saved_ = -1;
};

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::vector<std::string> put_blocks(DiskCache& cache, const std::vector<unsigned char>& block,
                                    uint64_t count) {
  std::vector<std::string> keys;
  for (uint64_t k = 0; k < count; ++k) {
    keys.push_back(DiskCache::key("http://h/x", 1, k * block.size(), block.size()));
    cache.put(keys.back(), block.data(), block.size(), false);
  }
  return keys;
}

void check_still_cached(DiskCache& cache, const std::vector<std::string>& keys,
                        const std::vector<unsigned char>& block) {
  std::vector<unsigned char> back(block.size());
  for (const std::string& key : keys) {
    INFO(key);
    CHECK(cache.get(key, back.size(), back.data(), false));
    CHECK(back == block);
  }
}

}  // namespace

// Only a full disk or quota is cured by evicting. Before, any failed write (here: a directory
// that is not the cache's at a block's name, so the rename fails with EISDIR) evicted half of
// what the cache held, on every such write, and said nothing.
TEST_CASE("a write failing for another reason than a full disk keeps what the cache holds") {
  t::TempDir dir("cache-eisdir");
  DiskCache cache(dir.path().string(), 1 << 20);
  const fs::path own = dir.path() / DiskCache::kOwnedDir;
  const std::vector<unsigned char> block(4096, 7);
  const std::vector<std::string> keys = put_blocks(cache, block, 16);
  const std::string blocked = DiskCache::key("http://h/x", 1, 16 * block.size(), block.size());
  fs::create_directory(own / blocked);
  CapturedStderr err(dir / "stderr.txt");
  for (int i = 0; i < 3; ++i) cache.put(blocked, block.data(), block.size(), false);
  const std::string said = err.text();
  INFO(said);
  CHECK(cache.stats().write_failures == 3);
  CHECK(cache.stats().evicted_files == 0);
  check_still_cached(cache, keys, block);
  CHECK(fs::is_directory(own / blocked));
  CHECK(count_of(said, "shardkit: cannot write to the remote cache ") == 1);
  CHECK(said.find(own.string() + " (" + std::strerror(EISDIR) + ")") != std::string::npos);
}

namespace {

bool set_immutable(const fs::path& file, bool on) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
  ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

// Run on a real tmpfs (on_full_tmpfs.sh, as root: setting a file immutable and remounting need
// it). A block's file made immutable (a rewrite of it fails with EPERM), then the whole file
// system remounted read-only (EROFS): each failed write is skipped, nothing cached is lost, and
// the first failure is said once.
TEST_CASE("a cache whose file system turns unwritable mid-run keeps what it holds") {
  const char* dir = std::getenv("SHARDKIT_TEST_FULL_DIR");
  REQUIRE_MESSAGE(dir != nullptr, "run by CTest on a tmpfs");
  const fs::path mount = dir;
  for (const auto& e : fs::directory_iterator(mount)) fs::remove_all(e.path());
  t::TempDir log_dir("cache-unwritable");
  {
    DiskCache cache(mount.string(), 1 << 20);
    const fs::path own = mount / DiskCache::kOwnedDir;
    const std::vector<unsigned char> block(4096, 9);
    const std::vector<std::string> keys = put_blocks(cache, block, 8);
    REQUIRE(cache.stats().writes == 8);
    CapturedStderr err(log_dir / "stderr.txt");
    REQUIRE(set_immutable(own / keys[0], true));
    cache.put(keys[0], block.data(), block.size(), false);  // another process's copy, say
    CHECK(cache.stats().write_failures == 1);
    CHECK(cache.stats().evicted_files == 0);
    REQUIRE(set_immutable(own / keys[0], false));
    REQUIRE(std::system(("mount -o remount,ro '" + mount.string() + "'").c_str()) == 0);
    put_blocks(cache, std::vector<unsigned char>(2048, 3), 4);
    CHECK(std::system(("mount -o remount,rw '" + mount.string() + "'").c_str()) == 0);
    const std::string said = err.text();
    INFO(said);
    CHECK(cache.stats().write_failures == 5);
    CHECK(cache.stats().evicted_files == 0);
    check_still_cached(cache, keys, block);
    CHECK(count_of(said, "shardkit: cannot write to the remote cache ") == 1);
    CHECK(said.find(std::string("(") + std::strerror(EPERM) + ")") != std::string::npos);
  }
  for (const auto& e : fs::directory_iterator(mount)) fs::remove_all(e.path());
}
