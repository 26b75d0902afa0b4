#include "core/zeroed_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

#include "core/populate_pages.h"

namespace shardkit {

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;

// `bytes` starting at a 2 MiB boundary, so that every 2 MiB of it can be one page: a mapping
// 2 MiB larger, trimmed at both ends.
void* map_at_huge_boundary(size_t bytes) {
  const size_t length = (bytes + kPage - 1) & ~(kPage - 1);
  const size_t padded = length + kHugePage;
  void* p = mmap(nullptr, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t begin = (at + kHugePage - 1) & ~(kHugePage - 1), end = begin + length;
  if (begin > at) munmap(p, begin - at);
  if (at + padded > end) munmap(reinterpret_cast<void*>(end), at + padded - end);
  return reinterpret_cast<void*>(begin);
}

// Every page mapped for writing now: in one call where the kernel has it, else by a write to
// each page, never a read first (the header says why).
void populate_for_writing(void* data, size_t bytes) {
  if (populate_pages(data, bytes)) return;
  auto* p = static_cast<volatile unsigned char*>(data);
  for (size_t i = 0; i < bytes; i += kPage) p[i] = 0;
}

}  // namespace

void* map_zeroed_pages(size_t bytes) {
  if (bytes < kHugePage) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  void* p = map_at_huge_boundary(bytes);
  madvise(p, bytes, MADV_HUGEPAGE);  // a request: without transparent huge pages, 4 KiB pages
  populate_for_writing(p, bytes);
  return p;
}

}  // namespace shardkit
