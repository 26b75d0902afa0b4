#include "core/remote/curl_pool.h"

#include <algorithm>

#include "core/error.h"
#include "core/remote/curl_library.h"

namespace shardkit::remote {

CurlPool::CurlPool(unsigned limit, const Interrupt& stop)
    : limit_(std::max(1u, limit)), stop_(stop) {}

CurlPool::~CurlPool() {
  for (const Handle& h : idle_) {
    curl().multi_cleanup(static_cast<CURLM*>(h.multi));
    curl().easy_cleanup(static_cast<CURL*>(h.easy));
  }
}

CurlPool::Handle CurlPool::take(bool urgent, const std::string& what) {
  // Opened by the first transfer (curl_library.h), before a slot is counted: a library that
  // cannot be opened throws here, and must not leave the slot taken.
  const CurlLibrary& lib = curl(what);
  std::unique_lock lock(mu_);
  if (urgent) ++urgent_waiting_;
  const auto free = [&] { return in_use_ < limit_ && (urgent || urgent_waiting_ == 0); };
  while (!free() && !stop_.is_set()) cv_.wait_for(lock, Interrupt::kPoll, free);
  if (urgent) --urgent_waiting_;
  if (!free()) {
    lock.unlock();
    cv_.notify_all();  // a prefetch may have waited on this urgent request
    stop_.check(what);
  }
  ++in_use_;
  if (!idle_.empty()) {
    const Handle h = idle_.back();
    idle_.pop_back();
    return h;
  }
  lock.unlock();
  return Handle{lib.easy_init(), lib.multi_init()};
}

void CurlPool::give(Handle handle) {
  {
    std::lock_guard lock(mu_);
    --in_use_;
    idle_.push_back(handle);
  }
  cv_.notify_all();  // an urgent waiter must not sleep through a prefetch's wake-up
}

int CurlPool::perform(Handle handle) const {
  auto* easy = static_cast<CURL*>(handle.easy);
  auto* multi = static_cast<CURLM*>(handle.multi);
  if (curl().multi_add_handle(multi, easy) != CURLM_OK) return CURLE_FAILED_INIT;
  CURLcode result = CURLE_OK;
  for (int running = 1;;) {
    if (curl().multi_perform(multi, &running) != CURLM_OK) {
      result = CURLE_FAILED_INIT;
      break;
    }
    if (running == 0) {
      int left = 0;
      for (CURLMsg* m; (m = curl().multi_info_read(multi, &left));)
        if (m->msg == CURLMSG_DONE) result = m->data.result;
      break;
    }
    if (stop_.is_set()) {
      result = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    curl().multi_poll(multi, nullptr, 0, static_cast<int>(Interrupt::kPoll.count()), nullptr);
  }
  curl().multi_remove_handle(multi, easy);
  return result;
}

}  // namespace shardkit::remote
