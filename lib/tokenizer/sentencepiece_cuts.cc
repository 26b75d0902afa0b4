// Where SentencePiece's normalizer lets a long text be cut after a newline (text_cuts.h,
// SentencePieceNormalizerSpec::NewlineCuts).
#include <algorithm>

#include "tokenizer/sentencepiece_normalizer.h"
#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

// How far before a newline the walk of space_newline_cut_holds looks for a byte that is a piece
// of its own: a line of a whole speech (hundreds of KiB) walked from its start cost a BPE .model
// 15% of a conversion.
constexpr size_t kWalkBack = 4096;

// The bytes that some user-defined symbol holds after its first byte, or starts a longer
// symbol with.
std::array<bool, 256> symbol_bytes_not_alone(const std::vector<std::string>& symbols) {
  std::array<bool, 256> out{};
  for (const std::string& u : symbols) {
    for (size_t i = 1; i < u.size(); ++i) out[static_cast<unsigned char>(u[i])] = true;
    if (u.size() > 1) out[static_cast<unsigned char>(u[0])] = true;
  }
  return out;
}

// After a kept newline, the whole keeps the spaces the next piece normalizes to, and the part
// after the cut, a text of its own, drops them. Without a charsmap a visible character is itself.
bool kept_newline_cut_holds(const SentencePieceNormalizerSpec& spec, std::string_view text,
                            size_t p) {
  if (!spec.charsmap) return true;
  const std::string_view first = sentencepiece_normalize_prefix(spec, text, p).first;
  return !first.empty() && first[0] != ' ';
}

// Where the pieces before the newline at text[newline] may be walked from: the line's start (no
// key holds a newline with more) or, within kWalkBack, the last byte that is a piece of its own;
// npos when neither is near.
size_t walk_start(const SentencePieceNormalizerSpec& spec, std::string_view text, size_t newline) {
  const size_t floor = newline > kWalkBack ? newline - kWalkBack : 0;
  for (size_t i = newline; i-- > floor;) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n') return i + 1;
    if (b < 0x80 && spec.ascii_piece_alone[b]) return i;
  }
  return floor == 0 ? 0 : std::string_view::npos;
}

// The newline's space is dropped in the whole after a space, and the part before the cut loses
// its trailing spaces (and U+2581s, escaped or not), to the dummy prefix's one after it: the two
// agree when the text before the newline ends with one space, or with none and no U+2581. The
// pieces before the newline are the whole's from walk_start on, and run here as the normalizer
// runs them, from the first other character on.
bool space_newline_cut_holds(const SentencePieceNormalizerSpec& spec, std::string_view text,
                             size_t p) {
  const size_t newline = p - 1;
  const size_t start = walk_start(spec, text, newline);
  if (start == std::string_view::npos) return false;
  bool after_space = true, seen_other = false;
  size_t trailing_spaces = 0;  // as the part's end strips them
  for (size_t pos = start; pos < newline;) {
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

void SentencePieceNormalizerSpec::prepare_newline_cuts() {
  newline_cuts = NewlineCuts::kNone;
  ascii_piece_alone.fill(false);
  std::array<bool, 256> not_alone = symbol_bytes_not_alone(user_defined);
  if (charsmap) {
    const std::array<bool, 256> inside = charsmap->bytes_after_first();
    for (size_t b = 0; b < 256; ++b)
      not_alone[b] =
          not_alone[b] || inside[b] || charsmap->has_longer_key(static_cast<unsigned char>(b));
  }
  for (unsigned b = 1; b < 128; ++b) ascii_piece_alone[b] = !not_alone[b];
  // The newline is a piece of its own: in no symbol, in no key but its own.
  const bool symbol_holds_newline =
      std::any_of(user_defined.begin(), user_defined.end(),
                  [](const std::string& u) { return u.find('\n') != std::string::npos; });
  if (symbol_holds_newline || !ascii_piece_alone['\n']) return;
  const std::string_view newline = sentencepiece_normalize_prefix(*this, "\n", 0).first;
  if (newline == "\n") {
    newline_cuts = NewlineCuts::kNewlineKept;
  } else if (newline == " " && remove_extra_whitespaces && add_dummy_prefix) {
    newline_cuts = NewlineCuts::kNewlineAsWordStart;
  }
}

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
