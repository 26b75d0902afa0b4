// Arrays whose all-zero bytes are their empty state (the word memos' slots), taken from the
// kernel already zeroed: nothing is written to make them empty, and a clear hands the memory
// back. Their pages are faulted in at once (MAP_POPULATE), not as entries land in them: a page
// first read maps the kernel's shared zero page, and the first write then replaces that mapping,
// which in a process of more than one thread flushes the other threads' TLBs by interrupt (a VM
// exit each on a virtual machine). Filling the memos lazily that way cost a thread 30% of its
// first pass over a text while a second thread tokenized beside it.
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
  void* p = ::mmap(nullptr, count * sizeof(T), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return ZeroPages<T>(static_cast<T*>(p), Unmap<T>{count});
}

}  // namespace shardkit::tok
