#include "core/library_on_demand.h"

#include <dlfcn.h>
#include <link.h>

namespace shardkit {

std::vector<std::string> library_search_dirs() {
  Dl_info info;
  void* self = nullptr;  // this object's link map, which dlinfo() takes as a handle
  if (!dladdr1(reinterpret_cast<void*>(&library_search_dirs), &info, &self, RTLD_DL_LINKMAP) ||
      !self)
    return {};
  Dl_serinfo size;
  if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) != 0) return {};
  std::vector<char> buffer(size.dls_size);
  auto* paths = reinterpret_cast<Dl_serinfo*>(buffer.data());
  *paths = size;
  if (dlinfo(self, RTLD_DI_SERINFO, paths) != 0) return {};
  std::vector<std::string> dirs;
  for (unsigned i = 0; i < paths->dls_cnt; ++i) dirs.emplace_back(paths->dls_serpath[i].dls_name);
  return dirs;
}

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
