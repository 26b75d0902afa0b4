// BERT: BertNormalizer -> BertPreTokenizer -> WordPiece, fused into one pass over the text.
// Normalization (clean text, CJK spacing, NFD accent stripping, lowercase) happens per character
// as the pre-tokenizer walks the input, so no normalized copy of the text is built.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tokenizer/bert_normalizer.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/string_map.h"
#include "tokenizer/tokenizer_base.h"

namespace shardkit::tok {

struct WordPieceConfig {
  std::vector<std::string> vocab;  // index = id; empty strings for holes
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
  BertNormalizerOptions normalizer;
  // WordPiece decoder.
  std::string decoder_prefix = "##";
  bool decoder_cleanup = true;
  bool has_decoder = true;
};

class WordPieceTokenizer : public TokenizerBase {
 public:
  // Throws Error(kInput) when the unknown token is not in the vocabulary.
  WordPieceTokenizer(WordPieceConfig config, const std::string& source);

  std::optional<uint32_t> unk_id() const { return unk_id_; }
  // The added tokens, as HF's AddedVocabulary matches them behind a BertNormalizer: normalized
  // ones in each normalized segment between the others, their contents normalized too.
  void set_bert_added_tokens(std::vector<AddedToken> tokens);

 protected:
  void encode_segment(std::string_view full, size_t begin, size_t end, std::vector<uint32_t>& ids,
                      Encoding* detail) const override;
  std::string decode_tokens(const std::vector<std::string>& tokens) const override;
  std::optional<uint32_t> model_token_to_id(std::string_view token) const override;
  std::optional<std::string> model_id_to_token(uint32_t id) const override;
  size_t model_vocab_size() const override { return config_.vocab.size(); }
  // BertPreTokenizer splits at every White_Space character; BertNormalizer works per character.
  // A normalized added token that holds white space matches a newline that clean_text made a
  // space, across the cut.
  bool cuts_after_newlines() const override { return !normalized_added_holds_space_; }
  // Behind a normalizer, normalized added tokens are found in the normalized text.
  bool matches_normalized_added() const override { return config_.normalizer.any(); }

 private:
  struct WordState;
  // BertNormalizer, BertPreTokenizer and WordPiece over full[begin, end) in one pass.
  void encode_fused(std::string_view full, size_t begin, size_t end, std::vector<uint32_t>& ids,
                    Encoding* detail) const;
  // The segment normalized whole, its normalized added tokens found, and the text between them
  // encoded by encode_fused, whose normalization leaves normalized text as it is.
  void encode_normalized(std::string_view full, size_t begin, size_t end,
                         std::vector<uint32_t>& ids, Encoding* detail) const;
  static WordState& thread_word_state();  // the calling thread's
  // The thread's words (ASCII, up to 16 bytes, normalized) and their ids: up to three in the
  // hot table, any number in the map behind it.
  using Memo = WordMemo<uint32_t, 3>;
  using HotWords = Memo::Hot;
  size_t ascii_word(const unsigned char* s, size_t i, size_t end, Memo& memo, WordState& w,
                    std::vector<uint32_t>& ids) const;
  size_t ascii_window(const unsigned char* s, size_t i, size_t end, Memo& memo, WordState& w,
                      std::vector<uint32_t>& ids) const;
  void short_word(const unsigned char* p, size_t n, const unsigned char* limit, Memo& memo,
                  WordState& w, std::vector<uint32_t>& ids) const;
  void tokenize_word(WordState& w, std::vector<uint32_t>& ids, Encoding* detail) const;
  void end_word(Memo* memo, WordState& w, std::vector<uint32_t>& ids, Encoding* detail) const;
  uint32_t char_id(std::string_view utf8) const;
  void add_codepoint(WordState& w, char32_t cp, uint32_t start, uint32_t end,
                     std::vector<uint32_t>& ids, Encoding* detail) const;

  enum AsciiClass : uint8_t { kWordChar, kSpace, kPunct, kDrop };
  // What normalization and pre-tokenization do with one BMP code point, precomputed so the hot
  // loop makes no utf8proc calls: kSlow falls back to add_codepoint.
  struct CharEntry {
    enum Kind : uint8_t { kSlow, kAppend, kDrop, kBreak, kIsolate } kind = kSlow;
    uint8_t len = 0;    // normalized UTF-8 bytes
    uint8_t chars = 0;  // normalized characters
    char utf8[9] = {};
    uint32_t isolated_id = 0;  // kIsolate: the id of the character as a word of its own
  };
  CharEntry classify(char32_t cp) const;
  std::vector<CharEntry> bmp_;
  WordPieceConfig config_;
  StringIdMap whole_;         // every vocabulary token
  StringIdMap continuation_;  // tokens with the prefix, keyed without it
  // Every prefix (at character boundaries) of the keys above -> the token id when the prefix is
  // itself a token, else kPrefixOnly: longest-match scans forward and stops at the first
  // string no token starts with.
  StringIdMap whole_prefixes_, continuation_prefixes_;
  static constexpr uint32_t kPrefixOnly = 0xFFFFFFFEu;
  size_t max_whole_bytes_ = 0, max_cont_bytes_ = 0;
  uint32_t unk_id_ = 0;
  std::array<uint8_t, 128> ascii_class_{};
  std::array<char, 128> ascii_map_{};
  std::array<uint32_t, 128> punct_id_{};  // the id of each ASCII punctuation character's word
  // Whether every wide punctuation character (ascii_masks.h) is a word of its own, as under
  // BertNormalizer's every setting: the ASCII windows then go on past them (bmp_ has the ids).
  bool wide_punctuation_isolated_ = false;
  uint64_t cache_owner_;  // names this tokenizer's word memos (byte_key_cache.h)
  bool normalized_added_holds_space_ = false;
};

}  // namespace shardkit::tok
