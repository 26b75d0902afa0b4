// Packed lm: documents (each already followed by the separator id) are laid end to end and cut
// into rows of max_len tokens, in input order; a document that does not fit continues in the
// next row. A row that `continues` is followed by more of the same document (a long document
// tokenized in parts). The packer counts the documents and their lengths. end_file() pads the last
// partial row, so that every input file starts a new row and the parts of a --part run merge into
// exactly the records of a single run.
#pragma once

#include <cstdint>
#include <vector>

#include "core/convert_stats.h"
#include "shardify/encoded_batch.h"
#include "shardify/record_assembler.h"
#include "shardify/record_layout.h"

namespace shardkit::shardify {

class Packer : public RecordAssembler {
 public:
  Packer(const RecordLayout& layout, bool position_ids);
  // Appends the complete rows the batch's documents fill to `records`.
  void add(const EncodedBatch& batch, std::vector<unsigned char>& records,
           ConvertStats& stats) override;
  void end_file(std::vector<unsigned char>& records, ConvertStats& stats) override;

 private:
  void emit(std::vector<unsigned char>& records, ConvertStats& stats);

  const RecordLayout& layout_;
  bool position_ids_;
  std::vector<uint32_t> window_;
  std::vector<uint16_t> positions_;
  uint32_t position_ = 0;         // position of the next token inside its document
  uint64_t document_tokens_ = 0;  // of the document's parts so far (EncodedRow::continues)
};

}  // namespace shardkit::shardify
