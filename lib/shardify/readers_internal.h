// Constructors of the concrete readers (one file each).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "shardify/example_reader.h"
#include "shardify/line_reader.h"

namespace shardkit::shardify {

std::unique_ptr<ExampleReader> make_jsonl_reader(std::unique_ptr<LineReader> lines,
                                                 uint32_t file_index, const ReaderOptions& options);
std::unique_ptr<ExampleReader> make_text_reader(std::unique_ptr<LineReader> lines,
                                                uint32_t file_index, const ReaderOptions& options);
std::unique_ptr<ExampleReader> make_delimited_reader(std::unique_ptr<LineReader> lines,
                                                     uint32_t file_index,
                                                     const ReaderOptions& options, char delimiter);
std::unique_ptr<ExampleReader> make_squad_reader(const std::filesystem::path& path,
                                                 uint32_t file_index, const ReaderOptions& options);
// Parquet through DuckDB (parquet_reader.cc), or a clear refusal (parquet_unavailable.cc).
std::unique_ptr<ExampleReader> make_parquet_reader(const std::filesystem::path& path,
                                                   uint32_t file_index,
                                                   const ReaderOptions& options);

// Checks a SQuAD answer (answer_start in code points) against the context and stores it in `q`
// as a byte offset; sets q.error when it does not fit.
void resolve_answer(const std::string& context, std::string_view text, int64_t answer_start,
                    QaQuestion& q);

// "invalid UTF-8 at byte N of field F" or empty when valid.
std::string utf8_problem(std::string_view text, std::string_view what);
bool is_blank(std::string_view text);
// Moves to the next non-blank line and starts a fresh `ex` there (file index, line number).
// Returns false at the end of the input.
bool start_example_at_next_line(LineReader& lines, uint32_t file_index, Example& ex,
                                std::string_view& line);
// Lends `line`, the line `lines` returned last, to `ex` as its text without copying it, with
// what holds its bytes: the file mapped, or the buffer it was read into (a long line's buffer is
// then the example's alone).
void lend_line(LineReader& lines, std::string_view line, Example& ex);
// Once the lines have ended (a reader's next() returns this instead of false): when the stream
// broke (truncated or corrupt compressed input), fills `ex` with that error at the last complete
// line and returns true (once); else false.
bool stream_error_example(LineReader& lines, uint32_t file_index, Example& ex);

}  // namespace shardkit::shardify
