// The models of HF tokenizers' pipeline that work on normalized, pre-tokenized words (strings,
// not bytes): BPE (SentencePiece style: byte_fallback, fuse_unk, subword prefix/suffix),
// Unigram (Viterbi, ties as HF and SentencePiece break them) and WordLevel. Byte-level BPE and
// WordPiece have fused tokenizers of their own (bpe.h, wordpiece.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/blob.h"
#include "tokenizer/string_map.h"

namespace shardkit::tok {

// One model token: id and the byte span it covers in the word.
struct ModelToken {
  uint32_t id;
  uint32_t begin, end;
};

// A thread's scratch list of tokens keeps at most this capacity between words (768 KiB): the
// list a whole-file document needed is not held on to.
constexpr size_t kKeptScratchTokens = size_t{1} << 16;

// A model's output: tokens with their spans, or their ids alone.
inline void append_token(std::vector<ModelToken>& out, const ModelToken& t) { out.push_back(t); }
inline void append_token(std::vector<uint32_t>& ids, const ModelToken& t) { ids.push_back(t.id); }

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of `word` (offsets relative to it).
  virtual void tokenize(std::string_view word, std::vector<ModelToken>& out) const = 0;
  // Appends the ids of the same tokens. Models that see a whole text as one word (SentencePiece)
  // override it so that no list of the text's tokens with their spans is built. The bytes from
  // the word's end to `readable_end` may be read (and are ignored): a short word's key is then
  // loaded whole, not copied byte by byte into a buffer first.
  virtual void tokenize_ids(std::string_view word, [[maybe_unused]] const char* readable_end,
                            std::vector<uint32_t>& ids) const {
    thread_local std::vector<ModelToken> tokens;
    tokens.clear();
    tokenize(word, tokens);
    for (const ModelToken& t : tokens) ids.push_back(t.id);
    if (tokens.capacity() > kKeptScratchTokens) tokens = {};
  }
  // tokenize_ids of each piece text[begin, ends[0]), text[ends[0], ends[1]), ...: a
  // pre-tokenizer's pieces of one text in one call, so that a model looks its memo up once, not
  // once a word. The whole of `text` may be read.
  virtual void tokenize_pieces_ids(std::string_view text, size_t begin,
                                   std::span<const size_t> ends, std::vector<uint32_t>& ids) const {
    for (const size_t end : ends) {
      tokenize_ids(text.substr(begin, end - begin), text.data() + text.size(), ids);
      begin = end;
    }
  }
  virtual std::optional<uint32_t> token_to_id(std::string_view token) const = 0;
  virtual std::optional<std::string> id_to_token(uint32_t id) const = 0;
  virtual size_t size() const = 0;
  virtual std::optional<uint32_t> unk_id() const = 0;
  // The model's tables as a compiled form (compiled_cache.h); empty when it has none.
  virtual std::string compiled() const { return {}; }
  // Whether a word cut after a newline, before a visible character whose first byte `refused`
  // does not mark, tokenizes into the tokens of its halves (text_cuts.h); the model marks the
  // bytes it refuses. False: no cuts.
  virtual bool keeps_newline_cuts(std::array<bool, 256>& refused) const {
    (void)refused;
    return false;
  }
  // Whether a text cut before a word start (U+2581) tokenizes into the tokens of its halves: a
  // SentencePiece newline that became a space (Normalizer::newline_becomes_word_start).
  virtual bool keeps_word_start_cuts() const { return false; }
};

struct BpeModelConfig {
  std::vector<std::string> vocab;                           // by id
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  // SentencePiece BPE (.model): no merges list; a pair merges when its concatenation is a
  // piece, the higher score first.
  std::vector<float> scores;
  std::vector<uint8_t> mergeable;      // with scores: pieces merges may produce or use
  std::vector<uint32_t> user_defined;  // with scores: matched whole first, never merged
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix, end_of_word_suffix;
  // The tables of a compiled form instead of vocab, merges and scores (the constructor throws
  // Error(kCorrupt) when they are not a compiled form's).
  CompiledTables compiled;
};

std::unique_ptr<Model> make_bpe_model(BpeModelConfig config, const std::string& source);

struct UnigramConfig {
  std::vector<std::string> pieces;  // by id
  std::vector<double> scores;
  std::optional<uint32_t> unk_id;
  bool byte_fallback = false;
  bool fuse_unk = true;
  // SentencePiece's own rules (a .model file): user-defined pieces score length * max - 0.1,
  // and pieces that are not normal/user-defined are never matched.
  std::vector<uint8_t> matchable;  // empty: every piece
  std::vector<uint8_t> user_defined;
};

std::unique_ptr<Model> make_unigram_model(UnigramConfig config, const std::string& source);

std::unique_ptr<Model> make_word_level_model(std::vector<std::string> vocab,
                                             std::optional<std::string> unk_token,
                                             const std::string& source);

}  // namespace shardkit::tok
