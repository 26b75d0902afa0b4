#include "core/dataset_store.h"

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

}  // namespace

std::shared_ptr<DatasetStore> open_store(const std::string& location,
                                         const SourceOptions& options) {
  if (location_scheme(location) == Scheme::kUnknown)
    throw Error(ErrorCode::kUnsupported, location,
                "unknown URL scheme: datasets are read from a directory, http(s):// or s3://");
  const bool remote = is_remote_location(location);
  check_dataset_location(location, remote);
  if (remote) return remote::open_remote_store(location, options);
  return std::make_shared<LocalStore>(location, options.read_mode);
}

}  // namespace shardkit
