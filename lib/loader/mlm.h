// Masked-language-model corruption of a batch, as BERT and HF's DataCollatorForLanguageModeling
// do it: each real token is selected with `probability`; a selected token becomes the mask
// token (80%), a random id (10%) or stays (10%); labels hold the original id where selected and
// ignore_index elsewhere. Special tokens and padding are never selected. Every draw is a hash of
// (seed, epoch, record, position), so a resumed run, any thread count and any batch layout mask
// the same tokens of the same record the same way. In a mixture the source and the pass over it
// join the key: two sources' record 7, or a record repeated within an epoch, are masked apart.
#pragma once

#include <cstdint>
#include <span>

#include "loader/batch.h"
#include "loader/loader_options.h"

namespace shardkit::loader {

// Throws Error(kInvalidArgument) when the options are incomplete (mask id, vocabulary size).
void validate_mlm(const MlmOptions& options);
// `lengths`: real tokens per row, or nullptr to treat every position as real. `passes`: each
// row's pass over its source (empty: all 0).
void apply_mlm(Batch& batch, const MlmOptions& options, uint64_t seed, const Column* lengths,
               DType labels_dtype, std::span<const uint32_t> passes = {});

}  // namespace shardkit::loader
