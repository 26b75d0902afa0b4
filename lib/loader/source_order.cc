#include "loader/source_order.h"

#include <algorithm>

#include "loader/keyed_permutation.h"

namespace shardkit::loader {

namespace {
constexpr uint64_t kPassTag = 0x5061737365ull;  // "Passe"
constexpr size_t kPassesKept = 4;
}  // namespace

SourceOrder::SourceOrder(const Geometry& geometry, OrderParams params)
    : params_(params), first_(make_order(geometry, params)) {}

std::shared_ptr<const RecordOrder> SourceOrder::pass(uint64_t p) const {
  if (p == 0) return first_;
  std::lock_guard lock(mu_);
  if (auto it = later_.find(p); it != later_.end()) return it->second;
  OrderParams o = params_;
  o.seed = hash_of(params_.seed, kPassTag, p);
  auto order = make_order(first_->geometry(), o);
  // Passes are read in increasing order: drop the oldest.
  if (later_.size() >= kPassesKept) later_.erase(later_.begin());
  later_.emplace(p, order);
  return order;
}

void SourceOrder::records(uint64_t first, uint64_t count, uint64_t* out) const {
  const uint64_t n = size();
  while (count > 0) {
    const uint64_t p = first / n, at = first % n;
    const uint64_t run = std::min(count, n - at);
    if (p == 0)
      first_->records(at, run, out);
    else
      pass(p)->records(at, run, out);
    first += run;
    count -= run;
    out += run;
  }
}

uint64_t SourceOrder::window_of(uint64_t sample) const {
  const uint64_t n = size();
  if (n == 0) return 0;
  const uint64_t p = sample / n, at = sample % n;
  // Every pass has blocks / window_blocks windows.
  return p * first_->window_count() + (p == 0 ? first_ : pass(p))->window_of(at);
}

std::pair<std::shared_ptr<const RecordOrder>, uint64_t> SourceOrder::pass_window(
    uint64_t window) const {
  const uint64_t per = std::max<uint64_t>(1, first_->window_count());
  return {pass(window / per), window % per};
}

std::vector<uint64_t> SourceOrder::blocks_of_window(uint64_t window) const {
  const auto [order, w] = pass_window(window);
  return order->blocks_of_window(w);
}

std::vector<uint64_t> SourceOrder::blocks_of_window(uint64_t window, uint32_t groups,
                                                    uint32_t group) const {
  const auto [order, w] = pass_window(window);
  return order->blocks_of_window(w, groups, group);
}

std::vector<uint64_t> SourceOrder::substitute_candidates(uint64_t block, uint64_t window) const {
  const auto [order, w] = pass_window(window);
  return order->substitute_candidates(block, w);
}

uint64_t SourceOrder::last_window_of(uint64_t block, uint64_t window) const {
  const auto [order, w] = pass_window(window);
  return window - w + order->last_window_of(block, w);
}

}  // namespace shardkit::loader
