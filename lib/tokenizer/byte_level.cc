#include "tokenizer/byte_level.h"

#include <oniguruma.h>

#include <mutex>

#include "core/error.h"
#include "tokenizer/ascii_masks.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

const char* const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const char* const kQwenPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kDeepSeekDigitsPattern = "\\p{N}{1,3}";
const char* const kDeepSeekCjkPattern = "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+";
const char* const kDeepSeekWordsPattern =
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const char* const kTekkenPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

namespace {

struct ByteTables {
  std::array<char32_t, 256> to_char{};
  std::array<int16_t, 512> from_char{};
  ByteTables() {
    from_char.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char32_t c = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      to_char[b] = c;
      from_char[c] = static_cast<int16_t>(b);
    }
  }
};

const ByteTables& tables() {
  static const ByteTables t;
  return t;
}

// Character classes of the GPT-2 pattern.
enum CharClass : uint8_t { kLetter, kNumber, kSpace, kOther };

struct AsciiClasses {
  std::array<uint8_t, 128> c{};
  AsciiClasses() {
    for (int i = 0; i < 128; ++i) {
      if ((i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z')) {
        c[i] = kLetter;
      } else if (i >= '0' && i <= '9') {
        c[i] = kNumber;
      } else if (is_white_space(static_cast<char32_t>(i))) {
        c[i] = kSpace;
      } else {
        c[i] = kOther;
      }
    }
  }
};

const AsciiClasses kAscii;

inline CharClass classify(std::string_view text, size_t pos, size_t* next) {
  auto c = static_cast<unsigned char>(text[pos]);
  if (c < 0x80) {
    *next = pos + 1;
    return static_cast<CharClass>(kAscii.c[c]);
  }
  size_t i = pos;
  char32_t cp = decode_utf8(text, i);
  *next = i;
  if (is_letter(cp)) return kLetter;
  if (is_number(cp)) return kNumber;
  if (is_white_space(cp)) return kSpace;
  return kOther;
}

// The end of the run of characters of class `cls` from `i`.
inline size_t run_end(std::string_view text, size_t i, CharClass cls) {
  for (size_t after; i < text.size() && classify(text, i, &after) == cls;) i = after;
  return i;
}

}  // namespace

const std::array<char32_t, 256>& byte_to_char() { return tables().to_char; }

int char_to_byte(char32_t cp) { return cp < 512 ? tables().from_char[cp] : -1; }

bool unmap_byte_level(std::string_view token, std::string& bytes) {
  bytes.clear();
  size_t i = 0;
  while (i < token.size()) {
    char32_t cp = decode_utf8(token, i);
    int b = char_to_byte(cp);
    if (b < 0) return false;
    bytes.push_back(static_cast<char>(b));
  }
  return true;
}

size_t gpt2_match(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const char c = text[pos];
  // 's|'t|'re|'ve|'m|'ll|'d
  if (c == '\'' && pos + 1 < n) {
    char d = text[pos + 1];
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return pos + 2;
    if (pos + 2 < n) {
      char e = text[pos + 2];
      if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l'))
        return pos + 3;
    }
  }
  // ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+`: `next` ends the run's first character.
  size_t next;
  CharClass cls = classify(text, pos, &next);
  if (c == ' ' && next < n) {
    size_t after;
    CharClass k = classify(text, next, &after);
    if (k != kSpace) {
      cls = k;
      next = after;
    }
  }
  if (cls != kSpace) return run_end(text, next, cls);
  // Whitespace: \s+(?!\S) then \s+.
  size_t i = next;
  size_t last_start = pos;  // start of the last whitespace character in the run
  while (i < n) {
    size_t after;
    if (classify(text, i, &after) != kSpace) break;
    last_start = i;
    i = after;
  }
  if (i == n) return n;
  // Followed by non-space: leave the last whitespace character for the next match, unless the
  // run is a single character.
  if (last_start > pos) return last_start;
  return i;
}

namespace {

// The end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at `pos`, or pos; case folding also maps U+017F
// (long s) to s.
size_t contraction_end(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  if (pos + 1 >= n || at(pos) != '\'') return pos;
  const unsigned char d = at(pos + 1) | 0x20;
  if (d == 's' || d == 't' || d == 'm' || d == 'd') return pos + 2;
  if (at(pos + 1) == 0xC5 && pos + 2 < n && at(pos + 2) == 0xBF) return pos + 3;
  if (pos + 2 < n) {
    const unsigned char e = at(pos + 2) | 0x20;
    if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l')) return pos + 3;
  }
  return pos;
}

// \p{N}{1,kMaxDigits} at `pos`, whose first character (ending at `next`) is a number.
template <int kMaxDigits>
size_t digits_end(std::string_view text, size_t next) {
  size_t i = next;
  for (int k = 1; k < kMaxDigits && i < text.size(); ++k) {
    size_t after;
    if (classify(text, i, &after) != kNumber) break;
    i = after;
  }
  return i;
}

// \s*[\r\n]+|\s+(?!\S)|\s+ at `pos`, where a white space character starts: up to the last
// newline of the run, else the run less its last character when more text follows, else the run.
size_t spaces_end(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  size_t i = pos, last_start = pos, after_newline = 0;
  while (i < n) {
    size_t after;
    if (classify(text, i, &after) != kSpace) break;
    if (at(i) == '\r' || at(i) == '\n') after_newline = after;
    last_start = i;
    i = after;
  }
  if (after_newline) return after_newline;
  if (i == n) return n;
  if (last_start > pos) return last_start;
  return i;
}

// The alternatives that end cl100k's and o200k's patterns, at a position where none of the
// letter and number alternatives matched:
//   ` ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
// with `[\r\n/]*` for o200k (kSlash): a '/' after the newlines joins them.
template <bool kSlash>
size_t symbols_or_spaces_end(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  size_t next;
  const CharClass cls = classify(text, pos, &next);
  size_t body = cls == kOther ? pos : n;
  if (at(pos) == ' ' && next < n) {
    size_t after;
    if (classify(text, next, &after) == kOther) body = next;
  }
  if (body < n) {
    size_t i = run_end(text, body, kOther);
    while (i < n && (at(i) == '\r' || at(i) == '\n' || (kSlash && at(i) == '/'))) ++i;
    return i;
  }
  return spaces_end(text, pos);
}

// cl100k's pattern with \p{N}{1,kMaxDigits}.
template <int kMaxDigits>
size_t cl100k_like_match(std::string_view text, size_t pos) {
  if (size_t e = contraction_end(text, pos); e != pos) return e;
  const size_t n = text.size();
  size_t next;
  const CharClass cls = classify(text, pos, &next);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (cls == kLetter) return run_end(text, next, kLetter);
  const bool newline = text[pos] == '\r' || text[pos] == '\n';
  if (cls != kNumber && !newline && next < n) {
    size_t after;
    if (classify(text, next, &after) == kLetter) return run_end(text, after, kLetter);
  }
  if (cls == kNumber) return digits_end<kMaxDigits>(text, next);
  return symbols_or_spaces_end<false>(text, pos);
}

// o200k's letter alternatives tell letters apart by case, and count marks (\p{M}) as letters of
// either case while [^\r\n\p{L}\p{N}] and [^\s\p{L}\p{N}] count them as symbols.
enum CaseClass : uint8_t { kUpperLetter, kLowerLetter, kCaselessLetter, kMark, kNotLetterOrMark };

inline CaseClass classify_case(std::string_view text, size_t pos, size_t* next) {
  const auto c = static_cast<unsigned char>(text[pos]);
  if (c < 0x80) {
    *next = pos + 1;
    return c >= 'A' && c <= 'Z'   ? kUpperLetter
           : c >= 'a' && c <= 'z' ? kLowerLetter
                                  : kNotLetterOrMark;
  }
  size_t i = pos;
  const char32_t cp = decode_utf8(text, i);
  *next = i;
  switch (letter_case(cp)) {
    case LetterCase::kUpper:
      return kUpperLetter;
    case LetterCase::kLower:
      return kLowerLetter;
    case LetterCase::kCaseless:
      return kCaselessLetter;
    case LetterCase::kNone:
      break;
  }
  return is_combining_mark(cp) ? kMark : kNotLetterOrMark;
}

// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}].
inline bool upper_side(CaseClass c) { return c != kLowerLetter && c != kNotLetterOrMark; }
inline bool lower_side(CaseClass c) { return c != kUpperLetter && c != kNotLetterOrMark; }

// o200k's pattern (kContractions, \p{N}{1,3}) and Tekken's (neither contractions nor more than
// one digit), evaluated the way Oniguruma backtracks:
//   P?[U]*[L]+C? | P?[U]+[L]*C? | \p{N}{1,kMaxDigits} | then as cl100k
// with P = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], L = [\p{Ll}\p{Lm}\p{Lo}\p{M}]
// and C the optional contraction.
template <bool kContractions, int kMaxDigits>
size_t o200k_like_match(std::string_view text, size_t pos) {
  const size_t n = text.size();
  auto suffix = [&](size_t e) { return kContractions ? contraction_end(text, e) : e; };
  size_t next;
  const CaseClass first = classify_case(text, pos, &next);
  size_t ignored;
  const bool number = first == kNotLetterOrMark && classify(text, pos, &ignored) == kNumber;
  const bool newline = text[pos] == '\r' || text[pos] == '\n';
  // Where the letters start: after the prefix character. A mark is a prefix character and a
  // letter of either case; as a letter it gives the match the prefix would give, or one where
  // the prefix gives none, and Oniguruma's next try (no prefix) is that one.
  const size_t s = first == kNotLetterOrMark && !number && !newline ? next : pos;
  // U*L+: U* takes its longest run and gives characters back until L+ can start. If a lowercase
  // letter follows the run, L+ runs on from it; else the match ends after the run's last letter
  // that is on both sides (L+ takes just that one: an uppercase letter or the run's end follows).
  constexpr size_t kNone = std::string_view::npos;
  size_t i = s, after_last_both = kNone;
  while (i < n) {
    size_t after;
    const CaseClass c = classify_case(text, i, &after);
    if (!upper_side(c)) break;
    if (lower_side(c)) after_last_both = after;
    i = after;
  }
  if (size_t after; i < n && classify_case(text, i, &after) == kLowerLetter) {
    for (i = after; i < n && lower_side(classify_case(text, i, &after));) i = after;
    return suffix(i);
  }
  if (after_last_both != kNone) return suffix(after_last_both);
  // U+L*: the run holds only uppercase letters and no lowercase letter follows, so L* is empty.
  if (i > s) return suffix(i);
  if (number) return digits_end<kMaxDigits>(text, next);
  return symbols_or_spaces_end<true>(text, pos);
}

}  // namespace

size_t cl100k_match(std::string_view text, size_t pos) { return cl100k_like_match<3>(text, pos); }
size_t qwen_match(std::string_view text, size_t pos) { return cl100k_like_match<1>(text, pos); }
size_t o200k_match(std::string_view text, size_t pos) {
  return o200k_like_match<true, 3>(text, pos);
}
size_t tekken_match(std::string_view text, size_t pos) {
  return o200k_like_match<false, 1>(text, pos);
}

size_t deepseek_digits_match(std::string_view text, size_t pos) {
  size_t next;
  return classify(text, pos, &next) == kNumber ? digits_end<3>(text, next) : kNoMatch;
}

namespace {

// [\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]
bool deepseek_cjk(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF);
}

}  // namespace

size_t deepseek_cjk_match(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i < text.size()) {
    size_t after = i;
    if (!deepseek_cjk(decode_utf8(text, after))) break;
    i = after;
  }
  return i > pos ? i : kNoMatch;
}

namespace {

// The classes of DeepSeek-V3's third pattern: [\p{L}\p{M}], [\p{P}\p{S}], \s, and the rest.
enum DeepSeekKind : uint8_t { kLetterOrMark, kPunctOrSymbol, kWhite, kElse };

DeepSeekKind deepseek_kind(char32_t cp) {
  if (is_letter(cp) || is_combining_mark(cp)) return kLetterOrMark;
  if (is_punctuation(cp) || is_symbol(cp)) return kPunctOrSymbol;
  return is_white_space(cp) ? kWhite : kElse;
}

const auto kDeepSeekAscii = [] {
  std::array<DeepSeekKind, 128> table{};
  for (char32_t c = 0; c < 128; ++c) table[c] = deepseek_kind(c);
  return table;
}();

}  // namespace

size_t deepseek_words_match(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto ascii_letter = [&](size_t i) {
    return i < n && static_cast<unsigned>((at(i) | 0x20) - 'a') < 26u;
  };
  // [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
  const unsigned char c = at(pos);
  if (c > ' ' && c < 0x7F && !ascii_letter(pos) && !(c >= '0' && c <= '9') &&
      ascii_letter(pos + 1)) {
    size_t i = pos + 1;
    while (ascii_letter(i)) ++i;
    return i;
  }
  const auto kind = [&](size_t i, size_t* after) {
    if (at(i) < 0x80) {
      *after = i + 1;
      return kDeepSeekAscii[at(i)];
    }
    *after = i;
    return deepseek_kind(decode_utf8(text, *after));
  };
  const auto run_end = [&](size_t i, DeepSeekKind k) {
    // ASCII letters 16 at a time: a byte-at-a-time loop mispredicts its exit at every word.
    if (k == kLetterOrMark)
      for (size_t m = 16; m == 16 && i + 16 <= n; i += m)
        m = letter_prefix16(reinterpret_cast<const unsigned char*>(text.data()) + i);
    for (size_t after; i < n && kind(i, &after) == k;) i = after;
    return i;
  };
  size_t next;
  const DeepSeekKind first = kind(pos, &next);
  // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+: a mark is both the prefix and a letter, and either way
  // the match ends where the letters and marks after it do.
  if (first == kLetterOrMark) return run_end(next, kLetterOrMark);
  if (first != kPunctOrSymbol && c != '\r' && c != '\n') {
    const size_t e = run_end(next, kLetterOrMark);
    if (e > next) return e;
  }
  // ` ?[\p{P}\p{S}]+[\r\n]*`
  size_t body = first == kPunctOrSymbol ? pos : n;
  if (size_t after; c == ' ' && next < n && kind(next, &after) == kPunctOrSymbol) body = next;
  if (body < n) {
    size_t i = run_end(body, kPunctOrSymbol);
    while (i < n && (at(i) == '\r' || at(i) == '\n')) ++i;
    return i;
  }
  return first == kWhite ? spaces_end(text, pos) : kNoMatch;
}

namespace {

// The piece the first two Splits leave at `pos`: a group of up to three numbers, a run of CJK,
// or the text before the next number or CJK character.
size_t deepseek_outer_end(std::string_view text, size_t pos) {
  if (const size_t e = deepseek_digits_match(text, pos); e != kNoMatch) return e;
  if (const size_t e = deepseek_cjk_match(text, pos); e != kNoMatch) return e;
  size_t i = pos;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c >= '0' && c <= '9') break;
      ++i;
      continue;
    }
    size_t after = i;
    const char32_t cp = decode_utf8(text, after);
    if (is_number(cp) || deepseek_cjk(cp)) break;
    i = after;
  }
  return i;
}

}  // namespace

size_t deepseek_piece_end(std::string_view text, size_t pos, size_t* outer_end) {
  if (pos >= *outer_end) *outer_end = deepseek_outer_end(text, pos);
  const std::string_view outer = text.substr(0, *outer_end);
  if (const size_t e = deepseek_words_match(outer, pos); e != kNoMatch) return e;
  // No match here: the piece runs to where the third pattern next matches.
  size_t i = pos + utf8_length(static_cast<unsigned char>(text[pos]));
  while (i < outer.size() && deepseek_words_match(outer, i) == kNoMatch)
    i += utf8_length(static_cast<unsigned char>(text[i]));
  return std::min(i, outer.size());
}

SplitMatcher hand_matcher(std::string_view pattern) {
  for (const auto& [text, matcher] :
       {std::pair<const char*, SplitMatcher>{kGpt2Pattern, gpt2_match},
        {kCl100kPattern, cl100k_match},
        {kQwenPattern, qwen_match},
        {kO200kPattern, o200k_match},
        {kTekkenPattern, tekken_match},
        {kDeepSeekDigitsPattern, deepseek_digits_match},
        {kDeepSeekCjkPattern, deepseek_cjk_match},
        {kDeepSeekWordsPattern, deepseek_words_match}})
    if (pattern == text) return matcher;
  return nullptr;
}

namespace {

std::once_flag onig_once;

void init_onig() {
  std::call_once(onig_once, [] {
    OnigEncoding encs[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encs, 1);
  });
}

}  // namespace

Regex::Regex(const std::string& pattern) : pattern_(pattern) {
  init_onig();
  OnigRegex reg = nullptr;
  OnigErrorInfo einfo;
  const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
  int r = onig_new(&reg, p, p + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                   ONIG_SYNTAX_DEFAULT, &einfo);
  if (r != ONIG_NORMAL) {
    OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(msg, r, &einfo);
    throw Error(
        ErrorCode::kUnsupported, "",
        "Split pattern /" + pattern + "/ does not compile: " + reinterpret_cast<const char*>(msg));
  }
  regex_ = reg;
}

Regex::~Regex() {
  if (regex_) onig_free(static_cast<OnigRegex>(regex_));
}

bool Regex::search(std::string_view text, size_t from, size_t to, size_t* match_begin,
                   size_t* match_end) const {
  struct RegionHolder {
    OnigRegion* r = onig_region_new();
    ~RegionHolder() { onig_region_free(r, 1); }
  };
  thread_local RegionHolder holder;
  const auto* s = reinterpret_cast<const OnigUChar*>(text.data());
  int r = onig_search(static_cast<OnigRegex>(regex_), s, s + to, s + from, s + to, holder.r,
                      ONIG_OPTION_NONE);
  if (r < 0) return false;
  *match_begin = static_cast<size_t>(holder.r->beg[0]);
  *match_end = static_cast<size_t>(holder.r->end[0]);
  return true;
}

std::string regex_escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}-/").find(c) != std::string_view::npos)
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace shardkit::tok
