// Decodes a compressed input on a thread of its own, a few chunks ahead of its reader.
//
// Reading is the one serial stage of a conversion (convert_pipeline.cc): the read stage hands
// out every line in order, and a compressed file's decoding sat inside it. On a 16-core host a
// conversion of a .gz or .zst file stopped gaining from 4 threads on, at about half the speed of
// the same text plain (BENCHMARKS.md). Decoding ahead takes it out of the serial stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "shardify/byte_source.h"

namespace shardkit::shardify {

// The same bytes and errors as `inner`, in the same order: an error is thrown where the bytes
// before it end, as `inner` threw it. At most kReadAheadChunks of 1 MiB are decoded ahead. The
// decoding thread stops when the source is destroyed (after the chunk it is decoding).
std::unique_ptr<ByteSource> read_ahead(std::unique_ptr<ByteSource> inner);

inline constexpr size_t kReadAheadChunks = 4;
// The smallest compressed file worth a thread of its own (example_reader.cc).
inline constexpr uint64_t kReadAheadFromBytes = uint64_t{1} << 20;

}  // namespace shardkit::shardify
