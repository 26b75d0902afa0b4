// The converter: input files -> examples -> records (on `threads` workers, consumed in input
// order) -> a published dataset. Byte-identical output for any thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/convert_stats.h"
#include "format/shard_format.h"
#include "shardify/encoded_batch.h"
#include "shardify/example_reader.h"
#include "shardify/input_files.h"
#include "shardify/row_reader.h"
#include "shardify/task.h"

namespace shardkit::shardify {

enum class OnError { kFail, kSkip };

struct ConvertOptions {
  std::vector<std::string> inputs;
  // Rows handed in by a program instead of `inputs` (the Python module's write_dataset): one
  // input named `rows_name`, read by the JSONL rules. Each call starts a feed at the first row;
  // cls/pair without `labels` call it twice (the label pre-pass, then the conversion).
  std::function<std::unique_ptr<RowFeed>()> rows;
  std::string rows_name = "rows";
  std::optional<InputFormat> format;  // inferred from the first file's name when absent
  std::string text_field = "text";
  std::string pair_field = "text_pair";
  std::string label_field = "label";
  // --task qa with JSONL input (HF datasets' SQuAD layout, one question per line).
  std::string context_field = "context";
  std::string question_field = "question";
  std::string answers_field = "answers";
  // --task sft: prompt/response fields, or (task.messages) a messages field.
  std::string prompt_field = "prompt";
  std::string response_field = "response";
  std::string messages_field = "messages";
  DocSeparator doc_separator = DocSeparator::kFile;
  bool quoting = true;  // TSV/CSV
  std::string where;    // Parquet: DuckDB SQL predicate over the file's columns (--where)
  TaskOptions task;
  std::string tokenizer_path;
  std::string out;
  std::optional<std::vector<std::string>> labels;  // in index order (--labels a,b,c)
  unsigned threads = 0;                            // 0: all cores
  OnError on_error = OnError::kFail;
  // A conversion that writes no record fails (a wrong --text-field, an empty file) unless this.
  bool allow_empty = false;
  std::optional<PartSpec> part;
  bool force = false;
  int zstd_level = 3;
  uint32_t block_bytes = 256 * 1024;
  uint64_t shard_bytes = 256ull << 20;
  // Token ids compress better without the byte-plane filter (BENCHMARKS.md, shardify).
  format::BlockFilter filter = format::BlockFilter::kNone;
  size_t errors_reported = 5;  // how many skipped examples' errors the summary lists
  // sft with --chat-template: a conversation rendered to more bytes is an error
  // (--max-render-bytes); 0: 32 x --max-len, at least 64 KiB (resolve()).
  uint64_t max_render_bytes = 0;
  // sft with --chat-template: seconds one conversation may take to render (--render-timeout).
  double render_timeout = 10;
  // The options a front-end set, by name (convert_option_table() records them): one given for a
  // task it does not apply to is refused even at its default value.
  std::vector<std::string> options_given;
  // Set by the caller to stop the conversion (write_dataset on Ctrl-C): waits on chat template
  // renderers end within 0.1 s with Error(kTimeout).
  const std::atomic<bool>* cancel = nullptr;
};

struct ConvertProgress {
  uint64_t records = 0;
  uint64_t input_bytes_done = 0;  // of input_bytes_total (compressed bytes for compressed files)
  uint64_t input_bytes_total = 0;
  double seconds = 0;               // since the run started (the second run's own, if any)
  bool read_again_checked = false;  // the second run (ConvertResult::read_again_checked)
};

struct ConvertResult {
  ConvertStats stats;
  uint64_t files = 0;
  uint64_t bytes_in = 0;             // text bytes read (decompressed)
  uint64_t bytes_in_compressed = 0;  // the input files' sizes on disk (= bytes_in if plain)
  uint64_t bytes_out = 0;            // the dataset's shard bytes
  double seconds = 0;
  std::vector<std::string> first_errors;  // "file:line: reason"
  // What the run did that may not be what was meant, and went on: an input file listed twice.
  std::vector<std::string> notes;
  std::string out;
  // --on-error skip met a compressed file damaged inside a member or frame: the inputs were read
  // again, each checked before use, so that none of the damaged member's text is kept.
  bool read_again_checked = false;

  std::string to_json() const;
  std::string to_text() const;
};

ConvertResult convert(const ConvertOptions& options,
                      const std::function<void(const ConvertProgress&)>& progress = {});

}  // namespace shardkit::shardify
