// Readers for the input formats: JSONL, plain text, TSV/CSV and SQuAD JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "shardify/example.h"

namespace shardkit::shardify {

enum class InputFormat { kJsonl, kText, kTsv, kCsv, kSquad };

// "jsonl", "text", "tsv", "csv", "squad"; throws Error(kInvalidArgument) otherwise.
InputFormat parse_input_format(const std::string& name);
const char* input_format_name(InputFormat format);
// From the file name, ignoring a .gz/.zst suffix: .jsonl/.ndjson, .txt, .tsv, .csv, .json.
std::optional<InputFormat> infer_input_format(const std::filesystem::path& path);

enum class DocSeparator { kLine, kBlankLine };

struct ReaderOptions {
  InputFormat format = InputFormat::kJsonl;
  std::string text_field = "text";  // JSONL: dotted path; TSV/CSV: column name
  std::string pair_field;           // empty: no second text
  std::string label_field;          // empty: no label
  DocSeparator doc_separator = DocSeparator::kLine;
  bool quoting = true;       // TSV/CSV: RFC 4180 quotes; false: quotes are ordinary characters
  bool labels_only = false;  // the label pre-pass: skip texts
  // JSONL for --task qa, one question per line in HF datasets' SQuAD layout: text_field is the
  // context, answers_field {"text": [...], "answer_start": [...]} (or a SQuAD-style list of
  // {"text", "answer_start"}); no answers means unanswerable.
  bool qa = false;
  std::string question_field = "question";
  std::string answers_field = "answers";
};

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

}  // namespace shardkit::shardify
