#include "shardify/row_reader.h"

#include <charconv>

#include "shardify/json_fields.h"

namespace shardkit::shardify {
namespace {

class RowReader : public ExampleReader {
 public:
  RowReader(std::unique_ptr<RowFeed> feed, uint32_t input_index, const ReaderOptions& options)
      : feed_(std::move(feed)), input_index_(input_index), fields_(options) {}

  bool next(Example& ex) override {
    while (pos_ >= end_)
      if (!fetch()) return false;
    const size_t eol = chunk_.json.find('\n', pos_);
    const size_t stop = eol == std::string::npos || eol > end_ ? end_ : eol;
    const std::string_view json(chunk_.json.data() + pos_, stop - pos_);
    bytes_ += stop + 1 - pos_;
    pos_ = stop + 1;
    ex = Example{};
    ex.file_index = input_index_;
    describe_row(row_, ex.where);
    if (problem_ < chunk_.problems.size() && chunk_.problems[problem_].first == row_in_chunk_) {
      ex.error = std::move(chunk_.problems[problem_++].second);
    } else {
      fields_.parse(json);
      fields_.read(json, ex);
    }
    ++row_;
    ++row_in_chunk_;
    return true;
  }

  uint64_t file_bytes_consumed() const override { return bytes_; }

 private:
  bool fetch() {
    chunk_.json.clear();
    chunk_.problems.clear();
    if (!feed_->next(chunk_)) return false;
    end_ = chunk_.json.size();
    // Parsed in place: simdjson reads up to kPadding bytes past a row.
    chunk_.json.append(JsonFields::kPadding, '\0');
    pos_ = 0;
    row_in_chunk_ = 0;
    problem_ = 0;
    return true;
  }

  // "row N" (fits std::string's inline buffer: no allocation per row).
  static void describe_row(uint64_t row, std::string& out) {
    char num[24];
    out.assign("row ");
    out.append(num, std::to_chars(num, num + sizeof num, row).ptr);
  }

  std::unique_ptr<RowFeed> feed_;
  uint32_t input_index_;
  JsonFields fields_;
  RowChunk chunk_;
  size_t pos_ = 0, end_ = 0, problem_ = 0, row_in_chunk_ = 0;
  uint64_t row_ = 0, bytes_ = 0;
};

}  // namespace

std::unique_ptr<ExampleReader> make_row_reader(std::unique_ptr<RowFeed> feed, uint32_t input_index,
                                               const ReaderOptions& options) {
  return std::make_unique<RowReader>(std::move(feed), input_index, options);
}

}  // namespace shardkit::shardify
