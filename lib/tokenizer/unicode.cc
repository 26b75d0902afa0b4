#include "tokenizer/unicode.h"

#include "core/utf8.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <iterator>

#include "core/error.h"

namespace shardkit::tok {

namespace {

[[noreturn]] void invalid_utf8(size_t offset) {
  throw Error(ErrorCode::kInput, "", "invalid UTF-8 at byte offset " + std::to_string(offset));
}

}  // namespace

char32_t decode_utf8(std::string_view text, size_t& i, size_t base) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const size_t start = i;
  unsigned char c = s[i];
  if (c < 0x80) {
    ++i;
    return c;
  }
  size_t len;
  char32_t cp;
  char32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    invalid_utf8(base + start);
  }
  if (start + len > n) invalid_utf8(base + start);
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = s[start + k];
    if ((cc & 0xC0) != 0x80) invalid_utf8(base + start);
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) invalid_utf8(base + start);
  i = start + len;
  return cp;
}

void validate_utf8(std::string_view text, size_t base) {
  if (auto bad = first_invalid_utf8(text)) invalid_utf8(base + *bad);
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_white_space(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

// utf8proc's general category of each BMP code point, in one 64 KiB table filled on first use:
// the hand matchers ask it of every character of Korean and Chinese text, where a call into
// utf8proc (a two-level property lookup behind a call through the PLT) was a third of the scan.
static utf8proc_category_t category(char32_t cp) {
  static const std::array<uint8_t, 0x10000> bmp = [] {
    std::array<uint8_t, 0x10000> table{};
    for (utf8proc_int32_t c = 0; c < 0x10000; ++c)
      table[static_cast<size_t>(c)] = static_cast<uint8_t>(utf8proc_category(c));
    return table;
  }();
  if (cp < 0x10000) return static_cast<utf8proc_category_t>(bmp[cp]);
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

bool is_letter(char32_t cp) {
  auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}
LetterCase letter_case(char32_t cp) {
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LT:
      return LetterCase::kUpper;
    case UTF8PROC_CATEGORY_LL:
      return LetterCase::kLower;
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return LetterCase::kCaseless;
    default:
      return LetterCase::kNone;
  }
}
bool is_number(char32_t cp) {
  auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO;
}
bool is_punctuation(char32_t cp) {
  auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}
bool is_symbol(char32_t cp) {
  auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_SM && c <= UTF8PROC_CATEGORY_SO;
}
bool is_nonspacing_mark(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_MN; }
bool is_decimal_or_letter_number(char32_t cp) {
  auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL;
}
bool is_connector_punctuation(char32_t cp) { return category(cp) == UTF8PROC_CATEGORY_PC; }
bool is_combining_mark(char32_t cp) {
  auto c = category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME;
}
bool is_other_control(char32_t cp) {
  auto c = category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CO ||
         c == UTF8PROC_CATEGORY_CS;
}

namespace {

#include "unicode_bert_age.inc"

bool newer_than_bert_categories(char32_t cp) {
  const auto* end = std::end(kAssignedAfterBertVersion);
  const auto* it = std::upper_bound(std::begin(kAssignedAfterBertVersion), end, cp,
                                    [](char32_t c, const char32_t(&r)[2]) { return c < r[0]; });
  return it != std::begin(kAssignedAfterBertVersion) && cp <= (it - 1)[0][1];
}

// Unicode 8.0's category where it differs from today's: U+166D and U+111C9 were Po, U+1734 Mn,
// U+1885 and U+1886 Lo, U+A9BD Mc.
bool punctuation_in_8(char32_t cp) { return cp == 0x166D || cp == 0x111C9; }
bool nonspacing_mark_in_8(char32_t cp) { return cp == 0x1734; }
bool other_category_in_8(char32_t cp) {
  return cp == 0x1885 || cp == 0x1886 || cp == 0xA9BD || cp == 0x111C9;
}

}  // namespace

bool is_bert_punctuation(char32_t cp) {
  if (punctuation_in_8(cp)) return true;
  return is_punctuation(cp) && !newer_than_bert_categories(cp);
}
bool is_bert_nonspacing_mark(char32_t cp) {
  if (nonspacing_mark_in_8(cp)) return true;
  if (other_category_in_8(cp)) return false;
  return is_nonspacing_mark(cp) && !newer_than_bert_categories(cp);
}
bool is_bert_control(char32_t cp) {
  return is_other_control(cp) && !newer_than_bert_categories(cp);
}

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

int decompose_nfd(char32_t cp, char32_t* out, int capacity) {
  utf8proc_int32_t buf[16];
  int last_boundclass = 0;
  utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 16,
                                               UTF8PROC_DECOMPOSE, &last_boundclass);
  if (n <= 0 || n > capacity) {
    out[0] = cp;
    return 1;
  }
  for (utf8proc_ssize_t k = 0; k < n; ++k) out[k] = static_cast<char32_t>(buf[k]);
  return static_cast<int>(n);
}

int to_lower_full(char32_t cp, char32_t* out) {
  if (cp == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE -> i + COMBINING DOT ABOVE
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
  return 1;
}

}  // namespace shardkit::tok
