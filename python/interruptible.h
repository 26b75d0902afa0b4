// Ctrl-C while C++ waits on the network. Python runs signal handlers only between bytecodes of
// its main thread, so C++ must not wait with the GIL held, nor without looking: a wait here
// checks for signals every 50 ms, taking the GIL back briefly, and a handler that raises
// (KeyboardInterrupt) ends it within that time. The waiting work itself runs on one long-lived
// thread per process (a thread per call cost 4x on a cold pass over loopback: its decoder and
// buffers start cold each time); a child after fork() makes its own.
#pragma once

#include <cxxabi.h>
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#include "core/interrupt.h"

namespace shardkit::python {

namespace py = pybind11;

// Runs `work` without the GIL, then takes the GIL back. Not from a destructor, as
// py::gil_scoped_release does: a thread that takes the GIL while the interpreter exits is ended
// by pthread_exit (Python 3.11 to 3.13), and that unwinding aborts the process when it leaves a
// destructor ("terminate called without an active exception": a daemon thread reading a Loader
// as the program ended made it exit 134). From a plain call it ends the thread, as Python means.
template <class Work>
auto without_gil(Work work) -> decltype(work()) {
  PyThreadState* saved = PyEval_SaveThread();
  try {
    if constexpr (std::is_void_v<decltype(work())>) {
      work();
      PyEval_RestoreThread(saved);
    } else {
      auto result = work();
      PyEval_RestoreThread(saved);
      return result;
    }
  } catch (const abi::__forced_unwind&) {
    throw;  // this thread is being ended: the GIL is not to be taken back
  } catch (...) {
    PyEval_RestoreThread(saved);
    throw;
  }
}

// Throws py::error_already_set when a signal handler raised (KeyboardInterrupt). Call without
// the GIL.
inline void raise_if_signalled() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// Runs tasks one after another on its own thread.
class Runner {
 public:
  // This process's; called with the GIL held. A forked child leaves its parent's alone (its
  // thread is not there, its lock may be taken) and starts its own.
  static Runner& instance() {
    static Runner* runner = nullptr;
    static pid_t owner = 0;
    if (!runner || owner != ::getpid()) {
      runner = new Runner;  // lives as long as the process
      owner = ::getpid();
    }
    return *runner;
  }

  // A task's state: queued, taken by the thread, or withdrawn before it was taken.
  enum State { kQueued, kTaken, kWithdrawn };

  // Queues `work`; it runs unless `state` was moved from kQueued to kWithdrawn first.
  template <class Work>
  auto post(Work work, std::shared_ptr<std::atomic<int>> state) -> std::future<decltype(work())> {
    auto task = std::make_shared<std::packaged_task<decltype(work())()>>(std::move(work));
    auto done = task->get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back([task, state] {
        int queued = kQueued;
        if (state->compare_exchange_strong(queued, kTaken)) (*task)();
      });
    }
    cv_.notify_one();
    return done;
  }

 private:
  Runner() {
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return !tasks_.empty(); });
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
};

// Runs `work` on the Runner while Python waits with the GIL released. On a signal that raises:
// work not started yet (behind another thread's) is withdrawn; work running has `stop` set, so
// that its network waits end within Interrupt::kPoll, and is waited for; then `stop` is cleared
// and the exception raised.
template <class Work>
auto interruptible(Work work, Interrupt& stop) -> decltype(work()) {
  auto state = std::make_shared<std::atomic<int>>(Runner::kQueued);
  auto done = Runner::instance().post(std::move(work), state);
  std::exception_ptr signal;
  without_gil([&] {
    while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      if (signal) continue;
      try {
        raise_if_signalled();
      } catch (const abi::__forced_unwind&) {
        throw;
      } catch (...) {
        signal = std::current_exception();
        int queued = Runner::kQueued;
        if (state->compare_exchange_strong(queued, Runner::kWithdrawn)) break;
        stop.set();
      }
    }
  });
  stop.clear();
  if (signal) std::rethrow_exception(signal);
  return done.get();
}

}  // namespace shardkit::python
