// The five tasks shardify converts to, and their options. What each task stores is in
// record_layout.h; how an example becomes rows, in task_encoder.h.
#pragma once

#include <cstdint>
#include <string>

namespace shardkit::shardify {

enum class Task { kLm, kCls, kPair, kQa, kSft };
// "lm", "cls", "pair", "qa", "sft"; parse_task throws Error(kInvalidArgument) for anything else.
Task parse_task(const std::string& name);
const char* task_name(Task task);
// Whether examples carry a label (cls, pair).
bool task_has_labels(Task task);
// Whether rows hold two segments with token type ids (pair, qa).
bool task_has_segments(Task task);

// sft: which tokens the loss is computed on (format/SPEC.md "SFT records").
enum class TrainOn { kAssistant, kLast, kAll };
// sft: what happens to a conversation longer than max_len.
enum class SftTruncation {
  kDrop,  // left out, counted as `dropped`
  kLeft,  // its oldest tokens are cut (TRL's keep_end) while every trained token still fits
};
// "assistant", "last", "all" / "drop", "left"; throw Error(kInvalidArgument) for anything else.
TrainOn parse_train_on(const std::string& name);
const char* train_on_name(TrainOn train_on);
SftTruncation parse_sft_truncation(const std::string& name);
const char* sft_truncation_name(SftTruncation truncation);

struct TaskOptions {
  Task task = Task::kLm;
  uint32_t max_len = 512;
  bool pack = true;             // lm (sft: conversations whole, see ConversationPacker)
  bool position_ids = false;    // lm, packed
  uint32_t doc_stride = 128;    // qa: tokens shared by consecutive windows (HF's `stride`)
  uint32_t max_query_len = 64;  // qa: question tokens kept (BERT's max_query_length)
  // sft
  TrainOn train_on = TrainOn::kAssistant;
  SftTruncation sft_truncation = SftTruncation::kDrop;
  std::string chat_template;  // tokenizer_config.json; empty: prompt + response + eos
  bool messages = false;      // examples are conversations (--messages-field), not prompt/response

  bool packing() const { return (task == Task::kLm || task == Task::kSft) && pack; }
  // sft with a stored loss mask (every --train-on but all).
  bool loss_mask() const { return task == Task::kSft && train_on != TrainOn::kAll; }
};

}  // namespace shardkit::shardify
