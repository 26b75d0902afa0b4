// Checks every checksum and structural invariant of a dataset and reports every fault found,
// rather than stopping at the first: what `shard-inspect verify` prints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/block_source.h"
#include "core/dataset_store.h"
#include "core/manifest.h"

namespace shardkit {

struct VerifyFault {
  std::string file;
  std::optional<uint64_t> block;
  std::string message;  // file and block included, ready to print
};

struct VerifyReport {
  uint64_t shards_checked = 0;
  uint64_t blocks_checked = 0;
  uint64_t records_checked = 0;
  std::vector<VerifyFault> faults;
  bool ok() const { return faults.empty(); }
};

// Decodes every block (not just its checksum) so a block that checksums but fails to decode is
// found too. `progress`, if set, hears the blocks checked so far (readable or not) and the
// dataset's block count after each block.
VerifyReport verify_dataset(
    const std::filesystem::path& dir,
    const std::function<void(uint64_t blocks, uint64_t total)>& progress = {});
// The same for a directory or a remote dataset (http://, https://, s3://). It reads what is at
// the location: `options.cache_dir` is not used (verify_options()).
VerifyReport verify_dataset(
    const std::string& location, const SourceOptions& options,
    const std::function<void(uint64_t blocks, uint64_t total)>& progress = {});

// The shards of `manifest`, already loaded from `store` by a caller that places the faults in
// that same manifest (it is not loaded again, so it cannot change between the two). Open the
// store with verify_options().
VerifyReport verify_shards(
    const DatasetStore& store, const Manifest& manifest,
    const std::function<void(uint64_t blocks, uint64_t total)>& progress = {});

// The options a verification reads with: `options` without the block cache, which would hand
// back the bytes of an earlier read, so that a location damaged since would pass.
SourceOptions verify_options(SourceOptions options);

}  // namespace shardkit
