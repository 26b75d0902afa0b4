// Byte-level pieces: GPT-2's byte <-> printable-character mapping, hand-specialised matchers for
// the pre-tokenizer patterns of GPT-2, cl100k, Qwen, o200k, Tekken and DeepSeek-V3, and arbitrary
// Split patterns through Oniguruma (the regex engine HuggingFace tokenizers itself uses).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::tok {

// bytes_to_unicode(): byte -> code point of its printable stand-in.
const std::array<char32_t, 256>& byte_to_char();
// Inverse; returns -1 for code points outside the 256-character alphabet.
int char_to_byte(char32_t cp);
// Maps a vocabulary string of stand-in characters back to bytes; false if any character is
// outside the alphabet.
bool unmap_byte_level(std::string_view token, std::string& bytes);

// GPT-2's pattern  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// evaluated by hand. Returns the end of the match starting at `pos` (text is valid UTF-8).
size_t gpt2_match(std::string_view text, size_t pos);

// The GPT-2 pattern text, as HF's ByteLevel pre-tokenizer uses it.
extern const char* const kGpt2Pattern;

// cl100k's pattern (also Llama-3's Split regex)
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// evaluated by hand; it matches at every position, so a Split with it has no gaps.
size_t cl100k_match(std::string_view text, size_t pos);
extern const char* const kCl100kPattern;
// The same with single digits (\p{N}): Qwen2/Qwen3's Split regex.
size_t qwen_match(std::string_view text, size_t pos);
extern const char* const kQwenPattern;
// o200k's pattern (GPT-4o), whose letter alternatives tell upper- from lowercase
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?|
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?|
//   \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// evaluated by hand; it too matches at every position.
size_t o200k_match(std::string_view text, size_t pos);
extern const char* const kO200kPattern;
// The same without contractions and with single digits: Mistral's Tekken (Mistral NeMo).
size_t tekken_match(std::string_view text, size_t pos);
extern const char* const kTekkenPattern;

// DeepSeek-V3's three Split patterns, which its pre-tokenizer runs in turn before ByteLevel:
//   \p{N}{1,3}
//   [\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+
//   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//   ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// These do not match everywhere: they return kNoMatch where no match starts at `pos`.
constexpr size_t kNoMatch = std::string_view::npos;
size_t deepseek_digits_match(std::string_view text, size_t pos);
size_t deepseek_cjk_match(std::string_view text, size_t pos);
size_t deepseek_words_match(std::string_view text, size_t pos);
// The three in turn, each keeping its matches and what lies between them as pieces (Isolated):
// the end of the final piece at `pos`. `*outer_end` is the end of the piece the first two left
// around `pos` (0 to start); it is found again once `pos` reaches it, so a text is scanned once.
size_t deepseek_piece_end(std::string_view text, size_t pos, size_t* outer_end);
extern const char* const kDeepSeekDigitsPattern;
extern const char* const kDeepSeekCjkPattern;
extern const char* const kDeepSeekWordsPattern;

// The end of a pattern's match at `pos`, or kNoMatch.
using SplitMatcher = size_t (*)(std::string_view text, size_t pos);
// The hand matcher that stands for `pattern`, or null (the pattern runs on Oniguruma).
SplitMatcher hand_matcher(std::string_view pattern);

// A compiled Oniguruma pattern; search is safe from many threads at once.
class Regex {
 public:
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // Finds the leftmost match in text[from, to); returns false if none. Empty matches are
  // reported like any other.
  bool search(std::string_view text, size_t from, size_t to, size_t* match_begin,
              size_t* match_end) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* regex_ = nullptr;  // OnigRegex
};

// Escapes a literal string for Oniguruma (Split's {"String": ...} patterns).
std::string regex_escape(std::string_view literal);

}  // namespace shardkit::tok
