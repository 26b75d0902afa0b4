#include "shardify/task.h"

#include "core/error.h"

namespace shardkit::shardify {

Task parse_task(const std::string& name) {
  if (name == "lm") return Task::kLm;
  if (name == "cls") return Task::kCls;
  if (name == "pair") return Task::kPair;
  if (name == "qa") return Task::kQa;
  if (name == "sft") return Task::kSft;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown task '" + name + "' (expected lm, cls, pair, qa or sft)");
}

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

TrainOn parse_train_on(const std::string& name) {
  if (name == "assistant") return TrainOn::kAssistant;
  if (name == "last") return TrainOn::kLast;
  if (name == "all") return TrainOn::kAll;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown --train-on '" + name + "' (expected assistant, last or all)");
}

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

SftTruncation parse_sft_truncation(const std::string& name) {
  if (name == "drop") return SftTruncation::kDrop;
  if (name == "left") return SftTruncation::kLeft;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown --truncation '" + name + "' (expected drop or left)");
}

const char* sft_truncation_name(SftTruncation truncation) {
  return truncation == SftTruncation::kDrop ? "drop" : "left";
}

bool task_has_labels(Task task) { return task == Task::kCls || task == Task::kPair; }
bool task_has_segments(Task task) { return task == Task::kPair || task == Task::kQa; }

}  // namespace shardkit::shardify
