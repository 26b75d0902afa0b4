// UTF-8 decoding and the Unicode facts the tokenizers need, all from utf8proc (categories,
// canonical decomposition, simple lowercase) except the few definitions HuggingFace takes from
// Rust's standard library (White_Space) which are fixed by the Unicode standard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shardkit::tok {

// Decodes the code point at text[i], advancing i. Invalid UTF-8 (bad lead or continuation byte,
// overlong form, surrogate, > U+10FFFF, truncated sequence) throws Error(kInput) naming the byte
// offset `base + i`.
char32_t decode_utf8(std::string_view text, size_t& i, size_t base = 0);
// Throws Error(kInput) at the first invalid byte; fast for ASCII.
void validate_utf8(std::string_view text, size_t base = 0);
void append_utf8(std::string& out, char32_t cp);
// U+2581 (LOWER ONE EIGHTH BLOCK): SentencePiece's space, and Metaspace's default replacement.
inline constexpr std::string_view kSentencePieceSpace = "\xE2\x96\x81";

inline size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// The code point of the character at p, `length` (utf8_length of p[0]) bytes of text known to
// be valid UTF-8: no checks.
inline char32_t decode_valid_utf8(const unsigned char* p, size_t length) {
  switch (length) {
    case 1:
      return p[0];
    case 2:
      return (char32_t{p[0] & 0x1Fu} << 6) | (p[1] & 0x3Fu);
    case 3:
      return (char32_t{p[0] & 0x0Fu} << 12) | (char32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu);
    default:
      return (char32_t{p[0] & 0x07u} << 18) | (char32_t{p[1] & 0x3Fu} << 12) |
             (char32_t{p[2] & 0x3Fu} << 6) | (p[3] & 0x3Fu);
  }
}

// Rust's char::is_whitespace (the Unicode White_Space property).
bool is_white_space(char32_t cp);
// General category helpers (utf8proc).
bool is_letter(char32_t cp);  // L*
// How a letter's category places it in case-aware patterns such as o200k's.
enum class LetterCase : uint8_t {
  kNone,      // not a letter
  kUpper,     // Lu, Lt
  kLower,     // Ll
  kCaseless,  // Lm, Lo
};
LetterCase letter_case(char32_t cp);
bool is_number(char32_t cp);                    // N*
bool is_punctuation(char32_t cp);               // P*
bool is_symbol(char32_t cp);                    // S*
bool is_nonspacing_mark(char32_t cp);           // Mn
bool is_combining_mark(char32_t cp);            // Mn, Mc, Me
bool is_decimal_or_letter_number(char32_t cp);  // Nd, Nl
bool is_connector_punctuation(char32_t cp);     // Pc
// Cc, Cf, Co, Cs: what HF BertNormalizer's clean_text removes (besides NUL and U+FFFD).
bool is_other_control(char32_t cp);
// HF's BERT components (BertNormalizer, BertPreTokenizer, Punctuation) take categories from the
// unicode_categories crate, which is Unicode 8.0's: a code point assigned since has none there,
// and six changed category since (these keep 8.0's).
bool is_bert_punctuation(char32_t cp);      // P*
bool is_bert_nonspacing_mark(char32_t cp);  // Mn
bool is_bert_control(char32_t cp);          // Cc, Cf, Co, Cs
// The CJK ideograph blocks BERT surrounds with spaces.
bool is_chinese_char(char32_t cp);

// Canonical decomposition of one code point (NFD of a single character). Returns the number
// of code points written to out (at most 8 are needed for any character).
int decompose_nfd(char32_t cp, char32_t* out, int capacity);
// Rust's char::to_lowercase: the simple mapping plus U+0130's two-character expansion.
// Returns the number of code points written (1 or 2).
int to_lower_full(char32_t cp, char32_t* out);

}  // namespace shardkit::tok
