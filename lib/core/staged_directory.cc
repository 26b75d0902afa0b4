#include "core/staged_directory.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/manifest.h"
#include "core/staging_marker.h"
#include "format/shard_format.h"

namespace shardkit {
namespace fs = std::filesystem;
namespace {

// The longest `.partial-PID-RANDOM`: a pid of up to 10 digits and RANDOM of up to 8.
constexpr size_t kStagingSuffixMax = std::string_view(".partial-").size() + 10 + 1 + 8;

// `.NAME.partial-`, with NAME cut (at a UTF-8 character's start) so that the whole staging name
// fits in NAME_MAX as the target's own name does: the marker, not the name, identifies it.
std::string staging_prefix(const fs::path& final_path) {
  const std::string name = final_path.filename().string();
  size_t keep = std::min(name.size(), size_t{NAME_MAX} - 1 - kStagingSuffixMax);
  while (keep > 0 && keep < name.size() && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80)
    --keep;
  return "." + name.substr(0, keep) + ".partial-";
}

// The directories this process is building: what the signal thread removes. Its mutex also
// orders that removal against publish(), so that a dataset is never published half-removed.
// Never destroyed: the signal thread may use it while the program exits.
struct Registry {
  std::mutex mutex;
  std::set<std::string> live;
  // Parent directories that a live staging directory's writer created, deepest first: removed
  // with it when it is not published (only while empty, so never another writer's).
  std::map<std::string, std::vector<fs::path>> created_parents;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

// Removes a staging directory with its marker last, so that a kill at any moment of the removal
// leaves it recognizable (marked, or empty) for the next writer's remove_stale_staging.
void remove_staging(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename() != kStagingMarker) fs::remove_all(entry.path(), ec);
  fs::remove(dir / kStagingMarker, ec);
  fs::remove_all(dir, ec);  // a file a writer thread added meanwhile goes too
}

// Every staging directory beside `final_path` (of any target) that a gone writer left:
// its marker names a writer of this host that has ended; or its pid is gone and it is empty or
// holds only a marker cut short.
void remove_stale_staging(const fs::path& final_path) {
  const fs::path parent =
      final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path();
  const std::string host = StagingOwner::current().host;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const auto pid = staging_name_pid(entry.path().filename().string());
    if (!pid || !fs::is_directory(fs::symlink_status(entry.path(), ec))) continue;
    if (const auto owner = read_staging_marker(entry.path())) {
      if (owner->pid == *pid && owner->host == host && owner->gone()) remove_staging(entry.path());
    } else if (::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH) {
      // A writer killed before its marker was whole left the directory empty or with a cut
      // marker; anything else in it is not known to be shardkit's.
      if (holds_only_cut_marker(entry.path())) fs::remove(entry.path() / kStagingMarker, ec);
      fs::remove(entry.path(), ec);  // only if empty: rmdir
    }
  }
}

// The marker goes in first, so that the directory is known for its writer's from the start.
// (Replaced when present: an old dataset may carry one from a crash right after its rename.)
void write_marker(const fs::path& staging) {
  const std::string text = StagingOwner::current().to_text();
  const fs::path marker = staging / kStagingMarker;
  const int fd =
      ::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  const bool ok =
      fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok)
    throw Error(ErrorCode::kIo, marker.string(),
                std::string("cannot write the staging marker: ") + std::strerror(err));
}

// The entries a replaced dataset's directory may hold: its manifest, the shards it lists, and
// a marker a crash right after its own publication left.
std::set<std::string> dataset_entries(const fs::path& target) {
  Manifest manifest;
  try {
    manifest = Manifest::load(target);
  } catch (const Error& e) {
    throw Error(ErrorCode::kExists, target.string(),
                "is not a shardkit dataset (" + e.reason() +
                    "); --force only replaces datasets (remove it yourself or choose another "
                    "output)");
  }
  std::set<std::string> entries{std::string(format::kManifestName), kStagingMarker};
  for (const ShardEntry& shard : manifest.shards) entries.insert(shard.name);
  return entries;
}

// --force replaces shardkit datasets and nothing else: an existing target must be an empty
// directory, or a dataset's directory holding only what its manifest names, so that neither a
// mistyped --out nor a file a user put beside the shards is ever deleted.
std::set<std::string> check_replaceable(const fs::path& target) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(target, ec);
  if (!fs::exists(st)) return {};
  if (!fs::is_directory(st))
    throw Error(ErrorCode::kExists, target.string(),
                "exists and is not a directory; --force only replaces shardkit datasets");
  if (fs::is_empty(target, ec)) return {};
  std::set<std::string> entries = dataset_entries(target);
  for (const auto& entry : fs::directory_iterator(target)) {
    const std::string name = entry.path().filename().string();
    const bool regular = fs::is_regular_file(fs::symlink_status(entry.path(), ec));
    if (!entries.count(name) || !regular)
      throw Error(ErrorCode::kExists, target.string(),
                  "holds " + name +
                      ", which is not a file of its dataset; --force only replaces what "
                      "shardkit wrote (move it out, or choose another output)");
  }
  return entries;
}

// Removes a replaced dataset, now under its staging name: the files its manifest named, the
// marker last. A file someone added after check_replaceable keeps the directory, unmarked, so
// that no later cleanup deletes it either.
void remove_replaced(const fs::path& dir, const std::set<std::string>& entries) {
  std::error_code ec;
  for (const std::string& name : entries)
    if (name != kStagingMarker) fs::remove(dir / name, ec);
  fs::remove(dir / kStagingMarker, ec);
  fs::remove(dir, ec);  // only if empty: rmdir
}

void fsync_parent(const fs::path& p) {
  fsync_directory(p.parent_path().empty() ? fs::path(".") : p.parent_path());
}

// Like `mkdir -p`: the dataset's own directory still appears by one rename in publish(); the
// parents made here are fsynced into their own parents so that a published dataset's path
// survives a crash. Returns the directories it made, deepest first.
std::vector<fs::path> create_parents(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  std::vector<fs::path> missing;
  for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path())
    missing.push_back(p);
  // The check after a failure gets an error code of its own: the creation's is the cause.
  std::error_code exists_ec;
  if (!fs::create_directories(dir, ec) && !fs::is_directory(dir, exists_ec))
    throw Error(ErrorCode::kIo, dir.string(),
                "cannot create the output's parent directory: " +
                    (ec ? ec.message() : std::string("not a directory")));
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) fsync_parent(*it);
  return missing;
}

// A failed or interrupted writer's parents: each goes if nothing else came into it meanwhile.
void remove_created_parents(const std::vector<fs::path>& parents) {
  std::error_code ec;
  for (const fs::path& dir : parents)
    if (!fs::remove(dir, ec)) return;  // not empty (or gone): its parents are not either
}

// Adds parents made by another attempt to `created`, keeping it deepest first.
void add_parents(std::vector<fs::path>& created, std::vector<fs::path> more) {
  for (fs::path& dir : more)
    if (std::find(created.begin(), created.end(), dir) == created.end())
      created.push_back(std::move(dir));
  std::stable_sort(created.begin(), created.end(), [](const fs::path& a, const fs::path& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
}

// Makes `staging` and the parents it lacks, and returns the parents made, with `registry_lock`
// held from the staging directory's creation on. Another writer that made the same new parent
// and failed removes it while it is still empty, which can fall between the parents' creation
// here and the staging directory's: then the parents are made again. Each retry needs another
// writer to have removed them, so a few suffice.
std::vector<fs::path> create_staging_directory(const fs::path& parent, const fs::path& staging,
                                               std::unique_lock<std::mutex>& registry_lock) {
  constexpr int kAttempts = 4;
  std::vector<fs::path> created;
  for (int attempt = 1;; ++attempt) {
    add_parents(created, create_parents(parent));
    registry_lock.lock();
    std::error_code ec;
    if (fs::create_directory(staging, ec)) return created;
    registry_lock.unlock();
    if (ec != std::errc::no_such_file_or_directory || attempt == kAttempts) {
      remove_created_parents(created);
      throw Error(ErrorCode::kIo, staging.string(),
                  "cannot create staging directory: " + ec.message());
    }
  }
}

// The path by which publish() renames the target: "out/" is "out", and ".", "out/." or "a/.."
// are named by their entry in their own parent.
fs::path entry_path(const fs::path& path) {
  fs::path p = path.lexically_normal();
  if (p.filename() == "." || p.filename() == "..") p = fs::absolute(p).lexically_normal();
  if (p.filename().empty() && p.has_relative_path()) p = p.parent_path();
  return p;
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

namespace {

// Makes the marked staging directory of `final_path` beside it, after removing those that gone
// writers left there, and registers it for the signal thread.
fs::path make_staging(const fs::path& final_path) {
  const fs::path parent =
      final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path();
  remove_stale_staging(final_path);
  std::random_device rd;
  const fs::path staging = parent / (staging_prefix(final_path) + std::to_string(::getpid()) + "-" +
                                     std::to_string(rd() & 0xffffff));
  std::unique_lock lock(registry().mutex, std::defer_lock);
  const std::vector<fs::path> created = create_staging_directory(parent, staging, lock);
  try {
    write_marker(staging);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    remove_created_parents(created);
    throw;
  }
  registry().live.insert(staging.string());
  if (!created.empty()) registry().created_parents[staging.string()] = created;
  return staging;
}

// Unregisters a staging directory and, unless it was published, removes it and the parents
// its writer made.
void release_staging(const fs::path& staging, bool published) {
  std::vector<fs::path> created;
  {
    std::lock_guard lock(registry().mutex);
    registry().live.erase(staging.string());
    if (auto it = registry().created_parents.find(staging.string());
        it != registry().created_parents.end()) {
      created = std::move(it->second);
      registry().created_parents.erase(it);
    }
  }
  if (published) return;
  remove_staging(staging);
  remove_created_parents(created);
}

}  // namespace

StagedDirectory::StagedDirectory(fs::path final_path, bool overwrite)
    : final_(entry_path(final_path)), overwrite_(overwrite) {
  check_output_place(final_, overwrite_);
  staging_ = make_staging(final_);
}

void check_output_place(const fs::path& path, bool overwrite) {
  const fs::path entry = entry_path(path);
  std::error_code ec;
  if (!overwrite && !fs::exists(fs::symlink_status(entry, ec))) return;
  // What --force would not replace either says so, rather than "pass --force".
  check_replaceable(entry);
  if (!overwrite)
    throw Error(ErrorCode::kExists, entry.string(), "already exists; pass --force to replace it");
}

StagedDirectory::~StagedDirectory() { release_staging(staging_, published_); }

ScratchDirectory::ScratchDirectory(const fs::path& parent, const std::string& name)
    : path_(make_staging(parent / name)) {}

ScratchDirectory::~ScratchDirectory() { release_staging(path_, false); }

// The marker stays through the rename, so that a crash at any moment leaves every staging
// directory recognizable: before the rename the staging directory has it; when replacing, the
// old dataset gets one first, since the exchange leaves it under the staging name to be removed.
// After the rename the new dataset's copy is removed (a crash just then leaves a small hidden
// file in the dataset, which readers never look at).
void StagedDirectory::publish() {
  // Held to the rename: the signal thread removes the staging directory before or not at all.
  std::unique_lock lock(registry().mutex);
  fsync_directory(staging_);
  const fs::path parent = final_.parent_path().empty() ? fs::path(".") : final_.parent_path();
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(final_, ec));
  if (exists && !overwrite_)
    throw Error(ErrorCode::kExists, final_.string(), "appeared while writing; not replaced");
  std::set<std::string> replaced;
  if (exists) {
    replaced = check_replaceable(final_);
    const bool marker_is_ours = !fs::exists(fs::symlink_status(final_ / kStagingMarker, ec));
    try {
      write_marker(final_);
    } catch (const Error&) {
      // A dataset directory one may not write into still swaps; only a crash in the next
      // milliseconds would then leave it unrecognized under the staging name.
    }
    // Swap in one step, so readers see the old dataset or the new one, never neither.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) != 0) {
      const int err = errno;
      if (marker_is_ours) fs::remove(final_ / kStagingMarker, ec);  // the target stays as it was
      throw Error(ErrorCode::kIo, final_.string(),
                  std::string("cannot replace it: rename: ") + std::strerror(err) +
                      (err == EBUSY ? " (a mount point or the current directory cannot be "
                                      "replaced; write the dataset beside it)"
                                    : ""));
    }
  } else if (::rename(staging_.c_str(), final_.c_str()) != 0) {
    throw Error(ErrorCode::kIo, final_.string(), std::string("rename: ") + std::strerror(errno));
  }
  published_ = true;
  lock.unlock();
  fs::remove(final_ / kStagingMarker, ec);
  fsync_directory(final_);
  fsync_directory(parent);
  if (exists) remove_replaced(staging_, replaced);  // now holds the old dataset, marked
}

namespace {

// The thread that waits for the signals below. SIGPIPE goes to the thread whose write found the
// pipe closed, where sigwait() in another thread never sees it: its handler passes it on.
pthread_t signal_waiter;

void forward_to_signal_waiter(int sig) { ::pthread_kill(signal_waiter, sig); }

bool ignored_on_entry(int sig) {
  // One ignored on entry (`trap '' INT`, `nohup`, a shell's background job) stays ignored:
  // sigwait() would take it even so.
  struct sigaction was {};
  return ::sigaction(sig, nullptr, &was) == 0 && was.sa_handler == SIG_IGN;
}

[[noreturn]] void remove_live_staging_and_die(int sig) {
  // Kept locked to the end: no staging directory is created or published any more.
  registry().mutex.lock();
  for (const std::string& dir : registry().live) {
    std::error_code ec;
    // Writer threads may add a file while it goes: a few passes.
    for (int pass = 0; pass < 5 && fs::exists(fs::symlink_status(dir, ec)); ++pass)
      remove_staging(dir);
    if (auto it = registry().created_parents.find(dir); it != registry().created_parents.end())
      remove_created_parents(it->second);
  }
  ::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);
}

}  // namespace

void remove_staging_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    sigset_t signals;
    sigemptyset(&signals);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE})
      if (!ignored_on_entry(sig)) sigaddset(&signals, sig);
    if (sigisemptyset(&signals)) return;
    // The waiter inherits the whole set blocked; this thread, and those it starts, keep SIGPIPE
    // unblocked so that its handler runs where the write failed.
    ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread waiter([signals] {
      int sig = 0;
      while (::sigwait(&signals, &sig) != 0) {
      }
      remove_live_staging_and_die(sig);
    });
    signal_waiter = waiter.native_handle();
    waiter.detach();
    if (sigismember(&signals, SIGPIPE)) {
      struct sigaction forward {};
      forward.sa_handler = forward_to_signal_waiter;
      sigemptyset(&forward.sa_mask);
      ::sigaction(SIGPIPE, &forward, nullptr);
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      ::pthread_sigmask(SIG_UNBLOCK, &pipe, nullptr);
    }
  });
}

}  // namespace shardkit
