// A dataset read over HTTP(S) or S3: the manifest first, then, per shard on first touch, its
// header and its footer plus index (two ranges fetched in parallel), then only the byte ranges
// of the blocks asked for. The loader asks ahead for the blocks of the current and next window
// (BlockSource::prefetch); those fetches run on `remote_concurrency` threads, and a read that
// finds its range still queued fetches it itself instead of waiting behind the queue.
#pragma once

#include <memory>
#include <string>

#include "core/dataset_store.h"

namespace shardkit::remote {

std::shared_ptr<DatasetStore> open_remote_store(const std::string& location,
                                                const SourceOptions& options);

}  // namespace shardkit::remote
