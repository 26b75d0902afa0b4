#include "shardify/byte_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/file_extension.h"
#include "core/parallel_ranges.h"
#include "core/utf8.h"
#include "shardify/byte_source_internal.h"

namespace shardkit::shardify {
namespace {

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

enum class Packing { kPlain, kZstd, kGzip };

// By the magic number a file's first bytes hold (not by its name).
Packing packing_of(std::string_view first) {
  const auto* m = reinterpret_cast<const unsigned char*>(first.data());
  if (first.size() >= 4 && m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD)
    return Packing::kZstd;
  if (first.size() >= 2 && m[0] == 0x1F && m[1] == 0x8B) return Packing::kGzip;
  return Packing::kPlain;
}

// The file's first 4 bytes (fewer in a shorter file), read from `file`.
std::string read_prefix(FileHandle& file) {
  char magic[4] = {};
  return std::string(magic, file.read(magic, sizeof magic));
}

// A decoder when the file starts with gzip's or zstd's magic number, else a plain source.
std::unique_ptr<ByteSource> open_raw(const std::filesystem::path& path) {
  auto file = std::make_unique<FileHandle>(path);
  std::string prefix = read_prefix(*file);
  switch (packing_of(prefix)) {
    case Packing::kZstd:
      return make_zstd_source(std::move(file), std::move(prefix));
    case Packing::kGzip:
      return make_gzip_source(std::move(file), std::move(prefix));
    case Packing::kPlain:
      break;
  }
  // Only a prefix that may begin xz's, lz4's or bzip2's magic number costs a second look.
  const bool may_be_foreign = prefix.starts_with("\xFD\x37\x7A\x58") ||
                              prefix.starts_with("\x04\x22\x4D\x18") || prefix.starts_with("BZh");
  auto plain = std::make_unique<PlainSource>(std::move(file), std::move(prefix));
  std::string foreign = may_be_foreign ? foreign_compression(path) : std::string();
  if (foreign.empty()) return plain;
  return std::make_unique<CheckedSource>(std::move(plain), path.string(), 0, std::move(foreign));
}

// A file named .gz or .zst without the format's magic number reads as plain text, as a misnamed
// text file should. But when its first bytes are not UTF-8 either, it is a damaged or foreign
// compressed file: read as text, it would only fail with an invalid UTF-8 byte, or tokenize
// binary. Then the reason, for its first read to throw; else empty.
std::string misnamed_binary(const std::filesystem::path& path, const char* named) {
  FileHandle file(path);
  std::string head(4096, '\0');
  head.resize(file.read(head.data(), head.size()));
  const std::optional<size_t> bad = first_invalid_utf8(head);
  // A character cut by the end of what was read is not an error.
  if (!bad || (head.size() == 4096 && *bad + 4 > head.size())) return {};
  std::string starts;
  for (unsigned char c : head.substr(0, 4)) {
    char hex[4];
    std::snprintf(hex, sizeof hex, " %02x", c);
    starts += hex;
  }
  return std::string("named like a ") + named + " file, but it does not start with " + named +
         "'s magic number (" + (std::string(named) == "gzip" ? "1f 8b" : "28 b5 2f fd") +
         "; it starts" + starts + ") and is not UTF-8 text: damaged, or another format";
}

// A compression shardify does not decode, recognised by its magic number: read as text, such a
// file only failed at its first byte that is not UTF-8 or JSON, which said nothing of why.
struct ForeignPacking {
  const char* name;
  const char* decompress;  // the command that gives its text
};

// The compression whose magic number `head` (a file's first bytes) starts with, if foreign.
std::optional<ForeignPacking> foreign_packing(std::string_view head) {
  using namespace std::string_view_literals;
  if (head.starts_with("\xFD\x37\x7A\x58\x5A\x00"sv)) return ForeignPacking{"xz", "xz -dk"};
  if (head.starts_with("\x04\x22\x4D\x18"sv)) return ForeignPacking{"lz4", "lz4 -d"};
  // "BZh", the block size '1'..'9', then a block's or the end of stream's own magic number: a
  // text file could start with "BZh9", not with these 10 bytes.
  const bool bzip2 =
      head.size() >= 10 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9' &&
      (head.substr(4, 6) == "1AY&SY"sv || head.substr(4, 6) == "\x17\x72\x45\x38\x50\x90"sv);
  if (bzip2) return ForeignPacking{"bzip2", "bunzip2 -k"};
  return std::nullopt;
}

}  // namespace

std::string foreign_compression(const std::filesystem::path& path) {
  FileHandle file(path);
  std::string head(10, '\0');
  head.resize(file.read(head.data(), head.size()));
  const std::optional<ForeignPacking> packing = foreign_packing(head);
  if (!packing) return {};
  return std::string("the file is ") + packing->name +
         "-compressed, which shardify does not read (it reads gzip and zstd): decompress it "
         "first (" +
         packing->decompress + "), or recompress it with zstd or gzip";
}

const char* compression_named(const std::filesystem::path& path) {
  const std::string ext = lowercase_extension(path);
  if (ext == ".gz") return "gzip";
  if (ext == ".zst" || ext == ".zstd") return "zstd";
  return nullptr;
}

std::unique_ptr<ByteSource> ByteSource::open(const std::filesystem::path& path, Check when) {
  auto raw = open_raw(path);
  // A foreign compression (open_raw's CheckedSource) is named as that, not as a misnamed file.
  if (const char* named = compression_named(path);
      named && !dynamic_cast<Decoder*>(raw.get()) && !dynamic_cast<CheckedSource*>(raw.get())) {
    std::string reason = misnamed_binary(path, named);
    if (!reason.empty())
      return std::make_unique<CheckedSource>(std::move(raw), path.string(), 0, std::move(reason));
  }
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
  FileHandle file(path);
  return packing_of(read_prefix(file)) != Packing::kPlain;
}

std::string read_all(const std::filesystem::path& path) {
  auto src = ByteSource::open(path);
  std::string out;
  std::vector<char> buf(1 << 20);
  for (size_t n; (n = src->read(buf.data(), buf.size())) > 0;) out.append(buf.data(), n);
  return out;
}

}  // namespace shardkit::shardify
