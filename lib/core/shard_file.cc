#include "core/shard_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/checksum.h"
#include "core/error.h"

namespace shardkit {
namespace {

using format::kFooterSize;
using format::kHeaderSize;
using format::kIndexEntrySize;

}  // namespace

std::unique_ptr<ShardFile> ShardFile::open(const std::filesystem::path& path, const Schema& schema,
                                           uint32_t records_per_block, const ShardEntry& expected) {
  std::unique_ptr<ShardFile> s(new ShardFile());
  s->path_ = path.string();
  s->schema_ = &schema;
  const std::string& p = s->path_;
  auto corrupt = [&](const std::string& what) { throw Error(ErrorCode::kCorrupt, p, what); };

  // O_NONBLOCK: a FIFO in place of a shard must be refused below, not block this open.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP)
      throw Error(ErrorCode::kCorrupt, p, "is a symbolic link; shards must be regular files");
    throw Error(ErrorCode::kIo, p, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorCode::kCorrupt, p, "is not a regular file");
  }
  s->size_ = static_cast<size_t>(st.st_size);
  if (s->size_ != expected.bytes) {
    ::close(fd);
    corrupt("file is " + std::to_string(s->size_) + " bytes, manifest says " +
            std::to_string(expected.bytes) + " (truncated or replaced?)");
  }
  if (s->size_ < kHeaderSize + kFooterSize) {
    ::close(fd);
    corrupt("file is too short (" + std::to_string(s->size_) + " bytes) to be a shard");
  }
  void* m = ::mmap(nullptr, s->size_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) throw Error(ErrorCode::kIo, p, std::string("mmap: ") + std::strerror(errno));
  s->map_ = static_cast<const unsigned char*>(m);
  const unsigned char* base = s->map_;

  // Footer first: it is the anchor that commits to header and index.
  const unsigned char* fp = base + s->size_ - kFooterSize;
  if (!format::ShardFooter::magic_ok(fp)) corrupt("footer magic is not \"SHARDEND\"");
  format::ShardFooter footer = format::ShardFooter::decode(fp);
  if (xxh3_64(fp, format::ShardFooter::kChecksummedBytes) != footer.footer_checksum)
    corrupt("footer checksum mismatch");
  if (footer.footer_checksum != expected.checksum)
    corrupt("footer checksum " + checksum_hex(footer.footer_checksum) +
            " differs from the manifest's " + checksum_hex(expected.checksum));

  // Header.
  if (!format::ShardHeader::magic_ok(base)) corrupt("header magic is not \"SHARDKIT\"");
  format::ShardHeader h = format::ShardHeader::decode(base);
  if (h.version != format::kFormatVersion)
    throw Error(ErrorCode::kUnsupported, p,
                "shard format version " + std::to_string(h.version) + " is not supported");
  if (!format::ShardHeader::reserved_zero(base)) corrupt("header reserved bytes are not zero");
  if (h.schema_size > format::kMaxSchemaSize ||
      kHeaderSize + h.schema_size > s->size_ - kFooterSize)
    corrupt("header schema size " + std::to_string(h.schema_size) + " is out of range");
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
  if (blocks > (s->size_ - data_start) / kIndexEntrySize) corrupt("block count is out of range");
  const uint64_t index_size = blocks * kIndexEntrySize;
  if (footer.index_offset < data_start ||
      footer.index_offset + index_size + kFooterSize != s->size_)
    corrupt("index offset " + std::to_string(footer.index_offset) +
            " is inconsistent with the file size");
  const unsigned char* ip = base + footer.index_offset;
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
  return s;
}

ShardFile::~ShardFile() {
  if (map_) ::munmap(const_cast<unsigned char*>(map_), size_);
}

uint32_t ShardFile::block_records(uint64_t block) const {
  const uint64_t rpb = header_.records_per_block;
  const uint64_t first = block * rpb;
  return static_cast<uint32_t>(std::min<uint64_t>(rpb, header_.record_count - first));
}

std::span<const unsigned char> ShardFile::stored_block(uint64_t block) const {
  if (block >= index_.size())
    throw Error(ErrorCode::kInvalidArgument, path_, "no such block", block);
  return {map_ + index_[block].offset, index_[block].stored_size};
}

void ShardFile::verify_block(uint64_t block) const {
  auto bytes = stored_block(block);
  uint64_t actual = xxh3_64(bytes.data(), bytes.size());
  if (actual != index_[block].checksum)
    throw Error(ErrorCode::kCorrupt, path_,
                "block checksum mismatch (stored " + checksum_hex(index_[block].checksum) +
                    ", computed " + checksum_hex(actual) + ")",
                block);
}

void ShardFile::read_block(uint64_t block, BlockDecoder& decoder, unsigned char* out) const {
  verify_block(block);
  auto bytes = stored_block(block);
  try {
    decoder.decode(*schema_, header_.filter, index_[block].encoding, bytes.data(), bytes.size(),
                   block_records(block), out);
  } catch (const Error& e) {
    throw Error(e.code(), path_, e.reason(), block);
  }
}

void ShardFile::prefetch_block(uint64_t block) const {
  if (block >= index_.size()) return;
  const long page = ::sysconf(_SC_PAGESIZE);
  uintptr_t start = reinterpret_cast<uintptr_t>(map_ + index_[block].offset);
  uintptr_t aligned = start & ~static_cast<uintptr_t>(page - 1);
  ::madvise(reinterpret_cast<void*>(aligned), index_[block].stored_size + (start - aligned),
            MADV_WILLNEED);
}

}  // namespace shardkit
