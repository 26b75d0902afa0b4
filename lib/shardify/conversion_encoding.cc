#include "shardify/conversion_encoding.h"

#include <optional>
#include <set>
#include <string>

#include "core/error.h"
#include "shardify/first_row_fields.h"

namespace shardkit::shardify {
namespace {

// What the first input file's first row holds, to name it when a field is not found.
std::string fields_of_first_row(const ConvertInputs& in) {
  if (in.files.empty()) return "";
  const auto fields = first_row_fields(in.files.front().path, in.format);
  if (fields.empty()) return "";
  std::string names;
  for (const std::string& f : fields) names += (names.empty() ? "" : ", ") + f;
  return "; the first row of " + in.files.front().path + " has " + names;
}

// The labels of every example read without error, and the first error met; none when a
// compressed file turned out damaged after some of its damaged member's text was read
// (ByteSource::handed_out_damaged_text). A file that cannot be read at all stops the pass.
struct LabelsRead {
  std::set<std::string> labels;
  std::optional<ExampleError> first_error;
};

std::optional<LabelsRead> labels_read(const ConvertInputs& in, const ReaderOptions& r) {
  LabelsRead read;
  for (size_t i = 0; i < in.files.size(); ++i) {
    auto reader = in.open(i, r);
    Example ex;
    while (reader->next(ex)) {
      if (ex.after_damaged_text) return std::nullopt;
      if (ex.file_unusable) throw input_error(in.files, error_of(ex, ex.error));
      if (ex.error.empty() && !ex.label.empty())
        read.labels.insert(ex.label);
      else if (!read.first_error)
        read.first_error = error_of(ex, ex.error.empty() ? "the label is empty" : ex.error);
    }
  }
  return read;
}

// Whether `reason` says that a row has no field at the label field's path (json_fields.cc).
bool label_field_missing(const ConvertOptions& o, const std::string& reason) {
  return reason.starts_with("missing field '" + o.label_field + "'") ||
         reason.starts_with("field '" + o.label_field + "' not found");
}

// Why no label was found: when rows lack the label field, the fields rows have and the flag that
// names another; when they failed otherwise, that they all failed, the first named.
std::string no_labels_reason(const ConvertOptions& o, const ConvertInputs& in,
                             const LabelsRead& read) {
  if (read.first_error && !label_field_missing(o, read.first_error->reason))
    return "no labels found in the inputs: every row failed (the first: " +
           format_error(in.files, *read.first_error) +
           "); fix those rows, or pass --labels to name the labels";
  const std::string failed =
      read.first_error
          ? " (the first that failed: " + format_error(in.files, *read.first_error) + ")"
          : "";
  return "no labels found in the inputs: no row could be read with the label field '" +
         o.label_field + "'" + failed + fields_of_first_row(in) +
         " (pass --label-field, or --labels to name the labels)";
}

// Every label of every input file (all parts), so that each part derives the same order.
// Compressed files are read once, unchecked; when one turns out damaged, all are read again,
// checked before use, so that no label of a damaged member counts.
LabelMap observe_labels(const ConvertOptions& o, const ConvertInputs& in) {
  ReaderOptions r = in.reader;
  r.labels_only = true;
  r.compressed_check = ByteSource::Check::kWhileReading;
  std::optional<LabelsRead> read = labels_read(in, r);
  if (!read) {
    r.compressed_check = ByteSource::Check::kBeforeUse;
    read = labels_read(in, r);
  }
  if (read->labels.empty()) throw Error(ErrorCode::kInput, "", no_labels_reason(o, in, *read));
  return LabelMap::from_observed(read->labels);
}

// Each conversation's rendering is bounded in bytes and time, and ends when the caller cancels.
RenderLimits render_limits(const ConvertOptions& o) {
  RenderLimits limits;
  limits.max_bytes = o.max_render_bytes;
  limits.seconds = o.render_timeout;
  limits.cancel = o.cancel;
  return limits;
}

ChatRenderer::Spans rendered_spans(TrainOn train_on) {
  return train_on == TrainOn::kAll    ? ChatRenderer::Spans::kNone
         : train_on == TrainOn::kLast ? ChatRenderer::Spans::kLast
                                      : ChatRenderer::Spans::kAll;
}

}  // namespace

Encoding::Encoding(const ConvertOptions& o, const ConvertInputs& in)
    : tokenizer(tok::Tokenizer::from_file(o.tokenizer_path)),
      renderer(o.task.task == Task::kSft && !o.task.chat_template.empty()
                   ? std::make_unique<ChatRenderer>(
                         o.task.chat_template, rendered_spans(o.task.train_on), render_limits(o))
                   : nullptr),
      labels(!task_has_labels(o.task.task) ? std::nullopt
             : !o.labels                   ? std::optional(observe_labels(o, in))
                                           : std::optional(LabelMap::from_list(*o.labels))),
      encoder(*tokenizer, o.task, labels ? &*labels : nullptr, renderer.get(),
              o.on_error == OnError::kFail),
      layout(o.task, tokenizer->vocab_size(), encoder.padding_id()) {}

}  // namespace shardkit::shardify
