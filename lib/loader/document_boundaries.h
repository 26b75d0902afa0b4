// Packed lm rows hold several documents, each ending with the separator id. This derives, per
// batch, what attention needs to keep them apart: position_ids restarting at each document,
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
  // positions are written as `position_dtype`. Throws Error(kInvalidArgument) for a mask
  // longer than options.max_mask_length.
  DocumentBoundaries(const Field& ids, const Field* length, uint32_t separator,
                     const DocumentOptions& options, DType position_dtype);

  // Appends the asked-for columns for rows trimmed to `width` tokens.
  void collate(const std::vector<const unsigned char*>& rows, size_t width, Batch& out) const;
  // Upper bound of the bytes added per row, plus a constant per batch.
  size_t max_row_bytes() const;

 private:
  const Field& ids_;
  const Field* length_;
  uint32_t separator_;
  DocumentOptions options_;
  DType position_dtype_;
};

}  // namespace shardkit::loader
