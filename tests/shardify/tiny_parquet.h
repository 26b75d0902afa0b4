// A minimal Parquet writer for tests, from the format's specification (parquet-format's
// parquet.thrift, Thrift compact protocol): one required UTF8 string column, PLAIN encoding,
// uncompressed data pages v1, any number of row groups, and a page CRC-32 (zlib's, over the
// page's bytes after its header) when asked. DuckDB reading its files back is what shows them
// valid. Writers in the wild that make such files: parquet-mr/Spark (CRCs by default), pyarrow
// (write_page_checksum=True, row_group_size=1).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shardkit::testing::tiny_parquet {

// Thrift compact protocol, only what the writer needs.
class Compact {
 public:
  std::string out;

  void varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void zigzag(int64_t v) {
    varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  // A field header; ids must grow within a struct (begin()/end() keep the last id).
  void field(int16_t id, uint8_t type) {
    const int16_t delta = static_cast<int16_t>(id - last_.back());
    if (delta > 0 && delta <= 15) {
      out.push_back(static_cast<char>((delta << 4) | type));
    } else {
      out.push_back(static_cast<char>(type));
      zigzag(id);
    }
    last_.back() = id;
  }
  void i32(int16_t id, int64_t v) { field(id, 5), zigzag(v); }
  void i64(int16_t id, int64_t v) { field(id, 6), zigzag(v); }
  void string(int16_t id, const std::string& s) { field(id, 8), raw_string(s); }
  void raw_string(const std::string& s) {
    varint(s.size());
    out += s;
  }
  void list(int16_t id, uint8_t element_type, size_t size) {
    field(id, 9);
    if (size < 15) {
      out.push_back(static_cast<char>((size << 4) | element_type));
    } else {
      out.push_back(static_cast<char>(0xf0 | element_type));
      varint(size);
    }
  }
  void begin_struct(int16_t id) { field(id, 12), begin(); }
  void begin() { last_.push_back(0); }  // a struct, also as a list element
  void end() {
    out.push_back(0);
    last_.pop_back();
  }

 private:
  std::vector<int16_t> last_{0};
};

// The page of `values` (PLAIN: 4-byte little-endian length, then the bytes), with its header.
inline std::string data_page(const std::vector<std::string>& values, bool crc) {
  std::string data;
  for (const std::string& v : values) {
    const uint32_t n = static_cast<uint32_t>(v.size());
    for (int k = 0; k < 4; ++k) data.push_back(static_cast<char>((n >> (8 * k)) & 0xff));
    data += v;
  }
  Compact h;
  h.begin();
  h.i32(1, 0);  // DATA_PAGE
  h.i32(2, static_cast<int64_t>(data.size()));
  h.i32(3, static_cast<int64_t>(data.size()));
  if (crc) {
    const uLong sum = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()),
                            static_cast<uInt>(data.size()));
    h.i32(4, static_cast<int32_t>(static_cast<uint32_t>(sum)));
  }
  h.begin_struct(5);  // DataPageHeader
  h.i32(1, static_cast<int64_t>(values.size()));
  h.i32(2, 0);  // PLAIN
  h.i32(3, 3);  // RLE definition levels (none: the column is required)
  h.i32(4, 3);  // RLE repetition levels (none)
  h.end();
  h.end();
  return h.out + data;
}

// A file whose column `name` holds `rows`, `rows_per_group` rows to a row group.
inline std::string file(const std::string& name, const std::vector<std::string>& rows,
                        size_t rows_per_group, bool crc) {
  std::string bytes = "PAR1";
  struct Group {
    uint64_t offset, size, rows;
  };
  std::vector<Group> groups;
  for (size_t first = 0; first < rows.size(); first += rows_per_group) {
    const size_t last = std::min(rows.size(), first + rows_per_group);
    const std::string page =
        data_page(std::vector<std::string>(rows.begin() + first, rows.begin() + last), crc);
    groups.push_back({bytes.size(), page.size(), last - first});
    bytes += page;
  }
  Compact m;
  m.begin();
  m.i32(1, 1);  // version
  m.list(2, 12, 2);
  m.begin();  // the root
  m.string(4, "schema");
  m.i32(5, 1);  // one child
  m.end();
  m.begin();
  m.i32(1, 6);  // BYTE_ARRAY
  m.i32(3, 0);  // REQUIRED
  m.string(4, name);
  m.i32(6, 0);  // UTF8
  m.end();
  m.i64(3, static_cast<int64_t>(rows.size()));
  m.list(4, 12, groups.size());
  for (const Group& g : groups) {
    m.begin();  // RowGroup
    m.list(1, 12, 1);
    m.begin();  // ColumnChunk
    m.i64(2, static_cast<int64_t>(g.offset));
    m.begin_struct(3);  // ColumnMetaData
    m.i32(1, 6);
    m.list(2, 5, 2);
    m.zigzag(0);  // PLAIN
    m.zigzag(3);  // RLE
    m.list(3, 8, 1);
    m.raw_string(name);
    m.i32(4, 0);  // UNCOMPRESSED
    m.i64(5, static_cast<int64_t>(g.rows));
    m.i64(6, static_cast<int64_t>(g.size));
    m.i64(7, static_cast<int64_t>(g.size));
    m.i64(9, static_cast<int64_t>(g.offset));
    m.end();
    m.end();
    m.i64(2, static_cast<int64_t>(g.size));
    m.i64(3, static_cast<int64_t>(g.rows));
    m.end();
  }
  m.end();
  bytes += m.out;
  const uint32_t footer = static_cast<uint32_t>(m.out.size());
  for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<char>((footer >> (8 * k)) & 0xff));
  return bytes + "PAR1";
}

}  // namespace shardkit::testing::tiny_parquet
