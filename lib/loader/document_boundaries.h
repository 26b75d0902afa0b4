// Packed rows hold several documents: lm's each end with the separator id, sft's start where the
// stored document_starts bitmap says. This derives, per batch, what attention needs to keep them
// apart: position_ids restarting at each document,
// flash-attn's cu_seqlens/max_seqlen, and a block-diagonal causal mask for SDPA
// (DocumentOptions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/schema.h"
#include "loader/batch.h"
#include "loader/loader_options.h"

namespace shardkit::loader {

class DocumentBoundaries {
 public:
  // `ids` is the [L] token ids field, `length` the real tokens per row (nullptr: all L);
  // documents end at `separator`, or (`starts` given: a u8 bitmap, bit k of byte k/8 set where a
  // document starts) before each start. Positions are written as `position_dtype`. Throws
  // Error(kInvalidArgument) for a mask longer than options.max_mask_length.
  DocumentBoundaries(const Field& ids, const Field* length, uint32_t separator,
                     const DocumentOptions& options, DType position_dtype,
                     const Field* starts = nullptr);

  // Appends the asked-for columns for rows trimmed to `width` tokens.
  void collate(const std::vector<const unsigned char*>& rows, size_t width, Batch& out) const;
  // Upper bound of the bytes added per row, plus a constant per batch.
  size_t max_row_bytes() const;

 private:
  const Field& ids_;
  const Field* length_;
  uint32_t separator_;
  const Field* starts_;
  DocumentOptions options_;
  DType position_dtype_;
};

}  // namespace shardkit::loader
