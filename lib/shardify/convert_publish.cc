#include "shardify/convert_publish.h"

#include "core/error.h"
#include "shardify/describe_conversion.h"

namespace shardkit::shardify {

namespace {

// A part of more parts than files may get no file: nothing in the input is to blame.
[[noreturn]] void throw_part_without_files(const ConvertInputs& in) {
  const std::string files = std::to_string(in.files.size());
  const std::string parts = std::to_string(in.part.count);
  throw Error(ErrorCode::kInput, "",
              "part " + std::to_string(in.part.index) + "/" + parts +
                  " has no input file: --part splits the " + files + " input files by count (" +
                  parts + " parts of " + files +
                  " files leave some empty); pass --allow-empty to write the empty part, "
                  "which shardify merge takes with the others, or split into at most " +
                  files + " parts");
}

// What to check when no row gave a record, in the input's own terms: the options naming the
// fields the task reads; plain text has no fields (each line, block or file is the text), and
// SQuAD's are fixed.
std::string empty_input_advice(const ConvertOptions& o, InputFormat format) {
  if (format == InputFormat::kText)
    return "check the input (plain text has no fields to name; blank lines are never documents)";
  if (format == InputFormat::kSquad) return "check the input";
  switch (o.task.task) {
    case Task::kQa:
      return "check the input and --context-field";
    case Task::kSft:
      return o.task.messages ? "check the input and --messages-field"
                             : "check the input, --prompt-field and --response-field";
    default:
      return "check the input and --text-field";
  }
}

}  // namespace

void check_not_empty(const ConvertOptions& o, const ConvertInputs& in,
                     const ConvertResult& result) {
  if (result.stats.records > 0 || o.allow_empty) return;
  if (result.files == 0 && o.part) throw_part_without_files(in);
  const std::string inputs = result.files == 1 ? in.files[in.first_file].path
                                               : std::to_string(result.files) + " input files";
  std::string why = std::to_string(result.stats.examples) + " examples, " +
                    std::to_string(result.stats.skipped) + " skipped";
  if (result.stats.dropped > 0)
    why += ", " + std::to_string(result.stats.dropped) + " dropped as longer than --max-len " +
           std::to_string(o.task.max_len);
  if (!result.first_errors.empty()) why += ", first: " + result.first_errors[0];
  // Conversations all dropped for their length are found; the fields are not to blame.
  const std::string advice = result.stats.dropped > 0 ? "raise --max-len or pass --truncation left"
                                                      : empty_input_advice(o, in.format);
  throw Error(ErrorCode::kInput, inputs,
              "no records to write (" + why + "); " + advice + ", or pass --allow-empty");
}

void publish(const ConvertOptions& o, const ConvertInputs& in, const Encoding& e,
             DatasetWriter& writer, ConvertResult& result) {
  DatasetInfo info = describe_conversion(
      o, in.format, in.files,
      {*e.tokenizer, e.encoder, e.layout, e.labels ? &*e.labels : nullptr, e.renderer.get()});
  if (o.rows) {
    info.source.format = "rows";
    info.source.files.front().bytes = result.bytes_in;
  }
  info.stats = result.stats;
  if (o.part)
    info.part = PartInfo{in.part.index, in.part.count, in.first_file, in.end_file,
                         o.shard_bytes, o.zstd_level,  o.filter};
  writer.set_info(std::move(info));
  result.bytes_out = writer.finish().bytes_on_disk();
}

}  // namespace shardkit::shardify
