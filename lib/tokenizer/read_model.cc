// model for the general pipeline: BPE over characters (byte_fallback, fuse_unk, prefix/suffix),
// Unigram and WordLevel.
#include "tokenizer/readers.h"

namespace shardkit::tok {

namespace {

std::vector<std::pair<std::string, std::string>> read_merges(const Json& j, object model) {
  std::vector<std::pair<std::string, std::string>> merges;
  size_t k = 0;
  for (element m : j.arr(j.get(model, "merges", "model"), "model.merges")) {
    std::string where = "model.merges[" + std::to_string(k++) + "]";
    if (m.type() == element_type::STRING) {
      std::string s = j.str(m, where);
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        j.fail(where + ": expected two tokens separated by one space");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else {
      array a = j.arr(m, where);
      std::vector<element> v(a.begin(), a.end());
      if (v.size() != 2) j.fail(where + ": expected [left, right]");
      merges.emplace_back(j.str(v[0], where + "[0]"), j.str(v[1], where + "[1]"));
    }
  }
  return merges;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_bpe_merges(const Json& j, object model) {
  return read_merges(j, model);
}

std::unique_ptr<Model> read_model(const Json& j, object model, const std::string& type,
                                  const CompiledTables& compiled) {
  if (type == "BPE") {
    BpeModelConfig c;
    if (compiled.empty()) {
      c.vocab = vocab_by_id(j, j.get(model, "vocab", "model"), "model.vocab");
      c.merges = read_merges(j, model);
    }
    c.compiled = compiled;
    element d;
    if (!model.at_key("dropout").get(d) && !d.is_null()) {
      double p = 0;
      if (d.get(p) || p != 0.0) j.unsupported("model.dropout: BPE dropout is not supported");
    }
    c.unk_token = j.opt_str(model, "unk_token", "model");
    c.fuse_unk = j.boolean(model, "fuse_unk", false, "model");
    c.byte_fallback = j.boolean(model, "byte_fallback", false, "model");
    c.ignore_merges = j.boolean(model, "ignore_merges", false, "model");
    c.continuing_subword_prefix =
        j.opt_str(model, "continuing_subword_prefix", "model").value_or("");
    c.end_of_word_suffix = j.opt_str(model, "end_of_word_suffix", "model").value_or("");
    return make_bpe_model(std::move(c), j.source());
  }
  if (type == "Unigram") {
    UnigramConfig c;
    size_t k = 0;
    for (element x : j.arr(j.get(model, "vocab", "model"), "model.vocab")) {
      std::string where = "model.vocab[" + std::to_string(k++) + "]";
      array a = j.arr(x, where);
      std::vector<element> v(a.begin(), a.end());
      if (v.size() != 2) j.fail(where + ": expected [piece, score]");
      c.pieces.push_back(j.str(v[0], where + "[0]"));
      c.scores.push_back(j.number(v[1], where + "[1]"));
    }
    element u;
    if (!model.at_key("unk_id").get(u) && !u.is_null())
      c.unk_id = static_cast<uint32_t>(j.uint(u, "model.unk_id"));
    c.byte_fallback = j.boolean(model, "byte_fallback", false, "model");
    return make_unigram_model(std::move(c), j.source());
  }
  if (type == "WordLevel") {
    return make_word_level_model(vocab_by_id(j, j.get(model, "vocab", "model"), "model.vocab"),
                                 j.opt_str(model, "unk_token", "model"), j.source());
  }
  j.unsupported("model: type '" + type +
                "' is not supported (WordPiece, BPE, Unigram and WordLevel are)");
}

}  // namespace shardkit::tok
