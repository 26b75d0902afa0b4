#include "shardify/packer.h"

#include <algorithm>

namespace shardkit::shardify {

Packer::Packer(const RecordLayout& layout, bool position_ids)
    : layout_(layout), position_ids_(position_ids) {
  window_.reserve(layout.max_len());
}

void Packer::add(const EncodedBatch& batch, std::vector<unsigned char>& records,
                 ConvertStats& stats) {
  const size_t max_len = layout_.max_len();
  for (const EncodedRow& doc : batch.rows) {
    size_t i = doc.first;
    const size_t end = size_t{doc.first} + doc.count;
    while (i < end) {
      const size_t take = std::min(end - i, max_len - window_.size());
      window_.insert(window_.end(), batch.ids.begin() + i, batch.ids.begin() + i + take);
      if (position_ids_)
        for (size_t k = 0; k < take; ++k) positions_.push_back(static_cast<uint16_t>(position_++));
      i += take;
      if (window_.size() == max_len) emit(records, stats);
    }
    document_tokens_ += doc.count;
    if (doc.continues) continue;
    ++stats.examples;
    ++stats.length_histogram[length_bucket(document_tokens_)];
    document_tokens_ = 0;
    position_ = 0;
  }
}

void Packer::end_file(std::vector<unsigned char>& records, ConvertStats& stats) {
  if (!window_.empty()) emit(records, stats);
  position_ = 0;
}

void Packer::emit(std::vector<unsigned char>& records, ConvertStats& stats) {
  const size_t rs = layout_.record_size();
  records.resize(records.size() + rs);
  layout_.write_window(records.data() + records.size() - rs, window_, positions_);
  ++stats.records;
  stats.tokens += window_.size();
  window_.clear();
  positions_.clear();
  // A document continuing into the next window starts again at position 0 there.
  position_ = 0;
}

}  // namespace shardkit::shardify
