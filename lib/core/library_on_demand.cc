#include "core/library_on_demand.h"

#include <dlfcn.h>

namespace shardkit {

void* open_first_library(const std::vector<std::string>& candidates,
                         std::span<const char* const> symbols, std::string& failure) {
  failure.clear();
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      failure += "\n  " + (why ? std::string(why) : candidate + ": cannot be loaded");
      continue;
    }
    const char* missing = nullptr;
    for (const char* symbol : symbols)
      if (!dlsym(handle, symbol)) {
        missing = symbol;
        break;
      }
    if (!missing) {
      failure.clear();
      return handle;
    }
    failure += "\n  " + candidate + ": has no " + missing;
    dlclose(handle);
  }
  return nullptr;
}

}  // namespace shardkit
