#include "loader/partitioned_order.h"

#include <algorithm>
#include <unordered_set>

namespace shardkit::loader {

namespace {
constexpr uint64_t kPartitionTag = 0x506172746974ull;  // "Partit"
}  // namespace

uint32_t partition_slot(uint32_t partition, uint32_t partitions) {
  uint32_t n = partitions, scale = partitions, x = partition, slot = 0, f = 2;
  while (n > 1) {
    if (uint64_t{f} * f > n) f = n;  // what is left is prime
    if (n % f != 0) {
      ++f;
      continue;
    }
    n /= f;
    scale /= f;
    slot += (x % f) * scale;
    x /= f;
  }
  return slot;
}

PartitionedOrder::PartitionedOrder(const Geometry& geometry, OrderParams params)
    : params_(params),
      sequence_(geometry, params.shuffle, params.seed, params.epoch),
      c_(std::max<uint32_t>(1, params.partitions)) {
  q_ = geometry.records() / c_;
  r0_ = geometry.records() % c_;
  const uint64_t blocks = std::max<uint64_t>(1, geometry.blocks());
  const uint64_t k = std::clamp<uint64_t>(params.window_blocks, 1, blocks);
  m_ = k >= blocks ? std::max<uint64_t>(1, q_ + (r0_ > 0))
                   : std::max<uint64_t>(1, k / c_) * geometry.records_per_block();
  slot_.resize(c_);
  at_slot_.resize(c_);
  start_.resize(c_);
  for (uint32_t c = 0; c < c_; ++c) {
    slot_[c] = partition_slot(c, c_);
    at_slot_[slot_[c]] = c;
  }
  uint64_t at = 0;
  for (uint32_t c : at_slot_) {
    start_[c] = at;
    at += slice_size(c);
  }
}

uint64_t PartitionedOrder::window_count() const {
  const uint64_t longest = q_ + (r0_ > 0);
  return (longest + m_ - 1) / m_;
}

uint64_t PartitionedOrder::window_of(uint64_t position) const { return position / c_ / m_; }

void PartitionedOrder::records(uint64_t first, uint64_t count, uint64_t* out) const {
  KeyedPermutation perm;
  uint64_t perm_partition = UINT64_MAX, perm_window = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t p = first + i;
    const uint32_t c = static_cast<uint32_t>(p % c_);
    const uint64_t t = p / c_, w = t / m_, n = slice_size(c);
    uint64_t s = t;
    if (params_.shuffle) {
      if (c != perm_partition || w != perm_window) {
        const uint64_t key =
            hash_combine(hash_of(params_.seed, params_.epoch, kPartitionTag, c), w);
        perm = KeyedPermutation(std::min(m_, n - w * m_), key);
        perm_partition = c, perm_window = w;
      }
      s = w * m_ + perm(t % m_);
    }
    const uint64_t index = slot_[c] % 2 ? n - 1 - s : s;
    out[i] = sequence_.record(start_[c] + index);
  }
}

std::pair<uint64_t, uint64_t> PartitionedOrder::window_range(uint32_t c, uint64_t w) const {
  const uint64_t n = slice_size(c);
  if (w >= (n + m_ - 1) / m_) return {0, 0};
  const uint64_t lo = w * m_, hi = std::min(n, lo + m_);
  if (slot_[c] % 2) return {start_[c] + n - hi, start_[c] + n - lo};
  return {start_[c] + lo, start_[c] + hi};
}

std::vector<uint64_t> PartitionedOrder::blocks_of_window(uint64_t window, uint32_t groups,
                                                         uint32_t group) const {
  std::vector<uint64_t> blocks;
  std::unordered_set<uint64_t> seen;
  for (uint32_t c : at_slot_) {
    if (c % groups != group) continue;
    const auto [begin, end] = window_range(c, window);
    if (begin == end) continue;
    for (uint64_t at = sequence_.position_of(begin); at <= sequence_.position_of(end - 1); ++at)
      if (const uint64_t b = sequence_.block_at(at); seen.insert(b).second) blocks.push_back(b);
  }
  return blocks;
}

uint32_t PartitionedOrder::slot_of_offset(uint64_t u) const {
  // The last slot whose slice starts at or before u holds it (an empty slice never does).
  const auto after = std::upper_bound(at_slot_.begin(), at_slot_.end(), u,
                                      [&](uint64_t v, uint32_t c) { return v < start_[c]; });
  return static_cast<uint32_t>(after - at_slot_.begin()) - 1;
}

uint64_t PartitionedOrder::window_of_offset(uint32_t c, uint64_t u) const {
  const uint64_t index = u - start_[c];
  return (slot_[c] % 2 ? slice_size(c) - 1 - index : index) / m_;
}

uint64_t PartitionedOrder::last_window_of(uint64_t block, uint64_t window) const {
  const uint64_t at = sequence_.position_of_block(block);
  const uint64_t first = sequence_.records_before(at), end = sequence_.records_before(at + 1);
  // Each slice the block's records lie in reads them in one or two windows: the later one is
  // at the slice's last record read (its end forwards, its start backwards).
  for (uint32_t j = slot_of_offset(first); j < c_ && start_[at_slot_[j]] < end; ++j) {
    const uint32_t c = at_slot_[j];
    if (slice_size(c) == 0) continue;
    const uint64_t lo = std::max(first, start_[c]);
    const uint64_t hi = std::min(end, start_[c] + slice_size(c)) - 1;
    window = std::max(window, window_of_offset(c, slot_[c] % 2 ? lo : hi));
  }
  return window;
}

std::vector<uint64_t> PartitionedOrder::substitute_candidates(uint64_t block, uint64_t) const {
  const uint64_t u = sequence_.records_before(sequence_.position_of_block(block));
  return blocks_of_window(window_of_offset(at_slot_[slot_of_offset(u)], u));
}

}  // namespace shardkit::loader
