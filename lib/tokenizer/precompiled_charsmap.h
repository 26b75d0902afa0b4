// SentencePiece's precompiled normalization charsmap (`precompiled_charsmap`): a Darts
// double-array trie over UTF-8 keys whose values index NUL-terminated replacements. Applied as HF
// tokenizers' Precompiled normalizer does (per extended grapheme cluster, shortest match), or
// as SentencePiece's own normalizer does (longest match from each position).
#pragma once

#include <array>
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
  // Whether some key longer than one byte starts with byte `b` and goes on with a byte in
  // [next_min, next_max] (then longest_prefix at a `b` followed by such a byte depends on it).
  bool has_longer_key(unsigned char b, unsigned char next_min = 1,
                      unsigned char next_max = 255) const;
  // Whether some key is a prefix of `bytes` or starts with them: false when longest_prefix at a
  // text that starts with `bytes` matches nothing, whatever follows them.
  bool has_key_meeting(std::string_view bytes) const;
  // has_key_meeting(the character's UTF-8) is false, for a character of the BMP (from a table
  // made at load); false for others.
  bool meets_no_key(char32_t cp) const {
    return cp < 0x10000 && ((kept_[cp / 64] >> (cp % 64)) & 1) != 0;
  }
  // The bytes that some key holds after its first byte.
  std::array<bool, 256> bytes_after_first() const;

 private:
  // Values of every key that is a prefix of `key`, shortest first (Darts common_prefix_search).
  bool shortest_prefix(std::string_view key, std::string_view* replacement) const;
  std::string_view replacement_at(uint32_t index) const;

  // An ASCII byte that is a grapheme of its own maps to itself: no key is that byte alone
  // (for '\r', nor "\r\n", the one grapheme of two ASCII bytes).
  void find_kept_ascii();
  bool kept_ascii(unsigned char b) const { return b < 0x80 && kept_ascii_[b]; }
  // How many bytes at the start of `t` are kept ASCII bytes: 16 at a time where every printable
  // byte and the space are kept (as in SentencePiece's own normalization rules).
  size_t kept_ascii_prefix(std::string_view t) const;

  bool grapheme_break(char32_t prev, char32_t cp, int32_t& state) const;
  // Characters of the BMP whose bound class is Other, LV or LVT (a grapheme break on either side
  // of one between two of them), and those that no key meets (one alone maps to itself).
  void find_plain_characters();
  std::vector<uint64_t> breaks_around_, kept_;

  std::vector<uint32_t> units_;
  std::string normalized_;
  std::array<bool, 128> kept_ascii_{};
  bool keeps_printable_ascii_ = false;  // ' ' to '~' are all kept
};

}  // namespace shardkit::tok
