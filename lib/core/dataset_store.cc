#include "core/dataset_store.h"

#include "core/error.h"
#include "core/remote/remote_store.h"

namespace shardkit {
namespace {

class LocalStore : public DatasetStore {
 public:
  LocalStore(std::string dir, ReadMode mode) : dir_(std::move(dir)), mode_(mode) {}
  const std::string& location() const override { return dir_; }
  Manifest load_manifest() const override { return Manifest::load(dir_); }
  std::unique_ptr<BlockSource> open_shard(const ShardEntry& shard) const override {
    return open_file_source(std::filesystem::path(dir_) / shard.name, mode_);
  }

 private:
  std::string dir_;
  ReadMode mode_;
};

}  // namespace

std::shared_ptr<DatasetStore> open_store(const std::string& location,
                                         const SourceOptions& options) {
  if (is_remote_location(location)) return remote::open_remote_store(location, options);
  if (location_scheme(location) == Scheme::kUnknown)
    throw Error(ErrorCode::kUnsupported, location,
                "unknown URL scheme: datasets are read from a directory, http(s):// or s3://");
  return std::make_shared<LocalStore>(location, options.read_mode);
}

}  // namespace shardkit
