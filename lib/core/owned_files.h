// The files a cache may count and remove: the regular files of its directory whose names are
// its own. Both caches (the remote block cache and the compiled tokenizer forms) list their
// directory this way, through its descriptor, and never follow a link: a file they did not
// name, or a link or FIFO planted under one of their names, is not theirs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit {

struct OwnedFile {
  std::string name;
  uint64_t bytes = 0;
  int64_t modified_ns = 0;  // last modification, nanoseconds since the epoch
};

// The regular files of the directory open as `dir_fd` whose names `is_own` accepts; empty when
// the directory cannot be read.
std::vector<OwnedFile> list_owned_files(int dir_fd,
                                        const std::function<bool(std::string_view)>& is_own);

}  // namespace shardkit
