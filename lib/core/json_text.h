// The little JSON output shardkit needs (manifests, --json reports): quoting and number text.
// Parsing is simdjson's job; this only writes.
#pragma once

#include <string>
#include <string_view>

namespace shardkit {

// A JSON string literal, quotes included. Bytes >= 0x80 pass through (the input is UTF-8);
// control characters are escaped.
std::string json_quote(std::string_view text);

}  // namespace shardkit
