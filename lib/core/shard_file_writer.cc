#include "core/shard_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/checksum.h"
#include "core/error.h"

namespace shardkit {

ShardFileWriter::ShardFileWriter(std::filesystem::path path, const Schema& schema,
                                 uint32_t records_per_block, format::BlockFilter filter)
    : path_(std::move(path)),
      schema_text_(schema.canonical()),
      record_size_(static_cast<uint32_t>(schema.record_size())),
      records_per_block_(records_per_block),
      filter_(filter) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorCode::kIo, path_.string(), std::strerror(errno));
  // The header is rewritten with its final counts by finish(); until then it is zeros, which
  // no reader accepts.
  std::vector<unsigned char> zeros(format::kHeaderSize + schema_text_.size(), 0);
  write_at(zeros.data(), zeros.size(), 0);
  offset_ = zeros.size();
}

ShardFileWriter::~ShardFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ShardFileWriter::write_at(const void* data, size_t size, uint64_t offset) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::kIo, path_.string(), std::string("write: ") + std::strerror(errno));
    }
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

void ShardFileWriter::add_block(const EncodedBlock& block, uint32_t record_count) {
  if (saw_short_block_ || record_count == 0 || record_count > records_per_block_)
    throw Error(ErrorCode::kInvalidArgument, path_.string(),
                "only the last block of a shard may hold fewer than records_per_block records");
  saw_short_block_ = record_count < records_per_block_;
  format::IndexEntry e;
  e.offset = offset_;
  e.stored_size = static_cast<uint32_t>(block.bytes.size());
  e.encoding = block.encoding;
  e.checksum = block.checksum;
  write_at(block.bytes.data(), block.bytes.size(), offset_);
#ifdef SYNC_FILE_RANGE_WRITE
  // The block starts on its way to the disk now, while later blocks are made, so that finish()'s
  // fsync waits only for the last of them. A hint: durability is still finish()'s fsync's.
  ::sync_file_range(fd_, static_cast<off_t>(offset_), static_cast<off_t>(block.bytes.size()),
                    SYNC_FILE_RANGE_WRITE);
#endif
  offset_ += block.bytes.size();
  records_ += record_count;
  index_.push_back(e);
}

ShardSummary ShardFileWriter::finish() {
  std::vector<unsigned char> index(index_.size() * format::kIndexEntrySize);
  for (size_t i = 0; i < index_.size(); ++i)
    index_[i].encode(index.data() + i * format::kIndexEntrySize);

  format::ShardHeader h;
  h.schema_size = static_cast<uint32_t>(schema_text_.size());
  h.record_size = record_size_;
  h.records_per_block = records_per_block_;
  h.record_count = records_;
  h.filter = filter_;
  // Sized apart from the schema so that the compiler sees kHeaderSize bytes (GCC 12 otherwise
  // assumes the sum may wrap and warns -Warray-bounds on the encode's memset).
  std::vector<unsigned char> header(format::kHeaderSize);
  h.encode_without_checksum(header.data());
  header.insert(header.end(), schema_text_.begin(), schema_text_.end());
  // The header checksum covers bytes 0..39 and the schema text, skipping its own 8 bytes.
  std::vector<unsigned char> covered(header.begin(), header.begin() + 40);
  covered.insert(covered.end(), schema_text_.begin(), schema_text_.end());
  h.checksum = xxh3_64(covered.data(), covered.size());
  h.encode(header.data());

  format::ShardFooter f;
  f.index_offset = offset_;
  f.index_checksum = xxh3_64(index.data(), index.size());
  f.header_checksum = h.checksum;
  unsigned char footer[format::kFooterSize];
  f.encode_without_checksum(footer);
  f.footer_checksum = xxh3_64(footer, format::ShardFooter::kChecksummedBytes);
  f.encode(footer);

  write_at(index.data(), index.size(), offset_);
  offset_ += index.size();
  write_at(footer, sizeof footer, offset_);
  offset_ += sizeof footer;
  write_at(header.data(), header.size(), 0);
  if (::fsync(fd_) != 0)
    throw Error(ErrorCode::kIo, path_.string(), std::string("fsync: ") + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  return ShardSummary{records_, offset_, f.footer_checksum};
}

}  // namespace shardkit
