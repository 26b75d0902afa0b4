// The pieces of the byte-level Split patterns that match everywhere (GPT-2's, cl100k's, Qwen's,
// o200k's, Tekken's), found from ASCII class masks of 64 bytes at a time (ascii_masks.h). A
// window of masks taken where a piece starts yields every piece start in it at once, from bit
// operations on the masks (find_starts), up to the first non-ASCII character other than the
// general punctuation of English text (U+2010-U+2027: dashes, curly quotes, the ellipsis), whose
// bytes the window classes as symbols; next_pieces() hands those pieces out together, so the
// encoder's lookups do not wait on the scan. A piece the starts do not decide is decided alone
// from the masks (a run ends at the first bit of another class), and where another non-ASCII
// character could take part (a letter or a mark that continues a run, a symbol, a no-break
// space, a letter that (?i) folds to s) the hand matcher (byte_level.h) decides. All three are
// checked against Oniguruma and each other at every position (tokenizer_unit_test), and the ids
// against HF (tokenizer_families_test).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tokenizer/ascii_masks.h"
#include "tokenizer/byte_level.h"

namespace shardkit::tok {

enum class PiecePattern : uint8_t { kGpt2, kCl100k, kQwen, kO200k, kTekken };

// The pattern `matcher` stands for, when it has a vectorized form.
std::optional<PiecePattern> piece_pattern(SplitMatcher matcher);

// Walks the pieces of one text in order: next(pos) is the end of the piece starting at pos.
template <PiecePattern kPattern>
class PieceScanner {
 public:
  explicit PieceScanner(std::string_view text) : text_(text) {}

  size_t next(size_t pos) {
    if (hand_matched(pos)) return scalar(text_, pos);
    size_t o = pos - base_;
    if (const size_t n = from_starts(o); n != kMore) return pos + n;
    if (o > kMaxOffset) {  // also when pos < base_ (the subtraction wraps)
      load(pos);
      o = 0;
      if (const size_t n = from_starts(0); n != kMore) return pos + n;
    }
    size_t n = decide(o);
    if (n == kMore && o != 0) {
      load(pos);
      n = from_starts(0);
      if (n == kMore) n = decide(0);
    }
    return undecided(n) ? scalar(text_, pos) : pos + n;
  }

  // The ends of the pieces from `pos` on, as many as one window of masks decides at once (at
  // least one, at most 64), written to `ends`; returns how many. Cheaper per piece than next():
  // no piece waits for the one before it to be found.
  size_t next_pieces(size_t pos, size_t* ends) {
    size_t o = pos - base_;
    if (from_starts(o) == kMore) {
      if (o <= kMaxOffset || hand_matched(pos)) {
        ends[0] = next(pos);
        return 1;
      }
      load(pos);
      o = 0;
      if (from_starts(0) == kMore) {
        ends[0] = next(pos);
        return 1;
      }
    }
    const uint64_t after = o >= 63 ? 0 : ~uint64_t{0} << (o + 1);
    const uint64_t through = decided_ >= 63 ? ~uint64_t{0} : (uint64_t{2} << decided_) - 1;
    size_t count = 0;
    for (uint64_t bits = starts_ & after & through; bits != 0; bits &= bits - 1)
      ends[count++] = base_ + static_cast<size_t>(std::countr_zero(bits));
    if (ends_at_valid_) ends[count++] = base_ + valid_;
    return count;
  }

  // The end of the match at `pos` from masks computed there (falling back as next() does): what
  // tokenizer_unit_test compares with Oniguruma.
  static size_t match(std::string_view text, size_t pos) { return PieceScanner(text).next(pos); }

 private:
  static constexpr size_t kScalar = 0;         // ask the hand matcher
  static constexpr size_t kMore = ~size_t{0};  // the piece may run past the masks
  static constexpr size_t kMaxOffset = 40;     // a piece starting later reloads the masks
  static constexpr bool kCaseAware =
      kPattern == PiecePattern::kO200k || kPattern == PiecePattern::kTekken;
  static constexpr size_t kMaxDigits =
      kPattern == PiecePattern::kCl100k || kPattern == PiecePattern::kO200k ? 3 : 1;

  // A piece whose first character, or the one after a leading space, is not ASCII is the hand
  // matcher's anyway (CJK and Korean text): no masks for it.
  bool hand_matched(size_t pos) const {
    const auto* s = reinterpret_cast<const unsigned char*>(text_.data());
    return s[pos] >= 0x80 || (s[pos] == ' ' && pos + 1 < text_.size() && s[pos + 1] >= 0x80);
  }

  static size_t scalar(std::string_view text, size_t pos) {
    switch (kPattern) {
      case PiecePattern::kGpt2:
        return gpt2_match(text, pos);
      case PiecePattern::kCl100k:
        return cl100k_match(text, pos);
      case PiecePattern::kQwen:
        return qwen_match(text, pos);
      case PiecePattern::kO200k:
        return o200k_match(text, pos);
      case PiecePattern::kTekken:
        return tekken_match(text, pos);
    }
    return gpt2_match(text, pos);
  }

  void load(size_t pos) {
    base_ = pos;
    p_ = reinterpret_cast<const unsigned char*>(text_.data()) + pos;
    valid_ = text_.size() - pos < 64 ? text_.size() - pos : 64;
    end_ = pos + valid_ == text_.size();
    const AsciiMasks m = ascii_masks(text_.data() + pos, valid_);
    upper_ = m.upper;
    lower_ = m.lower;
    letters_ = m.upper | m.lower;
    digit_ = m.digit;
    space_ = m.space;
    other_ = m.other();
    high_ = m.high;
    wide_starts_ = 0;
    if (high_ != 0) {
      const uint64_t wide = wide_punctuation(p_, valid_, high_, wide_starts_);
      other_ |= wide;
      high_ &= ~wide;
    }
    newline_ = m.newline;
    tail_ = kCaseAware ? m.newline | m.slash : m.newline;
    decided_ = 0;  // until find_starts() knows better
    ends_at_valid_ = false;
    find_starts(m);
  }

  // The length of the piece at window index o from the window's piece starts, or kMore when
  // they do not decide it. o must be where a piece starts.
  size_t from_starts(size_t o) const {
    if (o >= decided_) return kMore;
    const uint64_t later = starts_ >> o >> 1;
    if (later == 0) return ends_at_valid_ ? valid_ - o : kMore;
    const size_t e = o + 1 + static_cast<size_t>(std::countr_zero(later));
    return e <= decided_ ? e - o : kMore;
  }

  // Every piece start in the window at once, for a window that starts a piece. Only starts
  // before the first non-ASCII byte are known (that byte could continue a run), and a start at
  // the window's last byte only when the text ends there.
  void find_starts(const AsciiMasks& m) {
    const size_t high = static_cast<size_t>(std::countr_zero(high_));
    // A few ASCII bytes between non-ASCII text (Korean, Chinese) are not worth the starts.
    if (high < 16 && high < valid_) return;
    size_t decided = high < valid_ ? high - 1 : end_ ? valid_ : valid_ - 1;
    uint64_t starts = 1;
    if constexpr (kPattern == PiecePattern::kGpt2)
      starts |= gpt2_starts(m);
    else
      starts |= cl100k_starts(m, std::min(high, valid_));
    take_contractions(m, starts, decided);
    starts_ = starts & m.valid;
    decided_ = decided;
    ends_at_valid_ = end_ && high >= valid_ && decided == valid_;
  }

  // A contraction starts a piece where an apostrophe does (GPT-2's, cl100k's, Qwen's), or ends
  // the word before it (o200k's); Tekken's pattern has none. Lowers `decided` before one the
  // window cannot tell.
  void take_contractions(const AsciiMasks& m, uint64_t& starts, size_t& decided) const {
    const uint64_t quotes = kPattern == PiecePattern::kTekken ? 0
                            : kCaseAware                      ? m.quote & (letters_ << 1)
                                                              : m.quote & starts;
    size_t after_contraction = 64;  // o200k's word takes one contraction, not two
    for (uint64_t q = quotes; q != 0; q &= q - 1) {
      const size_t a = static_cast<size_t>(std::countr_zero(q));
      if (kCaseAware && a == after_contraction) continue;
      const size_t n = contraction_length(a);
      if (n == kMore) {
        decided = std::min(decided, kCaseAware ? a - 1 : a);
        return;
      }
      if (n == 0) continue;
      const uint64_t inside = ((uint64_t{1} << n) - 1) << a;  // a .. a + n - 1
      starts &= kCaseAware ? ~inside : ~inside | (uint64_t{1} << a);
      if (a + n < 64) starts |= uint64_t{1} << (a + n);
      after_contraction = a + n;
    }
  }

  // GPT-2's: a class change starts a piece, except a word, number or symbol run right after ' '
  // (` ?\p{L}+`, ...); and a run of white space before another class gives its last character
  // to the next piece (`\s+(?!\S)`). Contractions are find_starts' (they start pieces too).
  uint64_t gpt2_starts(const AsciiMasks& m) const {
    const uint64_t shown = letters_ | digit_ | other_;  // not white space
    const uint64_t change = (letters_ ^ (letters_ << 1)) | (digit_ ^ (digit_ << 1)) |
                            (space_ ^ (space_ << 1)) | (other_ ^ (other_ << 1));
    return (change & ~((m.blank << 1) & shown)) | (space_ & (space_ << 1) & (shown >> 1));
  }

  // cl100k's and Qwen's, before `known` (the first byte not known to be ASCII):
  // - a symbol run starts a piece unless ' ' takes it (` ?[^\s\p{L}\p{N}]+`), and keeps the
  //   newlines after it (`[\r\n]*`);
  // - a letter run starts one unless the character before is its prefix: white space other than
  //   a newline, or a symbol that starts a piece (`[^\r\n\p{L}\p{N}]?\p{L}+`);
  // - digits start one each, or every third of a run (`\p{N}{1,3}`);
  // - white space starts one where its run starts, after the run's last newline
  //   (`\s*[\r\n]+`), and at its last character before anything else (`\s+(?!\S)`).
  uint64_t cl100k_starts(const AsciiMasks& m, size_t known) const {
    const uint64_t shown = letters_ | digit_ | other_;
    const uint64_t inline_space = space_ & ~newline_;  // a prefix of letters
    // From each newline right after a symbol to the end of its tail run. The sum carries
    // through a run from its first seed on and leaves each later seed set: hence `| seeds`.
    const uint64_t seeds = newline_ & (other_ << 1);
    const uint64_t kept_tail = (tail_ & ~(tail_ + seeds)) | seeds;
    const uint64_t in_runs = other_ & ~kept_tail;  // o200k's kept tail holds '/'
    const uint64_t symbols = in_runs & ~(in_runs << 1) & ~(m.blank << 1);
    const uint64_t spaces = space_ & ~kept_tail;
    uint64_t starts = symbols;
    // The prefix is one character: an ASCII byte, or three bytes of wide punctuation.
    starts |= letters_ & ~(letters_ << 1) & ~((inline_space | symbols) << 1) &
              ~((symbols & wide_starts_) << 3);
    if constexpr (kCaseAware) starts |= upper_ & (lower_ << 1);  // P?U*L+ | P?U+L*
    starts |= kMaxDigits == 1 ? digit_ : digit_ & ~(digit_ << 1);
    starts |= (spaces & ~(spaces << 1)) | (inline_space & (shown >> 1));
    if constexpr (kMaxDigits > 1)
      for (uint64_t runs = digit_ & ~(digit_ << 1); runs != 0; runs &= runs - 1) {
        const size_t u = static_cast<size_t>(std::countr_zero(runs));
        const size_t v = u + run(digit_, u);
        for (size_t k = u + kMaxDigits; k < v; k += kMaxDigits) starts |= uint64_t{1} << k;
      }
    for (uint64_t after = inline_space & ((newline_ & spaces) << 1); after; after &= after - 1) {
      const size_t k = static_cast<size_t>(std::countr_zero(after));
      // A run that goes on past what the masks know may hold another newline: no start then,
      // and none of its other bytes has one, so the pieces from the run's start stay undecided.
      const size_t run_end = k + run(spaces, k);
      if (run_end == known && !(end_ && known == valid_)) continue;
      const uint64_t rest = run_end - k >= 64 ? ~uint64_t{0} : (uint64_t{1} << (run_end - k)) - 1;
      if (((newline_ >> k) & rest) == 0) starts |= uint64_t{1} << k;
    }
    return starts;
  }

  // 's|'t|'re|'ve|'m|'ll|'d at window index a: its length, 0 for none, or kMore when the
  // window ends too soon to say.
  size_t contraction_length(size_t a) const {
    // A byte past the window, or a non-ASCII one (which (?i:...) may fold to s or k), is
    // unknown.
    const auto byte = [&](size_t i) -> int { return i < valid_ && p_[i] < 0x80 ? p_[i] : -1; };
    // GPT-2's forms are lower case; the others' are (?i:...).
    const auto folded = [&](size_t i) -> int {
      const int b = byte(i);
      return kPattern == PiecePattern::kGpt2 || b < 0 ? b : b | 0x20;
    };
    const int b1 = folded(a + 1);
    if (b1 < 0) return a + 1 == valid_ && end_ ? 0 : kMore;
    if (b1 == 's' || b1 == 't' || b1 == 'm' || b1 == 'd') return 2;
    if (b1 != 'r' && b1 != 'v' && b1 != 'l') return 0;
    const int b2 = folded(a + 2);
    if (b2 < 0) return a + 2 == valid_ && end_ ? 0 : kMore;
    return (b1 == 'l' ? b2 == 'l' : b2 == 'e') ? 3 : 0;
  }

  // Bit i of a mask (i < 64; bytes past the text are in no class).
  static bool at(uint64_t mask, size_t i) { return i < 64 && ((mask >> i) & 1); }
  // How many consecutive bits are set from bit i on.
  static size_t run(uint64_t mask, size_t i) { return i >= 64 ? 0 : std::countr_one(mask >> i); }

  // A run of ASCII bytes that stops at e (window index) ends a match starting at o there when the
  // byte there is known and is ASCII (a non-ASCII character might be of the run's class), or when
  // the text ends there. Returns the length, or why it is not known.
  size_t settle(size_t o, size_t e) const {
    if (e < valid_) return at(high_, e) ? kScalar : e - o;
    return end_ ? e - o : kMore;
  }
  static bool undecided(size_t n) { return n == kScalar || n == kMore; }

  size_t decide(size_t o) const {
    if (o >= valid_) return kMore;
    if (p_[o] >= 0x80) return kScalar;
    if constexpr (kPattern == PiecePattern::kGpt2) return gpt2(o);
    if constexpr (kCaseAware) return o200k(o);
    return cl100k(o);
  }

  // 's|'t|...| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  size_t gpt2(size_t o) const {
    if (p_[o] == '\'') return kScalar;  // contractions
    size_t s = o;
    if (p_[o] == ' ') {
      if (o + 1 >= valid_) return end_ ? 1 : kMore;
      if (at(high_, o + 1)) return kScalar;
      if (!at(space_, o + 1)) s = o + 1;
    }
    const bool space = at(space_, s);
    const uint64_t cls = at(letters_, s) ? letters_
                         : at(digit_, s) ? digit_
                         : space         ? space_
                                         : other_;
    const size_t n = settle(o, s + 1 + run(cls, s + 1));
    if (undecided(n) || !space) return n;
    // \s+(?!\S) leaves the run's last character to the next match, then \s+.
    if (o + n == valid_) return n;
    return n > 1 ? n - 1 : n;
  }

  // cl100k's and Qwen's: (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,k}| then the tail.
  size_t cl100k(size_t o) const {
    if (p_[o] == '\'') return kScalar;  // contractions
    if (at(letters_, o)) return settle(o, o + 1 + run(letters_, o + 1));
    const bool digit = at(digit_, o);
    if (!digit && !at(newline_, o)) {
      if (o + 1 >= valid_) {
        if (!end_) return kMore;
      } else if (at(high_, o + 1)) {
        return kScalar;
      } else if (at(letters_, o + 1)) {
        return settle(o, o + 2 + run(letters_, o + 2));
      }
    }
    if (digit) return digits(o);
    return symbols_or_spaces(o);
  }

  // o200k's and Tekken's: P?U*L+C? | P?U+L*C? | \p{N}{1,k} | then as cl100k, with `[\r\n/]*`.
  size_t o200k(size_t o) const {
    const bool digit = at(digit_, o);
    // The prefix character [^\r\n\p{L}\p{N}].
    const size_t s = !at(letters_, o) && !digit && !at(newline_, o) ? o + 1 : o;
    if (s == valid_ && !end_) return kMore;
    const size_t i = s + run(upper_, s);
    if (i >= valid_) {
      if (!end_) return kMore;
    } else if (at(high_, i)) {
      return kScalar;  // a non-ASCII letter or mark could continue the letters
    } else if (at(lower_, i)) {
      return contraction(o, settle(o, i + 1 + run(lower_, i + 1)));
    }
    if (i > s) return contraction(o, i - o);
    if (digit) return digits(o);
    return symbols_or_spaces(o);
  }

  // o200k's optional (?i:'s|'t|...) after its letters: an apostrophe there goes to the hand
  // matcher, which knows the forms.
  size_t contraction(size_t o, size_t n) const {
    if (kPattern != PiecePattern::kO200k || undecided(n) || o + n >= valid_) return n;
    return p_[o + n] == '\'' ? kScalar : n;
  }

  // \p{N}{1,k} where a digit starts.
  size_t digits(size_t o) const {
    const size_t r = run(digit_, o);
    return r >= kMaxDigits ? kMaxDigits : settle(o, o + r);
  }

  // ` ?[^\s\p{L}\p{N}]+[\r\n]*` (o200k's `[\r\n/]*`), else the white space alternatives.
  size_t symbols_or_spaces(size_t o) const {
    size_t body = 64;
    if (at(other_, o)) {
      body = o;
    } else if (p_[o] == ' ') {
      if (o + 1 >= valid_ && !end_) return kMore;
      if (at(high_, o + 1)) return kScalar;
      if (at(other_, o + 1)) body = o + 1;
    }
    if (body == 64) return spaces(o);
    const size_t n = settle(o, body + run(other_, body));
    if (undecided(n)) return n;
    const size_t e = o + n + run(tail_, o + n);
    return e == valid_ && !end_ ? kMore : e - o;
  }

  // \s*[\r\n]+|\s+(?!\S)|\s+ where ASCII white space starts: up to the run's last newline, else
  // the run less its last character when more text follows, else the run.
  size_t spaces(size_t o) const {
    const size_t e = o + run(space_, o);
    const size_t n = settle(o, e);
    if (undecided(n)) return n;
    if (kPattern != PiecePattern::kGpt2) {
      const uint64_t run_bits = (e >= 64 ? ~uint64_t{0} : (uint64_t{1} << e) - 1) >> o << o;
      if (const uint64_t newlines = newline_ & run_bits)
        return 64 - static_cast<size_t>(std::countl_zero(newlines)) - o;
    }
    if (e == valid_) return n;
    return n > 1 ? n - 1 : n;
  }

  std::string_view text_;
  size_t base_ = ~size_t{0} / 2;  // the masks describe text_[base_, base_ + valid_)
  const unsigned char* p_ = nullptr;
  size_t valid_ = 0;
  bool end_ = false;  // the text ends where the masks do
  // other_ holds the wide punctuation's bytes, and high_ the other non-ASCII bytes.
  uint64_t upper_ = 0, lower_ = 0, letters_ = 0, digit_ = 0, space_ = 0, other_ = 0, high_ = 0;
  uint64_t newline_ = 0, tail_ = 0;
  uint64_t wide_starts_ = 0;  // the first bytes of wide punctuation (wide_punctuation())
  // Piece starts known from the masks (bit i: a piece starts at window index i) for pieces that
  // end at or before decided_; the text's end ends one when ends_at_valid_.
  uint64_t starts_ = 0;
  size_t decided_ = 0;
  bool ends_at_valid_ = false;
};

}  // namespace shardkit::tok
