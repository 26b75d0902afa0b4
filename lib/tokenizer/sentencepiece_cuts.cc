// Where SentencePiece's normalizer lets a long text be cut after a newline (text_cuts.h,
// SentencePieceNormalizerSpec::NewlineCuts).
#include <algorithm>

#include "tokenizer/sentencepiece_normalizer.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

SentencePieceNormalizerSpec::NewlineCuts SentencePieceNormalizerSpec::find_newline_cuts() const {
  const bool symbol_holds_newline =
      std::any_of(user_defined.begin(), user_defined.end(),
                  [](const std::string& u) { return u.find('\n') != std::string::npos; });
  if (symbol_holds_newline || (charsmap && !charsmap->newline_only_alone()))
    return NewlineCuts::kNone;
  const std::string_view newline = sentencepiece_normalize_prefix(*this, "\n", 0).first;
  if (newline == "\n") return NewlineCuts::kNewlineKept;
  if (newline == " " && remove_extra_whitespaces && add_dummy_prefix)
    return NewlineCuts::kNewlineAsWordStart;
  return NewlineCuts::kNone;
}

namespace {

// After a kept newline, the whole keeps the spaces the next piece normalizes to, and the part
// after the cut, a text of its own, drops them. Without a charsmap a visible character is itself.
bool kept_newline_cut_holds(const SentencePieceNormalizerSpec& spec, std::string_view text,
                            size_t p) {
  if (!spec.charsmap) return true;
  const std::string_view first = sentencepiece_normalize_prefix(spec, text, p).first;
  return !first.empty() && first[0] != ' ';
}

// The newline's space is dropped in the whole after a space, and the part before the cut loses
// its trailing spaces (and U+2581s, escaped or not), to the dummy prefix's one after it: the two
// agree when the text before the newline ends with one space, or with none and no U+2581. Its
// line's pieces are the whole's (no key holds the newline before it with more), and they run
// here as the normalizer runs them, from the line's first other character on.
bool space_newline_cut_holds(const SentencePieceNormalizerSpec& spec, std::string_view text,
                             size_t p) {
  const size_t newline = p - 1;
  const size_t before = newline == 0 ? std::string_view::npos : text.rfind('\n', newline - 1);
  bool after_space = true, seen_other = false;
  size_t trailing_spaces = 0;  // as the part's end strips them
  for (size_t pos = before == std::string_view::npos ? 0 : before + 1; pos < newline;) {
    auto [normalized, length] = sentencepiece_normalize_prefix(spec, text, pos);
    pos += length;
    if (after_space)
      normalized.remove_prefix(std::min(normalized.find_first_not_of(' '), normalized.size()));
    if (normalized.empty()) continue;
    for (size_t i = 0; i < normalized.size();) {
      const bool escaped =
          spec.escape_whitespaces && normalized.substr(i).starts_with(kSentencePieceSpace);
      if (normalized[i] == ' ' || escaped) {
        ++trailing_spaces;
        i += escaped ? kSentencePieceSpace.size() : 1;
        continue;
      }
      trailing_spaces = 0;
      seen_other = true;
      ++i;
    }
    after_space = normalized.back() == ' ';
  }
  return seen_other && trailing_spaces == (after_space ? 1 : 0);
}

}  // namespace

bool SentencePieceNormalizerSpec::cut_holds(std::string_view text, size_t p) const {
  if (!remove_extra_whitespaces) return true;
  switch (newline_cuts) {
    case NewlineCuts::kNewlineKept:
      return kept_newline_cut_holds(*this, text, p);
    case NewlineCuts::kNewlineAsWordStart:
      return space_newline_cut_holds(*this, text, p);
    default:
      return true;
  }
}

}  // namespace shardkit::tok
