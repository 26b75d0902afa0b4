#include "core/owned_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardkit {

std::vector<OwnedFile> list_owned_files(int dir_fd,
                                        const std::function<bool(std::string_view)>& is_own) {
  std::vector<OwnedFile> files;
  const int fd = ::dup(dir_fd);  // closedir closes it; the caller's descriptor stays open
  if (fd < 0) return files;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return files;
  }
  ::rewinddir(dir);  // a dup shares the offset of an earlier listing
  while (const dirent* e = ::readdir(dir)) {
    if (!is_own(e->d_name)) continue;
    struct stat st {};
    if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    files.push_back({e->d_name, static_cast<uint64_t>(st.st_size),
                     int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec});
  }
  ::closedir(dir);
  return files;
}

}  // namespace shardkit
