#include "shardify/convert_inputs.h"

#include <algorithm>

#include "core/error.h"
#include "shardify/byte_source.h"
#include "shardify/first_row_fields.h"

namespace shardkit::shardify {
namespace {

// Every file's name must give the format, not only the first's: a name that gives none (an
// editor's backup "a.jsonl~", "a.jsonl.bak", a README) was read in the first file's format, so
// a directory's backup copies were converted as more rows, without a word.
InputFormat resolve_format(const ConvertOptions& o, const std::vector<InputFile>& files) {
  if (o.format) return *o.format;
  auto first = infer_input_format(files.front().path);
  for (const auto& f : files) {
    auto other = infer_input_format(f.path);
    if (!other) {
      // "a.jsonl.xz" names JSONL, in a compression that is not read: that is the news.
      std::string reason = foreign_compression(f.path);
      if (reason.empty())
        reason =
            "cannot infer the input format from the file name (.jsonl, .ndjson, .txt, .text, "
            ".tsv, .csv, .json, .parquet, each also .gz or .zst): move it out of the inputs, or "
            "pass --format to read every input file in that format";
      throw Error(ErrorCode::kInvalidArgument, f.path, reason);
    }
    if (*other != *first)
      throw Error(ErrorCode::kInvalidArgument, f.path,
                  std::string("input files have different formats (") + input_format_name(*first) +
                      " and " + input_format_name(*other) + "); pass --format");
  }
  return *first;
}

void check_task_and_format(Task task, InputFormat fmt, const std::vector<InputFile>& files) {
  if (task == Task::kQa && fmt != InputFormat::kSquad && fmt != InputFormat::kJsonl &&
      fmt != InputFormat::kParquet)
    throw Error(ErrorCode::kInvalidArgument, "", "--task qa reads SQuAD JSON, JSONL or Parquet");
  if (task != Task::kQa && fmt == InputFormat::kSquad) {
    if (!files.empty() && file_starts_as_json_lines(files.front().path))
      throw Error(ErrorCode::kInvalidArgument, files.front().path,
                  "SQuAD JSON input is for --task qa, and this file holds JSON Lines (one "
                  "object per line, as datasets' to_json writes them): pass --format jsonl");
    throw Error(ErrorCode::kInvalidArgument, "", "SQuAD JSON input is for --task qa");
  }
  if ((task == Task::kCls || task == Task::kPair) && fmt == InputFormat::kText)
    throw Error(ErrorCode::kInvalidArgument, "",
                "plain text has no labels; --task cls and pair read jsonl, tsv or csv");
  if (task == Task::kSft && fmt == InputFormat::kText)
    throw Error(
        ErrorCode::kInvalidArgument, "",
        "plain text has no prompt and response; --task sft reads jsonl, parquet, tsv or csv");
}

// The fields the task reads, under the reader's names.
void select_fields(const ConvertOptions& o, InputFormat fmt, ReaderOptions& r) {
  if (o.task.task == Task::kPair) r.pair_field = o.pair_field;
  if (task_has_labels(o.task.task)) r.label_field = o.label_field;
  if (o.task.task == Task::kSft) {
    if (o.task.messages) {
      if (fmt != InputFormat::kJsonl)
        throw Error(ErrorCode::kInvalidArgument, "",
                    "--messages-field reads JSONL (a list of {role, content} objects per line)");
      r.messages_field = o.messages_field;
    } else {
      r.text_field = o.prompt_field;
      r.pair_field = o.response_field;
    }
  }
  if (o.task.task == Task::kQa) {
    r.qa = true;
    r.text_field = o.context_field;
    r.question_field = o.question_field;
    r.answers_field = o.answers_field;
  }
}

ReaderOptions reader_options(const ConvertOptions& o, InputFormat fmt) {
  ReaderOptions r;
  r.format = fmt;
  r.text_field = o.text_field;
  r.doc_separator = o.doc_separator;
  r.quoting = o.quoting;
  if (!o.where.empty() && fmt != InputFormat::kParquet)
    throw Error(ErrorCode::kInvalidArgument, "", "--where filters Parquet input only");
  // Text has no fields: a field named for it would be ignored, and the whole line taken.
  if (fmt == InputFormat::kText && o.text_field != ConvertOptions{}.text_field)
    throw Error(ErrorCode::kInvalidArgument, "",
                "--text-field '" + o.text_field +
                    "' names a field, but the input is text (--format text), which has none: "
                    "each line or file is the text; for JSON lines use --format jsonl");
  r.where = o.where;
  r.decode_threads = std::max(1u, o.threads / 2);
  r.decode_ahead = o.threads > 1;
  // A compressed file is decoded once, checked as it is read, not once more to check it first.
  // A conversion that stops at the first error reports the damage a checked read would have met
  // first (RecordStage); one that skips errors reads the inputs again, checked before use, in
  // the rare run that meets a damaged file (convert.cc).
  r.compressed_check = ByteSource::Check::kWhileReading;
  select_fields(o, fmt, r);
  return r;
}

// Reading flags of one format given to another would be ignored: refused, as --where is.
void check_format_flags(const ConvertOptions& o, InputFormat fmt) {
  if (o.doc_separator != DocSeparator::kFile && fmt != InputFormat::kText)
    throw Error(ErrorCode::kInvalidArgument, "",
                std::string("--doc-sep is for text input: a ") + input_format_name(fmt) +
                    " input's documents are its rows");
  if (!o.quoting && fmt != InputFormat::kCsv && fmt != InputFormat::kTsv)
    throw Error(ErrorCode::kInvalidArgument, "", "--no-quoting is for csv and tsv input");
}

}  // namespace

ConvertInputs open_inputs(const ConvertOptions& o, std::vector<InputFile> files) {
  if (o.rows && (!o.inputs.empty() || o.part || (o.format && *o.format != InputFormat::kJsonl)))
    throw Error(ErrorCode::kInvalidArgument, "",
                "rows handed in are one input read as JSONL: no input files, format or part");
  ConvertInputs in;
  in.files = std::move(files);
  in.format = o.rows ? InputFormat::kJsonl : resolve_format(o, in.files);
  check_task_and_format(o.task.task, in.format, in.files);
  check_format_flags(o, in.format);
  in.reader = reader_options(o, in.format);
  in.open = [&o, files = in.files](size_t i, const ReaderOptions& r) {
    const auto index = static_cast<uint32_t>(i);
    return o.rows ? make_row_reader(o.rows(), index, r)
                  : ExampleReader::open(files[i].path, index, r);
  };
  in.part = o.part.value_or(PartSpec{});
  std::tie(in.first_file, in.end_file) = part_file_range(in.files.size(), in.part);
  return in;
}

}  // namespace shardkit::shardify
