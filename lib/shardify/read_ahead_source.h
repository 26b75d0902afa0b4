// Decodes a compressed input on a thread of its own, a few chunks ahead of its reader.
//
// Reading is the one serial stage of a conversion (convert_pipeline.cc): the read stage hands
// out every line in order, and a compressed file's decoding sat inside it. On a 16-core host a
// conversion of a .gz or .zst file stopped gaining from 4 threads on, at about half the speed of
// the same text plain (BENCHMARKS.md). Decoding ahead takes it out of the serial stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "shardify/byte_source.h"

namespace shardkit::shardify {

// The same bytes and errors as `inner`, in the same order: an error is thrown where the bytes
// before it end, as `inner` threw it. At most kReadAheadChunks of 1 MiB are decoded ahead. The
// decoding thread stops when the source is destroyed (after the chunk it is decoding).
std::unique_ptr<ByteSource> read_ahead(std::unique_ptr<ByteSource> inner);

inline constexpr size_t kReadAheadChunks = 4;

// Whether `path` is a compressed file of at least 1 MiB: for a smaller one a thread and its
// buffers cost more than its decoding (1,037 files of 4 KB took 0.18 s instead of 0.12 on 2
// cores). Such a file is decoded ahead, and opened ahead of its turn (example_batcher.h).
bool worth_reading_ahead(const std::filesystem::path& path);

}  // namespace shardkit::shardify
