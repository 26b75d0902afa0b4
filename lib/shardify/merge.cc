#include "shardify/merge.h"

#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/manifest.h"
#include "core/staged_directory.h"
#include "format/shard_format.h"
#include "shardify/record_builder.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;

namespace {

struct Part {
  std::string dir;
  Manifest manifest;
  uint64_t index = 0;
  uint64_t count = 0;
};

Part load_part(const std::string& dir) {
  Part p;
  p.dir = dir;
  p.manifest = Manifest::load(dir);
  auto it = p.manifest.metadata.find("part");
  if (it == p.manifest.metadata.end())
    throw Error(ErrorCode::kInvalidArgument, dir, "not a --part dataset (no 'part' metadata)");
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(it->second).get(e) || e["index"].get_uint64().get(p.index) ||
      e["count"].get_uint64().get(p.count))
    throw Error(ErrorCode::kCorrupt, dir, "metadata 'part' is malformed");
  return p;
}

}  // namespace

std::string MergeResult::to_json() const {
  return "{\"parts\":" + std::to_string(parts) + ",\"shards\":" + std::to_string(shards) +
         ",\"records\":" + std::to_string(records) + ",\"bytes\":" + std::to_string(bytes) +
         ",\"shards_copied\":" + std::to_string(shards_copied) + "}";
}

MergeResult merge_parts(const std::string& out, const std::vector<std::string>& dirs, bool force) {
  if (dirs.empty()) throw Error(ErrorCode::kInvalidArgument, "", "merge needs at least one part");
  std::vector<Part> parts;
  for (const auto& d : dirs) parts.push_back(load_part(d));
  std::sort(parts.begin(), parts.end(),
            [](const Part& a, const Part& b) { return a.index < b.index; });
  const Part& base = parts.front();
  if (parts.size() != base.count)
    throw Error(ErrorCode::kInvalidArgument, "",
                "got " + std::to_string(parts.size()) + " parts of a " +
                    std::to_string(base.count) + "-part conversion");
  ConvertStats stats;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    if (p.count != base.count || p.index != i)
      throw Error(ErrorCode::kInvalidArgument, p.dir,
                  "part " + std::to_string(p.index) + "/" + std::to_string(p.count) +
                      " does not fit: expected part " + std::to_string(i) + "/" +
                      std::to_string(base.count) + " (each part exactly once)");
    if (!(p.manifest.schema == base.manifest.schema) ||
        p.manifest.records_per_block != base.manifest.records_per_block)
      throw Error(ErrorCode::kInvalidArgument, p.dir, "schema or block size differs from part 0");
    for (const auto& [key, value] : base.manifest.metadata) {
      if (key == "part" || key == "stats") continue;
      auto it = p.manifest.metadata.find(key);
      if (it == p.manifest.metadata.end() || it->second != value)
        throw Error(ErrorCode::kInvalidArgument, p.dir,
                    "metadata '" + key + "' differs from part 0 (" + base.dir + ")");
    }
    if (p.manifest.metadata.size() != base.manifest.metadata.size())
      throw Error(ErrorCode::kInvalidArgument, p.dir, "metadata keys differ from part 0");
    auto st = p.manifest.metadata.find("stats");
    if (st != p.manifest.metadata.end()) stats.add(ConvertStats::from_json(st->second, p.dir));
  }

  StagedDirectory staged(out, force);
  Manifest merged;
  merged.producer = default_producer();
  merged.schema = base.manifest.schema;
  merged.records_per_block = base.manifest.records_per_block;
  merged.metadata = base.manifest.metadata;
  merged.metadata.erase("part");
  if (merged.metadata.count("stats")) merged.metadata["stats"] = stats.to_json();
  MergeResult result;
  result.parts = parts.size();
  for (const Part& p : parts) {
    for (const ShardEntry& s : p.manifest.shards) {
      const fs::path from = fs::path(p.dir) / s.name;
      std::error_code ec;
      const uint64_t size = fs::file_size(from, ec);
      if (ec || size != s.bytes)
        throw Error(ErrorCode::kCorrupt, from.string(),
                    "shard size differs from the part's manifest");
      char name[32];
      std::snprintf(name, sizeof name, "shard-%05zu.shard", merged.shards.size());
      const fs::path to = staged.staging() / name;
      fs::create_hard_link(from, to, ec);
      if (ec) {
        ++result.shards_copied;
        if (!fs::copy_file(from, to, ec) || ec)
          throw Error(ErrorCode::kIo, to.string(), "cannot link or copy shard: " + ec.message());
      }
      ShardEntry e = s;
      e.name = name;
      merged.shards.push_back(e);
      result.records += s.records;
      result.bytes += s.bytes;
    }
  }
  result.shards = merged.shards.size();
  const std::string text = merged.serialize();
  const fs::path path = staged.staging() / format::kManifestName;
  {
    std::ofstream f(path, std::ios::binary);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.flush();
    if (!f) throw Error(ErrorCode::kIo, path.string(), "cannot write manifest");
  }
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    ::fsync(fileno(f));  // the manifest's bytes are durable before the rename publishes them
    std::fclose(f);
  }
  staged.publish();
  return result;
}

}  // namespace shardkit::shardify
