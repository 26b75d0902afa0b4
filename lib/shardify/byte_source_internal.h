// The parts of byte_source.cc's sources that the decoders share (zstd_source.cc,
// gzip_source.cc): an input file read in order, and what a decoder tells the check of a whole
// file (ByteSource::Check::kBeforeUse).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_ranges.h"
#include "shardify/byte_source.h"

namespace shardkit::shardify {

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

// A decompressing source, with what a check of the whole file needs to know, and the two ways a
// stream breaks, said the same way by every format.
class Decoder : public ByteSource {
 public:
  explicit Decoder(std::unique_ptr<FileHandle> file) : file_(std::move(file)) {}
  uint64_t text_out() const { return text_out_; }  // decompressed bytes handed out
  // Where in the text the gzip member or zstd frame being decoded began.
  uint64_t member_start() const { return member_start_; }
  bool truncated() const { return truncated_; }  // the file ended inside a member or frame
  bool handed_out_damaged_text() const override { return !truncated_; }
  virtual const char* format() const = 0;  // "gzip" or "zstd"
  virtual const char* unit() const = 0;    // "member" or "frame"

 protected:
  // Throws the damage found by an earlier read, whose text went on first.
  void throw_pending_damage() const {
    if (!pending_damage_.empty()) throw Error(ErrorCode::kInput, file_->path(), pending_damage_);
  }
  // Damage found after `decoded` bytes of this read: they are returned, and the error comes with
  // the next read (at once when there are none).
  size_t damaged(size_t decoded, const std::string& why) {
    pending_damage_ = std::string("corrupt ") + format() + " data near compressed byte " +
                      std::to_string(file_bytes_consumed()) + ": " + why;
    text_out_ += decoded;
    if (decoded == 0) throw_pending_damage();
    return decoded;
  }
  [[noreturn]] void cut_short() {
    truncated_ = true;
    throw Error(
        ErrorCode::kInput, file_->path(),
        std::string("truncated ") + format() + " stream (the file ends inside a " + unit() + ")");
  }

  std::unique_ptr<FileHandle> file_;
  uint64_t text_out_ = 0;
  uint64_t member_start_ = 0;

 private:
  bool truncated_ = false;
  std::string pending_damage_;
};

// Decoders of a file whose first bytes, `prefix`, were read to tell its format.
std::unique_ptr<Decoder> make_zstd_source(std::unique_ptr<FileHandle> file, std::string prefix);
std::unique_ptr<Decoder> make_gzip_source(std::unique_ptr<FileHandle> file, std::string prefix);

}  // namespace shardkit::shardify
