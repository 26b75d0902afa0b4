// zstd frames, one after another (as `cat a.zst b.zst` makes), through libzstd's streaming
// decoder.
#include <zstd.h>

#include "shardify/byte_source_internal.h"

namespace shardkit::shardify {
namespace {

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

}  // namespace

std::unique_ptr<Decoder> make_zstd_source(std::unique_ptr<FileHandle> file, std::string prefix) {
  return std::make_unique<ZstdSource>(std::move(file), std::move(prefix));
}

}  // namespace shardkit::shardify
