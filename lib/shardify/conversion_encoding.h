// What turns a conversion's examples into records, loaded once and shared by every worker: the
// tokenizer, the label map (given, or observed over every input file), the chat renderer, the
// task encoder and the record layout.
#pragma once

#include <memory>
#include <optional>

#include "shardify/chat_renderer.h"
#include "shardify/convert.h"
#include "shardify/convert_inputs.h"
#include "shardify/label_map.h"
#include "shardify/record_layout.h"
#include "shardify/task_encoder.h"

namespace shardkit::shardify {

struct Encoding {
  // Loads everything for resolved options `o` (which must outlive it) over inputs `in`.
  Encoding(const ConvertOptions& o, const ConvertInputs& in);

  std::unique_ptr<tok::Tokenizer> tokenizer;
  std::unique_ptr<ChatRenderer> renderer;
  std::optional<LabelMap> labels;
  TaskEncoder encoder;
  RecordLayout layout;
};

}  // namespace shardkit::shardify
