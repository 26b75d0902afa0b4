// Local shard files: pread (the default) or a read-only mapping. See block_source.h.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/block_source.h"
#include "core/error.h"

namespace shardkit {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

class PreadSource : public BlockSource {
 public:
  PreadSource(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  const std::string& name() const override { return path_; }
  uint64_t size() const override { return size_; }

  void read(uint64_t offset, size_t size, unsigned char* out,
            std::optional<uint64_t> block) const override {
    size_t done = 0;
    while (done < size) {
      const ssize_t n =
          ::pread(fd_.get(), out + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw Error(ErrorCode::kIo, path_, std::string("read: ") + std::strerror(errno), block);
      if (n == 0)
        throw Error(ErrorCode::kCorrupt, path_,
                    "short read: " + std::to_string(done) + " of " + std::to_string(size) +
                        " bytes at offset " + std::to_string(offset) +
                        " (file truncated or replaced while open?)",
                    block);
      done += static_cast<size_t>(n);
    }
  }

  void prefetch(uint64_t offset, size_t size) const override {
    ::posix_fadvise(fd_.get(), static_cast<off_t>(offset), static_cast<off_t>(size),
                    POSIX_FADV_WILLNEED);
  }

 private:
  std::string path_;
  FileDescriptor fd_;
  uint64_t size_;
};

class MmapSource : public BlockSource {
 public:
  MmapSource(std::string path, const unsigned char* map, uint64_t size)
      : path_(std::move(path)), map_(map), size_(size) {}
  ~MmapSource() override {
    if (map_) ::munmap(const_cast<unsigned char*>(map_), size_);
  }
  const std::string& name() const override { return path_; }
  uint64_t size() const override { return size_; }

  void read(uint64_t offset, size_t size, unsigned char* out,
            std::optional<uint64_t> block) const override {
    if (offset > size_ || size > size_ - offset)
      throw Error(ErrorCode::kCorrupt, path_, "read past the end of the file", block);
    std::memcpy(out, map_ + offset, size);
  }
  const unsigned char* view(uint64_t offset, size_t size) const override {
    return offset <= size_ && size <= size_ - offset ? map_ + offset : nullptr;
  }
  void prefetch(uint64_t offset, size_t size) const override {
    const long page = ::sysconf(_SC_PAGESIZE);
    const uintptr_t start = reinterpret_cast<uintptr_t>(map_ + offset);
    const uintptr_t aligned = start & ~static_cast<uintptr_t>(page - 1);
    ::madvise(reinterpret_cast<void*>(aligned), size + (start - aligned), MADV_WILLNEED);
  }

 private:
  std::string path_;
  const unsigned char* map_;
  uint64_t size_;
};

}  // namespace

const char* read_mode_name(ReadMode mode) { return mode == ReadMode::kMmap ? "mmap" : "pread"; }

ReadMode parse_read_mode(const std::string& name) {
  if (name == "pread") return ReadMode::kPread;
  if (name == "mmap") return ReadMode::kMmap;
  throw Error(ErrorCode::kInvalidArgument, "",
              "read mode '" + name + "' is not one of: pread, mmap");
}

std::unique_ptr<BlockSource> open_file_source(const std::filesystem::path& path, ReadMode mode,
                                              const std::string& name) {
  const std::string p = name.empty() ? path.string() : name;
  // O_NONBLOCK: a FIFO in place of a shard must be refused below, not block this open.
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (raw < 0) {
    if (errno == ELOOP)
      throw Error(ErrorCode::kCorrupt, p, "is a symbolic link; shards must be regular files");
    throw Error(ErrorCode::kIo, p, std::string("cannot open: ") + std::strerror(errno));
  }
  FileDescriptor fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorCode::kCorrupt, p, "is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (mode == ReadMode::kPread) return std::make_unique<PreadSource>(p, fd.release(), size);
  if (size == 0) return std::make_unique<MmapSource>(p, nullptr, 0);
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (m == MAP_FAILED) throw Error(ErrorCode::kIo, p, std::string("mmap: ") + std::strerror(errno));
  return std::make_unique<MmapSource>(p, static_cast<const unsigned char*>(m), size);
}

}  // namespace shardkit
