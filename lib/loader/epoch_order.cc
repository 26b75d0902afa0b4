#include "loader/epoch_order.h"

#include <algorithm>
#include <numeric>

namespace shardkit::loader {

namespace {
constexpr uint64_t kBlockTag = 0x426c6f636b73ull;   // "Blocks"
constexpr uint64_t kWindowTag = 0x57696e646f77ull;  // "Window"
}  // namespace

EpochOrder::EpochOrder(const Geometry& geometry, OrderParams params)
    : geometry_(geometry), params_(params) {
  const uint64_t nb = geometry_.blocks();
  k_ = std::max<uint64_t>(1, std::min<uint64_t>(params_.window_blocks, std::max<uint64_t>(nb, 1)));
  if (!params_.shuffle) return;
  block_perm_ = KeyedPermutation(nb, hash_of(params_.seed, params_.epoch, kBlockTag));
  const auto& blocks = geometry_.short_blocks();
  std::vector<size_t> idx(blocks.size());
  std::vector<uint64_t> pos(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) pos[i] = block_perm_.inverse(blocks[i]);
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return pos[a] < pos[b]; });
  const uint32_t rpb = geometry_.records_per_block();
  uint64_t deficit = 0;
  for (size_t i : idx) {
    short_pos_.push_back(pos[i]);
    short_records_.push_back(geometry_.short_block_records()[i]);
    short_deficit_before_.push_back(deficit);
    deficit += rpb - geometry_.short_block_records()[i];
  }
}

uint64_t EpochOrder::window_count() const { return (geometry_.blocks() + k_ - 1) / k_; }

uint64_t EpochOrder::records_before(uint64_t block_position) const {
  const size_t n = static_cast<size_t>(
      std::lower_bound(short_pos_.begin(), short_pos_.end(), block_position) - short_pos_.begin());
  const uint64_t deficit = n == 0 ? 0
                                  : short_deficit_before_[n - 1] +
                                        (geometry_.records_per_block() - short_records_[n - 1]);
  return block_position * geometry_.records_per_block() - deficit;
}

uint64_t EpochOrder::window_start(uint64_t window) const {
  return records_before(std::min(window * k_, geometry_.blocks()));
}

uint64_t EpochOrder::window_of(uint64_t position) const {
  if (!params_.shuffle) return geometry_.block_of_record(position) / k_;
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
  const uint64_t first = std::min(window * k_, geometry_.blocks());
  const uint64_t end = std::min(first + k_, geometry_.blocks());
  for (uint64_t p = first; p < end; ++p) blocks.push_back(params_.shuffle ? block_perm_(p) : p);
  return blocks;
}

uint64_t EpochOrder::record_of_unwindowed(uint64_t u) const {
  const uint32_t rpb = geometry_.records_per_block();
  // The last short block whose first record (in permuted order) is <= u.
  size_t lo = 0, hi = short_pos_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint64_t first = short_pos_[mid] * rpb - short_deficit_before_[mid];
    if (first <= u)
      lo = mid + 1;
    else
      hi = mid;
  }
  uint64_t block_position, slot;
  if (lo == 0) {
    block_position = u / rpb;
    slot = u % rpb;
  } else {
    const size_t i = lo - 1;
    const uint64_t first = short_pos_[i] * rpb - short_deficit_before_[i];
    if (u - first < short_records_[i]) {
      block_position = short_pos_[i];
      slot = u - first;
    } else {
      const uint64_t after = u - first - short_records_[i];
      block_position = short_pos_[i] + 1 + after / rpb;
      slot = after % rpb;
    }
  }
  return geometry_.block_first_record(block_perm_(block_position)) + slot;
}

uint64_t EpochOrder::record_at(uint64_t position) const {
  uint64_t r;
  records(position, 1, &r);
  return r;
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
      out[i] = record_of_unwindowed(start + perm(first + i - start));
  }
}

}  // namespace shardkit::loader
