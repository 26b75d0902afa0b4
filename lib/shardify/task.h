// The converter's task options. The tasks themselves (Task, TrainOn, Truncation) are core's
// (core/task_kind.h), shared with DatasetInfo; what each task stores is in record_layout.h, how
// an example becomes rows in task_encoder.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/task_kind.h"

namespace shardkit::shardify {

// Spelled shardify::Task as well (they were shardify's before DatasetInfo held them).
using shardkit::parse_task;
using shardkit::Task;
using shardkit::task_has_labels;
using shardkit::task_has_segments;
using shardkit::task_name;
using shardkit::TrainOn;
using shardkit::Truncation;

struct TaskOptions {
  Task task = Task::kLm;
  uint32_t max_len = 0;         // 0: the task's default (convert_option_table.h, resolve())
  std::optional<bool> pack;     // unset: packs for lm; sft packs conversations whole if asked
  bool position_ids = false;    // lm, packed
  uint32_t doc_stride = 128;    // qa: tokens shared by consecutive windows (HF's `stride`)
  uint32_t max_query_len = 64;  // qa: question tokens kept (BERT's max_query_length)
  // sft
  TrainOn train_on = TrainOn::kAssistant;
  Truncation sft_truncation = Truncation::kDrop;  // kDrop or kLeft
  std::string chat_template;  // tokenizer_config.json; empty: prompt + response + eos
  bool messages = false;      // examples are conversations (--messages-field), not prompt/response

  bool packing() const {
    return (task == Task::kLm || task == Task::kSft) && pack.value_or(task == Task::kLm);
  }
  // sft with a stored loss mask (every --train-on but all).
  bool loss_mask() const { return task == Task::kSft && train_on != TrainOn::kAll; }
};

}  // namespace shardkit::shardify
