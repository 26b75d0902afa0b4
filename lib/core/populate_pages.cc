#include "core/populate_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace shardkit {

void populate_pages(void* data, size_t size) {
#ifdef MADV_POPULATE_WRITE
  if (size < kPopulateFromBytes) return;
  constexpr uintptr_t kPage = 4096;
  const auto at = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (at + kPage - 1) & ~(kPage - 1), end = (at + size) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)data;
  (void)size;
#endif
}

}  // namespace shardkit
