#include "shardify/row_reader.h"

#include <algorithm>
#include <charconv>

#include "shardify/json_fields.h"

namespace shardkit::shardify {
namespace {

class RowReader : public ExampleReader {
 public:
  RowReader(std::unique_ptr<RowFeed> feed, uint32_t input_index, const ReaderOptions& options)
      : feed_(std::move(feed)), input_index_(input_index), fields_(options) {
    feed_->start(options);
  }

  bool next(Example& ex) override {
    while (pos_ >= end_ && direct_ >= chunk_.direct.size())
      if (!fetch()) return false;
    ex.reset();
    ex.file_index = input_index_;
    describe_row(row_, ex.where);
    if (direct_ < chunk_.direct.size() && chunk_.direct[direct_].first == row_in_chunk_) {
      RowFields& f = chunk_.direct[direct_++].second;
      // No JSON text: what was read is the fields' bytes.
      bytes_ += f.text.size() + f.text_pair.size() + f.label.size();
      ex.text = std::move(f.text);
      ex.text_pair = std::move(f.text_pair);
      ex.label = std::move(f.label);
    } else {
      const size_t eol = chunk_.json.find('\n', pos_);
      const size_t stop = eol == std::string::npos || eol > end_ ? end_ : eol;
      const std::string_view json(chunk_.json.data() + pos_, stop - pos_);
      bytes_ += stop + 1 - pos_;
      pos_ = stop + 1;
      if (problem_ < chunk_.problems.size() && chunk_.problems[problem_].first == row_in_chunk_) {
        ex.error = std::move(chunk_.problems[problem_++].second);
      } else {
        fields_.parse(json);
        fields_.read(json, ex);
      }
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
    chunk_.direct.clear();
    if (!feed_->next(chunk_)) return false;
    end_ = chunk_.json.size();
    // Parsed in place: simdjson reads up to kPadding bytes past a row.
    chunk_.json.append(JsonFields::kPadding, '\0');
    pos_ = 0;
    row_in_chunk_ = 0;
    problem_ = 0;
    direct_ = 0;
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
  size_t pos_ = 0, end_ = 0, problem_ = 0, direct_ = 0, row_in_chunk_ = 0;
  uint64_t row_ = 0, bytes_ = 0;
};

}  // namespace

std::optional<DirectFields> direct_fields(const ReaderOptions& options) {
  // QA answers and messages are structures; a dotted path reaches into nested objects.
  if (options.qa || !options.messages_field.empty()) return std::nullopt;
  DirectFields d;
  if (!options.labels_only) {
    d.text = options.text_field;
    if (!options.pair_field.empty()) d.pair = options.pair_field;
  }
  if (!options.label_field.empty()) d.label = options.label_field;
  for (const auto* key : {&d.text, &d.pair, &d.label})
    if (*key && (*key)->find('.') != std::string::npos) return std::nullopt;
  return d;
}

std::vector<std::string> keys_read(const ReaderOptions& options) {
  std::vector<const std::string*> paths;
  if (!options.messages_field.empty())
    paths = {&options.messages_field};
  else if (options.qa)
    paths = {&options.text_field, &options.question_field, &options.answers_field};
  else
    paths = {&options.text_field, &options.pair_field, &options.label_field};
  std::vector<std::string> keys;
  for (const std::string* path : paths) {
    if (path->empty()) continue;
    std::string key = path->substr(0, path->find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

std::unique_ptr<ExampleReader> make_row_reader(std::unique_ptr<RowFeed> feed, uint32_t input_index,
                                               const ReaderOptions& options) {
  return std::make_unique<RowReader>(std::move(feed), input_index, options);
}

}  // namespace shardkit::shardify
