#include "tokenizer/byte_level.h"

#include <oniguruma.h>

#include <mutex>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

const char* const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const char* const kQwenPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

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
  size_t next;
  CharClass cls = classify(text, pos, &next);
  size_t body = pos;  // start of the \p{L}+ / \p{N}+ / [^\s\p{L}\p{N}]+ run
  if (c == ' ' && next < n) {
    size_t after;
    CharClass k = classify(text, next, &after);
    if (k != kSpace) {
      cls = k;
      body = next;
      next = after;
    }
  }
  if (cls != kSpace) {
    // Greedy run of the same class after the first character of the body.
    (void)body;
    size_t i = next;
    while (i < n) {
      size_t after;
      if (classify(text, i, &after) != cls) break;
      i = after;
    }
    return i;
  }
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

// cl100k's pattern with \p{N}{1,max_digits}.
template <int kMaxDigits>
size_t cl100k_like_match(std::string_view text, size_t pos) {
  const size_t n = text.size();
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  // (?i:'s|'t|'re|'ve|'m|'ll|'d); case folding also maps U+017F (long s) to s.
  if (at(pos) == '\'' && pos + 1 < n) {
    const unsigned char d = at(pos + 1) | 0x20;
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return pos + 2;
    if (at(pos + 1) == 0xC5 && pos + 2 < n && at(pos + 2) == 0xBF) return pos + 3;
    if (pos + 2 < n) {
      const unsigned char e = at(pos + 2) | 0x20;
      if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l'))
        return pos + 3;
    }
  }
  auto run_of = [&](size_t i, CharClass cls) {
    while (i < n) {
      size_t after;
      if (classify(text, i, &after) != cls) break;
      i = after;
    }
    return i;
  };
  size_t next;
  const CharClass cls = classify(text, pos, &next);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (cls == kLetter) return run_of(next, kLetter);
  const bool newline = at(pos) == '\r' || at(pos) == '\n';
  if (cls != kNumber && !newline && next < n) {
    size_t after;
    if (classify(text, next, &after) == kLetter) return run_of(after, kLetter);
  }
  // \p{N}{1,3}
  if (cls == kNumber) {
    size_t i = next;
    for (int k = 1; k < kMaxDigits && i < n; ++k) {
      size_t after;
      if (classify(text, i, &after) != kNumber) break;
      i = after;
    }
    return i;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  size_t body = cls == kOther ? pos : n;
  if (at(pos) == ' ' && next < n) {
    size_t after;
    if (classify(text, next, &after) == kOther) body = next;
  }
  if (body < n) {
    size_t i = run_of(body, kOther);
    while (i < n && (at(i) == '\r' || at(i) == '\n')) ++i;
    return i;
  }
  // Whitespace: \s*[\r\n]+ (up to the last newline of the run), \s+(?!\S), \s+.
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

}  // namespace

size_t cl100k_match(std::string_view text, size_t pos) { return cl100k_like_match<3>(text, pos); }
size_t qwen_match(std::string_view text, size_t pos) { return cl100k_like_match<1>(text, pos); }

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
