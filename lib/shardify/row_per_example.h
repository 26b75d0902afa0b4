// Unpacked records: each encoded row becomes one record, padded (or cut) to max_len; sft rows
// carry their loss mask.
#pragma once

#include "shardify/record_assembler.h"

namespace shardkit::shardify {

class RowPerExample : public RecordAssembler {
 public:
  RowPerExample(const RecordLayout& layout, bool conversations)
      : layout_(layout), conversations_(conversations) {}
  void add(const EncodedBatch& batch, std::vector<unsigned char>& records,
           ConvertStats& stats) override;

 private:
  const RecordLayout& layout_;
  bool conversations_;  // sft: rows with a loss mask
};

}  // namespace shardkit::shardify
