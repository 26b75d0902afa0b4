#include "core/remote/dataset_upload.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/location.h"
#include "core/manifest.h"
#include "core/remote/aws_credentials.h"
#include "core/remote/http_transport.h"
#include "format/shard_format.h"

namespace shardkit::remote {
namespace fs = std::filesystem;

namespace {
constexpr uint64_t kMaxSinglePut = 5ull << 30;  // S3's limit for one PUT
}

bool is_s3_url(const std::string& location) { return location_scheme(location) == Scheme::kS3; }

DatasetUpload::DatasetUpload(std::string location, bool force, const SourceOptions& options)
    : location_(std::move(location)), force_(force) {
  while (!location_.empty() && location_.back() == '/') location_.pop_back();
  if (!is_s3_url(location_))
    throw Error(ErrorCode::kInvalidArgument, location_,
                "a dataset can be written to a directory or to s3://bucket/prefix");
  const S3Location where = parse_s3_location(location_);
  if (where.prefix.empty())
    throw Error(ErrorCode::kInvalidArgument, location_,
                "give a prefix for the dataset: s3://bucket/prefix");
  base_url_ = where.base_url;
  concurrency_ = std::max(1u, options.remote_concurrency);
  transport_ = std::make_unique<HttpTransport>(options, load_aws_signing(location_));
  refuse_existing();
}

DatasetUpload::~DatasetUpload() = default;

void DatasetUpload::refuse_existing() {
  const std::string name(format::kManifestName);
  if (!force_ && transport_->exists(base_url_ + "/" + name, location_ + "/" + name))
    throw Error(ErrorCode::kExists, location_ + "/" + name,
                "a dataset exists there; --force replaces it");
}

UploadResult DatasetUpload::upload(const fs::path& local_dir) {
  const Manifest manifest = Manifest::load(local_dir);
  for (const ShardEntry& s : manifest.shards)
    if (s.bytes > kMaxSinglePut)
      throw Error(ErrorCode::kUnsupported, (local_dir / s.name).string(),
                  "a shard over 5 GiB cannot be uploaded in one PUT (multipart upload is not "
                  "implemented): convert with a smaller --shard-size");

  UploadResult result;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t i = next++; i < manifest.shards.size(); i = next++) {
      {
        std::lock_guard lock(mu);
        if (failure) return;
      }
      const ShardEntry& s = manifest.shards[i];
      try {
        transport_->put_file(base_url_ + "/" + s.name, location_ + "/" + s.name,
                             (local_dir / s.name).string());
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(concurrency_, manifest.shards.size());
  for (size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  // No manifest after a failed shard: the location holds no (new) dataset.
  if (failure) std::rethrow_exception(failure);

  refuse_existing();
  const std::string name(format::kManifestName);
  transport_->put_file(base_url_ + "/" + name, location_ + "/" + name, (local_dir / name).string());
  result.objects = manifest.shards.size() + 1;
  result.bytes = manifest.bytes_on_disk() + fs::file_size(local_dir / name);
  return result;
}

}  // namespace shardkit::remote
