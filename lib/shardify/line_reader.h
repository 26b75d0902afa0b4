// Splits a ByteSource into lines ("\n" or "\r\n" endings), counting them from 1.
//
// Lines are views, and a reader may hand them on without copying them (TextReader does), with
// what holds their bytes:
// - A plain file of a megabyte or more, in a process that guards mappings (core/mapped_file.h),
//   is mapped, and its lines and take_rest() are views of the mapping (line_file()): nothing is
//   copied. Whoever uses such a view checks afterwards that the file did not shrink; the reader
//   checks at the last line, for what it copied out.
// - Other input is read into buffers (line_owner()). A buffer someone holds is never written
//   again (the next read goes into a new one that starts with the unfinished line); one nobody
//   holds is reused.
//
// Memory: a line read is held once, in a buffer that grows with it; after a line longer than a
// few MiB, release_line() lets its buffer go. A mapped file's pages 16 to 32 MiB behind the line
// being read leave resident memory, and release_line() lets a long line's go.
//
// A compressed stream that ends early or turns out corrupt ends the lines instead of throwing:
// every complete line before the damage is returned, the incomplete tail is dropped, and
// stream_error() says what happened (readers turn it into an error example, so --on-error
// decides, in input order).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/mapped_file.h"
#include "shardify/byte_source.h"

namespace shardkit::shardify {

class LineReader {
 public:
  // Bytes after every returned line that may be read (simdjson's padding): always allocated.
  static constexpr size_t kPadding = 64;

  explicit LineReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {}
  // The next line without its ending; valid while line_owner() is held, followed by kPadding
  // readable bytes. False at the end, or where the stream broke.
  bool next(std::string_view& line);
  // What holds the line last returned: the file mapped, or else the buffer it was read into.
  const std::shared_ptr<const MappedFile>& line_file() const { return map_; }
  std::shared_ptr<const void> line_owner() const {
    if (mapped_) return nullptr;
    return buf_;
  }
  // Once the caller no longer reads the line last returned from where it lies, lets that go:
  // - a read line's buffer, where it grew for a long line (the lines after it move to a buffer
  //   of their own; a caller that took line_owner() keeps the line's);
  // - a mapped line's pages (a later read of the line faults them in again).
  void release_line();
  // The rest of the input from the start of the line last returned: the file mapped, or one
  // buffer read to the end, or to the last complete line before a damaged stream
  // (stream_error() then says so). next() returns no more lines.
  struct Rest {
    std::string_view text;
    std::shared_ptr<const MappedFile> file;  // what holds it: one of the two
    std::shared_ptr<const void> buffer;
  };
  Rest take_rest();
  // Whether the line last returned ended in "\r\n" (its '\r' was dropped): a quoted CSV field
  // across lines keeps the ending it had.
  bool line_ended_in_crlf() const { return crlf_; }
  // Number of the line last returned (1-based); after take_rest(), of the last complete line.
  uint64_t line_number() const { return line_number_; }
  // Bytes of the file consumed so far (compressed bytes for a compressed file): progress.
  uint64_t file_bytes_consumed() const {
    return mapped_ ? text_bytes_ : source_->file_bytes_consumed();
  }
  // Text bytes read so far (decompressed, line endings included).
  uint64_t text_bytes() const { return text_bytes_; }
  // Why the lines ended early (truncated or corrupt compressed input), once; empty after a
  // clean end and after it was taken.
  std::string take_stream_error() { return std::exchange(stream_error_, {}); }
  // Whether lines before that error may hold text of a damaged member or frame, read unchecked
  // (ByteSource::handed_out_damaged_text).
  bool stream_error_after_damaged_text() const { return damaged_text_; }

 private:
  // Reads more input into a new buffer that starts with buf_[keep_from, end); false at the end.
  bool fill(size_t keep_from);
  // Appends up to `size` bytes read to `out`; 0 at the end or where a damaged stream ends
  // (stream_error_ set).
  size_t read_into(std::string& out, size_t size);
  // How much the next read asks for, at most `most`.
  size_t chunk_size(uint64_t most) const;
  // The next line of the file mapped; false at its end, where the mapping is let go.
  bool next_mapped(std::string_view& line);
  // Drops a line's '\r' ending and the first line's byte order mark, and counts the line; true.
  bool finish_line(std::string_view& line);

  std::unique_ptr<ByteSource> source_;
  std::shared_ptr<std::string> buf_ = std::make_shared<std::string>();
  size_t pos_ = 0;         // where the next line starts in *buf_, or in the mapping
  size_t line_start_ = 0;  // where the line last returned starts in *buf_, or in the mapping
  bool eof_ = false;
  uint64_t line_number_ = 0;
  bool crlf_ = false;
  uint64_t text_bytes_ = 0;
  std::string stream_error_;
  bool damaged_text_ = false;
  // The file mapped, while its lines are being returned: then the lines handed out hold it (a
  // reader is kept until its next call finds the end, and a document may outlive it).
  std::shared_ptr<const MappedFile> map_;
  bool mapped_ = false;  // from the first line on
  // Where the mapped file's pages may still be resident: those before left.
  size_t resident_from_ = 0;
  bool started_ = false;
  bool rest_taken_ = false;
};

}  // namespace shardkit::shardify
