// The four tasks shardify converts to, and their options. What each task stores is in
// record_layout.h; how an example becomes rows, in task_encoder.h.
#pragma once

#include <cstdint>
#include <string>

namespace shardkit::shardify {

enum class Task { kLm, kCls, kPair, kQa };
// "lm", "cls", "pair", "qa"; parse_task throws Error(kInvalidArgument) for anything else.
Task parse_task(const std::string& name);
const char* task_name(Task task);
// Whether examples carry a label (cls, pair).
bool task_has_labels(Task task);
// Whether rows hold two segments with token type ids (pair, qa).
bool task_has_segments(Task task);

struct TaskOptions {
  Task task = Task::kLm;
  uint32_t max_len = 512;
  bool pack = true;             // lm
  bool position_ids = false;    // lm, packed
  uint32_t doc_stride = 128;    // qa: tokens shared by consecutive windows (HF's `stride`)
  uint32_t max_query_len = 64;  // qa: question tokens kept (BERT's max_query_length)

  bool packing() const { return task == Task::kLm && pack; }
};

}  // namespace shardkit::shardify
