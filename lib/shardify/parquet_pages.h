// A Parquet file's own structure, read without DuckDB: the footer's row groups one at a time,
// and the CRC-32 of every page that carries one (PageHeader.crc: zlib's CRC-32 of the page's
// bytes as stored, after compression), which DuckDB does not check. The footer is parsed as a
// stream (Thrift compact protocol), so a file of 100,000 row groups costs no more memory here
// than a file of one.
//
// What Parquet's own checks cover: only pages with a CRC (writers add one on request: parquet-mr
// and Spark by default since 1.12, pyarrow with write_page_checksum=True; DuckDB never) and
// compressed pages whose codec checks its data (gzip's CRC-32; snappy, lz4, brotli and zstd
// without a frame checksum mostly decode damaged data as other bytes). A flipped bit in an
// uncompressed page without a CRC is new text, and nothing can tell.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace shardkit::shardify {

class ParquetPages {
 public:
  // Opens `path` and reads the footer up to its row groups. Throws Error(kInput) naming the
  // file when it is not a Parquet file or its footer is damaged.
  explicit ParquetPages(const std::string& path);
  ~ParquetPages();
  ParquetPages(const ParquetPages&) = delete;
  ParquetPages& operator=(const ParquetPages&) = delete;

  // The file's row count as its footer states it (0 when it does not).
  uint64_t total_rows() const { return total_rows_; }
  // Reads the next row group from the footer, checks the CRC of each of its pages that has one,
  // and gives its row count; false after the last. Throws Error(kInput) naming the row group,
  // column, page and byte offset of a page whose bytes do not match its CRC.
  bool next_group(uint64_t* rows);
  uint64_t groups_read() const { return groups_read_; }
  uint64_t pages_checked() const { return pages_checked_; }  // pages that had a CRC

 private:
  class Reader;
  // Where a column chunk's pages are (size 0: nowhere to check, e.g. in another file).
  struct ChunkPlace {
    std::string column;  // its path in the schema, "meta.body"
    uint64_t start = 0, size = 0;
  };
  ChunkPlace read_chunk();
  void check_chunk(uint64_t group, const std::string& column, uint64_t start, uint64_t size);
  void check_page(uint64_t group, const std::string& column, uint64_t page, uint64_t* at,
                  uint64_t end);

  std::string path_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::unique_ptr<Reader> footer_;
  uint64_t total_rows_ = 0;
  uint64_t groups_left_ = 0, groups_read_ = 0, pages_checked_ = 0;
};

}  // namespace shardkit::shardify
