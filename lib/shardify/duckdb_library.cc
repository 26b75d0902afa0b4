#include "shardify/duckdb_library.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace shardkit::shardify {
namespace {

// The places to try, in order (duckdb_library.h).
std::vector<std::string> candidates() {
  if (const char* chosen = std::getenv("SHARDKIT_DUCKDB_LIBRARY"); chosen && *chosen)
    return {chosen};
  std::vector<std::string> paths = {"libduckdb.so"};
#ifdef SHARDKIT_DUCKDB_FALLBACK
  paths.push_back(SHARDKIT_DUCKDB_FALLBACK);
#endif
  return paths;
}

// Every function of DuckDbLibrary from `handle`; the first that is missing, if one is.
std::optional<std::string> resolve(void* handle, DuckDbLibrary& lib) {
#define SHARDKIT_DUCKDB_RESOLVE(name)                                              \
  lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, "duckdb_" #name)); \
  if (!lib.name) return "duckdb_" #name;
  SHARDKIT_DUCKDB_FUNCTIONS(SHARDKIT_DUCKDB_RESOLVE)
#undef SHARDKIT_DUCKDB_RESOLVE
  return std::nullopt;
}

struct Loaded {
  DuckDbLibrary lib;
  std::string failure;  // empty once loaded
};

Loaded load() {
  Loaded loaded;
  for (const std::string& path : candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      loaded.failure += "\n  " + (why ? std::string(why) : path + ": cannot be loaded");
      continue;
    }
    if (const std::optional<std::string> missing = resolve(handle, loaded.lib)) {
      loaded.failure += "\n  " + path + ": has no " + *missing + " (DuckDB 1.1 or later needed)";
      dlclose(handle);
      continue;
    }
    loaded.failure.clear();
    return loaded;  // the handle stays open for the process: the reader's calls go into it
  }
  return loaded;
}

}  // namespace

const DuckDbLibrary& duckdb_library(std::string_view file) {
  // Only a success is kept: after a failure the next call looks again, so that a Python user
  // who then sets $SHARDKIT_DUCKDB_LIBRARY need not restart.
  static std::atomic<const DuckDbLibrary*> kept{nullptr};
  static std::mutex loading;
  if (const DuckDbLibrary* lib = kept.load(std::memory_order_acquire)) return *lib;
  std::lock_guard lock(loading);
  if (const DuckDbLibrary* lib = kept.load(std::memory_order_acquire)) return *lib;
  Loaded loaded = load();
  if (!loaded.failure.empty())
    throw Error(ErrorCode::kUnsupported, std::string(file),
                "Parquet input needs DuckDB's C library, and none could be loaded "
                "(scripts/install-duckdb.sh pins one; $SHARDKIT_DUCKDB_LIBRARY names another):" +
                    loaded.failure);
  kept.store(new DuckDbLibrary(loaded.lib), std::memory_order_release);  // for the process
  return *kept.load(std::memory_order_relaxed);
}

}  // namespace shardkit::shardify
