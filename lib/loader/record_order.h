// What the plan asks of an epoch's order over one dataset, whichever plan defines it
// (`partition`: EpochOrder for "rows", PartitionedOrder for "nodes"): the record at each
// position, the shuffle window of each position (non-decreasing in position), and the blocks
// each window reads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/geometry.h"

namespace shardkit::loader {

struct OrderParams {
  bool shuffle = true;
  uint64_t seed = 0;
  uint64_t epoch = 0;
  uint64_t window_blocks = 1;  // blocks mixed together; >= blocks() means one global shuffle
  // 0: the rows plan (EpochOrder); else the canonical partitions of the nodes plan
  // (PartitionedOrder).
  uint32_t partitions = 0;
};

class RecordOrder {
 public:
  virtual ~RecordOrder() = default;
  virtual const Geometry& geometry() const = 0;
  uint64_t size() const { return geometry().records(); }
  virtual uint64_t window_count() const = 0;
  // Records at positions first, first+1, ..., first+count-1 (all < size()).
  virtual void records(uint64_t first, uint64_t count, uint64_t* out) const = 0;
  uint64_t record_at(uint64_t position) const {
    uint64_t r;
    records(position, 1, &r);
    return r;
  }
  // The window that position belongs to; non-decreasing in position.
  virtual uint64_t window_of(uint64_t position) const = 0;
  // The blocks a window reads (readahead), each once.
  virtual std::vector<uint64_t> blocks_of_window(uint64_t window) const = 0;
  // Of those, the blocks that the positions p with p mod `groups` == `group` read (`groups`
  // divides the canonical partitions); all of them for the rows plan, whose every window is
  // read by every rank.
  virtual std::vector<uint64_t> blocks_of_window(uint64_t window, uint32_t groups,
                                                 uint32_t group) const = 0;
  // The last window whose positions read `block`, given that `window` does: `window` itself
  // under the rows plan, whose windows hold whole blocks; under the nodes plan a block can lie
  // across two windows of its partition, or in two partitions' last or first windows. The
  // loader keeps a block until that window is read, so that it is fetched and decoded once.
  virtual uint64_t last_window_of(uint64_t block, uint64_t window) const = 0;
  // on_corrupt = skip: the blocks among which damaged `block`, read in `window`, finds its
  // substitute (the next intact one after it, cyclically): a pure function of the block and the
  // epoch, so that every rank reading it picks the same one.
  virtual std::vector<uint64_t> substitute_candidates(uint64_t block, uint64_t window) const = 0;
};

// The order `params` asks for.
std::shared_ptr<const RecordOrder> make_order(const Geometry& geometry, const OrderParams& params);

}  // namespace shardkit::loader
