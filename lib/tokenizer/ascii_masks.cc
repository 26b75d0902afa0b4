#include "tokenizer/ascii_masks.h"

#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SHARDKIT_X86 1
#endif

namespace shardkit::tok {
namespace {

// One byte's classes; the portable reference the vector versions must equal.
void classify_byte(unsigned char c, uint64_t bit, AsciiMasks& m) {
  if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) m.control |= bit;
  if (c >= 0x80) {
    m.high |= bit;
  } else if (c >= 'A' && c <= 'Z') {
    m.upper |= bit;
  } else if (c >= 'a' && c <= 'z') {
    m.lower |= bit;
  } else if (c >= '0' && c <= '9') {
    m.digit |= bit;
  } else if (c == ' ' || (c >= '\t' && c <= '\r')) {
    m.space |= bit;
    if (c == ' ') m.blank |= bit;
    if (c == '\n' || c == '\r') m.newline |= bit;
  } else if (c == '/') {
    m.slash |= bit;
  } else if (c == '\'') {
    m.quote |= bit;
  }
}

AsciiMasks masks_scalar(const char* text, size_t n) {
  AsciiMasks m;
  for (size_t i = 0; i < n; ++i)
    classify_byte(static_cast<unsigned char>(text[i]), uint64_t{1} << i, m);
  m.valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  return m;
}

size_t find_scalar(const char* p, size_t n, const unsigned char* bytes, size_t count) {
  bool in[256] = {};
  for (size_t k = 0; k < count; ++k) in[bytes[k]] = true;
  for (size_t i = 0; i < n; ++i)
    if (in[static_cast<unsigned char>(p[i])]) return i;
  return n;
}

#ifdef SHARDKIT_X86

// 64 bytes, zero-filled past n: a copy only near the end of the text.
struct Block {
  alignas(64) unsigned char b[64];
};

const unsigned char* load_block(const char* text, size_t n, Block& tmp) {
  if (n == 64) return reinterpret_cast<const unsigned char*>(text);
  std::memset(tmp.b, 0, sizeof tmp.b);
  std::memcpy(tmp.b, text, n);
  return tmp.b;
}

// x <= limit, unsigned, per byte: min(x, limit) == x.
__m128i le_sse2(__m128i x, char limit) {
  return _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(limit)), x);
}

AsciiMasks masks_sse2(const char* text, size_t n) {
  Block tmp;
  const unsigned char* p = load_block(text, n, tmp);
  AsciiMasks m;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const auto mask = [&](__m128i x) {
      return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(x))) << (16 * k);
    };
    m.high |= mask(v);
    m.upper |= mask(le_sse2(_mm_sub_epi8(v, _mm_set1_epi8('A')), 25));
    m.lower |= mask(le_sse2(_mm_sub_epi8(v, _mm_set1_epi8('a')), 25));
    m.digit |= mask(le_sse2(_mm_sub_epi8(v, _mm_set1_epi8('0')), 9));
    const __m128i nl = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
    m.newline |= mask(nl);
    const __m128i line_space = _mm_or_si128(nl, _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
    m.control |= mask(_mm_or_si128(_mm_andnot_si128(line_space, le_sse2(v, 0x1F)),
                                   _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F))));
    m.slash |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')));
    const __m128i blank = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    m.blank |= mask(blank);
    m.quote |= mask(_mm_cmpeq_epi8(v, _mm_set1_epi8('\'')));
    m.space |= mask(_mm_or_si128(blank, le_sse2(_mm_sub_epi8(v, _mm_set1_epi8('\t')), 4)));
  }
  m.valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  m.high &= m.valid;
  m.control &= m.valid;  // the zeros that pad a short block are not text
  return m;
}

__attribute__((target("avx2"))) __m256i le_avx2(__m256i x, char limit) {
  return _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(limit)), x);
}

__attribute__((target("avx2"))) uint64_t bits_avx2(__m256i x, int half) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(x))) << (32 * half);
}

__attribute__((target("avx2"))) AsciiMasks masks_avx2(const char* text, size_t n) {
  Block tmp;
  const unsigned char* p = load_block(text, n, tmp);
  AsciiMasks m;
  for (int k = 0; k < 2; ++k) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * k));
    const __m256i nl = _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n')),
                                       _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r')));
    const __m256i blank = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(' '));
    const __m256i space =
        _mm256_or_si256(blank, le_avx2(_mm256_sub_epi8(v, _mm256_set1_epi8('\t')), 4));
    m.blank |= bits_avx2(blank, k);
    m.quote |= bits_avx2(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\'')), k);
    m.high |= bits_avx2(v, k);
    m.upper |= bits_avx2(le_avx2(_mm256_sub_epi8(v, _mm256_set1_epi8('A')), 25), k);
    m.lower |= bits_avx2(le_avx2(_mm256_sub_epi8(v, _mm256_set1_epi8('a')), 25), k);
    m.digit |= bits_avx2(le_avx2(_mm256_sub_epi8(v, _mm256_set1_epi8('0')), 9), k);
    m.newline |= bits_avx2(nl, k);
    const __m256i line_space = _mm256_or_si256(nl, _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\t')));
    m.control |= bits_avx2(_mm256_or_si256(_mm256_andnot_si256(line_space, le_avx2(v, 0x1F)),
                                           _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x7F))),
                           k);
    m.slash |= bits_avx2(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('/')), k);
    m.space |= bits_avx2(space, k);
  }
  m.valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  m.high &= m.valid;
  m.control &= m.valid;  // the zeros that pad a short block are not text
  return m;
}

#define SHARDKIT_AVX512 __attribute__((target("avx512f,avx512bw")))

// Bytes of v in [first, first + span], as a mask.
SHARDKIT_AVX512 uint64_t in_range_avx512(__m512i v, char first, char span) {
  return _mm512_cmple_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8(first)),
                                _mm512_set1_epi8(span));
}

SHARDKIT_AVX512 uint64_t equal_avx512(__m512i v, char c) {
  return _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c));
}

// 64 bytes a compare: each class is a mask register, and a masked load reads a short block
// without the copy the other versions make.
SHARDKIT_AVX512 AsciiMasks masks_avx512(const char* text, size_t n) {
  const uint64_t valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  const __m512i v = _mm512_maskz_loadu_epi8(valid, text);
  AsciiMasks m;
  m.valid = valid;
  m.high = _mm512_movepi8_mask(v);
  m.upper = in_range_avx512(v, 'A', 25);
  m.lower = in_range_avx512(v, 'a', 25);
  m.digit = in_range_avx512(v, '0', 9);
  m.blank = equal_avx512(v, ' ');
  m.quote = equal_avx512(v, '\'');
  m.slash = equal_avx512(v, '/');
  m.newline = equal_avx512(v, '\n') | equal_avx512(v, '\r');
  m.space = m.blank | in_range_avx512(v, '\t', 4);
  m.control = ((in_range_avx512(v, 0, 0x1F) & ~(m.newline | equal_avx512(v, '\t'))) |
               equal_avx512(v, 0x7F)) &
              valid;
  return m;
}

__attribute__((target("avx2"))) size_t find_avx2(const char* p, size_t n,
                                                 const unsigned char* bytes, size_t count) {
  __m256i want[8];
  for (size_t k = 0; k < count; ++k) want[k] = _mm256_set1_epi8(static_cast<char>(bytes[k]));
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    __m256i hit = _mm256_cmpeq_epi8(v, want[0]);
    for (size_t k = 1; k < count; ++k) hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(v, want[k]));
    if (const auto bits = static_cast<uint32_t>(_mm256_movemask_epi8(hit)))
      return i + static_cast<size_t>(__builtin_ctz(bits));
  }
  return i + find_scalar(p + i, n - i, bytes, count);
}

size_t find_sse2(const char* p, size_t n, const unsigned char* bytes, size_t count) {
  __m128i want[8];
  for (size_t k = 0; k < count; ++k) want[k] = _mm_set1_epi8(static_cast<char>(bytes[k]));
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i hit = _mm_cmpeq_epi8(v, want[0]);
    for (size_t k = 1; k < count; ++k) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, want[k]));
    if (const auto bits = static_cast<uint32_t>(_mm_movemask_epi8(hit)))
      return i + static_cast<size_t>(__builtin_ctz(bits));
  }
  return i + find_scalar(p + i, n - i, bytes, count);
}

#endif  // SHARDKIT_X86

struct Implementation {
  AsciiMasks (*masks)(const char*, size_t);
  size_t (*find)(const char*, size_t, const unsigned char*, size_t);
  const char* name;
};

const Implementation& implementation() {
  static const Implementation chosen = [] {
#ifdef SHARDKIT_X86
    if (__builtin_cpu_supports("avx512bw"))
      return Implementation{masks_avx512, find_avx2, "avx512"};
    if (__builtin_cpu_supports("avx2")) return Implementation{masks_avx2, find_avx2, "avx2"};
    return Implementation{masks_sse2, find_sse2, "sse2"};
#else
    return Implementation{masks_scalar, find_scalar, "scalar"};
#endif
  }();
  return chosen;
}

}  // namespace

AsciiMasks ascii_masks(const char* text, size_t n) { return implementation().masks(text, n); }

size_t find_first_of_bytes(const char* p, size_t n, const unsigned char* bytes, size_t count) {
  if (count == 0) return n;
  if (count == 1) {
    const void* hit = std::memchr(p, bytes[0], n);
    return hit ? static_cast<size_t>(static_cast<const char*>(hit) - p) : n;
  }
  return implementation().find(p, n, bytes, count);
}

const char* ascii_masks_implementation() { return implementation().name; }

std::vector<AsciiMasksImplementation> ascii_masks_implementations() {
  std::vector<AsciiMasksImplementation> all = {{"scalar", masks_scalar}};
#ifdef SHARDKIT_X86
  all.push_back({"sse2", masks_sse2});
  if (__builtin_cpu_supports("avx2")) all.push_back({"avx2", masks_avx2});
  if (__builtin_cpu_supports("avx512bw")) all.push_back({"avx512", masks_avx512});
#endif
  return all;
}

AsciiMasks ascii_masks_reference(const char* text, size_t n) { return masks_scalar(text, n); }

}  // namespace shardkit::tok
