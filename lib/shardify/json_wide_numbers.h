// Numbers that Python's json reads but simdjson refuses: those JSON allows beyond 64-bit integers
// and doubles (1e400, 18446744073709551616; Python reads 1e400 as inf, big integers exactly), and
// the literals NaN, Infinity and -Infinity, which Python's json.dumps writes for non-finite
// floats by default (allow_nan) and json.loads reads back. simdjson refuses the whole document
// for one of them, even in a field nobody reads. A document refused so is parsed again as a copy
// in which each such number is a string of its own characters, remembered as a number that was
// set aside (json_fields.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace shardkit::shardify {

// Writes to `out` a copy of `json` in which each number simdjson cannot hold, and each of the
// literals NaN, Infinity and -Infinity (Python's spellings only: not nan, inf, +Infinity or
// -NaN), standing where a value stands (after ':', '[' or ',' and before ',', ']', '}' or the
// end), is a string of its own characters: {"id":1e400,"score":NaN} becomes
// {"id":"1e400","score":"NaN"}. simdjson's padding follows the copy, whose length without it is
// out.size() - SIMDJSON_PADDING. `string_ordinals` gets the place of each such string among all
// strings of the copy, keys included, in document order (ascending). The copy is valid JSON
// exactly when `json` is, with the three literals counted as values as Python's json counts
// them: a malformed number or literal, or one where a key stands, is left as it is. `probe` parses
// each candidate number on its own: what simdjson refuses is what it cannot hold. Returns false
// when `json` has no such number.
bool quote_numbers_simdjson_refuses(std::string_view json, simdjson::dom::parser& probe,
                                    std::string& out, std::vector<size_t>& string_ordinals);

// The number set aside and why the conversion cannot use it, for the error of a row that reads
// it: "NaN (a non-finite number)", "1e400 (a number beyond 64-bit integers and doubles)".
std::string described_set_aside(std::string_view number);

// Whether a parse that failed with `error` may have met a number simdjson refuses: NUMBER_ERROR
// for 1e400 and -Infinity (a '-' starts a number), TAPE_ERROR for NaN and Infinity (no other
// value starts so). Malformed numbers and values fail so too: the documents that hold any of
// these take the slow path, every other document is parsed once.
bool may_hold_numbers_simdjson_refuses(simdjson::error_code error);

// Parses `json`, refused by simdjson with `first_error`, again into `root`: as its copy with the
// numbers simdjson refuses set aside (quote_numbers_simdjson_refuses), written to `quoted` (a
// buffer kept for the next document). `set_aside` gets the first bytes of the strings those
// numbers became in the parsed document (ascending). Returns `first_error` when `json` holds
// none: it is malformed as it stands.
simdjson::error_code parse_with_numbers_set_aside(std::string_view json,
                                                  simdjson::error_code first_error,
                                                  simdjson::dom::parser& parser,
                                                  std::string& quoted, simdjson::dom::element& root,
                                                  std::vector<const char*>& set_aside);

// The characters of the number set aside at `e`, or nullopt when `e` is none of `set_aside`
// (parse_with_numbers_set_aside).
std::optional<std::string_view> number_set_aside(const std::vector<const char*>& set_aside,
                                                 simdjson::dom::element e);

// The first bytes of the string values of `root` whose places among its strings (keys
// included, in document order) are `ordinals` (ascending): they tell these strings apart from
// any other of the document, equal or not.
std::vector<const char*> strings_at(simdjson::dom::element root,
                                    const std::vector<size_t>& ordinals);

}  // namespace shardkit::shardify
