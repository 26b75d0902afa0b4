// Shared libraries opened when first needed instead of linked. A linked library is mapped and
// relocated at the start of every process that holds it, used or not: libduckdb.so cost each
// shardify run 8-10 ms, libcurl and the TLS, Kerberos and LDAP libraries it brings 4-5 ms, in
// processes that mostly read neither Parquet nor remote datasets.
#pragma once

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace shardkit {

// The directories the dynamic linker searches for the libraries of the program or module that
// holds this code: LD_LIBRARY_PATH's, its RUNPATH's ($ORIGIN expanded), the system's; those that
// exist. dlopen() of a bare name searches that RUNPATH only when called from that object: a
// runtime that intercepts dlopen (the sanitizers') calls it from its own, which has none.
std::vector<std::string> library_search_dirs();

// Opens the first of `candidates` (names the dynamic linker searches for, or paths) that loads
// and defines every one of `symbols`, and puts their addresses in `addresses` (as many); false
// when none does, with `failure` holding a line for each candidate saying why. A library found
// stays loaded for the process.
bool open_first_library(const std::vector<std::string>& candidates,
                        std::span<const char* const> symbols, std::span<void*> addresses,
                        std::string& failure);

// open_first_library() into `functions`, a struct of one function pointer for each of `names`,
// in that order (the X-macro that lists a library's functions makes both).
template <typename Functions, size_t N>
bool open_functions(const std::vector<std::string>& candidates, const char* const (&names)[N],
                    Functions& functions, std::string& failure) {
  static_assert(std::is_trivially_copyable_v<Functions> && sizeof(Functions) == N * sizeof(void*),
                "one function pointer for each name");
  void* found[N];
  if (!open_first_library(candidates, names, found, failure)) return false;
  std::memcpy(&functions, found, sizeof functions);  // POSIX: dlsym's void* is the function
  return true;
}

// A library's functions, opened by the first get() that succeeds and kept for the process.
// After a failure the next get() tries again: a user who then installs the library, or names
// it, need not restart.
template <typename Functions>
class LibraryOnDemand {
 public:
  // Opens the library and resolves its functions, or returns nullopt and says why in `failure`.
  using Open = std::optional<Functions> (*)(std::string& failure);

  explicit constexpr LibraryOnDemand(Open open) : open_(open) {}

  // The functions, or nullptr with `failure` set. Thread-safe; a lock is taken only until the
  // library is open.
  const Functions* get(std::string& failure) {
    if (const Functions* functions = kept_.load(std::memory_order_acquire)) return functions;
    std::lock_guard lock(opening_);
    if (const Functions* functions = kept_.load(std::memory_order_acquire)) return functions;
    std::optional<Functions> opened = open_(failure);
    if (!opened) return nullptr;
    kept_.store(new Functions(*opened), std::memory_order_release);  // never freed, as dlclose
    return kept_.load(std::memory_order_relaxed);                    // is never called
  }
  // The functions, or Error(kUnsupported) naming `what` (the file or URL that needed them):
  // `need`, then a line for each place tried.
  const Functions& get_or_throw(std::string_view what, const std::string& need) {
    std::string failure;
    if (const Functions* functions = get(failure)) return *functions;
    throw Error(ErrorCode::kUnsupported, std::string(what), need + failure);
  }

 private:
  Open open_;
  std::atomic<const Functions*> kept_{nullptr};
  std::mutex opening_;
};

}  // namespace shardkit
