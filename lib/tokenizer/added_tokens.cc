#include "tokenizer/added_tokens.h"

#include <algorithm>

#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

// Rust regex's \w (Unicode): letters, marks, decimal digits, connector punctuation, joiners.
bool is_word_char(char32_t c) {
  if (c < 0x80)
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return is_letter(c) || is_combining_mark(c) || is_decimal_or_letter_number(c) ||
         is_connector_punctuation(c) || c == 0x200C || c == 0x200D;
}

char32_t last_char(std::string_view text, size_t end) {
  size_t b = end;
  do {
    --b;
  } while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80);
  size_t i = b;
  return decode_utf8(text, i);
}

}  // namespace

void AddedTokenMatcher::build(std::vector<AddedToken> tokens) {
  tokens_ = std::move(tokens);
  first_byte_.fill(false);
  first_two_.assign(65536 / 64, 0);
  contents_ = LongestPrefix();
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& c = tokens_[i].content;
    if (c.empty()) continue;
    const auto first = static_cast<unsigned char>(c[0]);
    first_byte_[first] = true;
    for (int second = 0; second < 256; ++second)  // a one-byte token, before any byte
      if (c.size() == 1 || static_cast<unsigned char>(c[1]) == second)
        first_two_[(first << 8 | second) / 64] |= uint64_t{1} << (second % 64);
    contents_.add(c, static_cast<uint32_t>(i));
  }
  first_bytes_.clear();
  for (int b = 0; b < 256; ++b)
    if (first_byte_[b]) first_bytes_.push_back(static_cast<unsigned char>(b));
}

const AddedToken* AddedTokenMatcher::match_at(std::string_view text, size_t i) const {
  const LongestPrefix::Match m = contents_.longest(text, i);
  return m.value == LongestPrefix::kNone ? nullptr : &tokens_[m.value];
}

bool AddedTokenMatcher::accept(std::string_view text, size_t start, size_t end,
                               const AddedToken& t) const {
  if (!t.single_word) return true;
  bool start_space = start == 0 || !is_word_char(last_char(text, start));
  bool stop_space = true;
  if (end < text.size()) {
    size_t i = end;
    stop_space = !is_word_char(decode_utf8(text, i));
  }
  return start_space && stop_space;
}

size_t AddedTokenMatcher::strip_left(std::string_view text, size_t start, size_t floor) const {
  size_t b = start;
  while (b > 0) {
    size_t p = b;
    do {
      --p;
    } while (p > 0 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80);
    size_t i = p;
    if (!is_white_space(decode_utf8(text, i))) break;
    b = p;
  }
  return std::max(b, floor);
}

size_t AddedTokenMatcher::strip_right(std::string_view text, size_t end) const {
  size_t i = end;
  while (i < text.size()) {
    size_t j = i;
    if (!is_white_space(decode_utf8(text, j))) break;
    i = j;
  }
  return i;
}

}  // namespace shardkit::tok
