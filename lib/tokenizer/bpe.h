// Byte-level BPE (GPT-2, cl100k/o200k-style, Llama-3): added tokens -> pre-tokenizer steps
// (Split regexes, ByteLevel) -> BPE merges by rank with a per-thread word cache -> ByteLevel
// decoder.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/blob.h"
#include "tokenizer/byte_key_cache.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/joined_char_pairs.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/piece_scanner.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/string_list.h"
#include "tokenizer/string_map.h"
#include "tokenizer/tokenizer_base.h"

namespace shardkit::tok {

struct PreTokenizerStep {
  enum Kind { kSplit, kByteLevel } kind = kByteLevel;
  std::shared_ptr<Regex> regex;    // kSplit
  SplitMatcher matcher = nullptr;  // a hand-written equivalent of `regex`, or null
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;  // kByteLevel
  bool use_regex = true;          // kByteLevel
};

struct BpeConfig {
  std::vector<std::string> vocab;  // index = id, tokens in byte-level stand-in characters
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  bool ignore_merges = false;
  std::optional<std::string> unk_token;
  std::vector<PreTokenizerStep> steps;   // must end with a ByteLevel step
  bool byte_level_decoder = true;        // false: no decoder (tokens joined by spaces)
  std::optional<Normalizer> normalizer;  // applied before the pre-tokenizer (NFC, NFKC, ...)
  // The tables of a compiled form (compiled_cache.h) instead of vocab and merges; the
  // constructor throws Error(kCorrupt) when they are not a compiled form's.
  CompiledTables compiled;
};

class BpeTokenizer : public TokenizerBase {
 public:
  BpeTokenizer(BpeConfig config, const std::string& source);
  ~BpeTokenizer() override;

  std::optional<uint32_t> unk_id() const { return unk_id_; }
  std::string compiled_model() const override;

 protected:
  void encode_segment(std::string_view full, size_t begin, size_t end, std::vector<uint32_t>& ids,
                      Encoding* detail) const override;
  std::string decode_tokens(const std::vector<std::string>& tokens) const override;
  std::optional<uint32_t> model_token_to_id(std::string_view token) const override;
  std::optional<std::string> model_id_to_token(uint32_t id) const override;
  size_t model_vocab_size() const override { return tokens_.size(); }
  void finish_encoding(Encoding& e) const override;
  bool cuts_after_newlines() const override { return cuts_after_newlines_; }

 private:
  struct Piece {
    uint32_t begin, end;
    bool prefix;  // a virtual space precedes the piece (ByteLevel add_prefix_space)
  };
  // BPE of one pre-tokenized piece's bytes, through the word memo; appends ids.
  void bpe_word(const char* p, size_t n, std::vector<uint32_t>& out) const;
  void bpe_word(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                std::vector<uint32_t>& out) const;
  void encode_words(std::string_view full, size_t begin, size_t end,
                    std::vector<uint32_t>& ids) const;
  // next_pieces(pos, ends) writes the ends of one or more pieces from pos on and returns how many.
  template <typename NextPieces>
  void encode_words(std::string_view full, std::string_view text, size_t begin,
                    std::vector<uint32_t>& ids, NextPieces&& next_pieces) const;
  using Memo = WordMemo<uint32_t, 3>;
  using Staged = StagedIds<uint32_t, 64 * 3>;  // pieces' ids, each up to three
  void encode_word(Memo& memo, const char* p, size_t n, const char* limit, Staged& staged,
                   std::vector<uint32_t>& ids) const;
  SplitMatcher pieces_matcher() const;
  bool has_deepseek_splits() const;
  void build_tables(const std::string& source);
  bool restore_tables(std::string_view blob);
  void merge_symbols(const char* p, size_t n, std::vector<uint32_t>& out) const;
  void merge_by_parts(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                      std::vector<uint32_t>& out) const;
  void merge_part(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                  std::vector<uint32_t>& out) const;
  template <typename Make>
  static void through_cache(ByteKeyCache<uint32_t>& cache, const char* p, size_t n,
                            std::vector<uint32_t>& out, Make&& make);
  void emit_piece(std::string_view full, const Piece& piece, std::vector<uint32_t>& ids,
                  Encoding* detail) const;
  // Runs pre-tokenizer steps `step`... over `pc`, handing each final piece to `emit`.
  template <typename Emit>
  void split_from(std::string_view full, size_t step, const Piece& pc, Emit& emit) const;
  bool steps_keep_newline_cuts() const;
  void encode_normalized(std::string_view full, size_t begin, size_t end,
                         std::vector<uint32_t>& ids, Encoding* detail) const;

  BpeConfig config_;
  StringList tokens_;       // stand-in strings, by id
  StringList token_bytes_;  // raw bytes, by id
  StringIdMap by_bytes_;
  std::shared_ptr<const void> tables_owner_;  // the compiled form the tables are views of
  U64Map merges_;                             // (left << 32 | right) -> (rank << 32 | merged id)
  JoinedCharPairs joined_pairs_;              // where a piece may be cut into parts
  bool merges_by_parts_ = false;
  std::array<uint32_t, 256> byte_id_{};
  std::optional<uint32_t> unk_id_;
  SplitMatcher words_matcher_ = nullptr;       // pieces_matcher()
  std::optional<PiecePattern> words_pattern_;  // its vectorized form, if any
  bool deepseek_splits_ = false;  // DeepSeek-V3's three Splits: deepseek_piece_end() finds pieces
  bool cuts_after_newlines_ = false;
  uint64_t cache_owner_;  // names this tokenizer's word caches (byte_key_cache.h)
};

}  // namespace shardkit::tok
