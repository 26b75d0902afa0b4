// A tokenizer's compiled tables as bytes (compiled_cache.h): plain values and arrays appended in
// order, read back with every length checked against what is left, so that a damaged or foreign
// blob is refused (BlobReader::ok() false), never read past.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/populate_pages.h"

namespace shardkit::tok {

class BlobWriter {
 public:
  explicit BlobWriter(std::string& out) : out_(out) {}
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    value<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void bytes(std::string_view s) {
    value<uint64_t>(s.size());
    out_.append(s);
  }
  void strings(const std::vector<std::string>& list) {
    value<uint64_t>(list.size());
    for (const std::string& s : list) bytes(s);
  }

 private:
  std::string& out_;
};

class BlobReader {
 public:
  explicit BlobReader(std::string_view in) : in_(in) {}
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
  // The next array copied into `v`, whose fresh pages are mapped first.
  template <typename T>
  void array(std::vector<T>& v) {
    const uint64_t n = value<uint64_t>();
    if (!ok_ || n > in_.size() / sizeof(T)) return fail();
    v.clear();
    v.reserve(n);
    populate_pages(v.data(), n * sizeof(T));
    v.resize(n);
    std::memcpy(v.data(), in_.data(), n * sizeof(T));
    in_.remove_prefix(n * sizeof(T));
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
  // The next bytes() copied into `out`, whose fresh pages are mapped first.
  void bytes(std::string& out) {
    const std::string_view s = bytes();
    out.clear();
    out.reserve(s.size());
    populate_pages(out.data(), s.size());
    out.assign(s);
  }
  void strings(std::vector<std::string>& list) {
    const uint64_t n = value<uint64_t>();
    if (!ok_ || n > in_.size() / sizeof(uint64_t)) return fail();
    list.resize(n);
    for (std::string& s : list) s = bytes();
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

  std::string_view in_;
  bool ok_ = true;
};

}  // namespace shardkit::tok
