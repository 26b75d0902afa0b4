// Rows handed in from outside instead of read from a file (the Python module's write_dataset):
// JSON objects, read by the JSONL rules (json_fields.h), so that rows convert exactly as the same
// rows written one per line to a JSONL file. The feed is pulled a chunk at a time on the
// converter's reading thread. A feed may also hand a row over as its fields, taken out without
// JSON (RowFields), where it can tell that they are what the JSON route would read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shardify/example_reader.h"

namespace shardkit::shardify {

// The fields of a row taken out directly: the texts and label that the JSON rules would read
// from the row's JSON object (see direct_fields()). Fields that are not read stay empty.
struct RowFields {
  std::string text, text_pair, label;
};

struct RowChunk {
  // The JSON objects of the rows not in `direct`, in row order, each on one line ended by '\n'.
  // A row that could not be written as JSON is an empty line, with its reason in `problems`.
  std::string json;
  std::vector<std::pair<size_t, std::string>> problems;  // (row within the chunk, reason), sorted
  std::vector<std::pair<size_t, RowFields>> direct;      // (row within the chunk, fields), sorted
};

// The top-level keys whose values a feed may hand over as RowFields for these reader options,
// or nullopt when every row must come as JSON (QA, messages, a dotted path). A key that is not
// read is nullopt. A direct row must be exactly what the JSON rules read without error from its
// JSON object: a string at `text` and `pair`; at `label` a string, an integer within
// [-2^63, 2^64) (as decimal digits) or a boolean ("true"/"false"); and the whole object must be
// valid JSON (valid UTF-8, numbers simdjson reads). Anything else goes as JSON, so that the
// reader gives its usual errors.
struct DirectFields {
  std::optional<std::string> text, pair, label;
};
std::optional<DirectFields> direct_fields(const ReaderOptions& options);

// The top-level keys the JSON rules look into for these reader options (the first step of each
// field path), for the labels-only pass too: a row's other keys are never read, so a feed may
// leave out those of them whose values cannot be written as JSON.
std::vector<std::string> keys_read(const ReaderOptions& options);

class RowFeed {
 public:
  virtual ~RowFeed() = default;
  // Called once by the reader before next(), with its options (see direct_fields()).
  virtual void start(const ReaderOptions& options) { (void)options; }
  // Replaces `chunk` with the next rows; false when none are left. What it throws passes through
  // the conversion, which then leaves no dataset behind.
  virtual bool next(RowChunk& chunk) = 0;
};

// Examples of the rows, one each, numbered "row N" from 0 (Example::where).
std::unique_ptr<ExampleReader> make_row_reader(std::unique_ptr<RowFeed> feed, uint32_t input_index,
                                               const ReaderOptions& options);

}  // namespace shardkit::shardify
