// The field names of an input file's first row, for error messages that say what a file holds
// when the field asked for is not in it ("its first row has body, sentiment").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardify/example_reader.h"

namespace shardkit::shardify {

// JSONL: the keys of the first object; CSV/TSV: the header row. Empty for other formats, or
// when the file cannot be read (the reader will say why).
std::vector<std::string> first_row_fields(const std::string& path, InputFormat format);

// Whether `text` (or the file at `path`, read through its decompression) is JSON Lines: its first
// line a whole JSON object and another line after it, as datasets' Dataset.to_json writes a file
// named `.json`, which shardify would read as SQuAD JSON.
bool starts_as_json_lines(std::string_view text);
bool file_starts_as_json_lines(const std::string& path);

}  // namespace shardkit::shardify
