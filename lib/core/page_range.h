// The whole memory pages inside a byte range, as madvise() takes them (page-aligned): a page only
// partly inside is left out, since the bytes around the range are someone else's.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace shardkit {

struct PageRange {
  void* begin = nullptr;
  size_t bytes = 0;  // 0: no whole page inside
};

inline PageRange whole_pages_inside(const void* data, size_t size) {
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (at + page - 1) & ~(page - 1), end = (at + size) & ~(page - 1);
  if (end <= begin) return {};
  return {reinterpret_cast<void*>(begin), end - begin};
}

}  // namespace shardkit
