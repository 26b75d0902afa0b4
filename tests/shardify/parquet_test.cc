// Parquet input. Every fixture is written by DuckDB inside the test, once as Parquet (several
// compressions, struct and list columns, nulls, several row groups) and once as JSONL holding the
// same rows; shardify must turn both into the same shard bytes, at any thread count.
#include <doctest/doctest.h>
#include <duckdb.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "core/library_on_demand.h"
#include "shardify/example_reader.h"
#include "shardify/parquet_sql.h"
#include "shardify_util.h"
#include "tiny_parquet.h"

using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

// An in-memory DuckDB that writes the fixtures.
class Sql {
 public:
  Sql() {
    REQUIRE(duckdb_open(nullptr, &db_) == DuckDBSuccess);
    REQUIRE(duckdb_connect(db_, &conn_) == DuckDBSuccess);
  }
  ~Sql() {
    duckdb_disconnect(&conn_);
    duckdb_close(&db_);
  }
  // The first column of every row, as text.
  std::vector<std::string> run(const std::string& sql) {
    duckdb_result r;
    const bool failed = duckdb_query(conn_, sql.c_str(), &r) == DuckDBError;
    std::string error = failed ? duckdb_result_error(&r) : "";
    std::vector<std::string> out;
    for (idx_t i = 0; !failed && duckdb_column_count(&r) > 0 && i < duckdb_row_count(&r); ++i) {
      char* v = duckdb_value_varchar(&r, 0, i);
      out.emplace_back(v ? v : "NULL");
      duckdb_free(v);
    }
    duckdb_destroy_result(&r);
    REQUIRE_MESSAGE(!failed, sql << "\n" << error);
    return out;
  }

 private:
  duckdb_database db_ = nullptr;
  duckdb_connection conn_ = nullptr;
};

std::string lit(const std::string& s) { return shardkit::shardify::parquet_sql::quote_literal(s); }

// Table `rows` with `count` rows: texts made of fixture sentences (some non-ASCII), a struct
// column `meta`, an integer label, a string label and a language tag.
void make_rows(Sql& sql, size_t count, size_t sentences_per_text = 2) {
  std::string list;
  for (const auto& line : nonblank_lines(read_file(shardify_data("docs.txt"))))
    list += (list.empty() ? "" : ", ") + lit(line);
  std::string text = "s[1 + (i * 31) % n]";
  for (size_t k = 1; k < sentences_per_text; ++k)
    text += " || ' ' || s[1 + (i * " + std::to_string(17 + 2 * k) + " + " + std::to_string(k) +
            ") % n]";
  sql.run("CREATE OR REPLACE TABLE rows AS SELECT i, " + text +
          " AS text, {'title': s[1 + (i * 7) % n], 'body': s[1 + (i * 13 + 5) % n], 'id': i} AS "
          "meta, (i % 3)::BIGINT AS label, CASE WHEN i % 4 = 0 THEN 'neg' ELSE 'pos' END AS "
          "sentiment, CASE WHEN i % 2 = 0 THEN 'en' ELSE 'fr' END AS lang FROM range(" +
          std::to_string(count) + ") t(i), (SELECT [" + list + "] AS s, len([" + list + "]) AS n)");
}

// Writes `select` (ordered) to `path` as Parquet with `compression`, or as JSONL.
void write_parquet(Sql& sql, const std::string& select, const fs::path& path,
                   const std::string& compression = "zstd") {
  // DuckDB cuts row groups at multiples of 2048 rows: several in files of a few thousand rows.
  sql.run("COPY (" + select + ") TO " + lit(path.string()) + " (FORMAT parquet, COMPRESSION " +
          compression + ", ROW_GROUP_SIZE 2048)");
}
void write_jsonl(Sql& sql, const std::string& select, const fs::path& path) {
  sql.run("COPY (" + select + ") TO " + lit(path.string()) + " (FORMAT json)");
}

std::string tok() { return " --tokenizer " + q(bert_json()); }

// The shard files are byte-identical (the manifests differ in the source they describe).
void require_same_shards(const fs::path& a, const fs::path& b) {
  auto fa = sorted_names(a), fb = sorted_names(b);
  REQUIRE(fa == fb);
  REQUIRE(fa.size() >= 2);
  for (const auto& name : fa) {
    if (name == "manifest.json") continue;
    INFO((a / name).string());
    REQUIRE(read_file(a / name) == read_file(b / name));
  }
}

uint64_t json_count(const std::string& out, const char* key) {
  simdjson::dom::parser p;
  return p.parse(out).value()[key].get_uint64().value();
}

}  // namespace

TEST_CASE("a Hub-layout directory in five compressions equals the same rows as JSONL (lm)") {
  TempDir tmp("pq-hub");
  Sql sql;
  make_rows(sql, 3000);
  fs::create_directories(tmp / "hub" / "data");
  fs::create_directories(tmp / "jsonl");
  const std::vector<std::string> compressions = {"snappy", "zstd", "gzip", "lz4", "brotli"};
  for (size_t k = 0; k < compressions.size(); ++k) {
    const std::string select = "SELECT * FROM rows WHERE i >= " + std::to_string(k * 600) +
                               " AND i < " + std::to_string((k + 1) * 600) + " ORDER BY i";
    const std::string name = "train-0000" + std::to_string(k) + "-of-00005";
    write_parquet(sql, select, tmp / "hub" / "data" / (name + ".parquet"), compressions[k]);
    write_jsonl(sql, select, tmp / "jsonl" / (name + ".jsonl"));
    CHECK(sql.run("SELECT DISTINCT compression FROM parquet_metadata(" +
                  lit((tmp / "hub" / "data" / (name + ".parquet")).string()) + ")")
              .at(0) == (compressions[k] == "lz4" ? "LZ4_RAW" : [&] {
            std::string c = compressions[k];
            std::transform(c.begin(), c.end(), c.begin(), ::toupper);
            return c;
          }()));
  }
  const std::string flags = " --task lm --max-len 64 --block-size 4096 --shard-size 8192" + tok();
  shardify_ok("--input " + q(tmp / "jsonl") + flags + " --threads 2 --out " +
              q(tmp / "from-jsonl"));
  std::string out;
  shardify_ok(
      "--input " + q(tmp / "hub" / "data") + flags + " --threads 1 --json --out " + q(tmp / "pq1"),
      &out);
  CHECK(json_count(out, "documents") == 3000);
  CHECK(json_count(out, "files") == 5);
  // bytes_in is the text read (DuckDB's strlen counts UTF-8 bytes), bytes_in_compressed the
  // files on disk, which also hold the other columns.
  CHECK(json_count(out, "bytes_in") ==
        std::stoull(sql.run("SELECT sum(strlen(text)) FROM rows").at(0)));
  uint64_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(tmp / "hub" / "data")) on_disk += e.file_size();
  CHECK(json_count(out, "bytes_in_compressed") == on_disk);
  shardify_ok("--input " + q(tmp / "hub" / "data") + " --format parquet" + flags +
              " --threads 3 --out " + q(tmp / "pq3"));
  // A glob in the Hub layout, quoted so that shardify (not the shell) expands it.
  shardify_ok("--input '" + (tmp / "hub" / "data").string() + "/train-*-of-00005.parquet'" + flags +
              " --threads 2 --out " + q(tmp / "glob"));
  REQUIRE(sorted_names(tmp / "pq1").size() > 3);  // several shards
  require_same_shards(tmp / "from-jsonl", tmp / "pq1");
  require_same_shards(tmp / "pq1", tmp / "pq3");
  require_same_shards(tmp / "pq1", tmp / "glob");
  CHECK(shardkit::Dataset::open(tmp / "pq1").info().source.format == "parquet");
}

TEST_CASE("row groups: boundaries inside a converter batch change nothing") {
  TempDir tmp("pq-rg");
  Sql sql;
  make_rows(sql, 7000, 6);  // ~600-byte texts: batches end by bytes, not at 2048-row groups
  const std::string select = "SELECT * FROM rows ORDER BY i";
  write_parquet(sql, select, tmp / "big.parquet");
  write_jsonl(sql, select, tmp / "big.jsonl");
  const auto groups = sql.run("SELECT count(DISTINCT row_group_id) FROM parquet_metadata(" +
                              lit((tmp / "big.parquet").string()) + ")");
  REQUIRE(std::stoi(groups.at(0)) >= 3);
  const std::string flags = " --task lm --max-len 128" + tok();
  shardify_ok("--input " + q(tmp / "big.jsonl") + flags + " --threads 2 --out " + q(tmp / "j"));
  shardify_ok("--input " + q(tmp / "big.parquet") + flags + " --threads 1 --out " + q(tmp / "p1"));
  // --threads 6 decodes with 3 DuckDB threads: row groups in parallel, rows still in order.
  shardify_ok("--input " + q(tmp / "big.parquet") + flags + " --threads 6 --out " + q(tmp / "p6"));
  require_same_shards(tmp / "j", tmp / "p1");
  require_same_shards(tmp / "p1", tmp / "p6");
  // The reader on its own: the same rows in the same order for 1 and 4 decoding threads.
  auto read_all = [&](unsigned threads) {
    shardkit::shardify::ReaderOptions o;
    o.format = shardkit::shardify::InputFormat::kParquet;
    o.decode_threads = threads;
    auto reader = shardkit::shardify::ExampleReader::open(tmp / "big.parquet", 0, o);
    std::vector<std::pair<std::string, std::string>> rows;
    shardkit::shardify::Example ex;
    while (reader->next(ex)) rows.emplace_back(ex.where, ex.text);
    return rows;
  };
  const auto serial = read_all(1), parallel = read_all(4);
  REQUIRE(serial.size() == 7000);
  CHECK(serial.front().first == "row 0 (row group 0)");
  CHECK(serial.back().first == "row 6999 (row group 3)");
  CHECK(serial == parallel);
}

TEST_CASE("struct fields, integer and string labels, pairs (cls, pair) equal JSONL") {
  TempDir tmp("pq-cls");
  Sql sql;
  make_rows(sql, 1500);
  const std::string select = "SELECT * FROM rows ORDER BY i";
  write_parquet(sql, select, tmp / "rows.parquet", "snappy");
  write_jsonl(sql, select, tmp / "rows.jsonl");
  const std::vector<std::string> runs = {
      " --task cls --max-len 32 --text-field meta.title --label-field label",
      " --task cls --max-len 32 --text-field text --label-field sentiment",
      " --task pair --max-len 48 --text-field meta.title --pair-field meta.body --label-field "
      "label",
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    CAPTURE(runs[r]);
    const std::string n = std::to_string(r);
    shardify_ok("--input " + q(tmp / "rows.jsonl") + runs[r] + tok() + " --out " +
                q(tmp / ("j" + n)));
    shardify_ok("--input " + q(tmp / "rows.parquet") + runs[r] + tok() + " --threads 3 --out " +
                q(tmp / ("p" + n)));
    require_same_shards(tmp / ("j" + n), tmp / ("p" + n));
    // The label map is the same too.
    auto jd = shardkit::Dataset::open(tmp / ("j" + n)),
         pd = shardkit::Dataset::open(tmp / ("p" + n));
    CHECK(jd.info().labels.names == pd.info().labels.names);
    CHECK(pd.info().labels.names.size() >= 2);
  }
}

TEST_CASE("QA answers as a struct of lists (HF) and as a list of structs equal JSONL") {
  TempDir tmp("pq-qa");
  Sql sql;
  make_rows(sql, 400, 3);
  // The answer is the second word of the context; every fifth question has none.
  sql.run(
      "CREATE TABLE qa AS SELECT i, text AS context, 'what does ' || meta.title || ' say?' AS "
      "question, CASE WHEN i % 5 = 4 OR w = '' THEN [] ELSE [w] END AS texts, CASE WHEN i % 5 = "
      "4 OR w = '' THEN [] ELSE [length(regexp_extract(text, '^\\S+ +', 0))] END AS starts FROM "
      "(SELECT *, regexp_extract(text, '^\\S+ +(\\S+)', 1) AS w FROM rows)");
  const std::string hf =
      "SELECT context, question, {'text': texts, 'answer_start': starts::INTEGER[]} AS answers "
      "FROM qa ORDER BY i";
  const std::string squad =
      "SELECT context, question, list_transform(list_zip(texts, starts), x -> {'text': x[1], "
      "'answer_start': x[2]}) AS answers FROM qa ORDER BY i";
  write_parquet(sql, hf, tmp / "hf.parquet", "gzip");
  write_jsonl(sql, hf, tmp / "hf.jsonl");
  write_parquet(sql, squad, tmp / "squad.parquet", "brotli");
  write_jsonl(sql, squad, tmp / "squad.jsonl");
  const std::string flags = " --task qa --max-len 48 --doc-stride 16 --max-query-len 16" + tok();
  for (const std::string name : {"hf", "squad"}) {
    CAPTURE(name);
    shardify_ok("--input " + q(tmp / (name + ".jsonl")) + flags + " --out " +
                q(tmp / (name + "-j")));
    shardify_ok("--input " + q(tmp / (name + ".parquet")) + flags + " --threads 2 --out " +
                q(tmp / (name + "-p")));
    require_same_shards(tmp / (name + "-j"), tmp / (name + "-p"));
  }
  // Both layouts describe the same answers.
  const auto records = read_records(tmp / "hf-p");
  const auto answered =
      std::count_if(records.begin(), records.end(), [](const Rec& r) { return r.start > 0; });
  CHECK(answered > 100);
  CHECK(answered < static_cast<long>(records.size()));
  require_same_shards(tmp / "hf-p", tmp / "squad-p");
}

TEST_CASE("nulls: fail names file, row and row group; skip counts them like JSONL does") {
  TempDir tmp("pq-null");
  Sql sql;
  make_rows(sql, 5000);
  sql.run("UPDATE rows SET text = NULL WHERE i IN (7, 4100)");
  const std::string select = "SELECT * FROM rows ORDER BY i";
  write_parquet(sql, select, tmp / "n.parquet");
  write_jsonl(sql, select, tmp / "n.jsonl");
  const std::string flags = " --task lm --max-len 64" + tok();
  std::string out;
  CHECK(shardify("--input " + q(tmp / "n.parquet") + flags + " --out " + q(tmp / "fail"), &out) !=
        0);
  CHECK_MESSAGE(out.find((tmp / "n.parquet").string() +
                         ": row 7 (row group 0): field 'text' is null") != std::string::npos,
                out);
  CHECK(!fs::exists(tmp / "fail"));

  shardify_ok(
      "--input " + q(tmp / "n.parquet") + flags + " --on-error skip --json --out " + q(tmp / "p"),
      &out);
  CHECK(json_count(out, "skipped") == 2);
  CHECK(json_count(out, "documents") == 4998);
  CHECK_MESSAGE(out.find("row 4100 (row group 2): field 'text' is null") != std::string::npos, out);
  shardify_ok("--input " + q(tmp / "n.jsonl") + flags + " --on-error skip --out " + q(tmp / "j"));
  require_same_shards(tmp / "j", tmp / "p");

  // A null label is a bad row too.
  make_rows(sql, 100);
  sql.run("UPDATE rows SET sentiment = NULL WHERE i = 42");
  write_parquet(sql, select, tmp / "l.parquet");
  CHECK(shardify("--input " + q(tmp / "l.parquet") + " --task cls --label-field sentiment" + tok() +
                     " --labels neg,pos --out " + q(tmp / "lfail"),
                 &out) != 0);
  CHECK_MESSAGE(out.find("row 42 (row group 0): field 'sentiment' is null") != std::string::npos,
                out);
}

TEST_CASE("an empty file adds nothing; zero-byte, truncated and corrupt files name the file") {
  TempDir tmp("pq-bad");
  Sql sql;
  make_rows(sql, 3000);
  fs::create_directories(tmp / "pq");
  fs::create_directories(tmp / "js");
  write_parquet(sql, "SELECT * FROM rows ORDER BY i", tmp / "pq" / "a.parquet");
  write_parquet(sql, "SELECT * FROM rows WHERE i < 0", tmp / "pq" / "b.parquet");
  write_jsonl(sql, "SELECT * FROM rows ORDER BY i", tmp / "js" / "a.jsonl");
  write_file(tmp / "js" / "b.jsonl", "");
  const std::string flags = " --task lm --max-len 64" + tok();
  shardify_ok("--input " + q(tmp / "pq") + flags + " --out " + q(tmp / "p"));
  shardify_ok("--input " + q(tmp / "js") + flags + " --out " + q(tmp / "j"));
  require_same_shards(tmp / "j", tmp / "p");

  const std::string good = read_file(tmp / "pq" / "a.parquet");
  std::string corrupt = good;
  // Overwrite the middle of the column data (zstd pages), keeping the footer intact.
  for (size_t i = good.size() / 4; i < good.size() / 4 + 2000; ++i) corrupt[i] = '\x5a';
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"zero.parquet", ""},
      {"truncated.parquet", good.substr(0, good.size() / 2)},
      {"garbage.parquet", std::string(4096, 'x')},
      {"corrupt.parquet", corrupt},
  };
  for (const auto& [name, bytes] : bad) {
    CAPTURE(name);
    write_file(tmp / name, bytes);
    std::string out;
    for (const char* on_error : {"fail", "skip"}) {
      CHECK(shardify("--input " + q(tmp / name) + flags + " --on-error " + on_error + " --out " +
                         q(tmp / "ds"),
                     &out) != 0);
      CHECK_MESSAGE(out.find((tmp / name).string()) != std::string::npos, out);
      CHECK(!fs::exists(tmp / "ds"));
    }
  }
}

TEST_CASE("a column of the wrong type or a missing column is a clear error") {
  TempDir tmp("pq-type");
  Sql sql;
  make_rows(sql, 50);
  write_parquet(sql,
                "SELECT i AS text, text AS body, i / 2 AS score, meta, text AS answers, "
                "text AS question FROM rows",
                tmp / "t.parquet");
  struct Case {
    std::string flags, expect;
  };
  const std::vector<Case> cases = {
      {" --task lm", "--text-field 'text' is a BIGINT column; it must be VARCHAR"},
      {" --task lm --text-field meta", "--text-field 'meta' is a STRUCT column"},
      {" --task lm --text-field missing", "--text-field 'missing' cannot be read"},
      {" --task lm --text-field meta.missing", "Could not find key \"missing\" in struct"},
      {" --task cls --text-field body --label-field score",
       "--label-field 'score' is a DOUBLE column; labels must be strings, integers or booleans"},
      {" --task qa --context-field body",
       "--answers-field 'answers' is a VARCHAR column; it must be a struct of lists"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.flags);
    std::string out;
    CHECK(shardify("--input " + q(tmp / "t.parquet") + c.flags + tok() + " --out " + q(tmp / "ds"),
                   &out) != 0);
    CHECK_MESSAGE(out.find((tmp / "t.parquet").string()) != std::string::npos, out);
    CHECK_MESSAGE(out.find(c.expect) != std::string::npos, out);
    CHECK(!fs::exists(tmp / "ds"));
  }
}

TEST_CASE("--where keeps the rows DuckDB keeps, and cannot leave its clause or read other files") {
  TempDir tmp("pq-where");
  Sql sql;
  make_rows(sql, 2000);
  write_parquet(sql, "SELECT * FROM rows ORDER BY i", tmp / "w.parquet");
  const std::string predicate = "lang = 'en' AND meta.id % 3 <> 1 AND length(text) > 40";
  write_jsonl(sql, "SELECT * FROM rows WHERE " + predicate + " ORDER BY i", tmp / "w.jsonl");
  const std::string flags = " --task lm --max-len 64" + tok();
  std::string out;
  shardify_ok("--input " + q(tmp / "w.parquet") + " --where \"" + predicate + "\"" + flags +
                  " --json --out " + q(tmp / "p"),
              &out);
  const auto kept = sql.run("SELECT count(*) FROM rows WHERE " + predicate);
  CHECK(json_count(out, "documents") == std::stoull(kept.at(0)));
  CHECK(json_count(out, "documents") < 2000);
  shardify_ok("--input " + q(tmp / "w.jsonl") + flags + " --out " + q(tmp / "j"));
  require_same_shards(tmp / "j", tmp / "p");
  CHECK(shardkit::Dataset::open(tmp / "p").info().source.where == predicate);
  CHECK(shardkit::Dataset::open(tmp / "j").info().source.where.empty());

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"lang = 'en') OR (1 = 1", "a ')' without its '('"},
      {"lang = 'en'; DROP TABLE x", "';' would end the statement"},
      {"lang = 'en' -- comment", "comments are not allowed"},
      {"lang = 'en", "an unclosed string literal"},
      {"EXISTS (SELECT 1 FROM read_csv('/etc/passwd'))", "Permission Error"},
      {"no_such_column = 1", "no_such_column"},
  };
  for (const auto& [where, expect] : refused) {
    CAPTURE(where);
    CHECK(shardify("--input " + q(tmp / "w.parquet") + " --where \"" + where + "\"" + flags +
                       " --out " + q(tmp / "bad"),
                   &out) != 0);
    CHECK_MESSAGE(out.find(expect) != std::string::npos, out);
    CHECK(!fs::exists(tmp / "bad"));
  }
  CHECK(shardify("--input " + q(tmp / "w.jsonl") + " --where \"lang = 'en'\"" + flags + " --out " +
                     q(tmp / "bad"),
                 &out) != 0);
  CHECK(out.find("--where filters Parquet input only") != std::string::npos);
}

TEST_CASE("the directories libduckdb is looked for in are the program's own RUNPATH's") {
  // shardify opens libduckdb by path in each directory the dynamic linker would search for the
  // program (core/library_on_demand.h), not by a bare name alone: a runtime that intercepts
  // dlopen (the sanitizers') would search its own RUNPATH instead. This program's RUNPATH holds
  // the build's DuckDB directory.
  const std::vector<std::string> dirs = shardkit::library_search_dirs();
  CAPTURE(dirs.size());
  CHECK(std::find(dirs.begin(), dirs.end(), std::string(SHARDKIT_TEST_DUCKDB_DIR)) != dirs.end());
  CHECK(std::find(dirs.begin(), dirs.end(), std::string("/usr/lib")) != dirs.end());
}

TEST_CASE("parquet_sql: quoting and field paths") {
  using namespace shardkit::shardify::parquet_sql;
  CHECK(quote_identifier("a\"b") == "\"a\"\"b\"");
  CHECK(quote_literal("it's") == "'it''s'");
  CHECK(field_expression("text") == "\"text\"");
  CHECK(field_expression("meta.a'b.c") == "\"meta\"['a''b']['c']");
  CHECK(where_problem("a = 'x)' AND \"we\"\"ird(\" > 1").empty());
  CHECK(where_problem("f(a, (b))").empty());
  CHECK(where_problem("  ") == "the predicate is empty");
  CHECK(where_problem("a /* x */") == "comments are not allowed");
  CHECK(where_problem("(a") == "a '(' without its ')'");
  CHECK(where_problem("\"a") == "an unclosed quoted identifier");
}

namespace {

// "document number K" for K < n: the probe flipped one bit of one of them in the page.
std::vector<std::string> numbered_documents(size_t n) {
  std::vector<std::string> rows;
  for (size_t k = 0; k < n; ++k) rows.push_back("document number " + std::to_string(k));
  return rows;
}

std::string as_jsonl(const std::vector<std::string>& rows) {
  std::string out;
  for (const std::string& r : rows) out += "{\"text\": " + json_string(r) + "}\n";
  return out;
}

// Flips the lowest bit of the 'n' of "number 500" in the file: "document oumber 500".
std::string flip_in_page(std::string bytes) {
  const size_t at = bytes.find("document number 500");
  REQUIRE(at != std::string::npos);
  bytes[at + 9] ^= 0x01;
  REQUIRE(bytes.substr(at, 19) == "document oumber 500");
  return bytes;
}

}  // namespace

TEST_CASE("a page's CRC-32 is checked: a flipped bit is an error naming row group, column, page") {
  TempDir tmp("pq-crc");
  const auto rows = numbered_documents(1000);
  write_file(tmp / "rows.jsonl", as_jsonl(rows));
  const std::string flags = " --task lm --max-len 64 --text-field text" + tok();
  shardify_ok("--input " + q(tmp / "rows.jsonl") + flags + " --out " + q(tmp / "j"));
  for (const bool crc : {true, false}) {
    CAPTURE(crc);
    const std::string tag = crc ? "crc" : "plain";
    // Four row groups of 250 rows, uncompressed: DuckDB reads the file as the JSONL.
    const std::string good = tiny_parquet::file("text", rows, 250, crc);
    write_file(tmp / (tag + ".parquet"), good);
    shardify_ok("--input " + q(tmp / (tag + ".parquet")) + flags + " --out " + q(tmp / tag));
    require_same_shards(tmp / "j", tmp / tag);
    write_file(tmp / (tag + "-flipped.parquet"), flip_in_page(good));
    std::string out;
    for (const char* on_error : {"fail", "skip"}) {
      const fs::path ds = tmp / (tag + "-flipped-" + on_error);
      const int rc = shardify("--input " + q(tmp / (tag + "-flipped.parquet")) + flags +
                                  " --on-error " + on_error + " --out " + q(ds),
                              &out);
      if (crc) {
        // Row 500 is in row group 2, the column's only page, after the 4-byte magic and three
        // row groups' pages.
        CHECK(rc == 1);
        CHECK_MESSAGE(out.find((tmp / "crc-flipped.parquet").string() +
                               ": row group 2, column 'text', page 0 (byte ") != std::string::npos,
                      out);
        CHECK_MESSAGE(out.find("CRC-32 is") != std::string::npos, out);
        CHECK_MESSAGE(out.find("the file is damaged") != std::string::npos, out);
        CHECK_FALSE(fs::exists(ds));
      } else {
        // Without a CRC nothing in the file can tell (README, "Parquet input"): the documented
        // limit, shown here.
        CHECK(rc == 0);
      }
    }
  }
}

#ifdef __SANITIZE_ADDRESS__
constexpr bool kAddressSanitizer = true;  // its quarantine and shadow memory say nothing here
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST_CASE("100,000 one-row groups stream: memory grows with the footer only" *
          doctest::skip(kAddressSanitizer)) {
  TempDir tmp("pq-groups");
  const auto rows = numbered_documents(100000);
  write_file(tmp / "rows.jsonl", as_jsonl(rows));
  write_file(tmp / "groups.parquet", tiny_parquet::file("text", rows, 1, true));
  const std::string flags = " --task lm --max-len 64 --text-field text --threads 2 --json" + tok();
  shardify_ok("--input " + q(tmp / "rows.jsonl") + flags + " --out " + q(tmp / "j"));
  // The peak resident size of the shardify child, from wait4.
  const std::string cmd =
      shardify_bin() + " --input " + q(tmp / "groups.parquet") + flags + " --out " + q(tmp / "p");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", (cmd + " >/dev/null 2>&1").c_str(), nullptr);
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  require_same_shards(tmp / "j", tmp / "p");
  const double mib = usage.ru_maxrss / 1024.0;  // the shell's child, shardify, included
  MESSAGE("100,000 one-row groups: peak resident ", mib, " MiB, ", seconds, " s");
  // Before: 1.28 GB (DuckDB's streaming result held a one-row chunk per group at the capacity of
  // 2,048 rows, and its cache a block per read). What stays is DuckDB's parsed footer, about
  // 1.3 KB a row group (130 MB here; a file's footer is read whole).
  CHECK(mib < 400);
}
