#include "tokenizer/joined_char_pairs.h"

#include <algorithm>
#include <vector>

#include "tokenizer/unicode.h"

namespace shardkit::tok {

namespace {

// Bits a pair in the hashed table: a pair not held collides with a held one about one time in
// sixteen, and a collision only costs a cut.
constexpr uint32_t kBitsPerPairLog2 = 4;
constexpr uint32_t kMinPairBitsLog2 = 12;
constexpr uint32_t kMaxPairBitsLog2 = 32;

bool starts_character(unsigned char b) { return b < 0x80 || b >= 0xC0; }

}  // namespace

// Each place in `token` where a character starts after another byte: the pair either side,
// whole characters (ASCII pairs into their table, others into `pairs` as a << 32 | b), or the
// two bytes when the token holds only part of a character there.
void JoinedCharPairs::add_pairs(std::string_view token, std::vector<uint64_t>& pairs) {
  const auto* t = reinterpret_cast<const unsigned char*>(token.data());
  const size_t n = token.size();
  size_t left = n;  // where the character before the boundary starts; n: not in the token
  for (size_t i = 0; i < n;) {
    if (!starts_character(t[i])) {
      ++i;
      continue;
    }
    const size_t length = utf8_length(t[i]);
    bool whole = i + length <= n;
    for (size_t k = 1; whole && k < length; ++k) whole = !starts_character(t[i + k]);
    if (i > 0) {
      const bool left_whole = left < n && left + utf8_length(t[left]) == i;
      if (!whole || !left_whole) {
        set(byte_pairs_.data(), t[i - 1] * 256 + t[i]);
      } else {
        const char32_t a = decode_valid_utf8(t + left, i - left),
                       b = decode_valid_utf8(t + i, length);
        if ((a | b) < 0x80) {
          set(ascii_pairs_.data(), a * 128 + b);
        } else {
          pairs.push_back(uint64_t{a} << 32 | b);
        }
      }
    }
    left = whole ? i : n;
    i += whole ? length : 1;
  }
}

void JoinedCharPairs::build(const StringList& tokens, Symbols symbols) {
  symbols_ = symbols;
  ascii_pairs_.fill(0);
  byte_pairs_.fill(0);
  std::vector<uint64_t> char_tokens(symbols == Symbols::kCharacters ? kCodePoints / 64 : 0, 0);
  std::vector<uint64_t> pairs;
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string_view t = tokens[id];
    add_pairs(t, pairs);
    if (char_tokens.empty() || t.empty()) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(t.data());
    const size_t length = utf8_length(p[0]);
    if (length == t.size()) {
      const char32_t cp = decode_valid_utf8(p, length);
      if (cp < kCodePoints) set(char_tokens.data(), cp);
    }
  }
  // An ASCII character that is no token of its own joins every neighbour.
  if (symbols == Symbols::kCharacters)
    for (char32_t a = 0; a < 128; ++a)
      for (char32_t b = 0; b < 128; ++b)
        if (!test(char_tokens.data(), a) || !test(char_tokens.data(), b))
          set(ascii_pairs_.data(), a * 128 + b);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  pair_bits_log2_ = kMinPairBitsLog2;
  while (pair_bits_log2_ < kMaxPairBitsLog2 &&
         (uint64_t{1} << pair_bits_log2_) < (uint64_t{pairs.size()} << kBitsPerPairLog2))
    ++pair_bits_log2_;
  std::vector<uint64_t> pair_bits((size_t{1} << pair_bits_log2_) / 64, 0);
  for (uint64_t ab : pairs)
    set(pair_bits.data(), pair_bit(static_cast<char32_t>(ab >> 32), static_cast<char32_t>(ab)));
  char_tokens_.owned = std::move(char_tokens);
  char_tokens_.publish();
  pairs_.owned = std::move(pair_bits);
  pairs_.publish();
}

void JoinedCharPairs::save(BlobWriter& w) const {
  w.value(symbols_);
  w.value(ascii_pairs_);
  w.value(byte_pairs_);
  w.value(pair_bits_log2_);
  char_tokens_.save(w);
  pairs_.save(w);
}

bool JoinedCharPairs::restore(BlobReader& r) {
  symbols_ = r.value<Symbols>();
  ascii_pairs_ = r.value<decltype(ascii_pairs_)>();
  byte_pairs_ = r.value<decltype(byte_pairs_)>();
  pair_bits_log2_ = r.value<uint32_t>();
  if (!char_tokens_.restore(r) || !pairs_.restore(r)) return false;
  const size_t char_words = symbols_ == Symbols::kCharacters ? kCodePoints / 64 : 0;
  return (symbols_ == Symbols::kCharacters || symbols_ == Symbols::kBytes) &&
         pair_bits_log2_ >= kMinPairBitsLog2 && pair_bits_log2_ <= kMaxPairBitsLog2 &&
         char_tokens_.size() == char_words && pairs_.size() == (size_t{1} << pair_bits_log2_) / 64;
}

}  // namespace shardkit::tok
