// How tokenized batches become records, one class per record shape: packed lm documents
// (Packer), packed sft conversations (ConversationPacker), and one row per example
// (RowPerExample). Records come out in input order; end_file() closes a partial row, so that
// every input file starts a new row and the parts of a --part run merge into exactly the
// records of a single run.
#pragma once

#include <memory>
#include <vector>

#include "core/convert_stats.h"
#include "shardify/encoded_batch.h"
#include "shardify/record_layout.h"
#include "shardify/task.h"

namespace shardkit::shardify {

class RecordAssembler {
 public:
  virtual ~RecordAssembler() = default;
  // Appends the records the batch completes to `records`, counting them in `stats`.
  virtual void add(const EncodedBatch& batch, std::vector<unsigned char>& records,
                   ConvertStats& stats) = 0;
  virtual void end_file(std::vector<unsigned char>& records, ConvertStats& stats) {
    (void)records, (void)stats;
  }
};

// The assembler for the task's record shape.
std::unique_ptr<RecordAssembler> make_record_assembler(const RecordLayout& layout,
                                                       const TaskOptions& task);

}  // namespace shardkit::shardify
