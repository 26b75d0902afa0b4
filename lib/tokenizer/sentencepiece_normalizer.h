// SentencePiece's own normalizer (for .model files): user-defined symbols kept as they are, the
// precompiled charsmap by longest match, remove_extra_whitespaces, add_dummy_prefix and
// whitespace escaped as U+2581, with each normalized byte aligned to the original bytes it came
// from.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
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

  // Whether a text cut after a newline between two visible characters normalizes into the
  // halves of its whole normalization, the dummy prefix aside (text_cuts.h): without a charsmap
  // (the "identity" rule) each character is itself and only spaces change, and no user-defined
  // symbol goes on past a newline. A charsmap could map a newline or the character after it to
  // a space, which remove_extra_whitespaces then joins across the cut.
  bool keeps_newline_cuts() const;

  // Call once the fields above are set: finds the ASCII bytes whose normalization depends on
  // nothing after them (no user-defined symbol and no longer charsmap key starts with them), or
  // nothing after them when an ASCII byte follows (NFKC's keys of a letter and a combining mark
  // go on with a non-ASCII byte), so that sentencepiece_normalize maps them by table.
  void prepare();
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
  bool plain_space = false;                // ' ' maps by table, alone, to itself
  // Printable ASCII maps to itself and a single space to U+2581: escape_spaces.h's text.
  bool escapes_spaced_ascii = false;
};

void sentencepiece_normalize(const SentencePieceNormalizerSpec& spec, std::string_view input,
                             NormalizedString& out);

}  // namespace shardkit::tok
