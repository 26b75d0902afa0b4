#include "shardify/line_reader.h"

#include <cstring>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

// Reads come in fixed chunks: a buffer sized by the longest line seen, not by a multiple of it.
constexpr size_t kChunk = 1 << 20;
// A buffer above this size was grown for one long line; it shrinks once that line is done.
constexpr size_t kShrinkAbove = 8 * kChunk;

}  // namespace

bool LineReader::fill() {
  if (eof_) return false;
  buf_.erase(0, pos_);
  pos_ = 0;
  const size_t old = buf_.size();
  buf_.resize(old + kChunk + kPadding);
  size_t n = 0;
  try {
    n = source_->read(buf_.data() + old, kChunk);
  } catch (const Error& e) {
    // Corrupt or truncated compressed data (I/O failures stay fatal): the complete lines before
    // it were returned; the incomplete line after the last newline is lost with the rest.
    if (e.code() != ErrorCode::kInput) throw;
    stream_error_ = e.reason();
    buf_.clear();
    eof_ = true;
    return false;
  }
  buf_.resize(old + n);
  text_bytes_ += n;
  if (n == 0) eof_ = true;
  return n > 0;
}

void LineReader::shrink_if_large() {
  if (buf_.capacity() <= kShrinkAbove) return;
  std::string rest;
  rest.reserve(buf_.size() - pos_ + kChunk + kPadding);
  rest.append(buf_, pos_);
  buf_ = std::move(rest);
  pos_ = 0;
}

void LineReader::release_line() { shrink_if_large(); }

void LineReader::take_line(std::string_view line, std::string& out) {
  if (buf_.capacity() <= kShrinkAbove || line.data() < buf_.data() ||
      line.data() + line.size() > buf_.data() + buf_.size()) {
    out.assign(line);
    return;
  }
  const size_t begin = line.data() - buf_.data(), end = begin + line.size();
  std::string rest;
  rest.reserve(buf_.size() - pos_ + kChunk + kPadding);
  rest.append(buf_, pos_);
  out = std::move(buf_);
  out.resize(end);
  out.erase(0, begin);
  buf_ = std::move(rest);
  pos_ = 0;
}

bool LineReader::next(std::string_view& line) {
  shrink_if_large();
  size_t scan_from = pos_;
  for (;;) {
    const char* start = buf_.data() + scan_from;
    const void* nl = std::memchr(start, '\n', buf_.size() - scan_from);
    if (nl) {
      size_t end = static_cast<const char*>(nl) - buf_.data();
      line = std::string_view(buf_.data() + pos_, end - pos_);
      pos_ = end + 1;
      break;
    }
    size_t scanned = buf_.size() - pos_;
    if (!fill()) {
      if (pos_ >= buf_.size()) return false;
      line = std::string_view(buf_.data() + pos_, buf_.size() - pos_);
      pos_ = buf_.size();
      break;
    }
    scan_from = pos_ + scanned;
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++line_number_;
  // A UTF-8 byte order mark (as Windows tools write) is not part of the first line's content:
  // left in, it breaks the JSON of line 1 and renames a CSV/TSV file's first column.
  if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  return true;
}

}  // namespace shardkit::shardify
