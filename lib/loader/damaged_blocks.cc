#include "loader/damaged_blocks.h"

#include <algorithm>
#include <cstdio>

namespace shardkit::loader {

bool DamagedBlocks::replaceable(const Error& e) {
  return e.code() == ErrorCode::kCorrupt && e.block().has_value();
}

bool DamagedBlocks::known(size_t source, uint64_t block) const {
  std::lock_guard lock(mu_);
  return damaged_.count({source, block}) > 0;
}

void DamagedBlocks::mark(size_t source, uint64_t block, const Error& e) {
  std::lock_guard lock(mu_);
  if (damaged_.insert({source, block}).second)
    std::fprintf(stderr,
                 "shardkit: on_corrupt=skip: %s; its records are replaced by the next intact "
                 "block of its shuffle window\n",
                 e.what());
}

DamagedBlocks::BlockPtr DamagedBlocks::substitute(size_t source, uint64_t block,
                                                  const std::vector<uint64_t>& window,
                                                  uint64_t window_index, const Read& read,
                                                  const std::string& where) {
  const auto at = std::find(window.begin(), window.end(), block);
  const size_t first = at == window.end() ? 0 : static_cast<size_t>(at - window.begin());
  for (size_t step = 1; step <= window.size(); ++step) {
    const uint64_t candidate = window[(first + step) % window.size()];
    if (candidate == block || known(source, candidate)) continue;
    try {
      return read(candidate);
    } catch (const Error& e) {
      if (!replaceable(e)) throw;
      mark(source, candidate, e);
    }
  }
  throw Error(ErrorCode::kCorrupt, where,
              "on_corrupt=skip found no intact block to replace the dataset's block " +
                  std::to_string(block) + ": every block of its shuffle window " +
                  std::to_string(window_index) + " is damaged");
}

void DamagedBlocks::delivered(const std::vector<std::pair<size_t, uint64_t>>& replaced) {
  if (replaced.empty()) return;
  std::lock_guard lock(mu_);
  skipped_.insert(replaced.begin(), replaced.end());
}

uint64_t DamagedBlocks::skipped() const {
  std::lock_guard lock(mu_);
  return skipped_unnamed_ + skipped_.size();
}

std::vector<std::pair<uint32_t, uint64_t>> DamagedBlocks::skipped_blocks() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& [source, block] : skipped_) out.emplace_back(uint32_t(source), block);
  return out;
}

void DamagedBlocks::begin_epoch(uint64_t already_skipped,
                                const std::vector<std::pair<uint32_t, uint64_t>>& named) {
  std::lock_guard lock(mu_);
  skipped_.clear();
  for (const auto& [source, block] : named) skipped_.insert({source, block});
  skipped_unnamed_ = already_skipped - std::min<uint64_t>(already_skipped, skipped_.size());
}

}  // namespace shardkit::loader
