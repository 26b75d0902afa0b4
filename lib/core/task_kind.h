// The tasks a dataset's records serve and their typed parameters, as DatasetInfo and the
// converter hold them. Their names ("lm", "assistant", "longest_first") exist only where text
// is read or written: the manifest's JSON, flags, keywords and messages.
#pragma once

#include <optional>
#include <string_view>

namespace shardkit {

enum class Task { kLm, kCls, kPair, kQa, kSft };
// "lm", "cls", "pair", "qa", "sft".
const char* task_name(Task task);
std::optional<Task> task_named(std::string_view name);
// Throws Error(kInvalidArgument) naming the five tasks.
Task parse_task(std::string_view name);
// Whether examples carry a label (cls, pair).
bool task_has_labels(Task task);
// Whether rows hold two segments with token type ids (pair, qa).
bool task_has_segments(Task task);

// sft: which tokens the loss is computed on (format/SPEC.md "SFT records").
enum class TrainOn { kAssistant, kLast, kAll };
const char* train_on_name(TrainOn train_on);  // "assistant", "last", "all"
std::optional<TrainOn> train_on_named(std::string_view name);

// How a text too long for a row was cut. pair: both segments, the longer first; sft: a
// conversation over max_len is dropped, or loses its oldest tokens (TRL's keep_end) while every
// trained token still fits.
enum class Truncation { kLongestFirst, kDrop, kLeft };
const char* truncation_name(Truncation truncation);  // "longest_first", "drop", "left"
std::optional<Truncation> truncation_named(std::string_view name);

}  // namespace shardkit
