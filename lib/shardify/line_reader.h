// Splits a ByteSource into lines ("\n" or "\r\n" endings), counting them from 1.
//
// Memory: a line is held once, in a buffer that grows with it; after a line longer than a few
// MiB the buffer shrinks back, so one huge line costs its own size only while it is in use.
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

#include "shardify/byte_source.h"

namespace shardkit::shardify {

class LineReader {
 public:
  // Bytes after every returned line that may be read (simdjson's padding): always allocated.
  static constexpr size_t kPadding = 64;

  explicit LineReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {}
  // The next line without its ending; valid until the next call (or release_line/take_line),
  // followed by kPadding readable bytes. False at the end, or where the stream broke.
  bool next(std::string_view& line);
  // Gives back the memory of a long line the caller no longer needs (the view becomes invalid).
  void release_line();
  // The line last returned, as an owned string: a long line's buffer is handed over, not copied.
  void take_line(std::string_view line, std::string& out);
  // Number of the line last returned (1-based).
  uint64_t line_number() const { return line_number_; }
  const ByteSource& source() const { return *source_; }
  // Text bytes read so far (decompressed, line endings included).
  uint64_t text_bytes() const { return text_bytes_; }
  // Why the lines ended early (truncated or corrupt compressed input), once; empty after a
  // clean end and after it was taken.
  std::string take_stream_error() { return std::exchange(stream_error_, {}); }

 private:
  bool fill();
  void shrink_if_large();
  std::unique_ptr<ByteSource> source_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
  uint64_t text_bytes_ = 0;
  std::string stream_error_;
};

}  // namespace shardkit::shardify
