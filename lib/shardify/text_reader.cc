// Plain text: one document per line, or (--doc-sep blank) documents separated by blank lines.
// Blank lines are separators, never documents.
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
    if (options_.doc_separator == DocSeparator::kBlankLine) {
      while (lines_->next(line) && !is_blank(line)) {
        ex.text.push_back('\n');
        ex.text.append(line);
      }
    }
    ex.error = utf8_problem(ex.text, "the document");
    return true;
  }

  uint64_t file_bytes_consumed() const override { return lines_->source().file_bytes_consumed(); }
  uint64_t text_bytes_read() const override { return lines_->text_bytes(); }

 private:
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
