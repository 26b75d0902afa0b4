// Strings in one buffer, indexed by position: a vocabulary by id, or the merged tokens of a merge
// list. Half a million std::strings would cost an allocation or 32 bytes each, and restoring a
// vocabulary of them from a compiled form (compiled_cache.h) took most of GPT-2's load time; a
// StringList is restored as views of the form's bytes.
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
    ends_.owned.reserve(count);
    bytes_.owned.reserve(bytes);
  }
  // Appends the concatenation a + b as one string.
  void push_back(std::string_view a, std::string_view b = {}) {
    bytes_.owned.insert(bytes_.owned.end(), a.begin(), a.end());
    bytes_.owned.insert(bytes_.owned.end(), b.begin(), b.end());
    ends_.owned.push_back(bytes_.owned.size());
    bytes_.publish();
    ends_.publish();
  }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return bytes_.view().substr(begin, ends_[i] - begin);
  }
  size_t size() const { return ends_.size(); }
  // The strings one after another, and whether one of them starts at byte `pos` of that.
  std::string_view joined() const { return bytes_.view(); }
  bool starts_at(size_t pos) const {
    return pos == 0 || std::binary_search(ends_.begin(), ends_.end(), uint64_t{pos});
  }

  void save(BlobWriter& w) const {
    bytes_.save(w);
    ends_.save(w);
  }
  // False (and r failed) unless the ends rise to the bytes' end.
  bool load(BlobReader& r) {
    if (!bytes_.restore(r) || !ends_.restore(r)) return false;
    const uint64_t end = ends_.empty() ? 0 : ends_[ends_.size() - 1];
    if (std::is_sorted(ends_.begin(), ends_.end()) && end == bytes_.size()) return true;
    r.fail();
    return false;
  }

 private:
  TableArray<char> bytes_;
  TableArray<uint64_t> ends_;
};

}  // namespace shardkit::tok
