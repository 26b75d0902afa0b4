// simdjson keeps every member of an object, so a repeated key would let two readers disagree on
// which value counts: every file shardkit parses (manifest, mixture spec) refuses one.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit {

// The first key, in sorted order, that appears twice in one object anywhere inside `e`.
inline std::optional<std::string> repeated_key(simdjson::dom::element e) {
  if (simdjson::dom::object o; !e.get_object().get(o)) {
    std::vector<std::string_view> keys;
    for (auto [key, value] : o) {
      keys.push_back(key);
      if (auto inner = repeated_key(value)) return inner;
    }
    std::sort(keys.begin(), keys.end());
    if (auto d = std::adjacent_find(keys.begin(), keys.end()); d != keys.end())
      return std::string(*d);
  } else if (simdjson::dom::array a; !e.get_array().get(a)) {
    for (simdjson::dom::element v : a)
      if (auto inner = repeated_key(v)) return inner;
  }
  return std::nullopt;
}

}  // namespace shardkit
