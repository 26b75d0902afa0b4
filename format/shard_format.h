// The shardkit on-disk format, version 1: constants and the fixed-size structures that
// format/SPEC.md describes in prose. This header is the single source of truth for byte
// offsets; the writer, the reader and the spec test all use it. It depends on nothing but
// the C++ standard library, so a third-party reader can copy it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shardkit::format {

inline constexpr uint16_t kFormatVersion = 1;

// "SHARDKIT" opens a shard, "SHARDEND" closes it.
inline constexpr std::array<unsigned char, 8> kHeaderMagic = {'S', 'H', 'A', 'R',
                                                              'D', 'K', 'I', 'T'};
inline constexpr std::array<unsigned char, 8> kFooterMagic = {'S', 'H', 'A', 'R',
                                                              'D', 'E', 'N', 'D'};

inline constexpr size_t kHeaderSize = 48;
inline constexpr size_t kIndexEntrySize = 24;
inline constexpr size_t kFooterSize = 40;

// Limits that keep a hostile file from making a reader allocate or loop without bound.
inline constexpr uint32_t kMaxSchemaSize = 64 * 1024;
inline constexpr uint32_t kMaxRecordSize = 64 * 1024 * 1024;
inline constexpr uint64_t kMaxBlockRawSize = 1ull << 30;

// How the stored bytes of one block are encoded (index entry, byte 12).
enum class BlockEncoding : uint8_t { kRaw = 0, kZstd = 1 };

// A reversible transform applied to a block's records before encoding (header, byte 32).
enum class BlockFilter : uint8_t {
  kNone = 0,
  // Byte planes: for each field in schema order, for each byte position of the field's
  // element type, that byte of every element of every record in the block.
  kBytePlanes = 1,
};

// Explicit little-endian loads and stores: the format never depends on host byte order.
inline void store_le(unsigned char* p, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint64_t load_le(const unsigned char* p, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Bytes 0..47 of a shard. The checksum covers bytes 0..39 followed by the schema text.
struct ShardHeader {
  uint16_t version = kFormatVersion;
  uint32_t schema_size = 0;  // bytes of canonical schema text right after the header
  uint32_t record_size = 0;
  uint32_t records_per_block = 0;
  uint64_t record_count = 0;
  BlockFilter filter = BlockFilter::kNone;
  uint64_t checksum = 0;

  static constexpr size_t kChecksummedBytes = 40;

  // Writes bytes 0..39; the caller appends the checksum at 40..47.
  void encode_without_checksum(unsigned char* out) const {
    std::memset(out, 0, kHeaderSize);
    std::memcpy(out, kHeaderMagic.data(), 8);
    store_le(out + 8, version, 2);
    // 10..11 reserved, zero
    store_le(out + 12, schema_size, 4);
    store_le(out + 16, record_size, 4);
    store_le(out + 20, records_per_block, 4);
    store_le(out + 24, record_count, 8);
    out[32] = static_cast<unsigned char>(filter);
    // 33..39 reserved, zero
  }
  void encode(unsigned char* out) const {
    encode_without_checksum(out);
    store_le(out + 40, checksum, 8);
  }
  // Decodes the fields; validation is the reader's job (it knows the file size).
  static ShardHeader decode(const unsigned char* in) {
    ShardHeader h;
    h.version = static_cast<uint16_t>(load_le(in + 8, 2));
    h.schema_size = static_cast<uint32_t>(load_le(in + 12, 4));
    h.record_size = static_cast<uint32_t>(load_le(in + 16, 4));
    h.records_per_block = static_cast<uint32_t>(load_le(in + 20, 4));
    h.record_count = load_le(in + 24, 8);
    h.filter = static_cast<BlockFilter>(in[32]);
    h.checksum = load_le(in + 40, 8);
    return h;
  }
  static bool magic_ok(const unsigned char* in) {
    return std::memcmp(in, kHeaderMagic.data(), 8) == 0;
  }
  static bool reserved_zero(const unsigned char* in) {
    if (in[10] | in[11]) return false;
    for (size_t i = 33; i < 40; ++i)
      if (in[i]) return false;
    return true;
  }
  uint64_t block_count() const {
    return records_per_block == 0 ? 0 : (record_count + records_per_block - 1) / records_per_block;
  }
};

// One 24-byte entry of the block index.
struct IndexEntry {
  uint64_t offset = 0;       // from the start of the file
  uint32_t stored_size = 0;  // bytes on disk
  BlockEncoding encoding = BlockEncoding::kRaw;
  uint64_t checksum = 0;  // XXH3-64 of the stored bytes

  void encode(unsigned char* out) const {
    std::memset(out, 0, kIndexEntrySize);
    store_le(out, offset, 8);
    store_le(out + 8, stored_size, 4);
    out[12] = static_cast<unsigned char>(encoding);
    // 13..15 reserved, zero
    store_le(out + 16, checksum, 8);
  }
  static IndexEntry decode(const unsigned char* in) {
    IndexEntry e;
    e.offset = load_le(in, 8);
    e.stored_size = static_cast<uint32_t>(load_le(in + 8, 4));
    e.encoding = static_cast<BlockEncoding>(in[12]);
    e.checksum = load_le(in + 16, 8);
    return e;
  }
  static bool reserved_zero(const unsigned char* in) { return !(in[13] | in[14] | in[15]); }
};

// The last 40 bytes of a shard. footer_checksum covers bytes 0..23; since it also covers the
// header and index checksums, it names the whole shard (the manifest records it).
struct ShardFooter {
  uint64_t index_offset = 0;
  uint64_t index_checksum = 0;   // XXH3-64 of the index bytes
  uint64_t header_checksum = 0;  // copy of the header's checksum
  uint64_t footer_checksum = 0;

  static constexpr size_t kChecksummedBytes = 24;

  void encode_without_checksum(unsigned char* out) const {
    store_le(out, index_offset, 8);
    store_le(out + 8, index_checksum, 8);
    store_le(out + 16, header_checksum, 8);
    store_le(out + 24, 0, 8);
    std::memcpy(out + 32, kFooterMagic.data(), 8);
  }
  void encode(unsigned char* out) const {
    encode_without_checksum(out);
    store_le(out + 24, footer_checksum, 8);
  }
  static ShardFooter decode(const unsigned char* in) {
    ShardFooter f;
    f.index_offset = load_le(in, 8);
    f.index_checksum = load_le(in + 8, 8);
    f.header_checksum = load_le(in + 16, 8);
    f.footer_checksum = load_le(in + 24, 8);
    return f;
  }
  static bool magic_ok(const unsigned char* in) {
    return std::memcmp(in + 32, kFooterMagic.data(), 8) == 0;
  }
};

// The manifest (manifest.json) ends with this fixed-length line, whose 16 lowercase hex digits
// are the XXH3-64 of every byte before it.
inline constexpr const char kManifestName[] = "manifest.json";
inline constexpr const char kManifestChecksumPrefix[] = "  \"manifest_xxh3\": \"";
inline constexpr const char kManifestChecksumSuffix[] = "\"\n}\n";
inline constexpr size_t kManifestTailSize =
    sizeof(kManifestChecksumPrefix) - 1 + 16 + sizeof(kManifestChecksumSuffix) - 1;

}  // namespace shardkit::format
