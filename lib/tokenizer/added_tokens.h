// Added tokens found in text before the model sees it, as HF's AddedVocabulary matches them:
// leftmost-longest, non-overlapping contents; single_word tokens only between non-word
// characters; lstrip/rstrip take the White_Space around them, rstrip's perhaps the start of the
// next token too.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/ascii_masks.h"
#include "tokenizer/longest_prefix.h"

namespace shardkit::tok {

struct AddedToken {
  std::string content;
  uint32_t id = 0;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;  // matched in the normalized text (after the normalizer)
};

class AddedTokenMatcher {
 public:
  // `tokens` with the content to match (already normalized for normalized tokens).
  void build(std::vector<AddedToken> tokens);
  bool empty() const { return tokens_.empty(); }

  // Calls sink(is_token, begin, end, id) for each piece of text, in order, covering it.
  template <typename Sink>
  void split(std::string_view text, Sink&& sink) const;

 private:
  // The first position at or after i whose byte starts a token, or text.size(): a vector scan
  // for the (usually one to five) bytes the tokens start with.
  size_t next_candidate(std::string_view text, size_t i) const {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    // Tokens of words start with common letters: the next candidate is often a few bytes on,
    // closer than a vector scan's set-up is worth.
    for (const size_t near = std::min(text.size(), i + kNearBytes); i < near; ++i)
      if (first_byte_[s[i]]) return i;
    if (first_bytes_.size() <= kMaxScannedBytes)
      return i + find_first_of_bytes(text.data() + i, text.size() - i, first_bytes_.data(),
                                     first_bytes_.size());
    while (i < text.size() && !first_byte_[s[i]]) ++i;
    return i;
  }
  static constexpr size_t kMaxScannedBytes = 8;
  static constexpr size_t kNearBytes = 8;
  // Whether a token may start at text[i], a candidate, by its first two bytes: tokens made of
  // words start with common letters, and most of those positions go no further.
  bool may_start_at(std::string_view text, size_t i) const {
    if (i + 1 >= text.size()) return true;
    const unsigned pair =
        static_cast<unsigned char>(text[i]) << 8 | static_cast<unsigned char>(text[i + 1]);
    return (first_two_[pair / 64] >> (pair % 64)) & 1;
  }

  // The longest token matching at text[i], if any.
  const AddedToken* match_at(std::string_view text, size_t i) const;
  bool accept(std::string_view text, size_t start, size_t end, const AddedToken& t) const;
  size_t strip_left(std::string_view text, size_t start, size_t floor) const;
  size_t strip_right(std::string_view text, size_t end) const;

  std::vector<AddedToken> tokens_;
  std::array<bool, 256> first_byte_{};
  std::vector<unsigned char> first_bytes_;  // the distinct bytes tokens start with
  std::vector<uint64_t> first_two_;         // bit (first << 8 | second): some token starts so
  LongestPrefix contents_;                  // -> the token's index (the first of equal contents)
};

template <typename Sink>
void AddedTokenMatcher::split(std::string_view text, Sink&& sink) const {
  const size_t n = text.size();
  if (tokens_.empty()) {
    if (n) sink(false, size_t{0}, n, 0u);
    return;
  }
  size_t seg = 0, i = 0;
  while (i < n) {
    i = next_candidate(text, i);
    if (i >= n) break;
    const AddedToken* hit = may_start_at(text, i) ? match_at(text, i) : nullptr;
    if (!hit) {
      ++i;
      continue;
    }
    size_t start = i, end = i + hit->content.size();
    if (!accept(text, start, end, *hit)) {
      i = end;  // the automaton goes on after a discarded match
      continue;
    }
    if (hit->lstrip) start = strip_left(text, start, seg);
    if (hit->rstrip) end = strip_right(text, end);
    if (start > seg) sink(false, seg, start, 0u);
    sink(true, start, end, hit->id);
    seg = end;
    // The search goes on after the match itself, not after the white space an rstrip took: as
    // HF's automaton, so a token may start inside that white space (then both hold it).
    i += hit->content.size();
  }
  if (seg < n) sink(false, seg, n, 0u);
}

}  // namespace shardkit::tok
