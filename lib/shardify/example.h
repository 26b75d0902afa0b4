// One unit of input as the readers hand it to the converter: a document, a labelled text or
// pair, or a SQuAD paragraph with its questions. Readers never throw for bad content; they set
// `error` so that --on-error can decide, in input order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"

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
  bool rest_of_file_lost = false;  // the error ends the file (a damaged compressed stream)
  // ...and lines before it may hold text of the damaged member or frame, read unchecked
  // (ByteSource::handed_out_damaged_text): a conversion that keeps going reads the file again.
  bool after_damaged_text = false;
  // The error leaves no example of the file readable (a CSV header without a selected column, a
  // SQuAD file that is not JSON): it is the file's, not a row's, so no --on-error skips it.
  bool file_unusable = false;
  // A text borrowed rather than owned (`text` is then empty): a line or a document of a plain
  // text file, or one part of a long document that the converter cut (example_batcher.h). Its
  // bytes lie in a buffer, which `text_owner` keeps, or in the file mapped, which `text_file`
  // keeps and whose bytes are checked to have stayed the file's once they were used. At most
  // one of the two is set.
  std::shared_ptr<const void> text_owner;
  std::string_view text_view;
  std::shared_ptr<const MappedFile> text_file;
  bool continues = false;  // a part of a long document, and more parts follow
  bool after_cut = false;  // a part of a long document after its first (encode_ids_after_cut)
  // A JSONL line not parsed yet: text_view is the line's JSON (ReaderOptions::defer_json).
  bool json_unread = false;

  // The text to tokenize, owned or borrowed.
  std::string_view body() const { return borrowed() ? text_view : std::string_view(text); }
  bool borrowed() const { return text_owner || text_file; }

  // As `*this = Example{}`, which builds and moves a whole Example: for a short line that cost
  // more than reading it. Strings keep their capacity. The binding names every field, so that
  // a field added to Example does not compile until it is cleared here too.
  void reset() {
    auto& [file_index_, line_, where_, text_, text_pair_, messages_, label_, questions_, error_,
           rest_of_file_lost_, after_damaged_text_, file_unusable_, text_owner_, text_view_,
           text_file_, continues_, after_cut_, json_unread_] = *this;
    file_index_ = 0;
    line_ = 0;
    for (std::string* s : {&where_, &text_, &text_pair_, &messages_, &label_, &error_}) s->clear();
    questions_.clear();
    rest_of_file_lost_ = false;
    after_damaged_text_ = false;
    file_unusable_ = false;
    text_owner_.reset();
    text_view_ = {};
    text_file_.reset();
    continues_ = false;
    after_cut_ = false;
    json_unread_ = false;
  }
};

}  // namespace shardkit::shardify
