#include "loader/collator.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.h"

namespace shardkit::loader {

namespace {

bool is_integer(DType d) { return d != DType::kF32; }

// Fields sit at any byte offset inside a record, so sources are read with memcpy (an unaligned
// load once compiled); destinations are column buffers, aligned to their element size.
template <typename From, typename To>
void convert_typed(const void* src, void* dst, size_t n) {
  const unsigned char* s = static_cast<const unsigned char*>(src);
  To* d = static_cast<To*>(dst);
  for (size_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, s + i * sizeof(From), sizeof(From));
    d[i] = static_cast<To>(v);
  }
}

template <typename From>
void convert_from(const void* src, DType to, void* dst, size_t n) {
  switch (to) {
    case DType::kU8:
      return convert_typed<From, uint8_t>(src, dst, n);
    case DType::kU16:
      return convert_typed<From, uint16_t>(src, dst, n);
    case DType::kU32:
      return convert_typed<From, uint32_t>(src, dst, n);
    case DType::kI32:
      return convert_typed<From, int32_t>(src, dst, n);
    case DType::kI64:
      return convert_typed<From, int64_t>(src, dst, n);
    case DType::kF32:
      return convert_typed<From, float>(src, dst, n);
  }
}

}  // namespace

DType output_dtype(DType stored, IntOutput mode) {
  if (!is_integer(stored) || mode == IntOutput::kKeep) return stored;
  return mode == IntOutput::kInt64 ? DType::kI64 : DType::kI32;
}

void cast_elements(DType from, const void* src, DType to, void* dst, size_t n) {
  if (from == to) {
    std::memcpy(dst, src, n * dtype_size(from));
    return;
  }
  switch (from) {
    case DType::kU8:
      return convert_from<uint8_t>(src, to, dst, n);
    case DType::kU16:
      return convert_from<uint16_t>(src, to, dst, n);
    case DType::kU32:
      return convert_from<uint32_t>(src, to, dst, n);
    case DType::kI32:
      return convert_from<int32_t>(src, to, dst, n);
    case DType::kI64:
      return convert_from<int64_t>(src, to, dst, n);
    case DType::kF32:
      return convert_from<float>(src, to, dst, n);
  }
}

Collator::Collator(const Schema& schema, const DatasetInfo& info, const LoaderOptions& options) {
  if (const Field* seq = schema.find(options.sequence_field); seq && seq->shape.size() == 1)
    seq_len_ = seq->shape[0];
  auto scalar_int = [&](const std::string& name) -> const Field* {
    const Field* f = schema.find(name);
    return f && f->shape.empty() && is_integer(f->dtype) ? f : nullptr;
  };
  length_ = scalar_int(options.length_field);
  if (const std::string* first = info.field(FieldRole::kFirstSegmentLength))
    first_length_ = scalar_int(*first);
  dynamic_ = options.dynamic_padding && seq_len_ > 0 && length_ != nullptr;
  multiple_ = std::max<uint32_t>(1, options.pad_to_multiple_of);

  std::vector<const Field*> selected;
  if (options.fields.empty()) {
    for (const Field& f : schema.fields())
      if (options.include_metadata ||
          is_model_field(info.role_of(f.name).value_or(FieldRole::kOther)))
        selected.push_back(&f);
  } else {
    for (const std::string& name : options.fields) {
      const Field* f = schema.find(name);
      if (!f)
        throw Error(ErrorCode::kInvalidArgument, "",
                    "field '" + name + "' is not in the dataset schema " + schema.canonical());
      selected.push_back(f);
    }
  }
  for (const Field* f : selected) {
    const bool sequence = seq_len_ > 0 && f->shape.size() == 1 && f->shape[0] == seq_len_;
    outputs_.push_back({f, output_dtype(f->dtype, options.int_output), sequence});
  }
  derived_dtype_ = options.int_output == IntOutput::kInt32  ? DType::kI32
                   : options.int_output == IntOutput::kKeep ? DType::kU8
                                                            : DType::kI64;
  derive_mask_ = options.attention_mask && !options.documents.attention_mask && seq_len_ > 0 &&
                 length_ && !schema.find("attention_mask");
  if (options.documents.any()) init_documents(schema, info, options);
  derive_types_ = seq_len_ > 0 && length_ && first_length_ && !schema.find("token_type_ids");
  if (options.sft_labels && info.task.type == Task::kSft) init_sft_labels(schema, info, options);
  if (options.mlm.enabled) {
    const bool clash = std::any_of(outputs_.begin(), outputs_.end(), [&](const Output& o) {
      return o.field->name == options.mlm.labels_field;
    });
    if (clash)
      throw Error(ErrorCode::kInvalidArgument, "",
                  "MLM writes '" + options.mlm.labels_field +
                      "' but the dataset stores a field of that name: select fields without it");
    mlm_label_bytes_ = seq_len_ * 8;
  }
}

void Collator::init_documents(const Schema& schema, const DatasetInfo& info,
                              const LoaderOptions& options) {
  const DocumentOptions& d = options.documents;
  const std::string task = info.task.type ? task_name(*info.task.type) : "none";
  const Field* starts = d.starts_field.empty() ? nullptr : schema.find(d.starts_field);
  if (!d.starts_field.empty() &&
      (!starts || starts->dtype != DType::kU8 || starts->shape.size() != 1))
    throw Error(ErrorCode::kInvalidArgument, "",
                "document starts field '" + d.starts_field + "' is not a u8 bitmap in " +
                    schema.canonical());
  if (!d.separator_id && !starts)
    throw Error(ErrorCode::kInvalidArgument, "",
                "document boundaries need a packed dataset whose documents end with a separator "
                "id (task.packed, task.separator_id); this dataset's task is '" +
                    task + "'" + (info.task.type == Task::kLm ? " without packing" : "") +
                    ". A dataset packed by another program can name its separator_id");
  const Field* ids = schema.find(options.sequence_field);
  if (!ids || ids->shape.size() != 1 || !is_integer(ids->dtype))
    throw Error(ErrorCode::kInvalidArgument, "",
                "document boundaries need a token ids field of shape [L]; '" +
                    options.sequence_field + "' is not one in " + schema.canonical());
  auto emitted = [&](std::string_view name) {
    return std::any_of(outputs_.begin(), outputs_.end(),
                       [&](const Output& o) { return o.field->name == name; });
  };
  for (auto [asked, name] :
       {std::pair{d.position_ids, "position_ids"}, std::pair{d.cu_seqlens, "cu_seqlens"},
        std::pair{d.cu_seqlens, "max_seqlen"}, std::pair{d.attention_mask, "attention_mask"}})
    if (asked && emitted(name))
      throw Error(ErrorCode::kInvalidArgument, "",
                  std::string("document boundaries write '") + name +
                      "' but the dataset stores a field of that name: select fields without it");
  const DType positions = derived_dtype_ == DType::kU8 ? DType::kI32 : derived_dtype_;
  documents_.emplace(*ids, length_, d.separator_id.value_or(0), d, positions, starts);
}

void Collator::init_sft_labels(const Schema& schema, const DatasetInfo& info,
                               const LoaderOptions& options) {
  ids_ = schema.find(options.sequence_field);
  if (!ids_ || seq_len_ == 0 || !length_)
    throw Error(ErrorCode::kInvalidArgument, "",
                "sft labels need the token ids and length fields; select them or set "
                "sft_labels=false");
  if (options.mlm.enabled)
    throw Error(ErrorCode::kInvalidArgument, "",
                "MLM and sft both write 'labels': set sft_labels=false for MLM on an sft dataset");
  for (const Output& o : outputs_)
    if (o.field->name == "labels")
      throw Error(ErrorCode::kInvalidArgument, "",
                  "sft writes 'labels' but the dataset stores a field of that name");
  auto bitmap = [&](FieldRole role) -> const Field* {
    const std::string* name = info.field(role);
    const Field* f = name ? schema.find(*name) : nullptr;
    return f && f->dtype == DType::kU8 && f->shape.size() == 1 ? f : nullptr;
  };
  loss_mask_ = bitmap(FieldRole::kLossMask);
  conversation_starts_ = bitmap(FieldRole::kDocumentStarts);
  labels_dtype_ = options.int_output == IntOutput::kInt64 ? DType::kI64 : DType::kI32;
  ignore_index_ = options.ignore_index;
  derive_labels_ = true;
}

// labels[i][k]: the id where the loss mask is on, ignore_index elsewhere, on padding and on the
// first token of each packed conversation.
void Collator::collate_sft_labels(const std::vector<const unsigned char*>& rows, size_t t,
                                  Batch& out) const {
  const size_t n = rows.size();
  Column col("labels", labels_dtype_, {static_cast<int64_t>(n), static_cast<int64_t>(t)},
             out.buffers);
  std::vector<int64_t> ids(t);
  auto bit = [](const unsigned char* bits, const Field* f, size_t k) {
    return k < f->element_count() * 8 && ((bits[k >> 3] >> (k & 7)) & 1) != 0;
  };
  auto write = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for (size_t i = 0; i < n; ++i) {
      const unsigned char* row = rows[i];
      const size_t len = static_cast<size_t>(
          std::clamp<int64_t>(scalar(row, length_), 0, static_cast<int64_t>(t)));
      cast_elements(ids_->dtype, row + ids_->offset, DType::kI64, ids.data(), len);
      T* dst = p + i * t;
      for (size_t k = 0; k < len; ++k) {
        const bool trained = (!loss_mask_ || bit(row + loss_mask_->offset, loss_mask_, k)) &&
                             !(conversation_starts_ &&
                               bit(row + conversation_starts_->offset, conversation_starts_, k));
        dst[k] = static_cast<T>(trained ? ids[k] : ignore_index_);
      }
      std::fill(dst + len, dst + t, static_cast<T>(ignore_index_));
    }
  };
  if (labels_dtype_ == DType::kI64)
    write(col.as<int64_t>());
  else
    write(col.as<int32_t>());
  out.columns.push_back(std::move(col));
}

int64_t Collator::scalar(const unsigned char* row, const Field* f) const {
  int64_t v = 0;
  cast_elements(f->dtype, row + f->offset, DType::kI64, &v, 1);
  return v;
}

size_t Collator::sequence_length_of(const std::vector<const unsigned char*>& rows) const {
  if (!dynamic_) return seq_len_;
  int64_t longest = 0;
  for (const unsigned char* row : rows) longest = std::max(longest, scalar(row, length_));
  const uint64_t rounded = (static_cast<uint64_t>(std::max<int64_t>(longest, 1)) + multiple_ - 1) /
                           multiple_ * multiple_;
  return static_cast<size_t>(std::min<uint64_t>(rounded, seq_len_));
}

void Collator::collate(const std::vector<const unsigned char*>& rows, Batch& out) const {
  const size_t n = rows.size();
  const size_t t = sequence_length_of(rows);
  for (const Output& o : outputs_) {
    std::vector<int64_t> shape{static_cast<int64_t>(n)};
    size_t per_row = o.field->element_count();
    if (o.sequence) {
      shape.push_back(static_cast<int64_t>(t));
      per_row = t;
    } else {
      for (uint32_t d : o.field->shape) shape.push_back(d);
    }
    Column col(o.field->name, o.dtype, shape, out.buffers);
    unsigned char* dst = static_cast<unsigned char*>(col.data());
    const size_t dst_row = per_row * dtype_size(o.dtype);
    for (size_t i = 0; i < n; ++i)
      cast_elements(o.field->dtype, rows[i] + o.field->offset, o.dtype, dst + i * dst_row, per_row);
    out.columns.push_back(std::move(col));
  }
  if (derive_mask_ || derive_types_) {
    std::vector<int64_t> len(n), first(n, 0);
    for (size_t i = 0; i < n; ++i) {
      len[i] = scalar(rows[i], length_);
      if (derive_types_) first[i] = scalar(rows[i], first_length_);
    }
    // Row i is 1 on [from[i], to[i]) and 0 elsewhere, written with a typed loop per dtype.
    const int64_t width = static_cast<int64_t>(t);
    auto fill = [&](const char* name, const std::vector<int64_t>& from,
                    const std::vector<int64_t>& to) {
      Column col(name, derived_dtype_, {static_cast<int64_t>(n), width}, out.buffers);
      auto write = [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        for (size_t i = 0; i < n; ++i) {
          const size_t lo = static_cast<size_t>(std::clamp<int64_t>(from[i], 0, width));
          const size_t hi = std::max(lo, static_cast<size_t>(std::clamp<int64_t>(to[i], 0, width)));
          T* row = p + i * t;
          std::fill(row, row + lo, T{0});
          std::fill(row + lo, row + hi, T{1});
          std::fill(row + hi, row + t, T{0});
        }
      };
      switch (derived_dtype_) {
        case DType::kU8:
          write(col.as<uint8_t>());
          break;
        case DType::kI32:
          write(col.as<int32_t>());
          break;
        default:
          write(col.as<int64_t>());
          break;
      }
      out.columns.push_back(std::move(col));
    };
    if (derive_mask_) fill("attention_mask", std::vector<int64_t>(n, 0), len);
    if (derive_types_) fill("token_type_ids", first, len);
  }
  if (documents_) documents_->collate(rows, t, out);
  if (derive_labels_) collate_sft_labels(rows, t, out);
}

size_t Collator::max_batch_bytes(size_t rows) const {
  size_t per_row =
      mlm_label_bytes_ + (derive_mask_ + derive_types_ + derive_labels_) * seq_len_ * 8;
  for (const Output& o : outputs_) per_row += o.field->element_count() * dtype_size(o.dtype);
  if (documents_) per_row += documents_->max_row_bytes();
  return per_row * rows + 64 * (outputs_.size() + 7);
}

}  // namespace shardkit::loader
