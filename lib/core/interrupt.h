// A flag that stops waits on the network from another thread: Python's Ctrl-C, a loader or a
// remote store closing. Every wait that watches an Interrupt (a request slot, a transfer, a
// retry's backoff) looks at it at least every kPoll and then throws Error(kCancelled), so the
// threads behind a reader stop within a fraction of a second. An Interrupt may watch a parent:
// it counts as set while the parent is.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

namespace shardkit {

class Interrupt {
 public:
  static constexpr std::chrono::milliseconds kPoll{50};

  explicit Interrupt(std::shared_ptr<const Interrupt> parent = {}) : parent_(std::move(parent)) {}
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  void set() { set_.store(true, std::memory_order_relaxed); }
  void clear() { set_.store(false, std::memory_order_relaxed); }
  bool is_set() const {
    return set_.load(std::memory_order_relaxed) || (parent_ && parent_->is_set());
  }
  // Throws Error(kCancelled, what) when set.
  void check(const std::string& what) const;
  // Sleeps for `duration`, or until set (checked every kPoll); then check(what).
  void sleep_for(std::chrono::nanoseconds duration, const std::string& what) const;

 private:
  std::atomic<bool> set_{false};
  std::shared_ptr<const Interrupt> parent_;
};

}  // namespace shardkit
