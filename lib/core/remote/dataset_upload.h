// Publishing a dataset built on local disk to s3://bucket/prefix (shardify --out s3://..., and
// shardify merge): every shard first (parallel PUTs, at most remote_concurrency at once, with
// the transport's retries), manifest.json last. A dataset is its manifest, so a reader sees
// either no dataset or a complete one, never a partial one. An existing manifest is replaced
// only with `force`; objects of the older dataset that the new one does not name are left in
// place (shard names restart at shard-00000, so most are overwritten).
//
// One PUT per object: S3 takes up to 5 GiB in one PUT and shards are 256 MiB by default, so
// multipart upload is not implemented; a larger shard is refused before anything is sent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/block_source.h"

namespace shardkit::remote {

class HttpTransport;
struct S3Location;

// Whether an output location is an object-store URL (s3://).
bool is_s3_url(const std::string& location);

struct UploadResult {
  uint64_t objects = 0;  // shards plus the manifest
  uint64_t bytes = 0;
};

class DatasetUpload {
 public:
  // Reads credentials and checks at once that no dataset is at `location` (unless `force`),
  // so that a conversion fails before it starts rather than after. Throws Error(kExists,
  // location/manifest.json), or the transport's Error naming the URL.
  DatasetUpload(std::string location, bool force, const SourceOptions& options = {});
  ~DatasetUpload();

  // Uploads the dataset in `local_dir` (a published dataset directory): shards, then the
  // manifest, checking once more just before it that no other writer published one meanwhile.
  UploadResult upload(const std::filesystem::path& local_dir);

 private:
  void refuse_existing();

  std::string location_, base_url_;
  bool force_;
  unsigned concurrency_;
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace shardkit::remote
