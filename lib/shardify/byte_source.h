// Reads an input file as a stream of bytes, decompressing .gz and .zst transparently (chosen
// by magic number, so a misnamed file still reads correctly; one named .gz or .zst that is
// neither compressed nor UTF-8 text at its start is refused at its first read, and so is one
// compressed in a format that is not decoded, such as xz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/mapped_file.h"

namespace shardkit::shardify {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` decompressed bytes; returns 0 at the end. Throws Error(kIo/kInput).
  virtual size_t read(char* out, size_t size) = 0;
  // Bytes of the underlying file consumed so far (compressed bytes for compressed inputs).
  virtual uint64_t file_bytes_consumed() const = 0;
  // How many more bytes read() will probably return, where that is known: the rest of a plain
  // file (0 at its end), so that a reader taking all of it sizes its buffer once.
  virtual std::optional<uint64_t> remaining_hint() const { return std::nullopt; }
  // The whole file mapped (core/mapped_file.h) with `padding` readable bytes after it, for a
  // reader that takes the rest of it from there instead of read(): only a plain regular file
  // large enough to be worth it, where the process guards mappings; null otherwise.
  virtual std::shared_ptr<const MappedFile> map_whole(size_t /*padding*/) { return nullptr; }
  // After read() threw Error(kInput): whether the text handed out before it may hold some of a
  // damaged gzip member or zstd frame, which a file checked before use drops whole. Only a
  // compressed file read as it is checked (Check::kWhileReading), and damaged rather than cut
  // short: the text before a cut decodes exactly either way.
  virtual bool handed_out_damaged_text() const { return false; }

  // When a compressed file's checksums are checked. A gzip member's CRC-32 and a zstd frame's
  // checksum come at its end, after the text they cover, and damage often decodes to plausible
  // text first.
  enum class Check {
    // Decoded once to check it before any text is handed out: a damaged file's text stops
    // before the damaged member or frame (a cut one's at the cut), then read() throws.
    kBeforeUse,
    // Decoded once, checked as it is read: text of a damaged member may come out before the
    // error. For a reader that gives up at the first error (`--on-error fail`).
    kWhileReading,
  };
  static std::unique_ptr<ByteSource> open(const std::filesystem::path& path,
                                          Check check = Check::kBeforeUse);
  // Whether the file starts with gzip's or zstd's magic number (and so is decoded).
  static bool compressed(const std::filesystem::path& path);
};

// The compressed format a file's name says, if any: "gzip" for .gz, "zstd" for .zst/.zstd
// (in any case).
const char* compression_named(const std::filesystem::path& path);

// Why the file cannot be read: it is compressed in a format shardify does not decode (xz, bzip2,
// lz4), known by its magic number; else empty.
std::string foreign_compression(const std::filesystem::path& path);

// The whole decompressed content of a file.
std::string read_all(const std::filesystem::path& path);

}  // namespace shardkit::shardify
