#include "core/dataset_store.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "core/remote/remote_store.h"

namespace shardkit {
namespace {

// A relative directory is resolved once, when the dataset is opened: shards are opened later,
// when first read, and the process may have changed directory by then. Errors name the
// directory as given.
class LocalStore : public DatasetStore {
 public:
  LocalStore(std::string dir, ReadMode mode)
      : dir_(std::move(dir)), absolute_(absolute_or_given(dir_)), mode_(mode) {}
  const std::string& location() const override { return dir_; }
  Manifest load_manifest() const override { return Manifest::load(dir_); }
  std::unique_ptr<BlockSource> open_shard(const ShardEntry& shard) const override {
    return open_file_source(absolute_ / shard.name, mode_,
                            (std::filesystem::path(dir_) / shard.name).string());
  }

 private:
  // The path as given when the working directory cannot be read (getcwd fails).
  static std::filesystem::path absolute_or_given(const std::string& dir) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(dir, ec);
    return ec ? std::filesystem::path(dir) : p;
  }

  std::string dir_;
  std::filesystem::path absolute_;
  ReadMode mode_;
};

// A client never sends a URL's fragment: the requests would go to the path before the '#', with
// the rest of the URL dropped or, joined to an object's name, in the wrong place. What follows
// the '#' may be a token, so the message shows the URL only up to it (its secrets hidden first:
// a '#' typed into a password would otherwise leave the start of the password before the cut).
[[noreturn]] void refuse_fragment(const std::string& url) {
  std::string shown = without_secrets(url);
  shown.resize(std::min(shown.size(), url_fragment_start(shown)));
  throw Error(ErrorCode::kInvalidArgument, shown,
              "the URL holds a '#', which begins a fragment that is never sent to a server (what "
              "follows it is not shown); remove it, or write a '#' that belongs to the path, a "
              "password or a token as %23");
}

// A location copied from a browser's address bar names the manifest; the dataset is its
// directory, which the message gives. A local directory named manifest.json is a dataset's name.
void refuse_manifest_location(const std::string& location) {
  const std::optional<std::string> dataset = dataset_of_manifest(location);
  if (!dataset) return;
  const bool remote = is_remote_location(location);
  std::error_code ec;
  if (!remote && std::filesystem::is_directory(location, ec)) return;
  throw Error(ErrorCode::kInvalidArgument, location,
              std::string("names the dataset's manifest.json, not the dataset: give the "
                          "dataset's directory") +
                  (remote ? " URL, " : ", ") + *dataset);
}

}  // namespace

std::shared_ptr<DatasetStore> open_store(const std::string& location,
                                         const SourceOptions& options) {
  if (location_scheme(location) == Scheme::kUnknown)
    throw Error(ErrorCode::kUnsupported, location,
                "unknown URL scheme: datasets are read from a directory, http(s):// or s3://");
  const bool remote = is_remote_location(location);
  if (remote && url_fragment_start(location) != std::string::npos) refuse_fragment(location);
  refuse_manifest_location(location);
  if (remote) return remote::open_remote_store(location, options);
  return std::make_shared<LocalStore>(location, options.read_mode);
}

}  // namespace shardkit
