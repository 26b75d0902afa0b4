// The DatasetInfo a conversion records: task and its parameters, field roles, tokenizer, labels
// and where the examples came from.
#pragma once

#include <vector>

#include "core/dataset_info.h"
#include "shardify/chat_renderer.h"
#include "shardify/convert.h"
#include "shardify/label_map.h"
#include "shardify/record_layout.h"
#include "shardify/task_encoder.h"

namespace shardkit::shardify {

// What encoded the examples.
struct EncodingParts {
  const tok::Tokenizer& tokenizer;
  const TaskEncoder& encoder;
  const RecordLayout& layout;
  const LabelMap* labels;        // null when the task has none
  const ChatRenderer* renderer;  // null without a chat template
};

DatasetInfo describe_conversion(const ConvertOptions& o, InputFormat format,
                                const std::vector<InputFile>& files, const EncodingParts& parts);

}  // namespace shardkit::shardify
