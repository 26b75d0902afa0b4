// JSONL: one JSON object per line; its fields are read by json_fields.h.
#include "shardify/json_fields.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {

class JsonlReader : public ExampleReader {
 public:
  JsonlReader(std::unique_ptr<LineReader> lines, uint32_t file_index, const ReaderOptions& options)
      : lines_(std::move(lines)),
        file_index_(file_index),
        fields_(options),
        defer_(options.defer_json && !options.qa && !options.labels_only) {}

  bool next(Example& ex) override {
    std::string_view line;
    if (!start_example_at_next_line(*lines_, file_index_, ex, line))
      return stream_error_example(*lines_, file_index_, ex);
    if (defer_ && line.size() <= kUnreadJsonBytes) {
      // The padding after the line stays readable: a buffer someone holds is never written.
      lend_line(*lines_, line, ex);
      ex.json_unread = true;
      return true;
    }
    // In place: the line reader guarantees simdjson's padding after every line.
    static_assert(LineReader::kPadding >= JsonFields::kPadding);
    fields_.parse(line);
    // The parsed document holds its own copy of the strings: a long line's buffer can go once
    // it is parsed. Its text stays in the document, which the example then holds; otherwise
    // the parser's buffers (sized by the longest line) go after it.
    const bool long_line = line.size() > kLongLine;
    if (long_line && fields_.parsed_ok()) lines_->release_line();
    fields_.read(line, ex, long_line);
    if (long_line) fields_.release_buffers();
    return true;
  }

  uint64_t file_bytes_consumed() const override { return lines_->file_bytes_consumed(); }
  uint64_t text_bytes_read() const override { return lines_->text_bytes(); }

 private:
  static constexpr size_t kLongLine = 4 << 20;

  std::unique_ptr<LineReader> lines_;
  uint32_t file_index_;
  JsonFields fields_;
  bool defer_;
};

}  // namespace

std::unique_ptr<ExampleReader> make_jsonl_reader(std::unique_ptr<LineReader> lines,
                                                 uint32_t file_index,
                                                 const ReaderOptions& options) {
  return std::make_unique<JsonlReader>(std::move(lines), file_index, options);
}

}  // namespace shardkit::shardify
