#include "shardify/conversation_packer.h"

namespace shardkit::shardify {

ConversationPacker::ConversationPacker(const RecordLayout& layout) : layout_(layout) {
  ids_.reserve(layout.max_len());
}

void ConversationPacker::add(const EncodedBatch& batch, std::vector<unsigned char>& records,
                             ConvertStats& stats) {
  const size_t max_len = layout_.max_len();
  const bool masked = !batch.loss_mask.empty();
  for (const EncodedRow& conversation : batch.rows) {
    if (!ids_.empty() && ids_.size() + conversation.count > max_len) emit(records, stats);
    starts_.push_back(static_cast<uint32_t>(ids_.size()));
    const auto first = batch.ids.begin() + conversation.first;
    ids_.insert(ids_.end(), first, first + conversation.count);
    if (masked) {
      const auto m = batch.loss_mask.begin() + conversation.first;
      mask_.insert(mask_.end(), m, m + conversation.count);
    }
  }
}

void ConversationPacker::end_file(std::vector<unsigned char>& records, ConvertStats& stats) {
  if (!ids_.empty()) emit(records, stats);
}

void ConversationPacker::emit(std::vector<unsigned char>& records, ConvertStats& stats) {
  const size_t rs = layout_.record_size();
  records.resize(records.size() + rs);
  layout_.write_conversations(records.data() + records.size() - rs, ids_, mask_, starts_);
  ++stats.records;
  stats.tokens += ids_.size();
  ids_.clear();
  mask_.clear();
  starts_.clear();
}

}  // namespace shardkit::shardify
