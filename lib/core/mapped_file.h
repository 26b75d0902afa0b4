// A regular file's bytes mapped read-only, so that a reader takes a whole-file document where the
// page cache holds it instead of copying it into a buffer of its own.
//
// A mapping has one hazard that a read does not: if another process shortens the file while it
// is mapped, the next read of a page past the new end raises SIGBUS, and the process dies.
// Files are therefore mapped only in a process that installed guard_mapped_files(): its SIGBUS
// handler replaces such a page by zeros, so the read goes on, and marks the mapping, so that
// the reader can report that the file shrank instead of using the zeros. The handler belongs to
// the process, so a program installs it (shardify does, at its start); the library never does,
// and where it is absent, map() declines and callers read the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace shardkit {

class MappedFile {
 public:
  // The bytes of the open regular file `fd` (named `path`, for messages) from offset 0 to
  // `size`, followed by `padding` readable zero bytes. Null when the guard is not installed,
  // when more mappings are live than the guard keeps track of, or when the kernel refuses; the
  // caller reads instead.
  static std::shared_ptr<const MappedFile> map(int fd, uint64_t size, size_t padding,
                                               std::string path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Whether a read found a page gone (the file shrank while mapped): from that page on, the
  // bytes read as zeros. Checked after the bytes were used, it says whether they were the file's.
  bool shrank() const;
  // Throws Error(kIo) naming the file when it shrank().
  void check_intact() const;
  // Lets the whole pages inside `range` (of bytes()) leave the process's resident memory: the
  // page cache keeps them, and a later read faults them in again. A reader done with a part of
  // the file calls it, so that a mapped file of many gigabytes is not all resident at its end.
  void release_pages(std::string_view range) const;

 private:
  MappedFile(const char* data, size_t size, size_t mapped, int slot, std::string path)
      : data_(data), size_(size), mapped_(mapped), slot_(slot), path_(std::move(path)) {}

  const char* data_;
  size_t size_;
  size_t mapped_;  // the whole reservation: the file's pages and the padding's
  int slot_;       // in the guard's table of live mappings
  std::string path_;
};

// Installs the process-wide SIGBUS handler that lets MappedFile::map() map files. A fault
// outside every live mapping goes to the handler installed before, or ends the process as
// SIGBUS would have. Once; later calls do nothing.
void guard_mapped_files();

}  // namespace shardkit
