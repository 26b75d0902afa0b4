#include "core/populate_pages.h"

#include <sys/mman.h>

#include "core/page_range.h"

namespace shardkit {

bool populate_pages(void* data, size_t size) {
#ifdef MADV_POPULATE_WRITE
  if (size < kPopulateFromBytes) return false;
  const PageRange pages = whole_pages_inside(data, size);
  return pages.bytes > 0 && madvise(pages.begin, pages.bytes, MADV_POPULATE_WRITE) == 0;
#else
  (void)data;
  (void)size;
  return false;
#endif
}

}  // namespace shardkit
