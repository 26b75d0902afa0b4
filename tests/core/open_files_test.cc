// Opening a local dataset's files: a relative path names the same dataset after the process
// changes directory, a dataset of more shards than the process may open files reads whole, and
// a manifest that cannot be opened says why. Limits are lowered in a child process (fork), so
// that the test's own process keeps its descriptors.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/shard_file.h"
#include "test_util.h"

using namespace shardkit;
using shardkit::testing::TempDir;

namespace {

// One int64 field "v": record i holds base + i. Blocks of 8 records; every block closes its
// shard, so `records` / 8 shards.
void write_counting(const std::filesystem::path& dir, uint64_t records, int64_t base) {
  WriterOptions wo;
  wo.block_bytes = 8 * sizeof(int64_t);
  wo.shard_bytes = 1;
  DatasetWriter w(dir, Schema({{"v", DType::kI64, {}}}), wo);
  for (uint64_t i = 0; i < records; ++i) {
    const int64_t v = base + static_cast<int64_t>(i);
    w.append(&v);
  }
  w.finish();
}

// No decoded block kept: every read goes to the shard's file.
Dataset open_uncached(const std::filesystem::path& dir) {
  DatasetOptions o;
  o.cache_bytes = 0;
  return Dataset::open(dir, o);
}

int64_t value(const Dataset& ds, uint64_t i) {
  int64_t v = 0;
  ds.read(i, &v);
  return v;
}

// Records of `ds` from `first` on that do not hold base + i.
uint64_t mismatches(const Dataset& ds, int64_t base, uint64_t first = 0) {
  uint64_t bad = 0;
  for (uint64_t i = first; i < ds.size(); ++i)
    if (value(ds, i) != base + static_cast<int64_t>(i)) ++bad;
  return bad;
}

// Runs `body` in a child process with RLIMIT_NOFILE at `limit` (soft and hard); the child's
// exit status is body's return value, 99 for an exception (its message on stderr).
int in_child_with_file_limit(rlim_t limit, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 98;
    const rlimit r{limit, limit};
    if (::setrlimit(RLIMIT_NOFILE, &r) == 0) {
      try {
        code = body();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        code = 99;
      }
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Changes directory for a scope.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::filesystem::path& dir)
      : saved_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~WorkingDirectory() { std::filesystem::current_path(saved_); }
  void change(const std::filesystem::path& dir) const { std::filesystem::current_path(dir); }

 private:
  std::filesystem::path saved_;
};

}  // namespace

TEST_CASE("a dataset opened by a relative path reads its own shards after a change of directory") {
  TempDir tmp("open");
  std::filesystem::create_directories(tmp / "a");
  std::filesystem::create_directories(tmp / "b");
  // Two datasets of the same name and schema: in b, another size and other values.
  write_counting(tmp / "a" / "ds", 160, 0);
  write_counting(tmp / "b" / "ds", 80, 1000000);
  WorkingDirectory cwd(tmp / "a");
  const Dataset ds = open_uncached("ds");
  CHECK(value(ds, 0) == 0);  // opens shard 0 only
  cwd.change(tmp / "b");
  CHECK(mismatches(ds, 0) == 0);
  // Errors still name the dataset as it was given.
  CHECK(ds.path() == std::filesystem::path("ds"));
  CHECK(ds.shard(3).path() ==
        (std::filesystem::path("ds") / ds.manifest().shards[3].name).string());
}

TEST_CASE("pread reads a dataset of more shards than the process may open files, twice") {
  TempDir tmp("open");
  write_counting(tmp / "ds", 8 * 200, 7);  // 200 shards
  const int status = in_child_with_file_limit(64, [&] {
    const Dataset ds = open_uncached(tmp / "ds");
    if (ds.manifest().shards.size() != 200) return 10;
    if (mismatches(ds, 7) != 0) return 11;
    if (mismatches(ds, 7) != 0) return 12;  // the shards closed on the way are opened again
    return 0;
  });
  CHECK(status == 0);
}

TEST_CASE("a shard opened again after its descriptor was closed must be the same file") {
  TempDir tmp("open");
  write_counting(tmp / "ds", 8 * 200, 0);
  const std::string first_shard = (tmp / "ds" / "shard-00000.shard").string();
  const int status = in_child_with_file_limit(64, [&] {
    const Dataset ds = open_uncached(tmp / "ds");
    if (ds.shard(0).path() != first_shard) return 10;
    value(ds, 0);
    if (mismatches(ds, 0, 8) != 0) return 11;  // the other shards close shard 0's descriptor
    // The same bytes in another file, renamed over the shard.
    std::filesystem::copy_file(first_shard, first_shard + ".copy");
    std::filesystem::rename(first_shard + ".copy", first_shard);
    try {
      value(ds, 1);
      return 12;
    } catch (const Error& e) {
      // Not kCorrupt, which on_corrupt=skip would take for damage to stand other blocks in for.
      if (e.code() != ErrorCode::kIo || e.file() != first_shard) return 13;
      if (e.reason().find("replaced") == std::string::npos) return 14;
    }
    return 0;
  });
  CHECK(status == 0);
}

TEST_CASE("a manifest that cannot be opened for want of descriptors says so, not 'no manifest'") {
#if defined(__SANITIZE_ADDRESS__)
  // UBSan's runtime opens a pipe to check an object's dynamic type as the error is thrown, and
  // with no descriptor left it reports a false "invalid vptr": this case runs in the plain build.
  MESSAGE("not run under the sanitizers, which need a free descriptor themselves");
  return;
#endif
  TempDir tmp("open");
  write_counting(tmp / "ds", 16, 0);
  // What the system calls running out of descriptors, from the C library, not shardkit.
  const std::string emfile = std::strerror(EMFILE);
  const int status = in_child_with_file_limit(32, [&] {
    while (::dup(STDIN_FILENO) >= 0) {
    }
    if (errno != EMFILE) return 10;
    try {
      Dataset::open(tmp / "ds");
      return 11;
    } catch (const Error& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      const std::string what = e.what();
      if (what.find(emfile) == std::string::npos) return 12;
      if (what.find("not a shardkit dataset") != std::string::npos) return 13;
    }
    return 0;
  });
  CHECK(status == 0);
}
