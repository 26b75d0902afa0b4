// The fields of one JSON object as an Example, by the JSONL rules: dotted paths, string texts,
// string/integer/boolean labels, QA answers in HF datasets' or SQuAD's layout. Shared by the
// JSONL reader (a line of a file) and the row reader (a row handed in from outside), so that the
// same object gives the same example whichever way it arrives.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
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
  //
  // A number beyond 64-bit integers and doubles (1e400, 18446744073709551616), or NaN, Infinity
  // or -Infinity, which Python's json reads, fails simdjson's parse: such a line alone is parsed
  // again with those numbers set aside (json_wide_numbers.h), and a field read where one stands
  // is not of the type asked for, which the row's error says, naming the number.
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
  void release_buffers() {
    parser_ = simdjson::dom::parser{};
    std::string().swap(quoted_);
  }

 private:
  // The characters of the number set aside at `e`, or nullopt when none is.
  std::optional<std::string_view> set_aside_number(simdjson::dom::element e) const;
  // For the error of a row that reads the values at `found`: `lead` + "N (why N cannot be
  // read)" for the first of them that is a number set aside, else "".
  std::string set_aside_note(
      std::string_view lead,
      std::initializer_list<simdjson::simdjson_result<simdjson::dom::element>> found) const;
  // A string of the line (not a number set aside that stands as one in the parsed copy).
  bool read_string(simdjson::dom::element e, std::string_view& out) const;
  // `e` as minified JSON, with the numbers set aside written as they came.
  std::string minify(simdjson::dom::element e) const;
  void write_json(simdjson::dom::element e, std::string& out) const;
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
  // A line parsed again: its copy with the numbers simdjson refuses as strings, and where those
  // strings lie in the parsed document (ascending); empty for every line simdjson parses as it is.
  std::string quoted_;
  std::vector<const char*> set_aside_numbers_;
  uint32_t next_question_ = 0;  // QA: ordinal of the question within its input
};

// Parses the examples whose JSON a reader left unread (Example::json_unread) into their fields,
// as the reader would have: the converter does it on the tokenizing threads, where the read
// stage, which runs on one thread in input order, spent half its time parsing.
void read_unread_json(std::vector<Example>& examples, const ReaderOptions& options);

}  // namespace shardkit::shardify
