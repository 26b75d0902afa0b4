// An array of fresh zeroed memory whose pages are all mapped when it is made, for tables that are
// empty when all-zero (the tokenizers' word memos). Two things go wrong with a zero-filled
// std::vector or make_unique<T[]>(n) there. Each page is faulted in when first written, which on
// a virtual machine costs microseconds a page. And where memory is zeroed lazily instead, a page
// first read maps the kernel's shared zero page, so its first write later replaces that mapping,
// which in a process of more than one thread flushes the other threads' TLBs by interrupt (a VM
// exit each on a virtual machine). Pages taken here are the kernel's zeroed pages, already
// mapped for writing: no fault, no second zeroing.
//
// An array of 2 MiB or more sits on 2 MiB pages where the kernel grants them (MADV_HUGEPAGE): a
// word memo's lookups fall at random over 4-8 MiB, and on 4 KiB pages each could miss the TLB as
// well as the cache. On an Intel host (2 MiB of L2 a core) the Unigram `.model` went from 139-146
// to 149-157 MB per CPU second and GPT-2 from 478-486 to 500-517 (alternated), and a thread's
// first word (its memos made) from 2.5 to 1.2-1.3 ms; on an AMD host (1 MiB of L2) the same had
// measured +0-1%.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <span>
#include <type_traits>

namespace shardkit {

// `bytes` of zeroed memory, every page mapped for writing; on 2 MiB pages from 2 MiB on, where the
// kernel has them. Throws std::bad_alloc. munmap() releases it.
void* map_zeroed_pages(size_t bytes);

template <typename T>
class ZeroedPages {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit ZeroedPages(size_t count) : count_(count) {
    if (count != 0) data_ = static_cast<T*>(map_zeroed_pages(bytes()));
  }
  ~ZeroedPages() {
    if (data_) munmap(data_, bytes());
  }
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + count_; }
  size_t size() const { return count_; }

 private:
  size_t bytes() const { return count_ * sizeof(T); }

  T* data_ = nullptr;
  size_t count_;
};

}  // namespace shardkit
