// Plain text: a whole file is one document (--doc-sep file), or one document per line (line),
// or documents separated by blank lines (blank). Blank lines are separators, never documents;
// inside a file document they are kept, since paragraph breaks are part of the text.
//
// A line, and a file's document, are borrowed from the mapping or buffer that holds the input (no
// copy per document); a file document is one view of its file unless it holds "\r\n" endings.
#include <algorithm>

#include "core/utf8.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {

bool blank_byte(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\n'; }

// The document of a file from its first non-blank line on (`rest`): its lines joined with "\n",
// trailing blank lines dropped. Without '\r' it is a prefix of `rest`; else lines lose a final
// '\r' (their "\r\n" ending) and are joined into `joined`.
std::string_view file_document(std::string_view rest, std::string& joined) {
  if (!contains_byte_in_parallel(rest, '\r')) {
    size_t last = rest.size();
    while (last > 0 && blank_byte(rest[last - 1])) --last;
    const size_t end = rest.find('\n', last);
    return rest.substr(0, end == std::string_view::npos ? rest.size() : end);
  }
  size_t kept = 0;
  for (size_t at = 0; at < rest.size();) {
    size_t nl = rest.find('\n', at);
    if (nl == std::string_view::npos) nl = rest.size();
    std::string_view line = rest.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (at > 0) joined.push_back('\n');
    joined.append(line);
    if (!is_blank(line)) kept = joined.size();
    at = nl + 1;
  }
  joined.resize(kept);
  return joined;
}

class TextReader : public ExampleReader {
 public:
  TextReader(std::unique_ptr<LineReader> lines, uint32_t file_index, const ReaderOptions& options)
      : lines_(std::move(lines)), file_index_(file_index), options_(options) {}

  bool next(Example& ex) override {
    std::string_view line;
    if (!start_example_at_next_line(*lines_, file_index_, ex, line))
      return stream_error_example(*lines_, file_index_, ex);
    switch (options_.doc_separator) {
      case DocSeparator::kLine:
        lend_line(*lines_, line, ex);
        break;
      case DocSeparator::kBlankLine:
        ex.text.assign(line);
        while (lines_->next(line) && !is_blank(line)) append_line(ex, line);
        break;
      case DocSeparator::kFile:
        read_rest_of_file(ex);
        return true;
    }
    ex.error = utf8_problem(ex.body(), "the document");
    return true;
  }

  uint64_t file_bytes_consumed() const override { return lines_->file_bytes_consumed(); }
  uint64_t text_bytes_read() const override { return lines_->text_bytes(); }

 private:
  static void append_line(Example& ex, std::string_view line) {
    ex.text.push_back('\n');
    ex.text.append(line);
  }

  // An invalid UTF-8 line is reported with its own line number and the byte in it.
  void read_rest_of_file(Example& ex) {
    const LineReader::Rest rest = lines_->take_rest();
    const std::string_view doc = file_document(rest.text, ex.text);
    if (ex.text.empty()) {
      ex.text_owner = rest.buffer;
      ex.text_file = rest.file;
      ex.text_view = doc;
    }
    const auto bad = first_invalid_utf8_in_parallel(doc);
    // Those bytes were the file's only if it did not shrink under the check (or under the copy
    // that joined CRLF lines); the tokenizer's later reads are checked by the converter.
    if (rest.file) rest.file->check_intact();
    if (!bad) return;
    const size_t line_start =
        doc.rfind('\n', *bad) == std::string_view::npos ? 0 : doc.rfind('\n', *bad) + 1;
    ex.line += std::count(doc.begin(), doc.begin() + static_cast<ptrdiff_t>(line_start), '\n');
    ex.error = "invalid UTF-8 at byte " + std::to_string(*bad - line_start) + " of the line";
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
