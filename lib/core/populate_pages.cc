#include "core/populate_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace shardkit {

bool populate_pages(void* data, size_t size) {
#ifdef MADV_POPULATE_WRITE
  if (size < kPopulateFromBytes) return false;
  constexpr uintptr_t kPage = 4096;
  const auto at = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (at + kPage - 1) & ~(kPage - 1), end = (at + size) & ~(kPage - 1);
  return end > begin &&
         madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
#else
  (void)data;
  (void)size;
  return false;
#endif
}

}  // namespace shardkit
