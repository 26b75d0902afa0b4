// A directory built under a hidden staging name beside its final path and moved into place by
// one rename, so that a crash at any moment leaves either no dataset or a complete one.
#pragma once

#include <filesystem>

namespace shardkit {

class StagedDirectory {
 public:
  // Refuses (Error kExists) when final_path exists and overwrite is false, or when it exists and
  // is neither an empty directory nor a dataset (a directory with a manifest.json). Removes
  // staging directories of earlier runs of the same target whose process is gone.
  StagedDirectory(std::filesystem::path final_path, bool overwrite);
  // Removes the staging directory unless publish() succeeded.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& final_path() const { return final_; }

  // fsyncs the staged files' directory, renames it to the final path (atomically exchanging
  // with an existing dataset when overwriting), fsyncs the parent and removes the old copy.
  void publish();

 private:
  std::filesystem::path final_;
  std::filesystem::path staging_;
  bool overwrite_;
  bool published_ = false;
};

// fsync on a directory, so that renames and creations inside it are durable.
void fsync_directory(const std::filesystem::path& dir);

}  // namespace shardkit
