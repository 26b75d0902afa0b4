// A fixed set of threads running submitted tasks first in, first out. Each submit() returns a
// future; callers consume futures in submission order through get(), so results never depend on
// which thread finished first. One pool can serve several stages at once (shardify tokenizes and
// the dataset writer compresses blocks on the same threads), so no stage holds cores the other
// could use.
//
// The caller's thread is one of the pool's `threads`: the pool starts threads - 1 workers, and a
// caller waiting in get() runs queued tasks meanwhile. A caller that only waited would leave a
// core idle, or with a worker per core oversubscribe them (bench_pipelines: 25-30% more CPU at
// two threads than oneTBB's parallel_pipeline, which works the same way). With one thread,
// submit() runs the task at once on the caller's thread.
#pragma once

#include <chrono>
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
  explicit WorkerPool(unsigned threads);  // counting the caller's; 0 reads as 1
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }
  bool runs_inline() const { return workers_.empty(); }

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

  // The result of a task submitted to this pool, running queued tasks while it is not ready.
  template <class T>
  T get(std::future<T>& future) {
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      if (!run_one()) break;  // the rest of its task runs on a worker
    return future.get();
  }

 private:
  void run();
  bool run_one();  // runs the first queued task, if any

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace shardkit
