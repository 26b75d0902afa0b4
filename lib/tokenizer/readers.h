// The per-component readers of tokenizer.json (one file each, like HF's pipeline stages) and the
// loaders of each file family. Every component or option that would change ids and is not
// implemented throws Error(kUnsupported) naming it.
#pragma once

#include <memory>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/decoders.h"
#include "tokenizer/json_reader.h"
#include "tokenizer/models.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/tokenizer_base.h"

namespace shardkit::tok {

std::vector<AddedToken> read_added_tokens(const Json& j, object root);
Normalizer read_normalizer(const Json& j, element e, const std::string& where);
// Pre-tokenizers for the general pipeline (not byte-level BPE).
PreTokenizer read_pre_tokenizer(const Json& j, element e, const std::string& where);
// Byte-level BPE's pre-tokenizer steps: Split patterns ending in ByteLevel.
void read_byte_level_steps(const Json& j, element e, const std::string& where,
                           std::vector<PreTokenizerStep>& steps);
void read_post_processor(const Json& j, element e, const std::string& where,
                         PostProcessorConfig& pc);
// BERT's template: [CLS] A [SEP] for one text, [CLS] A [SEP] B [SEP] with type ids 0/1.
void set_bert_template(PostProcessorConfig& pc, uint32_t cls, uint32_t sep);
Decoder read_decoder(const Json& j, element e, const std::string& where);
// BPE (not byte-level), Unigram and WordLevel models.
// `compiled`: a compiled form's tables (compiled_cache.h) that replace the model's vocab and
// merges (BPE only).
std::unique_ptr<Model> read_model(const Json& j, object model, const std::string& type,
                                  const CompiledTables& compiled = {});
std::shared_ptr<const Regex> read_pattern(const Json& j, object o, const std::string& where,
                                          std::string* literal);
// A Split-like pre-tokenizer's "behavior" (HF's SplitDelimiterBehavior), `fallback` if absent.
SplitBehavior read_split_behavior(const Json& j, object o, const std::string& where,
                                  SplitBehavior fallback);

std::unique_ptr<Tokenizer> load_tokenizer_json(const Json& j, object root, uint64_t fingerprint,
                                               const CompiledTables& compiled_model = {});
// Takes the special tokens a HF tokenizer_config.json names, when the file exists.
void apply_tokenizer_config(TokenizerBase& tokenizer, const std::filesystem::path& config);
std::unique_ptr<Tokenizer> load_gpt2(const Json& j, element root,
                                     const std::filesystem::path& merges_path,
                                     uint64_t fingerprint);
std::unique_ptr<Tokenizer> load_vocab_txt(const std::string& content, const std::string& source,
                                          const Tokenizer::LoadOptions& options,
                                          uint64_t fingerprint);
// A SentencePiece .model (protobuf ModelProto).
std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& content, const std::string& source,
                                              uint64_t fingerprint);

}  // namespace shardkit::tok
