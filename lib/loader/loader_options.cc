#include "loader/loader_options.h"

namespace shardkit::loader {

const char* partition_name(Partition partition) {
  return partition == Partition::kNodes ? "nodes" : "rows";
}

const char* on_corrupt_name(OnCorrupt on_corrupt) {
  return on_corrupt == OnCorrupt::kSkip ? "skip" : "fail";
}

LoaderOptions with_dataset_defaults(LoaderOptions o, const DatasetInfo& info) {
  auto role = [&](FieldRole r) {
    const std::string* name = info.field(r);
    return name ? *name : std::string();
  };
  if (o.sequence_field.empty()) o.sequence_field = role(FieldRole::kTokenIds);
  if (o.length_field.empty()) o.length_field = role(FieldRole::kLength);
  if (!o.documents.separator_id && info.task.packed)
    o.documents.separator_id = info.task.separator_id;
  if (o.documents.starts_field.empty()) o.documents.starts_field = role(FieldRole::kDocumentStarts);
  MlmOptions& m = o.mlm;
  if (m.input_field.empty()) m.input_field = role(FieldRole::kTokenIds);
  const TokenizerInfo& t = info.tokenizer;
  if (m.mask_token_id < 0 && t.special.mask) m.mask_token_id = *t.special.mask;
  if (m.vocab_size == 0) m.vocab_size = t.vocab_size;
  if (m.special_ids.empty())
    for (uint32_t id : t.special.all()) m.special_ids.push_back(id);
  return o;
}

}  // namespace shardkit::loader
