#include "core/interrupt.h"

#include <algorithm>
#include <thread>

#include "core/error.h"

namespace shardkit {

void Interrupt::check(const std::string& what) const {
  if (is_set())
    throw Error(ErrorCode::kCancelled, what,
                "stopped: the read was interrupted (Ctrl-C) or its reader was closed");
}

void Interrupt::sleep_for(std::chrono::nanoseconds duration, const std::string& what) const {
  const auto end = std::chrono::steady_clock::now() + duration;
  for (auto now = std::chrono::steady_clock::now(); now < end && !is_set();
       now = std::chrono::steady_clock::now())
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(end - now, kPoll));
  check(what);
}

}  // namespace shardkit
