// Plain text: a whole file is one document (--doc-sep file), or one document per line (line),
// or documents separated by blank lines (blank). Blank lines are separators, never documents;
// inside a file document they are kept, since paragraph breaks are part of the text.
#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {

class TextReader : public ExampleReader {
 public:
  TextReader(std::unique_ptr<LineReader> lines, uint32_t file_index, const ReaderOptions& options)
      : lines_(std::move(lines)), file_index_(file_index), options_(options) {}

  bool next(Example& ex) override {
    std::string_view line;
    if (!start_example_at_next_line(*lines_, file_index_, ex, line))
      return stream_error_example(*lines_, file_index_, ex);
    lines_->take_line(line, ex.text);
    switch (options_.doc_separator) {
      case DocSeparator::kLine:
        break;
      case DocSeparator::kBlankLine:
        while (lines_->next(line) && !is_blank(line)) append_line(ex, line);
        break;
      case DocSeparator::kFile:
        read_rest_of_file(ex);
        return true;
    }
    ex.error = utf8_problem(ex.text, "the document");
    return true;
  }

  uint64_t file_bytes_consumed() const override { return lines_->source().file_bytes_consumed(); }
  uint64_t text_bytes_read() const override { return lines_->text_bytes(); }

 private:
  static void append_line(Example& ex, std::string_view line) {
    ex.text.push_back('\n');
    ex.text.append(line);
  }

  // Lines are joined with "\n"; trailing blank lines are dropped like leading ones. An invalid
  // UTF-8 line is reported with its own line number rather than the document's first.
  void read_rest_of_file(Example& ex) {
    ex.error = utf8_problem(ex.text, "the line");
    size_t kept = ex.text.size();
    std::string_view line;
    while (lines_->next(line)) {
      append_line(ex, line);
      if (is_blank(line)) continue;
      kept = ex.text.size();
      if (ex.error.empty()) {
        ex.error = utf8_problem(line, "the line");
        if (!ex.error.empty()) ex.line = lines_->line_number();
      }
    }
    ex.text.resize(kept);
  }

  std::unique_ptr<LineReader> lines_;
  uint32_t file_index_;
  ReaderOptions options_;
};

}  // namespace

std::unique_ptr<ExampleReader> make_text_reader(std::unique_ptr<LineReader> lines,
                                                uint32_t file_index, const ReaderOptions& options) {
  return std::make_unique<TextReader>(std::move(lines), file_index, options);
}

}  // namespace shardkit::shardify
