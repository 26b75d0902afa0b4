#include "tokenizer/bert_normalizer.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/unicode.h"

namespace shardkit::tok {

int bert_normalize_char(char32_t cp, const BertNormalizerOptions& n, char32_t* out) {
  char32_t decomposed[8];
  int nd = 1;
  decomposed[0] = cp;
  if (n.strip_accents) nd = decompose_nfd(cp, decomposed, 8);
  int count = 0;
  for (int k = 0; k < nd; ++k) {
    const char32_t c = decomposed[k];
    if (n.strip_accents && is_bert_nonspacing_mark(c)) continue;
    if (n.lowercase)
      count += to_lower_full(c, out + count);
    else
      out[count++] = c;
  }
  return count;
}

namespace {

// The normalized text under construction; alignments only when the input keeps them.
struct BertOutput {
  std::string text;
  std::vector<Span> align;
  bool track;
  void append(char32_t c, Span span) {
    const size_t before = text.size();
    append_utf8(text, c);
    if (track) align.insert(align.end(), text.size() - before, span);
  }
};

// clean_text's removals: controls other than the tab, newline and carriage return it counts as
// white space.
bool cleaned_away(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return cp == 0 || cp == 0xFFFD || is_bert_control(cp);
}

// Every character BertNormalizer makes of `cp`: none for what clean_text removes, ' ' for white
// space, the spaces around an ideograph, then bert_normalize_char's.
constexpr int kMaxCharOutput = kMaxBertNormalizedChars + 2;
int normalize_whole_char(char32_t cp, const BertNormalizerOptions& n, char32_t* out) {
  if (n.clean_text) {
    if (cleaned_away(cp)) return 0;
    if (is_white_space(cp)) cp = ' ';
  }
  const bool ideograph = n.handle_chinese_chars && is_chinese_char(cp);
  int count = 0;
  if (ideograph) out[count++] = ' ';
  count += bert_normalize_char(cp, n, out + count);
  if (ideograph) out[count++] = ' ';
  return count;
}

// The normalized form of each ASCII character under `n`: one byte, or -1 for none (clean_text's
// controls). normalize_whole_char's, taken once for each of the 16 settings: ASCII stays ASCII,
// one character for one, under lowercasing and NFD alike.
const std::array<int16_t, 128>& ascii_table(const BertNormalizerOptions& n) {
  static const auto tables = [] {
    std::array<std::array<int16_t, 128>, 16> all{};
    for (int bits = 0; bits < 16; ++bits) {
      const BertNormalizerOptions o{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0,
                                    (bits & 8) != 0};
      for (char32_t c = 0; c < 128; ++c) {
        char32_t out[kMaxCharOutput];
        all[bits][c] = normalize_whole_char(c, o, out) == 1 ? static_cast<int16_t>(out[0]) : -1;
      }
    }
    return all;
  }();
  return tables[int{n.clean_text} | int{n.handle_chinese_chars} << 1 | int{n.strip_accents} << 2 |
                int{n.lowercase} << 3];
}

// Appends the normalized form of the ASCII run of `s` at `i`; returns the run's end.
size_t append_ascii_run(const NormalizedString& s, size_t i, const std::array<int16_t, 128>& ascii,
                        BertOutput& out) {
  const std::string& in = s.text();
  size_t end = i;
  while (end < in.size() && static_cast<unsigned char>(in[end]) < 0x80) ++end;
  const size_t at = out.text.size();
  out.text.resize(at + (end - i));
  char* to = out.text.data() + at;
  for (; i < end; ++i) {
    const int16_t c = ascii[static_cast<unsigned char>(in[i])];
    if (c < 0) continue;
    *to++ = static_cast<char>(c);
    if (out.track) out.align.push_back(s.alignments()[i]);
  }
  out.text.resize(static_cast<size_t>(to - out.text.data()));
  return end;
}

}  // namespace

// One pass, where HF makes four (clean, CJK, NFD and filter, lowercase): every step works per
// character, so each character's output, and its alignment, follows from it alone.
void bert_normalize(NormalizedString& s, const BertNormalizerOptions& n) {
  if (!n.any()) return;
  const std::string& in = s.text();
  BertOutput out{{}, {}, s.tracking()};
  out.text.reserve(in.size() + in.size() / 8);
  if (out.track) out.align.reserve(in.size() + in.size() / 8);
  // ASCII, most of most text, by table: none of the Unicode lookups below.
  const std::array<int16_t, 128>& ascii = ascii_table(n);
  for (size_t i = 0; i < in.size();) {
    if (static_cast<unsigned char>(in[i]) < 0x80) {
      i = append_ascii_run(s, i, ascii, out);
      continue;
    }
    const Span span = out.track ? s.alignments()[i] : Span{0, 0};
    char32_t normalized[kMaxCharOutput];
    const int count = normalize_whole_char(decode_utf8(in, i), n, normalized);
    for (int k = 0; k < count; ++k) out.append(normalized[k], span);
  }
  s.set(std::move(out.text), std::move(out.align));
}

}  // namespace shardkit::tok
