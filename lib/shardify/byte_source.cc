#include "shardify/byte_source.h"

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

// A checksum covers a whole gzip member or zstd frame and is checked at its end, after its text
// was handed on.
constexpr const char* kChecksumHint =
    " (the checksum covers the text read since the member or frame began, which may be wrong too)";

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
  uint64_t consumed() const { return consumed_; }
  const std::string& path() const { return path_; }

 private:
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
    return n + file_->read(out + n, size - n);
  }
  uint64_t file_bytes_consumed() const override {
    return file_->consumed() - (prefix_.size() - prefix_pos_);
  }

 private:
  std::unique_ptr<FileHandle> file_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
};

class ZstdSource : public ByteSource {
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
          if (!frame_done_)
            throw Error(ErrorCode::kInput, file_->path(),
                        "truncated zstd stream (the file ends inside a frame)");
          return 0;
        }
        in_buf_ = {in_.data(), n, 0};
      }
      size_t r = ZSTD_decompressStream(dctx_, &ob, &in_buf_);
      if (ZSTD_isError(r)) {
        pending_error_ = std::string("corrupt zstd data near compressed byte ") +
                         std::to_string(file_bytes_consumed()) + ": " + ZSTD_getErrorName(r) +
                         (ZSTD_getErrorCode(r) == ZSTD_error_checksum_wrong ? kChecksumHint : "");
        // The text decoded before the damage goes on first; the error comes with the next read.
        if (ob.pos > 0) return ob.pos;
        throw Error(ErrorCode::kInput, file_->path(), pending_error_);
      }
      frame_done_ = (r == 0);
    }
    return ob.pos;
  }
  uint64_t file_bytes_consumed() const override {
    return file_->consumed() - (in_buf_.size - in_buf_.pos);
  }

 private:
  std::unique_ptr<FileHandle> file_;
  std::vector<char> in_;
  ZSTD_inBuffer in_buf_{};
  ZSTD_DCtx* dctx_;
  bool frame_done_ = true;
  std::string pending_error_;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<FileHandle> file, std::string prefix)
      : file_(std::move(file)), in_(1 << 16) {
    std::memset(&zs_, 0, sizeof zs_);
    // 15 + 32: zlib or gzip header, detected automatically.
    if (inflateInit2(&zs_, 15 + 32) != Z_OK)
      throw Error(ErrorCode::kIo, file_->path(), "cannot initialise zlib");
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(prefix.size());
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  size_t read(char* out, size_t size) override {
    if (!pending_error_.empty()) throw Error(ErrorCode::kInput, file_->path(), pending_error_);
    zs_.next_out = reinterpret_cast<Bytef*>(out);
    zs_.avail_out = static_cast<uInt>(size);
    while (zs_.avail_out == size) {
      if (zs_.avail_in == 0) {
        size_t n = file_->read(in_.data(), in_.size());
        if (n == 0) {
          if (!member_done_)
            throw Error(ErrorCode::kInput, file_->path(),
                        "truncated gzip stream (the file ends inside a member)");
          return 0;
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(n);
      }
      if (member_done_) {
        // Concatenated gzip members (as `cat a.gz b.gz` makes) form one stream.
        inflateReset(&zs_);
        member_done_ = false;
      }
      int r = inflate(&zs_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        member_done_ = true;
      } else if (r != Z_OK && r != Z_BUF_ERROR) {
        const std::string why = zs_.msg ? zs_.msg : "corrupt data";
        pending_error_ = "corrupt gzip data near compressed byte " +
                         std::to_string(file_bytes_consumed()) + ": " + why +
                         (why == "incorrect data check" ? kChecksumHint : "");
        // The text decoded before the damage goes on first; the error comes with the next read.
        if (zs_.avail_out < size) return size - zs_.avail_out;
        throw Error(ErrorCode::kInput, file_->path(), pending_error_);
      }
    }
    return size - zs_.avail_out;
  }
  uint64_t file_bytes_consumed() const override { return file_->consumed() - zs_.avail_in; }

 private:
  std::unique_ptr<FileHandle> file_;
  std::vector<char> in_;
  z_stream zs_;
  bool member_done_ = true;
  std::string pending_error_;
};

}  // namespace

std::unique_ptr<ByteSource> ByteSource::open(const std::filesystem::path& path) {
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

std::string read_all(const std::filesystem::path& path) {
  auto src = ByteSource::open(path);
  std::string out;
  std::vector<char> buf(1 << 20);
  for (size_t n; (n = src->read(buf.data(), buf.size())) > 0;) out.append(buf.data(), n);
  return out;
}

}  // namespace shardkit::shardify
