// SentencePiece models trained here with Debian's spm_train on the fixture text (itself from
// Debian packages): Unigram and BPE with byte_fallback, written as tokenizer.json by the HF
// binding (tests/oracle/spm_to_tokenizer_json.js) and compared with HF tokenizers; the .model
// files themselves are compared with spm_encode.
#include <doctest/doctest.h>

#include "parity_check.h"

using namespace shardkit;
using namespace shardkit::testing;

namespace {

// Trains (once per build tree) a model with spm_train; returns the .model path.
std::filesystem::path train(const std::string& name, const std::string& flags) {
  auto dir = oracle_files() / "spm";
  std::filesystem::create_directories(dir);
  auto model = dir / (name + ".model");
  if (!std::filesystem::exists(model)) {
    auto input = fixture_text();
    std::string log;
    int rc = run_command("spm_train --input=" + input.string() +
                             " --model_prefix=" + (dir / name).string() +
                             " --vocab_size=1200 --hard_vocab_limit=false --num_threads=1 "
                             "--character_coverage=0.995 " +
                             flags,
                         &log);
    REQUIRE_MESSAGE(rc == 0, "spm_train failed: " << log);
  }
  return model;
}

// The model as tokenizer.json, through the HF binding's constructors.
std::filesystem::path to_tokenizer_json(const std::filesystem::path& model) {
  auto dump = model;
  dump.replace_extension(".dump.json");
  auto json = model;
  json.replace_extension(".json");
  std::string log;
  int rc = run_command("/usr/bin/python3 " + (oracle_dir() / "spm_dump.py").string() + " " +
                           model.string() + " " + dump.string() + " && node " +
                           (oracle_dir() / "spm_to_tokenizer_json.js").string() + " " +
                           dump.string() + " " + json.string(),
                       &log);
  REQUIRE_MESSAGE(rc == 0, "converting " << model << " failed: " << log);
  return json;
}

}  // namespace

TEST_CASE("SentencePiece Unigram (nmt_nfkc charsmap, Metaspace) as tokenizer.json matches HF") {
  auto json =
      to_tokenizer_json(train("unigram", "--model_type=unigram --remove_extra_whitespaces=false"));
  check_full({"spm_unigram_json", json, {}, json});
}

TEST_CASE("SentencePiece BPE with byte_fallback as tokenizer.json matches HF") {
  auto json = to_tokenizer_json(
      train("bpe", "--model_type=bpe --byte_fallback=true --remove_extra_whitespaces=false"));
  check_full({"spm_bpe_json", json, {}, json});
}
