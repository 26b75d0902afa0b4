// HF tokenizers' pre-tokenizers for models other than byte-level BPE and WordPiece (which fuse
// theirs): Metaspace, Whitespace, WhitespaceSplit, Punctuation, Digits, CharDelimiterSplit,
// Split (Regex or String), UnicodeScripts and Sequence. Each splits normalized pieces into smaller
// ones.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/normalized_string.h"

namespace shardkit::tok {

class Regex;

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct PreTokenizer {
  enum Kind {
    kSequence,
    kMetaspace,
    kWhitespace,
    kWhitespaceSplit,
    kPunctuation,
    kDigits,
    kCharDelimiterSplit,
    kSplit,
    kUnicodeScripts,  // a piece starts where the script changes (unicode_scripts.h)
    kBert,  // BertPreTokenizer outside the fused WordPiece: White_Space removed, punctuation
            // isolated
  } kind = kSequence;
  // Metaspace.
  std::string replacement = "\xE2\x96\x81";
  enum PrependScheme { kAlways, kFirst, kNever } prepend_scheme = kAlways;
  bool split = true;
  // Punctuation, Split.
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool individual_digits = false;      // Digits
  char32_t delimiter = 0;              // CharDelimiterSplit
  std::shared_ptr<const Regex> regex;  // Split
  bool invert = false;                 // Split
  std::vector<PreTokenizer> children;  // Sequence

  // One piece of text being pre-tokenized: its normalized string and whether it starts the
  // whole input (Metaspace's "first").
  struct Piece {
    NormalizedString s;
    bool at_start = false;
  };
  // Splits every piece; empty pieces are dropped, as HF does.
  void apply(std::vector<Piece>& pieces) const;
};

// A split of text into (begin, end, is_match) ranges, then HF's SplitDelimiterBehavior.
void apply_split_behavior(const std::vector<std::pair<Span, bool>>& matches, SplitBehavior behavior,
                          std::vector<Span>& out);

}  // namespace shardkit::tok
