// A directory built under a hidden staging name beside its final path and moved into place by
// one rename, so that a crash at any moment leaves either no dataset or a complete one.
//
// A staging directory is `.NAME.partial-PID-RANDOM` and holds, until it is published, a marker
// file `.shardkit-staging` naming its writer (pid, boot id, process start time, host, PID
// namespace; format/SPEC.md). A new writer removes the staging directories beside its target
// whose marker names a writer on this host that is gone, and the empty ones of gone pids (a writer
// killed between mkdir and marker): nothing without that name, and nothing a marker does not vouch
// for.
#pragma once

#include <filesystem>
#include <string>

namespace shardkit {

class StagedDirectory {
 public:
  // Refuses (Error kExists) when final_path exists and overwrite is false, or when it exists and
  // is neither an empty directory nor a dataset (a directory with a manifest.json). Removes the
  // staging directories beside it that writers which are gone left (see above).
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

// Refuses (Error kExists) an output `path` that exists, unless `overwrite` and it is replaceable:
// an empty directory or a dataset holding only its own files. One that --force would not replace
// either says why, so that a user is not told to pass --force where --force is refused too.
// StagedDirectory checks this; a command checks it before its work, to fail at once.
void check_output_place(const std::filesystem::path& path, bool overwrite);

// fsync on a directory, so that renames and creations inside it are durable.
void fsync_directory(const std::filesystem::path& dir);

// For programs (shardify): blocks SIGINT, SIGTERM and SIGHUP in the calling thread, which must
// be the only one so far (threads started later inherit the mask), and starts a thread that waits
// for them and for SIGPIPE (a closed terminal or pipe). It removes the staging and scratch
// directories this process is building, then ends the process by the same signal. A signal
// ignored on entry stays ignored. Once; later calls do nothing.
void remove_staging_on_signals();
// A working directory that is never published (the local copy of an s3:// output), made and
// marked under `parent` as the staging directory of a target `name` that never appears. So it is
// removed by its destructor and on the signals above, and one that a killed run left is removed
// by the next writer there, as a staging directory is.
class ScratchDirectory {
 public:
  ScratchDirectory(const std::filesystem::path& parent, const std::string& name);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace shardkit
