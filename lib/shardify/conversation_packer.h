// Packed sft: whole conversations laid end to end in rows of max_len tokens, in input order. A
// conversation that does not fit in what is left of the row starts the next one (the row is
// padded): unlike lm documents, a conversation cut in two would train its second half without
// the prompt it answers. The truncation policy has already made every conversation fit a row.
// Each row stores where its conversations start (document_starts) and their loss mask.
// end_file() closes the last partial row, so that every input file starts a new row and --part
// runs merge into exactly the records of a single run.
#pragma once

#include <cstdint>
#include <vector>

#include "core/convert_stats.h"
#include "shardify/encoded_batch.h"
#include "shardify/record_assembler.h"
#include "shardify/record_layout.h"

namespace shardkit::shardify {

class ConversationPacker : public RecordAssembler {
 public:
  explicit ConversationPacker(const RecordLayout& layout);
  // Appends the rows completed by the batch's conversations to `records`.
  void add(const EncodedBatch& batch, std::vector<unsigned char>& records,
           ConvertStats& stats) override;
  void end_file(std::vector<unsigned char>& records, ConvertStats& stats) override;

 private:
  void emit(std::vector<unsigned char>& records, ConvertStats& stats);

  const RecordLayout& layout_;
  std::vector<uint32_t> ids_;
  std::vector<uint8_t> mask_;
  std::vector<uint32_t> starts_;
};

}  // namespace shardkit::shardify
