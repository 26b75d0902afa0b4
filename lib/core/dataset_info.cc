#include "core/dataset_info.h"

#include <algorithm>
#include <array>

#include "core/block_codec.h"
#include "core/dataset_info_json.h"
#include "core/error.h"

namespace shardkit {
namespace {

using nlohmann::ordered_json;
using simdjson::dom::element;

constexpr std::array<std::pair<FieldRole, std::string_view>, 13> kRoleNames{{
    {FieldRole::kTokenIds, "token_ids"},
    {FieldRole::kLength, "length"},
    {FieldRole::kTokenTypeIds, "token_type_ids"},
    {FieldRole::kFirstSegmentLength, "first_segment_length"},
    {FieldRole::kPositionIds, "position_ids"},
    {FieldRole::kLabel, "label"},
    {FieldRole::kStartPosition, "start_position"},
    {FieldRole::kEndPosition, "end_position"},
    {FieldRole::kExampleIndex, "example_index"},
    {FieldRole::kSourceIndex, "source_index"},
    {FieldRole::kLossMask, "loss_mask"},
    {FieldRole::kDocumentStarts, "document_starts"},
    {FieldRole::kOther, "other"},
}};

// The field names shardify writes (HF's names), for schemas that carry no DatasetInfo.
constexpr std::array<std::pair<std::string_view, FieldRole>, 11> kConventionalNames{{
    {"input_ids", FieldRole::kTokenIds},
    {"length", FieldRole::kLength},
    {"token_type_ids", FieldRole::kTokenTypeIds},
    {"position_ids", FieldRole::kPositionIds},
    {"labels", FieldRole::kLabel},
    {"start_positions", FieldRole::kStartPosition},
    {"end_positions", FieldRole::kEndPosition},
    {"example_index", FieldRole::kExampleIndex},
    {"source_index", FieldRole::kSourceIndex},
    {"loss_mask", FieldRole::kLossMask},
    {"document_starts", FieldRole::kDocumentStarts},
}};

constexpr std::array<std::pair<const char*, std::optional<uint32_t> SpecialIds::*>, 7> kSpecials{{
    {"pad", &SpecialIds::pad},
    {"unk", &SpecialIds::unk},
    {"cls", &SpecialIds::cls},
    {"sep", &SpecialIds::sep},
    {"mask", &SpecialIds::mask},
    {"bos", &SpecialIds::bos},
    {"eos", &SpecialIds::eos},
}};

// Reads typed values out of a parsed object; any missing or mistyped required key is corrupt.
class Reader {
 public:
  Reader(element e, std::string where, std::string what)
      : e_(e), where_(std::move(where)), what_(std::move(what)) {
    if (!e_.is_object()) fail("is not an object");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorCode::kCorrupt, where_, what_ + " " + why);
  }
  bool has(const char* key) const { return !e_.get_object().value_unsafe()[key].error(); }
  element at(const char* key) const {
    element v;
    if (e_.get_object().value_unsafe()[key].get(v)) fail(std::string("lacks '") + key + "'");
    return v;
  }
  uint64_t u64(const char* key) const {
    uint64_t v;
    if (at(key).get_uint64().get(v)) fail(std::string("'") + key + "' is not an unsigned integer");
    return v;
  }
  uint32_t u32(const char* key) const {
    const uint64_t v = u64(key);
    if (v > UINT32_MAX) fail(std::string("'") + key + "' is out of range");
    return static_cast<uint32_t>(v);
  }
  std::string str(const char* key) const {
    std::string_view v;
    if (at(key).get_string().get(v)) fail(std::string("'") + key + "' is not a string");
    return std::string(v);
  }
  bool boolean(const char* key) const {
    bool v;
    if (at(key).get_bool().get(v)) fail(std::string("'") + key + "' is not true or false");
    return v;
  }
  std::optional<uint32_t> opt_u32(const char* key) const {
    if (!has(key)) return std::nullopt;
    return u32(key);
  }
  std::string opt_str(const char* key) const { return has(key) ? str(key) : std::string(); }
  // An enum stored by name (core/task_kind.h); a name this version does not know is refused.
  template <class E>
  std::optional<E> opt_named(const char* key, std::optional<E> (*named)(std::string_view)) const {
    if (!has(key)) return std::nullopt;
    const std::string text = str(key);
    if (auto v = named(text)) return v;
    fail(std::string("'") + key + "' is '" + text + "', which this version does not know");
  }
  Reader object(const char* key) const { return Reader(at(key), where_, what_ + " '" + key + "'"); }
  simdjson::dom::array array(const char* key) const {
    simdjson::dom::array a;
    if (at(key).get_array().get(a)) fail(std::string("'") + key + "' is not an array");
    return a;
  }
  simdjson::dom::object raw_object() const { return e_.get_object().value_unsafe(); }
  const std::string& where() const { return where_; }

 private:
  element e_;
  std::string where_;
  std::string what_;
};

ordered_json special_json(const SpecialIds& s) {
  ordered_json j = ordered_json::object();
  for (const auto& [name, member] : kSpecials)
    if (s.*member) j[name] = *(s.*member);
  return j;
}

SpecialIds special_from(const Reader& r) {
  SpecialIds s;
  for (const auto& [name, member] : kSpecials) s.*member = r.opt_u32(name);
  return s;
}

TokenizerInfo tokenizer_from(const Reader& r, const char* specials_key) {
  TokenizerInfo t;
  t.type = r.str("type");
  t.vocab_size = r.u64("vocab_size");
  t.fingerprint = r.str("fingerprint");
  if (r.has(specials_key)) t.special = special_from(r.object(specials_key));
  return t;
}

LabelInfo labels_from(const Reader& r) {
  LabelInfo l;
  for (element name : r.array("names")) {
    std::string_view v;
    if (name.get_string().get(v)) r.fail("'names' holds a non-string");
    l.names.emplace_back(v);
  }
  l.order = r.opt_str("order");
  return l;
}

std::vector<SourceFile> files_from(const Reader& r) {
  std::vector<SourceFile> files;
  for (element f : r.array("files")) {
    Reader fr(f, r.where(), "source file");
    files.push_back({fr.str("path"), fr.u64("bytes")});
  }
  return files;
}

PartInfo part_from(const Reader& r) {
  PartInfo p;
  p.index = r.u32("index");
  p.count = r.u32("count");
  if (p.count == 0 || p.index >= p.count) r.fail("index is not below count");
  p.first_file = r.u64("first_file");
  p.end_file = r.u64("end_file");
  if (r.has("shard_bytes")) p.shard_bytes = r.u64("shard_bytes");
  if (r.has("zstd_level")) {
    const uint32_t level = r.u32("zstd_level");
    if (level < 1 || level > 22) r.fail("'zstd_level' is not in 1..22");
    p.zstd_level = static_cast<int>(level);
  }
  if (r.has("filter")) {
    const auto filter = parse_block_filter(r.str("filter"));
    if (!filter) r.fail("'filter' is neither none nor byteplanes");
    p.filter = *filter;
  }
  return p;
}

}  // namespace

std::string_view field_role_name(FieldRole role) {
  for (const auto& [r, name] : kRoleNames)
    if (r == role) return name;
  return "other";
}

std::optional<FieldRole> parse_field_role(std::string_view name) {
  for (const auto& [r, n] : kRoleNames)
    if (n == name) return r;
  return std::nullopt;
}

bool is_model_field(FieldRole role) {
  switch (role) {
    case FieldRole::kLength:
    case FieldRole::kFirstSegmentLength:
    case FieldRole::kExampleIndex:
    case FieldRole::kSourceIndex:
    case FieldRole::kLossMask:
    case FieldRole::kDocumentStarts:
      return false;
    default:
      return true;
  }
}

std::vector<uint32_t> SpecialIds::all() const {
  std::vector<uint32_t> ids;
  for (const auto& [name, member] : kSpecials)
    if (this->*member) ids.push_back(*(this->*member));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

const std::string* DatasetInfo::field(FieldRole role) const {
  for (const FieldInfo& f : fields)
    if (f.role == role) return &f.name;
  return nullptr;
}

std::optional<FieldRole> DatasetInfo::role_of(std::string_view field_name) const {
  for (const FieldInfo& f : fields)
    if (f.name == field_name) return f.role;
  return std::nullopt;
}

void DatasetInfo::check_against(const Schema& schema, const std::string& where) const {
  const auto& sf = schema.fields();
  bool same = sf.size() == fields.size();
  for (size_t i = 0; same && i < sf.size(); ++i) same = sf[i].name == fields[i].name;
  if (!same)
    throw Error(ErrorCode::kCorrupt, where,
                "dataset info: 'fields' does not name the schema's fields in order");
  for (size_t i = 0; i < fields.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fields[i].role == fields[j].role && fields[i].role != FieldRole::kOther)
        throw Error(ErrorCode::kCorrupt, where,
                    "dataset info: two fields have the role '" +
                        std::string(field_role_name(fields[i].role)) + "'");
}

DatasetInfo DatasetInfo::infer(const Schema& schema) {
  DatasetInfo info;
  for (const Field& f : schema.fields()) {
    FieldRole role = FieldRole::kOther;
    for (const auto& [name, r] : kConventionalNames)
      if (f.name == name) role = r;
    info.fields.push_back({f.name, role});
  }
  return info;
}

DatasetInfo DatasetInfo::from_v1_metadata(const std::map<std::string, std::string>& metadata,
                                          const Schema& schema, const std::string& where) {
  DatasetInfo info = infer(schema);
  simdjson::dom::parser parser;
  auto parsed = [&](const char* key) -> std::optional<Reader> {
    auto it = metadata.find(key);
    if (it == metadata.end()) return std::nullopt;
    element e;
    if (parser.parse(it->second).get(e))
      throw Error(ErrorCode::kCorrupt, where, std::string("metadata '") + key + "' is not JSON");
    return Reader(e, where, std::string("metadata '") + key + "'");
  };
  // Each metadata value is parsed into the same parser, so each is used before the next parse.
  if (auto t = parsed("tokenizer")) info.tokenizer = tokenizer_from(*t, "special_tokens");
  if (auto t = parsed("task")) {
    info.task.type = t->opt_named("name", task_named);
    info.task.max_len = t->u32("max_len");
    info.task.padding_id = t->opt_u32("pad_id").value_or(0);
    info.task.packed = t->has("pack") && t->boolean("pack");
    info.task.separator_id = t->opt_u32("separator_id");
    info.task.truncation = t->opt_named("truncation", truncation_named);
    info.task.doc_stride = t->opt_u32("doc_stride").value_or(0);
    info.task.max_query_len = t->opt_u32("max_query_len").value_or(0);
  }
  if (auto l = parsed("labels")) info.labels = labels_from(*l);
  if (auto s = parsed("source")) {
    info.source.format = s->str("format");
    for (const char* key : {"text_field", "pair_field", "label_field", "context_field",
                            "question_field", "answers_field"})
      if (s->has(key)) {
        std::string purpose(key);
        info.source.columns[purpose.substr(0, purpose.size() - 6)] = s->str(key);
      }
    info.source.doc_sep = s->opt_str("doc_sep");
    info.source.quoting = !s->has("quoting") || s->boolean("quoting");
    info.source.files = files_from(*s);
  }
  if (auto it = metadata.find("stats"); it != metadata.end()) {
    element e;
    if (parser.parse(it->second).get(e))
      throw Error(ErrorCode::kCorrupt, where, "metadata 'stats' is not JSON");
    info.stats = convert_stats_from(e, where);
  }
  if (auto p = parsed("part")) info.part = part_from(*p);
  return info;
}

ordered_json to_json_value(const ConvertStats& s) {
  ordered_json j;
  j["examples"] = s.examples;
  j["records"] = s.records;
  j["tokens"] = s.tokens;
  j["truncated"] = s.truncated;
  j["skipped"] = s.skipped;
  j["qa_unanswerable_windows"] = s.qa_unanswerable_windows;
  // sft's counts only where they are counted, so that other datasets keep their manifests.
  if (s.dropped) j["dropped"] = s.dropped;
  if (s.loss_tokens) j["loss_tokens"] = s.loss_tokens;
  j["length_histogram_log2"] = s.length_histogram;
  return j;
}

ConvertStats convert_stats_from(element e, const std::string& where) {
  Reader r(e, where, "conversion stats");
  ConvertStats s;
  s.examples = r.u64("examples");
  s.records = r.u64("records");
  s.tokens = r.u64("tokens");
  s.truncated = r.u64("truncated");
  s.skipped = r.u64("skipped");
  s.qa_unanswerable_windows = r.u64("qa_unanswerable_windows");
  if (r.has("dropped")) s.dropped = r.u64("dropped");
  if (r.has("loss_tokens")) s.loss_tokens = r.u64("loss_tokens");
  auto hist = r.array("length_histogram_log2");
  if (hist.size() != kLengthBuckets) r.fail("'length_histogram_log2' has the wrong length");
  size_t i = 0;
  for (element v : hist)
    if (v.get_uint64().get(s.length_histogram[i++])) r.fail("histogram holds a non-count");
  return s;
}

ordered_json to_json_value(const DatasetInfo& info) {
  ordered_json j;
  ordered_json& task = j["task"] = ordered_json::object();
  if (info.task.type) {
    task["name"] = task_name(*info.task.type);
    task["max_len"] = info.task.max_len;
    task["padding_id"] = info.task.padding_id;
    if (info.task.packed) task["packed"] = true;
    if (info.task.separator_id) task["separator_id"] = *info.task.separator_id;
    if (info.task.truncation) task["truncation"] = truncation_name(*info.task.truncation);
    if (info.task.train_on) task["train_on"] = train_on_name(*info.task.train_on);
    if (!info.task.chat_template.empty()) task["chat_template"] = info.task.chat_template;
    if (info.task.type == Task::kQa) {
      task["doc_stride"] = info.task.doc_stride;
      task["max_query_len"] = info.task.max_query_len;
    }
  }
  ordered_json& fields = j["fields"] = ordered_json::object();
  for (const FieldInfo& f : info.fields) fields[f.name] = field_role_name(f.role);
  if (!info.tokenizer.type.empty()) {
    ordered_json& t = j["tokenizer"];
    t["type"] = info.tokenizer.type;
    t["vocab_size"] = info.tokenizer.vocab_size;
    t["fingerprint"] = info.tokenizer.fingerprint;
    t["special_ids"] = special_json(info.tokenizer.special);
  }
  if (!info.labels.names.empty()) {
    j["labels"]["names"] = info.labels.names;
    j["labels"]["order"] = info.labels.order;
  }
  if (!info.source.format.empty()) {
    ordered_json& s = j["source"];
    s["format"] = info.source.format;
    s["columns"] = info.source.columns;
    if (!info.source.doc_sep.empty()) s["doc_sep"] = info.source.doc_sep;
    if (!info.source.quoting) s["quoting"] = false;
    if (!info.source.where.empty()) s["where"] = info.source.where;
    ordered_json& files = s["files"] = ordered_json::array();
    for (const SourceFile& f : info.source.files)
      files.push_back(ordered_json{{"path", f.path}, {"bytes", f.bytes}});
  }
  if (info.stats) j["stats"] = to_json_value(*info.stats);
  if (info.part)
    j["part"] = ordered_json{{"index", info.part->index},
                             {"count", info.part->count},
                             {"first_file", info.part->first_file},
                             {"end_file", info.part->end_file},
                             {"shard_bytes", info.part->shard_bytes},
                             {"zstd_level", info.part->zstd_level},
                             {"filter", block_filter_name(info.part->filter)}};
  return j;
}

DatasetInfo dataset_info_from(element e, const std::string& where) {
  Reader r(e, where, "dataset info");
  DatasetInfo info;
  Reader task = r.object("task");
  if (task.has("name")) {
    info.task.type = task.opt_named("name", task_named);
    info.task.max_len = task.u32("max_len");
    info.task.padding_id = task.u32("padding_id");
    info.task.packed = task.has("packed") && task.boolean("packed");
    info.task.separator_id = task.opt_u32("separator_id");
    info.task.truncation = task.opt_named("truncation", truncation_named);
    info.task.train_on = task.opt_named("train_on", train_on_named);
    info.task.chat_template = task.opt_str("chat_template");
    info.task.doc_stride = task.opt_u32("doc_stride").value_or(0);
    info.task.max_query_len = task.opt_u32("max_query_len").value_or(0);
  }
  for (auto [name, role] : r.object("fields").raw_object()) {
    std::string_view role_name;
    if (role.get_string().get(role_name)) r.fail("'fields' maps a name to a non-string");
    auto parsed = parse_field_role(role_name);
    if (!parsed) r.fail("names an unknown field role '" + std::string(role_name) + "'");
    info.fields.push_back({std::string(name), *parsed});
  }
  if (r.has("tokenizer")) info.tokenizer = tokenizer_from(r.object("tokenizer"), "special_ids");
  if (r.has("labels")) info.labels = labels_from(r.object("labels"));
  if (r.has("source")) {
    Reader s = r.object("source");
    info.source.format = s.str("format");
    for (auto [purpose, column] : s.object("columns").raw_object()) {
      std::string_view v;
      if (column.get_string().get(v)) s.fail("'columns' maps a purpose to a non-string");
      info.source.columns[std::string(purpose)] = std::string(v);
    }
    info.source.doc_sep = s.opt_str("doc_sep");
    info.source.quoting = !s.has("quoting") || s.boolean("quoting");
    info.source.where = s.opt_str("where");
    info.source.files = files_from(s);
  }
  if (r.has("stats")) info.stats = convert_stats_from(r.at("stats"), where);
  if (r.has("part")) info.part = part_from(r.object("part"));
  return info;
}

std::string DatasetInfo::to_json() const { return to_json_value(*this).dump(); }

DatasetInfo DatasetInfo::from_json(std::string_view json, const std::string& where) {
  simdjson::dom::parser parser;
  element e;
  if (parser.parse(json.data(), json.size()).get(e))
    throw Error(ErrorCode::kCorrupt, where, "dataset info is not valid JSON");
  return dataset_info_from(e, where);
}

}  // namespace shardkit
