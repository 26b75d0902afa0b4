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

#include "core/schema.h"

namespace shardkit {

struct ShardEntry {
  std::string name;  // a plain file name inside the dataset directory
  uint64_t records = 0;
  uint64_t bytes = 0;     // file size
  uint64_t checksum = 0;  // the shard's footer checksum
};

struct Manifest {
  uint16_t format_version = 1;
  std::string producer;
  Schema schema;
  uint32_t records_per_block = 0;
  std::vector<ShardEntry> shards;
  // Top-level metadata keys mapped to raw JSON values, e.g. {"tokenizer": "{...}"}.
  std::map<std::string, std::string> metadata;

  uint64_t record_count() const;
  uint64_t bytes_on_disk() const;

  // The exact bytes of manifest.json, checksum line included. Deterministic: no timestamps.
  std::string serialize() const;
  // Parses and validates text read from `path` (used in error messages): checksum, version,
  // schema, shard names (no '/', no '..', no leading '.'), counts that do not overflow.
  static Manifest parse(const std::string& text, const std::string& path);
  static Manifest load(const std::filesystem::path& dataset_dir);
};

// Whether `name` may appear as a shard name: a plain, visible file name.
bool is_plain_shard_name(const std::string& name);

}  // namespace shardkit
