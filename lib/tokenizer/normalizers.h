// HF tokenizers' normalizers over a NormalizedString (offsets stay mapped to the original):
// NFC/NFD/NFKC/NFKD, Lowercase, Strip, StripAccents, Replace (String or Regex), Prepend,
// Precompiled (SentencePiece's charsmap) and Sequence.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normalized_string.h"
#include "tokenizer/unicode_forms.h"

namespace shardkit::tok {

class Regex;
class PrecompiledCharsmap;
struct SentencePieceNormalizerSpec;

struct Normalizer {
  enum Kind {
    kSequence,
    kUnicode,  // `form`
    kLowercase,
    kStrip,
    kStripAccents,
    kReplace,
    kPrepend,
    kPrecompiled,
    kSentencePiece,  // a .model file's normalizer (sentencepiece_normalizer.h)
  } kind = kSequence;
  UnicodeForm form = UnicodeForm::kNFC;
  bool strip_left = true, strip_right = true;
  std::string pattern;                 // kReplace with a String pattern
  std::shared_ptr<const Regex> regex;  // kReplace with a Regex pattern
  std::string content;                 // kReplace replacement, kPrepend prefix
  std::shared_ptr<const PrecompiledCharsmap> charsmap;
  std::vector<Normalizer> children;                                  // kSequence
  std::shared_ptr<const SentencePieceNormalizerSpec> sentencepiece;  // kSentencePiece

  void apply(NormalizedString& s) const;
  // Whether apply() can change anything (an empty Sequence cannot).
  bool is_identity() const;
  // Whether apply_plain() can run this normalizer: Prepend and String Replace steps only.
  bool is_plain() const;
  // apply() on a string without alignments (ids-only encoding), for is_plain() normalizers.
  void apply_plain(std::string& text) const;
  // Whether apply() would leave `text` as it is, told without copying it: the Unicode forms
  // leave a text alone when none of its characters is unstable (ASCII text among them), and a
  // Sequence of them when each does. false means "not known": the other kinds never tell.
  bool leaves_unchanged(std::string_view text) const;
  // Whether apply() works on each side of a newline between two non-space characters alone, so
  // that a text cut there normalizes into the halves of its whole normalization (text_cuts.h):
  // true for the Unicode forms and Lowercase (a newline starts a combining sequence that nothing
  // joins), and for Replace of a literal that starts with white space and holds no newline (no
  // match holds the newline or starts at the visible character after it), and for a .model's
  // normalizer where the newline is a piece of its own (SentencePieceNormalizerSpec::
  // NewlineCuts; a dummy prefix before a kept newline's part is a Prepend); false for Prepend,
  // Strip, other Replaces and the Precompiled charsmap.
  bool keeps_newline_cuts() const;
  // Whether a step is a Prepend (or a .model's dummy prefix before a kept newline's part), and
  // the normalizer without those steps. A Prepend puts its prefix before a whole text, so a text
  // cut in parts has it before the first part only: the others are normalized by without_prepend(),
  // and the joined results are the whole's when without_prepend() keeps_newline_cuts().
  bool prepends() const;
  Normalizer without_prepend() const;
  // Whether the cut at text[p] holds beyond keeps_newline_cuts (SentencePiece's
  // remove_extra_whitespaces looks at the characters next to it).
  bool cut_holds(std::string_view text, size_t p) const;
  // Whether the newline becomes the start of a word ("▁") that the part after a cut begins
  // with: the model must then not merge across a word start, rather than across a newline.
  bool newline_becomes_word_start() const;
};

// HF's NormalizedString::prepend (the prefix aligned with the first character) and replace of
// every occurrence of a literal (also used by the Metaspace pre-tokenizer).
void prepend_normalized(NormalizedString& s, const std::string& prefix);
void replace_literal(NormalizedString& s, std::string_view pattern, std::string_view content);

// `prefix`, then `text` with each `byte` from `first` on replaced by `content`, into `out` (no
// alignments): the Replace of one byte (Llama's space by U+2581), and the Metaspace
// pre-tokenizer's (whose prepended replacement is the prefix, rather than a move of the text).
void replace_byte(std::string_view text, size_t first, char byte, std::string_view content,
                  std::string& out, std::string_view prefix = {});

}  // namespace shardkit::tok
