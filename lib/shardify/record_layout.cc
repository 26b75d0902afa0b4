#include "shardify/record_layout.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "format/shard_format.h"

namespace shardkit::shardify {

RecordLayout::RecordLayout(const TaskOptions& o, size_t vocab_size, uint32_t padding_id)
    : max_len_(o.max_len), padding_id_(padding_id) {
  if (o.max_len < 2 || o.max_len > (1u << 20))
    throw Error(ErrorCode::kInvalidArgument, "", "--max-len must be in 2..1048576");
  token_dtype_ = vocab_size < 65536 ? DType::kU16 : DType::kI32;
  std::vector<Field> f;
  auto add = [&](const char* name, DType dtype, std::vector<uint32_t> shape, FieldRole role) {
    f.push_back({name, dtype, std::move(shape), 0});
    fields_.push_back({name, role});
  };
  add("input_ids", token_dtype_, {o.max_len}, FieldRole::kTokenIds);
  if (task_has_segments(o.task))
    add("token_type_ids", DType::kU8, {o.max_len}, FieldRole::kTokenTypeIds);
  if (o.task == Task::kLm && o.packing() && o.position_ids)
    add("position_ids", DType::kU16, {o.max_len}, FieldRole::kPositionIds);
  add("length", DType::kU32, {}, FieldRole::kLength);
  if (task_has_labels(o.task)) add("labels", DType::kI32, {}, FieldRole::kLabel);
  if (o.task == Task::kQa) {
    add("start_positions", DType::kI32, {}, FieldRole::kStartPosition);
    add("end_positions", DType::kI32, {}, FieldRole::kEndPosition);
    add("example_index", DType::kU32, {}, FieldRole::kExampleIndex);
    add("source_index", DType::kU32, {}, FieldRole::kSourceIndex);
  }
  const uint32_t bitmap_bytes = (o.max_len + 7) / 8;
  if (o.loss_mask()) add("loss_mask", DType::kU8, {bitmap_bytes}, FieldRole::kLossMask);
  if (o.task == Task::kSft && o.packing())
    add("document_starts", DType::kU8, {bitmap_bytes}, FieldRole::kDocumentStarts);
  schema_ = Schema(std::move(f));
  auto offset = [&](const char* name) -> std::optional<size_t> {
    if (const Field* field = schema_.find(name)) return field->offset;
    return std::nullopt;
  };
  ids_offset_ = *offset("input_ids");
  length_offset_ = *offset("length");
  type_ids_offset_ = offset("token_type_ids");
  position_ids_offset_ = offset("position_ids");
  label_offset_ = offset("labels");
  start_offset_ = offset("start_positions");
  end_offset_ = offset("end_positions");
  example_offset_ = offset("example_index");
  source_offset_ = offset("source_index");
  loss_mask_offset_ = offset("loss_mask");
  document_starts_offset_ = offset("document_starts");
}

void RecordLayout::put_ids(unsigned char* record, std::span<const uint32_t> ids) const {
  unsigned char* p = record + ids_offset_;
  const size_t n = std::min<size_t>(ids.size(), max_len_);
  if (token_dtype_ == DType::kU16) {
    for (size_t i = 0; i < n; ++i) {
      p[2 * i] = static_cast<unsigned char>(ids[i]);
      p[2 * i + 1] = static_cast<unsigned char>(ids[i] >> 8);
    }
    for (size_t i = n; i < max_len_; ++i) format::store_le(p + 2 * i, padding_id_, 2);
  } else {
    for (size_t i = 0; i < max_len_; ++i)
      format::store_le(p + 4 * i, i < n ? ids[i] : padding_id_, 4);
  }
  format::store_le(record + length_offset_, static_cast<uint32_t>(n), 4);
}

void RecordLayout::write(unsigned char* record, std::span<const uint32_t> ids,
                         std::span<const uint8_t> type_ids, const EncodedRow& row) const {
  std::memset(record, 0, record_size());
  put_ids(record, ids);
  if (type_ids_offset_)
    std::memcpy(record + *type_ids_offset_, type_ids.data(),
                std::min<size_t>(type_ids.size(), max_len_));
  auto put = [&](const std::optional<size_t>& at, uint32_t v) {
    if (at) format::store_le(record + *at, v, 4);
  };
  put(label_offset_, static_cast<uint32_t>(row.label));
  put(start_offset_, static_cast<uint32_t>(row.start_position));
  put(end_offset_, static_cast<uint32_t>(row.end_position));
  put(example_offset_, row.example_index);
  put(source_offset_, row.source_index);
}

void RecordLayout::write_conversations(unsigned char* record, std::span<const uint32_t> ids,
                                       std::span<const uint8_t> mask,
                                       std::span<const uint32_t> starts) const {
  std::memset(record, 0, record_size());
  put_ids(record, ids);
  if (loss_mask_offset_) {
    unsigned char* bits = record + *loss_mask_offset_;
    for (size_t k = 0; k < mask.size() && k < max_len_; ++k)
      if (mask[k]) bits[k >> 3] |= static_cast<unsigned char>(1u << (k & 7));
  }
  if (document_starts_offset_) {
    unsigned char* bits = record + *document_starts_offset_;
    for (uint32_t k : starts)
      if (k < max_len_) bits[k >> 3] |= static_cast<unsigned char>(1u << (k & 7));
  }
}

void RecordLayout::write_window(unsigned char* record, std::span<const uint32_t> ids,
                                std::span<const uint16_t> positions) const {
  std::memset(record, 0, record_size());
  put_ids(record, ids);
  if (position_ids_offset_) {
    unsigned char* p = record + *position_ids_offset_;
    for (size_t i = 0; i < positions.size() && i < max_len_; ++i)
      format::store_le(p + 2 * i, positions[i], 2);
  }
}

}  // namespace shardkit::shardify
