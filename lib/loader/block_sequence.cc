#include "loader/block_sequence.h"

#include <algorithm>
#include <numeric>

namespace shardkit::loader {

namespace {
constexpr uint64_t kBlockTag = 0x426c6f636b73ull;  // "Blocks"
}  // namespace

BlockSequence::BlockSequence(const Geometry& geometry, bool shuffle, uint64_t seed, uint64_t epoch)
    : geometry_(geometry), shuffle_(shuffle) {
  const auto& blocks = geometry_.short_blocks();
  std::vector<uint64_t> pos(blocks.begin(), blocks.end());
  if (shuffle_) {
    perm_ = KeyedPermutation(geometry_.blocks(), hash_of(seed, epoch, kBlockTag));
    for (uint64_t& p : pos) p = perm_.inverse(p);
  }
  std::vector<size_t> idx(blocks.size());
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

uint64_t BlockSequence::records_before(uint64_t position) const {
  const size_t n = static_cast<size_t>(
      std::lower_bound(short_pos_.begin(), short_pos_.end(), position) - short_pos_.begin());
  const uint64_t deficit = n == 0 ? 0
                                  : short_deficit_before_[n - 1] +
                                        (geometry_.records_per_block() - short_records_[n - 1]);
  return position * geometry_.records_per_block() - deficit;
}

std::pair<uint64_t, uint64_t> BlockSequence::locate(uint64_t u) const {
  const uint32_t rpb = geometry_.records_per_block();
  // The last short block whose first record is <= u.
  size_t lo = 0, hi = short_pos_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint64_t first = short_pos_[mid] * rpb - short_deficit_before_[mid];
    if (first <= u)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return {u / rpb, u % rpb};
  const size_t i = lo - 1;
  const uint64_t first = short_pos_[i] * rpb - short_deficit_before_[i];
  if (u - first < short_records_[i]) return {short_pos_[i], u - first};
  const uint64_t after = u - first - short_records_[i];
  return {short_pos_[i] + 1 + after / rpb, after % rpb};
}

uint64_t BlockSequence::position_of(uint64_t u) const { return locate(u).first; }

uint64_t BlockSequence::record(uint64_t u) const {
  const auto [position, slot] = locate(u);
  return geometry_.block_first_record(block_at(position)) + slot;
}

}  // namespace shardkit::loader
