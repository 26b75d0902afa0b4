// Tokenizer::from_file: content-based dispatch between HF tokenizer.json, GPT-2 encoder.json
// (+ vocab.bpe) and WordPiece vocab.txt, and the tokenizer.json reader. Every component or
// option that would change ids and is not implemented is rejected with Error(kUnsupported).
#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "core/checksum.h"
#include "core/error.h"
#include "tokenizer/bpe.h"
#include "tokenizer/wordpiece.h"

namespace shardkit::tok {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, path.string(), "cannot open tokenizer file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(ErrorCode::kIo, path.string(), "cannot read tokenizer file");
  return ss.str();
}

// Reading helpers that name the file and the JSON path in their errors.
class Json {
 public:
  explicit Json(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::kInput, source_, what);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(ErrorCode::kUnsupported, source_, what);
  }
  bool has(object o, std::string_view key) const {
    element e;
    return !o.at_key(key).get(e) && !e.is_null();
  }
  element get(object o, std::string_view key, const std::string& where) const {
    element e;
    if (o.at_key(key).get(e)) fail(where + ": missing \"" + std::string(key) + "\"");
    return e;
  }
  object obj(element e, const std::string& where) const {
    object o;
    if (e.get(o)) fail(where + " must be a JSON object");
    return o;
  }
  array arr(element e, const std::string& where) const {
    array a;
    if (e.get(a)) fail(where + " must be a JSON array");
    return a;
  }
  std::string str(element e, const std::string& where) const {
    std::string_view s;
    if (e.get(s)) fail(where + " must be a string");
    return std::string(s);
  }
  uint64_t uint(element e, const std::string& where) const {
    uint64_t v;
    if (e.get(v)) fail(where + " must be a non-negative integer");
    return v;
  }
  bool boolean(object o, std::string_view key, bool fallback, const std::string& where) const {
    element e;
    if (o.at_key(key).get(e) || e.is_null()) return fallback;
    bool b;
    if (e.get(b)) fail(where + "." + std::string(key) + " must be true or false");
    return b;
  }
  std::optional<std::string> opt_str(object o, std::string_view key,
                                     const std::string& where) const {
    element e;
    if (o.at_key(key).get(e) || e.is_null()) return std::nullopt;
    return str(e, where + "." + std::string(key));
  }
  std::string type_of(element e, const std::string& where) const {
    return str(get(obj(e, where), "type", where), where + ".type");
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

std::vector<std::string> vocab_by_id(const Json& j, element vocab_el, const std::string& where) {
  std::vector<std::string> vocab;
  object entries = j.obj(vocab_el, where);
  // Ids index a table: refuse sparse ids far beyond the number of entries.
  const uint64_t limit = uint64_t{entries.size()} * 4 + 65536;
  for (auto [key, value] : entries) {
    uint64_t id = j.uint(value, where + "[\"" + std::string(key) + "\"]");
    if (id >= limit)
      j.fail(where + ": id " + std::to_string(id) + " of '" + std::string(key) +
             "' is far beyond the vocabulary's " + std::to_string(entries.size()) + " entries");
    if (id >= vocab.size()) vocab.resize(id + 1);
    vocab[id] = std::string(key);
  }
  return vocab;
}

std::vector<AddedToken> read_added_tokens(const Json& j, object root, bool has_normalizer) {
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
    if (j.boolean(o, "single_word", false, where))
      j.unsupported(where + " ('" + a.content + "'): single_word added tokens are not supported");
    if (j.boolean(o, "normalized", false, where) && has_normalizer)
      j.unsupported(where + " ('" + a.content +
                    "'): normalized added tokens with a normalizer are not supported");
    out.push_back(std::move(a));
  }
  return out;
}

TemplatePiece template_piece(const Json& j, element e, object special_tokens,
                             const std::string& where) {
  object o = j.obj(e, where);
  TemplatePiece p;
  element inner;
  if (!o.at_key("SpecialToken").get(inner)) {
    object s = j.obj(inner, where + ".SpecialToken");
    std::string id = j.str(j.get(s, "id", where), where + ".SpecialToken.id");
    p.type_id = static_cast<uint32_t>(j.uint(j.get(s, "type_id", where), where + ".type_id"));
    element st;
    if (special_tokens.at_key(id).get(st))
      j.fail(where + ": special token '" + id + "' is not in special_tokens");
    object so = j.obj(st, "special_tokens." + id);
    for (element x :
         j.arr(j.get(so, "ids", "special_tokens." + id), "special_tokens." + id + ".ids"))
      p.ids.push_back(static_cast<uint32_t>(j.uint(x, "special_tokens." + id + ".ids[]")));
  } else if (!o.at_key("Sequence").get(inner)) {
    object s = j.obj(inner, where + ".Sequence");
    std::string id = j.str(j.get(s, "id", where), where + ".Sequence.id");
    p.is_sequence = true;
    if (id == "A") {
      p.sequence = 0;
    } else if (id == "B") {
      p.sequence = 1;
    } else {
      j.fail(where + ": sequence id must be A or B, not '" + id + "'");
    }
    p.type_id = static_cast<uint32_t>(j.uint(j.get(s, "type_id", where), where + ".type_id"));
  } else {
    j.fail(where + ": expected SpecialToken or Sequence");
  }
  return p;
}

// BERT's template: [CLS] A [SEP] for one text, [CLS] A [SEP] B [SEP] with type ids 0/1 for two.
void set_bert_template(PostProcessorConfig& pc, uint32_t cls, uint32_t sep) {
  auto special = [](uint32_t id, uint32_t type_id) {
    TemplatePiece p;
    p.ids = {id};
    p.type_id = type_id;
    return p;
  };
  auto seq = [](int s, uint32_t type_id) {
    TemplatePiece p;
    p.is_sequence = true;
    p.sequence = s;
    p.type_id = type_id;
    return p;
  };
  pc.has_template = true;
  pc.single = {special(cls, 0), seq(0, 0), special(sep, 0)};
  pc.pair = {special(cls, 0), seq(0, 0), special(sep, 0), seq(1, 1), special(sep, 1)};
}

void read_post_processor(const Json& j, element e, const std::string& where,
                         PostProcessorConfig& pc) {
  if (e.is_null()) return;
  std::string type = j.type_of(e, where);
  object o = j.obj(e, where);
  if (type == "BertProcessing") {
    auto pair_of = [&](const char* key) {
      array a = j.arr(j.get(o, key, where), where + "." + key);
      std::vector<element> v(a.begin(), a.end());
      if (v.size() != 2) j.fail(where + "." + key + " must be [token, id]");
      return static_cast<uint32_t>(j.uint(v[1], where + "." + key + "[1]"));
    };
    uint32_t sep = pair_of("sep"), cls = pair_of("cls");
    if (pc.has_template) j.unsupported(where + ": more than one template post-processor");
    set_bert_template(pc, cls, sep);
  } else if (type == "TemplateProcessing") {
    if (pc.has_template) j.unsupported(where + ": more than one template post-processor");
    object special_tokens = j.obj(j.get(o, "special_tokens", where), where + ".special_tokens");
    pc.has_template = true;
    size_t k = 0;
    for (element x : j.arr(j.get(o, "single", where), where + ".single"))
      pc.single.push_back(
          template_piece(j, x, special_tokens, where + ".single[" + std::to_string(k++) + "]"));
    k = 0;
    for (element x : j.arr(j.get(o, "pair", where), where + ".pair"))
      pc.pair.push_back(
          template_piece(j, x, special_tokens, where + ".pair[" + std::to_string(k++) + "]"));
  } else if (type == "ByteLevel") {
    pc.byte_level_trim = j.boolean(o, "trim_offsets", true, where);
    pc.byte_level_add_prefix_space = j.boolean(o, "add_prefix_space", true, where);
  } else if (type == "Sequence") {
    size_t k = 0;
    for (element x : j.arr(j.get(o, "processors", where), where + ".processors"))
      read_post_processor(j, x, where + ".processors[" + std::to_string(k++) + "]", pc);
  } else {
    j.unsupported(where + ": post-processor type '" + type + "' is not supported");
  }
}

void read_bpe_pre_tokenizer(const Json& j, element e, const std::string& where,
                            std::vector<PreTokenizerStep>& steps) {
  if (e.is_null())
    j.unsupported(where + ": BPE without a ByteLevel pre-tokenizer is not supported");
  std::string type = j.type_of(e, where);
  object o = j.obj(e, where);
  if (type == "Sequence") {
    size_t k = 0;
    for (element x : j.arr(j.get(o, "pretokenizers", where), where + ".pretokenizers"))
      read_bpe_pre_tokenizer(j, x, where + ".pretokenizers[" + std::to_string(k++) + "]", steps);
    return;
  }
  if (!steps.empty() && steps.back().kind == PreTokenizerStep::kByteLevel)
    j.unsupported(where + ": pre-tokenizers after ByteLevel are not supported");
  PreTokenizerStep step;
  if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::kByteLevel;
    step.add_prefix_space = j.boolean(o, "add_prefix_space", true, where);
    step.use_regex = j.boolean(o, "use_regex", true, where);
  } else if (type == "Split") {
    step.kind = PreTokenizerStep::kSplit;
    object pat = j.obj(j.get(o, "pattern", where), where + ".pattern");
    element v;
    std::string pattern;
    if (!pat.at_key("Regex").get(v)) {
      pattern = j.str(v, where + ".pattern.Regex");
    } else if (!pat.at_key("String").get(v)) {
      pattern = regex_escape(j.str(v, where + ".pattern.String"));
    } else {
      j.unsupported(where + ".pattern: only Regex and String patterns are supported");
    }
    if (pattern == kCl100kPattern) step.matcher = cl100k_match;
    try {
      step.regex = std::make_shared<Regex>(pattern);
    } catch (const Error& err) {
      j.unsupported(where + ": " + err.reason());
    }
    std::string behavior = j.str(j.get(o, "behavior", where), where + ".behavior");
    if (behavior == "Removed") {
      step.behavior = SplitBehavior::kRemoved;
    } else if (behavior == "Isolated") {
      step.behavior = SplitBehavior::kIsolated;
    } else if (behavior == "MergedWithPrevious") {
      step.behavior = SplitBehavior::kMergedWithPrevious;
    } else if (behavior == "MergedWithNext") {
      step.behavior = SplitBehavior::kMergedWithNext;
    } else {
      j.unsupported(where + ": Split behavior '" + behavior + "' is not supported");
    }
    step.invert = j.boolean(o, "invert", false, where);
  } else {
    j.unsupported(where + ": pre-tokenizer type '" + type + "' is not supported with BPE");
  }
  steps.push_back(std::move(step));
}

std::unique_ptr<Tokenizer> load_tokenizer_json(const Json& j, object root, uint64_t fingerprint) {
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
  std::vector<AddedToken> added = read_added_tokens(j, root, has_normalizer);

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
    if (post.byte_level_trim) j.unsupported("post_processor: ByteLevel with WordPiece");
    auto t = std::make_unique<WordPieceTokenizer>(std::move(c), j.source());
    std::optional<uint32_t> unk = t->unk_id();
    t->set_added_tokens(std::move(added));
    t->set_post_processor(std::move(post));
    t->set_fingerprint(fingerprint, "wordpiece");
    t->resolve_special_tokens(unk);
    return t;
  }
  if (model_type == "BPE" || (model_type.empty() && j.has(model, "merges"))) {
    BpeConfig c;
    c.vocab = vocab_by_id(j, j.get(model, "vocab", "model"), "model.vocab");
    size_t k = 0;
    for (element m : j.arr(j.get(model, "merges", "model"), "model.merges")) {
      std::string where = "model.merges[" + std::to_string(k++) + "]";
      if (m.type() == element_type::STRING) {
        std::string s = j.str(m, where);
        size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          j.fail(where + ": expected two tokens separated by one space");
        c.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else {
        array a = j.arr(m, where);
        std::vector<element> v(a.begin(), a.end());
        if (v.size() != 2) j.fail(where + ": expected [left, right]");
        c.merges.emplace_back(j.str(v[0], where + "[0]"), j.str(v[1], where + "[1]"));
      }
    }
    element d;
    if (!model.at_key("dropout").get(d) && !d.is_null()) {
      double p = 0;
      if (d.get(p) || p != 0.0) j.unsupported("model.dropout: BPE dropout is not supported");
    }
    if (j.boolean(model, "byte_fallback", false, "model"))
      j.unsupported("model.byte_fallback is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      auto v = j.opt_str(model, key, "model");
      if (v && !v->empty())
        j.unsupported(std::string("model.") + key + " '" + *v + "' is not supported");
    }
    c.ignore_merges = j.boolean(model, "ignore_merges", false, "model");
    c.unk_token = j.opt_str(model, "unk_token", "model");
    if (has_normalizer)
      j.unsupported("normalizer: type '" + j.type_of(normalizer_el, "normalizer") +
                    "' is not supported with BPE");
    read_bpe_pre_tokenizer(j, pre_el, "pre_tokenizer", c.steps);
    if (c.steps.empty() || c.steps.back().kind != PreTokenizerStep::kByteLevel)
      j.unsupported(
          "pre_tokenizer: BPE is supported as byte-level BPE only (no ByteLevel step found)");
    if (decoder_el.is_null()) {
      c.byte_level_decoder = false;
    } else {
      std::string type = j.type_of(decoder_el, "decoder");
      if (type != "ByteLevel")
        j.unsupported("decoder: type '" + type + "' is not supported with BPE");
    }
    auto t = std::make_unique<BpeTokenizer>(std::move(c), j.source());
    std::optional<uint32_t> unk = t->unk_id();
    t->set_added_tokens(std::move(added));
    t->set_post_processor(std::move(post));
    t->set_fingerprint(fingerprint, "bpe");
    t->resolve_special_tokens(unk);
    return t;
  }
  j.unsupported("model: type '" + model_type + "' is not supported (WordPiece and BPE are)");
}

std::unique_ptr<Tokenizer> load_gpt2(const Json& j, element root,
                                     const std::filesystem::path& merges_path,
                                     uint64_t fingerprint) {
  BpeConfig c;
  c.vocab = vocab_by_id(j, root, "encoder.json");
  std::string merges = read_all(merges_path);
  std::istringstream in(merges);
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("#version", 0) == 0 || line.empty()) continue;
    size_t sp = line.find(' ');
    if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
      throw Error(ErrorCode::kInput, merges_path.string() + ":" + std::to_string(lineno),
                  "expected two tokens separated by one space");
    c.merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
  }
  PreTokenizerStep step;
  step.kind = PreTokenizerStep::kByteLevel;
  step.add_prefix_space = false;
  step.use_regex = true;
  c.steps.push_back(std::move(step));
  auto t = std::make_unique<BpeTokenizer>(std::move(c), j.source());
  std::vector<AddedToken> added;
  if (auto id = t->token_to_id("<|endoftext|>"))
    added.push_back(AddedToken{"<|endoftext|>", *id, true, false, false});
  t->set_added_tokens(std::move(added));
  t->set_fingerprint(fingerprint, "bpe");
  t->resolve_special_tokens(std::nullopt);
  return t;
}

std::unique_ptr<Tokenizer> load_vocab_txt(const std::string& content, const std::string& source,
                                          const Tokenizer::LoadOptions& options,
                                          uint64_t fingerprint) {
  WordPieceConfig c;
  size_t pos = 0;
  while (pos < content.size()) {
    size_t nl = content.find('\n', pos);
    if (nl == std::string::npos) nl = content.size();
    std::string_view line(content.data() + pos, nl - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    c.vocab.emplace_back(line);
    pos = nl + 1;
  }
  c.normalizer.lowercase = options.lowercase;
  c.normalizer.strip_accents = options.strip_accents.value_or(options.lowercase);
  auto t = std::make_unique<WordPieceTokenizer>(std::move(c), source);
  std::optional<uint32_t> unk = t->unk_id();
  // As HF's BertWordPieceTokenizer: the BERT specials are added tokens, [CLS] A [SEP] (B [SEP]).
  std::vector<AddedToken> added;
  for (const char* name : {"[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"})
    if (auto id = t->token_to_id(name)) added.push_back(AddedToken{name, *id, true, false, false});
  auto cls = t->token_to_id("[CLS]"), sep = t->token_to_id("[SEP]");
  t->set_added_tokens(std::move(added));
  if (cls && sep) {
    PostProcessorConfig pc;
    set_bert_template(pc, *cls, *sep);
    t->set_post_processor(std::move(pc));
  }
  t->set_fingerprint(fingerprint, "wordpiece");
  t->resolve_special_tokens(unk);
  return t;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_file(const std::filesystem::path& path,
                                                const LoadOptions& options) {
  const std::string source = path.string();
  std::string content = read_all(path);
  size_t p = content.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (p != std::string::npos && content[p] == '{') {
    Json j(source);
    simdjson::dom::parser parser;
    element root;
    simdjson::padded_string padded(content);
    if (auto err = parser.parse(padded).get(root))
      j.fail(std::string("not valid JSON: ") + simdjson::error_message(err));
    object o = j.obj(root, "the document");
    // A tokenizer.json has a "model" object; an encoder.json maps tokens (even "model") to ids.
    element model;
    if (!o.at_key("model").get(model) && model.type() == element_type::OBJECT) {
      return load_tokenizer_json(j, o, xxh3_64(content.data(), content.size()));
    }
    // Merges: --merges, else vocab.bpe or merges.txt beside it, else NAME-vocab.bpe for a
    // NAME-encoder.json.
    std::filesystem::path merges;
    if (options.merges_path) {
      merges = *options.merges_path;
    } else {
      std::vector<std::filesystem::path> candidates = {path.parent_path() / "vocab.bpe",
                                                       path.parent_path() / "merges.txt"};
      std::string stem = path.filename().string();
      if (size_t k = stem.rfind("encoder.json"); k != std::string::npos && k > 0)
        candidates.push_back(path.parent_path() / (stem.substr(0, k) + "vocab.bpe"));
      for (const auto& c : candidates)
        if (merges.empty() && std::filesystem::exists(c)) merges = c;
      if (merges.empty())
        throw Error(ErrorCode::kIo, source,
                    "GPT-2 encoder.json needs its merges: no vocab.bpe or merges.txt beside it "
                    "(name it with --merges)");
    }
    std::string merges_content = read_all(merges);
    std::string both = content + '\0' + merges_content;
    return load_gpt2(j, root, merges, xxh3_64(both.data(), both.size()));
  }
  std::string keyed = content + '\0' + (options.lowercase ? "lower" : "cased") + '\0' +
                      (options.strip_accents.value_or(options.lowercase) ? "strip" : "keep");
  return load_vocab_txt(content, source, options, xxh3_64(keyed.data(), keyed.size()));
}

}  // namespace shardkit::tok
