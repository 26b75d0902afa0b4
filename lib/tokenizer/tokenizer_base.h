// What WordPiece and byte-level BPE tokenizers share: added/special tokens matched before the
// model sees the text, the post-processor template, decoding plumbing and the manifest entry.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/string_map.h"
#include "tokenizer/tokenizer.h"

namespace shardkit::tok {

// One element of a TemplateProcessing template: a special token (ids) or a sequence ($A/$B).
struct TemplatePiece {
  bool is_sequence = false;
  int sequence = 0;  // 0 = A, 1 = B
  std::vector<uint32_t> ids;
  uint32_t type_id = 0;
};

struct PostProcessorConfig {
  bool has_template = false;
  std::vector<TemplatePiece> single, pair;
  // ByteLevel post-processor: trims spaces from token offsets (HF process_offsets).
  bool byte_level_trim = false;
  bool byte_level_add_prefix_space = false;
  // RobertaProcessing: trims White_Space from token offsets (HF process_offsets of roberta).
  bool roberta_trim = false;
  bool roberta_add_prefix_space = true;
};

class TokenizerBase : public Tokenizer {
 public:
  Encoding encode(std::string_view text) const override;
  void encode_ids(std::string_view text, std::vector<uint32_t>& out) const override;
  Encoding post_process(Encoding first, std::optional<Encoding> second) const override;
  size_t added_tokens(bool pair) const override;
  std::string decode(std::span<const uint32_t> ids, bool skip_special_tokens) const override;
  size_t next_cut(std::string_view text, size_t from) const override;
  void encode_ids_after_cut(std::string_view part, std::vector<uint32_t>& out) const override;
  size_t vocab_size() const override;
  std::optional<uint32_t> token_to_id(std::string_view token) const override;
  std::string id_to_token(uint32_t id) const override;
  const SpecialIds& special_tokens() const override { return specials_; }
  bool is_special(uint32_t id) const override;
  TokenizerInfo describe() const override;
  // The model's tables as a compiled form (compiled_cache.h); empty when the model has none.
  virtual std::string compiled_model() const { return {}; }

  // Set up by the loaders. `normalized_contents` holds, for each token with normalized = true,
  // its content after the normalizer (matched in normalized text); empty: the contents as is.
  void set_added_tokens(std::vector<AddedToken> tokens,
                        const std::vector<std::string>& normalized_contents = {});
  void set_post_processor(PostProcessorConfig config) { post_ = std::move(config); }
  void set_fingerprint(uint64_t fingerprint, std::string type) {
    fingerprint_ = fingerprint;
    type_ = std::move(type);
  }
  // Fills the special ids from well-known token names once vocabulary and added tokens are set.
  void resolve_special_tokens(std::optional<uint32_t> unk);
  void mark_special(uint32_t id) { extra_special_.push_back(id); }
  void set_special_tokens(const SpecialIds& ids) { specials_ = ids; }

 protected:
  // Encodes full[begin, end), which holds no added token, appending ids and, when `detail` is
  // non-null, absolute byte offsets and word ids (one word per pre-token) to it.
  virtual void encode_segment(std::string_view full, size_t begin, size_t end,
                              std::vector<uint32_t>& ids, Encoding* detail) const = 0;
  // The decoder: model tokens (already without skipped specials) to text.
  virtual std::string decode_tokens(const std::vector<std::string>& tokens) const = 0;
  virtual std::optional<uint32_t> model_token_to_id(std::string_view token) const = 0;
  virtual std::optional<std::string> model_id_to_token(uint32_t id) const = 0;
  virtual size_t model_vocab_size() const = 0;
  // Called on a finished encode() before it is returned (ByteLevel offset trimming).
  virtual void finish_encoding(Encoding& e) const { (void)e; }

  // Whether the model's normalizer, pre-tokenizer and merges keep to each side of a newline
  // between two non-space characters (text_cuts.h); if so, next_cut finds such newlines.
  virtual bool cuts_after_newlines() const { return false; }
  // Whether encode_segment puts something before each text (a Prepend normalizer) that a part
  // after a cut leaves out (encode_segment_after_cut).
  virtual bool prefixes_segments() const { return false; }
  // Whether the cut that next_cut found at text[p] holds beyond the rules above.
  virtual bool cut_holds(std::string_view text, size_t p) const {
    (void)text;
    (void)p;
    return true;
  }
  // encode_segment of part[0, end), ids only, where `part` starts at a cut.
  virtual void encode_segment_after_cut(std::string_view part, size_t end,
                                        std::vector<uint32_t>& ids) const {
    encode_segment(part, 0, end, ids, nullptr);
  }
  // Marks a first byte of the text after a newline where the model refuses a cut anyway (a
  // pattern whose newline tail goes on with it, as o200k's `[\r\n/]*` does with '/').
  void refuse_cuts_before(char first_byte) {
    model_refused_[static_cast<unsigned char>(first_byte)] = true;
  }

  // Whether encode_segment itself finds normalized added tokens (after its normalizer); if not,
  // the base splits them out of the raw segment first.
  virtual bool matches_normalized_added() const { return false; }

  const PostProcessorConfig& post() const { return post_; }
  const AddedTokenMatcher& normalized_added() const { return normalized_matcher_; }
  const AddedToken* added_token(uint32_t id) const;

 private:
  template <typename Sink>
  void split_added(std::string_view text, Sink&& sink) const;
  // Whether `token` is the content of a special added token: what HF's decode skips, by the
  // string (a normalized special token whose normalized content differs is kept).
  bool names_special_token(std::string_view token) const;

  std::vector<AddedToken> added_;
  // Each added token as HF's decoder and id_to_token see it (AddedVocabulary's
  // simple_id_to_token): a normalized token's content as the normalizer makes it, else its
  // content.
  std::vector<std::string> added_strings_;
  StringIdMap added_by_content_;
  std::vector<std::pair<uint32_t, size_t>> added_by_id_;  // sorted (id, index in added_)
  AddedTokenMatcher matcher_, normalized_matcher_;
  // Cuts for next_cut: none when an added token holds a newline with a character after it; none
  // before a byte that starts an lstrip token (it would take the newline before it).
  bool added_token_crosses_newline_ = false;
  // Whether an added token may end at a cut (it ends with a newline, or takes the white space
  // after it): the text after it would then start a segment, which prefixes_segments() marks
  // differently from the part after a cut.
  bool added_token_may_end_at_cut_ = false;
  std::array<bool, 256> lstrip_first_byte_{};
  std::array<bool, 256> model_refused_{};
  PostProcessorConfig post_;
  SpecialIds specials_;
  std::vector<uint32_t> extra_special_;
  uint64_t fingerprint_ = 0;
  std::string type_;
};

}  // namespace shardkit::tok
