// What the tokenizing workers hand to the ordered stage: rows of token ids before padding, for
// every task alike. A row becomes one record, or (packed lm) one document that the Packer cuts
// into windows. Errors and counts travel with the rows, in input order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/convert_stats.h"
#include "core/error.h"
#include "shardify/example.h"
#include "shardify/input_files.h"

namespace shardkit::shardify {

struct ExampleError {
  uint32_t file_index = 0;
  uint64_t line = 0;
  std::string where;
  std::string reason;
  bool rest_of_file_lost = false;   // a damaged compressed stream: always listed in the summary
  bool after_damaged_text = false;  // Example::after_damaged_text
  bool file_unusable = false;       // Example::file_unusable: stops the conversion
};

// "file:line: reason" (or "file: where: reason").
inline std::string format_error(const std::vector<InputFile>& files, const ExampleError& e) {
  std::string s = e.file_index < files.size() ? files[e.file_index].path : "?";
  if (e.line) s += ":" + std::to_string(e.line);
  s += ": ";
  if (!e.where.empty()) s += e.where + ": ";
  return s + e.reason;
}

// The error that stops a conversion at `e`: "file:line: reason" (or "file: where: reason").
inline Error input_error(const std::vector<InputFile>& files, const ExampleError& e) {
  std::string file = e.file_index < files.size() ? files[e.file_index].path : "?";
  if (e.line) file += ":" + std::to_string(e.line);
  return Error(ErrorCode::kInput, file, (e.where.empty() ? "" : e.where + ": ") + e.reason);
}

// The error of example `ex`, for `reason` (at `where`, else where `ex` is).
inline ExampleError error_of(const Example& ex, std::string reason, std::string where = {}) {
  return {ex.file_index,
          ex.line,
          where.empty() ? ex.where : std::move(where),
          std::move(reason),
          ex.rest_of_file_lost,
          ex.after_damaged_text,
          ex.file_unusable};
}

struct EncodedRow {
  uint32_t first = 0;  // ids [first, first + count) of the batch (and type_ids, when present)
  uint32_t count = 0;
  int32_t label = 0;
  int32_t start_position = 0;
  int32_t end_position = 0;
  uint32_t example_index = 0;
  uint32_t source_index = 0;
  // Packed lm: the document goes on in the next row (all but the last part of a long document);
  // only the last part's row ends with the separator.
  bool continues = false;
};

struct EncodedBatch {
  uint32_t file_index = 0;
  bool ends_file = false;  // the last batch of its input file
  std::vector<uint32_t> ids;
  std::vector<uint8_t> type_ids;   // parallel to ids for tasks with segments, else empty
  std::vector<uint8_t> loss_mask;  // sft: parallel to ids, 1 where the loss is computed
  std::vector<EncodedRow> rows;
  std::vector<ExampleError> errors;
  ConvertStats stats;  // examples, truncations and lengths; records and tokens are counted later
};

}  // namespace shardkit::shardify
