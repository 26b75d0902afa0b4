#include "shardify/merge.h"

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

#include "core/dataset.h"
#include "core/dataset_writer.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/ordered_pipeline.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;

namespace {

struct Part {
  std::string dir;
  Dataset data;
  const Manifest& manifest() const { return data.manifest(); }
};

// Blocks are decoded bypassing the cache: a merge holds only the blocks in flight in its
// pipeline.
Part load_part(const std::string& dir) {
  DatasetOptions read;
  read.cache_bytes = 0;
  Part p{dir, Dataset::open(fs::path(dir), read)};
  if (!p.manifest().info.part)
    throw Error(ErrorCode::kInvalidArgument, dir, "not a --part dataset (no part in its info)");
  return p;
}

// What must agree between parts: everything but the part itself and its counts.
DatasetInfo shared_facts(DatasetInfo info) {
  info.part.reset();
  info.stats.reset();
  return info;
}

bool same_encoding(const PartInfo& a, const PartInfo& b) {
  return a.shard_bytes == b.shard_bytes && a.zstd_level == b.zstd_level && a.filter == b.filter;
}

// With --force the output would replace a part before the merge read it.
void refuse_part_as_output(const std::string& out, const std::vector<std::string>& dirs) {
  std::error_code ec;
  for (const auto& d : dirs)
    if (fs::equivalent(fs::path(out), fs::path(d), ec))
      throw Error(ErrorCode::kInvalidArgument, d,
                  "is both a part and the output; merge into another directory");
}

}  // namespace

std::string MergeResult::to_json() const {
  return json_text(nlohmann::ordered_json{
      {"parts", parts}, {"shards", shards}, {"records", records}, {"bytes", bytes}});
}

MergeResult merge_parts(const std::string& out, const std::vector<std::string>& dirs, bool force,
                        unsigned threads, const std::function<void(uint64_t, uint64_t)>& progress) {
  if (dirs.empty()) throw Error(ErrorCode::kInvalidArgument, "", "merge needs at least one part");
  refuse_part_as_output(out, dirs);
  std::vector<Part> parts;
  for (const auto& d : dirs) parts.push_back(load_part(d));
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return a.manifest().info.part->index < b.manifest().info.part->index;
  });
  const Part& base = parts.front();
  const PartInfo& base_part = *base.manifest().info.part;
  const uint32_t count = base_part.count;
  if (parts.size() != count)
    throw Error(ErrorCode::kInvalidArgument, "",
                "got " + std::to_string(parts.size()) + " parts of a " + std::to_string(count) +
                    "-part conversion");
  ConvertStats stats;
  const DatasetInfo shared = shared_facts(base.manifest().info);
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    const PartInfo& pi = *p.manifest().info.part;
    if (pi.count != count || pi.index != i)
      throw Error(ErrorCode::kInvalidArgument, p.dir,
                  "part " + std::to_string(pi.index) + "/" + std::to_string(pi.count) +
                      " does not fit: expected part " + std::to_string(i) + "/" +
                      std::to_string(count) + " (each part exactly once)");
    if (!(p.manifest().schema == base.manifest().schema) ||
        p.manifest().records_per_block != base.manifest().records_per_block ||
        !same_encoding(pi, base_part))
      throw Error(ErrorCode::kInvalidArgument, p.dir,
                  "schema, block, shard or zstd settings differ from part 0");
    if (!(shared_facts(p.manifest().info) == shared))
      throw Error(ErrorCode::kInvalidArgument, p.dir,
                  "dataset info (task, tokenizer, labels or source) differs from part 0 (" +
                      base.dir + ")");
    if (p.manifest().metadata != base.manifest().metadata)
      throw Error(ErrorCode::kInvalidArgument, p.dir, "metadata differs from part 0");
    if (p.manifest().info.stats) stats.add(*p.manifest().info.stats);
  }

  WriterOptions w;
  w.block_bytes = base.manifest().records_per_block * base.manifest().schema.record_size();
  w.shard_bytes = base_part.shard_bytes;
  w.zstd_level = base_part.zstd_level;
  w.filter = base_part.filter;
  w.overwrite = force;
  w.threads = threads;
  DatasetWriter writer(out, base.manifest().schema, w);
  DatasetInfo info = shared;
  if (base.manifest().info.stats) info.stats = stats;
  writer.set_info(std::move(info));
  for (const auto& [key, raw_json] : base.manifest().metadata) writer.set_metadata(key, raw_json);

  // The parts' blocks in order through one ordered pipeline: decoded on any thread, their records
  // cut into the writer's blocks in order, encoded on any thread, stored in order. A block that
  // fails to decode fails the merge when its turn comes, so the error is the first in part order.
  struct PartBlock {
    const Part* part = nullptr;
    uint64_t global_block = 0;
    std::shared_ptr<const DecodedBlock> decoded;
    std::exception_ptr error;
  };
  using PartBlockPtr = PartBlock*;
  PipelineItems<PartBlock> part_blocks;
  PipelineItems<RawBlocks> blocks;
  size_t next_part = 0;
  uint64_t next_block = 0;
  uint64_t records_total = 0, records_done = 0;
  for (const Part& p : parts) records_total += p.manifest().record_count();
  const auto read = tbb::make_filter<void, PartBlockPtr>(
      tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> PartBlockPtr {
        while (next_part < parts.size() && next_block == parts[next_part].data.block_count()) {
          ++next_part;
          next_block = 0;
        }
        if (next_part == parts.size()) {
          fc.stop();
          return nullptr;
        }
        PartBlockPtr b = part_blocks.make();
        b->part = &parts[next_part];
        b->global_block = next_block++;
        return b;
      });
  const auto decode =
      tbb::make_filter<PartBlockPtr, PartBlockPtr>(tbb::filter_mode::parallel, [](PartBlockPtr b) {
        try {
          b->decoded = b->part->data.decode_block(b->global_block);
        } catch (...) {
          b->error = std::current_exception();
        }
        return b;
      });
  const auto cut = tbb::make_filter<PartBlockPtr, WriterBlocks>(
      tbb::filter_mode::serial_in_order, [&](PartBlockPtr b) {
        if (b->error) std::rethrow_exception(b->error);
        WriterBlocks out = blocks.make();
        writer.cut(b->decoded->bytes.data(), b->decoded->records, *out);
        records_done += b->decoded->records;
        if (progress) progress(records_done, records_total);
        part_blocks.done(b);
        return out;
      });
  tbb::task_arena arena = pipeline_arena(threads);
  run_ordered_pipeline(arena, read & decode & cut & encode_and_store(writer, blocks));
  const Manifest merged = writer.finish();
  MergeResult result;
  result.parts = parts.size();
  result.shards = merged.shards.size();
  for (const ShardEntry& s : merged.shards) {
    result.records += s.records;
    result.bytes += s.bytes;
  }
  return result;
}

}  // namespace shardkit::shardify
