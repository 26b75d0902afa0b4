// The fields of one JSON object as an Example, by the JSONL rules: dotted paths, string texts,
// string/integer/boolean labels, QA answers in HF datasets' or SQuAD's layout. Shared by the
// JSONL reader (a line of a file) and the row reader (a row handed in from outside), so that the
// same object gives the same example whichever way it arrives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "shardify/example.h"
#include "shardify/example_reader.h"

namespace shardkit::shardify {

class JsonFields {
 public:
  // simdjson reads this many bytes past the end of the text it parses in place.
  static constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;

  explicit JsonFields(const ReaderOptions& options) : options_(options) {}

  // Parses `json` in place: kPadding readable bytes must follow it. The parsed document keeps
  // its own copy of the strings, so `json` may go before read().
  void parse(std::string_view json);
  bool parsed_ok() const { return !error_; }
  // The parsed object's fields into `ex` (ex.error when it has none usable). `json` is the text
  // given to parse(), still alive when parsing failed (the error names the bad UTF-8 byte).
  //
  // With `lend_text`, a text that is the example's only one is not copied out of the parsed
  // document: `ex` borrows it (Example::text_view) and holds the document, and this object
  // starts a new one. Copying a 60 MB field into new memory took as long as parsing it, on the
  // one thread that reads the input.
  void read(std::string_view json, Example& ex, bool lend_text = false);
  // Frees the parser's buffers (sized by the longest text so far).
  void release_buffers() { parser_ = simdjson::dom::parser{}; }

 private:
  bool string_field(simdjson::dom::element root, const std::string& path, std::string_view& out,
                    std::string& problem);
  bool string_field(simdjson::dom::element root, const std::string& path, std::string& out,
                    std::string& problem);
  // Hands the parsed document, which holds `text`, to `ex`.
  void lend(std::string_view text, Example& ex);
  void read_messages(simdjson::dom::element root, Example& ex);
  void read_qa(simdjson::dom::element root, Example& ex);
  void label_field(simdjson::dom::element root, Example& ex);

  ReaderOptions options_;
  simdjson::dom::parser parser_;
  simdjson::dom::element root_;
  simdjson::error_code error_ = simdjson::SUCCESS;
  uint32_t next_question_ = 0;  // QA: ordinal of the question within its input
};

// Parses the examples whose JSON a reader left unread (Example::json_unread) into their fields,
// as the reader would have: the converter does it on the tokenizing threads, where the read
// stage, which runs on one thread in input order, spent half its time parsing.
void read_unread_json(std::vector<Example>& examples, const ReaderOptions& options);

}  // namespace shardkit::shardify
