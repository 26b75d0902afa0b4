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

}  // namespace

void JoinedCharPairs::build(const StringList& tokens) {
  std::vector<uint64_t> char_tokens(kCodePoints / 64, 0);
  std::vector<uint64_t> pairs;  // a << 32 | b, for pairs that are not both ASCII
  ascii_pairs_.fill(0);
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string_view t = tokens[id];
    const auto* p = reinterpret_cast<const unsigned char*>(t.data());
    char32_t prev = 0;
    size_t chars = 0;
    for (size_t i = 0; i < t.size(); ++chars) {
      const size_t length = std::min(utf8_length(p[i]), t.size() - i);
      const char32_t cp = code_point(p + i, length);
      if (chars > 0 && (prev | cp) < 0x80) {
        set(ascii_pairs_.data(), prev * 128 + cp);
      } else if (chars > 0) {
        pairs.push_back(uint64_t{prev} << 32 | cp);
      }
      prev = cp;
      i += length;
    }
    if (chars == 1 && prev < kCodePoints) set(char_tokens.data(), prev);
  }
  // An ASCII character that is no token of its own joins every neighbour.
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
  w.value(ascii_pairs_);
  w.value(pair_bits_log2_);
  char_tokens_.save(w);
  pairs_.save(w);
}

bool JoinedCharPairs::restore(BlobReader& r) {
  ascii_pairs_ = r.value<decltype(ascii_pairs_)>();
  pair_bits_log2_ = r.value<uint32_t>();
  if (!char_tokens_.restore(r) || !pairs_.restore(r)) return false;
  return pair_bits_log2_ >= kMinPairBitsLog2 && pair_bits_log2_ <= kMaxPairBitsLog2 &&
         char_tokens_.size() == kCodePoints / 64 &&
         pairs_.size() == (size_t{1} << pair_bits_log2_) / 64;
}

}  // namespace shardkit::tok
