// Readers for the input formats: JSONL, plain text, TSV/CSV, SQuAD JSON and Parquet.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "shardify/byte_source.h"
#include "shardify/example.h"

namespace shardkit::shardify {

enum class InputFormat { kJsonl, kText, kTsv, kCsv, kSquad, kParquet };

// "jsonl", "text", "tsv", "csv", "squad", "parquet"; throws Error(kInvalidArgument) otherwise.
InputFormat parse_input_format(const std::string& name);
const char* input_format_name(InputFormat format);
// From the file name, ignoring a .gz/.zst suffix: .jsonl/.ndjson, .txt, .tsv, .csv, .json,
// .parquet.
std::optional<InputFormat> infer_input_format(const std::filesystem::path& path);
// Whether this build reads Parquet (DuckDB was found at build time).
bool parquet_input_available();

// What one plain-text document is: a whole file (the default: a .txt is usually one text, a
// book or an article, whose newlines are formatting), a line, or a blank-line separated block.
enum class DocSeparator { kFile, kLine, kBlankLine };

// "file", "line", "blank"; throws Error(kInvalidArgument) otherwise.
DocSeparator parse_doc_separator(const std::string& name);
const char* doc_separator_name(DocSeparator separator);

struct ReaderOptions {
  InputFormat format = InputFormat::kJsonl;
  std::string text_field = "text";  // JSONL, Parquet: dotted path; TSV/CSV: column name
  std::string pair_field;           // empty: no second text
  std::string label_field;          // empty: no label
  // JSONL, sft: a dotted path to an OpenAI-style [{role, content}] array (Example::messages);
  // empty: prompt/response in text_field/pair_field.
  std::string messages_field;
  DocSeparator doc_separator = DocSeparator::kFile;
  bool quoting = true;       // TSV/CSV: RFC 4180 quotes; false: quotes are ordinary characters
  bool labels_only = false;  // the label pre-pass: skip texts
  // JSONL for --task qa, one question per line in HF datasets' SQuAD layout: text_field is the
  // context, answers_field {"text": [...], "answer_start": [...]} (or a SQuAD-style list of
  // {"text", "answer_start"}); no answers means unanswerable.
  bool qa = false;
  std::string question_field = "question";
  std::string answers_field = "answers";
  std::string where;  // Parquet: a DuckDB SQL predicate over the file's columns; empty: all rows
  // Parquet: DuckDB threads decoding row groups ahead (in order); reading is the one serial
  // stage of a conversion, so it scales with the tokenizing threads.
  unsigned decode_threads = 1;
  // JSONL: a line of up to kUnreadJsonBytes is handed on unparsed (Example::json_unread), for
  // read_unread_json() on whichever thread tokenizes it; not for QA, whose questions are
  // numbered in input order, nor for the label pre-pass.
  bool defer_json = false;
  // Compressed inputs: checked before their text is read, or as it is read, for a caller that
  // names the damage itself (find_stream_damage) or reads the file again, checked
  // (Example::after_damaged_text).
  ByteSource::Check compressed_check = ByteSource::Check::kBeforeUse;
  // Compressed inputs: decoded on a thread of their own ahead of the read stage
  // (read_ahead_source.h), when other threads tokenize.
  bool decode_ahead = false;
};

// The longest JSONL line left unparsed: its text is shorter, so it is never a long document
// that the read stage must cut into parts (example_batcher.h).
inline constexpr size_t kUnreadJsonBytes = 64 * 1024;

class ExampleReader {
 public:
  virtual ~ExampleReader() = default;
  // The next example; false at the end of the file. Content problems go into example.error;
  // only I/O and decompression failures throw.
  virtual bool next(Example& example) = 0;
  // Bytes of the file read so far (compressed bytes for a compressed file): progress.
  virtual uint64_t file_bytes_consumed() const = 0;
  // Text bytes read so far (decompressed): what the summary reports as read.
  virtual uint64_t text_bytes_read() const { return file_bytes_consumed(); }

  static std::unique_ptr<ExampleReader> open(const std::filesystem::path& path, uint32_t file_index,
                                             const ReaderOptions& options);
};

// The error a reader of a compressed file checked before use (ByteSource::Check::kBeforeUse)
// ends it with: the last complete line before the damaged member or frame, or before the cut,
// and why. Nullopt for a whole file, and for a file that is not compressed (it is not read).
struct StreamDamage {
  uint64_t line = 0;  // 0: no complete line could be read
  std::string reason;
};
std::optional<StreamDamage> find_stream_damage(const std::filesystem::path& path);

}  // namespace shardkit::shardify
