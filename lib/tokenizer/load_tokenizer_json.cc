// tokenizer.json: reads each component with its reader and assembles the tokenizer family that
// runs it: the fused WordPiece (BERT), byte-level BPE (GPT-2 style, with any normalizer) or the
// general pipeline (BPE over characters, Unigram, WordLevel).
#include "tokenizer/pipeline.h"
#include "tokenizer/readers.h"
#include "tokenizer/wordpiece.h"

namespace shardkit::tok {

std::vector<std::pair<std::string, std::string>> read_bpe_merges(const Json& j, object model);

namespace {

bool has_byte_level(const Json& j, element e, const std::string& where) {
  std::string type = j.type_of(e, where);
  if (type == "ByteLevel") return true;
  if (type != "Sequence") return false;
  object o = j.obj(e, where);
  element list;
  if (o.at_key("pretokenizers").get(list)) return false;
  for (element x : j.arr(list, where + ".pretokenizers"))
    if (has_byte_level(j, x, where + ".pretokenizers[]")) return true;
  return false;
}

}  // namespace

std::vector<AddedToken> read_added_tokens(const Json& j, object root) {
  std::vector<AddedToken> out;
  element e;
  if (root.at_key("added_tokens").get(e) || e.is_null()) return out;
  size_t k = 0;
  for (element t : j.arr(e, "added_tokens")) {
    std::string where = "added_tokens[" + std::to_string(k++) + "]";
    object o = j.obj(t, where);
    AddedToken a;
    a.id = static_cast<uint32_t>(j.uint(j.get(o, "id", where), where + ".id"));
    a.content = j.str(j.get(o, "content", where), where + ".content");
    a.special = j.boolean(o, "special", false, where);
    a.lstrip = j.boolean(o, "lstrip", false, where);
    a.rstrip = j.boolean(o, "rstrip", false, where);
    a.single_word = j.boolean(o, "single_word", false, where);
    a.normalized = j.boolean(o, "normalized", !a.special, where);
    out.push_back(std::move(a));
  }
  return out;
}

std::unique_ptr<Tokenizer> load_tokenizer_json(const Json& j, object root, uint64_t fingerprint,
                                               const CompiledTables& compiled_model) {
  for (const char* key : {"truncation", "padding"}) {
    if (j.has(root, key))
      j.unsupported(std::string("\"") + key +
                    "\" is set; shardkit truncates and pads itself, remove it from the file");
  }
  element model_el = j.get(root, "model", "tokenizer.json");
  object model = j.obj(model_el, "model");
  std::string model_type = j.has(model, "type") ? j.type_of(model_el, "model") : std::string();
  element normalizer_el = j.get(root, "normalizer", "tokenizer.json");
  element pre_el = j.get(root, "pre_tokenizer", "tokenizer.json");
  element post_el = j.get(root, "post_processor", "tokenizer.json");
  element decoder_el = j.get(root, "decoder", "tokenizer.json");
  const bool has_normalizer = !normalizer_el.is_null();

  PostProcessorConfig post;
  read_post_processor(j, post_el, "post_processor", post);
  std::vector<AddedToken> added = read_added_tokens(j, root);
  bool any_normalized_added = false;
  for (const AddedToken& a : added) any_normalized_added |= a.normalized;

  if (model_type == "WordPiece") {
    WordPieceConfig c;
    c.vocab = vocab_by_id(j, j.get(model, "vocab", "model"), "model.vocab");
    c.unk_token = j.opt_str(model, "unk_token", "model").value_or("[UNK]");
    c.continuing_subword_prefix =
        j.opt_str(model, "continuing_subword_prefix", "model").value_or("##");
    element m;
    if (!model.at_key("max_input_chars_per_word").get(m) && !m.is_null())
      c.max_input_chars_per_word = j.uint(m, "model.max_input_chars_per_word");
    if (!has_normalizer) {
      c.normalizer = {false, false, false, false};
    } else {
      std::string type = j.type_of(normalizer_el, "normalizer");
      if (type != "BertNormalizer")
        j.unsupported("normalizer: type '" + type + "' is not supported (BertNormalizer is)");
      object n = j.obj(normalizer_el, "normalizer");
      c.normalizer.clean_text = j.boolean(n, "clean_text", true, "normalizer");
      c.normalizer.handle_chinese_chars = j.boolean(n, "handle_chinese_chars", true, "normalizer");
      c.normalizer.lowercase = j.boolean(n, "lowercase", true, "normalizer");
      c.normalizer.strip_accents =
          j.boolean(n, "strip_accents", c.normalizer.lowercase, "normalizer");
    }
    if (pre_el.is_null() || j.type_of(pre_el, "pre_tokenizer") != "BertPreTokenizer")
      j.unsupported("pre_tokenizer: WordPiece is supported with BertPreTokenizer only, not " +
                    (pre_el.is_null() ? std::string("none") : j.type_of(pre_el, "pre_tokenizer")));
    if (decoder_el.is_null()) {
      c.has_decoder = false;
    } else {
      std::string type = j.type_of(decoder_el, "decoder");
      if (type != "WordPiece")
        j.unsupported("decoder: type '" + type + "' is not supported with WordPiece");
      object d = j.obj(decoder_el, "decoder");
      c.decoder_prefix = j.opt_str(d, "prefix", "decoder").value_or("##");
      c.decoder_cleanup = j.boolean(d, "cleanup", true, "decoder");
    }
    if (post.byte_level_trim || post.roberta_trim)
      j.unsupported("post_processor: ByteLevel/RobertaProcessing offset trimming with WordPiece");
    auto t = std::make_unique<WordPieceTokenizer>(std::move(c), j.source());
    std::optional<uint32_t> unk = t->unk_id();
    t->set_bert_added_tokens(std::move(added));
    t->set_post_processor(std::move(post));
    t->set_fingerprint(fingerprint, "wordpiece");
    t->resolve_special_tokens(unk);
    return t;
  }
  if (model_type.empty() && j.has(model, "merges")) model_type = "BPE";
  std::optional<Normalizer> normalizer;
  if (has_normalizer) normalizer = read_normalizer(j, normalizer_el, "normalizer");
  if (normalizer && normalizer->is_identity()) normalizer.reset();
  // Normalized added tokens are matched in normalized text: their contents normalized too.
  std::vector<std::string> normalized_contents;
  for (const AddedToken& a : added) {
    if (!a.normalized) continue;
    NormalizedString s(a.content, false);
    if (normalizer) normalizer->apply(s);
    normalized_contents.push_back(s.text());
  }
  if (model_type == "BPE" && !pre_el.is_null() && has_byte_level(j, pre_el, "pre_tokenizer")) {
    BpeConfig c;
    if (compiled_model.empty()) {
      c.vocab = vocab_by_id(j, j.get(model, "vocab", "model"), "model.vocab");
      c.merges = read_bpe_merges(j, model);
    }
    c.compiled = compiled_model;
    element d;
    if (!model.at_key("dropout").get(d) && !d.is_null()) {
      double p = 0;
      if (d.get(p) || p != 0.0) j.unsupported("model.dropout: BPE dropout is not supported");
    }
    if (j.boolean(model, "byte_fallback", false, "model"))
      j.unsupported("model.byte_fallback with a ByteLevel pre-tokenizer is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      auto v = j.opt_str(model, key, "model");
      if (v && !v->empty())
        j.unsupported(std::string("model.") + key + " '" + *v +
                      "' is not supported with a ByteLevel pre-tokenizer");
    }
    c.ignore_merges = j.boolean(model, "ignore_merges", false, "model");
    c.unk_token = j.opt_str(model, "unk_token", "model");
    if (normalizer && any_normalized_added)
      j.unsupported(
          "added_tokens: normalized added tokens with a normalizer are not supported "
          "with byte-level BPE");
    c.normalizer = std::move(normalizer);
    read_byte_level_steps(j, pre_el, "pre_tokenizer", c.steps);
    if (c.steps.empty() || c.steps.back().kind != PreTokenizerStep::kByteLevel)
      j.unsupported("pre_tokenizer: byte-level BPE needs ByteLevel as its last pre-tokenizer");
    if (decoder_el.is_null()) {
      c.byte_level_decoder = false;
    } else {
      std::string type = j.type_of(decoder_el, "decoder");
      if (type != "ByteLevel")
        j.unsupported("decoder: type '" + type + "' is not supported with byte-level BPE");
    }
    auto t = std::make_unique<BpeTokenizer>(std::move(c), j.source());
    std::optional<uint32_t> unk = t->unk_id();
    t->set_added_tokens(std::move(added), normalized_contents);
    t->set_post_processor(std::move(post));
    t->set_fingerprint(fingerprint, "bpe");
    t->resolve_special_tokens(unk);
    return t;
  }
  // The general pipeline: BPE over characters, Unigram, WordLevel.
  PipelineConfig c;
  c.model = read_model(j, model, model_type, compiled_model);
  c.normalizer = std::move(normalizer);
  if (!pre_el.is_null()) c.pre_tokenizer = read_pre_tokenizer(j, pre_el, "pre_tokenizer");
  if (!decoder_el.is_null()) c.decoder = read_decoder(j, decoder_el, "decoder");
  const std::string type = model_type == "BPE"       ? "bpe"
                           : model_type == "Unigram" ? "unigram"
                                                     : "wordlevel";
  auto t = std::make_unique<PipelineTokenizer>(std::move(c));
  std::optional<uint32_t> unk = t->unk_id();
  t->set_added_tokens(std::move(added), normalized_contents);
  t->set_post_processor(std::move(post));
  t->set_fingerprint(fingerprint, type);
  t->resolve_special_tokens(unk);
  return t;
}

}  // namespace shardkit::tok
