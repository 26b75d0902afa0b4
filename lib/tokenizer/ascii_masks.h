// Bit masks of the ASCII byte classes the pre-tokenizer patterns tell apart, for 64 bytes at
// once: bit i describes byte i. Computed with AVX-512BW where the CPU has it (a compare per
// class for all 64 bytes), else AVX2, else SSE2 (x86-64's baseline), else byte by byte; the
// choice is made once, at run time. Below them, the inline
// 16-byte scans the hot loops share (letters, letters and digits, printable bytes, one byte, a
// literal, all ASCII), where a byte-at-a-time loop would mispredict its exit once a word.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
  uint64_t blank = 0;    // ' ' alone (the optional space before a word)
  uint64_t quote = 0;    // '\'' (contractions start with it)
  uint64_t control = 0;  // C0 controls but \t \n \r, and DEL (BERT drops them, or keeps them)

  uint64_t letter() const { return upper | lower; }
  // ASCII characters that are neither letter, digit nor white space (punctuation, symbols,
  // controls): [^\s\p{L}\p{N}] restricted to ASCII.
  uint64_t other() const { return valid & ~(upper | lower | digit | space | high); }
};

// The masks of text[0, n) for n <= 64; bytes past n read as invalid. Reads only text[0, n).
AsciiMasks ascii_masks(const char* text, size_t n);

// The index of the first byte of p[0, n) that is one of `bytes[0, count)` (count <= 8), or n.
size_t find_first_of_bytes(const char* p, size_t n, const unsigned char* bytes, size_t count);

#if defined(__SSE2__)
// The bytes of `v` that are ASCII letters, as 0xFF. Shifted by 128 (mod 256) so that the range
// starts at -128, where a signed compare ends it.
inline __m128i ascii_letters(__m128i v) {
  return _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)),
                                     _mm_set1_epi8(static_cast<char>(128 - 'a'))),
                        _mm_set1_epi8(-128 + 26));
}

// How many of the 16 bytes at the start are set in `bytes` (0xFF each).
inline size_t leading_bytes(__m128i bytes) {
  return static_cast<size_t>(
      std::countr_one(static_cast<unsigned>(_mm_movemask_epi8(bytes)) & 0xFFFFu));
}

inline __m128i load16(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
#endif

// How many bytes at the start of p[0, 16) are ASCII letters or digits (0-16). Reads all 16.
inline size_t alnum_prefix16(const unsigned char* p) {
#if defined(__SSE2__)
  const __m128i v = load16(p);
  const __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(128 - '0'))),
                                       _mm_set1_epi8(-128 + 10));
  return leading_bytes(_mm_or_si128(ascii_letters(v), digit));
#else
  size_t n = 0;
  while (n < 16 && ((p[n] | 0x20) - 'a' < 26u || p[n] - '0' < 10u)) ++n;
  return n;
#endif
}

// How many bytes at the start of p[0, 16) are ASCII letters (0-16). Reads all 16.
inline size_t letter_prefix16(const unsigned char* p) {
#if defined(__SSE2__)
  return leading_bytes(ascii_letters(load16(p)));
#else
  size_t n = 0;
  while (n < 16 && (p[n] | 0x20) - 'a' < 26u) ++n;
  return n;
#endif
}

// How many bytes at the start of p[0, 16) are printable ASCII from `lowest` on (`lowest` to '~';
// '!' leaves the space out, ' ' takes it in), 0-16. Reads all 16.
inline size_t printable_prefix16(const unsigned char* p, char lowest = '!') {
#if defined(__SSE2__)
  const __m128i v = load16(p);
  // Bytes from 0x80 compare as negative, below `lowest`.
  return leading_bytes(
      _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lowest - 1))),
                    _mm_cmplt_epi8(v, _mm_set1_epi8(0x7F))));
#else
  size_t n = 0;
  const auto low = static_cast<unsigned char>(lowest);
  while (n < 16 && p[n] >= low && p[n] <= '~') ++n;
  return n;
#endif
}

// Bit i set where p[i] == b, for p[0, 16). Reads all 16.
inline uint32_t byte_mask16(const char* p, char b) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b))));
#else
  uint32_t m = 0;
  for (int i = 0; i < 16; ++i) m |= uint32_t{p[i] == b} << i;
  return m;
#endif
}

// The first `literal` (not empty) in `text` at or after `from`, or npos; its first byte found 16
// bytes at a time. For a literal a word or so apart (Metaspace's U+2581), where
// std::string_view::find's memchr and memcmp calls cost more than the scan.
inline size_t find_literal(std::string_view text, size_t from, std::string_view literal) {
  const auto at = [&](size_t i) {  // a compare inline: no memcmp call for three bytes
    if (i + literal.size() > text.size()) return false;
    for (size_t k = 1; k < literal.size(); ++k)
      if (text[i + k] != literal[k]) return false;
    return true;
  };
  size_t i = from;
  for (; i + 16 <= text.size(); i += 16)
    for (uint32_t m = byte_mask16(text.data() + i, literal[0]); m != 0; m &= m - 1)
      if (const size_t k = i + static_cast<size_t>(std::countr_zero(m)); at(k)) return k;
  for (; i < text.size(); ++i)
    if (text[i] == literal[0] && at(i)) return i;
  return std::string_view::npos;
}

// Bit i set where p[i] is not ASCII, for p[0, 16). Reads all 16.
inline uint32_t high_bytes16(const unsigned char* p) {
#if defined(__SSE2__)
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#else
  uint32_t m = 0;
  for (int i = 0; i < 16; ++i) m |= uint32_t{p[i] >= 0x80} << i;
  return m;
#endif
}

// Whether p[0, 16) is all ASCII. Reads all 16.
inline bool ascii16(const unsigned char* p) { return high_bytes16(p) == 0; }

// How many bytes at the start of p[0, n) are ASCII, 16 at a time.
inline size_t ascii_prefix(const unsigned char* p, size_t n) {
  size_t i = 0;
  while (i + 16 <= n && ascii16(p + i)) i += 16;
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

// Whether p[0, 3) encodes one of U+2010 to U+2027 (below).
inline bool is_wide_punctuation(const unsigned char* p) {
  return p[0] == 0xE2 && p[1] == 0x80 && p[2] >= 0x90 && p[2] <= 0xA7;
}

// The general punctuation of English text, U+2010 to U+2027 (dashes, quotation marks, the
// ellipsis: E2 80 90-A7), among the non-ASCII bytes `high` of p[0, n) (n <= 64), up to the first
// other non-ASCII character: its bytes, and the first byte of each in `starts`. Every pattern
// the masks serve treats these characters as ASCII punctuation (no letter, number, white space
// or case), so a window can go on past them.
inline uint64_t wide_punctuation(const unsigned char* p, size_t n, uint64_t high,
                                 uint64_t& starts) {
  uint64_t wide = 0;
  while (high != 0) {
    const size_t i = static_cast<size_t>(std::countr_zero(high));
    if (i + 2 >= n || !is_wide_punctuation(p + i)) break;
    wide |= uint64_t{7} << i;
    starts |= uint64_t{1} << i;
    high &= ~(uint64_t{7} << i);
  }
  return wide;
}

// The code point of the wide punctuation whose bytes start at p.
inline char32_t wide_punctuation_at(const unsigned char* p) { return 0x2000 + (p[2] - 0x80); }

// The byte-by-byte masks the vector versions must equal (for tests).
AsciiMasks ascii_masks_reference(const char* text, size_t n);

// Which implementation runs: "avx512", "avx2", "sse2" or "scalar".
const char* ascii_masks_implementation();

// Every implementation this CPU runs, by name (for tests: each must equal the reference).
struct AsciiMasksImplementation {
  const char* name;
  AsciiMasks (*masks)(const char* text, size_t n);
};
std::vector<AsciiMasksImplementation> ascii_masks_implementations();

}  // namespace shardkit::tok
