// zstd frames, one after another (as `cat a.zst b.zst` makes), through libzstd's streaming
// decoder.
#include <zstd.h>

#include "shardify/byte_source_internal.h"

namespace shardkit::shardify {
namespace {

class ZstdSource : public Decoder {
 public:
  ZstdSource(std::unique_ptr<FileHandle> file, std::string prefix)
      : Decoder(std::move(file)), in_(ZSTD_DStreamInSize()), dctx_(ZSTD_createDCtx()) {
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    in_buf_ = {in_.data(), prefix.size(), 0};
  }
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  size_t read(char* out, size_t size) override {
    throw_pending_damage();
    ZSTD_outBuffer ob{out, size, 0};
    while (ob.pos == 0) {
      if (in_buf_.pos == in_buf_.size) {
        size_t n = file_->read(in_.data(), in_.size());
        if (n == 0) {
          if (!frame_done_) cut_short();
          return 0;
        }
        in_buf_ = {in_.data(), n, 0};
      }
      size_t r = ZSTD_decompressStream(dctx_, &ob, &in_buf_);
      if (ZSTD_isError(r)) return damaged(ob.pos, ZSTD_getErrorName(r));
      frame_done_ = (r == 0);
      if (frame_done_) member_start_ = text_out_ + ob.pos;
    }
    text_out_ += ob.pos;
    return ob.pos;
  }
  uint64_t file_bytes_consumed() const override {
    return file_->consumed() - (in_buf_.size - in_buf_.pos);
  }
  const char* format() const override { return "zstd"; }
  const char* unit() const override { return "frame"; }

 private:
  std::vector<char> in_;
  ZSTD_inBuffer in_buf_{};
  ZSTD_DCtx* dctx_;
  bool frame_done_ = true;
};

}  // namespace

std::unique_ptr<Decoder> make_zstd_source(std::unique_ptr<FileHandle> file, std::string prefix) {
  return std::make_unique<ZstdSource>(std::move(file), std::move(prefix));
}

}  // namespace shardkit::shardify
