#include "loader/epoch_order.h"

#include <algorithm>

#include "loader/partitioned_order.h"

namespace shardkit::loader {

namespace {
constexpr uint64_t kWindowTag = 0x57696e646f77ull;  // "Window"
}  // namespace

std::shared_ptr<const RecordOrder> make_order(const Geometry& geometry, const OrderParams& params) {
  if (params.partitions) return std::make_shared<const PartitionedOrder>(geometry, params);
  return std::make_shared<const EpochOrder>(geometry, params);
}

EpochOrder::EpochOrder(const Geometry& geometry, OrderParams params)
    : params_(params), sequence_(geometry, params.shuffle, params.seed, params.epoch) {
  const uint64_t nb = geometry.blocks();
  k_ = std::max<uint64_t>(1, std::min<uint64_t>(params_.window_blocks, std::max<uint64_t>(nb, 1)));
}

uint64_t EpochOrder::window_count() const { return (sequence_.blocks() + k_ - 1) / k_; }

uint64_t EpochOrder::window_start(uint64_t window) const {
  return sequence_.records_before(std::min(window * k_, sequence_.blocks()));
}

uint64_t EpochOrder::window_of(uint64_t position) const {
  if (!params_.shuffle) return geometry().block_of_record(position) / k_;
  // The largest window whose start is <= position.
  uint64_t lo = 0, hi = window_count();  // answer in [lo, hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (window_start(mid) <= position)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

std::vector<uint64_t> EpochOrder::blocks_of_window(uint64_t window) const {
  std::vector<uint64_t> blocks;
  const uint64_t first = std::min(window * k_, sequence_.blocks());
  const uint64_t end = std::min(first + k_, sequence_.blocks());
  for (uint64_t p = first; p < end; ++p) blocks.push_back(sequence_.block_at(p));
  return blocks;
}

void EpochOrder::records(uint64_t first, uint64_t count, uint64_t* out) const {
  if (!params_.shuffle) {
    for (uint64_t i = 0; i < count; ++i) out[i] = first + i;
    return;
  }
  uint64_t i = 0;
  while (i < count) {
    const uint64_t w = window_of(first + i);
    const uint64_t start = window_start(w);
    const uint64_t end = window_start(w + 1);
    const KeyedPermutation perm(end - start, hash_of(params_.seed, params_.epoch, kWindowTag, w));
    for (; i < count && first + i < end; ++i)
      out[i] = sequence_.record(start + perm(first + i - start));
  }
}

}  // namespace shardkit::loader
