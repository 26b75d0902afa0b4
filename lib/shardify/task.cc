#include "shardify/task.h"

#include "core/error.h"

namespace shardkit::shardify {

Task parse_task(const std::string& name) {
  if (name == "lm") return Task::kLm;
  if (name == "cls") return Task::kCls;
  if (name == "pair") return Task::kPair;
  if (name == "qa") return Task::kQa;
  throw Error(ErrorCode::kInvalidArgument, "",
              "unknown task '" + name + "' (expected lm, cls, pair or qa)");
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
  }
  return "?";
}

bool task_has_labels(Task task) { return task == Task::kCls || task == Task::kPair; }
bool task_has_segments(Task task) { return task == Task::kPair || task == Task::kQa; }

}  // namespace shardkit::shardify
