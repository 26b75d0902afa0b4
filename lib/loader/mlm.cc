#include "loader/mlm.h"

#include <algorithm>

#include "core/error.h"
#include "loader/keyed_permutation.h"

namespace shardkit::loader {

namespace {
constexpr uint64_t kMlmTag = 0x4d4c4dull;  // "MLM"
double unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }
}  // namespace

void validate_mlm(const MlmOptions& o) {
  if (!o.enabled) return;
  if (o.mask_token_id < 0)
    throw Error(ErrorCode::kInvalidArgument, "",
                "MLM needs mask_token_id (the dataset's tokenizer has no [MASK] token)");
  if (o.vocab_size == 0)
    throw Error(ErrorCode::kInvalidArgument, "",
                "MLM needs vocab_size (the dataset records no tokenizer)");
  if (!(o.probability >= 0 && o.probability <= 1) || o.mask_fraction < 0 || o.random_fraction < 0 ||
      o.mask_fraction + o.random_fraction > 1)
    throw Error(ErrorCode::kInvalidArgument, "",
                "MLM fractions must lie in [0, 1] with mask_fraction + random_fraction <= 1");
}

void apply_mlm(Batch& batch, const MlmOptions& o, uint64_t seed, const Column* lengths,
               DType labels_dtype, std::span<const uint32_t> passes) {
  Column& ids = batch.at(o.input_field);
  if (ids.shape().size() != 2)
    throw Error(ErrorCode::kInvalidArgument, "",
                "MLM input '" + o.input_field + "' is not [batch, L]");
  const size_t rows = static_cast<size_t>(ids.shape()[0]);
  const size_t t = static_cast<size_t>(ids.shape()[1]);
  Column labels(o.labels_field, labels_dtype, ids.shape(), batch.buffers);
  std::vector<int64_t> special = o.special_ids;
  special.push_back(o.mask_token_id);
  std::sort(special.begin(), special.end());
  for (size_t i = 0; i < rows; ++i) {
    uint64_t row_key = hash_of(seed, batch.epoch, batch.records[i], kMlmTag);
    // One dataset read once keeps the key it always had (and so its masks).
    const uint32_t source = batch.sources.empty() ? 0 : batch.sources[i];
    const uint32_t pass = passes.empty() ? 0 : passes[i];
    if (source != 0 || pass != 0) row_key = hash_of(row_key, source, pass);
    const size_t real =
        lengths ? static_cast<size_t>(std::clamp<int64_t>(lengths->get(i), 0, t)) : t;
    for (size_t j = 0; j < t; ++j) {
      const size_t at = i * t + j;
      const int64_t id = ids.get(at);
      labels.set(at, o.ignore_index);
      if (j >= real || std::binary_search(special.begin(), special.end(), id)) continue;
      const uint64_t h = hash_of(row_key, j);
      if (unit(h) >= o.probability) continue;
      labels.set(at, id);
      const double action = unit(mix64(h));
      if (action < o.mask_fraction) {
        ids.set(at, o.mask_token_id);
      } else if (action < o.mask_fraction + o.random_fraction) {
        ids.set(at, static_cast<int64_t>(mix64(h ^ 0x5bd1e995ull) % o.vocab_size));
      }
    }
  }
  batch.columns.push_back(std::move(labels));
}

}  // namespace shardkit::loader
