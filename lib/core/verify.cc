#include "core/verify.h"

#include <algorithm>
#include <set>
#include <vector>

#include "core/block_codec.h"
#include "core/dataset_store.h"
#include "core/error.h"
#include "core/geometry.h"
#include "core/manifest.h"
#include "core/shard_file.h"

namespace shardkit {

VerifyReport verify_dataset(const std::filesystem::path& dir,
                            const std::function<void(uint64_t, uint64_t)>& progress) {
  return verify_dataset(dir.string(), SourceOptions{}, progress);
}

SourceOptions verify_options(SourceOptions options) {
  options.cache_dir.clear();
  return options;
}

VerifyReport verify_dataset(const std::string& location, const SourceOptions& options,
                            const std::function<void(uint64_t, uint64_t)>& progress) {
  Manifest manifest;
  std::shared_ptr<DatasetStore> store;
  try {
    store = open_store(location, verify_options(options));
    manifest = store->load_manifest();
  } catch (const Error& e) {
    VerifyReport report;
    report.faults.push_back({e.file(), e.block(), e.what()});
    return report;
  }
  return verify_shards(*store, manifest, progress);
}

VerifyReport verify_shards(const DatasetStore& store, const Manifest& manifest,
                           const std::function<void(uint64_t, uint64_t)>& progress) {
  VerifyReport report;
  auto fault = [&](const Error& e) { report.faults.push_back({e.file(), e.block(), e.what()}); };
  BlockDecoder decoder;
  std::vector<unsigned char> buffer;
  // Blocks as the manifest counts them, so that a shard that fails to open still advances.
  const Geometry geometry = Geometry::of(manifest);
  uint64_t blocks_seen = 0, shard_end = 0;
  for (size_t i = 0; i < manifest.shards.size(); ++i) {
    const ShardEntry& entry = manifest.shards[i];
    shard_end += geometry.shard_blocks(static_cast<uint32_t>(i));
    try {
      auto shard = ShardFile::open(store.open_shard(entry), manifest.schema,
                                   manifest.records_per_block, entry);
      ++report.shards_checked;
      for (uint64_t b = 0; b < shard->block_count(); ++b) {
        try {
          buffer.resize(size_t{shard->block_records(b)} * manifest.schema.record_size());
          shard->read_block(b, decoder, buffer.data());
          ++report.blocks_checked;
          report.records_checked += shard->block_records(b);
        } catch (const Error& e) {
          fault(e);
        }
        blocks_seen = std::min(blocks_seen + 1, shard_end);
        if (progress) progress(blocks_seen, geometry.blocks());
      }
    } catch (const Error& e) {
      fault(e);
    }
    blocks_seen = shard_end;
    if (progress) progress(blocks_seen, geometry.blocks());
  }
  return report;
}

}  // namespace shardkit
