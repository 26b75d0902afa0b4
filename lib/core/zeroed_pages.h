// An array of fresh zeroed memory whose pages are all mapped when it is made, for tables that are
// empty when all-zero (the tokenizers' word memos). Two things go wrong with a zero-filled
// std::vector or make_unique<T[]>(n) there. Each page is faulted in when first written, which on
// a virtual machine costs microseconds a page. And where memory is zeroed lazily instead, a page
// first read maps the kernel's shared zero page, so its first write later replaces that mapping,
// which in a process of more than one thread flushes the other threads' TLBs by interrupt (a VM
// exit each on a virtual machine). Pages taken here are the kernel's zeroed pages, already
// mapped for writing (mmap with MAP_POPULATE): no fault, no second zeroing.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <span>
#include <type_traits>

namespace shardkit {

template <typename T>
class ZeroedPages {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit ZeroedPages(size_t count) : count_(count) {
    if (count == 0) return;
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
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
