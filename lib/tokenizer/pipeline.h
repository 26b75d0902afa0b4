// The general HF pipeline for models without a fused tokenizer: normalizer -> normalized added
// tokens -> pre-tokenizer -> model (BPE, Unigram, WordLevel) -> post-processor -> decoder.
// Llama-2, Gemma, T5, XLM-R and SentencePiece .model files run here.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tokenizer/decoders.h"
#include "tokenizer/models.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/tokenizer_base.h"

namespace shardkit::tok {

struct PipelineConfig {
  std::optional<Normalizer> normalizer;
  std::optional<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::optional<Decoder> decoder;  // none: tokens joined by spaces
};

class PipelineTokenizer : public TokenizerBase {
 public:
  explicit PipelineTokenizer(PipelineConfig config);
  std::optional<uint32_t> unk_id() const { return config_.model->unk_id(); }
  const std::optional<Normalizer>& normalizer() const { return config_.normalizer; }
  std::string compiled_model() const override { return config_.model->compiled(); }

 protected:
  void encode_segment(std::string_view full, size_t begin, size_t end, std::vector<uint32_t>& ids,
                      Encoding* detail) const override;
  std::string decode_tokens(const std::vector<std::string>& tokens) const override;
  std::optional<uint32_t> model_token_to_id(std::string_view token) const override {
    return config_.model->token_to_id(token);
  }
  std::optional<std::string> model_id_to_token(uint32_t id) const override {
    return config_.model->id_to_token(id);
  }
  size_t model_vocab_size() const override { return config_.model->size(); }
  bool matches_normalized_added() const override { return true; }
  void finish_encoding(Encoding& e) const override;
  bool cuts_after_newlines() const override { return cuts_after_newlines_; }
  bool prefixes_segments() const override { return prefixes_segments_; }
  bool cut_holds(std::string_view text, size_t p) const override {
    return !config_.normalizer || config_.normalizer->cut_holds(text, p);
  }
  void encode_segment_after_cut(std::string_view part, size_t end,
                                std::vector<uint32_t>& ids) const override {
    encode_normalized(part, 0, end, ids, nullptr, part_normalizer(), PreTokenizer::Start::kCut);
  }

 private:
  // Whether each step keeps to the sides of a cut after a newline (text_cuts.h): Gemma's,
  // InternLM2's and Llama-2's (whose Prepend puts "▁" before the first part only). When they
  // do, the bytes the model refuses after a newline are marked for next_cut.
  bool allow_newline_cuts();

  // The normalizer of a part after a cut.
  const std::optional<Normalizer>& part_normalizer() const {
    return normalizer_after_cut_ ? normalizer_after_cut_ : config_.normalizer;
  }
  // encode_segment with `normalizer`, where full[begin] stands at `start`.
  void encode_normalized(std::string_view full, size_t begin, size_t end,
                         std::vector<uint32_t>& ids, Encoding* detail,
                         const std::optional<Normalizer>& normalizer,
                         PreTokenizer::Start start) const;

  void encode_piece(const NormalizedString& s, PreTokenizer::Start start, size_t base,
                    std::vector<uint32_t>& ids, Encoding* detail) const;
  void encode_plain(std::string_view text, PreTokenizer::Start start,
                    std::vector<uint32_t>& ids) const;
  // Whether the pre-tokenizer's pieces of `text` come from string work alone (encode_plain).
  bool plain_pre_tokenizer(std::string_view text) const;

  PipelineConfig config_;
  // The normalizer of a part after a cut, when it differs (normalizer.prepends()).
  std::optional<Normalizer> normalizer_after_cut_;
  // A Prepend or a Metaspace "always" puts its prefix before every text between added tokens.
  bool prefixes_segments_ = false;
  bool cuts_after_newlines_ = false;
};

}  // namespace shardkit::tok
