// SentencePiece's precompiled normalization charsmap (`precompiled_charsmap`): a Darts
// double-array trie over UTF-8 keys whose values index NUL-terminated replacements. Applied as HF
// tokenizers' Precompiled normalizer does (per extended grapheme cluster, shortest match), or
// as SentencePiece's own normalizer does (longest match from each position).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normalized_string.h"

namespace shardkit::tok {

class PrecompiledCharsmap {
 public:
  // Throws Error(kInput) naming `source` when the blob is malformed.
  PrecompiledCharsmap(std::string_view blob, const std::string& source);

  // HF tokenizers' Precompiled::normalize.
  void apply(NormalizedString& s) const;
  // SentencePiece's longest-prefix rule at text[pos]: the length matched (0 if none) and the
  // replacement.
  size_t longest_prefix(std::string_view text, size_t pos, std::string_view* replacement) const;
  bool empty() const { return units_.empty(); }
  // Whether some key longer than one byte starts with byte `b` (then longest_prefix at a `b`
  // depends on what follows it).
  bool has_longer_key(unsigned char b) const;

 private:
  // Values of every key that is a prefix of `key`, shortest first (Darts common_prefix_search).
  bool shortest_prefix(std::string_view key, std::string_view* replacement) const;
  std::string_view replacement_at(uint32_t index) const;

  std::vector<uint32_t> units_;
  std::string normalized_;
};

}  // namespace shardkit::tok
