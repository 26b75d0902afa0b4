// What a new user meets first (issue 14): --out with missing parents, what a .txt document is,
// and the tools' usage errors and messages.
#include <doctest/doctest.h>

#include <algorithm>

#include "shardify/shardify_util.h"

using namespace shardkit::testing;
namespace fs = std::filesystem;

namespace {

std::string gpt2() { return " --tokenizer " + q(gpt2_json()); }

uint64_t summary_documents(const std::string& json_summary) {
  simdjson::dom::parser p;
  return p.parse(json_summary)["documents"].get_uint64().value();
}

}  // namespace

TEST_CASE("--out creates missing parents and still publishes by one rename") {
  TempDir tmp("parents");
  const fs::path out = tmp / "data" / "nested" / "lm";
  shardify_ok("--input " + q(shardify_data("docs.jsonl")) + " --task lm --max-len 16" + gpt2() +
              " --out " + q(out));
  CHECK(run_command(inspect_bin() + " verify " + q(out)) == 0);
  // No staging directory is left beside the dataset.
  CHECK(sorted_names(out.parent_path()) == std::vector<std::string>{"lm"});

  // A parent that is a file cannot be made: a clear error naming it, and no dataset.
  write_file(tmp / "plain-file", "x");
  std::string log;
  CHECK(shardify("--input " + q(shardify_data("docs.jsonl")) + " --task lm" + gpt2() + " --out " +
                     q(tmp / "plain-file" / "ds"),
                 &log) != 0);
  CHECK_MESSAGE(log.find("plain-file") != std::string::npos, log);
  CHECK(fs::is_regular_file(tmp / "plain-file"));
}

TEST_CASE("--doc-sep: a .txt file is one document by default; line and blank split it") {
  TempDir tmp("docsep");
  fs::create_directories(tmp / "books");
  // Leading and trailing blank lines are not text; inner blank lines (paragraphs) and the
  // newlines of the text are. CRLF line ends read as "\n".
  const std::vector<std::string> files = {
      "\n\nCall me Ishmael. Some years ago,\r\nnever mind how long precisely.\r\n\r\n"
      "It is a way I have of driving off the spleen.\n\n\n",
      "A second book.\nIts second line.\n\nIts second paragraph.", "   \nA third, in one line.\n"};
  const std::vector<std::string> documents = {
      "Call me Ishmael. Some years ago,\nnever mind how long precisely.\n\n"
      "It is a way I have of driving off the spleen.",
      "A second book.\nIts second line.\n\nIts second paragraph.", "A third, in one line."};
  for (size_t i = 0; i < files.size(); ++i)
    write_file(tmp / "books" / ("b" + std::to_string(i) + ".txt"), files[i]);

  std::string out;
  shardify_ok("--input " + q(tmp / "books") + " --task lm --max-len 64 --json" + gpt2() +
                  " --out " + q(tmp / "file"),
              &out);
  CHECK(summary_documents(out) == 3);
  // Packing restarts at each file, so each file is one record here: HF's ids of the whole
  // document followed by <|endoftext|> (50256).
  const auto expected = hf_ids(gpt2_json(), documents, "plain");
  const auto recs = read_records(tmp / "file");
  REQUIRE(recs.size() == 3);
  for (size_t i = 0; i < recs.size(); ++i) {
    INFO("file " << i);
    std::vector<uint32_t> want = expected[i];
    want.push_back(50256);
    CHECK(real_ids(recs[i]) == want);
  }
  CHECK(shardkit::Dataset::open(tmp / "file").info().source.doc_sep == "file");

  shardify_ok("--input " + q(tmp / "books") + " --task lm --doc-sep line --json" + gpt2() +
                  " --out " + q(tmp / "line"),
              &out);
  CHECK(summary_documents(out) == 7);  // non-blank lines
  shardify_ok("--input " + q(tmp / "books") + " --task lm --doc-sep blank --json" + gpt2() +
                  " --out " + q(tmp / "blank"),
              &out);
  CHECK(summary_documents(out) == 5);  // paragraphs
}

TEST_CASE("a whole-file document reports invalid UTF-8 at the line that holds it") {
  TempDir tmp("docsep-bad");
  write_file(tmp / "bad.txt", "fine\n\nstill fine\nbad \xC3\x28 byte\nlast\n");
  std::string log;
  CHECK(
      shardify("--input " + q(tmp / "bad.txt") + " --task lm" + gpt2() + " --out " + q(tmp / "ds"),
               &log) == 1);
  CHECK_MESSAGE(log.find("bad.txt:4") != std::string::npos, log);
  CHECK_MESSAGE(log.find("invalid UTF-8 at byte 4") != std::string::npos, log);
  CHECK(!fs::exists(tmp / "ds"));
}

TEST_CASE("usage errors print help and exit 2") {
  std::string log;
  CHECK(run_command(inspect_bin(), &log) == 2);
  CHECK_MESSAGE(log.find("Usage: shard-inspect") != std::string::npos, log);
  for (const char* command : {"info", "stats", "verify", "dump", "order"})
    CHECK_MESSAGE(log.find(command) != std::string::npos, command);
  CHECK(run_command(shardify_bin(), &log) == 2);
  CHECK_MESSAGE(log.find("--doc-sep") != std::string::npos, log);
  CHECK(run_command(inspect_bin() + " dump --no-such-flag x", &log) == 2);
  CHECK(run_command(shardify_bin() + " --task nope", &log) == 2);
  CHECK(run_command(inspect_bin() + " --help", &log) == 0);
}

TEST_CASE("dump states its defaults and refuses --from past the end") {
  TempDir tmp("dump");
  shardify_ok("--input " + q(shardify_data("docs.jsonl")) + " --task cls --label-field id" +
              gpt2() + " --max-len 16 --out " + q(tmp / "ds"));
  const uint64_t n = shardkit::Dataset::open(tmp / "ds").size();
  REQUIRE(n > 2);
  std::string log;
  REQUIRE(run_command(inspect_bin() + " dump --help", &log) == 0);
  CHECK_MESSAGE(log.find("--from UINT=0 ") != std::string::npos, log);
  CHECK_MESSAGE(log.find("--count UINT=10 ") != std::string::npos, log);
  CHECK(run_command(inspect_bin() + " dump " + q(tmp / "ds") + " --from " + std::to_string(n),
                    &log) != 0);
  CHECK_MESSAGE(log.find("past the end") != std::string::npos, log);
  CHECK_MESSAGE(log.find("has " + std::to_string(n) + " records") != std::string::npos, log);
  // The last record alone still prints; a count past the end stops at the end.
  REQUIRE(run_command(inspect_bin() + " dump --json " + q(tmp / "ds") + " --from " +
                          std::to_string(n - 1) + " --count 5",
                      &log) == 0);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
}

TEST_CASE("qa --doc-stride error shows the numbers it compared") {
  TempDir tmp("stride");
  std::string log;
  CHECK(shardify("--input " + q(shardify_data("squad_v1.json")) +
                     " --task qa --max-len 64 --max-query-len 16 --doc-stride 50 --tokenizer " +
                     q(bert_json()) + " --out " + q(tmp / "qa"),
                 &log) != 0);
  // [CLS] question [SEP] context [SEP]: 64 - 16 - 3 = 45 context tokens.
  CHECK_MESSAGE(log.find("--max-len 64") != std::string::npos, log);
  CHECK_MESSAGE(log.find("--max-query-len 16") != std::string::npos, log);
  CHECK_MESSAGE(log.find("3 special tokens leaves 45 context tokens") != std::string::npos, log);
  CHECK_MESSAGE(log.find("--doc-stride 50") != std::string::npos, log);
}

TEST_CASE("summaries name their ratios; piped output carries no escape codes") {
  TempDir tmp("ratio");
  std::string out;
  shardify_ok("--input " + q(shardify_data("docs.jsonl")) + " --task lm" + gpt2() + " --out " +
                  q(tmp / "ds"),
              &out);
  CHECK_MESSAGE(out.find("input text / output") != std::string::npos, out);
  std::string info;
  REQUIRE(run_command(inspect_bin() + " info " + q(tmp / "ds"), &info) == 0);
  CHECK_MESSAGE(info.find("records / on disk") != std::string::npos, info);
  for (const std::string& text : {out, info}) {
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\r') == std::string::npos);
  }
}
