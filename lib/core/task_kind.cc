#include "core/task_kind.h"

#include <string>

#include "core/error.h"

namespace shardkit {
namespace {

// The value whose name is `name`, among `values`.
template <class E, class NameFn>
std::optional<E> named(std::string_view name, NameFn fn, std::initializer_list<E> values) {
  for (E v : values)
    if (name == fn(v)) return v;
  return std::nullopt;
}

}  // namespace

const char* task_name(Task task) {
  switch (task) {
    case Task::kLm:
      return "lm";
    case Task::kCls:
      return "cls";
    case Task::kPair:
      return "pair";
    case Task::kQa:
      return "qa";
    case Task::kSft:
      return "sft";
  }
  return "?";
}

std::optional<Task> task_named(std::string_view name) {
  return named(name, task_name, {Task::kLm, Task::kCls, Task::kPair, Task::kQa, Task::kSft});
}

Task parse_task(std::string_view name) {
  if (auto t = task_named(name)) return *t;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown task '" + std::string(name) + "' (expected lm, cls, pair, qa or sft)");
}

bool task_has_labels(Task task) { return task == Task::kCls || task == Task::kPair; }
bool task_has_segments(Task task) { return task == Task::kPair || task == Task::kQa; }

const char* train_on_name(TrainOn train_on) {
  switch (train_on) {
    case TrainOn::kAssistant:
      return "assistant";
    case TrainOn::kLast:
      return "last";
    case TrainOn::kAll:
      return "all";
  }
  return "?";
}

std::optional<TrainOn> train_on_named(std::string_view name) {
  return named(name, train_on_name, {TrainOn::kAssistant, TrainOn::kLast, TrainOn::kAll});
}

const char* truncation_name(Truncation truncation) {
  switch (truncation) {
    case Truncation::kLongestFirst:
      return "longest_first";
    case Truncation::kDrop:
      return "drop";
    case Truncation::kLeft:
      return "left";
  }
  return "?";
}

std::optional<Truncation> truncation_named(std::string_view name) {
  return named(name, truncation_name,
               {Truncation::kLongestFirst, Truncation::kDrop, Truncation::kLeft});
}

}  // namespace shardkit
