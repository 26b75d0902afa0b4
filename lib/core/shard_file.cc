#include "core/shard_file.h"

#include <algorithm>

#include "core/checksum.h"
#include "core/error.h"

namespace shardkit {
namespace {

using format::kFooterSize;
using format::kHeaderSize;
using format::kIndexEntrySize;

constexpr const char* kNoRefetch = "no origin to read again from";

}  // namespace

std::unique_ptr<ShardFile> ShardFile::open(const std::filesystem::path& path, const Schema& schema,
                                           uint32_t records_per_block, const ShardEntry& expected,
                                           ReadMode mode) {
  return open(open_file_source(path, mode), schema, records_per_block, expected);
}

std::unique_ptr<ShardFile> ShardFile::open(std::unique_ptr<BlockSource> source,
                                           const Schema& schema, uint32_t records_per_block,
                                           const ShardEntry& expected) {
  try {
    return open_once(source, schema, records_per_block, expected, false);
  } catch (const Error& e) {
    // A remote header or index damaged on the way (or in the cache) is read once more from
    // the origin before the shard is called corrupt.
    if (e.code() != ErrorCode::kCorrupt || !source) throw;
    try {
      return open_once(source, schema, records_per_block, expected, true);
    } catch (const Error& second) {
      if (second.code() == ErrorCode::kUnsupported && second.reason() == kNoRefetch) throw e;
      throw;
    }
  }
}

std::unique_ptr<ShardFile> ShardFile::open_once(std::unique_ptr<BlockSource>& source,
                                                const Schema& schema, uint32_t records_per_block,
                                                const ShardEntry& expected, bool refetch) {
  std::unique_ptr<ShardFile> s(new ShardFile());
  const BlockSource& src = *source;
  auto read = [&](uint64_t offset, size_t size, unsigned char* out) {
    if (!refetch) return src.read(offset, size, out);
    if (!src.refetch(offset, size, out, std::nullopt))
      throw Error(ErrorCode::kUnsupported, src.name(), kNoRefetch);
  };
  s->path_ = src.name();
  s->schema_ = &schema;
  const std::string& p = s->path_;
  auto corrupt = [&](const std::string& what) { throw Error(ErrorCode::kCorrupt, p, what); };

  const uint64_t size = src.size();
  if (size != expected.bytes)
    corrupt("file is " + std::to_string(size) + " bytes, manifest says " +
            std::to_string(expected.bytes) + " (truncated or replaced?)");
  if (size < kHeaderSize + kFooterSize)
    corrupt("file is too short (" + std::to_string(size) + " bytes) to be a shard");

  // Two reads: the tail (footer and, when the manifest's record count is right, the whole index
  // before it) and the head (header and schema).
  const uint64_t expected_blocks =
      records_per_block ? (expected.records + records_per_block - 1) / records_per_block : 0;
  const uint64_t tail_size =
      std::min<uint64_t>(size - kHeaderSize, kFooterSize + expected_blocks * kIndexEntrySize);
  const size_t head_size =
      std::min<uint64_t>(size - kFooterSize, kHeaderSize + schema.canonical().size());
  if (!refetch) {
    src.prefetch(size - tail_size, tail_size);  // a remote source fetches both at once
    src.prefetch(0, head_size);
  }
  std::vector<unsigned char> tail(tail_size);
  read(size - tail_size, tail_size, tail.data());
  const unsigned char* fp = tail.data() + tail_size - kFooterSize;

  // Footer first: it is the anchor that commits to header and index.
  if (!format::ShardFooter::magic_ok(fp)) corrupt("footer magic is not \"SHARDEND\"");
  format::ShardFooter footer = format::ShardFooter::decode(fp);
  if (xxh3_64(fp, format::ShardFooter::kChecksummedBytes) != footer.footer_checksum)
    corrupt("footer checksum mismatch");
  if (footer.footer_checksum != expected.checksum)
    corrupt("footer checksum " + checksum_hex(footer.footer_checksum) +
            " differs from the manifest's " + checksum_hex(expected.checksum));

  // Header.
  const size_t schema_guess = schema.canonical().size();
  std::vector<unsigned char> head(head_size);
  read(0, head.size(), head.data());
  const unsigned char* base = head.data();
  if (!format::ShardHeader::magic_ok(base)) corrupt("header magic is not \"SHARDKIT\"");
  format::ShardHeader h = format::ShardHeader::decode(base);
  if (h.version != format::kFormatVersion)
    throw Error(ErrorCode::kUnsupported, p,
                "shard format version " + std::to_string(h.version) + " is not supported");
  if (!format::ShardHeader::reserved_zero(base)) corrupt("header reserved bytes are not zero");
  if (h.schema_size > format::kMaxSchemaSize || kHeaderSize + h.schema_size > size - kFooterSize)
    corrupt("header schema size " + std::to_string(h.schema_size) + " is out of range");
  if (h.schema_size != schema_guess) {  // only a shard that disagrees with its manifest
    head.resize(kHeaderSize + h.schema_size);
    read(0, head.size(), head.data());
    base = head.data();
  }
  {
    std::vector<unsigned char> covered(base, base + format::ShardHeader::kChecksummedBytes);
    covered.insert(covered.end(), base + kHeaderSize, base + kHeaderSize + h.schema_size);
    if (xxh3_64(covered.data(), covered.size()) != h.checksum) corrupt("header checksum mismatch");
  }
  if (h.checksum != footer.header_checksum) corrupt("footer does not match the header");
  std::string schema_text(reinterpret_cast<const char*>(base + kHeaderSize), h.schema_size);
  if (schema_text != schema.canonical())
    corrupt("schema '" + schema_text + "' differs from the manifest's '" + schema.canonical() +
            "'");
  if (h.record_size != schema.record_size()) corrupt("record size disagrees with the schema");
  if (h.records_per_block != records_per_block)
    corrupt("records_per_block " + std::to_string(h.records_per_block) +
            " differs from the manifest's " + std::to_string(records_per_block));
  if (h.record_count != expected.records)
    corrupt("holds " + std::to_string(h.record_count) + " records, manifest says " +
            std::to_string(expected.records));
  if (h.filter != format::BlockFilter::kNone && h.filter != format::BlockFilter::kBytePlanes)
    corrupt("unknown block filter " + std::to_string(static_cast<int>(h.filter)));
  s->header_ = h;

  // Index: exactly between the last block and the footer.
  const uint64_t blocks = h.block_count();
  const uint64_t data_start = kHeaderSize + h.schema_size;
  if (blocks > (size - data_start) / kIndexEntrySize) corrupt("block count is out of range");
  const uint64_t index_size = blocks * kIndexEntrySize;
  if (footer.index_offset < data_start || footer.index_offset + index_size + kFooterSize != size)
    corrupt("index offset " + std::to_string(footer.index_offset) +
            " is inconsistent with the file size");
  // The record count matched the manifest, so the tail read holds the whole index.
  const unsigned char* ip = tail.data() + tail_size - kFooterSize - index_size;
  if (xxh3_64(ip, index_size) != footer.index_checksum) corrupt("index checksum mismatch");
  s->index_.resize(blocks);
  uint64_t next = data_start;
  for (uint64_t b = 0; b < blocks; ++b) {
    const unsigned char* e = ip + b * kIndexEntrySize;
    if (!format::IndexEntry::reserved_zero(e))
      throw Error(ErrorCode::kCorrupt, p, "index entry reserved bytes are not zero", b);
    format::IndexEntry entry = format::IndexEntry::decode(e);
    if (entry.offset != next || entry.stored_size > footer.index_offset - entry.offset)
      throw Error(ErrorCode::kCorrupt, p, "index entry points outside the block area", b);
    if (entry.encoding != format::BlockEncoding::kRaw &&
        entry.encoding != format::BlockEncoding::kZstd)
      throw Error(ErrorCode::kCorrupt, p, "unknown block encoding", b);
    next = entry.offset + entry.stored_size;
    s->index_[b] = entry;
  }
  if (next != footer.index_offset) corrupt("blocks do not end where the index begins");
  s->source_ = std::move(source);
  return s;
}

ShardFile::~ShardFile() = default;

uint32_t ShardFile::block_records(uint64_t block) const {
  const uint64_t rpb = header_.records_per_block;
  const uint64_t first = block * rpb;
  return static_cast<uint32_t>(std::min<uint64_t>(rpb, header_.record_count - first));
}

std::span<const unsigned char> ShardFile::stored_block(uint64_t block) const {
  if (block >= index_.size())
    throw Error(ErrorCode::kInvalidArgument, path_, "no such block", block);
  const format::IndexEntry& e = index_[block];
  if (const unsigned char* in_place = source_->view(e.offset, e.stored_size))
    return {in_place, e.stored_size};
  thread_local std::vector<unsigned char> buffer;
  buffer.resize(e.stored_size);
  source_->read(e.offset, e.stored_size, buffer.data(), block);
  return {buffer.data(), buffer.size()};
}

void ShardFile::verify_stored(uint64_t block, std::span<const unsigned char> bytes) const {
  uint64_t actual = xxh3_64(bytes.data(), bytes.size());
  if (actual != index_[block].checksum)
    throw Error(ErrorCode::kCorrupt, path_,
                "block checksum mismatch (stored " + checksum_hex(index_[block].checksum) +
                    ", computed " + checksum_hex(actual) + ")",
                block);
}

void ShardFile::verify_block(uint64_t block) const { verify_stored(block, stored_block(block)); }

void ShardFile::read_block(uint64_t block, BlockDecoder& decoder, unsigned char* out) const {
  auto bytes = stored_block(block);
  try {
    verify_stored(block, bytes);
  } catch (const Error&) {
    // Damaged on the way (a remote read): fetched once more from the origin, then believed
    // or reported.
    thread_local std::vector<unsigned char> again;
    const format::IndexEntry& e = index_[block];
    again.resize(e.stored_size);
    if (!source_->refetch(e.offset, e.stored_size, again.data(), block)) throw;
    bytes = {again.data(), again.size()};
    verify_stored(block, bytes);
  }
  try {
    decoder.decode(*schema_, header_.filter, index_[block].encoding, bytes.data(), bytes.size(),
                   block_records(block), out);
  } catch (const Error& e) {
    throw Error(e.code(), path_, e.reason(), block);
  }
}

void ShardFile::prefetch_block(uint64_t block) const {
  if (block >= index_.size()) return;
  source_->prefetch(index_[block].offset, index_[block].stored_size);
}

}  // namespace shardkit
