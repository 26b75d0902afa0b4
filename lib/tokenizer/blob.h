// A tokenizer's compiled tables as bytes (compiled_cache.h): plain values and arrays appended in
// order, read back with every length checked against what is left, so that a damaged or foreign
// blob is refused (BlobReader::ok() false), never read past. Each array starts at a multiple of
// 8 bytes from the blob's start, so that a table restored from a blob that starts so aligned in
// memory reads its arrays where they lie (BlobReader::view) instead of copying them.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace shardkit::tok {

inline constexpr size_t kBlobAlignment = 8;

// A compiled form's tables as read (compiled_cache.h), and what keeps their bytes alive: tables
// restored from them hold views into those bytes, and share `owner` so that the bytes last as
// long as the tables.
struct CompiledTables {
  std::string_view bytes;
  std::shared_ptr<const void> owner;
  bool empty() const { return bytes.empty(); }
};

class BlobWriter {
 public:
  explicit BlobWriter(std::string& out) : out_(out) {}
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void array(const T* data, size_t count) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= kBlobAlignment);
    value<uint64_t>(count);
    align();
    out_.append(reinterpret_cast<const char*>(data), count * sizeof(T));
  }
  template <typename T>
  void array(const std::vector<T>& v) {
    array(v.data(), v.size());
  }
  void bytes(std::string_view s) {
    value<uint64_t>(s.size());
    out_.append(s);
  }
  void strings(const std::vector<std::string>& list) {
    value<uint64_t>(list.size());
    for (const std::string& s : list) bytes(s);
  }
  // Zeros up to the next multiple of kBlobAlignment.
  void align() { out_.append((kBlobAlignment - out_.size() % kBlobAlignment) % kBlobAlignment, 0); }

 private:
  std::string& out_;
};

class BlobReader {
 public:
  explicit BlobReader(std::string_view in) : begin_(in.data()), in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return ok_ && in_.empty(); }

  template <typename T>
  T value() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    if (!take(sizeof v)) return v;
    std::memcpy(&v, in_.data() - sizeof v, sizeof v);
    return v;
  }
  // The next array where it lies in the blob; null (with ok() false) when the blob does not
  // hold one. A blob not aligned in memory as BlobWriter aligned it also fails.
  template <typename T>
  const T* view(size_t* count) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= kBlobAlignment);
    const uint64_t n = value<uint64_t>();
    align();
    if (!ok_ || n > in_.size() / sizeof(T) ||
        reinterpret_cast<uintptr_t>(in_.data()) % alignof(T) != 0) {
      fail();
      return nullptr;
    }
    const auto* data = reinterpret_cast<const T*>(in_.data());
    in_.remove_prefix(n * sizeof(T));
    *count = n;
    return data;
  }
  std::string_view bytes() {
    const uint64_t n = value<uint64_t>();
    if (!ok_ || n > in_.size()) {
      fail();
      return {};
    }
    const std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  void strings(std::vector<std::string>& list) {
    const uint64_t n = value<uint64_t>();
    if (!ok_ || n > in_.size() / sizeof(uint64_t)) return fail();
    list.resize(n);
    for (std::string& s : list) s = bytes();
  }
  // Past BlobWriter::align()'s zeros.
  void align() {
    if (!ok_) return;
    const size_t at = static_cast<size_t>(in_.data() - begin_);
    take((kBlobAlignment - at % kBlobAlignment) % kBlobAlignment);
  }
  void fail() {
    ok_ = false;
    in_ = {};
  }

 private:
  bool take(size_t n) {
    if (!ok_ || in_.size() < n) {
      fail();
      return false;
    }
    in_.remove_prefix(n);
    return true;
  }

  const char* begin_;
  std::string_view in_;
  bool ok_ = true;
};

// An array a table reads (slots, values, or the bytes of keys and strings): built here, or
// restored as a view of a compiled form's bytes (which the table's owner keeps alive,
// CompiledTables::owner). Building writes `owned` and calls publish() whenever it may have moved.
template <typename T>
class TableArray {
 public:
  TableArray() = default;
  // A copy of a built array owns its copy of it; a copy of a view is the same view.
  TableArray(const TableArray& o) { *this = o; }
  TableArray& operator=(const TableArray& o) {
    if (this != &o) take(std::vector<T>(o.owned), o);
    return *this;
  }
  TableArray(TableArray&& o) noexcept { *this = std::move(o); }
  TableArray& operator=(TableArray&& o) noexcept {
    take(std::move(o.owned), o);
    return *this;
  }

  std::vector<T> owned;
  void publish() {
    data_ = owned.data();
    size_ = owned.size();
  }
  // The array to change, copied out of the form's bytes first if it is a view of them.
  std::vector<T>& edit() {
    if (data_ != owned.data()) {
      owned.assign(begin(), end());
      publish();
    }
    return owned;
  }
  bool restore(BlobReader& r) {
    owned = {};
    data_ = r.view<T>(&size_);
    if (!data_) size_ = 0;
    return data_ != nullptr;
  }
  void save(BlobWriter& w) const { w.array(data_, size_); }

  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  // The bytes, for a table of keys or strings.
  std::string_view view() const requires std::same_as<T, char> { return {data_, size_}; }

 private:
  // o's array, with `built` as o's built array: a built one then points at `built`, a view
  // stays the view.
  void take(std::vector<T>&& built, const TableArray& o) {
    const bool view = o.data_ != o.owned.data();  // o.owned is still o's here
    const T* data = o.data_;
    size_ = o.size_;
    owned = std::move(built);
    data_ = view ? data : owned.data();
  }

  const T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace shardkit::tok
