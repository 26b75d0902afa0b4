#include "shardify/example_reader.h"

#include "core/error.h"
#include "core/file_extension.h"
#include "core/utf8.h"
#include "shardify/byte_source.h"
#include "shardify/read_ahead_source.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {

InputFormat parse_input_format(const std::string& name) {
  if (name == "jsonl") return InputFormat::kJsonl;
  if (name == "text") return InputFormat::kText;
  if (name == "tsv") return InputFormat::kTsv;
  if (name == "csv") return InputFormat::kCsv;
  if (name == "squad") return InputFormat::kSquad;
  if (name == "parquet") return InputFormat::kParquet;
  throw Error(
      ErrorCode::kInvalidArgument, "",
      "unknown input format '" + name + "' (expected jsonl, text, tsv, csv, squad or parquet)");
}

const char* input_format_name(InputFormat format) {
  switch (format) {
    case InputFormat::kJsonl:
      return "jsonl";
    case InputFormat::kText:
      return "text";
    case InputFormat::kTsv:
      return "tsv";
    case InputFormat::kCsv:
      return "csv";
    case InputFormat::kSquad:
      return "squad";
    case InputFormat::kParquet:
      return "parquet";
  }
  return "?";
}

DocSeparator parse_doc_separator(const std::string& name) {
  if (name == "file") return DocSeparator::kFile;
  if (name == "line") return DocSeparator::kLine;
  if (name == "blank") return DocSeparator::kBlankLine;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown document separator '" + name + "' (expected file, line or blank)");
}

const char* doc_separator_name(DocSeparator separator) {
  switch (separator) {
    case DocSeparator::kFile:
      return "file";
    case DocSeparator::kLine:
      return "line";
    case DocSeparator::kBlankLine:
      return "blank";
  }
  return "?";
}

// By the name's extension, in any case (DATA.JSONL.GZ), after a compressed file's own.
std::optional<InputFormat> infer_input_format(const std::filesystem::path& path) {
  std::filesystem::path p = path.filename();
  if (compression_named(p)) p = p.stem();
  const std::string ext = lowercase_extension(p);
  if (ext == ".jsonl" || ext == ".ndjson") return InputFormat::kJsonl;
  if (ext == ".txt" || ext == ".text") return InputFormat::kText;
  if (ext == ".tsv") return InputFormat::kTsv;
  if (ext == ".csv") return InputFormat::kCsv;
  if (ext == ".json") return InputFormat::kSquad;
  if (ext == ".parquet") return InputFormat::kParquet;
  return std::nullopt;
}

std::string utf8_problem(std::string_view text, std::string_view what) {
  auto bad = first_invalid_utf8(text);
  if (!bad) return {};
  return "invalid UTF-8 at byte " + std::to_string(*bad) + " of " + std::string(what);
}

bool is_blank(std::string_view text) {
  for (char c : text)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
  return true;
}

bool start_example_at_next_line(LineReader& lines, uint32_t file_index, Example& ex,
                                std::string_view& line) {
  do {
    if (!lines.next(line)) return false;
  } while (is_blank(line));
  ex.reset();
  ex.file_index = file_index;
  ex.line = lines.line_number();
  return true;
}

void lend_line(LineReader& lines, std::string_view line, Example& ex) {
  if (lines.line_file()) {
    ex.text_file = lines.line_file();
  } else {
    ex.text_owner = lines.line_owner();
    lines.release_line();  // a long line's buffer is then the example's alone
  }
  ex.text_view = line;
}

bool stream_error_example(LineReader& lines, uint32_t file_index, Example& ex) {
  std::string why = lines.take_stream_error();
  if (why.empty()) return false;
  ex.reset();
  ex.file_index = file_index;
  ex.line = lines.line_number();
  ex.rest_of_file_lost = true;
  ex.after_damaged_text = lines.stream_error_after_damaged_text();
  ex.error = why + (ex.line ? "; the rest of the file after line " + std::to_string(ex.line) +
                                  " (the last complete line) is lost"
                            : "; no complete line could be read");
  return true;
}

std::optional<StreamDamage> find_stream_damage(const std::filesystem::path& path) {
  if (!ByteSource::compressed(path)) return std::nullopt;
  LineReader lines(ByteSource::open(path, ByteSource::Check::kBeforeUse));
  std::string_view line;
  while (lines.next(line)) {
  }
  Example ex;
  if (!stream_error_example(lines, 0, ex)) return std::nullopt;
  return StreamDamage{ex.line, ex.error};
}

std::unique_ptr<ExampleReader> ExampleReader::open(const std::filesystem::path& path,
                                                   uint32_t file_index,
                                                   const ReaderOptions& options) {
  if (options.format == InputFormat::kSquad) return make_squad_reader(path, file_index, options);
  if (options.format == InputFormat::kParquet)
    return make_parquet_reader(path, file_index, options);
  auto source = ByteSource::open(path, options.compressed_check);
  if (options.decode_ahead && worth_reading_ahead(path)) source = read_ahead(std::move(source));
  auto lines = std::make_unique<LineReader>(std::move(source));
  switch (options.format) {
    case InputFormat::kJsonl:
      return make_jsonl_reader(std::move(lines), file_index, options);
    case InputFormat::kText:
      return make_text_reader(std::move(lines), file_index, options);
    case InputFormat::kTsv:
      return make_delimited_reader(std::move(lines), file_index, options, '\t');
    case InputFormat::kCsv:
      return make_delimited_reader(std::move(lines), file_index, options, ',');
    case InputFormat::kSquad:
    case InputFormat::kParquet:
      break;
  }
  throw Error(ErrorCode::kInvalidArgument, path.string(), "unsupported input format");
}

}  // namespace shardkit::shardify
