// Turns the records of a batch into columns: gathers each selected field into one contiguous
// buffer (widening integers as asked), trims [L]-shaped fields to the longest row (dynamic
// padding), and derives attention_mask and token_type_ids from stored lengths. By default the
// stored lengths and QA's indices stay out of the batch (LoaderOptions::include_metadata).
// For packed lm and sft it adds document boundaries (LoaderOptions::documents); for sft the
// labels, from the ids and the stored loss mask (LoaderOptions::sft_labels).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/schema.h"
#include "loader/batch.h"
#include "loader/document_boundaries.h"
#include "loader/loader_options.h"

namespace shardkit::loader {

class Collator {
 public:
  // Throws Error(kInvalidArgument) for a field that the schema lacks or an impossible option.
  // `options` as with_dataset_defaults() resolved them.
  Collator(const Schema& schema, const DatasetInfo& info, const LoaderOptions& options);

  // rows[i] points at the record of batch row i. Appends columns to `out`.
  void collate(const std::vector<const unsigned char*>& rows, Batch& out) const;
  // An upper bound of one batch's bytes with `rows` rows.
  size_t max_batch_bytes(size_t rows) const;

 private:
  struct Output {
    const Field* field;
    DType dtype;
    bool sequence;  // shaped [L]: trimmed by dynamic padding
  };
  size_t sequence_length_of(const std::vector<const unsigned char*>& rows) const;
  int64_t scalar(const unsigned char* row, const Field* f) const;
  void init_documents(const Schema& schema, const DatasetInfo& info, const LoaderOptions& options);
  void init_sft_labels(const Schema& schema, const DatasetInfo& info, const LoaderOptions& options);
  void collate_sft_labels(const std::vector<const unsigned char*>& rows, size_t t,
                          Batch& out) const;

  std::vector<Output> outputs_;
  uint32_t seq_len_ = 0;  // L, 0 when there is no sequence field
  const Field* length_ = nullptr;
  const Field* first_length_ = nullptr;
  bool derive_mask_ = false;
  bool derive_types_ = false;
  bool dynamic_ = false;
  uint32_t multiple_ = 1;
  DType derived_dtype_ = DType::kI64;
  size_t mlm_label_bytes_ = 0;
  std::optional<DocumentBoundaries> documents_;
  bool derive_labels_ = false;
  const Field* ids_ = nullptr;
  const Field* loss_mask_ = nullptr;
  const Field* conversation_starts_ = nullptr;
  DType labels_dtype_ = DType::kI64;
  int64_t ignore_index_ = -100;
};

DType output_dtype(DType stored, IntOutput mode);
// Copies n elements, converting between dtypes.
void cast_elements(DType from, const void* src, DType to, void* dst, size_t n);

}  // namespace shardkit::loader
