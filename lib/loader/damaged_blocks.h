// on_corrupt = skip: which blocks failed their checksum, what replaces each one, and the count
// LoaderState::blocks_skipped reports.
//
// A damaged block's substitute is the next block after it in its shuffle window's block order
// (cyclically) that reads intact. The window's order is a pure function of (seed, epoch, window)
// and a damaged block fails the same way on every rank, so every rank picks the same substitute
// and the global stream stays the same at any world size. Its records stand in slot for slot
// (wrapping when the substitute is a shard's shorter last block).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/block_cache.h"
#include "core/error.h"

namespace shardkit::loader {

class DamagedBlocks {
 public:
  using BlockPtr = std::shared_ptr<const DecodedBlock>;
  // Reads (and verifies) a block of the source, throwing Error as Dataset does.
  using Read = std::function<BlockPtr(uint64_t block)>;

  // Whether on_corrupt = skip replaces the block `e` is about: a checksum or decode failure of
  // one block, not a shard or manifest that cannot be read at all.
  static bool replaceable(const Error& e);
  bool known(size_t source, uint64_t block) const;
  // Records `block` of `source` as damaged (`e` says how; logged to stderr once).
  void mark(size_t source, uint64_t block, const Error& e);
  // The substitute of damaged `block`, from `window` (the blocks of its shuffle window, in
  // order; `window_index` only names it in errors). Throws Error(kCorrupt) when every block of
  // the window is damaged.
  BlockPtr substitute(size_t source, uint64_t block, const std::vector<uint64_t>& window,
                      uint64_t window_index, const Read& read, const std::string& where);
  // Counts the damaged blocks whose records a batch just delivered had replaced (batches built
  // ahead count once delivered, so that the count follows the state).
  void delivered(const std::vector<std::pair<size_t, uint64_t>>& replaced);
  // The damaged blocks counted this epoch: those begin_epoch() was given and those replaced in
  // batches delivered since, each once, plus the ones a count without their names stands for.
  uint64_t skipped() const;
  // Those named, (source, block), in order.
  std::vector<std::pair<uint32_t, uint64_t>> skipped_blocks() const;
  // Starts counting an epoch from a saved count of `already_skipped` blocks, `named` of them
  // (a state saved before the names were recorded names none, and its count adds to the new).
  void begin_epoch(uint64_t already_skipped = 0,
                   const std::vector<std::pair<uint32_t, uint64_t>>& named = {});

 private:
  mutable std::mutex mu_;
  std::set<std::pair<size_t, uint64_t>> damaged_;
  std::set<std::pair<size_t, uint64_t>> skipped_;  // this epoch
  uint64_t skipped_unnamed_ = 0;  // counted in a saved state that does not name them
};

}  // namespace shardkit::loader
