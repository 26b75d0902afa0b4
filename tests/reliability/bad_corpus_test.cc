// Nasty corpus input through `shardify` under both --on-error policies. Each input file mixes
// good examples with bad ones at known lines. With `fail` the run stops, exits non-zero, names
// file:line of the first bad example and publishes nothing. With `skip` it exits 0, counts every
// bad example in its summary with file:line, and loses no good example: its dataset equals, record
// for record, the dataset made from a file holding only the good examples (as plain LF lines).
#include <doctest/doctest.h>

#include <cstdio>

#include "core/verify.h"
#include "shardify_fixture.h"

namespace shardkit::reliability {
namespace {

// A number field of shardify's --json summary.
uint64_t summary_number(const std::string& out, const std::string& key) {
  const size_t at = out.find("\"" + key + "\":");
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << key << "' in: " << out);
  return std::stoull(out.substr(at + key.size() + 3));
}

struct Case {
  testing::TempDir tmp{"bad-corpus"};
  fs::path vocab = write_vocab(tmp.path());
  std::string task_args;  // e.g. "--task lm --max-len 16"

  explicit Case(std::string task) : task_args(std::move(task)) {}

  std::string command(const std::vector<fs::path>& inputs, const fs::path& out,
                      const std::string& policy, const std::string& extra = {}) const {
    std::string c = task_args + " --threads 2 --json --tokenizer " + shell_quote(vocab.string()) +
                    " --on-error " + policy + " --out " + shell_quote(out.string()) + " " + extra;
    for (const fs::path& in : inputs) c += " --input " + shell_quote(in.string());
    return c;
  }

  // Runs both policies on `bad` (plus `others`) and compares the skip run with the good-only run.
  // `bad_lines` are the 1-based lines (or, for SQuAD, locations) the summary must name, first
  // one first; messages read "file:LINE: reason" or "file: LOCATION: reason".
  static std::string marker(const std::string& line) {
    return line.rfind("data", 0) == 0 ? ": " + line + ":" : ":" + line + ":";
  }
  // `ignore` names fields that legitimately differ (a QA record's example ordinal in its file).
  void check(const std::string& name, const std::string& bad, const std::string& good,
             const std::vector<std::string>& bad_lines,
             const std::vector<std::string>& ignore = {}) const {
    const std::string extra;
    INFO("case ", name);
    const fs::path bad_path = tmp / name, good_path = tmp / ("good-" + name);
    testing::write_file(bad_path, bad);
    testing::write_file(good_path, good);
    const std::string bad_file = bad_path.string();

    std::string out;
    const fs::path failed = tmp / ("fail-" + name);
    const int rc_fail = run_shardify(command({bad_path}, failed, "fail", extra), &out);
    INFO("fail run: ", out);
    CHECK(rc_fail != 0);
    CHECK(out.find(bad_file + marker(bad_lines.front())) != std::string::npos);
    CHECK_FALSE(fs::exists(failed));  // nothing published
    for (const auto& e : fs::directory_iterator(tmp.path()))
      CHECK(e.path().filename().string().find(".partial-") == std::string::npos);

    const fs::path skipped = tmp / ("skip-" + name), reference = tmp / ("ref-" + name);
    const int rc_skip = run_shardify(command({bad_path}, skipped, "skip", extra), &out);
    INFO("skip run: ", out);
    REQUIRE(rc_skip == 0);
    CHECK(summary_number(out, "skipped") == bad_lines.size());
    for (const std::string& line : bad_lines)
      CHECK(out.find(bad_file + marker(line)) != std::string::npos);
    CHECK(verify_dataset(skipped).ok());
    std::string ref_out;
    REQUIRE(run_shardify(command({good_path}, reference, "fail", extra), &ref_out) == 0);
    CHECK(summary_number(out, "documents") == summary_number(ref_out, "documents"));
    const std::string diff = compare_datasets(skipped, reference, ignore);
    CHECK_MESSAGE(diff.empty(), "skip run vs good-only run: " << diff);
  }
};

std::string nested(int depth) {
  return std::string(static_cast<size_t>(depth), '[') +
         std::string(static_cast<size_t>(depth), ']');
}

TEST_CASE("JSONL: BOM, CRLF, escaped and raw NUL, invalid UTF-8, unterminated, deep nesting") {
  Case c("--task lm --max-len 16");
  const std::string bad =
      std::string("\xEF\xBB\xBF{\"text\": \"hello world\"}\n") +
      "{\"text\": \"the \\u0000 world\"}\n" + "{\"text\": \"bad \xFF byte\"}\n" +
      std::string("{\"text\": \"raw \0 nul\"}\n", 22) + "{\"text\": \"crlf line\"}\r\n" +
      "{\"text\": \"unterminated\n" + "{\"text\": " + nested(5000) + "}\n" +
      "{\"text\": \"data shard\", \"meta\": {\"text\": \"nested is fine\"}}\n" +
      "{\"text\": \"hello\"}";  // no final newline
  const std::string good =
      std::string("{\"text\": \"hello world\"}\n") + "{\"text\": \"the \\u0000 world\"}\n" +
      "{\"text\": \"crlf line\"}\n" +
      "{\"text\": \"data shard\", \"meta\": {\"text\": \"nested is fine\"}}\n" +
      "{\"text\": \"hello\"}\n";
  c.check("a.jsonl", bad, good, {"3", "4", "6", "7"});
}

TEST_CASE("text: BOM, CRLF, invalid UTF-8, NUL, empty lines") {
  Case c("--task lm --doc-sep line --max-len 16");
  const std::string bad = std::string("\xEF\xBB\xBFhello world\r\n") + "the world\r\n" +
                          "bad \xC3\x28 utf\n" + std::string("nul \0 inside\n", 13) + "\n\n" +
                          "truncated \xE2\x82\n" + "hello";
  const std::string good = std::string("hello world\n") + "the world\n" +
                           std::string("nul \0 inside\n", 13) + "\n\n" + "hello\n";
  c.check("a.txt", bad, good, {"3", "7"});
}

TEST_CASE("CSV and TSV: BOM, CRLF, quoting, unknown labels, short rows, unterminated quote") {
  Case c("--task cls --max-len 16 --labels pos,neg");
  // Line 8 opens a quote that never closes: line 9 is inside it, so it is not a good row.
  const std::string bad = std::string("\xEF\xBB\xBFtext,label\r\n") +
                          "\"hello, world\",pos\r\n" +         // 2
                          "the,maybe\n" +                      // 3: unknown label
                          "\"multi\nline \"\"q\"\"\",neg\n" +  // 4-5
                          "short\n" +                          // 6: one field
                          "hello,neg\n" +                      // 7
                          "\"unterminated,pos\n" +             // 8
                          "world,neg\n";
  const std::string good = std::string("text,label\n") + "\"hello, world\",pos\n" +
                           "\"multi\nline \"\"q\"\"\",neg\n" + "hello,neg\n";
  c.check("a.csv", bad, good, {"3", "6", "8"});

  const std::string tsv = std::string("\xEF\xBB\xBFlabel\ttext\r\n") + "pos\thello world\r\n" +
                          "maybe\tthe world\r\n" + "neg\tbad \xFF\r\n" + "neg\tdata\r\n";
  const std::string tsv_good = std::string("label\ttext\n") + "pos\thello world\n" + "neg\tdata\n";
  c.check("a.tsv", tsv, tsv_good, {"3", "4"});
}

TEST_CASE("SQuAD JSON: a wrong answer offset, an unterminated file, deep nesting") {
  Case c("--task qa --max-len 48 --doc-stride 8 --max-query-len 8");
  auto squad = [](const std::string& qas) {
    return "{\"data\": [{\"paragraphs\": [{\"context\": \"hello world the data shard\", \"qas\": "
           "[" +
           qas + "]}]}]}";
  };
  const std::string q1 =
      "{\"id\": \"1\", \"question\": \"the world\", \"answers\": [{\"text\": \"world\", "
      "\"answer_start\": 6}]}";
  const std::string q2 =
      "{\"id\": \"2\", \"question\": \"hello\", \"answers\": [{\"text\": \"shard\", "
      "\"answer_start\": 3}]}";  // 'shard' is not at 3
  const std::string q3 =
      "{\"id\": \"3\", \"question\": \"data\", \"answers\": [], \"is_impossible\": true}";
  const std::string with_bad_q = squad(q1 + ", " + q2 + ", " + q3);
  const std::string good_only = squad(q1 + ", " + q3);
  // The bad question is named by its place in the file rather than a line.
  c.check("a.json", with_bad_q, good_only, {"data[0].paragraphs[0].qas[1]"}, {"example_index"});
  // The same file behind a UTF-8 byte-order mark reads the same.
  c.check("bom.json", "\xEF\xBB\xBF" + with_bad_q, good_only, {"data[0].paragraphs[0].qas[1]"},
          {"example_index"});

  // A file that is not JSON as a whole has no question to read: the conversion stops under
  // either policy, naming it. An empty file holds no question, as an empty file of any format.
  const std::vector<std::pair<std::string, std::string>> broken_files = {
      {"unterminated.json", with_bad_q.substr(0, 60)},
      {"deep.json", "{\"data\": " + nested(5000) + "}"}};
  const fs::path good_path = c.tmp / "good-only.json";
  testing::write_file(good_path, good_only);
  for (const auto& [name, broken] : broken_files) {
    INFO("broken file ", name);
    const fs::path broken_path = c.tmp / name;
    testing::write_file(broken_path, broken);
    for (const std::string policy : {"fail", "skip"}) {
      std::string out;
      const fs::path out_dir = c.tmp / (policy + "-" + name);
      CHECK(run_shardify(c.command({good_path, broken_path}, out_dir, policy), &out) != 0);
      CHECK_MESSAGE(out.find(broken_path.string() + ": malformed JSON") != std::string::npos, out);
      CHECK_FALSE(fs::exists(out_dir));
    }
  }
  const fs::path empty_path = c.tmp / "empty.json", ref = c.tmp / "r-empty";
  testing::write_file(empty_path, "");
  REQUIRE(run_shardify(c.command({good_path}, ref, "fail")) == 0);
  for (const std::string policy : {"fail", "skip"}) {
    std::string out;
    const fs::path out_dir = c.tmp / (policy + "-empty");
    REQUIRE(run_shardify(c.command({good_path, empty_path}, out_dir, policy), &out) == 0);
    CHECK(summary_number(out, "skipped") == 0);
    CHECK(compare_datasets(out_dir, ref).empty());
  }
}

TEST_CASE("empty files are no examples, not errors") {
  Case c("--task lm --max-len 16");
  const fs::path empty = c.tmp / "empty.jsonl", good = c.tmp / "good.jsonl";
  testing::write_file(empty, "");
  testing::write_file(good, "{\"text\": \"hello world\"}\n{\"text\": \"the data\"}\n");
  for (const std::string policy : {"fail", "skip"}) {
    std::string out;
    const fs::path mixed = c.tmp / ("mixed-" + policy), ref = c.tmp / ("ref-" + policy);
    REQUIRE(run_shardify(c.command({empty, good}, mixed, policy), &out) == 0);
    CHECK(summary_number(out, "skipped") == 0);
    REQUIRE(run_shardify(c.command({good}, ref, policy)) == 0);
    CHECK(compare_datasets(mixed, ref).empty());
    // Only empty input: a clear error naming the input and publishing nothing, or with
    // --allow-empty an empty dataset that verifies.
    const fs::path only = c.tmp / ("only-" + policy);
    CHECK(run_shardify(c.command({empty}, only, policy), &out) != 0);
    CHECK_MESSAGE(out.find("empty.jsonl") != std::string::npos, out);
    CHECK_MESSAGE(out.find("--allow-empty") != std::string::npos, out);
    CHECK(!fs::exists(only));
    REQUIRE(run_shardify(c.command({empty}, only, policy) + " --allow-empty", &out) == 0);
    CHECK(verify_dataset(only).ok());
    CHECK(Dataset::open(only).size() == 0);
  }
}

TEST_CASE("a 100 MB single line, generated at test time, under both policies") {
  Case c("--task lm --doc-sep line --max-len 512");
  const fs::path big = c.tmp / "big.txt";
  const std::string unit = "hello world the ";  // three tokens in 16 bytes
  const uint64_t units = (100u << 20) / unit.size();
  {
    std::string line;
    line.reserve(units * unit.size() + 1);
    for (uint64_t i = 0; i < units; ++i) line += unit;
    line += '\n';
    testing::write_file(big, line);
  }
  for (const std::string policy : {"fail", "skip"}) {
    std::string out;
    const fs::path ds = c.tmp / ("big-" + policy);
    REQUIRE(run_shardify(c.command({big}, ds, policy), &out) == 0);
    INFO(out);
    CHECK(summary_number(out, "documents") == 1);
    CHECK(summary_number(out, "skipped") == 0);
    CHECK(summary_number(out, "tokens") >= 3 * units);
    CHECK(verify_dataset(ds).ok());
    CHECK(Dataset::open(ds).size() >= 3 * units / 512);
    fs::remove_all(ds);
  }
}

}  // namespace
}  // namespace shardkit::reliability
