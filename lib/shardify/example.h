// One unit of input as the readers hand it to the converter: a document, a labelled text or
// pair, or a SQuAD paragraph with its questions. Readers never throw for bad content; they set
// `error` so that --on-error can decide, in input order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::shardify {

struct QaQuestion {
  std::string question;
  bool impossible = false;
  std::string answer_text;
  size_t answer_start = 0;     // byte offset into the paragraph's context
  uint32_t example_index = 0;  // ordinal of the question within its input file
  std::string where;           // e.g. "data[0].paragraphs[3].qas[1]"
  std::string error;
};

// One part of a long document that the converter cut (example_batcher.h) so that several
// threads tokenize it: the parts share the text; this one is [begin, end) of it.
struct DocumentPart {
  std::shared_ptr<const std::string> text;
  size_t begin = 0, end = 0;
  bool last = true;  // the document ends with this part

  std::string_view view() const { return std::string_view(*text).substr(begin, end - begin); }
};

struct Example {
  uint32_t file_index = 0;
  uint64_t line = 0;      // 1-based line of the example's start; 0 when lines do not apply
  std::string where;      // location when lines do not apply
  std::string text;       // the document, the first text, the QA context, or the SFT prompt
  std::string text_pair;  // the second text, or the SFT response
  std::string messages;   // sft --messages-field: the JSON array of {role, content}, minified
  std::string label;
  std::vector<QaQuestion> questions;
  std::string error;
  bool rest_of_file_lost = false;    // the error ends the file (a damaged compressed stream)
  std::optional<DocumentPart> part;  // set (and `text` empty) for a part of a long document
};

}  // namespace shardkit::shardify
