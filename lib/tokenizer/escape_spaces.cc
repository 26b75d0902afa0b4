#include "tokenizer/escape_spaces.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "tokenizer/unicode.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SHARDKIT_X86 1
#endif

namespace shardkit::tok {
namespace {

constexpr std::string_view kSpaceSymbol = kSentencePieceSpace;

bool printable(unsigned char c) { return c >= ' ' && c <= '~'; }

// Whether the 16 bytes at p, and the one after, are printable with no two spaces adjacent.
bool clean_block(const unsigned char* p) {
  for (size_t k = 0; k < 16; ++k)
    if (!printable(p[k]) || (p[k] == ' ' && p[k + 1] == ' ')) return false;
  return printable(p[16]);
}

#ifdef SHARDKIT_X86

struct Spread {
  alignas(16) std::array<unsigned char, 16> shuffle;
  uint8_t length;
};

// kQuarter[L - 1][m]: the shuffle that spreads 4 bytes with `byte` at the set bits of m, each
// taking source bytes 4 to 4 + L - 1 (where the content sits), and the length of the result
// (at most 16).
constexpr std::array<std::array<Spread, 16>, 4> kQuarter = [] {
  std::array<std::array<Spread, 16>, 4> table{};
  for (unsigned length = 1; length <= 4; ++length) {
    for (unsigned m = 0; m < 16; ++m) {
      Spread& s = table[length - 1][m];
      size_t o = 0;
      for (unsigned j = 0; j < 4; ++j) {
        if (m >> j & 1) {
          for (unsigned k = 0; k < length; ++k) s.shuffle[o++] = static_cast<unsigned char>(4 + k);
        } else {
          s.shuffle[o++] = static_cast<unsigned char>(j);
        }
      }
      s.length = static_cast<uint8_t>(o);
      while (o < 16) s.shuffle[o++] = 0x80;
    }
  }
  return table;
}();

template <int kQuarterIndex>
__attribute__((target("ssse3"))) char* spread_quarter(__m128i v, __m128i content, unsigned mask,
                                                      const std::array<Spread, 16>& table,
                                                      char* out) {
  const Spread& s = table[(mask >> (4 * kQuarterIndex)) & 0xF];
  const __m128i source = _mm_unpacklo_epi32(_mm_srli_si128(v, 4 * kQuarterIndex), content);
  const __m128i shuffle = _mm_load_si128(reinterpret_cast<const __m128i*>(s.shuffle.data()));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(source, shuffle));
  return out + s.length;
}

// What a byte becomes (1 to 4 bytes), in the low bytes of a vector, zeros after.
__attribute__((target("ssse3"))) __m128i load_content(std::string_view content) {
  alignas(16) char bytes[16] = {};
  std::memcpy(bytes, content.data(), content.size());
  return _mm_load_si128(reinterpret_cast<const __m128i*>(bytes));
}

// A block of 16 bytes with `byte` at the set bits of `mask`, each written as the content
// `with` holds (kQuarter's table for its length), a quarter at a time.
__attribute__((target("ssse3"))) char* spread_block(__m128i v, __m128i with, unsigned mask,
                                                    const std::array<Spread, 16>& table,
                                                    char* out) {
  out = spread_quarter<0>(v, with, mask, table, out);
  out = spread_quarter<1>(v, with, mask, table, out);
  out = spread_quarter<2>(v, with, mask, table, out);
  return spread_quarter<3>(v, with, mask, table, out);
}

__attribute__((target("ssse3"))) size_t escape_ssse3(const unsigned char* p, size_t n, size_t most,
                                                     char* out, size_t* written) {
  const __m128i space = _mm_set1_epi8(' ');
  const __m128i below = _mm_set1_epi8(' ' - 1), above = _mm_set1_epi8(0x7F);
  const __m128i symbol = load_content(kSpaceSymbol);
  char* o = out;
  size_t i = 0;
  for (; i + 16 <= most && i + 17 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    // Bytes from 0x80 compare as negative, not above ' ' - 1.
    const __m128i printable =
        _mm_and_si128(_mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above)),
                      _mm_and_si128(_mm_cmpgt_epi8(next, below), _mm_cmplt_epi8(next, above)));
    const __m128i spaces = _mm_cmpeq_epi8(v, space);
    const __m128i doubled = _mm_and_si128(spaces, _mm_cmpeq_epi8(next, space));
    if (_mm_movemask_epi8(printable) != 0xFFFF || _mm_movemask_epi8(doubled) != 0) break;
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(spaces));
    o = spread_block(v, symbol, mask, kQuarter[kSpaceSymbol.size() - 1], o);
  }
  *written = static_cast<size_t>(o - out);
  return i;
}

__attribute__((target("ssse3"))) size_t replace_ssse3(const char* p, size_t n, char byte,
                                                      std::string_view content, char* out,
                                                      size_t* written) {
  const std::array<Spread, 16>& table = kQuarter[content.size() - 1];
  const __m128i with = load_content(content);
  const __m128i match = _mm_set1_epi8(byte);
  char* o = out;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, match)));
    o = spread_block(v, with, mask, table, o);
  }
  *written = static_cast<size_t>(o - out);
  return i;
}

#endif  // SHARDKIT_X86

bool has_ssse3() {
#ifdef SHARDKIT_X86
  static const bool ssse3 = __builtin_cpu_supports("ssse3");
  return ssse3;
#else
  return false;
#endif
}

}  // namespace

size_t escape_spaced_ascii(const unsigned char* p, size_t n, size_t most, char* out,
                           size_t* written) {
#ifdef SHARDKIT_X86
  if (has_ssse3()) return escape_ssse3(p, n, most, out, written);
#endif
  *written = 0;
  return 0;
}

size_t replace_byte_blocks(const char* p, size_t n, char byte, std::string_view content, char* out,
                           size_t* written) {
#ifdef SHARDKIT_X86
  if (has_ssse3() && !content.empty() && content.size() <= 4)
    return replace_ssse3(p, n, byte, content, out, written);
#endif
  *written = 0;
  return 0;
}

size_t escape_spaced_ascii_reference(const unsigned char* p, size_t n, size_t most, char* out,
                                     size_t* written) {
  char* o = out;
  size_t i = 0;
  for (; i + 16 <= most && i + 17 <= n && clean_block(p + i); i += 16) {
    for (size_t k = i; k < i + 16; ++k) {
      if (p[k] == ' ') {
        std::memcpy(o, kSpaceSymbol.data(), kSpaceSymbol.size());
        o += kSpaceSymbol.size();
      } else {
        *o++ = static_cast<char>(p[k]);
      }
    }
  }
  *written = static_cast<size_t>(o - out);
  return i;
}

}  // namespace shardkit::tok
