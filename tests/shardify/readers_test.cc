// The readers and helpers on their own: expectations are literal values stated here.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <map>
#include <random>
#include <tuple>

#include "core/error.h"
#include "core/utf8.h"
#include "shardify/byte_source.h"
#include "shardify/example_reader.h"
#include "shardify/input_files.h"
#include "shardify/json_fields.h"
#include "shardify/label_map.h"
#include "shardify/line_reader.h"
#include "shardify/part_from_env.h"
#include "test_util.h"

using namespace shardkit;
using namespace shardkit::shardify;
using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

std::vector<Example> read_examples(const fs::path& p, ReaderOptions o) {
  auto r = ExampleReader::open(p, 0, o);
  std::vector<Example> out;
  Example ex;
  while (r->next(ex)) out.push_back(ex);
  return out;
}

}  // namespace

TEST_CASE("lines: CRLF, a missing final newline, and a line longer than the read chunk") {
  TempDir tmp("lines");
  const std::string long_line(3 << 20, 'x');
  write_file(tmp / "a.txt", "one\r\ntwo\n\n" + long_line + "\nlast");
  LineReader lines(ByteSource::open(tmp / "a.txt"));
  std::vector<std::string> got;
  std::string_view l;
  while (lines.next(l)) got.emplace_back(l);
  REQUIRE(got.size() == 5);
  CHECK(got[0] == "one");
  CHECK(got[1] == "two");
  CHECK(got[2].empty());
  CHECK(got[3] == long_line);
  CHECK(got[4] == "last");
  CHECK(lines.line_number() == 5);
}

TEST_CASE("a text file as one document: lines joined, blank ends dropped, errors on their line") {
  // The document is borrowed from the buffer the file was read into when its lines end with
  // "\n", and joined into a copy when they end with "\r\n"; both must give what joining the
  // lines gives: "\n" between them, leading and trailing blank lines dropped, a UTF-8 byte
  // order mark gone, a lone '\r' inside a line kept. An invalid UTF-8 line is reported with its
  // own number and the byte in it; plain, CRLF, .gz and .zst files read alike.
  TempDir tmp("filedoc");
  ReaderOptions text;
  text.format = InputFormat::kText;
  text.doc_separator = DocSeparator::kFile;
  const std::string body = "first line\n\n  indented \t\nmid\rdle\n\n\nlast words";
  struct Case {
    std::string name, content, text, error;
    uint64_t line;
  };
  std::string crlf;
  for (char c : "\n \t\n" + body + "\n \n\t\n\n")
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  crlf.pop_back();  // the terminating NUL the loop above read
  const std::vector<Case> cases = {
      {"plain", "\n \t\n" + body + "\n \n\t\n\n", body, "", 3},
      {"crlf", crlf, body, "", 3},
      {"no final newline", body, body, "", 1},
      {"bom", "\xEF\xBB\xBF" + body + "\n", body, "", 1},
      {"invalid on line 4", body.substr(0, 30) + "\xC3(" + body.substr(30), "",
       "invalid UTF-8 at byte 5 of the line", 4},
      {"invalid on line 1", "ab\xFF\n" + body, "", "invalid UTF-8 at byte 2 of the line", 1},
      {"a continuation byte first", "\230\230ab\n" + body, "",  // two 0x98 bytes, then "ab"
       "invalid UTF-8 at byte 0 of the line", 1},
  };
  for (const Case& c : cases)
    for (const char* compress : {"", "gzip", "zstd"}) {
      CAPTURE(c.name);
      CAPTURE(compress);
      fs::path file = tmp / "doc.txt";
      write_file(file, c.content);
      if (*compress) {
        const fs::path packed =
            tmp / (std::string("doc.txt.") + (compress[0] == 'g' ? "gz" : "zst"));
        REQUIRE(run_command(std::string(compress) + " -q -c " + file.string() + " > " +
                            packed.string()) == 0);
        file = packed;
      }
      const auto got = read_examples(file, text);
      REQUIRE(got.size() == 1);
      CHECK(got[0].error == c.error);
      CHECK(got[0].line == c.line);
      if (c.error.empty()) CHECK(got[0].body() == c.text);
    }
}

TEST_CASE("a file document larger than the size its source announces is read whole") {
  // A compressed file announces its compressed size: the buffer sized from it must grow (several
  // times over here) and keep every byte. A plain file's read that finds the end must not lose
  // the bytes before it.
  TempDir tmp("bigdoc");
  ReaderOptions text;
  text.format = InputFormat::kText;
  text.doc_separator = DocSeparator::kFile;
  std::string body;
  for (int i = 0; body.size() < (5 << 20); ++i) body += "line " + std::to_string(i) + " of it\n";
  body += "the end";
  write_file(tmp / "doc.txt", body);
  REQUIRE(run_command("gzip -q -k " + (tmp / "doc.txt").string() + " && zstd -q " +
                      (tmp / "doc.txt").string() + " -o " + (tmp / "doc.txt.zst").string()) == 0);
  for (const char* name : {"doc.txt", "doc.txt.gz", "doc.txt.zst"}) {
    CAPTURE(name);
    const auto got = read_examples(tmp / name, text);
    REQUIRE(got.size() == 1);
    CHECK(got[0].error.empty());
    CHECK(got[0].body().size() == body.size());
    CHECK(got[0].body() == body);
  }
}

TEST_CASE("a file document of several read ranges is read and checked as a small one is") {
  // A plain file of more than two ranges (core/parallel_ranges.h: 8 MiB) is read by positional
  // reads of its ranges at once, and checked for UTF-8 and "\r" a range at a time: the text, and
  // the line and byte an error names, must be those of reading it in one piece. A four-byte
  // character straddles the first range boundary, where the check's ranges are cut.
  TempDir tmp("rangedoc");
  ReaderOptions text;
  text.format = InputFormat::kText;
  text.doc_separator = DocSeparator::kFile;
  constexpr size_t kRange = size_t{8} << 20;
  std::string body;
  for (int i = 0; body.size() < kRange - 2; ++i) body += "line " + std::to_string(i) + " of it\n";
  body.resize(kRange - 2);
  body += "\xF0\x9F\x98\x80 straddles\n";  // U+1F600 over bytes kRange - 2 .. kRange + 1
  for (int i = 0; body.size() < 3 * kRange; ++i) body += "more " + std::to_string(i) + " lines\n";
  body += "the end";
  const auto line_of = [&](const std::string& t, size_t at) {
    return static_cast<uint64_t>(
               std::count(t.begin(), t.begin() + static_cast<ptrdiff_t>(at), '\n')) +
           1;
  };
  const auto read_one = [&](const std::string& content) {
    write_file(tmp / "doc.txt", content);
    auto got = read_examples(tmp / "doc.txt", text);
    REQUIRE(got.size() == 1);
    return got[0];
  };
  {
    const Example got = read_one(body);
    CHECK(got.error.empty());
    CHECK(got.body() == body);
  }
  {
    // "\r\n" endings in the third range only: every line is joined with "\n".
    const size_t from = body.find('\n', 2 * kRange + 100);
    std::string crlf = body.substr(0, from);
    for (size_t at = from; at < body.size(); ++at)
      crlf += body[at] == '\n' ? "\r\n" : std::string(1, body[at]);
    const Example got = read_one(crlf);
    CHECK(got.error.empty());
    CHECK(got.body() == body);
  }
  {
    // An invalid byte in the second range, 7 bytes into its line.
    std::string bad = body;
    const size_t line_start = bad.find('\n', kRange + 1000) + 1;
    bad[line_start + 7] = '\xFF';
    const Example got = read_one(bad);
    CHECK(got.error == "invalid UTF-8 at byte 7 of the line");
    CHECK(got.line == line_of(bad, line_start));
  }
}

TEST_CASE("compressed inputs: concatenated gzip members and zstd frames read as one stream") {
  TempDir tmp("z");
  write_file(tmp / "a", "alpha\n");
  write_file(tmp / "b", "beta\n");
  REQUIRE(run_command("gzip -c " + (tmp / "a").string() + " > " + (tmp / "x.gz").string() +
                      " && gzip -c " + (tmp / "b").string() + " >> " + (tmp / "x.gz").string()) ==
          0);
  REQUIRE(run_command("zstd -q -c " + (tmp / "a").string() + " > " + (tmp / "x.zst").string() +
                      " && zstd -q -c " + (tmp / "b").string() + " >> " +
                      (tmp / "x.zst").string()) == 0);
  CHECK(read_all(tmp / "x.gz") == "alpha\nbeta\n");
  CHECK(read_all(tmp / "x.zst") == "alpha\nbeta\n");
  // A truncated zstd file is an input error, not a short read.
  std::string z = read_file(tmp / "x.zst");
  write_file(tmp / "t.zst", z.substr(0, z.size() - 3));
  CHECK_THROWS_AS(read_all(tmp / "t.zst"), Error);
}

TEST_CASE("UTF-8: first invalid byte and code point offsets") {
  CHECK(!first_invalid_utf8("caf\xC3\xA9 \xE2\x80\x94 ok"));
  CHECK(first_invalid_utf8("ab\xC3\x28") == 2u);      // bad continuation
  CHECK(first_invalid_utf8("abc\xC0\xAF") == 3u);     // overlong '/'
  CHECK(first_invalid_utf8("\xED\xA0\x80x") == 0u);   // UTF-16 surrogate
  CHECK(first_invalid_utf8("xy\xF0\x9F\x98") == 2u);  // truncated 4-byte sequence
  // Every length a word-at-a-time test of short texts splits differently, with one stray byte
  // at every position: it is found wherever the blocks and the last word fall.
  for (size_t n : {1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 1023, 1024, 1025, 3000}) {
    const std::string ascii(n, 'a');
    CHECK(!first_invalid_utf8(ascii));
    for (size_t k = 0; k < n; ++k) {
      std::string bad = ascii;
      bad[k] = '\xFF';
      REQUIRE_MESSAGE(first_invalid_utf8(bad) == k, "length ", n, ", stray byte at ", k);
      if (k + 2 <= n) {
        std::string good = ascii;
        good.replace(k, 2, "\xC3\xA9");  // é
        REQUIRE_MESSAGE(!first_invalid_utf8(good), "length ", n, ", é at ", k);
      }
    }
  }
  const std::string s =
      "a\xC3\xA9\xE2\x80\x94"
      "b";  // a é — b
  CHECK(code_point_to_byte(s, 0) == 0u);
  CHECK(code_point_to_byte(s, 2) == 3u);
  CHECK(code_point_to_byte(s, 3) == 6u);
  CHECK(code_point_to_byte(s, 4) == 7u);  // one past the end
  CHECK(!code_point_to_byte(s, 5));
}

TEST_CASE("CSV: a quoted line break keeps its CRLF or LF, as Python's csv module reads it") {
  // csv.reader(open(f, newline="")) gives [["a\r\nb", "1"], ["c\nd", "0"]]; so does pandas.
  TempDir tmp("csv_crlf");
  write_file(tmp / "a.csv", "text,label\r\n\"a\r\nb\",1\r\n\"c\nd\",0\r\n");
  ReaderOptions o;
  o.format = InputFormat::kCsv;
  o.label_field = "label";
  auto ex = read_examples(tmp / "a.csv", o);
  REQUIRE(ex.size() == 2);
  CHECK(ex[0].text == "a\r\nb");
  CHECK(ex[0].label == "1");
  CHECK(ex[1].text == "c\nd");
  CHECK(ex[1].label == "0");
  CHECK(ex[1].line == 4);
}

TEST_CASE("CSV: a quoted field across lines reports its first line; TSV keeps inner quotes") {
  TempDir tmp("csv");
  write_file(tmp / "a.csv", "label,text\nx,\"multi\nline, \"\"quoted\"\"\"\ny,plain\n");
  ReaderOptions o;
  o.format = InputFormat::kCsv;
  o.label_field = "label";
  auto ex = read_examples(tmp / "a.csv", o);
  REQUIRE(ex.size() == 2);
  CHECK(ex[0].text == "multi\nline, \"quoted\"");
  CHECK(ex[0].line == 2);
  CHECK(ex[1].text == "plain");
  CHECK(ex[1].line == 4);
  CHECK(ex[1].label == "y");

  write_file(tmp / "a.tsv", "text\tlabel\nsays \"hi\" twice\t1\n");
  o.format = InputFormat::kTsv;
  ex = read_examples(tmp / "a.tsv", o);
  REQUIRE(ex.size() == 1);
  CHECK(ex[0].text == "says \"hi\" twice");
  CHECK(ex[0].error.empty());
}

TEST_CASE("CSV: a bad record is read to its end; the next starts where Python's csv does") {
  // csv.reader(open(f, encoding="latin-1", newline="")) reads each file as two records after
  // the header: the quoted field across lines 2-4 (2-5), which holds the invalid byte, then
  // ["good", "pos"]. No line inside the quoted field starts a record.
  TempDir tmp("csv_bad_quoted");
  const std::vector<std::tuple<std::string, std::string, uint64_t>> files = {
      {"text,label\n\"bad \xff start\nmiddle line,pos\nend\",neg\ngood,pos\n",
       "invalid UTF-8 at byte 5 of the line", 5},
      {"text,label\n\"fine start\nbad \xff middle\nmiddle2,pos\nend\",neg\ngood,pos\n",
       "invalid UTF-8 at byte 4 of line 3", 6},
      // Text after a closing quote joins the field (csv's strict=False), the quoted field that
      // follows on the line included.
      {"text,label\n\"a\"x,\"b\nc,pos\nd\"\ngood,pos\n", "after a closing quote on line 2", 5}};
  for (const auto& [content, reason, good_line] : files) {
    write_file(tmp / "a.csv", content);
    ReaderOptions o;
    o.format = InputFormat::kCsv;
    o.label_field = "label";
    for (const bool labels_only : {false, true}) {  // the label pass reads the same records
      o.labels_only = labels_only;
      const auto ex = read_examples(tmp / "a.csv", o);
      REQUIRE(ex.size() == 2);
      CHECK(ex[0].line == 2);
      CHECK_MESSAGE(ex[0].error.find(reason) != std::string::npos, ex[0].error);
      CHECK(ex[1].error.empty());
      CHECK(ex[1].line == good_line);
      CHECK(ex[1].label == "pos");
      if (!labels_only) CHECK(ex[1].text == "good");
    }
  }
}

TEST_CASE("JSONL: dotted paths, label types, and a path through a non-object") {
  TempDir tmp("jsonl");
  write_file(tmp / "a.jsonl",
             "{\"a\":{\"b\":{\"c\":\"deep\"}},\"y\":3}\n{\"a\":{\"b\":\"flat\"},\"y\":true}\n{"
             "\"a\":1,\"y\":[1]}\n");
  ReaderOptions o;
  o.text_field = "a.b.c";
  o.label_field = "y";
  auto ex = read_examples(tmp / "a.jsonl", o);
  REQUIRE(ex.size() == 3);
  CHECK(ex[0].text == "deep");
  CHECK(ex[0].label == "3");
  CHECK(ex[1].error.find("not an object") != std::string::npos);
  CHECK(ex[2].error.find("not an object") != std::string::npos);
  o.text_field = "a";
  ex = read_examples(tmp / "a.jsonl", o);
  CHECK(ex[1].error == "field 'a' is not a string");
  CHECK(ex[2].error == "field 'a' is not a string");
}

TEST_CASE("JSONL: a dotted path means nesting; a flat key with a dot is named, not selected") {
  TempDir tmp("jsonl_dot");
  write_file(tmp / "a.jsonl", "{\"a.b\":\"flat\"}\n{\"a\":{\"b\":\"nested\"}}\n");
  ReaderOptions o;
  o.format = InputFormat::kJsonl;
  o.text_field = "a.b";
  const auto ex = read_examples(tmp / "a.jsonl", o);
  REQUIRE(ex.size() == 2);
  CHECK(ex[0].error ==
        "missing field 'a.b' (a dotted path names nested fields; a key with a dot in its name, "
        "like this row's, cannot be selected)");
  CHECK(ex[1].text == "nested");
}

TEST_CASE("JSONL: a field whose key appears twice is a bad row; other repeated keys are not") {
  // Python's json.loads keeps the last value, simdjson the first: neither may be guessed.
  TempDir tmp("jsonl_twice");
  write_file(tmp / "a.jsonl",
             "{\"text\":\"one\",\"text\":\"two\"}\n"
             "{\"m\":{\"t\":\"a\",\"t\":\"b\"}}\n"
             "{\"text\":\"kept\",\"id\":1,\"id\":2}\n");
  ReaderOptions o;
  auto ex = read_examples(tmp / "a.jsonl", o);
  REQUIRE(ex.size() == 3);
  CHECK(ex[0].error == "key 'text' appears twice");
  CHECK(ex[1].error == "missing field 'text'");
  CHECK_MESSAGE(ex[2].error.empty(), ex[2].error);
  CHECK(ex[2].text == "kept");
  o.text_field = "m.t";
  ex = read_examples(tmp / "a.jsonl", o);
  CHECK(ex[1].error == "key 't' appears twice on the path of field 'm.t'");
}

namespace {

// Python's json.loads on each line of `file`: "bad" when it refuses the line, else the values of
// `keys` joined by tabs (a str as itself, other values as json.dumps writes them).
std::vector<std::string> python_json_reads(const fs::path& file, const std::string& keys) {
  const std::string script =
      "import json, sys\n"
      "for line in open(sys.argv[1], encoding=\"utf-8\"):\n"
      "    try:\n"
      "        row = json.loads(line)\n"
      "    except ValueError:\n"
      "        print(\"bad\")\n"
      "        continue\n"
      "    values = [row.get(k) for k in sys.argv[2:]]\n"
      "    print(\"\\t\".join(v if isinstance(v, str) else json.dumps(v) for v in values))\n";
  std::string out;
  REQUIRE(run_command("python3 -c '" + script + "' '" + file.string() + "' " + keys, &out) == 0);
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = out.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(out.substr(start, end - start));
  return lines;
}

}  // namespace

// Reads each row (first) and the same row without the fields holding set-aside numbers
// (second), read by the reader and left for the tokenizing threads: both give `texts` and
// `labels`, as Python's json reads them.
void check_unread_numbers(const fs::path& dir,
                          const std::vector<std::pair<std::string, std::string>>& rows,
                          const std::vector<std::string>& texts,
                          const std::vector<std::string>& labels) {
  std::string with, without;
  for (const auto& [row, row_without] : rows) {
    with += row + "\n";
    without += row_without + "\n";
  }
  write_file(dir / "with.jsonl", with);
  write_file(dir / "without.jsonl", without);
  const auto python = python_json_reads(dir / "with.jsonl", "text y");
  REQUIRE(python.size() == rows.size());
  for (const bool defer : {false, true}) {
    CAPTURE(defer);
    ReaderOptions o;
    o.label_field = "y";
    o.defer_json = defer;
    auto got = read_examples(dir / "with.jsonl", o);
    auto expected = read_examples(dir / "without.jsonl", o);
    read_unread_json(got, o);
    read_unread_json(expected, o);
    REQUIRE(got.size() == rows.size());
    REQUIRE(expected.size() == rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      CAPTURE(rows[i].first.substr(0, 100));
      CHECK_MESSAGE(got[i].error.empty(), got[i].error);
      CHECK(got[i].text == texts[i]);
      CHECK(got[i].label == labels[i]);
      CHECK(got[i].text == expected[i].text);
      CHECK(got[i].label == expected[i].label);
      CHECK(python[i] == texts[i] + "\t" + labels[i]);
    }
  }
}

TEST_CASE(
    "JSONL: numbers beyond 64-bit integers and doubles in fields not read leave the row as "
    "without them") {
  // Python's json reads 1e400 as inf and big integers exactly: these rows convert as the same
  // rows without those fields do, read by the reader or left unread for the tokenizing threads.
  // 1e-400 underflows to 0.0 for Python and simdjson alike.
  TempDir tmp("jsonl_wide_numbers");
  const std::string digits400(400, '9');
  const std::vector<std::pair<std::string, std::string>> rows = {
      {R"({"text":"a","x":1e400,"y":"pos"})", R"({"text":"a","y":"pos"})"},
      {R"({"x":-1e400,"text":"b","y":7})", R"({"text":"b","y":7})"},
      {R"({"text":"c","id":18446744073709551616,"y":true})", R"({"text":"c","y":true})"},
      {R"({"text":"d","id":-9223372036854775809,"y":18446744073709551615})",
       R"({"text":"d","y":18446744073709551615})"},
      {R"({"text":"e","n":)" + digits400 + R"(,"y":-9223372036854775808})",
       R"({"text":"e","y":-9223372036854775808})"},
      {R"({"meta":{"ids":[1e400, -1E+999 ,18446744073709551616],"s":"1e400 \"2e999\""},)"
       R"("text":"f \"1e400\\","y":"1.5e999"})",
       R"({"text":"f \"1e400\\","y":"1.5e999"})"},
      {R"({"text":"g","x":[{"y":1.0e+400}],"y":"neg","z":1e-400})",
       R"({"text":"g","y":"neg","z":1e-400})"},
  };
  check_unread_numbers(
      tmp.path(), rows, {"a", "b", "c", "d", "e", "f \"1e400\\", "g"},
      {"pos", "7", "true", "18446744073709551615", "-9223372036854775808", "1.5e999", "neg"});
}

// A JSONL row and the error the reader gives it. Python's json reads the rows that are not
// malformed, and those marked python_reads (a value that is not an object, repeated keys).
struct BadRow {
  std::string line, error;
  bool python_reads = false;
};

// Reads `rows` as one file with `o`: each row gets its error, and Python reads the ones it should.
void check_bad_rows(const fs::path& dir, const std::vector<BadRow>& rows, const ReaderOptions& o) {
  std::string file;
  for (const BadRow& r : rows) file += r.line + "\n";
  write_file(dir / "a.jsonl", file);
  const auto python = python_json_reads(dir / "a.jsonl", "");
  REQUIRE(python.size() == rows.size());
  const auto ex = read_examples(dir / "a.jsonl", o);
  REQUIRE(ex.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(rows[i].line);
    CHECK(ex[i].line == i + 1);
    CHECK_MESSAGE(ex[i].error.starts_with(rows[i].error), ex[i].error);
    CHECK((python[i] != "bad") ==
          (rows[i].python_reads || !rows[i].error.starts_with("malformed JSON: ")));
  }
}

TEST_CASE(
    "JSONL: a read field holding such a number is a bad row saying so; malformed JSON "
    "beside one still is") {
  TempDir tmp("jsonl_wide_numbers_bad");
  const std::string beyond = " (a number beyond 64-bit integers and doubles)";
  const std::vector<BadRow> rows = {
      {R"({"text":1e400,"y":"pos"})", "field 'text' is not a string", true},
      {R"({"text":"a","y":18446744073709551616})",
       "label field 'y' must be a string, an integer or a boolean, not 18446744073709551616" +
           beyond,
       true},
      {R"({"text":"a","y":-1e400})",
       "label field 'y' must be a string, an integer or a boolean, not -1e400" + beyond, true},
      {R"({"text":"a","y":"pos","x":1e400,})", "malformed JSON: ", false},
      {R"({1e400:"a","text":"b","y":"pos"})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":1e400,1e400:1})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":[-1e400,{1e400:1}]})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","1e400":1e400 1})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":[1e400 2]})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":01,"z":1e400})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":1e400x})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":1.e400})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":+1e400})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":-1e400e1})", "malformed JSON: ", false},
      {R"({"text":"a","y":"pos","x":1e400,"text":"b"})", "key 'text' appears twice", true},
      {R"(1e400)", "malformed JSON: the line is not a JSON object", true},
  };
  ReaderOptions o;
  o.label_field = "y";
  check_bad_rows(tmp.path(), rows, o);

  // Invalid UTF-8 is named first, as on any line.
  write_file(tmp / "utf8.jsonl", "{\"text\":\"a\xFF\",\"x\":1e400}\n");
  const auto utf8 = read_examples(tmp / "utf8.jsonl", ReaderOptions{});
  REQUIRE(utf8.size() == 1);
  CHECK(utf8[0].error == "invalid UTF-8 at byte 10 of the line");
}

TEST_CASE("JSONL chat and QA rows: such numbers pass through where not read, refused where read") {
  TempDir tmp("jsonl_wide_numbers_tasks");
  // A message's other keys reach the chat template as they were written: the messages of the
  // first two rows are these characters of their lines (written as simdjson::minify would).
  const std::string plain = R"([{"role":"user","content":"hi"}])";
  const std::string tool_call =
      R"([{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":)"
      R"({"n":18446744073709551616,"x":-1E+999,"k\"ey\n\t\u0001":"v\u0001","h":0.5,"i":[3,-1e400]}}}]}])";
  {
    // The expectation is simdjson::minify's own writing, keys' escapes included: the same
    // messages with numbers it holds.
    std::string held = tool_call;
    for (const std::string wide : {"18446744073709551616", "-1E+999", "-1e400"})
      held.replace(held.find(wide), wide.size(), "0");
    simdjson::dom::parser parser;
    simdjson::dom::element e;
    REQUIRE(parser.parse(held).get(e) == simdjson::SUCCESS);
    CHECK(simdjson::minify(e) == held);
  }
  write_file(tmp / "chat.jsonl",
             R"({"id":18446744073709551616,"messages":)" + plain + "}\n" + R"({"messages":)" +
                 tool_call + R"(,"score":1e400})" + "\n" +
                 R"({"messages":[{"role":"user","content":1e400}]})" + "\n" +
                 R"({"messages":[{"role":18446744073709551616,"content":"x"}]})" + "\n");
  ReaderOptions chat;
  chat.messages_field = "messages";
  auto ex = read_examples(tmp / "chat.jsonl", chat);
  REQUIRE(ex.size() == 4);
  CHECK_MESSAGE(ex[0].error.empty(), ex[0].error);
  CHECK(ex[0].messages == plain);
  CHECK_MESSAGE(ex[1].error.empty(), ex[1].error);
  CHECK(ex[1].messages == tool_call);
  const std::string beyond = " (a number beyond 64-bit integers and doubles)";
  CHECK(ex[2].error ==
        "messages[0] needs a 'content' that is a string, null or a list, not 1e400" + beyond);
  CHECK(ex[3].error == "messages[0] needs a string 'role', not 18446744073709551616" + beyond);

  const std::string answers = R"({"text":["France"],"answer_start":[12]})";
  write_file(tmp / "qa.jsonl",
             R"({"id":18446744073709551616,"context":"Paris is in France.","question":"Where?",)"
             R"("answers":)" +
                 answers + "}\n" +
                 R"({"context":"Paris is in France.","question":"Where?","answers":)" + answers +
                 "}\n" +
                 R"({"context":"Paris.","question":"Where?","answers":{"text":["Paris"],)"
                 R"("answer_start":[18446744073709551616]}})" +
                 "\n" +
                 R"({"context":"Paris.","question":"Where?","answers":[{"text":1e400,)"
                 R"("answer_start":0}]})" +
                 "\n");
  ReaderOptions qa;
  qa.qa = true;
  qa.text_field = "context";
  ex = read_examples(tmp / "qa.jsonl", qa);
  REQUIRE(ex.size() == 4);
  for (size_t i : {0, 1}) {
    CHECK_MESSAGE(ex[i].error.empty(), ex[i].error);
    REQUIRE(ex[i].questions.size() == 1);
    CHECK(ex[i].questions[0].answer_text == "France");
    CHECK(ex[i].questions[0].answer_start == 12);
  }
  const std::string bad_answer =
      "the first answer needs a 'text' string and a non-negative integer 'answer_start', not ";
  CHECK(ex[2].error == bad_answer + "18446744073709551616" + beyond);
  CHECK(ex[3].error == bad_answer + "1e400" + beyond);
}

TEST_CASE("JSONL: NaN, Infinity and -Infinity in fields not read leave the row as without them") {
  // Python's json.dumps writes a float NaN or infinity so (allow_nan, its default) and
  // json.loads reads them back: a score or a loss so written takes nothing from its row, read
  // by the reader or left unread for the tokenizing threads. The literals inside strings are
  // the strings' characters.
  TempDir tmp("jsonl_non_finite");
  const std::vector<std::pair<std::string, std::string>> rows = {
      {R"({"text":"a","score":NaN,"y":"pos"})", R"({"text":"a","y":"pos"})"},
      {R"({"loss":Infinity,"text":"b","y":7})", R"({"text":"b","y":7})"},
      {R"({"text":"c","y":true,"x":-Infinity})", R"({"text":"c","y":true})"},
      {R"({"meta":{"v":[NaN, Infinity ,-Infinity,{"w":NaN}],"s":"NaN \"Infinity\""},)"
       R"("text":"NaN","y":"-Infinity"})",
       R"({"text":"NaN","y":"-Infinity"})"},
      {"{\"text\":\"e\",\t\"x\" :\tNaN\t, \"y\":\"Infinity\",\"z\":[ -Infinity ]}",
       R"({"text":"e","y":"Infinity"})"},
      {R"({"text":"f","n":[NaN,1e400,Infinity,18446744073709551616],"y":-1})",
       R"({"text":"f","y":-1})"},
  };
  check_unread_numbers(tmp.path(), rows, {"a", "b", "c", "NaN", "e", "f"},
                       {"pos", "7", "true", "-Infinity", "Infinity", "-1"});
}

TEST_CASE(
    "JSONL: a read field holding NaN or an infinity is a bad row naming it; other spellings "
    "stay malformed") {
  TempDir tmp("jsonl_non_finite_bad");

  const std::string label_not = "label field 'y' must be a string, an integer or a boolean, not ";
  const std::vector<BadRow> rows = {
      {R"({"text":NaN,"y":"pos"})", "field 'text' is not a string but NaN (a non-finite number)"},
      {R"({"text":"a","p":-Infinity,"y":"pos"})",
       "field 'p' is not a string but -Infinity (a non-finite number)"},
      {R"({"text":"a","p":"b","y":Infinity})", label_not + "Infinity (a non-finite number)"},
      {R"({"text":"a","p":"b","y":NaN,"x":1e400})", label_not + "NaN (a non-finite number)"},
      {R"({"text":1e400,"p":"b","y":"pos"})",
       "field 'text' is not a string but 1e400 (a number beyond 64-bit integers and doubles)"},
      // Python's json refuses these, and so must the reader: only its three spellings are
      // numbers, standing where a value stands.
      {R"({"text":"a","p":"b","y":"pos","x":nan})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":inf})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":-inf})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":+Infinity})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":-NaN})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":NaNx})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":Infinityy})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":- Infinity})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":--Infinity})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":Infinity-})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":NAN})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":Nan})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":INFINITY})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":infinity})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":NaN NaN})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":[NaN,]})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":NaN,})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos",NaN:1})", "malformed JSON: "},
      {R"({NaN:"a","text":"a","p":"b","y":"pos"})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":{Infinity:NaN}})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":trueNaN})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":1NaN})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":NaN1})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":Infinity.5})", "malformed JSON: "},
      {R"({"text":"a","p":"b","y":"pos","x":"NaN})", "malformed JSON: "},
      {R"(NaN)", "malformed JSON: the line is not a JSON object", true},
      {R"([Infinity])", "malformed JSON: the line is not a JSON object", true},
  };
  ReaderOptions o;
  o.pair_field = "p";
  o.label_field = "y";
  check_bad_rows(tmp.path(), rows, o);
}

TEST_CASE(
    "JSONL: lines generated around the non-finite literals convert exactly when Python's "
    "json reads them") {
  // Each line's "x" is a literal or a number (NaN, 1e400, nan, 7, ...) with characters around
  // it and edits in it; Python's json says which lines are JSON. The reader must read exactly
  // those, with the text and label Python reads, whatever "x" became.
  TempDir tmp("jsonl_non_finite_generated");
  const std::vector<std::string> cores = {"NaN",   "Infinity", "-Infinity", "nan",    "inf",
                                          "1e400", "-1e400",   "7",         "null",   "true",
                                          "0.5",   "Inf",      "NaNa",      "Infinit"};
  const std::vector<std::string> around = {" ", "-", "+", "[",  "]", ",",  "0",  "e",     "N",
                                           "{", "}", ":", "\t", ".", "-I", "aN", "[NaN,", ",NaN"};
  const std::string edits = " -+.eE0NaIfinty,:[]{}x\t";
  std::mt19937 rng(20240611);
  const auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i) {
    std::string x = cores[pick(cores.size())];
    if (pick(4) == 0) {  // one character replaced, inserted or removed
      const size_t at = pick(x.size() + 1);
      const char c = edits[pick(edits.size())];
      switch (pick(3)) {
        case 0:
          if (at < x.size()) x[at] = c;
          break;
        case 1:
          x.insert(x.begin() + at, c);
          break;
        default:
          if (at < x.size()) x.erase(at, 1);
      }
    }
    const auto next_to = [&] { return pick(3) ? std::string() : around[pick(around.size())]; };
    x = next_to() + x;
    x += next_to();
    if (pick(4) == 0) x = "[" + x + "]";
    lines.push_back(pick(2)
                        ? R"({"text":"t)" + std::to_string(i) + R"(","y":"pos","x":)" + x + "}"
                        : R"({"x":)" + x + R"(,"text":"t)" + std::to_string(i) + R"(","y":"neg"})");
  }
  std::string file;
  for (const std::string& l : lines) file += l + "\n";
  write_file(tmp / "a.jsonl", file);
  const auto python = python_json_reads(tmp / "a.jsonl", "text y");
  REQUIRE(python.size() == lines.size());
  size_t read = 0, literals_read = 0;
  for (const bool defer : {false, true}) {
    CAPTURE(defer);
    ReaderOptions o;
    o.label_field = "y";
    o.defer_json = defer;
    auto ex = read_examples(tmp / "a.jsonl", o);
    read_unread_json(ex, o);
    REQUIRE(ex.size() == lines.size());
    read = literals_read = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      CAPTURE(lines[i]);
      CAPTURE(ex[i].error);
      if (python[i] == "bad") {
        CHECK(ex[i].error.starts_with("malformed JSON: "));
        continue;
      }
      ++read;
      if (lines[i].find("NaN") != std::string::npos ||
          lines[i].find("Infinity") != std::string::npos)
        ++literals_read;
      CHECK(ex[i].error.empty());
      CHECK(ex[i].text + "\t" + ex[i].label == python[i]);
    }
  }
  // The lines are not all malformed, nor all plain numbers.
  CHECK(read > 300);
  CHECK(literals_read > 100);
  CHECK(read < lines.size() - 300);
}

TEST_CASE(
    "JSONL chat and QA rows: NaN and the infinities reach the template as Python reads "
    "them, refused where read") {
  TempDir tmp("jsonl_non_finite_tasks");
  const std::string tool_call =
      R"([{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f",)"
      R"("arguments":{"lr":NaN,"hi":Infinity,"lo":[-Infinity,"NaN"]}}}]}])";
  write_file(tmp / "chat.jsonl", R"({"score":NaN,"messages":)" + tool_call + "}\n" +
                                     R"({"messages":[{"role":"user","content":NaN}]})" + "\n" +
                                     R"({"messages":[{"role":-Infinity,"content":"x"}]})" + "\n");
  // What the chat template's process reads (json.loads) is what Python's json makes of the row:
  // its messages as Python's json.dumps writes them back.
  const std::string script =
      "import json, sys\n"
      "row = json.loads(open(sys.argv[1], encoding=\"utf-8\").readline())\n"
      "print(json.dumps(row[\"messages\"], separators=(\",\", \":\"), ensure_ascii=False))\n";
  std::string python_messages;
  REQUIRE(run_command("python3 -c '" + script + "' '" + (tmp / "chat.jsonl").string() + "'",
                      &python_messages) == 0);
  ReaderOptions chat;
  chat.messages_field = "messages";
  auto ex = read_examples(tmp / "chat.jsonl", chat);
  REQUIRE(ex.size() == 3);
  CHECK_MESSAGE(ex[0].error.empty(), ex[0].error);
  CHECK(ex[0].messages + "\n" == python_messages);
  CHECK(ex[1].error ==
        "messages[0] needs a 'content' that is a string, null or a list, not NaN (a non-finite "
        "number)");
  CHECK(ex[2].error == "messages[0] needs a string 'role', not -Infinity (a non-finite number)");

  const std::string answers = R"({"text":["France"],"answer_start":[12]})";
  write_file(tmp / "qa.jsonl",
             R"({"id":NaN,"context":"Paris is in France.","question":"Where?","answers":)" +
                 answers + R"(,"score":[Infinity,-Infinity]})" + "\n" +
                 R"({"context":"Paris.","question":"Where?","answers":{"text":["Paris"],)"
                 R"("answer_start":[NaN]}})" +
                 "\n" +
                 R"({"context":"Paris.","question":"Where?","answers":[{"text":Infinity,)"
                 R"("answer_start":0}]})" +
                 "\n" + R"({"context":"Paris.","question":-Infinity,"answers":[]})" + "\n");
  ReaderOptions qa;
  qa.qa = true;
  qa.text_field = "context";
  ex = read_examples(tmp / "qa.jsonl", qa);
  REQUIRE(ex.size() == 4);
  CHECK_MESSAGE(ex[0].error.empty(), ex[0].error);
  REQUIRE(ex[0].questions.size() == 1);
  CHECK(ex[0].questions[0].answer_text == "France");
  CHECK(ex[0].questions[0].answer_start == 12);
  const std::string bad_answer =
      "the first answer needs a 'text' string and a non-negative integer 'answer_start', not ";
  CHECK(ex[1].error == bad_answer + "NaN (a non-finite number)");
  CHECK(ex[2].error == bad_answer + "Infinity (a non-finite number)");
  CHECK(ex[3].error == "field 'question' is not a string but -Infinity (a non-finite number)");
}

TEST_CASE("SQuAD: numbers simdjson refuses in fields not read leave the file as without them") {
  // The file is one document: one NaN or 1e400 anywhere made all of it malformed. Python's json
  // reads these files; the questions are those of the same file without those fields, and a
  // read field holding such a number is that question's or paragraph's error, naming it.
  TempDir tmp("squad_non_finite");
  const auto squad = [](const std::string& extra_top, const std::string& extra_qa,
                        const std::string& question) {
    return R"({"version":"v2.0",)" + extra_top +
           R"("data":[{"title":"t","paragraphs":[{"context":"Paris is in France.","qas":[)"
           R"({"id":"a","question":"Where?",)" +
           extra_qa + R"("answers":[{"text":"France","answer_start":12}]},)" +
           R"({"id":"b","question":)" + question + R"(,"answers":[],"is_impossible":true}]}]}]})";
  };
  write_file(tmp / "with.json",
             squad(R"("score":NaN,"n":[1e400,18446744073709551616],)",
                   R"("loss":-Infinity,"w":[Infinity,{"v":NaN}],)", R"("Who?")"));
  write_file(tmp / "without.json", squad("", "", R"("Who?")"));
  write_file(tmp / "question.json", squad(R"("score":NaN,)", "", "Infinity"));
  write_file(tmp / "malformed.json", squad(R"("score":nan,)", "", R"("Who?")"));
  const std::string script =
      "import json, sys\n"
      "for name in sys.argv[1:]:\n"
      "    try:\n"
      "        doc = json.load(open(name, encoding=\"utf-8\"))\n"
      "    except ValueError:\n"
      "        print(\"bad\")\n"
      "        continue\n"
      "    qas = doc[\"data\"][0][\"paragraphs\"][0][\"qas\"]\n"
      "    print(\" \".join(json.dumps(q[\"question\"]) for q in qas))\n";
  std::string python;
  REQUIRE(run_command("python3 -c '" + script + "' " + (tmp / "with.json").string() + " " +
                          (tmp / "question.json").string() + " " +
                          (tmp / "malformed.json").string(),
                      &python) == 0);
  CHECK(python == "\"Where?\" \"Who?\"\n\"Where?\" Infinity\nbad\n");

  ReaderOptions o;
  o.format = InputFormat::kSquad;
  const auto got = read_examples(tmp / "with.json", o);
  const auto expected = read_examples(tmp / "without.json", o);
  REQUIRE(got.size() == 1);
  REQUIRE(expected.size() == 1);
  CHECK_MESSAGE(got[0].error.empty(), got[0].error);
  CHECK(got[0].text == expected[0].text);
  REQUIRE(got[0].questions.size() == 2);
  REQUIRE(expected[0].questions.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(got[0].questions[i].error == expected[0].questions[i].error);
    CHECK(got[0].questions[i].question == expected[0].questions[i].question);
    CHECK(got[0].questions[i].answer_start == expected[0].questions[i].answer_start);
    CHECK(got[0].questions[i].impossible == expected[0].questions[i].impossible);
  }
  CHECK(got[0].questions[0].answer_start == 12);

  const auto question = read_examples(tmp / "question.json", o);
  REQUIRE(question.size() == 1);
  REQUIRE(question[0].questions.size() == 2);
  CHECK(question[0].questions[0].error.empty());
  CHECK(question[0].questions[1].error ==
        "field 'question' is not a string but Infinity (a non-finite number)");

  const auto malformed = read_examples(tmp / "malformed.json", o);
  REQUIRE(malformed.size() == 1);
  CHECK(malformed[0].file_unusable);
  CHECK(malformed[0].error.starts_with("malformed JSON: "));
}

TEST_CASE("a reader that reuses its example starts each one afresh") {
  // read_examples() hands every reader one Example again and again, as the label pre-pass does:
  // nothing of a bad row may stay in the next one.
  TempDir tmp("reuse");
  write_file(tmp / "a.jsonl",
             "{\"text\":\"one\",\"p\":\"two\",\"y\":\"pos\"}\n{\"text\":5}\n{\"text\":\"three\","
             "\"p\":\"four\",\"y\":\"neg\"}\n");
  ReaderOptions o;
  o.pair_field = "p";
  o.label_field = "y";
  auto ex = read_examples(tmp / "a.jsonl", o);
  REQUIRE(ex.size() == 3);
  CHECK(ex[0].text_pair == "two");
  CHECK(ex[0].label == "pos");
  CHECK(!ex[1].error.empty());
  CHECK_MESSAGE(ex[2].error.empty(), ex[2].error);
  CHECK(ex[2].text == "three");
  CHECK(ex[2].text_pair == "four");
  CHECK(ex[2].label == "neg");
  CHECK(ex[2].line == 3);

  write_file(tmp / "a.txt", "bad \xFF line\ngood line\n");
  ReaderOptions t;
  t.format = InputFormat::kText;
  t.doc_separator = DocSeparator::kLine;
  ex = read_examples(tmp / "a.txt", t);
  REQUIRE(ex.size() == 2);
  CHECK(!ex[0].error.empty());
  CHECK(ex[1].error.empty());
  CHECK(ex[1].body() == "good line");
}

TEST_CASE("JSONL lines left unread and read by the tokenizing threads give the same examples") {
  // The converter's read stage hands short JSONL lines on unparsed (defer_json), and its
  // workers parse them: every example, good or bad, must equal the one the reader would have
  // made, including a line too long to be left unread.
  TempDir tmp("unread");
  const std::string long_text(kUnreadJsonBytes, 'x');
  write_file(tmp / "a.jsonl",
             "{\"t\":\"one\",\"p\":\"two\",\"y\":3}\n"
             "{\"t\":\"bad\" \n"
             "[1,2]\n"
             "{\"t\":\"caf\xC3\xA9\",\"p\":\"x\",\"y\":true}\n"
             "{\"t\":\"bad \xFF byte\",\"p\":\"x\",\"y\":1}\n"
             "{\"p\":\"no text\",\"y\":1}\n"
             "{\"t\":\"" +
                 long_text +
                 "\",\"p\":\"long\",\"y\":\"z\"}\n"
                 "{\"t\":\"last\",\"p\":\"\\u00e9\",\"y\":-1}\n");
  ReaderOptions o;
  o.text_field = "t";
  o.pair_field = "p";
  o.label_field = "y";
  const std::vector<Example> direct = read_examples(tmp / "a.jsonl", o);
  o.defer_json = true;
  std::vector<Example> deferred = read_examples(tmp / "a.jsonl", o);
  REQUIRE(deferred.size() == direct.size());
  REQUIRE(direct.size() == 8);
  CHECK(deferred[0].json_unread);
  CHECK(!deferred[6].json_unread);  // longer than kUnreadJsonBytes: read by the reader
  read_unread_json(deferred, o);
  for (size_t i = 0; i < direct.size(); ++i) {
    CAPTURE(i);
    CHECK(!deferred[i].json_unread);
    CHECK(deferred[i].body() == direct[i].body());
    CHECK(deferred[i].text_pair == direct[i].text_pair);
    CHECK(deferred[i].label == direct[i].label);
    CHECK(deferred[i].error == direct[i].error);
    CHECK(deferred[i].line == direct[i].line);
  }
  CHECK(direct[0].body() == "one");
  CHECK(direct[3].body() == "caf\xC3\xA9");
  CHECK(direct[7].text_pair == "\xC3\xA9");
  for (size_t bad : {1, 2, 4, 5}) CHECK(!direct[bad].error.empty());
}

TEST_CASE("JSONL: a text longer than 4 MiB is borrowed from its parsed line, labels intact") {
  // A long line's text is not copied out of the parsed document: the example holds the
  // document. Each must keep its own (the reader parses the next line into a new one), its
  // escapes decoded; a second text (pair) is copied as before, and a label read after the text.
  TempDir tmp("lent");
  std::string raw, text;
  for (int i = 0; text.size() < (5 << 20); ++i) {
    const std::string n = std::to_string(i);
    raw += "line " + n + " \\\"q\\\" caf\\u00e9 \\ud83d\\ude00\\n";
    text += "line " + n + " \"q\" caf\xC3\xA9 \xF0\x9F\x98\x80\n";
  }
  write_file(tmp / "a.jsonl", "{\"t\":\"" + raw + "\",\"y\":\"pos\",\"p\":\"two\"}\n" +
                                  "{\"y\":\"neg\",\"t\":\"" + raw + "!\",\"p\":\"three\"}\n" +
                                  "{\"t\":\"short\",\"y\":\"neg\",\"p\":\"four\"}\n");
  ReaderOptions o;
  o.text_field = "t";
  o.label_field = "y";
  std::vector<Example> ex = read_examples(tmp / "a.jsonl", o);
  REQUIRE(ex.size() == 3);
  for (const Example& e : ex) CHECK_MESSAGE(e.error.empty(), e.error);
  CHECK(ex[0].borrowed());
  CHECK(ex[0].text.empty());
  CHECK(ex[0].body() == text);
  CHECK(ex[0].label == "pos");
  CHECK(ex[1].borrowed());
  CHECK(ex[1].body() == text + "!");
  CHECK(ex[1].label == "neg");
  CHECK(ex[2].body() == "short");
  CHECK(!ex[2].borrowed());

  o.pair_field = "p";
  ex = read_examples(tmp / "a.jsonl", o);
  REQUIRE(ex.size() == 3);
  CHECK(!ex[0].borrowed());
  CHECK(ex[0].text == text);
  CHECK(ex[0].text_pair == "two");
  CHECK(ex[1].text == text + "!");
  CHECK(ex[1].text_pair == "three");
  CHECK(ex[1].label == "neg");
}
TEST_CASE("SQuAD: answer_start in code points becomes a byte offset") {
  TempDir tmp("squad");
  // "Zürich — 1291": Z ü r i c h ' ' — ' ' = 9 code points before "1291", 12 bytes.
  write_file(
      tmp / "s.json",
      "{\"data\":[{\"paragraphs\":[{\"context\":\"Z\xC3\xBCrich \xE2\x80\x94 "
      "1291\",\"qas\":[{\"id\":\"a\","
      "\"question\":\"When?\",\"answers\":[{\"text\":\"1291\",\"answer_start\":9}]},{\"id\":\"b\","
      "\"question\":\"Who?\",\"answers\":[],\"is_impossible\":true}]}]}]}");
  ReaderOptions o;
  o.format = InputFormat::kSquad;
  auto ex = read_examples(tmp / "s.json", o);
  REQUIRE(ex.size() == 1);
  REQUIRE(ex[0].questions.size() == 2);
  CHECK(ex[0].questions[0].answer_start == 12u);
  CHECK(ex[0].questions[0].error.empty());
  CHECK(ex[0].questions[1].impossible);
  CHECK(ex[0].questions[1].example_index == 1u);
}

TEST_CASE("labels: numeric, lexicographic and given orders") {
  CHECK(LabelMap::from_observed({"10", "2", "-1", "0"}).names() ==
        std::vector<std::string>{"-1", "0", "2", "10"});
  CHECK(LabelMap::from_observed({"10", "2", "b"}).names() ==
        std::vector<std::string>{"10", "2", "b"});
  // Integers of any length stay numeric (19 digits and more turned the order lexicographic);
  // equal values ("-0", "0") keep their byte order. The order is Python's sorted(key=int).
  const LabelMap long_ints =
      LabelMap::from_observed({"12345678901234567890", "9", "-98765432109876543210", "-5", "0",
                               "100000000000000000000", "007", "-0", "-10"});
  CHECK(long_ints.order() == "numeric");
  CHECK(long_ints.names() == std::vector<std::string>{"-98765432109876543210", "-10", "-5", "-0",
                                                      "0", "007", "9", "12345678901234567890",
                                                      "100000000000000000000"});
  CHECK(LabelMap::from_observed({"pos", "neg", "Neutral"}).names() ==
        std::vector<std::string>{"Neutral", "neg", "pos"});
  auto given = LabelMap::from_list({"pos", "neg"});
  CHECK(given.index("neg") == 1);
  CHECK(!given.index("other"));
  CHECK_THROWS_AS(LabelMap::from_list({"a", "", "b"}), Error);
  CHECK_THROWS_AS(LabelMap::from_list({"a", "b", "a"}), Error);
}

TEST_CASE("parts: contiguous file ranges that cover every file once") {
  for (size_t files : {0u, 1u, 5u, 7u, 100u})
    for (uint32_t n : {1u, 2u, 3u, 8u}) {
      size_t next = 0;
      for (uint32_t i = 0; i < n; ++i) {
        auto [a, b] = part_file_range(files, {i, n});
        CHECK(a == next);
        CHECK(b >= a);
        next = b;
      }
      CHECK(next == files);
    }
  CHECK(parse_part("2/4").index == 2u);
  CHECK_THROWS_AS(parse_part("4/4"), Error);
  CHECK_THROWS_AS(parse_part("1-4"), Error);
  CHECK_THROWS_AS(parse_part("1/4x"), Error);
}

TEST_CASE("--part auto: i/N from a Slurm array or a Kubernetes Indexed Job, else a clear error") {
  using Vars = std::map<std::string, std::string>;
  auto part = [](const std::string& text, const Vars& vars) {
    return resolve_part(text, [&vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  auto error_of = [&](const std::string& text, const Vars& vars) -> std::string {
    try {
      part(text, vars);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  // sbatch --array=0-3, task 2; and --array=1-4, task 3 (ids need not start at 0).
  const Vars slurm0{{"SLURM_ARRAY_TASK_ID", "2"},
                    {"SLURM_ARRAY_TASK_MIN", "0"},
                    {"SLURM_ARRAY_TASK_MAX", "3"},
                    {"SLURM_ARRAY_TASK_COUNT", "4"},
                    {"SLURM_ARRAY_TASK_STEP", "1"}};
  CHECK(part("auto", slurm0).index == 2u);
  CHECK(part("auto", slurm0).count == 4u);
  CHECK(part("auto/4", slurm0).index == 2u);
  const Vars slurm1{{"SLURM_ARRAY_TASK_ID", "3"},
                    {"SLURM_ARRAY_TASK_MIN", "1"},
                    {"SLURM_ARRAY_TASK_MAX", "4"},
                    {"SLURM_ARRAY_TASK_COUNT", "4"}};
  CHECK(part("auto", slurm1).index == 2u);
  CHECK(part("auto", slurm1).count == 4u);
  // A stepped or sparse array has no 0..N-1 numbering.
  Vars stepped = slurm0;
  stepped["SLURM_ARRAY_TASK_STEP"] = "2";
  CHECK(error_of("auto", stepped).find("contiguous range with step 1") != std::string::npos);
  Vars sparse = slurm0;
  sparse["SLURM_ARRAY_TASK_MAX"] = "5";  // --array=0,2,5,...: 4 tasks over 6 ids
  CHECK(error_of("auto", sparse).find("contiguous") != std::string::npos);
  CHECK(error_of("auto/8", slurm0).find("the Slurm array has 4 tasks") != std::string::npos);
  // Kubernetes: the index from the pod, the count from the command line.
  const Vars k8s{{"JOB_COMPLETION_INDEX", "5"}};
  CHECK(part("auto/8", k8s).index == 5u);
  CHECK(part("auto/8", k8s).count == 8u);
  CHECK(error_of("auto", k8s).find("use --part auto/N") != std::string::npos);
  CHECK(error_of("auto/5", k8s).find("outside 0 <= i < N") != std::string::npos);
  // Slurm wins when both are set.
  Vars both = slurm0;
  both["JOB_COMPLETION_INDEX"] = "0";
  CHECK(part("auto/4", both).index == 2u);
  // Neither: says which variables it looked for; inside a non-array Slurm job, says so.
  const std::string none = error_of("auto", {});
  CHECK(none.find("SLURM_ARRAY_TASK_ID") != std::string::npos);
  CHECK(none.find("JOB_COMPLETION_INDEX") != std::string::npos);
  CHECK(error_of("auto", {{"SLURM_JOB_ID", "17"}}).find("not an array job") != std::string::npos);
  CHECK(error_of("auto", {{"SLURM_ARRAY_TASK_ID", "x1"}}).find("not a task number") !=
        std::string::npos);
  CHECK(error_of("auto/", k8s).find("i/N, auto or auto/N") != std::string::npos);
  CHECK(error_of("autox", k8s).find("i/N, auto or auto/N") != std::string::npos);
  CHECK(part("1/3", {}).index == 1u);  // plain i/N ignores the environment
}

TEST_CASE(
    "TSV: quoted speech at a field start is kept as written; --no-quoting keeps every quote") {
  TempDir tmp("tsvq");
  write_file(tmp / "a.tsv", "text\tlabel\n\"Hi,\" she said.\ta\n\"x\ty\"\tb\n");
  ReaderOptions o;
  o.format = InputFormat::kTsv;
  o.label_field = "label";
  auto ex = read_examples(tmp / "a.tsv", o);
  REQUIRE(ex.size() == 2);
  CHECK(ex[0].text == "\"Hi,\" she said.");
  CHECK(ex[0].label == "a");
  CHECK(ex[1].text == "x\ty");  // RFC 4180: the quoted tab belongs to the field
  o.quoting = false;
  ex = read_examples(tmp / "a.tsv", o);
  REQUIRE(ex.size() == 2);
  CHECK(ex[0].text == "\"Hi,\" she said.");
  CHECK(ex[1].error == "expected 2 fields, found 3");  // "x / y" / b: the tab splits
  // CSV stays strict.
  write_file(tmp / "a.csv", "text,label\n\"Hi,\" she said.,a\n");
  o.format = InputFormat::kCsv;
  o.quoting = true;
  ex = read_examples(tmp / "a.csv", o);
  REQUIRE(ex.size() == 1);
  CHECK(ex[0].error.find("after a closing quote") != std::string::npos);
}

TEST_CASE("formats: inferred from the extension in any case, after a compressed file's own") {
  CHECK(infer_input_format("DATA.JSONL") == InputFormat::kJsonl);
  CHECK(infer_input_format("a/b.Jsonl.GZ") == InputFormat::kJsonl);
  CHECK(infer_input_format("notes.TXT.zstd") == InputFormat::kText);
  CHECK(infer_input_format("rows.Csv.zst") == InputFormat::kCsv);
  CHECK(!infer_input_format("archive.tar.gz"));
  CHECK(!infer_input_format("README"));
}

TEST_CASE("formats: .parquet is inferred; without DuckDB it is refused with what to do") {
  CHECK(infer_input_format("data/train-00000-of-00002.parquet") == InputFormat::kParquet);
  CHECK(parse_input_format("parquet") == InputFormat::kParquet);
  CHECK(std::string(input_format_name(InputFormat::kParquet)) == "parquet");
  if (parquet_input_available()) return;  // tests/shardify/parquet_test.cc covers the reader
  TempDir tmp("nopq");
  write_file(tmp / "a.parquet", "PAR1");
  ReaderOptions o;
  o.format = InputFormat::kParquet;
  try {
    ExampleReader::open(tmp / "a.parquet", 0, o);
    FAIL("a build without DuckDB opened a Parquet file");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK(e.file() == (tmp / "a.parquet").string());
    CHECK(std::string(e.what()).find("built without Parquet input") != std::string::npos);
  }
}

TEST_CASE("inputs: a glob expands to its regular files in byte order") {
  TempDir tmp("glob");
  fs::create_directories(tmp / "data" / "sub.parquet");  // a directory that matches: not a file
  for (const char* name : {"train-00001-of-00002.parquet", "train-00000-of-00002.parquet",
                           "test-00000-of-00001.parquet"})
    write_file(tmp / "data" / name, "x");
  const auto files = list_input_files({(tmp / "data" / "train-*.parquet").string()});
  REQUIRE(files.size() == 2);
  CHECK(files[0].path == (tmp / "data" / "train-00000-of-00002.parquet").string());
  CHECK(files[1].path == (tmp / "data" / "train-00001-of-00002.parquet").string());
  CHECK(list_input_files({(tmp / "data" / "*.parquet").string()}).size() == 3);
  CHECK_THROWS_AS(list_input_files({(tmp / "data" / "valid-*.parquet").string()}), Error);
}

TEST_CASE("inputs: directories without a file are named in the error") {
  TempDir tmp("empty-inputs");
  fs::create_directories(tmp / "empty" / ".hidden");
  write_file(tmp / "empty" / ".hidden" / "a.txt", "skipped\n");
  try {
    list_input_files({(tmp / "empty").string()});
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(e.reason().find("no input files found in " + (tmp / "empty").string()) !=
          std::string::npos);
  }
}

TEST_CASE("inputs: standard input, a pipe or a device is refused by name, not by a system error") {
  TempDir tmp("not-files");
  REQUIRE(::mkfifo((tmp / "fifo").c_str(), 0600) == 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-", "standard input is not read"},
      {(tmp / "fifo").string(), "not a regular file"},
      {"/dev/null", "not a regular file"}};
  for (const auto& [input, says] : cases) {
    CAPTURE(input);
    try {
      list_input_files({input});
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      CHECK(e.file() == input);
      CHECK(e.reason().find(says) != std::string::npos);
    }
  }
  // A file that is named "-" is a file.
  const fs::path here = fs::current_path();
  fs::current_path(tmp.path());
  write_file("-", "text\n");
  const auto files = list_input_files({"-"});
  fs::current_path(here);
  REQUIRE(files.size() == 1);
  CHECK(files[0].path == "-");
  CHECK(files[0].bytes == 5);
}
