// Which two characters, side by side, a BPE merge may join. A merge makes a token, so it can
// only join a symbol that ends with character a to one that starts with b if some token holds
// "ab"; where none does, the text on either side merges on its own into the same tokens, and
// a chunk can be cut there into parts that its memo holds apart (a Chinese sentence is one
// chunk of SentencePiece-style BPE; its words repeat far more often than it does).
//
// Pairs of ASCII characters are kept exactly, 128 x 128 bits. Pairs with another character
// are kept as bits of a hash, 16 a pair: a bit set by another pair only costs a cut. A
// character that is no token of its own (byte fallback, the unknown token, which may fuse with
// its neighbours) joins everything.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tokenizer/blob.h"
#include "tokenizer/string_list.h"

namespace shardkit::tok {

class JoinedCharPairs {
 public:
  // From the vocabulary's tokens by id (holes empty).
  void build(const StringList& tokens);
  void save(BlobWriter& w) const;
  // False for tables that are not what build() makes (sizes that do not fit their bits).
  bool restore(BlobReader& r);

  // The character that starts at p (of `length` bytes, from utf8_length) as a code point.
  static char32_t code_point(const unsigned char* p, size_t length) {
    switch (length) {
      case 1:
        return p[0];
      case 2:
        return (char32_t{p[0] & 0x1Fu} << 6) | (p[1] & 0x3Fu);
      case 3:
        return (char32_t{p[0] & 0x0Fu} << 12) | (char32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu);
      default:
        return (char32_t{p[0] & 0x07u} << 18) | (char32_t{p[1] & 0x3Fu} << 12) |
               (char32_t{p[2] & 0x3Fu} << 6) | (p[3] & 0x3Fu);
    }
  }

  // Whether a merge may join character a to a following character b.
  bool joins(char32_t a, char32_t b) const {
    if ((a | b) < 0x80) return test(ascii_pairs_.data(), a * 128 + b);
    if (!is_token(a) || !is_token(b)) return true;
    return test(pairs_.data(), pair_bit(a, b));
  }

 private:
  static constexpr char32_t kCodePoints = 0x110000;
  static bool test(const uint64_t* bits, size_t bit) { return (bits[bit / 64] >> (bit % 64)) & 1; }
  static void set(uint64_t* bits, size_t bit) { bits[bit / 64] |= uint64_t{1} << (bit % 64); }
  bool is_token(char32_t cp) const { return cp < kCodePoints && test(char_tokens_.data(), cp); }
  size_t pair_bit(char32_t a, char32_t b) const {
    return static_cast<size_t>((((uint64_t{a} << 21) | b) * 0x9E3779B97F4A7C15ull) >>
                               (64 - pair_bits_log2_));
  }

  std::array<uint64_t, 128 * 128 / 64> ascii_pairs_{};
  TableArray<uint64_t> char_tokens_;  // a bit for each code point that is a token of its own
  TableArray<uint64_t> pairs_;        // 2^pair_bits_log2_ bits
  uint32_t pair_bits_log2_ = 0;
};

}  // namespace shardkit::tok
