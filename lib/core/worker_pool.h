// A fixed set of threads running submitted tasks first in, first out. Each submit() returns a
// future; callers consume futures in submission order, so results never depend on which thread
// finished first. One pool can serve several stages at once (shardify tokenizes and the dataset
// writer compresses blocks on the same threads), so no stage holds cores the other could use.
//
// With zero threads, submit() runs the task at once on the caller's thread: a one-thread
// conversion is exactly one thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace shardkit {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

  template <class F>
  std::future<std::invoke_result_t<F>> submit(F&& task) {
    auto packaged =
        std::make_shared<std::packaged_task<std::invoke_result_t<F>()>>(std::forward<F>(task));
    auto future = packaged->get_future();
    if (workers_.empty()) {
      (*packaged)();
    } else {
      {
        std::lock_guard lock(mu_);
        queue_.emplace_back([packaged] { (*packaged)(); });
      }
      ready_.notify_one();
    }
    return future;
  }

 private:
  void run();

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace shardkit
