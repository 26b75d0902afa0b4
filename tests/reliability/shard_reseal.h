// Recomputes every checksum of a (possibly edited) shard image, as an attacker who edits a file
// on purpose would: XXH3 is an integrity check, not a signature, so hostile files get past the
// checksums and only the structural checks behind them stand between the file and the reader.
// Used by the hostile-input tests and the shard fuzz target.
#pragma once

#include <cstdint>
#include <string>

#include "core/checksum.h"
#include "format/shard_format.h"

namespace shardkit::reliability {

// Reseals `bytes` in place wherever the fields needed to locate a checksummed range are in range;
// returns the footer checksum (what a manifest would record), or 0 when the image is too short
// to have a footer.
inline uint64_t reseal_shard(std::string& bytes) {
  using namespace format;
  auto* p = reinterpret_cast<unsigned char*>(bytes.data());
  const uint64_t size = bytes.size();
  if (size < kHeaderSize + kFooterSize) return 0;
  const uint64_t footer = size - kFooterSize;

  // Block checksums, for each index entry that lies before the footer and points inside the file.
  const uint64_t index_offset = load_le(p + footer, 8);
  if (index_offset <= footer) {
    for (uint64_t e = index_offset; e + kIndexEntrySize <= footer; e += kIndexEntrySize) {
      const uint64_t off = load_le(p + e, 8), len = load_le(p + e + 8, 4);
      if (off <= size && len <= size - off) store_le(p + e + 16, xxh3_64(p + off, len), 8);
    }
    store_le(p + footer + 8, xxh3_64(p + index_offset, footer - index_offset), 8);
  }
  // Header checksum over bytes 0..39 and the schema text, copied into the footer.
  const uint64_t schema_size = load_le(p + 12, 4);
  if (kHeaderSize + schema_size <= footer) {
    std::string covered(bytes.data(), ShardHeader::kChecksummedBytes);
    covered.append(bytes.data() + kHeaderSize, schema_size);
    const uint64_t h = xxh3_64(covered.data(), covered.size());
    store_le(p + 40, h, 8);
    store_le(p + footer + 16, h, 8);
  }
  const uint64_t f = xxh3_64(p + footer, ShardFooter::kChecksummedBytes);
  store_le(p + footer + 24, f, 8);
  return f;
}

}  // namespace shardkit::reliability
