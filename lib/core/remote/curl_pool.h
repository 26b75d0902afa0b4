// The libcurl handles of one transport and the waits around them. Each easy handle is paired
// with its own multi handle, which keeps its keep-alive connections between requests and lets a
// transfer be watched: at most `limit` transfers run at once (urgent ones take the next free
// slot before any prefetch), and every wait, for a slot or inside a transfer, looks at the
// Interrupt at least every Interrupt::kPoll.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "core/interrupt.h"

namespace shardkit::remote {

class CurlPool {
 public:
  struct Handle {
    void* easy = nullptr;   // CURL*
    void* multi = nullptr;  // CURLM*
  };

  CurlPool(unsigned limit, const Interrupt& stop);
  ~CurlPool();
  CurlPool(const CurlPool&) = delete;
  CurlPool& operator=(const CurlPool&) = delete;

  // A handle, once fewer than `limit` are in use; throws Error(kCancelled, what) when
  // interrupted while waiting.
  Handle take(bool urgent, const std::string& what);
  void give(Handle handle);

  // Runs the transfer set up on handle.easy to its end; returns its CURLcode, or
  // CURLE_ABORTED_BY_CALLBACK when the Interrupt was set meanwhile.
  int perform(Handle handle) const;

 private:
  unsigned limit_;
  const Interrupt& stop_;
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned in_use_ = 0;
  unsigned urgent_waiting_ = 0;
  std::vector<Handle> idle_;
};

}  // namespace shardkit::remote
