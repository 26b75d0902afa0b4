#include "shardify/line_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "core/parallel_ranges.h"
#include "core/populate_pages.h"

namespace shardkit::shardify {
namespace {

// Reads come in chunks of this size.
constexpr size_t kChunk = 1 << 20;
// What a read reserves beyond the announced size, for the read that finds the end.
constexpr size_t kEndProbe = 4096;
// The least a read asks for when the source announces less (a file may grow while it is read).
constexpr size_t kMinChunk = 4096;
// A buffer above this size was grown for one long line; release_line() lets it go.
constexpr size_t kLargeBuffer = 8 * kChunk;
// A mapped file's pages this far behind the line being read leave resident memory, a step of
// this size at a time. The lines in flight to the tokenizing threads are fewer bytes (a batch
// holds at most 256 KiB of text, and a pipeline 2 per thread plus 2); a page that one of them
// still reads is faulted in again from the page cache.
constexpr size_t kResidentBehind = 16 << 20;

// Maps a large buffer's pages before it is written, a range of them on each of the arena's
// threads: read into page by page, a 60 MB file takes 15,000 page faults before a second thread
// can start on it.
void populate(char* data, size_t size) {
  for_each_range(size, kParallelRangeBytes,
                 [&](size_t from, size_t to) { populate_pages(data + from, to - from); });
}

}  // namespace

size_t LineReader::read_into(std::string& out, size_t size) {
  const size_t at = out.size();
  out.resize(at + size + kPadding);
  size_t n = 0;
  try {
    n = source_->read(out.data() + at, size);
  } catch (const Error& e) {
    // Corrupt or truncated compressed data (I/O failures stay fatal): the complete lines before
    // it were returned; the incomplete line after the last newline is lost with the rest.
    if (e.code() != ErrorCode::kInput) throw;
    stream_error_ = e.reason();
    damaged_text_ = source_->handed_out_damaged_text();
    eof_ = true;
    out.resize(at);
    return 0;
  }
  out.resize(at + n);  // the padding stays allocated behind the end
  text_bytes_ += n;
  if (n == 0) eof_ = true;
  return n;
}

// At most `most`: the rest of the input and room for the read that finds its end, or a chunk
// where the size is not known. A buffer is zero-filled before the read, and 1 MiB of it for each
// small file was most of a small file's cost.
size_t LineReader::chunk_size(uint64_t most) const {
  const std::optional<uint64_t> hint = source_->remaining_hint();
  if (!hint) return kChunk;
  return static_cast<size_t>(
      std::min<uint64_t>(std::max<uint64_t>(*hint, kMinChunk) + kEndProbe, most));
}

// A buffer that no line handed out points into any more is reused: its unfinished line moves to
// its front and the next chunk goes after it (a long line grows in place, its capacity doubling).
// One that a reader still holds is left as it is, and the unfinished line starts a new one.
bool LineReader::fill(size_t keep_from) {
  if (eof_) return false;
  if (buf_.use_count() == 1) {
    buf_->erase(0, keep_from);
  } else {
    auto next = std::make_shared<std::string>();
    next->reserve(buf_->size() - keep_from + kChunk + kPadding);
    next->append(*buf_, keep_from);
    buf_ = std::move(next);
  }
  pos_ = 0;
  const size_t n = read_into(*buf_, chunk_size(kChunk));
  if (!stream_error_.empty()) buf_->clear();
  return n > 0;
}

void LineReader::release_line() {
  if (map_) {
    map_->release_pages(map_->bytes().substr(line_start_, pos_ - line_start_));
    return;
  }
  if (buf_->capacity() <= kLargeBuffer) return;
  auto rest = std::make_shared<std::string>();
  rest->reserve(buf_->size() - pos_ + kPadding);
  rest->append(*buf_, pos_);
  buf_ = std::move(rest);
  pos_ = 0;
}

bool LineReader::next_mapped(std::string_view& line) {
  const std::string_view file = map_->bytes();
  if (pos_ >= file.size()) {
    // What the readers copied out of the lines was the file's; the lines handed out as views
    // are checked where they are used (Example::text_file).
    map_->check_intact();
    map_.reset();  // the lines handed out keep it
    return false;
  }
  const void* nl = std::memchr(file.data() + pos_, '\n', file.size() - pos_);
  const size_t end = nl ? static_cast<const char*>(nl) - file.data() : file.size();
  line = file.substr(pos_, end - pos_);
  line_start_ = pos_;
  pos_ = std::min(end + 1, file.size());
  text_bytes_ = pos_;
  if (line_start_ >= resident_from_ + 2 * kResidentBehind) {
    const size_t to = line_start_ - kResidentBehind;
    map_->release_pages(file.substr(resident_from_, to - resident_from_));
    resident_from_ = to;
  }
  return true;
}

bool LineReader::next(std::string_view& line) {
  if (rest_taken_) return false;
  if (!started_) {
    started_ = true;
    map_ = source_->map_whole(kPadding);
    mapped_ = map_ != nullptr;
  }
  if (mapped_) return map_ && next_mapped(line) && finish_line(line);
  // The lines after a long one go into a buffer of their own: the long line's is kept only by
  // whoever holds that line.
  release_line();
  size_t scan_from = pos_;
  for (;;) {
    const std::string& b = *buf_;
    const void* nl = std::memchr(b.data() + scan_from, '\n', b.size() - scan_from);
    if (nl) {
      const size_t end = static_cast<const char*>(nl) - b.data();
      line = std::string_view(b.data() + pos_, end - pos_);
      pos_ = end + 1;
      break;
    }
    const size_t scanned = b.size() - pos_;
    if (!fill(pos_)) {
      if (pos_ >= buf_->size()) return false;
      line = std::string_view(buf_->data() + pos_, buf_->size() - pos_);
      pos_ = buf_->size();
      break;
    }
    scan_from = pos_ + scanned;
  }
  line_start_ = static_cast<size_t>(line.data() - buf_->data());
  return finish_line(line);
}

bool LineReader::finish_line(std::string_view& line) {
  crlf_ = !line.empty() && line.back() == '\r';
  if (crlf_) line.remove_suffix(1);
  ++line_number_;
  // A UTF-8 byte order mark (as Windows tools write) is not part of the first line's content:
  // left in, it breaks the JSON of line 1 and renames a CSV/TSV file's first column.
  if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") {
    line.remove_prefix(3);
    line_start_ += 3;
  }
  return true;
}

LineReader::Rest LineReader::take_rest() {
  rest_taken_ = true;
  if (map_) {
    const std::string_view rest = map_->bytes().substr(line_start_);
    text_bytes_ = map_->bytes().size();
    return {rest, std::move(map_), nullptr};
  }
  auto rest = std::make_shared<std::string>();
  const size_t buffered = buf_->size() - line_start_;
  // Room for the size the source announces and a little more, so that the read which finds the
  // end lands in it: doubling a full buffer first would copy the whole file once more (a third
  // of the time before a second thread could start on a large document).
  rest->reserve(buffered + chunk_size(UINT64_MAX) + kPadding);
  populate(rest->data(), rest->capacity());
  rest->append(*buf_, line_start_, buffered);
  while (!eof_) {
    if (rest->capacity() - rest->size() <= kPadding)
      rest->reserve(std::max(2 * rest->capacity(), rest->size() + kChunk + kPadding));
    read_into(*rest, rest->capacity() - rest->size() - kPadding);
  }
  const uint64_t first = line_number_;
  if (!stream_error_.empty()) {
    // The line the stream broke in is lost; the ones before it end where the last newline does.
    const size_t last_newline = rest->rfind('\n');
    rest->resize(last_newline == std::string::npos ? 0 : last_newline + 1);
    line_number_ = first + std::count(rest->begin(), rest->end(), '\n') - 1;
  }
  buf_ = std::make_shared<std::string>();
  pos_ = line_start_ = 0;
  return {*rest, nullptr, std::move(rest)};
}

}  // namespace shardkit::shardify
