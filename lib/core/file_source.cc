// Local shard files: pread (the default) or a read-only mapping. See block_source.h.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
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

 private:
  int fd_;
};

// Shards read with pread keep their descriptors open between reads, but a dataset (or a mixture
// of them) may have more shards than the process may open files. The process's open shard
// descriptors are therefore bounded: past half the soft RLIMIT_NOFILE (the rest is left to the
// program), the least recently used is closed, and its shard is opened again, by its absolute
// path, when next read. A read holds its descriptor for its duration, so closing never pulls
// one from under a pread (or lets its number be reused under it).
class PreadSource;

class OpenShardFiles {
 public:
  static OpenShardFiles& process() {
    static OpenShardFiles* files = create();
    return *files;
  }
  // The source's descriptor, opened again if it was closed; now the most recently used.
  std::shared_ptr<const FileDescriptor> use(PreadSource& source, std::optional<uint64_t> block);
  // A descriptor just opened for `source`.
  void adopt(PreadSource& source, std::shared_ptr<const FileDescriptor> fd);
  void forget(PreadSource& source);
  // Closes the older half of the open descriptors, after an open failed for want of one;
  // false when none was open.
  bool close_older_half();

 private:
  // Never destroyed: sources may outlive static destruction. Its lock is held across fork(), so
  // that a child (a DataLoader worker reading a Dataset) never inherits it taken by a thread
  // that does not exist there.
  static OpenShardFiles* create() {
    static OpenShardFiles* files = new OpenShardFiles;
    ::pthread_atfork([] { files->mu_.lock(); }, [] { files->mu_.unlock(); },
                     [] { files->mu_.unlock(); });
    return files;
  }
  static size_t limit();
  void evict_past_limit_locked(const PreadSource* keep);
  void close_locked(PreadSource& source);

  std::mutex mu_;
  std::list<PreadSource*> recent_;  // most recently used first; each holds a descriptor
};

// Opens `path` read-only: no symbolic link followed, a FIFO refused without blocking. When the
// process is out of descriptors, closes idle shard descriptors and tries again.
int open_regular(const std::string& path) {
  for (;;) {
    // O_NONBLOCK: a FIFO in place of a shard must be refused after the open, not block it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0 || (errno != EMFILE && errno != ENFILE)) return fd;
    const int err = errno;
    if (!OpenShardFiles::process().close_older_half()) {
      errno = err;
      return -1;
    }
  }
}

[[noreturn]] void throw_open_error(const std::string& name, int err) {
  if (err == ELOOP)
    throw Error(ErrorCode::kCorrupt, name, "is a symbolic link; shards must be regular files");
  throw Error(ErrorCode::kIo, name, std::string("cannot open: ") + std::strerror(err));
}

class PreadSource : public BlockSource {
 public:
  PreadSource(std::string name, std::string path, const struct stat& st)
      : name_(std::move(name)),
        path_(std::move(path)),
        size_(static_cast<uint64_t>(st.st_size)),
        device_(st.st_dev),
        inode_(st.st_ino) {}
  ~PreadSource() override { OpenShardFiles::process().forget(*this); }
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }

  void read(uint64_t offset, size_t size, unsigned char* out,
            std::optional<uint64_t> block) const override {
    const std::shared_ptr<const FileDescriptor> fd = descriptor(block);
    size_t done = 0;
    while (done < size) {
      const ssize_t n =
          ::pread(fd->get(), out + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw Error(ErrorCode::kIo, name_, std::string("read: ") + std::strerror(errno), block);
      if (n == 0)
        throw Error(ErrorCode::kCorrupt, name_,
                    "short read: " + std::to_string(done) + " of " + std::to_string(size) +
                        " bytes at offset " + std::to_string(offset) +
                        " (file truncated or replaced while open?)",
                    block);
      done += static_cast<size_t>(n);
    }
  }

  void prefetch(uint64_t offset, size_t size) const override {
    const std::shared_ptr<const FileDescriptor> fd = descriptor(std::nullopt);
    ::posix_fadvise(fd->get(), static_cast<off_t>(offset), static_cast<off_t>(size),
                    POSIX_FADV_WILLNEED);
  }

  // Opens the shard again after its descriptor was closed. It must still be the file first
  // opened (same device, inode and size): the header and index read then describe it.
  std::shared_ptr<const FileDescriptor> reopen(std::optional<uint64_t> block) const {
    const int raw = open_regular(path_);
    if (raw < 0) {
      const int err = errno;
      throw Error(ErrorCode::kIo, name_,
                  std::string("cannot open again (its descriptor was closed to stay within the "
                              "open-file limit): ") +
                      std::strerror(err),
                  block);
    }
    auto fd = std::make_shared<const FileDescriptor>(raw);
    struct stat st {};
    // kIo, not kCorrupt: the dataset was replaced, not damaged, and on_corrupt=skip must not
    // stand other blocks in for every block of the new file.
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != device_ ||
        st.st_ino != inode_ || static_cast<uint64_t>(st.st_size) != size_)
      throw Error(ErrorCode::kIo, name_,
                  "was replaced or resized since it was first opened (its descriptor was closed "
                  "to stay within the open-file limit, and the file opened again is another)",
                  block);
    return fd;
  }

 private:
  friend class OpenShardFiles;
  std::shared_ptr<const FileDescriptor> descriptor(std::optional<uint64_t> block) const {
    return OpenShardFiles::process().use(const_cast<PreadSource&>(*this), block);
  }

  std::string name_;  // as errors name it
  std::string path_;  // absolute, to open it again
  uint64_t size_;
  dev_t device_;
  ino_t inode_;
  // Guarded by OpenShardFiles: the open descriptor (null when closed) and its place in its list.
  std::shared_ptr<const FileDescriptor> fd_;
  std::list<PreadSource*>::iterator place_;
};

std::shared_ptr<const FileDescriptor> OpenShardFiles::use(PreadSource& source,
                                                          std::optional<uint64_t> block) {
  {
    std::lock_guard lock(mu_);
    if (source.fd_) {
      recent_.splice(recent_.begin(), recent_, source.place_);
      return source.fd_;
    }
  }
  std::shared_ptr<const FileDescriptor> fd = source.reopen(block);
  adopt(source, fd);
  return fd;
}

void OpenShardFiles::adopt(PreadSource& source, std::shared_ptr<const FileDescriptor> fd) {
  std::lock_guard lock(mu_);
  if (source.fd_) {  // another thread opened it meanwhile: this descriptor closes when unused
    recent_.splice(recent_.begin(), recent_, source.place_);
    return;
  }
  recent_.push_front(&source);  // first: if it throws, the source stays unopened
  source.place_ = recent_.begin();
  source.fd_ = std::move(fd);
  evict_past_limit_locked(&source);
}

void OpenShardFiles::forget(PreadSource& source) {
  std::lock_guard lock(mu_);
  if (source.fd_) close_locked(source);
}

bool OpenShardFiles::close_older_half() {
  std::lock_guard lock(mu_);
  if (recent_.empty()) return false;
  for (size_t n = (recent_.size() + 1) / 2; n > 0; --n) close_locked(*recent_.back());
  return true;
}

size_t OpenShardFiles::limit() {
  struct rlimit r {};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  return std::max<size_t>(8, static_cast<size_t>(r.rlim_cur) / 2);
}

void OpenShardFiles::evict_past_limit_locked(const PreadSource* keep) {
  const size_t most = limit();
  while (recent_.size() > most && recent_.back() != keep) close_locked(*recent_.back());
}

// A read still holding the descriptor keeps it open until it ends.
void OpenShardFiles::close_locked(PreadSource& source) {
  recent_.erase(source.place_);
  source.fd_.reset();
}

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
  const std::string shown = name.empty() ? path.string() : name;
  // Absolute, so that a shard opened again after its descriptor was closed is the same file
  // after the process changed directory.
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  const std::string p = ec ? path.string() : absolute.string();
  const int raw = open_regular(p);
  if (raw < 0) throw_open_error(shown, errno);
  auto fd = std::make_shared<const FileDescriptor>(raw);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorCode::kCorrupt, shown, "is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (mode == ReadMode::kPread) {
    auto source = std::make_unique<PreadSource>(shown, p, st);
    OpenShardFiles::process().adopt(*source, std::move(fd));
    return source;
  }
  if (size == 0) return std::make_unique<MmapSource>(shown, nullptr, 0);
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd->get(), 0);
  if (m == MAP_FAILED)
    throw Error(ErrorCode::kIo, shown, std::string("mmap: ") + std::strerror(errno));
  return std::make_unique<MmapSource>(shown, static_cast<const unsigned char*>(m), size);
}

}  // namespace shardkit
