// Rows handed in from outside instead of read from a file (the Python module's write_dataset):
// JSON objects, read by the JSONL rules (json_fields.h), so that rows convert exactly as the same
// rows written one per line to a JSONL file. The feed is pulled a chunk at a time on the
// converter's reading thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shardify/example_reader.h"

namespace shardkit::shardify {

struct RowChunk {
  // The rows' JSON objects, each on one line ended by '\n'. A row that could not be written as
  // JSON is an empty line, with its reason in `problems`.
  std::string json;
  std::vector<std::pair<size_t, std::string>> problems;  // (row within the chunk, reason), sorted
};

class RowFeed {
 public:
  virtual ~RowFeed() = default;
  // Replaces `chunk` with the next rows; false when none are left. What it throws passes through
  // the conversion, which then leaves no dataset behind.
  virtual bool next(RowChunk& chunk) = 0;
};

// Examples of the rows, one each, numbered "row N" from 0 (Example::where).
std::unique_ptr<ExampleReader> make_row_reader(std::unique_ptr<RowFeed> feed, uint32_t input_index,
                                               const ReaderOptions& options);

}  // namespace shardkit::shardify
