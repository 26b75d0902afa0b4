#include "core/staged_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "core/error.h"

namespace shardkit {
namespace fs = std::filesystem;
namespace {

std::string staging_prefix(const fs::path& final_path) {
  return "." + final_path.filename().string() + ".partial-";
}

bool process_alive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

void remove_stale_staging(const fs::path& final_path) {
  const fs::path parent =
      final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path();
  const std::string prefix = staging_prefix(final_path);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (!process_alive(pid)) fs::remove_all(entry.path(), ec);
  }
}

// --force replaces datasets, nothing else: an existing target must be an empty directory or one
// with a manifest.json, so that a mistyped --out never deletes a user's folder or file.
void check_replaceable(const fs::path& target) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(target, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw Error(ErrorCode::kExists, target.string(),
                "exists and is not a directory; --force only replaces shardkit datasets");
  if (fs::is_empty(target, ec)) return;
  if (!fs::is_regular_file(fs::symlink_status(target / "manifest.json", ec)))
    throw Error(ErrorCode::kExists, target.string(),
                "is a directory without a manifest.json, not a shardkit dataset; --force only "
                "replaces datasets (remove it yourself or choose another output)");
}

}  // namespace

void fsync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorCode::kIo, dir.string(), std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0)
    throw Error(ErrorCode::kIo, dir.string(), std::string("fsync: ") + std::strerror(errno));
}

StagedDirectory::StagedDirectory(fs::path final_path, bool overwrite)
    : final_(std::move(final_path)), overwrite_(overwrite) {
  if (final_.filename().empty()) final_ = final_.parent_path();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(final_, ec)) && !overwrite_)
    throw Error(ErrorCode::kExists, final_.string(),
                "already exists; refusing to overwrite it (pass --force to replace it)");
  if (overwrite_) check_replaceable(final_);
  const fs::path parent = final_.parent_path().empty() ? fs::path(".") : final_.parent_path();
  if (!fs::is_directory(parent, ec))
    throw Error(ErrorCode::kIo, parent.string(), "output's parent directory does not exist");
  remove_stale_staging(final_);
  std::random_device rd;
  staging_ = parent / (staging_prefix(final_) + std::to_string(::getpid()) + "-" +
                       std::to_string(rd() & 0xffffff));
  if (!fs::create_directory(staging_, ec))
    throw Error(ErrorCode::kIo, staging_.string(),
                "cannot create staging directory: " + ec.message());
}

StagedDirectory::~StagedDirectory() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void StagedDirectory::publish() {
  fsync_directory(staging_);
  const fs::path parent = final_.parent_path().empty() ? fs::path(".") : final_.parent_path();
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(final_, ec));
  if (exists && !overwrite_)
    throw Error(ErrorCode::kExists, final_.string(), "appeared while writing; not replaced");
  if (exists) {
    check_replaceable(final_);
    // Swap in one step, so readers see the old dataset or the new one, never neither.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) != 0)
      throw Error(ErrorCode::kIo, final_.string(), std::string("rename: ") + std::strerror(errno));
    published_ = true;
    fsync_directory(parent);
    fs::remove_all(staging_, ec);  // now holds the old dataset
    return;
  }
  if (::rename(staging_.c_str(), final_.c_str()) != 0)
    throw Error(ErrorCode::kIo, final_.string(), std::string("rename: ") + std::strerror(errno));
  published_ = true;
  fsync_directory(parent);
}

}  // namespace shardkit
