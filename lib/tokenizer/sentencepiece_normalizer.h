// SentencePiece's own normalizer (for .model files): user-defined symbols kept as they are, the
// precompiled charsmap by longest match, remove_extra_whitespaces, add_dummy_prefix and
// whitespace escaped as U+2581, with each normalized byte aligned to the original bytes it came
// from.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/longest_prefix.h"
#include "tokenizer/normalized_string.h"
#include "tokenizer/precompiled_charsmap.h"

namespace shardkit::tok {

struct SentencePieceNormalizerSpec {
  std::shared_ptr<const PrecompiledCharsmap> charsmap;  // may be null (identity)
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  std::vector<std::string> user_defined;  // matched first, longest, never normalized
  LongestPrefix user_defined_prefixes;    // user_defined's, made by prepare()

  // How a text cut after a newline between two visible characters (text_cuts.h) normalizes, part
  // by part, into the whole's normalization. Either way no user-defined symbol holds a newline
  // and no charsmap key holds one but the newline alone, so the newline is a piece of its own:
  enum class NewlineCuts {
    kNone,
    // It stays a newline (no charsmap, the "identity" rule; or one that keeps it): the model must
    // not merge across it, and the parts after the first go without the dummy prefix.
    kNewlineKept,
    // It becomes a space (nmt_nfkc), which remove_extra_whitespaces takes off the end of the part
    // before the cut and the dummy prefix puts back before the part after it: each part is
    // normalized as a text, and the model must not merge across a word start.
    kNewlineAsWordStart,
  };
  NewlineCuts newline_cuts = NewlineCuts::kNone;
  // ASCII bytes that are a piece of their own wherever they stand: no charsmap key or
  // user-defined symbol holds one after its first byte, or starts with one and goes on. The
  // pieces before a newline are found from the last of them, not from the line's start.
  std::array<bool, 128> ascii_piece_alone{};
  // Sets the two above; called by the loader of a BPE model (a Unigram's sums keep a text whole
  // anyway; the walk over the charsmap takes 2 ms for nmt_nfkc).
  void prepare_newline_cuts();
  // Whether the cut at text[p], after a newline, holds beyond newline_cuts: with
  // remove_extra_whitespaces, the part after a kept newline starts with no space, and the text
  // before a newline that becomes a space ends with at most one.
  bool cut_holds(std::string_view text, size_t p) const;

  // Call once the fields above are set: finds the ASCII bytes whose normalization depends on
  // nothing after them (no user-defined symbol and no longer charsmap key starts with them), or
  // nothing after them when an ASCII byte follows (NFKC's keys of a letter and a combining mark
  // go on with a non-ASCII byte), so that sentencepiece_normalize maps them by table.
  void prepare();
  void find_characters_copying_themselves();
  // Whether input[pos], an ASCII byte, maps by table.
  bool ascii_by_table(std::string_view input, size_t pos) const {
    const auto b = static_cast<unsigned char>(input[pos]);
    return ascii_alone[b] ||
           (ascii_alone_before_ascii[b] &&
            (pos + 1 == input.size() || static_cast<unsigned char>(input[pos + 1]) < 0x80));
  }
  bool ascii_ready = false;
  std::array<bool, 128> ascii_alone{};
  std::array<bool, 128> ascii_alone_before_ascii{};
  std::array<std::string_view, 128> ascii_replacement{};
  // Maps by table to itself where an ASCII byte follows, and is not a space: a run of these is
  // copied whole.
  std::array<bool, 128> ascii_copies_itself{};
  bool printable_copy_themselves = false;  // ascii_copies_itself for all of '!' to '~'
  // A bit for each character of two or three bytes that maps to itself wherever it stands: no
  // charsmap key and no user-defined symbol starts with it. Runs of them are copied whole.
  std::vector<uint64_t> copies_itself;
  // The end of the run of such characters at input[pos] (pos when there is none).
  size_t run_copying_itself(std::string_view input, size_t pos) const;
  bool plain_space = false;  // ' ' maps by table, alone, to itself
  // Printable ASCII maps to itself and a single space to U+2581: escape_spaces.h's text.
  bool escapes_spaced_ascii = false;
};

void sentencepiece_normalize(const SentencePieceNormalizerSpec& spec, std::string_view input,
                             NormalizedString& out);
// The normalization of the piece at input[pos]: a user-defined symbol as it is, else the
// charsmap's longest key's replacement, else the character; and the bytes it takes.
std::pair<std::string_view, size_t> sentencepiece_normalize_prefix(
    const SentencePieceNormalizerSpec& spec, std::string_view input, size_t pos);

}  // namespace shardkit::tok
