// post_processor: BertProcessing, TemplateProcessing, RobertaProcessing, ByteLevel, Sequence.
#include "tokenizer/readers.h"

namespace shardkit::tok {

namespace {

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

}  // namespace

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
  } else if (type == "RobertaProcessing") {
    auto pair_of = [&](const char* key) {
      array a = j.arr(j.get(o, key, where), where + "." + key);
      std::vector<element> v(a.begin(), a.end());
      if (v.size() != 2) j.fail(where + "." + key + " must be [token, id]");
      return static_cast<uint32_t>(j.uint(v[1], where + "." + key + "[1]"));
    };
    uint32_t sep = pair_of("sep"), cls = pair_of("cls");
    if (pc.has_template) j.unsupported(where + ": more than one template post-processor");
    auto special = [](uint32_t id) {
      TemplatePiece p;
      p.ids = {id};
      return p;
    };
    auto seq = [](int s) {
      TemplatePiece p;
      p.is_sequence = true;
      p.sequence = s;
      return p;
    };
    pc.has_template = true;
    pc.single = {special(cls), seq(0), special(sep)};
    pc.pair = {special(cls), seq(0), special(sep), special(sep), seq(1), special(sep)};
    pc.roberta_trim = j.boolean(o, "trim_offsets", true, where);
    pc.roberta_add_prefix_space = j.boolean(o, "add_prefix_space", true, where);
  } else if (type == "Sequence") {
    size_t k = 0;
    for (element x : j.arr(j.get(o, "processors", where), where + ".processors"))
      read_post_processor(j, x, where + ".processors[" + std::to_string(k++) + "]", pc);
  } else {
    j.unsupported(where + ": post-processor type '" + type + "' is not supported");
  }
}

}  // namespace shardkit::tok
