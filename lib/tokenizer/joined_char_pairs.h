// Which two characters, side by side, a BPE merge may join. A merge makes a token, so it can
// only join a symbol that ends with character a to one that starts with b if some token holds
// the end of a followed by the start of b; where none does, the text on either side merges on
// its own into the same tokens, and a piece of text can be cut there into parts that a memo
// holds apart (a Chinese sentence is one chunk of SentencePiece-style BPE and one piece of a
// byte-level pattern; its words repeat far more often than it does).
//
// Pairs of ASCII characters are kept exactly, 128 x 128 bits. Pairs of whole characters with
// one that is not ASCII are kept as bits of a hash, 16 a pair: a bit set by another pair only
// costs a cut. A byte-level token may hold part of a character next to another character; for
// those the pair of bytes either side is kept, 256 x 256 bits. When the symbols are characters,
// one that is no token of its own (byte fallback, the unknown token, which may fuse with its
// neighbours) joins everything; when they are bytes, every character is made of them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tokenizer/blob.h"
#include "tokenizer/string_list.h"

namespace shardkit::tok {

class JoinedCharPairs {
 public:
  // What a BPE merges: characters (SentencePiece-style) or bytes (byte-level, where every byte
  // is a token).
  enum class Symbols : uint8_t { kCharacters, kBytes };

  // From the vocabulary's tokens by id (holes empty), as raw bytes.
  void build(const StringList& tokens, Symbols symbols);
  void save(BlobWriter& w) const;
  // False for tables that are not what build() makes (sizes that do not fit their bits).
  bool restore(BlobReader& r);

  // Whether a merge may join character a to a following character b.
  bool joins(char32_t a, char32_t b) const {
    if ((a | b) < 0x80) return test(ascii_pairs_.data(), a * 128 + b);
    if (!is_token(a) || !is_token(b)) return true;
    return test(byte_pairs_.data(), last_byte(a) * 256 + first_byte(b)) ||
           test(pairs_.data(), pair_bit(a, b));
  }

 private:
  static constexpr char32_t kCodePoints = 0x110000;
  static bool test(const uint64_t* bits, size_t bit) { return (bits[bit / 64] >> (bit % 64)) & 1; }
  static void set(uint64_t* bits, size_t bit) { bits[bit / 64] |= uint64_t{1} << (bit % 64); }
  // The UTF-8 bytes at a character's ends.
  static unsigned last_byte(char32_t cp) { return cp < 0x80 ? cp : 0x80 | (cp & 0x3F); }
  static unsigned first_byte(char32_t cp) {
    return cp < 0x80      ? cp
           : cp < 0x800   ? 0xC0 | (cp >> 6)
           : cp < 0x10000 ? 0xE0 | (cp >> 12)
                          : 0xF0 | (cp >> 18);
  }
  bool is_token(char32_t cp) const {
    return symbols_ == Symbols::kBytes || (cp < kCodePoints && test(char_tokens_.data(), cp));
  }
  size_t pair_bit(char32_t a, char32_t b) const {
    return static_cast<size_t>((((uint64_t{a} << 21) | b) * 0x9E3779B97F4A7C15ull) >>
                               (64 - pair_bits_log2_));
  }
  void add_pairs(std::string_view token, std::vector<uint64_t>& pairs);

  Symbols symbols_ = Symbols::kCharacters;
  std::array<uint64_t, 128 * 128 / 64> ascii_pairs_{};
  std::array<uint64_t, 256 * 256 / 64> byte_pairs_{};  // a part of a character on either side
  TableArray<uint64_t> char_tokens_;  // kCharacters: a bit for each character that is a token
  TableArray<uint64_t> pairs_;        // 2^pair_bits_log2_ bits
  uint32_t pair_bits_log2_ = 0;
};

}  // namespace shardkit::tok
