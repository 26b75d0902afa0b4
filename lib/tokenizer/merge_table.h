// A BPE model's merges as the table the merge loops read: (left id << 32 | right id) ->
// (rank << 32 | merged id), the lowest rank kept for a pair. The merges' tokens are looked up in
// groups (StringIdMap::find_each): a 262k vocabulary's table is far larger than the caches, and
// lookups that waited for one another were most of a tokenizer's load time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tokenizer/string_list.h"
#include "tokenizer/string_map.h"

namespace shardkit::tok {

// Fills `table` from merges whose i-th tokens are left[i], right[i] and merged[i] (all indexable
// by size_t, giving string views). `name(i)` describes merge i for an error, which names the
// first merge whose token is missing from `vocab`.
template <typename Left, typename Right, typename Merged, typename Name>
void build_merge_table(const StringIdMap& vocab, size_t count, const Left& left, const Right& right,
                       const Merged& merged, const Name& name, const std::string& source,
                       U64Map& table) {
  constexpr uint32_t kNone = StringIdMap::kNone;
  std::vector<uint32_t> ids(3 * count);
  vocab.find_each(
      count, [&](size_t i) { return std::string_view(left[i]); },
      [&](size_t i, uint32_t id) { ids[3 * i] = id; });
  vocab.find_each(
      count, [&](size_t i) { return std::string_view(right[i]); },
      [&](size_t i, uint32_t id) { ids[3 * i + 1] = id; });
  vocab.find_each(
      count, [&](size_t i) { return std::string_view(merged[i]); },
      [&](size_t i, uint32_t id) { ids[3 * i + 2] = id; });
  for (size_t rank = 0; rank < count; ++rank) {
    if (ids[3 * rank] == kNone || ids[3 * rank + 1] == kNone)
      throw Error(ErrorCode::kInput, source,
                  "BPE merge " + std::to_string(rank) + " '" + name(rank) +
                      "' uses a token missing from the vocabulary");
    if (ids[3 * rank + 2] == kNone)
      throw Error(ErrorCode::kInput, source,
                  "BPE merge " + std::to_string(rank) + " '" + name(rank) +
                      "': the merged token is missing from the vocabulary");
  }
  table.insert_each(
      count, [&](size_t i) { return (uint64_t{ids[3 * i]} << 32) | ids[3 * i + 1]; },
      [&](size_t i) { return (uint64_t{i} << 32) | ids[3 * i + 2]; });
}

}  // namespace shardkit::tok
