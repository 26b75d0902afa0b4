#include "shardify/row_per_example.h"

#include <algorithm>
#include <span>

#include "shardify/conversation_packer.h"
#include "shardify/packer.h"

namespace shardkit::shardify {

void RowPerExample::add(const EncodedBatch& batch, std::vector<unsigned char>& records,
                        ConvertStats& stats) {
  const size_t rs = layout_.record_size();
  const size_t first = records.size();
  records.resize(first + batch.rows.size() * rs);
  for (size_t i = 0; i < batch.rows.size(); ++i) {
    const EncodedRow& row = batch.rows[i];
    unsigned char* out = records.data() + first + i * rs;
    const std::span<const uint32_t> ids{batch.ids.data() + row.first, row.count};
    if (conversations_) {
      std::span<const uint8_t> mask;
      if (!batch.loss_mask.empty()) mask = {batch.loss_mask.data() + row.first, row.count};
      layout_.write_conversations(out, ids, mask, {});
      stats.tokens += row.count;
    } else {
      std::span<const uint8_t> types;
      if (!batch.type_ids.empty()) types = {batch.type_ids.data() + row.first, row.count};
      layout_.write(out, ids, types, row);
      stats.tokens += std::min(row.count, layout_.max_len());
    }
  }
  stats.records += batch.rows.size();
}

std::unique_ptr<RecordAssembler> make_record_assembler(const RecordLayout& layout,
                                                       const TaskOptions& task) {
  if (task.packing() && task.task == Task::kSft)
    return std::make_unique<ConversationPacker>(layout);
  if (task.packing()) return std::make_unique<Packer>(layout, task.position_ids);
  return std::make_unique<RowPerExample>(layout, task.task == Task::kSft);
}

}  // namespace shardkit::shardify
