#include "shardify/line_reader.h"

#include <cstring>

namespace shardkit::shardify {

bool LineReader::fill() {
  if (eof_) return false;
  buf_.erase(0, pos_);
  pos_ = 0;
  const size_t old = buf_.size();
  const size_t chunk = std::max<size_t>(1 << 20, old);
  buf_.resize(old + chunk);
  size_t n = source_->read(buf_.data() + old, chunk);
  buf_.resize(old + n);
  if (n == 0) eof_ = true;
  return n > 0;
}

bool LineReader::next(std::string_view& line) {
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
