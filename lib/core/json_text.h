// The one rule for the JSON that shardkit prints (the tools' --json, --print-options, the
// conversion and merge summaries): UTF-8 throughout, and a byte of a string that is not valid
// UTF-8 (a path or a name the file system allows, such as Latin-1 "lat\xe9") written as U+FFFD,
// so that the output stays valid JSON rather than failing as a whole and losing its report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace shardkit {

// `j` as text; `indent` as nlohmann's dump() (-1: one line).
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace shardkit
