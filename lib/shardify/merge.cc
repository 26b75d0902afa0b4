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

// A part as the merge reads it. Its Dataset is opened when its blocks are read and closed after:
// parts' manifests each list every input file of the conversion, so a thousand parts held open
// at once took gigabytes.
struct Part {
  std::string dir;
  uint32_t index = 0;
  uint64_t records = 0;
};

// Blocks are decoded bypassing the cache: a merge holds only the blocks in flight in its
// pipeline.
std::shared_ptr<const Dataset> open_part(const std::string& dir) {
  DatasetOptions read;
  read.cache_bytes = 0;
  auto data = std::make_shared<const Dataset>(Dataset::open(fs::path(dir), read));
  if (!data->manifest().info.part)
    throw Error(ErrorCode::kInvalidArgument, dir, "not a --part dataset (no part in its info)");
  return data;
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

// Throws unless `p` was written by the same conversion as `first`, the part first opened
// (equality carries over, so every part then agrees with every other).
void check_same_conversion(const Dataset& p, const std::string& dir, const Dataset& first,
                           const std::string& first_dir) {
  const std::string other =
      "part " + std::to_string(first.manifest().info.part->index) + " (" + first_dir + ")";
  if (p.manifest().info.part->count != first.manifest().info.part->count)
    throw Error(ErrorCode::kInvalidArgument, dir,
                "part " + std::to_string(p.manifest().info.part->index) + "/" +
                    std::to_string(p.manifest().info.part->count) + " is of another split than " +
                    other + ", of " + std::to_string(first.manifest().info.part->count));
  if (!(p.manifest().schema == first.manifest().schema) ||
      p.manifest().records_per_block != first.manifest().records_per_block ||
      !same_encoding(*p.manifest().info.part, *first.manifest().info.part))
    throw Error(ErrorCode::kInvalidArgument, dir,
                "schema, block, shard or zstd settings differ from " + other);
  if (!(shared_facts(p.manifest().info) == shared_facts(first.manifest().info)))
    throw Error(ErrorCode::kInvalidArgument, dir,
                "dataset info (task, tokenizer, labels or source) differs from " + other);
  if (p.manifest().metadata != first.manifest().metadata)
    throw Error(ErrorCode::kInvalidArgument, dir, "metadata differs from " + other);
}

struct Survey {
  std::vector<Part> parts;                // in part order
  std::shared_ptr<const Dataset> sample;  // one part, open: the settings all parts share
  ConvertStats stats;
  bool has_stats = false;
};

// Each part opened once, checked against the first, and closed, in part order after: the `count`
// parts of one conversion, each exactly once.
Survey survey_parts(const std::vector<std::string>& dirs) {
  Survey s;
  for (const auto& d : dirs) {
    const auto data = open_part(d);
    if (s.sample) check_same_conversion(*data, d, *s.sample, s.parts.front().dir);
    s.parts.push_back({d, data->manifest().info.part->index, data->manifest().record_count()});
    if (data->manifest().info.stats) s.stats.add(*data->manifest().info.stats);
    s.has_stats = s.has_stats || data->manifest().info.stats.has_value();
    if (!s.sample) s.sample = data;
  }
  std::sort(s.parts.begin(), s.parts.end(),
            [](const Part& a, const Part& b) { return a.index < b.index; });
  const uint32_t count = s.sample->manifest().info.part->count;
  if (s.parts.size() != count)
    throw Error(ErrorCode::kInvalidArgument, "",
                "got " + std::to_string(s.parts.size()) + " parts of a " + std::to_string(count) +
                    "-part conversion");
  for (size_t i = 0; i < s.parts.size(); ++i)
    if (s.parts[i].index != i)
      throw Error(ErrorCode::kInvalidArgument, s.parts[i].dir,
                  "part " + std::to_string(s.parts[i].index) + "/" + std::to_string(count) +
                      " does not fit: expected part " + std::to_string(i) + "/" +
                      std::to_string(count) + " (each part exactly once)");
  return s;
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
  const Survey survey = survey_parts(dirs);
  const std::vector<Part>& parts = survey.parts;
  const Dataset& base = *survey.sample;
  const PartInfo& base_part = *base.manifest().info.part;

  WriterOptions w;
  w.block_bytes = base.manifest().records_per_block * base.manifest().schema.record_size();
  w.shard_bytes = base_part.shard_bytes;
  w.zstd_level = base_part.zstd_level;
  w.filter = base_part.filter;
  w.overwrite = force;
  w.threads = threads;
  DatasetWriter writer(out, base.manifest().schema, w);
  DatasetInfo info = shared_facts(base.manifest().info);
  if (survey.has_stats) info.stats = survey.stats;
  writer.set_info(std::move(info));
  for (const auto& [key, raw_json] : base.manifest().metadata) writer.set_metadata(key, raw_json);

  // The parts' blocks in order through one ordered pipeline: decoded on any thread, their records
  // cut into the writer's blocks in order, encoded on any thread, stored in order. A block that
  // fails to decode fails the merge when its turn comes, so the error is the first in part order.
  struct PartBlock {
    std::shared_ptr<const Dataset> part;  // open while a block of it is in flight
    uint64_t global_block = 0;
    std::shared_ptr<const DecodedBlock> decoded;
    std::exception_ptr error;
  };
  using PartBlockPtr = PartBlock*;
  PipelineItems<PartBlock> part_blocks;
  PipelineItems<RawBlocks> blocks;
  size_t next_part = 0;
  uint64_t next_block = 0;
  std::shared_ptr<const Dataset> reading = open_part(parts.front().dir);
  uint64_t records_total = 0, records_done = 0;
  for (const Part& p : parts) records_total += p.records;
  const auto read = tbb::make_filter<void, PartBlockPtr>(
      tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> PartBlockPtr {
        while (reading && next_block == reading->block_count()) {
          reading = ++next_part < parts.size() ? open_part(parts[next_part].dir) : nullptr;
          next_block = 0;
        }
        if (!reading) {
          fc.stop();
          return nullptr;
        }
        PartBlockPtr b = part_blocks.make();
        b->part = reading;
        b->global_block = next_block++;
        return b;
      });
  const auto decode =
      tbb::make_filter<PartBlockPtr, PartBlockPtr>(tbb::filter_mode::parallel, [](PartBlockPtr b) {
        try {
          b->decoded = b->part->decode_block(b->global_block);
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
