// TSV and CSV with a header row. Quoting follows RFC 4180: a field that starts with '"' is
// quoted, may contain delimiters, newlines and doubled quotes (""), and must end with '"'
// followed by the delimiter or the end of the line. A quote inside an unquoted field is kept
// as an ordinary character (so TSV files with stray quotes still read as written); in TSV, a
// field whose closing quote is followed by more text on the same line is kept as written too.
// With quoting off (--no-quoting), quotes are ordinary characters everywhere.
#include <algorithm>
#include <vector>

#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {

constexpr const char* kQuotingHint =
    " (if quotes are ordinary text in this file, pass --no-quoting)";

class DelimitedReader : public ExampleReader {
 public:
  DelimitedReader(std::unique_ptr<LineReader> lines, uint32_t file_index,
                  const ReaderOptions& options, char delimiter)
      : lines_(std::move(lines)), file_index_(file_index), options_(options), delim_(delimiter) {}

  bool next(Example& ex) override {
    if (done_) return stream_error_example(*lines_, file_index_, ex);
    ex.reset();
    ex.file_index = file_index_;
    if (!header_read_) {
      header_read_ = true;
      std::string problem;
      if (!read_record(header_, problem)) return stream_error_example(*lines_, file_index_, ex);
      ex.line = start_line_;
      // The line reader ends lines at \n only: a file with CR endings is one line.
      if (first_line_has_cr_)
        problem =
            "the line holds carriage returns (\\r) that end no line: the file uses CR line "
            "endings (classic Mac OS), which are not read; convert them to \\n first (tr '\\r' "
            "'\\n')";
      if (problem.empty()) problem = resolve_columns();
      if (!problem.empty()) {
        ex.error = "header: " + problem;
        ex.file_unusable = true;
        done_ = true;  // without a usable header no row can be read
        return true;
      }
    }
    std::vector<std::string> row;
    if (!read_record(row, ex.error)) return stream_error_example(*lines_, file_index_, ex);
    ex.line = start_line_;
    if (!ex.error.empty()) return true;
    if (row.size() != header_.size()) {
      ex.error = "expected " + std::to_string(header_.size()) + " fields, found " +
                 std::to_string(row.size());
      return true;
    }
    if (!options_.labels_only) {
      ex.text = std::move(row[text_col_]);
      if (pair_col_ >= 0) ex.text_pair = std::move(row[pair_col_]);
    }
    if (label_col_ >= 0) ex.label = std::move(row[label_col_]);
    return true;
  }

  uint64_t file_bytes_consumed() const override { return lines_->file_bytes_consumed(); }
  uint64_t text_bytes_read() const override { return lines_->text_bytes(); }

 private:
  std::string resolve_columns() {
    auto find = [&](const std::string& name, int& col) -> std::string {
      const auto first = std::find(header_.begin(), header_.end(), name);
      if (first == header_.end()) return "no column named '" + name + "'";
      // Two columns of that name: which one was meant would be a guess.
      if (std::find(first + 1, header_.end(), name) != header_.end())
        return "column '" + name + "' appears twice";
      col = static_cast<int>(first - header_.begin());
      return {};
    };
    std::string p;
    if (!options_.labels_only && !(p = find(options_.text_field, text_col_)).empty()) return p;
    if (!options_.labels_only && !options_.pair_field.empty() &&
        !(p = find(options_.pair_field, pair_col_)).empty())
      return p;
    if (!options_.label_field.empty() && !(p = find(options_.label_field, label_col_)).empty())
      return p;
    return {};
  }

  // Reads one record (possibly several lines). A bad record is still read to its end, as
  // Python's csv module reads it (a quoted field to its closing quote, text after a closing
  // quote into the field), so that the next record starts where that reader starts it and not
  // inside a quoted field; `problem` is its first fault. False at the end of the file.
  bool read_record(std::vector<std::string>& fields, std::string& problem) {
    std::string_view line;
    do {
      if (!lines_->next(line)) return false;
    } while (line.empty());
    start_line_ = lines_->line_number();
    first_line_has_cr_ = line.find('\r') != std::string_view::npos;
    fields.clear();
    fields.emplace_back();
    problem.clear();
    const auto note = [&problem](std::string fault) {
      if (problem.empty()) problem = std::move(fault);
    };
    note(utf8_problem(line, "the line"));
    size_t i = 0;
    bool field_start = true;
    for (;;) {
      if (i == line.size()) return true;
      char c = line[i];
      if (c == delim_) {
        fields.emplace_back();
        field_start = true;
        ++i;
        continue;
      }
      if (c == '"' && field_start && options_.quoting) {
        const size_t quote_pos = i;
        const uint64_t quote_line = lines_->line_number();
        ++i;
        for (;;) {  // inside quotes
          if (i == line.size()) {
            // RFC 4180 and Python's csv module keep a quoted line break as written.
            const char* line_break = lines_->line_ended_in_crlf() ? "\r\n" : "\n";
            if (!lines_->next(line)) {
              // The rest of the file is this record: that says more than a fault inside it.
              problem = "malformed " + format_name() + ": quoted field never closed" + kQuotingHint;
              done_ = true;
              return true;
            }
            note(utf8_problem(line, "line " + std::to_string(lines_->line_number())));
            fields.back().append(line_break);
            i = 0;
            continue;
          }
          if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
              fields.back().push_back('"');
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          fields.back().push_back(line[i++]);
        }
        if (i < line.size() && line[i] != delim_ && delim_ == '\t' &&
            lines_->line_number() == quote_line) {
          // TSV in the wild starts fields with quoted speech ("Hi," she said): keep such a
          // field as written instead of failing.
          fields.back().assign(line.substr(quote_pos, i - quote_pos));
          field_start = false;
          continue;
        }
        if (i < line.size() && line[i] != delim_)
          note("malformed " + format_name() +
               ": unexpected character after a closing quote on line " +
               std::to_string(lines_->line_number()) + kQuotingHint);
        field_start = false;
        continue;
      }
      field_start = false;
      fields.back().push_back(c);
      ++i;
    }
  }

  std::string format_name() const { return delim_ == ',' ? "CSV" : "TSV"; }

  std::unique_ptr<LineReader> lines_;
  uint32_t file_index_;
  ReaderOptions options_;
  char delim_;
  bool header_read_ = false;
  bool done_ = false;
  std::vector<std::string> header_;
  int text_col_ = -1, pair_col_ = -1, label_col_ = -1;
  uint64_t start_line_ = 0;
  bool first_line_has_cr_ = false;  // of the record read last (a CRLF's \r is not in the line)
};

}  // namespace

std::unique_ptr<ExampleReader> make_delimited_reader(std::unique_ptr<LineReader> lines,
                                                     uint32_t file_index,
                                                     const ReaderOptions& options, char delimiter) {
  return std::make_unique<DelimitedReader>(std::move(lines), file_index, options, delimiter);
}

}  // namespace shardkit::shardify
