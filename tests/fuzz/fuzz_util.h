// Helpers for the fuzz targets: a per-process scratch file (the readers under test take paths)
// and the one exception type a parser may throw on bad input.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace shardkit::fuzz {

// A file in /dev/shm (tmpfs, so no disk I/O per input) or /tmp, named per process and suffix.
inline std::string scratch_path(const std::string& suffix) {
  static const std::string dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  return dir + "/shardkit-fuzz-" + std::to_string(::getpid()) + suffix;
}

inline void write_scratch(const std::string& path, const uint8_t* data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) __builtin_trap();
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) __builtin_trap();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace shardkit::fuzz
