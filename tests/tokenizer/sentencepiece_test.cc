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

namespace {

// Our ids for every fixture line against spm_encode's (SentencePiece's own C++ encoder), and
// our decode against spm_decode's where the model has no unknown pieces to render.
void check_spm_model(const std::string& name, const std::filesystem::path& model, bool decode) {
  std::vector<std::string> lines;
  auto input = fixture_text(&lines);
  auto ids_file = oracle_files() / "spm" / (name + ".ids");
  auto text_file = oracle_files() / "spm" / (name + ".decoded");
  std::string log;
  REQUIRE_MESSAGE(run_command("spm_encode --model=" + model.string() + " --output_format=id < " +
                                  input.string() + " > " + ids_file.string(),
                              &log) == 0,
                  log);
  REQUIRE_MESSAGE(run_command("spm_decode --model=" + model.string() + " --input_format=id < " +
                                  ids_file.string() + " > " + text_file.string(),
                              &log) == 0,
                  log);
  std::vector<std::string> expected_ids, expected_text;
  for (auto* dest : {&expected_ids, &expected_text}) {
    std::string all = read_file(dest == &expected_ids ? ids_file : text_file);
    size_t pos = 0;
    while (pos < all.size()) {
      size_t nl = all.find('\n', pos);
      dest->push_back(all.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  REQUIRE(expected_ids.size() == lines.size());
  auto tok = Tokenizer::from_file(model);
  size_t id_diff = 0, decode_diff = 0, shown = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<uint32_t> ids;
    tok->encode_ids(lines[i], ids);
    std::string got;
    for (size_t k = 0; k < ids.size(); ++k) got += (k ? " " : "") + std::to_string(ids[k]);
    Encoding e = tok->encode(lines[i]);
    bool ids_ok = got == expected_ids[i] && e.ids == ids;
    bool decode_ok = !decode || tok->decode(ids, false) == expected_text[i];
    id_diff += !ids_ok;
    decode_diff += !decode_ok;
    if ((!ids_ok || !decode_ok) && shown++ < 5)
      MESSAGE(name << " line " << i + 1 << ": " << lines[i].substr(0, 200) << "\n  ours " << got
                   << "\n  spm  " << expected_ids[i] << "\n  ours decode "
                   << tok->decode(ids, false) << "\n  spm decode  " << expected_text[i]);
  }
  MESSAGE(name << ": " << lines.size() - id_diff << "/" << lines.size()
               << " lines identical ids to spm_encode, " << lines.size() - decode_diff
               << " decodes");
  CHECK(id_diff == 0);
  CHECK(decode_diff == 0);
}

}  // namespace

TEST_CASE(".model Unigram (nmt_nfkc, remove_extra_whitespaces, user-defined symbols) matches spm") {
  check_spm_model(
      "spm_unigram_model",
      train("unigram_udef", "--model_type=unigram '--user_defined_symbols=<mask>,@@,ab'"), false);
}

TEST_CASE(".model BPE with byte_fallback matches spm_encode and spm_decode") {
  check_spm_model("spm_bpe_model",
                  train("bpe_bytes",
                        "--model_type=bpe --byte_fallback=true "
                        "'--user_defined_symbols=<mask>,@@'"),
                  true);
}

TEST_CASE(".model identity normalization without dummy prefix matches spm") {
  check_spm_model("spm_unigram_identity",
                  train("unigram_identity",
                        "--model_type=unigram --normalization_rule_name=identity "
                        "--add_dummy_prefix=false"),
                  false);
  check_spm_model("spm_unigram_model_json_trained",
                  train("unigram", "--model_type=unigram --remove_extra_whitespaces=false"), false);
}
