#include "tokenizer/text_cuts.h"

#include <cstring>

#include "tokenizer/unicode.h"

namespace shardkit::tok {
namespace {

bool ascii_visible(unsigned char c) { return c > 0x20 && c < 0x7F; }

// Whether the character starting at text[i] is visible: not White_Space, and not a control or
// format character (which BERT drops), so that it makes a token. Invalid UTF-8 reads as
// invisible (no cut): such a text fails to tokenize anyway.
bool visible_from(std::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  if (s[i] < 0x80) return ascii_visible(s[i]);
  const size_t n = utf8_length(s[i]);
  if (s[i] < 0xC2 || s[i] > 0xF4 || i + n > text.size()) return false;
  char32_t cp = s[i] & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  return !is_white_space(cp) && !is_other_control(cp);
}

// Whether the character ending at text[end - 1] is not White_Space.
bool visible_before(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
    --start;
  return utf8_length(static_cast<unsigned char>(text[start])) == end - start &&
         visible_from(text, start);
}

}  // namespace

size_t next_newline_cut(std::string_view text, size_t from,
                        const std::array<bool, 256>& refused_first_bytes) {
  const size_t n = text.size();
  for (size_t q = from > 1 ? from - 1 : 1; q + 1 < n; ++q) {
    const void* nl = std::memchr(text.data() + q, '\n', n - 1 - q);
    if (!nl) break;
    q = static_cast<size_t>(static_cast<const char*>(nl) - text.data());
    const size_t p = q + 1;
    if (!refused_first_bytes[static_cast<unsigned char>(text[p])] && visible_from(text, p) &&
        visible_before(text, q))
      return p;
  }
  return std::string_view::npos;
}

}  // namespace shardkit::tok
