#include <isa-l/igzip_lib.h>

#include <algorithm>

#include "shardify/byte_source_internal.h"

namespace shardkit::shardify {
namespace {

// gzip through ISA-L's igzip, which inflates 4-5 times faster than zlib on x86-64 (BENCHMARKS.md,
// "Compressed inputs"); every member's CRC-32 and length are checked as zlib checks them.
class GzipSource : public Decoder {
 public:
  GzipSource(std::unique_ptr<FileHandle> file, std::string prefix)
      : Decoder(std::move(file)), in_(1 << 16), state_(std::make_unique<inflate_state>()) {
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    start_member(reinterpret_cast<uint8_t*>(in_.data()), static_cast<uint32_t>(prefix.size()));
  }
  size_t read(char* out, size_t size) override {
    throw_pending_damage();
    state_->next_out = reinterpret_cast<uint8_t*>(out);
    state_->avail_out = static_cast<uint32_t>(std::min<size_t>(size, UINT32_MAX));
    const uint32_t room = state_->avail_out;
    while (state_->avail_out == room) {
      if (state_->avail_in == 0 && !refill()) return 0;
      if (member_done_ && skip_zero_padding()) continue;
      // Concatenated gzip members (as `cat a.gz b.gz` makes) form one stream.
      if (member_done_) start_member(state_->next_in, state_->avail_in);
      if (at_header_) gather_header();
      const uint32_t had = state_->avail_in;
      const int r = isal_inflate(state_.get());
      if (r < 0) return damaged(room - state_->avail_out, inflate_error(r));
      // A call that takes nothing and gives nothing would be made again forever.
      if (state_->avail_in == had && state_->avail_out == room &&
          state_->block_state != ISAL_BLOCK_FINISH)
        return damaged(0, inflate_error(r));
      if (state_->block_state == ISAL_BLOCK_FINISH) {
        member_done_ = true;
        member_start_ = text_out_ + (room - state_->avail_out);
      }
    }
    text_out_ += room - state_->avail_out;
    return room - state_->avail_out;
  }
  uint64_t file_bytes_consumed() const override { return file_->consumed() - state_->avail_in; }
  const char* format() const override { return "gzip"; }
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
  // Zero bytes after a whole member are padding (tape blocks, preallocated files), which gzip
  // and Python's gzip module ignore; returns whether there were any. A non-zero byte after them
  // is then read as the next member's start, and is garbage unless it is one.
  bool skip_zero_padding() {
    uint8_t* const end = state_->next_in + state_->avail_in;
    uint8_t* p = state_->next_in;
    while (p != end && *p == 0) ++p;
    const bool skipped = p != state_->next_in;
    state_->avail_in -= static_cast<uint32_t>(p - state_->next_in);
    state_->next_in = p;
    return skipped;
  }
  // More compressed bytes; false at the end of a file that ends after a whole member.
  bool refill() {
    const size_t n = file_->read(in_.data(), in_.size());
    if (n == 0) {
      if (member_done_) return false;
      cut_short();
    }
    state_->next_in = reinterpret_cast<uint8_t*>(in_.data());
    state_->avail_in = static_cast<uint32_t>(n);
    return true;
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

  std::vector<char> in_;
  std::unique_ptr<inflate_state> state_;  // its tables and history: tens of KiB
  bool member_done_ = false;
  bool at_header_ = true;
};

}  // namespace

std::unique_ptr<Decoder> make_gzip_source(std::unique_ptr<FileHandle> file, std::string prefix) {
  return std::make_unique<GzipSource>(std::move(file), std::move(prefix));
}

}  // namespace shardkit::shardify
