// What a dataset's records mean: the one typed contract between the writers (shardify, merge, a
// program's own DatasetWriter) and every reader (loader, torch adapter, shard-inspect, Python,
// the examples). The schema says how records are laid out; DatasetInfo says what each field is
// for, which tokenizer made the ids (with its special ids), the task and its parameters, the
// label names, where the data came from and what the conversion counted.
//
// Stored as the manifest's "dataset" object (format_version 2, format/SPEC.md "Dataset info").
// Manifests of version 1 kept these facts as loose metadata keys; from_v1_metadata() reads them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/convert_stats.h"
#include "core/schema.h"
#include "core/task_kind.h"
#include "core/tokenizer_info.h"
#include "format/shard_format.h"

namespace shardkit {

// What a stored field is for. Readers look fields up by role, never by a hard-coded name.
enum class FieldRole : uint8_t {
  kTokenIds,            // the token ids of a row, padded after `length` ([L])
  kLength,              // real tokens in the row (the rest is padding)
  kTokenTypeIds,        // segment ids ([L])
  kFirstSegmentLength,  // tokens of the first segment: token_type_ids derive from it
  kPositionIds,         // positions that restart at each packed document ([L])
  kLabel,               // class index
  kStartPosition,       // QA: answer start token (0 when the window has no answer)
  kEndPosition,         // QA: answer end token
  kExampleIndex,        // QA: which question of the source a window belongs to (metadata)
  kSourceIndex,         // QA: which input file (metadata)
  kLossMask,            // sft: bit k set when token k is trained on (labels derive from it)
  kDocumentStarts,      // packed sft: bit k set when token k starts a conversation
  kOther,               // anything a program stores for itself
};

// "token_ids", "length", "token_type_ids", "position_ids", "label", "start_position",
// "end_position", "example_index", "source_index", "loss_mask", "document_starts", "other".
std::string_view field_role_name(FieldRole role);
std::optional<FieldRole> parse_field_role(std::string_view name);
// Whether batches carry the field by default: model inputs and targets do, provenance and
// bookkeeping (length, example and source index, sft's loss mask and document starts, which
// readers turn into labels and boundaries) only when asked for.
bool is_model_field(FieldRole role);

struct TaskInfo {
  std::optional<Task> type;  // absent for datasets not written by shardify
  uint32_t max_len = 0;
  // The id stored after `length` in every row: the tokenizer's pad id, else 0 (GPT-2 has none).
  uint32_t padding_id = 0;
  // lm: documents packed into rows, each followed by separator_id. sft: whole conversations
  // packed into rows, their starts stored (FieldRole::kDocumentStarts).
  bool packed = false;
  std::optional<uint32_t> separator_id;
  // pair: how two texts were cut to fit (longest first); sft: dropped or cut on the left.
  std::optional<Truncation> truncation;
  // sft: which tokens are trained on; and the XXH3-64 (16 hex digits) of the chat template
  // that rendered the conversations, empty for prompt + response + eos.
  std::optional<TrainOn> train_on;
  std::string chat_template;
  // qa: context windows.
  uint32_t doc_stride = 0;
  uint32_t max_query_len = 0;
  bool operator==(const TaskInfo&) const = default;
};

struct LabelInfo {
  std::vector<std::string> names;  // index -> name; empty when the task has no labels
  std::string order;               // "given", "numeric" or "lexicographic"
  bool operator==(const LabelInfo&) const = default;
};

struct SourceFile {
  std::string path;
  uint64_t bytes = 0;
  bool operator==(const SourceFile&) const = default;
};

struct SourceInfo {
  std::string format;  // "jsonl", "text", "tsv", "csv", "squad", "parquet", "rows" (Python)
  // The input columns read, by purpose: {"text": "premise", "pair": "hypothesis", ...}.
  std::map<std::string, std::string> columns;
  std::string doc_sep;  // text input: how documents are separated
  bool quoting = true;  // TSV/CSV
  std::string where;    // Parquet: the DuckDB SQL predicate rows had to satisfy (--where)
  std::vector<SourceFile> files;
  bool operator==(const SourceInfo&) const = default;
};

// Which slice of the inputs a `shardify --part i/N` dataset holds, until merged.
struct PartInfo {
  uint32_t index = 0;
  uint32_t count = 1;
  uint64_t first_file = 0;
  uint64_t end_file = 0;
  // How the part's blocks were written, so that merge re-encodes them as one run would have.
  // Parts written before these were recorded read as the converter's defaults.
  uint64_t shard_bytes = 256ull << 20;
  int zstd_level = 3;
  format::BlockFilter filter = format::BlockFilter::kNone;
  bool operator==(const PartInfo&) const = default;
};

struct FieldInfo {
  std::string name;
  FieldRole role = FieldRole::kOther;
  bool operator==(const FieldInfo&) const = default;
};

struct DatasetInfo {
  TaskInfo task;
  std::vector<FieldInfo> fields;  // one per schema field, in schema order
  TokenizerInfo tokenizer;
  LabelInfo labels;
  SourceInfo source;
  std::optional<ConvertStats> stats;
  std::optional<PartInfo> part;

  // The name of the field with `role`, if any.
  const std::string* field(FieldRole role) const;
  std::optional<FieldRole> role_of(std::string_view field_name) const;
  // Throws Error(kCorrupt, where) unless `fields` names exactly the schema's fields, in order.
  void check_against(const Schema& schema, const std::string& where) const;

  // Roles from the names shardify and HF use (input_ids, length, labels, ...), for schemas
  // written without a DatasetInfo.
  static DatasetInfo infer(const Schema& schema);
  // The facts a format_version 1 manifest kept as metadata keys (task, tokenizer, labels,
  // source, stats, part); missing keys leave their part empty.
  static DatasetInfo from_v1_metadata(const std::map<std::string, std::string>& metadata,
                                      const Schema& schema, const std::string& where);

  // Compact JSON text; from_json() reads it back (Error(kCorrupt, where) when malformed).
  std::string to_json() const;
  static DatasetInfo from_json(std::string_view json, const std::string& where);

  bool operator==(const DatasetInfo&) const = default;
};

}  // namespace shardkit
