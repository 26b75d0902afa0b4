#include "shardify/parquet_pages.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

// Thrift compact protocol types.
enum : uint8_t {
  kTrue = 1,
  kFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

// Page types whose CRC readers check (parquet-format: data pages v1 and v2, dictionary pages).
bool page_has_checked_crc(int64_t type) { return type == 0 || type == 2 || type == 3; }

}  // namespace

// Buffered reads of [.., end) of the file, and the Thrift compact protocol on top.
class ParquetPages::Reader {
 public:
  // `buffer`: bytes read at a time (the footer is read in large reads, a page header in small
  // ones: it is followed by the page).
  Reader(const ParquetPages& owner, uint64_t at, uint64_t end, size_t buffer)
      : owner_(owner), pos_(at), end_(end), buffer_(buffer) {}

  uint64_t position() const { return pos_; }

  uint8_t byte() {
    if (pos_ >= end_) fail("ends inside its metadata");
    if (pos_ < buf_start_ || pos_ >= buf_start_ + buf_.size()) fill();
    return buf_[pos_++ - buf_start_];
  }
  void skip(uint64_t n) {
    if (n > end_ - pos_) fail("ends inside its metadata");
    pos_ += n;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = byte();
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
    fail("has a malformed number in its metadata");
  }
  int64_t zigzag() {
    const uint64_t v = varint();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  // The next field of a struct (false at its end); `last` carries the previous field id.
  bool field(int16_t* last, int16_t* id, uint8_t* type) {
    const uint8_t b = byte();
    if (b == 0) return false;
    *type = b & 0x0f;
    const uint8_t delta = b >> 4;
    *id = delta ? static_cast<int16_t>(*last + delta) : static_cast<int16_t>(zigzag());
    *last = *id;
    return true;
  }
  void list_header(uint64_t* size, uint8_t* type) {
    const uint8_t b = byte();
    *type = b & 0x0f;
    *size = (b >> 4) == 15 ? varint() : (b >> 4);
  }
  int64_t integer(uint8_t type) {
    if (type == kByte) return static_cast<int8_t>(byte());
    if (type == kI16 || type == kI32 || type == kI64) return zigzag();
    fail("has a number of an unexpected type in its metadata");
  }
  std::string string(size_t max) {
    const uint64_t n = varint();
    if (n > max || n > end_ - pos_) fail("has a malformed string in its metadata");
    std::string s;
    for (uint64_t i = 0; i < n; ++i) s.push_back(static_cast<char>(byte()));
    return s;
  }
  void skip_value(uint8_t type, int depth = 0) {
    if (depth > 64) fail("nests its metadata too deep");
    switch (type) {
      case kTrue:
      case kFalse:
        return;
      case kByte:
        byte();
        return;
      case kI16:
      case kI32:
      case kI64:
        varint();
        return;
      case kDouble:
        skip(8);
        return;
      case kBinary:
        skip(varint());
        return;
      case kList:
      case kSet: {
        uint64_t n = 0;
        uint8_t element = 0;
        list_header(&n, &element);
        for (uint64_t i = 0; i < n; ++i)
          element == kTrue || element == kFalse ? void(byte()) : skip_value(element, depth + 1);
        return;
      }
      case kMap: {
        const uint64_t n = varint();
        if (n == 0) return;
        const uint8_t kinds = byte();
        for (uint64_t i = 0; i < n; ++i) {
          skip_value(kinds >> 4, depth + 1);
          skip_value(kinds & 0x0f, depth + 1);
        }
        return;
      }
      case kStruct: {
        int16_t last = 0, id = 0;
        uint8_t t = 0;
        while (field(&last, &id, &t)) skip_value(t, depth + 1);
        return;
      }
      default:
        fail("has a value of unknown type in its metadata");
    }
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorCode::kInput, owner_.path_,
                "not a readable Parquet file: it " + why + " (byte " + std::to_string(pos_) + ")");
  }

 private:
  void fill() {
    buf_.resize(buffer_);
    ssize_t n;
    while ((n = ::pread(owner_.fd_, buf_.data(), buf_.size(), static_cast<off_t>(pos_))) < 0 &&
           errno == EINTR) {
    }
    if (n <= 0) fail("cannot be read: " + std::string(n < 0 ? std::strerror(errno) : "too short"));
    buf_.resize(static_cast<size_t>(n));
    buf_start_ = pos_;
  }

  const ParquetPages& owner_;
  uint64_t pos_, end_;
  size_t buffer_;
  std::vector<uint8_t> buf_;
  uint64_t buf_start_ = 0;
};

ParquetPages::ParquetPages(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(ErrorCode::kIo, path, std::strerror(errno));
  struct stat st {};
  ::fstat(fd_, &st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  unsigned char tail[8];
  if (size < 12 || ::pread(fd_, tail, 8, static_cast<off_t>(size - 8)) != 8 ||
      std::memcmp(tail + 4, "PAR1", 4) != 0) {
    ::close(fd_);
    throw Error(ErrorCode::kInput, path, "not a Parquet file (no PAR1 at its end)");
  }
  const uint64_t footer = uint64_t{tail[0]} | uint64_t{tail[1]} << 8 | uint64_t{tail[2]} << 16 |
                          uint64_t{tail[3]} << 24;
  if (footer > size - 12) {
    ::close(fd_);
    throw Error(ErrorCode::kInput, path, "not a readable Parquet file: its footer length is wrong");
  }
  file_size_ = size;
  footer_ = std::make_unique<Reader>(*this, size - 8 - footer, size - 8, 64 << 10);
  // FileMetaData up to its row groups (field 4): num_rows (3) comes before them.
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (footer_->field(&last, &id, &type)) {
    if (id == 3 && type == kI64) {
      total_rows_ = static_cast<uint64_t>(std::max<int64_t>(0, footer_->zigzag()));
    } else if (id == 4 && type == kList) {
      uint8_t element = 0;
      footer_->list_header(&groups_left_, &element);
      if (element != kStruct && groups_left_ > 0) footer_->fail("has malformed row groups");
      return;
    } else {
      footer_->skip_value(type);
    }
  }
}

ParquetPages::~ParquetPages() {
  if (fd_ >= 0) ::close(fd_);
}

bool ParquetPages::next_group(uint64_t* rows) {
  if (groups_left_ == 0) return false;
  --groups_left_;
  const uint64_t group = groups_read_++;
  *rows = 0;
  // RowGroup: columns (1), num_rows (3).
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (footer_->field(&last, &id, &type)) {
    if (id == 3 && type == kI64) {
      *rows = static_cast<uint64_t>(std::max<int64_t>(0, footer_->zigzag()));
    } else if (id == 1 && type == kList) {
      uint64_t chunks = 0;
      uint8_t element = 0;
      footer_->list_header(&chunks, &element);
      for (uint64_t c = 0; c < chunks; ++c) {
        const ChunkPlace place = read_chunk();
        if (place.size > 0) check_chunk(group, place.column, place.start, place.size);
      }
    } else {
      footer_->skip_value(type);
    }
  }
  return true;
}

ParquetPages::ChunkPlace ParquetPages::read_chunk() {
  // ColumnChunk: file_path (1) puts the data in another file; meta_data (3) is ColumnMetaData:
  // path_in_schema (3), total_compressed_size (7, headers included), data_page_offset (9),
  // dictionary_page_offset (11).
  ChunkPlace place;
  bool external = false;
  int64_t data = -1, dictionary = -1, size = -1;
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  while (footer_->field(&last, &id, &type)) {
    if (id == 1 && type == kBinary) external = true;
    if (id != 3 || type != kStruct) {
      footer_->skip_value(type);
      continue;
    }
    int16_t m_last = 0, m_id = 0;
    uint8_t m_type = 0;
    while (footer_->field(&m_last, &m_id, &m_type)) {
      if (m_id == 3 && m_type == kList) {
        uint64_t parts = 0;
        uint8_t part_type = 0;
        footer_->list_header(&parts, &part_type);
        for (uint64_t p = 0; p < parts; ++p) place.column += (p ? "." : "") + footer_->string(4096);
      } else if (m_id == 7 || m_id == 9 || m_id == 11) {
        (m_id == 7 ? size : m_id == 9 ? data : dictionary) = footer_->integer(m_type);
      } else {
        footer_->skip_value(m_type);
      }
    }
  }
  // A dictionary page comes first; some writers store 0 for "none".
  const int64_t start = dictionary > 0 && dictionary < data ? dictionary : data;
  if (!external && start >= 0 && size > 0) {
    place.start = static_cast<uint64_t>(start);
    place.size = static_cast<uint64_t>(size);
  }
  return place;
}

void ParquetPages::check_chunk(uint64_t group, const std::string& column, uint64_t start,
                               uint64_t size) {
  if (start > file_size_ || size > file_size_ - start)
    throw Error(ErrorCode::kInput, path_,
                "row group " + std::to_string(group) + ", column '" + column +
                    "': its pages lie past the end of the file");
  uint64_t at = start;
  for (uint64_t page = 0; at < start + size; ++page)
    check_page(group, column, page, &at, start + size);
}

void ParquetPages::check_page(uint64_t group, const std::string& column, uint64_t page,
                              uint64_t* at, uint64_t end) {
  auto where = [&] {
    return "row group " + std::to_string(group) + ", column '" + column + "', page " +
           std::to_string(page) + " (byte " + std::to_string(*at) + ")";
  };
  Reader header(*this, *at, end, 256);
  int16_t last = 0, id = 0;
  uint8_t type = 0;
  int64_t page_type = -1, stored = -1, crc = 0;
  bool has_crc = false;
  while (header.field(&last, &id, &type)) {
    if (id == 1) {
      page_type = header.integer(type);
    } else if (id == 3) {
      stored = header.integer(type);
    } else if (id == 4) {
      crc = header.integer(type);
      has_crc = true;
    } else {
      header.skip_value(type);
    }
  }
  const uint64_t data = header.position();
  if (stored < 0 || static_cast<uint64_t>(stored) > end - data)
    throw Error(ErrorCode::kInput, path_,
                where() +
                    ": the page header's size runs past its column chunk; the file is "
                    "damaged");
  if (has_crc && page_has_checked_crc(page_type)) {
    uLong sum = crc32(0L, Z_NULL, 0);
    std::vector<unsigned char> buf(std::min<uint64_t>(static_cast<uint64_t>(stored), 1 << 20));
    for (uint64_t done = 0; done < static_cast<uint64_t>(stored);) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), stored - done));
      const ssize_t n = ::pread(fd_, buf.data(), want, static_cast<off_t>(data + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(ErrorCode::kInput, path_, where() + ": cannot read the page");
      sum = crc32(sum, buf.data(), static_cast<uInt>(n));
      done += static_cast<uint64_t>(n);
    }
    const uint32_t expected = static_cast<uint32_t>(crc);
    if (static_cast<uint32_t>(sum) != expected) {
      char text[96];
      std::snprintf(text, sizeof text, "the page's CRC-32 is %08x but its bytes give %08x",
                    expected, static_cast<uint32_t>(sum));
      throw Error(ErrorCode::kInput, path_, where() + ": " + text + "; the file is damaged");
    }
    ++pages_checked_;
  }
  *at = data + static_cast<uint64_t>(stored);
}

}  // namespace shardkit::shardify
