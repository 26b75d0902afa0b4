#include "shardify/byte_source.h"

#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_ranges.h"

namespace shardkit::shardify {
namespace {

class FileHandle {
 public:
  explicit FileHandle(const std::filesystem::path& path) : path_(path.string()) {
    f_ = std::fopen(path_.c_str(), "rb");
    if (!f_)
      throw Error(ErrorCode::kIo, path_, std::string("cannot open: ") + std::strerror(errno));
  }
  ~FileHandle() {
    if (f_) std::fclose(f_);
  }
  size_t read(void* out, size_t size) {
    size_t n = std::fread(out, 1, size, f_);
    if (n < size && std::ferror(f_))
      throw Error(ErrorCode::kIo, path_, std::string("read failed: ") + std::strerror(errno));
    consumed_ += n;
    return n;
  }
  // Reads the next `size` bytes of a regular file by positional reads of its ranges at once
  // (core/parallel_ranges.h), then goes on reading after them; returns how many were read, fewer
  // at the end of the file.
  size_t read_in_parallel(char* out, size_t size) {
    const uint64_t start = consumed_;
    std::vector<size_t> got((size + kParallelRangeBytes - 1) / kParallelRangeBytes);
    for_each_range(size, kParallelRangeBytes, [&](size_t begin, size_t end) {
      got[begin / kParallelRangeBytes] = read_at(start + begin, out + begin, end - begin);
    });
    size_t n = 0;  // up to the first short range: the file ended (or shrank) there
    for (size_t k = 0; k < got.size(); ++k) {
      n += got[k];
      if (got[k] < std::min(kParallelRangeBytes, size - k * kParallelRangeBytes)) break;
    }
    if (std::fseek(f_, static_cast<long>(start + n), SEEK_SET) != 0)
      throw Error(ErrorCode::kIo, path_, std::string("seek failed: ") + std::strerror(errno));
    consumed_ += n;
    return n;
  }
  uint64_t consumed() const { return consumed_; }
  const std::string& path() const { return path_; }
  int fd() const { return ::fileno(f_); }
  // The file's size when it was opened (0 when not a regular file).
  uint64_t size() const {
    struct stat st;
    return ::fstat(::fileno(f_), &st) == 0 && S_ISREG(st.st_mode)
               ? static_cast<uint64_t>(st.st_size)
               : 0;
  }

 private:
  // Up to `size` bytes from `offset` on; fewer at the end of the file.
  size_t read_at(uint64_t offset, char* out, size_t size) const {
    size_t n = 0;
    while (n < size) {
      const ssize_t r = ::pread(::fileno(f_), out + n, size - n, static_cast<off_t>(offset + n));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw Error(ErrorCode::kIo, path_, std::string("read failed: ") + std::strerror(errno));
      if (r == 0) break;
      n += static_cast<size_t>(r);
    }
    return n;
  }

  std::string path_;
  std::FILE* f_ = nullptr;
  uint64_t consumed_ = 0;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(std::unique_ptr<FileHandle> file, std::string prefix)
      : file_(std::move(file)), prefix_(std::move(prefix)) {}
  size_t read(char* out, size_t size) override {
    size_t n = 0;
    if (prefix_pos_ < prefix_.size()) {
      n = std::min(size, prefix_.size() - prefix_pos_);
      std::memcpy(out, prefix_.data() + prefix_pos_, n);
      prefix_pos_ += n;
      if (n == size) return n;
    }
    // A large read of a regular file (a whole-file document) is spread over the arena's threads.
    if (size - n >= 2 * kParallelRangeBytes && file_->size() > 0)
      return n + file_->read_in_parallel(out + n, size - n);
    return n + file_->read(out + n, size - n);
  }
  uint64_t file_bytes_consumed() const override {
    return file_->consumed() - (prefix_.size() - prefix_pos_);
  }
  std::optional<uint64_t> remaining_hint() const override {
    const uint64_t size = file_->size(), done = file_bytes_consumed();
    return size > done ? size - done : 0;
  }
  std::shared_ptr<const MappedFile> map_whole(size_t padding) override {
    const uint64_t size = file_->size();
    if (size < kMapFrom) return nullptr;
    return MappedFile::map(file_->fd(), size, padding, file_->path());
  }

 private:
  // Smaller files are read: one read() costs less than mapping and unmapping.
  static constexpr uint64_t kMapFrom = uint64_t{1} << 20;

  std::unique_ptr<FileHandle> file_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
};

// A decompressing source, with what a check of the whole file needs to know.
class Decoder : public ByteSource {
 public:
  uint64_t text_out() const { return text_out_; }  // decompressed bytes handed out
  // Where in the text the gzip member or zstd frame being decoded began.
  uint64_t member_start() const { return member_start_; }
  bool truncated() const { return truncated_; }  // the file ended inside a member or frame
  virtual const char* unit() const = 0;          // "member" or "frame"

 protected:
  uint64_t text_out_ = 0;
  uint64_t member_start_ = 0;
  bool truncated_ = false;
};

class ZstdSource : public Decoder {
 public:
  ZstdSource(std::unique_ptr<FileHandle> file, std::string prefix)
      : file_(std::move(file)), in_(ZSTD_DStreamInSize()), dctx_(ZSTD_createDCtx()) {
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    in_buf_ = {in_.data(), prefix.size(), 0};
  }
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  size_t read(char* out, size_t size) override {
    if (!pending_error_.empty()) throw Error(ErrorCode::kInput, file_->path(), pending_error_);
    ZSTD_outBuffer ob{out, size, 0};
    while (ob.pos == 0) {
      if (in_buf_.pos == in_buf_.size) {
        size_t n = file_->read(in_.data(), in_.size());
        if (n == 0) {
          if (!frame_done_) {
            truncated_ = true;
            throw Error(ErrorCode::kInput, file_->path(),
                        "truncated zstd stream (the file ends inside a frame)");
          }
          return 0;
        }
        in_buf_ = {in_.data(), n, 0};
      }
      size_t r = ZSTD_decompressStream(dctx_, &ob, &in_buf_);
      if (ZSTD_isError(r)) {
        pending_error_ = "corrupt zstd data near compressed byte " +
                         std::to_string(file_bytes_consumed()) + ": " + ZSTD_getErrorName(r);
        // The text decoded before the damage goes on first; the error comes with the next read.
        text_out_ += ob.pos;
        if (ob.pos > 0) return ob.pos;
        throw Error(ErrorCode::kInput, file_->path(), pending_error_);
      }
      frame_done_ = (r == 0);
      if (frame_done_) member_start_ = text_out_ + ob.pos;
    }
    text_out_ += ob.pos;
    return ob.pos;
  }
  uint64_t file_bytes_consumed() const override {
    return file_->consumed() - (in_buf_.size - in_buf_.pos);
  }
  const char* unit() const override { return "frame"; }

 private:
  std::unique_ptr<FileHandle> file_;
  std::vector<char> in_;
  ZSTD_inBuffer in_buf_{};
  ZSTD_DCtx* dctx_;
  bool frame_done_ = true;
  std::string pending_error_;
};

// gzip through ISA-L's igzip, which inflates 4-5 times faster than zlib on x86-64 (BENCHMARKS.md,
// "Compressed inputs"); every member's CRC-32 and length are checked as zlib checks them.
class GzipSource : public Decoder {
 public:
  GzipSource(std::unique_ptr<FileHandle> file, std::string prefix)
      : file_(std::move(file)), in_(1 << 16), state_(std::make_unique<inflate_state>()) {
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    start_member(reinterpret_cast<uint8_t*>(in_.data()), static_cast<uint32_t>(prefix.size()));
  }
  size_t read(char* out, size_t size) override {
    if (!pending_error_.empty()) throw Error(ErrorCode::kInput, file_->path(), pending_error_);
    state_->next_out = reinterpret_cast<uint8_t*>(out);
    state_->avail_out = static_cast<uint32_t>(std::min<size_t>(size, UINT32_MAX));
    const uint32_t room = state_->avail_out;
    while (state_->avail_out == room) {
      if (state_->avail_in == 0 && !refill()) return 0;
      // Concatenated gzip members (as `cat a.gz b.gz` makes) form one stream.
      if (member_done_) start_member(state_->next_in, state_->avail_in);
      if (at_header_) gather_header();
      const uint32_t had = state_->avail_in;
      const int r = isal_inflate(state_.get());
      if (r < 0) return fail(room - state_->avail_out, r);
      // A call that takes nothing and gives nothing would be made again forever.
      if (state_->avail_in == had && state_->avail_out == room &&
          state_->block_state != ISAL_BLOCK_FINISH)
        return fail(0, r);
      if (state_->block_state == ISAL_BLOCK_FINISH) {
        member_done_ = true;
        member_start_ = text_out_ + (room - state_->avail_out);
      }
    }
    text_out_ += room - state_->avail_out;
    return room - state_->avail_out;
  }
  uint64_t file_bytes_consumed() const override { return file_->consumed() - state_->avail_in; }
  const char* unit() const override { return "member"; }

 private:
  // Resets the inflater for a member whose bytes start at `next`; the output buffer stays.
  void start_member(uint8_t* next, uint32_t avail) {
    uint8_t* const out = state_->next_out;
    const uint32_t room = state_->avail_out;
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;  // parse the header, check the trailer
    state_->next_in = next;
    state_->avail_in = avail;
    state_->next_out = out;
    state_->avail_out = room;
    member_done_ = false;
    at_header_ = true;
  }
  // ISA-L 2.30 checks a header's own CRC-16 (flag FHCRC) over the bytes of the call that ends
  // the header alone, and refuses a good header split between two reads. Such a header is
  // gathered whole into the buffer first.
  void gather_header() {
    at_header_ = false;
    for (;;) {
      const size_t need = hcrc_header_bytes(state_->next_in, state_->avail_in);
      if (need <= state_->avail_in) return;
      if (need > kMaxHeaderBytes)
        throw Error(ErrorCode::kInput, file_->path(),
                    "a gzip header with a header CRC longer than 1 MiB (its name or comment)");
      std::memmove(in_.data(), state_->next_in, state_->avail_in);
      if (in_.size() < need) in_.resize(std::max(need, 2 * in_.size()));  // not a byte a read
      const size_t n = file_->read(in_.data() + state_->avail_in, in_.size() - state_->avail_in);
      state_->next_in = reinterpret_cast<uint8_t*>(in_.data());
      state_->avail_in += static_cast<uint32_t>(n);
      if (n == 0) return;  // the file ends inside the header: the inflater says it is cut
    }
  }
  // How many bytes of a member's start `p[0, n)` must be at hand: its whole header when that
  // carries a CRC-16 (RFC 1952), n + 1 while the bytes so far cannot tell; 0 when not needed.
  static size_t hcrc_header_bytes(const uint8_t* p, size_t n) {
    constexpr uint8_t kFhcrc = 2, kFextra = 4, kFname = 8, kFcomment = 16;
    if (n < 4) return 4;
    if (p[0] != 0x1F || p[1] != 0x8B || !(p[3] & kFhcrc)) return 0;
    size_t at = 10;
    if (p[3] & kFextra) {
      if (n < at + 2) return at + 2;
      at += 2 + (p[at] | size_t{p[at + 1]} << 8);
    }
    for (const uint8_t field : {kFname, kFcomment}) {
      if (!(p[3] & field)) continue;
      const void* nul = at < n ? std::memchr(p + at, 0, n - at) : nullptr;
      if (!nul) return std::max(at, n) + 1;
      at = static_cast<size_t>(static_cast<const uint8_t*>(nul) - p) + 1;
    }
    return at + 2;
  }
  // More compressed bytes; false at the end of a file that ends after a whole member.
  bool refill() {
    const size_t n = file_->read(in_.data(), in_.size());
    if (n == 0) {
      if (member_done_) return false;
      truncated_ = true;
      throw Error(ErrorCode::kInput, file_->path(),
                  "truncated gzip stream (the file ends inside a member)");
    }
    state_->next_in = reinterpret_cast<uint8_t*>(in_.data());
    state_->avail_in = static_cast<uint32_t>(n);
    return true;
  }
  // The text decoded before the damage goes on first; the error comes with the next read.
  size_t fail(size_t decoded, int code) {
    pending_error_ = "corrupt gzip data near compressed byte " +
                     std::to_string(file_bytes_consumed()) + ": " + inflate_error(code);
    text_out_ += decoded;
    if (decoded > 0) return decoded;
    throw Error(ErrorCode::kInput, file_->path(), pending_error_);
  }
  static const char* inflate_error(int code) {
    switch (code) {
      case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
      case ISAL_INVALID_SYMBOL:
        return "invalid deflate code";
      case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
      case ISAL_INVALID_WRAPPER:
        return "not a gzip header";
      case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
      case ISAL_INCORRECT_CHECKSUM:
        return "a checksum does not match (the member's CRC-32 or length, or its header's CRC-16)";
      default:
        return "corrupt data";
    }
  }

  static constexpr size_t kMaxHeaderBytes = 1 << 20;

  std::unique_ptr<FileHandle> file_;
  std::vector<char> in_;
  std::unique_ptr<inflate_state> state_;  // its tables and history: tens of KiB
  bool member_done_ = false;
  bool at_header_ = true;
  std::string pending_error_;
};

// A compressed file's text only as far as it can be trusted. A gzip member's CRC or a zstd frame's
// checksum is checked at its end, after the text it covers was decoded, and damage inside deflate
// data often decodes to plausible text first; so the file is decoded once before use. A cut file
// keeps all the text decoded before the cut (a prefix decodes exactly); a damaged one keeps the
// members or frames before the damaged one. Then the error.
class CheckedSource : public ByteSource {
 public:
  CheckedSource(std::unique_ptr<ByteSource> inner, std::string path, uint64_t limit,
                std::string error)
      : inner_(std::move(inner)), path_(std::move(path)), limit_(limit), error_(std::move(error)) {}
  size_t read(char* out, size_t size) override {
    const size_t n =
        delivered_ < limit_ ? inner_->read(out, std::min<uint64_t>(size, limit_ - delivered_)) : 0;
    delivered_ += n;
    if (n == 0 && !error_.empty()) throw Error(ErrorCode::kInput, path_, error_);
    return n;
  }
  uint64_t file_bytes_consumed() const override { return inner_->file_bytes_consumed(); }
  std::optional<uint64_t> remaining_hint() const override { return inner_->remaining_hint(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string path_;
  uint64_t limit_;
  std::string error_;
  uint64_t delivered_ = 0;
};

// A decoder when the file starts with gzip's or zstd's magic number, else a plain source.
std::unique_ptr<ByteSource> open_raw(const std::filesystem::path& path) {
  auto file = std::make_unique<FileHandle>(path);
  char magic[4] = {};
  size_t n = file->read(magic, 4);
  std::string prefix(magic, n);
  const unsigned char* m = reinterpret_cast<const unsigned char*>(magic);
  if (n == 4 && m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD)
    return std::make_unique<ZstdSource>(std::move(file), prefix);
  if (n >= 2 && m[0] == 0x1F && m[1] == 0x8B)
    return std::make_unique<GzipSource>(std::move(file), prefix);
  return std::make_unique<PlainSource>(std::move(file), prefix);
}

}  // namespace

std::unique_ptr<ByteSource> ByteSource::open(const std::filesystem::path& path, Check when) {
  auto raw = open_raw(path);
  auto* check = dynamic_cast<Decoder*>(raw.get());
  if (!check || when == Check::kWhileReading) return raw;
  uint64_t limit = UINT64_MAX;
  std::string error;
  try {
    std::vector<char> scratch(1 << 20);
    while (check->read(scratch.data(), scratch.size()) > 0) {
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInput) throw;
    error = e.reason();
    limit = check->truncated() ? check->text_out() : check->member_start();
    if (!check->truncated())
      error += std::string("; nothing of its ") + check->unit() + " (the text from byte " +
               std::to_string(limit) + " on) is used";
  }
  raw.reset();
  return std::make_unique<CheckedSource>(open_raw(path), path.string(), limit, std::move(error));
}

bool ByteSource::compressed(const std::filesystem::path& path) {
  return dynamic_cast<Decoder*>(open_raw(path).get()) != nullptr;
}

std::string read_all(const std::filesystem::path& path) {
  auto src = ByteSource::open(path);
  std::string out;
  std::vector<char> buf(1 << 20);
  for (size_t n; (n = src->read(buf.data(), buf.size())) > 0;) out.append(buf.data(), n);
  return out;
}

}  // namespace shardkit::shardify
