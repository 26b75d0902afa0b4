#include "shardify/merge.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/manifest.h"
#include "core/staged_directory.h"
#include "format/shard_format.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;

namespace {

struct Part {
  std::string dir;
  Manifest manifest;
};

Part load_part(const std::string& dir) {
  Part p;
  p.dir = dir;
  p.manifest = Manifest::load(dir);
  if (!p.manifest.info.part)
    throw Error(ErrorCode::kInvalidArgument, dir, "not a --part dataset (no part in its info)");
  return p;
}

// What must agree between parts: everything but the part itself and its counts.
DatasetInfo shared_facts(DatasetInfo info) {
  info.part.reset();
  info.stats.reset();
  return info;
}

}  // namespace

std::string MergeResult::to_json() const {
  return nlohmann::ordered_json{{"parts", parts},
                                {"shards", shards},
                                {"records", records},
                                {"bytes", bytes},
                                {"shards_copied", shards_copied}}
      .dump();
}

MergeResult merge_parts(const std::string& out, const std::vector<std::string>& dirs, bool force) {
  if (dirs.empty()) throw Error(ErrorCode::kInvalidArgument, "", "merge needs at least one part");
  std::vector<Part> parts;
  for (const auto& d : dirs) parts.push_back(load_part(d));
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return a.manifest.info.part->index < b.manifest.info.part->index;
  });
  const Part& base = parts.front();
  const uint32_t count = base.manifest.info.part->count;
  if (parts.size() != count)
    throw Error(ErrorCode::kInvalidArgument, "",
                "got " + std::to_string(parts.size()) + " parts of a " + std::to_string(count) +
                    "-part conversion");
  ConvertStats stats;
  const DatasetInfo shared = shared_facts(base.manifest.info);
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    const PartInfo& pi = *p.manifest.info.part;
    if (pi.count != count || pi.index != i)
      throw Error(ErrorCode::kInvalidArgument, p.dir,
                  "part " + std::to_string(pi.index) + "/" + std::to_string(pi.count) +
                      " does not fit: expected part " + std::to_string(i) + "/" +
                      std::to_string(count) + " (each part exactly once)");
    if (!(p.manifest.schema == base.manifest.schema) ||
        p.manifest.records_per_block != base.manifest.records_per_block)
      throw Error(ErrorCode::kInvalidArgument, p.dir, "schema or block size differs from part 0");
    if (!(shared_facts(p.manifest.info) == shared))
      throw Error(ErrorCode::kInvalidArgument, p.dir,
                  "dataset info (task, tokenizer, labels or source) differs from part 0 (" +
                      base.dir + ")");
    if (p.manifest.metadata != base.manifest.metadata)
      throw Error(ErrorCode::kInvalidArgument, p.dir, "metadata differs from part 0");
    if (p.manifest.info.stats) stats.add(*p.manifest.info.stats);
  }

  StagedDirectory staged(out, force);
  Manifest merged;
  merged.producer = default_producer();
  merged.schema = base.manifest.schema;
  merged.records_per_block = base.manifest.records_per_block;
  merged.metadata = base.manifest.metadata;
  merged.info = shared;
  if (base.manifest.info.stats) merged.info.stats = stats;
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
      const std::string name = shard_file_name(merged.shards.size());
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
  merged.write_to(staged.staging() / format::kManifestName);
  staged.publish();
  return result;
}

}  // namespace shardkit::shardify
