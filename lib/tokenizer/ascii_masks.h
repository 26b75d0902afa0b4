// Bit masks of the ASCII byte classes the pre-tokenizer patterns tell apart, for 64 bytes at
// once: bit i describes byte i. Computed with AVX2 where the CPU has it, else SSE2 (x86-64's
// baseline), else byte by byte; the choice is made once, at run time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardkit::tok {

struct AsciiMasks {
  uint64_t upper = 0;    // A-Z
  uint64_t lower = 0;    // a-z
  uint64_t digit = 0;    // 0-9
  uint64_t space = 0;    // ASCII White_Space: \t \n \v \f \r and ' '
  uint64_t high = 0;     // bytes of non-ASCII characters (0x80-0xFF)
  uint64_t valid = 0;    // bytes of the text (the rest are past its end)
  uint64_t newline = 0;  // \r and \n
  uint64_t slash = 0;    // '/' (o200k's newline tail takes it)

  uint64_t letter() const { return upper | lower; }
  // ASCII characters that are neither letter, digit nor white space (punctuation, symbols,
  // controls): [^\s\p{L}\p{N}] restricted to ASCII.
  uint64_t other() const { return valid & ~(upper | lower | digit | space | high); }
};

// The masks of text[0, n) for n <= 64; bytes past n read as invalid. Reads only text[0, n).
AsciiMasks ascii_masks(const char* text, size_t n);

// The index of the first byte of p[0, n) that is one of `bytes[0, count)` (count <= 8), or n.
size_t find_first_of_bytes(const char* p, size_t n, const unsigned char* bytes, size_t count);

// The byte-by-byte masks the vector versions must equal (for tests).
AsciiMasks ascii_masks_reference(const char* text, size_t n);

// Which implementation runs: "avx2", "sse2" or "scalar".
const char* ascii_masks_implementation();

}  // namespace shardkit::tok
