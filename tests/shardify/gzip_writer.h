// gzip members written by zlib, an independent deflate, for the tests of the .gz reader
// (lib/shardify/gzip_source.cc) and of what reads it.
#pragma once

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>

namespace shardkit::testing {

// RFC 1952's header flags.
constexpr int kFhcrc = 2, kFextra = 4, kFname = 8, kFcomment = 16;

inline void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Raw deflate of `text` at zlib's `level`.
inline std::string deflate_raw(const std::string& text, int level) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// One gzip member of `text` whose header carries the fields `flags` names.
inline std::string member(const std::string& text, int flags, int level = 6,
                          const std::string& name = "corpus.jsonl") {
  std::string h = {'\x1f', '\x8b', 8, static_cast<char>(flags)};
  put32(h, 0);  // no modification time
  h += '\0';    // extra flags
  h += '\3';    // OS: Unix
  if (flags & kFextra) {
    const std::string field = "SK\4\0data";  // one subfield, "SK", of 4 bytes
    h += static_cast<char>(field.size() & 0xFF);
    h += static_cast<char>(field.size() >> 8);
    h += field;
  }
  if (flags & kFname) h += name + '\0';
  if (flags & kFcomment) h += std::string("written by the test") + '\0';
  if (flags & kFhcrc) {
    const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(h.data()), uInt(h.size()));
    h += static_cast<char>(crc & 0xFF);
    h += static_cast<char>((crc >> 8) & 0xFF);
  }
  std::string out = h + deflate_raw(text, level);
  put32(out, crc32(0, reinterpret_cast<const Bytef*>(text.data()), uInt(text.size())));
  put32(out, static_cast<uint32_t>(text.size()));
  return out;
}

inline std::string random_text(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string words[] = {"the ", "shard ", "token ", "caf\xc3\xa9 ", "\xe4\xb8\xad ", "\n"};
  std::string s;
  while (s.size() < n) {
    if (rng() % 4 == 0) s += static_cast<char>(' ' + rng() % 95);  // breaks up repeats
    s += words[rng() % 6];
  }
  s.resize(n);
  return s;
}

}  // namespace shardkit::testing
