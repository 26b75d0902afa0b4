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

bool open_first_library(const std::vector<std::string>& candidates,
                        std::span<const char* const> symbols, std::span<void*> addresses,
                        std::string& failure) {
  failure.clear();
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      failure += "\n  " + (why ? std::string(why) : candidate + ": cannot be loaded");
      continue;
    }
    const char* missing = nullptr;
    for (size_t i = 0; i < symbols.size() && !missing; ++i)
      if (!(addresses[i] = dlsym(handle, symbols[i]))) missing = symbols[i];
    if (!missing) {
      failure.clear();
      return true;
    }
    failure += "\n  " + candidate + ": has no " + missing;
    dlclose(handle);
  }
  return false;
}

}  // namespace shardkit
