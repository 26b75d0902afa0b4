// Strings in one buffer, indexed by position: a vocabulary by id, or the merged tokens of a merge
// list. Half a million std::strings would cost an allocation or 32 bytes each, and restoring a
// vocabulary of them from a compiled form (compiled_cache.h) took most of GPT-2's load time; a
// StringList is restored as two array copies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/blob.h"

namespace shardkit::tok {

class StringList {
 public:
  StringList() = default;
  explicit StringList(const std::vector<std::string>& strings) {
    size_t bytes = 0;
    for (const std::string& s : strings) bytes += s.size();
    reserve(strings.size(), bytes);
    for (const std::string& s : strings) push_back(s);
  }

  void reserve(size_t count, size_t bytes) {
    ends_.reserve(count);
    bytes_.reserve(bytes);
  }
  // Appends the concatenation a + b as one string.
  void push_back(std::string_view a, std::string_view b = {}) {
    bytes_.append(a);
    bytes_.append(b);
    ends_.push_back(bytes_.size());
  }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  size_t size() const { return ends_.size(); }

  void save(BlobWriter& w) const {
    w.bytes(bytes_);
    w.array(ends_);
  }
  // False (and r failed) unless the ends rise to the bytes' end.
  bool load(BlobReader& r) {
    r.bytes(bytes_);
    r.array(ends_);
    const uint64_t end = ends_.empty() ? 0 : ends_.back();
    if (r.ok() && std::is_sorted(ends_.begin(), ends_.end()) && end == bytes_.size()) return true;
    r.fail();
    return false;
  }

 private:
  std::string bytes_;
  std::vector<uint64_t> ends_;
};

}  // namespace shardkit::tok
