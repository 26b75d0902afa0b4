// manifest.json: the one file that makes a directory a dataset. It names the shards (plain
// file names inside the directory) with their record counts, sizes and footer checksums, and
// carries the schema and free-form metadata. See format/SPEC.md, "The manifest".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset_info.h"
#include "core/schema.h"

namespace shardkit {

struct ShardEntry {
  std::string name;  // a plain file name inside the dataset directory
  uint64_t records = 0;
  uint64_t bytes = 0;     // file size
  uint64_t checksum = 0;  // the shard's footer checksum
};

struct Manifest {
  // Version 2 added "dataset" (DatasetInfo); version 1 kept those facts under "metadata".
  static constexpr uint16_t kVersion = 2;
  static constexpr uint16_t kOldestReadableVersion = 1;

  uint16_t format_version = kVersion;
  std::string producer;
  Schema schema;
  uint32_t records_per_block = 0;
  std::vector<ShardEntry> shards;
  // What the records mean. Read from "dataset" (version 2), else derived from version 1's
  // metadata keys, else inferred from the schema's field names.
  DatasetInfo info;
  // A program's own top-level keys mapped to raw JSON values (version 1: shardify's facts too).
  std::map<std::string, std::string> metadata;

  uint64_t record_count() const;
  uint64_t bytes_on_disk() const;

  // The exact bytes of manifest.json, checksum line included. Deterministic: no timestamps.
  std::string serialize() const;
  // Parses and validates text read from `path` (used in error messages): checksum, version,
  // schema, shard names (no '/', no '..', no leading '.'), counts that do not overflow.
  static Manifest parse(const std::string& text, const std::string& path);
  static Manifest load(const std::filesystem::path& dataset_dir);
  // Writes serialize() to `path` and fsyncs it; Error(kIo) carries the OS reason (ENOSPC...).
  void write_to(const std::filesystem::path& path) const;
};

// The name of the i-th shard a writer creates: "shard-00000.shard".
std::string shard_file_name(size_t index);

// Whether `name` may appear as a shard name: a plain, visible file name.
bool is_plain_shard_name(const std::string& name);

}  // namespace shardkit
