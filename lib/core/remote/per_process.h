// State that must not cross fork(): threads, locks with waiters, keep-alive connections. A
// child process starts with a copy of its parent's memory but none of its other threads, so a
// pool whose threads are gone, a condition variable their waits left behind, or a socket the
// parent still reads from would hang or garble the child's reads. PerProcess<T> keeps one T per
// process: the child leaves the parent's T untouched (never used, never destroyed: its
// destructor would join threads that do not exist there) and makes its own on first use.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace shardkit::remote {

// 0 in the process that loaded shardkit; in a child, one more than in its parent (a
// pthread_atfork handler counts as the child starts), so no process shares its ancestors'.
uint64_t process_generation();

template <class T>
class PerProcess {
 public:
  explicit PerProcess(std::function<std::unique_ptr<T>()> make)
      : make_(std::move(make)), value_(make_()), generation_(process_generation()) {}
  ~PerProcess() {
    if (generation_.load(std::memory_order_acquire) != process_generation())
      (void)value_.release();  // the parent's: left as it is
  }
  PerProcess(const PerProcess&) = delete;
  PerProcess& operator=(const PerProcess&) = delete;

  // This process's T, made here on the first call after a fork.
  T& get() {
    const uint64_t now = process_generation();
    if (generation_.load(std::memory_order_acquire) == now) return *value_;
    std::lock_guard lock(remake_mu_);
    if (generation_.load(std::memory_order_relaxed) != now) {
      (void)value_.release();
      value_ = make_();
      generation_.store(now, std::memory_order_release);
    }
    return *value_;
  }

 private:
  std::function<std::unique_ptr<T>()> make_;
  std::unique_ptr<T> value_;
  std::atomic<uint64_t> generation_;
  std::mutex remake_mu_;  // taken only in a child's first get()
};

}  // namespace shardkit::remote
