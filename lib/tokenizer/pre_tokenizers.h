// HF tokenizers' pre-tokenizers for models other than byte-level BPE and WordPiece (which fuse
// theirs): Metaspace, Whitespace, WhitespaceSplit, Punctuation, Digits, CharDelimiterSplit,
// Split (Regex or String), UnicodeScripts and Sequence. Each splits normalized pieces into smaller
// ones.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/normalized_string.h"
#include "tokenizer/unicode.h"

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
  std::string replacement{kSentencePieceSpace};
  enum PrependScheme { kAlways, kFirst, kNever } prepend_scheme = kAlways;
  bool split = true;
  // Punctuation, Split.
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool individual_digits = false;      // Digits
  char32_t delimiter = 0;              // CharDelimiterSplit
  std::shared_ptr<const Regex> regex;  // Split
  std::string literal;                 // Split with a String pattern: the string
  bool invert = false;                 // Split
  std::vector<PreTokenizer> children;  // Sequence

  // Where a piece of text being pre-tokenized starts, for Metaspace's prepend schemes: at the
  // whole input's start ("first" and "always" prepend), at a cut shardify made in it (neither:
  // the part before the cut had the replacement), or elsewhere (only "always").
  enum class Start { kText, kCut, kElsewhere };
  struct Piece {
    NormalizedString s;
    Start start = Start::kElsewhere;
  };
  // Whether a Metaspace puts its replacement before a piece that starts at `start`.
  bool prepends_at(Start start) const {
    return prepend_scheme == kAlways ? start != Start::kCut
                                     : prepend_scheme == kFirst && start == Start::kText;
  }
  // Splits every piece; empty pieces are dropped, as HF does.
  void apply(std::vector<Piece>& pieces) const;
  // Whether a text cut after a newline between two non-space characters splits into the pieces
  // of its whole, the piece across the cut in two (text_cuts.h): for Splits on a literal that
  // starts with white space and holds no newline (Gemma's on " "), whose matches keep clear of
  // the cut, for a Metaspace (its replacement goes before a text, and the part after a cut goes
  // without it: Start::kCut), and Sequences of them: none of them starts a piece at a cut, so
  // the part's first piece is the end of one that started before it.
  bool keeps_newline_cuts() const;
  // A Metaspace that puts its replacement before every text given to it ("always"), not only
  // the input's first: the text after an added token gets one (TokenizerBase::prefixes_segments).
  bool prepends_every_text() const;
};

// HF's find_matches for a pattern: hands `push(range, is_match)` the matches of `text` and the
// text between them, in order. `next_match(from, &begin, &end)` finds the first match at or
// after `from`; an empty match splits there and the search goes on one character later.
template <typename NextMatch, typename Push>
void for_each_match_range(std::string_view text, NextMatch&& next_match, Push&& push) {
  size_t prev = 0, from = 0;
  while (from < text.size()) {
    size_t mb = from, me = from;
    if (!next_match(from, &mb, &me)) break;
    if (prev != mb) push(Span(prev, mb), false);
    push(Span(mb, me), true);
    prev = me;
    from = me > mb ? me : mb + utf8_length(static_cast<unsigned char>(text[mb]));
  }
  if (prev != text.size()) push(Span(prev, text.size()), false);
}

// HF's SplitDelimiterBehavior over the ranges of a split (the matches and the text between
// them, in order, empty ones included): each range is handed on as soon as no later one can
// change it (at most one is held), so a whole document splits without a list of its matches.
template <typename Sink>
class SplitRanges {
 public:
  SplitRanges(SplitBehavior behavior, Sink& sink) : behavior_(behavior), sink_(sink) {}

  void push(Span r, bool is_match) {
    switch (behavior_) {
      case SplitBehavior::kRemoved:
        if (!is_match) sink_(r);
        break;
      case SplitBehavior::kIsolated:
        sink_(r);
        break;
      case SplitBehavior::kContiguous:  // runs of matches, or of non-matches, become one range
        hold_or_extend(r, is_match == previous_match_);
        break;
      case SplitBehavior::kMergedWithPrevious:  // a match joins the text before it
        hold_or_extend(r, is_match && !previous_match_);
        break;
      case SplitBehavior::kMergedWithNext:  // a match joins the text after it
        if (held_ && !is_match) {
          sink_(Span{held_range_.first, r.second});
          held_ = false;
        } else {
          finish();
          if (is_match) {
            held_ = true;
            held_range_ = r;
          } else {
            sink_(r);
          }
        }
        break;
    }
    previous_match_ = is_match;
  }

  void finish() {
    if (held_) sink_(held_range_);
    held_ = false;
  }

 private:
  void hold_or_extend(Span r, bool extend) {
    if (extend && held_) {
      held_range_.second = r.second;
      return;
    }
    finish();
    held_ = true;
    held_range_ = r;
  }

  SplitBehavior behavior_;
  Sink& sink_;
  bool previous_match_ = false;
  bool held_ = false;
  Span held_range_{};
};

// The same over a list of ranges, into `out`.
void apply_split_behavior(const std::vector<std::pair<Span, bool>>& matches, SplitBehavior behavior,
                          std::vector<Span>& out);

}  // namespace shardkit::tok
