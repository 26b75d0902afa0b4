#include "core/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "core/error.h"
#include "core/page_range.h"

namespace shardkit {
namespace {

// The live mappings, which the signal handler reads: so a fixed table of atomics, no lock. A
// slot is free while its begin is 0 and claimed (not yet or no longer live) while it is 1.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> shrank{false};
};
constexpr uintptr_t kFree = 0;
constexpr uintptr_t kClaimed = 1;
constexpr int kSlots = 256;  // files mapped at once in a process: one per input being read
Slot g_slots[kSlots];

std::atomic<bool> g_guarded{false};
struct sigaction g_previous;
uintptr_t g_page = 4096;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Where `addr` lies in a live mapping, the page there was lost by its file: zeros take its place
// and the places of the pages after it, and the mapping says so. mmap is a plain system call
// (glibc's wrapper neither allocates nor locks), so it may run in a signal handler.
bool replace_lost_page(uintptr_t addr) {
  for (Slot& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    const uintptr_t end = s.end.load(std::memory_order_relaxed);
    if (begin <= kClaimed || addr < begin || addr >= end) continue;
    const uintptr_t page = addr & ~(g_page - 1);
    if (::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
      return false;
    s.shrank.store(true, std::memory_order_release);
    return true;
  }
  return false;
}

// A read past a mapped file's end is BUS_ADRERR; any other fault (a memory error is
// BUS_MCEERR_*), and one outside the live mappings, is the previous handler's.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (info->si_code == BUS_ADRERR && replace_lost_page(reinterpret_cast<uintptr_t>(info->si_addr)))
    return;
  if ((g_previous.sa_flags & SA_SIGINFO) != 0) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    ::signal(SIGBUS, SIG_DFL);  // the read faults again on return, and the process ends by it
  }
}

int claim_slot() {
  for (int i = 0; i < kSlots; ++i) {
    uintptr_t expected = kFree;
    if (g_slots[i].begin.compare_exchange_strong(expected, kClaimed)) return i;
  }
  return -1;
}

void release_slot(int i) {
  g_slots[i].end.store(0, std::memory_order_relaxed);
  g_slots[i].shrank.store(false, std::memory_order_relaxed);
  g_slots[i].begin.store(kFree, std::memory_order_release);
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::map(int fd, uint64_t size, size_t padding,
                                                  std::string path) {
  if (!g_guarded.load(std::memory_order_acquire) || size == 0) return nullptr;
  const size_t file_bytes = round_up(size, g_page);
  const size_t mapped = round_up(size + padding, g_page);
  // The whole reservation first, as zero pages: the padding after the file's last page is then
  // readable, and the file is mapped over the front of it.
  void* base = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  const int slot = claim_slot();
  if (slot < 0 ||
      ::mmap(base, file_bytes, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
    if (slot >= 0) release_slot(slot);
    ::munmap(base, mapped);
    return nullptr;
  }
  // Pages come as they are first read, with readahead: a reader of lines starts on the first
  // before the rest is read, and a file of many gigabytes is not read before its first byte is
  // used. Populating the whole mapping at once was no faster for a 60 MB document.
  ::madvise(base, file_bytes, MADV_SEQUENTIAL);
  const auto begin = reinterpret_cast<uintptr_t>(base);
  g_slots[slot].end.store(begin + mapped, std::memory_order_relaxed);
  g_slots[slot].begin.store(begin, std::memory_order_release);
  return std::shared_ptr<const MappedFile>(
      new MappedFile(static_cast<const char*>(base), size, mapped, slot, std::move(path)));
}

MappedFile::~MappedFile() {
  g_slots[slot_].begin.store(kClaimed, std::memory_order_release);
  ::munmap(const_cast<char*>(data_), mapped_);
  release_slot(slot_);
}

bool MappedFile::shrank() const { return g_slots[slot_].shrank.load(std::memory_order_acquire); }

void MappedFile::check_intact() const {
  if (shrank())
    throw Error(ErrorCode::kIo, path_,
                "the file shrank while it was read (another program changed it); nothing from it "
                "is kept");
}

void MappedFile::release_pages(std::string_view range) const {
  const PageRange pages = whole_pages_inside(range.data(), range.size());
  if (pages.bytes > 0) ::madvise(pages.begin, pages.bytes, MADV_DONTNEED);
}

void guard_mapped_files() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous) == 0)
      g_guarded.store(true, std::memory_order_release);
  });
}

}  // namespace shardkit
