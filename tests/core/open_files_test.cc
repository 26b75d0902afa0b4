// Opening a local dataset's files: a manifest that cannot be opened says why. Limits are lowered
// in a child process (fork), so that the test's own process keeps its descriptors.
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

}  // namespace

TEST_CASE("a manifest that cannot be opened for want of descriptors says so, not 'no manifest'") {
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
