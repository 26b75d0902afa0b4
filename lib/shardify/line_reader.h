// Splits a ByteSource into lines ("\n" or "\r\n" endings), counting them from 1.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "shardify/byte_source.h"

namespace shardkit::shardify {

class LineReader {
 public:
  explicit LineReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {}
  // The next line without its ending; valid until the next call. False at the end.
  bool next(std::string_view& line);
  // Number of the line last returned (1-based).
  uint64_t line_number() const { return line_number_; }
  const ByteSource& source() const { return *source_; }

 private:
  bool fill();
  std::unique_ptr<ByteSource> source_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace shardkit::shardify
