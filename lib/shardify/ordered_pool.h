// Runs work on N threads while results are consumed strictly in submission order, so that the
// output never depends on thread timing. produce() and consume() run on the calling thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace shardkit::shardify {

template <class Job, class Result>
void run_ordered(unsigned threads, size_t max_in_flight, const std::function<bool(Job&)>& produce,
                 const std::function<Result(Job&)>& work,
                 const std::function<void(Result&)>& consume) {
  if (threads <= 1) {
    for (Job job; produce(job); job = Job{}) {
      Result r = work(job);
      consume(r);
    }
    return;
  }
  struct Slot {
    std::optional<Result> result;
    std::exception_ptr error;
  };
  std::mutex mu;
  std::condition_variable job_ready, result_ready;
  std::deque<std::pair<uint64_t, Job>> jobs;
  std::map<uint64_t, Slot> done;
  bool stop = false;

  std::vector<std::thread> pool;
  auto stop_pool = [&] {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    job_ready.notify_all();
    for (auto& t : pool) t.join();
    pool.clear();
  };
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      for (;;) {
        std::pair<uint64_t, Job> item;
        {
          std::unique_lock lock(mu);
          job_ready.wait(lock, [&] { return stop || !jobs.empty(); });
          if (stop) return;
          item = std::move(jobs.front());
          jobs.pop_front();
        }
        Slot slot;
        try {
          slot.result.emplace(work(item.second));
        } catch (...) {
          slot.error = std::current_exception();
        }
        {
          std::lock_guard lock(mu);
          done.emplace(item.first, std::move(slot));
        }
        result_ready.notify_all();
      }
    });

  try {
    uint64_t submitted = 0, consumed = 0;
    bool input_left = true;
    for (;;) {
      while (input_left && submitted - consumed < max_in_flight) {
        Job job;
        if (!produce(job)) {
          input_left = false;
          break;
        }
        {
          std::lock_guard lock(mu);
          jobs.emplace_back(submitted++, std::move(job));
        }
        job_ready.notify_one();
      }
      if (consumed == submitted) break;
      Slot slot;
      {
        std::unique_lock lock(mu);
        result_ready.wait(lock, [&] { return done.count(consumed) > 0; });
        auto it = done.find(consumed);
        slot = std::move(it->second);
        done.erase(it);
      }
      ++consumed;
      if (slot.error) std::rethrow_exception(slot.error);
      consume(*slot.result);
    }
  } catch (...) {
    stop_pool();
    throw;
  }
  stop_pool();
}

}  // namespace shardkit::shardify
