// Parquet through DuckDB's C API. Each file gets an in-memory database that may read that file
// and nothing else, and one streaming query whose rows arrive chunk by chunk, so memory stays
// bounded for any file size. Fields are dotted paths into struct columns, as in JSONL.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "shardify/duckdb_library.h"
#include "shardify/parquet_pages.h"
#include "shardify/parquet_sql.h"
#include "shardify/readers_internal.h"

namespace shardkit::shardify {
namespace {
using namespace parquet_sql;

// The library the Connection loaded before any other handle existed (duckdb_library.h).
const DuckDbLibrary& duck() { return duckdb_library({}); }

const char* type_name(duckdb_type t) {
  switch (t) {
    case DUCKDB_TYPE_BOOLEAN:
      return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT:
      return "TINYINT";
    case DUCKDB_TYPE_SMALLINT:
      return "SMALLINT";
    case DUCKDB_TYPE_INTEGER:
      return "INTEGER";
    case DUCKDB_TYPE_BIGINT:
      return "BIGINT";
    case DUCKDB_TYPE_UTINYINT:
      return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT:
      return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER:
      return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT:
      return "UBIGINT";
    case DUCKDB_TYPE_HUGEINT:
      return "HUGEINT";
    case DUCKDB_TYPE_FLOAT:
      return "FLOAT";
    case DUCKDB_TYPE_DOUBLE:
      return "DOUBLE";
    case DUCKDB_TYPE_DECIMAL:
      return "DECIMAL";
    case DUCKDB_TYPE_VARCHAR:
      return "VARCHAR";
    case DUCKDB_TYPE_BLOB:
      return "BLOB";
    case DUCKDB_TYPE_ENUM:
      return "ENUM";
    case DUCKDB_TYPE_LIST:
      return "LIST";
    case DUCKDB_TYPE_ARRAY:
      return "ARRAY";
    case DUCKDB_TYPE_STRUCT:
      return "STRUCT";
    case DUCKDB_TYPE_MAP:
      return "MAP";
    case DUCKDB_TYPE_DATE:
      return "DATE";
    case DUCKDB_TYPE_TIMESTAMP:
      return "TIMESTAMP";
    default:
      return "a type shardify does not read";
  }
}

// DuckDB's message without the SQL excerpt it appends ("LINE 1: ..." and a caret).
std::string message(const char* text) {
  std::string m = text ? text : "DuckDB failed without a message";
  const size_t excerpt = m.find("\nLINE ");
  if (excerpt != std::string::npos) m.erase(excerpt);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  for (char& c : m)
    if (c == '\n') c = ' ';
  return m;
}

bool is_integer(duckdb_type t) {
  switch (t) {
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
    case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UHUGEINT:
      return true;
    default:
      return false;
  }
}

// Owners of DuckDB handles, so that a constructor that throws half-way releases what it opened.
struct DatabaseHandle {
  duckdb_database h = nullptr;
  ~DatabaseHandle() {
    if (h) duck().close(&h);
  }
};
struct ConnectionHandle {
  duckdb_connection h = nullptr;
  ~ConnectionHandle() {
    if (h) duck().disconnect(&h);
  }
};
struct StreamingResult {
  duckdb_result result{};
  bool started = false;
  duckdb_data_chunk chunk = nullptr;
  ~StreamingResult() {
    if (chunk) duck().destroy_data_chunk(&chunk);
    if (started) duck().destroy_result(&result);
  }
};

// One in-memory DuckDB that can read `file` and nothing else, with extensions never fetched.
class Connection {
 public:
  Connection(const std::string& file, unsigned threads) : file_(file) {
    duckdb_library(file);  // loaded here, or an error naming the file says why it cannot be
    duckdb_config config = nullptr;
    duck().create_config(&config);
    duck().set_config(config, "autoinstall_known_extensions", "false");
    duck().set_config(config, "autoload_known_extensions", "false");
    // Row groups decode in parallel with threads > 1; preserve_insertion_order (the default)
    // keeps the rows in file order, which determinism needs.
    duck().set_config(config, "threads", std::to_string(std::max(1u, threads)).c_str());
    duck().set_config(config, "preserve_insertion_order", "true");
    char* open_error = nullptr;
    const bool failed = duck().open_ext(nullptr, &db_.h, config, &open_error) == DuckDBError;
    duck().destroy_config(&config);
    if (failed) {
      std::string reason = open_error ? open_error : "unknown error";
      duck().free(open_error);
      throw Error(ErrorCode::kIo, file, "cannot start DuckDB: " + reason);
    }
    if (duck().connect(db_.h, &conn_.h) == DuckDBError)
      throw Error(ErrorCode::kIo, file, "cannot connect to DuckDB");
    // Bounded memory whatever the row groups: the streaming result holds at most this much
    // ahead (it counts a chunk by its rows, and a one-row chunk still takes its vectors' full
    // capacity: 100,000 one-row groups took 1.2 GB at the default 976 KiB), and no file bytes
    // are kept in DuckDB's cache of file reads (a block per read page: 4.8 KB a row group).
    run("SET streaming_buffer_size = '64KB'");
    run("SET enable_external_file_cache = false");
    // A --where predicate is DuckDB SQL: it may read this file only, and cannot lift that.
    run("SET allowed_paths = [" + quote_literal(file) + "]");
    run("SET enable_external_access = false");
    run("SET lock_configuration = true");
  }
  duckdb_connection get() const { return conn_.h; }

  // Runs a small statement and returns its rows as text (metadata queries only).
  std::vector<std::vector<std::string>> run(const std::string& sql) {
    duckdb_result result;
    if (duck().query(conn_.h, sql.c_str(), &result) == DuckDBError) {
      std::string reason = message(duck().result_error(&result));
      duck().destroy_result(&result);
      throw Error(ErrorCode::kInput, file_, reason);
    }
    std::vector<std::vector<std::string>> rows(duck().row_count(&result));
    for (idx_t r = 0; r < rows.size(); ++r)
      for (idx_t c = 0; c < duck().column_count(&result); ++c) {
        char* v = duck().value_varchar(&result, c, r);
        rows[r].emplace_back(v ? v : "");
        duck().free(v);
      }
    duck().destroy_result(&result);
    return rows;
  }

 private:
  std::string file_;
  DatabaseHandle db_;  // declared first: destroyed after the connection
  ConnectionHandle conn_;
};

class Prepared {
 public:
  Prepared(Connection& conn, const std::string& sql) {
    if (duck().prepare(conn.get(), sql.c_str(), &stmt_) == DuckDBError) {
      error_ = message(duck().prepare_error(stmt_));
      duck().destroy_prepare(&stmt_);
      stmt_ = nullptr;
    }
  }
  ~Prepared() { duck().destroy_prepare(&stmt_); }
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  const std::string& error() const { return error_; }
  duckdb_prepared_statement get() const { return stmt_; }
  duckdb_type column_type(idx_t i) const { return duck().prepared_statement_column_type(stmt_, i); }

 private:
  duckdb_prepared_statement stmt_ = nullptr;
  std::string error_;
};

// What each selected column is for; column 0 is always the file's row number.
enum class Role {
  kText,
  kPair,
  kLabel,
  kQuestion,
  kAnswerTexts,
  kAnswerStarts,
  kAnswerText,
  kAnswerStart
};

struct Column {
  Role role;
  std::string sql;
};

class ParquetReader : public ExampleReader {
 public:
  ParquetReader(const std::filesystem::path& path, uint32_t file_index,
                const ReaderOptions& options)
      : path_(path.string()),
        file_index_(file_index),
        options_(options),
        conn_(path_, options.decode_threads),
        pages_(path_) {
    std::error_code ec;
    file_bytes_ = std::filesystem::file_size(path, ec);
    total_rows_ = pages_.total_rows();
    source_ = "read_parquet(" + quote_literal(path_) +
              (options.where.empty() ? ")" : ", file_row_number = true)");
    plan_columns();
    start();
  }

  bool next(Example& ex) override {
    while (row_ >= chunk_rows_)
      if (!fetch()) return false;
    const idx_t r = row_++;
    // Rows come in file order: without --where the row number is the count so far.
    const int64_t row_number =
        options_.where.empty()
            ? static_cast<int64_t>(rows_read_)
            : static_cast<const int64_t*>(duck().vector_get_data(vectors_[0]))[r];
    ++rows_read_;
    ex.reset();
    ex.file_index = file_index_;
    describe_row(row_number, ex.where);
    QaQuestion q;
    int64_t answer_texts = 0, answer_starts = 0, answer_start = 0;
    std::string answer_text;
    bool answer_missing = false;
    for (size_t c = 0; c < columns_.size() && ex.error.empty(); ++c) {
      const Column& col = columns_[c];
      const std::string& field = field_of(col.role);
      duckdb_vector v = vectors_[c + 1];
      uint64_t* validity = duck().vector_get_validity(v);
      if (validity && !duck().validity_row_is_valid(validity, r)) {
        // The first answer is null when there are no answers: finish_question decides.
        if (col.role == Role::kAnswerText || col.role == Role::kAnswerStart)
          answer_missing = true;
        else
          ex.error = "field '" + field + "' is null";
        continue;
      }
      switch (col.role) {
        case Role::kText:
          read_string(v, r, ex.text);
          break;
        case Role::kPair:
          read_string(v, r, ex.text_pair);
          break;
        case Role::kLabel:
          read_string(v, r, ex.label);
          break;
        case Role::kQuestion:
          read_string(v, r, q.question);
          break;
        case Role::kAnswerText:
          read_string(v, r, answer_text);
          break;
        case Role::kAnswerTexts:
          answer_texts = read_int(v, r);
          break;
        case Role::kAnswerStarts:
          answer_starts = read_int(v, r);
          break;
        case Role::kAnswerStart:
          answer_start = read_int(v, r);
          break;
      }
    }
    text_bytes_ += ex.text.size() + ex.text_pair.size() + ex.label.size() + q.question.size() +
                   answer_text.size();
    if (options_.qa)
      finish_question(ex, q, answer_texts, answer_starts, answer_missing, answer_text,
                      answer_start);
    return true;
  }

  // The bytes of the fields read, as a row handed in counts them: a file's size counts its
  // other columns and the codec's work, so the summary's ratio and MB/s would not be the text's.
  uint64_t text_bytes_read() const override { return text_bytes_; }

  uint64_t file_bytes_consumed() const override {
    if (total_rows_ == 0) return file_bytes_;
    return static_cast<uint64_t>(static_cast<double>(file_bytes_) *
                                 static_cast<double>(std::min(rows_read_, total_rows_)) /
                                 static_cast<double>(total_rows_));
  }

 private:
  // Row groups name where a row is. They are read from the footer as the rows reach them (a
  // file of 100,000 row groups costs no memory for them), and the pages of each are checked
  // against their CRC before any row at or after it is used: a damaged page can change what
  // --where keeps as well as the text.
  void enter_row_group_of(uint64_t row) {
    while (row >= group_end_) {
      uint64_t rows = 0;
      if (!pages_.next_group(&rows))
        throw Error(ErrorCode::kInput, path_,
                    "row " + std::to_string(row) + " lies past the row groups of the footer");
      group_ = pages_.groups_read() - 1;
      group_end_ += rows;
    }
  }

  // The pages of the row groups no row came from (--where, or empty groups) are checked too.
  void check_remaining_groups() {
    uint64_t rows = 0;
    while (pages_.next_group(&rows)) {
    }
  }

  // "row N (row group G)", with one allocation: this runs for every row.
  void describe_row(int64_t row, std::string& out) {
    enter_row_group_of(static_cast<uint64_t>(row));
    char num[24];
    out.reserve(48);
    out.assign("row ");
    out.append(num, std::to_chars(num, num + sizeof num, row).ptr);
    out.append(" (row group ");
    out.append(num, std::to_chars(num, num + sizeof num, group_).ptr);
    out.push_back(')');
  }

  // The type DuckDB gives a field path, or a clear error naming the field.
  duckdb_type probe(const std::string& flag, const std::string& field, const std::string& sql) {
    Prepared p(conn_, "SELECT " + sql + " FROM " + source_);
    if (!p.ok())
      throw Error(ErrorCode::kInput, path_,
                  flag + " '" + field + "' cannot be read from this file: " + p.error());
    return p.column_type(0);
  }

  void want_string(Role role, const std::string& flag, const std::string& field) {
    const std::string sql = field_expression(field);
    const duckdb_type t = probe(flag, field, sql);
    if (t != DUCKDB_TYPE_VARCHAR)
      throw Error(ErrorCode::kInput, path_,
                  flag + " '" + field + "' is a " + type_name(t) +
                      " column; it must be VARCHAR (a string)");
    columns_.push_back({role, sql});
  }

  void plan_columns() {
    if (options_.qa) {
      want_string(Role::kText, "--context-field", options_.text_field);
      want_string(Role::kQuestion, "--question-field", options_.question_field);
      plan_answers();
      return;
    }
    if (!options_.labels_only) {
      want_string(Role::kText, "--text-field", options_.text_field);
      if (!options_.pair_field.empty())
        want_string(Role::kPair, "--pair-field", options_.pair_field);
    }
    if (!options_.label_field.empty()) {
      std::string sql = field_expression(options_.label_field);
      const duckdb_type t = probe("--label-field", options_.label_field, sql);
      if (t != DUCKDB_TYPE_VARCHAR && t != DUCKDB_TYPE_BOOLEAN && t != DUCKDB_TYPE_ENUM &&
          !is_integer(t))
        throw Error(ErrorCode::kInput, path_,
                    "--label-field '" + options_.label_field + "' is a " + type_name(t) +
                        " column; labels must be strings, integers or booleans");
      // Integers print in decimal and booleans as true/false, as JSONL labels do.
      if (t != DUCKDB_TYPE_VARCHAR) sql = "CAST(" + sql + " AS VARCHAR)";
      columns_.push_back({Role::kLabel, sql});
    }
  }

  // HF datasets' {"text": [...], "answer_start": [...]} or a SQuAD-style list of structs.
  void plan_answers() {
    const std::string& field = options_.answers_field;
    const std::string a = field_expression(field);
    const duckdb_type t = probe("--answers-field", field, a);
    std::string texts, starts, text, start;
    if (t == DUCKDB_TYPE_STRUCT) {
      texts = "len(" + a + "['text'])";
      starts = "len(" + a + "['answer_start'])";
      text = a + "['text'][1]";
      start = a + "['answer_start'][1]";
    } else if (t == DUCKDB_TYPE_LIST) {
      texts = starts = "len(" + a + ")";
      text = a + "[1]['text']";
      start = a + "[1]['answer_start']";
    } else {
      throw Error(ErrorCode::kInput, path_,
                  "--answers-field '" + field + "' is a " + type_name(t) +
                      " column; it must be a struct of lists {text, answer_start} or a list of "
                      "structs");
    }
    const duckdb_type text_type = probe("--answers-field", field, text);
    const duckdb_type start_type = probe("--answers-field", field, start);
    if (text_type != DUCKDB_TYPE_VARCHAR || !is_integer(start_type))
      throw Error(ErrorCode::kInput, path_,
                  "--answers-field '" + field +
                      "' needs 'text' strings and integer "
                      "'answer_start' (found " +
                      type_name(text_type) + " and " + type_name(start_type) + ")");
    columns_.push_back({Role::kAnswerTexts, "CAST(" + texts + " AS BIGINT)"});
    columns_.push_back({Role::kAnswerStarts, "CAST(" + starts + " AS BIGINT)"});
    columns_.push_back({Role::kAnswerText, text});
    columns_.push_back({Role::kAnswerStart, "CAST(" + start + " AS BIGINT)"});
  }

  void start() {
    // DuckDB's file_row_number costs time quadratic in the row groups (100,000 one-row groups:
    // 60 s against 14 s without): asked for only when --where drops rows.
    std::string sql = options_.where.empty() ? "SELECT NULL::BIGINT" : "SELECT file_row_number";
    for (const Column& c : columns_) sql += ", " + c.sql;
    sql += " FROM " + source_;
    if (!options_.where.empty()) {
      const std::string problem = where_problem(options_.where);
      if (!problem.empty())
        throw Error(ErrorCode::kInvalidArgument, "",
                    "--where '" + options_.where + "': " + problem);
      sql += " WHERE (" + options_.where + ")";
    }
    Prepared p(conn_, sql);
    if (!p.ok()) {
      const std::string what =
          options_.where.empty() ? "" : " with --where '" + options_.where + "'";
      throw Error(ErrorCode::kInput, path_, "cannot read the file" + what + ": " + p.error());
    }
    duckdb_pending_result pending = nullptr;
    // Streaming: the result is produced as chunks are fetched, never materialised.
    if (duck().pending_prepared_streaming(p.get(), &pending) == DuckDBError) {
      std::string reason = message(duck().pending_error(pending));
      duck().destroy_pending(&pending);
      throw Error(ErrorCode::kInput, path_, "cannot start reading: " + reason);
    }
    const bool failed = duck().execute_pending(pending, &stream_.result) == DuckDBError;
    duck().destroy_pending(&pending);
    stream_.started = true;
    if (failed) throw_result_error();
  }

  bool fetch() {
    if (stream_.chunk) duck().destroy_data_chunk(&stream_.chunk);
    stream_.chunk = duck().fetch_chunk(stream_.result);
    row_ = chunk_rows_ = 0;
    if (!stream_.chunk) {
      if (duck().result_error(&stream_.result)) throw_result_error();
      check_remaining_groups();
      return false;
    }
    chunk_rows_ = duck().data_chunk_get_size(stream_.chunk);
    vectors_.clear();
    for (idx_t c = 0; c <= columns_.size(); ++c)
      vectors_.push_back(duck().data_chunk_get_vector(stream_.chunk, c));
    return true;
  }

  [[noreturn]] void throw_result_error() {
    throw Error(ErrorCode::kInput, path_,
                "after " + std::to_string(rows_read_) +
                    " rows: " + message(duck().result_error(&stream_.result)));
  }

  static void read_string(duckdb_vector v, idx_t r, std::string& out) {
    auto* s = static_cast<duckdb_string_t*>(duck().vector_get_data(v)) + r;
    out.assign(duck().string_t_data(s), duck().string_t_length(*s));
  }
  static int64_t read_int(duckdb_vector v, idx_t r) {
    return static_cast<const int64_t*>(duck().vector_get_data(v))[r];
  }

  const std::string& field_of(Role role) const {
    switch (role) {
      case Role::kText:
        return options_.text_field;
      case Role::kPair:
        return options_.pair_field;
      case Role::kLabel:
        return options_.label_field;
      case Role::kQuestion:
        return options_.question_field;
      default:
        return options_.answers_field;
    }
  }

  void finish_question(Example& ex, QaQuestion& q, int64_t texts, int64_t starts,
                       bool first_missing, const std::string& text, int64_t start) {
    q.example_index = next_question_++;
    if (!ex.error.empty()) return;
    if (texts != starts) {
      ex.error = "field '" + options_.answers_field +
                 "' needs equally long 'text' and 'answer_start' lists";
      return;
    }
    if (texts == 0) {
      q.impossible = true;
    } else if (first_missing || start < 0) {
      ex.error = "the first answer needs a 'text' string and a non-negative integer 'answer_start'";
      return;
    } else {
      resolve_answer(ex.text, text, start, q);
    }
    ex.questions.push_back(std::move(q));
  }

  std::string path_;
  uint32_t file_index_;
  ReaderOptions options_;
  Connection conn_;
  std::string source_;
  uint64_t file_bytes_ = 0;
  uint64_t text_bytes_ = 0;
  ParquetPages pages_;
  uint64_t group_ = 0, group_end_ = 0;  // the row group of the current row, and where it ends
  uint64_t total_rows_ = 0;
  std::vector<Column> columns_;
  StreamingResult stream_;
  std::vector<duckdb_vector> vectors_;
  idx_t row_ = 0, chunk_rows_ = 0;
  uint64_t rows_read_ = 0;
  uint32_t next_question_ = 0;
};

}  // namespace

std::unique_ptr<ExampleReader> make_parquet_reader(const std::filesystem::path& path,
                                                   uint32_t file_index,
                                                   const ReaderOptions& options) {
  return std::make_unique<ParquetReader>(path, file_index, options);
}

bool parquet_input_available() { return true; }

}  // namespace shardkit::shardify
