// The tokenizer interface shardify and the loader use. Implementations (BERT WordPiece,
// byte-level BPE) are pipelines in the spirit of HuggingFace tokenizers:
// normalizer -> pre-tokenizer -> model -> post-processor -> decoder, and must produce exactly
// the ids HuggingFace `tokenizers` produces for the same files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer_info.h"

namespace shardkit::tok {

// One encoded sequence (or pair, after post-processing).
struct Encoding {
  std::vector<uint32_t> ids;
  std::vector<uint32_t> type_ids;
  // Byte span [first, second) of each token in its source text (UTF-8 bytes, like HF's Rust
  // core); (0, 0) for special tokens added by the post-processor.
  std::vector<std::pair<uint32_t, uint32_t>> offsets;
  // 0 for tokens from the first text, 1 from the second, -1 for added special tokens.
  std::vector<int8_t> sequence_ids;
  // Index of the pre-tokenized word each token comes from, per sequence (HF's word ids);
  // kNoWord for special tokens added by the post-processor.
  std::vector<uint32_t> word_ids;
  static constexpr uint32_t kNoWord = 0xFFFFFFFFu;

  size_t size() const { return ids.size(); }
};

enum class TruncationStrategy { kLongestFirst, kOnlyFirst, kOnlySecond };

// Ids of the special tokens a task may need; absent when the vocabulary has none.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Loads tokenizer.json, a WordPiece vocab.txt, or a GPT-2 encoder.json (merges from
  // vocab.bpe beside it, or `merges_path`). Unsupported tokenizer.json content throws
  // Error(kUnsupported) naming the component; never silently different ids.
  struct LoadOptions {
    std::optional<std::filesystem::path> merges_path;  // for encoder.json
    bool lowercase = true;                             // for vocab.txt
    std::optional<bool> strip_accents;                 // for vocab.txt; default follows lowercase
    // Where compiled forms of large tokenizer.json files are kept (compiled_cache.h): nullopt
    // for $SHARDKIT_TOKENIZER_CACHE (empty: none), else $XDG_CACHE_HOME/shardkit/tokenizers,
    // else ~/.cache/shardkit/tokenizers; an empty path for none (every load builds the tables
    // from the file).
    std::optional<std::filesystem::path> compiled_cache;
    // What that directory's forms may hold together; the least recently used go first.
    uint64_t compiled_cache_bytes = uint64_t{1} << 30;
  };
  static std::unique_ptr<Tokenizer> from_file(const std::filesystem::path& path,
                                              const LoadOptions& options);
  static std::unique_ptr<Tokenizer> from_file(const std::filesystem::path& path) {
    return from_file(path, LoadOptions{});
  }

  // All methods are const and safe to call from many threads at once.
  // Encodes one text without special tokens. Invalid UTF-8 throws Error(kInput) naming the
  // byte offset.
  virtual Encoding encode(std::string_view text) const = 0;
  // Ids only: the fast path shardify uses when offsets are not needed. Appends to `out`.
  virtual void encode_ids(std::string_view text, std::vector<uint32_t>& out) const = 0;
  // Applies the post-processor template (e.g. [CLS] a [SEP] b [SEP]) with type ids, as HF's
  // post_process(encoding, pair, add_special_tokens=true).
  virtual Encoding post_process(Encoding first, std::optional<Encoding> second) const = 0;
  // How many tokens post_process adds for a single text or a pair.
  virtual size_t added_tokens(bool pair) const = 0;
  // HF's decode: a normalized added token reads as its normalized content (lowercase behind an
  // uncased BERT), as does id_to_token, and is skipped as special only when that is a special
  // token's content.
  virtual std::string decode(std::span<const uint32_t> ids, bool skip_special_tokens) const = 0;
  // The first position at or after `from` where the valid UTF-8 `text` may be cut so that the
  // ids of its parts, joined, are the ids of the whole: no added token, normalization,
  // pre-token or merge crosses it (tokenizer/text_cuts.h). The first part's ids are encode_ids',
  // the others' encode_ids_after_cut's. npos when there is none, or when this tokenizer's stages
  // could join text across any position. shardify cuts a long document there so that several
  // threads tokenize it.
  virtual size_t next_cut(std::string_view text, size_t from) const = 0;
  // encode_ids for a part of a text that starts at a cut next_cut named: what the tokenizer puts
  // only before a whole text (Llama-2's Prepend of U+2581) is left out, since the part before
  // the cut had it.
  virtual void encode_ids_after_cut(std::string_view part, std::vector<uint32_t>& out) const = 0;

  virtual size_t vocab_size() const = 0;
  virtual std::optional<uint32_t> token_to_id(std::string_view token) const = 0;
  virtual std::string id_to_token(uint32_t id) const = 0;
  virtual const SpecialIds& special_tokens() const = 0;
  // Whether id is one of the post-processor's or added special tokens (never MLM-masked).
  virtual bool is_special(uint32_t id) const = 0;

  // What a dataset records about the tokenizer: type, vocab size, special ids, and a
  // fingerprint (XXH3-64 of everything that determines the ids).
  virtual TokenizerInfo describe() const = 0;
};

// HF-compatible truncation of an encoding pair so that a.size() + b.size() <= max_tokens
// (special tokens not counted: the caller subtracts added_tokens(true)). Throws
// Error(kInvalidArgument) when the strategy cannot satisfy the limit, as HF errors.
void truncate_pair(Encoding& a, Encoding& b, size_t max_tokens, TruncationStrategy strategy);
// The same, exactly as HF's Tokenizer.encode(first, second) with truncation max_length =
// `max_length`, special tokens included: HF stops tokenizing each text at the first word end at
// or past max_length before truncating, which decides which text counts as the longer one
// (longest_first with an odd budget). Needs word_ids, as encode() fills them.
void truncate_pair(Encoding& a, Encoding& b, size_t max_tokens, TruncationStrategy strategy,
                   size_t max_length);
// Keeps the first max_tokens tokens.
void truncate(Encoding& e, size_t max_tokens);

}  // namespace shardkit::tok
