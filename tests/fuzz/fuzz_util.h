// Helpers for the fuzz targets: a per-process scratch file (the readers under test take paths)
// and the one exception type a parser may throw on bad input.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace shardkit::fuzz {

// A file in this process's own scratch directory under /dev/shm (tmpfs: no disk I/O per input)
// or /tmp, removed at exit. Private, so that nothing another process leaves beside it (say a
// vocab.bpe next to an encoder.json) changes what a target sees.
inline std::string scratch_path(const std::string& name) {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    auto d = base / ("shardkit-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    static const std::filesystem::path keep = d;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return d;
  }();
  return (dir / name).string();
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
