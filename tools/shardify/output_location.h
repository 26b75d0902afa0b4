// Where a command writes its dataset. A directory is written in place (published atomically by
// the library). An s3:// location is checked first (credentials, no dataset there unless
// --force), built in a local staging directory, then uploaded shards-first, manifest last.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/location.h"
#include "core/remote/dataset_upload.h"
#include "core/staged_directory.h"

namespace shardify_cli {

// $TMPDIR (else TMP, TEMP, TEMPDIR, else /tmp, as std::filesystem reads them): where an s3://
// output is built. One that is not a directory is named with its variable.
inline std::filesystem::path temp_directory() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (!ec) return dir;
  for (const char* name : {"TMPDIR", "TMP", "TEMP", "TEMPDIR"})
    if (const char* value = std::getenv(name); value && *value)
      throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, value,
                            std::string(name) + " names no directory (" + ec.message() +
                                "): set it to a directory with room for the dataset");
  throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, "/tmp",
                        "TMPDIR is unset and /tmp is no directory (" + ec.message() +
                            "): set TMPDIR to a directory with room for the dataset");
}

class OutputLocation {
 public:
  // `stage_parent()`: where the local copy of an s3:// dataset is built (it needs the dataset's
  // size in free space); asked only for an s3:// output.
  OutputLocation(std::string out, bool force,
                 const std::function<std::filesystem::path()>& stage_parent)
      : out_(std::move(out)) {
    if (!shardkit::remote::is_s3_url(out_)) {
      if (shardkit::location_scheme(out_) != shardkit::Scheme::kLocal)
        throw shardkit::Error(shardkit::ErrorCode::kInvalidArgument, out_,
                              "datasets are written to a directory or to s3://bucket/prefix "
                              "(HTTP servers are read-only to shardkit)");
      local_ = out_;
      return;
    }
    const std::filesystem::path parent = stage_parent();  // a bad TMPDIR before any request
    upload_.emplace(out_, force);
    try {
      stage_.emplace(parent, "shardify-upload");
    } catch (const shardkit::Error& e) {
      throw shardkit::Error(shardkit::ErrorCode::kIo, e.file(),
                            "cannot create the local staging directory of an s3:// output (set "
                            "TMPDIR to a disk with room for the dataset): " +
                                e.reason());
    }
    local_ = (stage_->path() / "dataset").string();
  }
  OutputLocation(const OutputLocation&) = delete;
  OutputLocation& operator=(const OutputLocation&) = delete;

  // The directory to write the dataset to.
  const std::string& local() const { return local_; }
  bool is_remote() const { return upload_.has_value(); }
  // Uploads a staged dataset; nothing for a directory.
  void publish() {
    if (upload_) upload_->upload(local_);
  }

 private:
  std::string out_, local_;
  std::optional<shardkit::remote::DatasetUpload> upload_;
  std::optional<shardkit::ScratchDirectory> stage_;
};

}  // namespace shardify_cli
