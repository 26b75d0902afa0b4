// Arrays whose all-zero bytes are their empty state (the word memos' slots), taken from the
// kernel as zero pages: memory is committed a page at a time as entries are written, so a memo
// that sees few words keeps little, and nothing is written to make the array empty.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace shardkit::tok {

template <typename T>
struct Unmap {
  size_t count = 0;
  void operator()(T* p) const { ::munmap(p, count * sizeof(T)); }
};

template <typename T>
using ZeroPages = std::unique_ptr<T[], Unmap<T>>;

// `count` entries of T, all bytes zero.
template <typename T>
ZeroPages<T> zero_pages(size_t count) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  void* p = ::mmap(nullptr, count * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return ZeroPages<T>(static_cast<T*>(p), Unmap<T>{count});
}

}  // namespace shardkit::tok
