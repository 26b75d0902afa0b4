#include "tokenizer/bert_normalizer.h"

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

}  // namespace

// One pass, where HF makes four (clean, CJK, NFD and filter, lowercase): every step works per
// character, so each character's output, and its alignment, follows from it alone.
void bert_normalize(NormalizedString& s, const BertNormalizerOptions& n) {
  if (!n.any()) return;
  const std::string& in = s.text();
  BertOutput out{{}, {}, s.tracking()};
  out.text.reserve(in.size() + in.size() / 8);
  if (out.track) out.align.reserve(in.size() + in.size() / 8);
  for (size_t i = 0; i < in.size();) {
    const Span span = out.track ? s.alignments()[i] : Span{0, 0};
    char32_t cp = decode_utf8(in, i);
    if (n.clean_text) {
      if (cleaned_away(cp)) continue;
      if (is_white_space(cp)) cp = ' ';
    }
    const bool ideograph = n.handle_chinese_chars && is_chinese_char(cp);
    if (ideograph) out.append(' ', span);
    char32_t normalized[kMaxBertNormalizedChars];
    const int count = bert_normalize_char(cp, n, normalized);
    for (int k = 0; k < count; ++k) out.append(normalized[k], span);
    if (ideograph) out.append(' ', span);
  }
  s.set(std::move(out.text), std::move(out.align));
}

}  // namespace shardkit::tok
