// Turns a block of fixed-size records into its stored bytes and back: an optional byte-plane
// filter (so zstd sees the high bytes of all token ids together) followed by zstd. A block
// that zstd cannot shrink is stored raw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/schema.h"
#include "format/shard_format.h"

namespace shardkit {

struct EncodedBlock {
  std::vector<unsigned char> bytes;
  format::BlockEncoding encoding = format::BlockEncoding::kRaw;
  uint64_t checksum = 0;  // XXH3-64 of bytes
};

// Reusable: holds a zstd context and scratch space. One per thread.
class BlockEncoder {
 public:
  BlockEncoder(const Schema& schema, format::BlockFilter filter, int zstd_level);
  ~BlockEncoder();
  BlockEncoder(const BlockEncoder&) = delete;
  BlockEncoder& operator=(const BlockEncoder&) = delete;

  EncodedBlock encode(const unsigned char* records, size_t record_count);

 private:
  const Schema& schema_;
  format::BlockFilter filter_;
  int level_;
  void* cctx_;
  std::vector<unsigned char> filtered_;
};

// Reusable decoder, one per thread. decode() does not check the checksum: the caller does that
// first, so that corrupt bytes never reach zstd. Throws Error(kCorrupt) without a file name;
// callers rethrow with theirs.
class BlockDecoder {
 public:
  BlockDecoder();
  ~BlockDecoder();
  BlockDecoder(const BlockDecoder&) = delete;
  BlockDecoder& operator=(const BlockDecoder&) = delete;

  void decode(const Schema& schema, format::BlockFilter filter, format::BlockEncoding encoding,
              const unsigned char* stored, size_t stored_size, size_t record_count,
              unsigned char* out);

 private:
  void* dctx_;
  std::vector<unsigned char> scratch_;
};

// The filter alone, exposed for tests and the spec checker.
void apply_byte_planes(const Schema& schema, const unsigned char* records, size_t record_count,
                       unsigned char* out);
void remove_byte_planes(const Schema& schema, const unsigned char* planes, size_t record_count,
                        unsigned char* out);

// The filter's name where people and manifests write it: "none" or "byteplanes".
std::string_view block_filter_name(format::BlockFilter filter);
std::optional<format::BlockFilter> parse_block_filter(std::string_view name);

}  // namespace shardkit
