#include "shardify/describe_conversion.h"

namespace shardkit::shardify {
namespace {

TaskInfo describe_task(const TaskOptions& t, const EncodingParts& parts) {
  TaskInfo task;
  task.type = t.task;
  task.max_len = t.max_len;
  task.padding_id = parts.encoder.padding_id();
  if (t.packing()) {
    task.packed = true;
    if (t.task == Task::kLm) task.separator_id = parts.encoder.separator_id();
  }
  if (t.task == Task::kSft) {
    task.truncation = t.sft_truncation;
    task.train_on = t.train_on;
    if (parts.renderer) task.chat_template = parts.renderer->fingerprint();
  }
  if (t.task == Task::kPair) task.truncation = Truncation::kLongestFirst;
  if (t.task == Task::kQa) {
    task.doc_stride = t.doc_stride;
    task.max_query_len = t.max_query_len;
  }
  return task;
}

// The input columns read, by purpose.
std::map<std::string, std::string> columns_read(const ConvertOptions& o, InputFormat fmt) {
  const TaskOptions& t = o.task;
  if (t.task == Task::kQa && (fmt == InputFormat::kJsonl || fmt == InputFormat::kParquet))
    return {
        {"context", o.context_field}, {"question", o.question_field}, {"answers", o.answers_field}};
  if (t.task == Task::kSft) {
    if (t.messages) return {{"messages", o.messages_field}};
    return {{"prompt", o.prompt_field}, {"response", o.response_field}};
  }
  std::map<std::string, std::string> columns;
  if (fmt == InputFormat::kText || fmt == InputFormat::kSquad) return columns;
  columns["text"] = o.text_field;
  if (t.task == Task::kPair) columns["pair"] = o.pair_field;
  if (task_has_labels(t.task)) columns["label"] = o.label_field;
  return columns;
}

SourceInfo describe_source(const ConvertOptions& o, InputFormat fmt,
                           const std::vector<InputFile>& files) {
  SourceInfo source;
  source.format = input_format_name(fmt);
  source.columns = columns_read(o, fmt);
  if (fmt == InputFormat::kText) source.doc_sep = doc_separator_name(o.doc_separator);
  if (fmt == InputFormat::kTsv || fmt == InputFormat::kCsv) source.quoting = o.quoting;
  source.where = o.where;
  for (const InputFile& f : files) source.files.push_back({f.path, f.bytes});
  return source;
}

}  // namespace

DatasetInfo describe_conversion(const ConvertOptions& o, InputFormat format,
                                const std::vector<InputFile>& files, const EncodingParts& parts) {
  DatasetInfo info;
  info.task = describe_task(o.task, parts);
  info.fields = parts.layout.fields();
  info.tokenizer = parts.tokenizer.describe();
  if (parts.labels) info.labels = {parts.labels->names(), parts.labels->order()};
  info.source = describe_source(o, format, files);
  return info;
}

}  // namespace shardkit::shardify
