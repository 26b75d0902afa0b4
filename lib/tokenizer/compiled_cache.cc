#include "tokenizer/compiled_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/checksum.h"
#include "core/owned_files.h"
#include "core/populate_pages.h"
#include "tokenizer/blob.h"

namespace shardkit::tok {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[16] = "shardkit-tokenz";  // 15 characters and the NUL
constexpr const char* kTagFile = "CACHEDIR.TAG";
constexpr const char* kTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This directory holds compiled tokenizers made by shardkit; it can be deleted.\n";

struct Header {
  char magic[16];
  uint32_t format;
  uint32_t reserved;
  uint64_t hash, size;  // of the tokenizer file
  uint64_t payload_size, payload_hash;
};
static_assert(sizeof(Header) % kBlobAlignment == 0, "the payload's arrays stay aligned");

std::optional<fs::path> default_dir() {
  // Set, it names the directory (tests keep theirs in the build tree); set but empty, none.
  if (const char* own = std::getenv("SHARDKIT_TOKENIZER_CACHE"))
    return *own ? std::optional<fs::path>(own) : std::nullopt;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
    return fs::path(x) / "shardkit" / "tokenizers";
  if (const char* home = std::getenv("HOME"); home && *home == '/')
    return fs::path(home) / ".cache" / "shardkit" / "tokenizers";
  return std::nullopt;
}

// A regular file of the directory, opened without following a link, and its size; -1 when it
// is not one or cannot be opened.
int open_owned(int dir_fd, const std::string& name, size_t* size) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    *size = static_cast<size_t>(st.st_size);
    return fd;
  }
  ::close(fd);
  return -1;
}

// The `size` bytes of fd, read into a buffer not value-initialized first (a compiled form is
// tens of MB); null on a short read.
std::unique_ptr<char[]> read_all(int fd, size_t size) {
  std::unique_ptr<char[]> out(new char[size + 1]);
  populate_pages(out.get(), size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, out.get() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return nullptr;
    done += static_cast<size_t>(n);
  }
  return out;
}

// A whole regular file of the directory, read; null when it cannot be.
std::unique_ptr<char[]> read_owned(int dir_fd, const std::string& name, size_t* size) {
  const int fd = open_owned(dir_fd, name, size);
  if (fd < 0) return nullptr;
  std::unique_ptr<char[]> out = read_all(fd, *size);
  ::close(fd);
  return out;
}

// Whether fd's file system keeps a file's pages while it is mapped: a local one. On a network
// file system (a cluster's home directory, where the cache lives by default) another node may
// remove a form that this one has mapped (its trim), and a page evicted later could not be read
// back: the process would die of SIGBUS. Forms there are read into memory instead.
bool on_local_disk(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<uint64_t>(fs.f_type)) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // XFS
    case 0x9123683E:  // Btrfs
    case 0x01021994:  // tmpfs
    case 0x794C7630:  // overlayfs (containers)
    case 0x2FC12FC1:  // ZFS
    case 0xF2F52010:  // F2FS
      return true;
    default:
      return false;
  }
}

// The `size` bytes of fd mapped read-only with their pages in place: the page cache's own
// pages, neither copied nor zeroed first (Gemma 3's first load in a fresh process 57-64 -> 41-49
// ms). Null off a local disk (on_local_disk) or when mapping fails. Forms are replaced by rename
// and removed by unlink, never changed in place, so a mapping keeps the bytes checked.
std::shared_ptr<const char[]> map_all(int fd, size_t size) {
  if (size == 0 || !on_local_disk(fd)) return nullptr;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<const char[]>(
      static_cast<const char*>(p), [size](const char* q) { ::munmap(const_cast<char*>(q), size); });
}

// A form of the directory, mapped where it may be and read otherwise; null when it cannot be.
std::shared_ptr<const char[]> load_owned(int dir_fd, const std::string& name, size_t* size) {
  const int fd = open_owned(dir_fd, name, size);
  if (fd < 0) return nullptr;
  std::shared_ptr<const char[]> out = map_all(fd, *size);
  if (!out) out = read_all(fd, *size);
  if (out) ::futimens(fd, nullptr);  // used now: the last to go when the cache is trimmed
  ::close(fd);
  return out;
}

// `<16 hex digits>.tokenizer-v<digits>`: a form of any format version.
bool is_form_name(std::string_view name) {
  constexpr std::string_view kMiddle = ".tokenizer-v";
  if (name.size() <= 16 + kMiddle.size() || name.substr(16, kMiddle.size()) != kMiddle)
    return false;
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return std::all_of(name.begin(), name.begin() + 16, hex) &&
         std::all_of(name.begin() + 16 + kMiddle.size(), name.end(), digit);
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The tag a directory of the cache's own carries; written when the cache creates the directory.
bool tagged(int dir_fd) {
  size_t size = 0;
  const auto tag = read_owned(dir_fd, kTagFile, &size);
  return tag && size >= 43 && std::memcmp(tag.get(), kTag, 43) == 0;
}

}  // namespace

CompiledCache::CompiledCache(const std::optional<fs::path>& dir, uint64_t max_bytes)
    : max_bytes_(max_bytes) {
  const std::optional<fs::path> path = directory(dir);
  if (!path || path->empty()) return;
  std::error_code ec;
  const bool created = fs::create_directories(*path, ec);
  if (ec) return;
  const int fd = ::open(path->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (created) {
    const int tag =
        ::openat(fd, kTagFile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (tag >= 0) {
      write_all(tag, kTag, std::strlen(kTag));
      ::close(tag);
    }
  }
  if (!tagged(fd)) {  // not a directory this cache made: leave it alone
    ::close(fd);
    return;
  }
  dir_fd_ = fd;
}

CompiledCache::~CompiledCache() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::optional<fs::path> CompiledCache::directory(const std::optional<fs::path>& dir) {
  return dir ? *dir : default_dir();
}

std::string CompiledCache::file_name(uint64_t hash) {
  char name[64];
  std::snprintf(name, sizeof name, "%016llx.tokenizer-v%u", static_cast<unsigned long long>(hash),
                kFormat);
  return name;
}

std::optional<CompiledForm> CompiledCache::find(uint64_t hash, uint64_t size) const {
  if (dir_fd_ < 0) return std::nullopt;
  size_t bytes = 0;
  auto data = load_owned(dir_fd_, file_name(hash), &bytes);
  if (!data || bytes < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, data.get(), sizeof h);
  const std::string_view payload(data.get() + sizeof h, bytes - sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat || h.hash != hash ||
      h.size != size || h.payload_size != payload.size() ||
      h.payload_hash != xxh3_64(payload.data(), payload.size()))
    return std::nullopt;
  BlobReader r(payload);
  CompiledForm form;
  form.skeleton = r.bytes();
  r.align();
  form.model = r.bytes();
  if (!r.at_end() || form.model.empty()) return std::nullopt;
  form.bytes = std::move(data);
  return form;
}

void CompiledCache::store(uint64_t hash, uint64_t size, std::string_view skeleton,
                          std::string_view model) const {
  if (dir_fd_ < 0) return;
  std::string payload;
  BlobWriter w(payload);
  w.bytes(skeleton);
  w.align();  // the header's size and the model's length are multiples of 8 too
  w.bytes(model);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.hash = hash;
  h.size = size;
  h.payload_size = payload.size();
  h.payload_hash = xxh3_64(payload.data(), payload.size());
  static std::atomic<uint64_t> counter{0};
  const std::string name = file_name(hash);
  const std::string tmp =
      name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd =
      ::openat(dir_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool ok = write_all(fd, reinterpret_cast<const char*>(&h), sizeof h) &&
                  write_all(fd, payload.data(), payload.size());
  ::close(fd);
  if (!ok || ::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) {
    ::unlinkat(dir_fd_, tmp.c_str(), 0);  // ours: created exclusively above
    return;
  }
  trim(name);
}

void CompiledCache::trim(const std::string& keep) const {
  std::vector<OwnedFile> forms = list_owned_files(dir_fd_, is_form_name);
  uint64_t total = 0;
  for (const OwnedFile& f : forms) total += f.bytes;
  std::sort(forms.begin(), forms.end(),
            [](const OwnedFile& a, const OwnedFile& b) { return a.modified_ns < b.modified_ns; });
  for (const OwnedFile& f : forms) {
    if (total <= max_bytes_) break;
    if (f.name == keep) continue;
    if (::unlinkat(dir_fd_, f.name.c_str(), 0) == 0) total -= f.bytes;
  }
}

}  // namespace shardkit::tok
