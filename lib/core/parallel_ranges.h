// Work on one large buffer spread over the calling thread's task arena: reading a whole-file
// document, faulting in its pages and checking it all come before any tokenizing thread has work
// of its own, and the arena's other threads are idle then. On an arena of one thread, or for a
// buffer of one range, the ranges run in order on the caller.
#pragma once

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>

namespace shardkit {

// The size of the ranges a large buffer is cut into: a few of them per thread for a file of tens
// of megabytes, and many pages each.
inline constexpr size_t kParallelRangeBytes = size_t{8} << 20;

// Calls f(begin, end) for each range of [0, n) cut every `range` bytes (the last may be shorter),
// at once where the arena has threads for it; returns when all have run. An exception thrown by
// one is rethrown here.
template <typename F>
void for_each_range(size_t n, size_t range, F&& f) {
  const size_t count = (n + range - 1) / range;
  if (count <= 1) {
    if (n > 0) f(size_t{0}, n);
    return;
  }
  tbb::parallel_for(size_t{0}, count,
                    [&](size_t i) { f(i * range, std::min(n, (i + 1) * range)); });
}

}  // namespace shardkit
