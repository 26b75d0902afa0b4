// Numbers that JSON allows but simdjson cannot hold: beyond 64-bit integers and doubles (1e400,
// 18446744073709551616). Python's json reads them (1e400 as inf, big integers exactly), while
// simdjson refuses the whole document for one of them, even in a field nobody reads. A document
// refused so is parsed again as a copy in which each such number is a string of its own
// characters, remembered as a number that was set aside (json_fields.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace shardkit::shardify {

// Writes to `out` a copy of `json` in which each number simdjson cannot hold, standing where a
// value stands (after ':', '[' or ',' and before ',', ']', '}' or the end), is a string of its
// own characters: {"id":1e400} becomes {"id":"1e400"}. simdjson's padding follows the copy,
// whose length without it is out.size() - SIMDJSON_PADDING. `string_ordinals` gets the place of
// each such string among all strings of the copy, keys included, in document order (ascending).
// The copy is valid JSON exactly when `json` is: a malformed number, or a number where a key
// stands, is left as it is. `probe` parses each candidate number on its own: what simdjson
// refuses is what it cannot hold. Returns false when `json` has no such number.
bool quote_wide_numbers(std::string_view json, simdjson::dom::parser& probe, std::string& out,
                        std::vector<size_t>& string_ordinals);

// The first bytes of the string values of `root` whose places among its strings (keys
// included, in document order) are `ordinals` (ascending): they tell these strings apart from
// any other of the document, equal or not.
std::vector<const char*> strings_at(simdjson::dom::element root,
                                    const std::vector<size_t>& ordinals);

}  // namespace shardkit::shardify
