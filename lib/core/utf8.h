// UTF-8 checks: the one validator of input text (readers, tokenizers) and code point offsets.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace shardkit {

// The byte offset of the first invalid UTF-8 sequence, or nullopt when `text` is valid.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// `text` with each byte that is not part of valid UTF-8 written as \xNN, for a message.
std::string escape_invalid_utf8(std::string_view text);

// `text` for one line of a message or a summary: as escape_invalid_utf8, and each control byte
// (below 0x20, or 0x7F: a newline in a file's name) written as \xNN too.
std::string escape_for_one_line(std::string_view text);

// The same for a large text, checked a range at a time on the calling thread's task arena
// (core/parallel_ranges.h). Each range starts at a byte that is not a continuation byte, so the
// text is valid exactly when every range is; where one is not, the offset comes from
// first_invalid_utf8 over the whole text.
std::optional<size_t> first_invalid_utf8_in_parallel(std::string_view text);

// Whether `byte` occurs in `text`, searched a range at a time on the calling thread's task arena.
bool contains_byte_in_parallel(std::string_view text, char byte);

// The byte offset of code point `index` (index == number of code points gives text.size());
// nullopt when `text` has fewer code points. SQuAD's answer_start counts code points.
std::optional<size_t> code_point_to_byte(std::string_view text, size_t index);

}  // namespace shardkit
