// The fixed-size record of each task (HuggingFace field names, roles in DatasetInfo):
//   lm   input_ids[L], length u32                       (+ position_ids[L] u16 with --position-ids)
//   cls  input_ids[L], length u32, labels i32
//   pair input_ids[L], token_type_ids[L] u8, length u32, labels i32
//   qa   input_ids[L], token_type_ids[L] u8, length u32, start_positions i32, end_positions i32,
//        example_index u32, source_index u32
//   sft  input_ids[L], length u32, loss_mask u8[ceil(L/8)] (not with --train-on all),
//        document_starts u8[ceil(L/8)] (packed): bit k of byte k/8, lowest bit first
// input_ids are u16 when the vocabulary has fewer than 65,536 ids, else i32. Positions at and
// after `length` hold the padding id.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/dataset_info.h"
#include "core/schema.h"
#include "shardify/encoded_batch.h"
#include "shardify/task.h"

namespace shardkit::shardify {

class RecordLayout {
 public:
  RecordLayout(const TaskOptions& options, size_t vocab_size, uint32_t padding_id);
  const Schema& schema() const { return schema_; }
  // The schema's fields with their roles, for DatasetInfo.
  const std::vector<FieldInfo>& fields() const { return fields_; }
  size_t record_size() const { return schema_.record_size(); }
  uint32_t max_len() const { return max_len_; }

  // Writes one record: `ids` (with `type_ids` when the task has segments) padded to max_len,
  // their count as length, and the row's scalar fields.
  void write(unsigned char* record, std::span<const uint32_t> ids,
             std::span<const uint8_t> type_ids, const EncodedRow& row) const;
  // sft: a row of one or more whole conversations: `mask` (0/1 per id, empty with --train-on
  // all) and the index of each conversation's first token (packed; empty otherwise).
  void write_conversations(unsigned char* record, std::span<const uint32_t> ids,
                           std::span<const uint8_t> mask, std::span<const uint32_t> starts) const;
  // Packed lm: a window and, with position_ids, each token's position in its document.
  void write_window(unsigned char* record, std::span<const uint32_t> ids,
                    std::span<const uint16_t> positions) const;

 private:
  void put_ids(unsigned char* record, std::span<const uint32_t> ids) const;

  Schema schema_;
  std::vector<FieldInfo> fields_;
  DType token_dtype_;
  uint32_t max_len_;
  uint32_t padding_id_;
  size_t ids_offset_ = 0;
  size_t length_offset_ = 0;
  std::optional<size_t> type_ids_offset_, position_ids_offset_, label_offset_;
  std::optional<size_t> start_offset_, end_offset_, example_offset_, source_offset_;
  std::optional<size_t> loss_mask_offset_, document_starts_offset_;
};

}  // namespace shardkit::shardify
